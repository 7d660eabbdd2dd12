"""Regular expressions from snippets are sized before they are compiled.

Compiling is where a pattern hurts the host: the ``regex`` engine writes out the lower bound of
every counted repeat (``a{300}`` is 300 nodes) and multiplies nested ones, all while holding the
interpreter, so ``(?:a{20000}){20000}`` asks for 400 million nodes and the host runs out of
memory; a time limit covers only matching. :func:`expansion` bounds that number from the text
of the pattern (each atom counts one, times the lower bounds of the repeats around it;
alternatives add up), and :func:`check_pattern` refuses a pattern above
:data:`MAX_EXPANSION` (about 40 ms of compiling) or longer than :data:`MAX_PATTERN_CHARS`.
"""

from __future__ import annotations

import re

MAX_PATTERN_CHARS = 4096
MAX_EXPANSION = 100_000

_COUNTED = re.compile(r"\{(\d*)(,?)(\d*)\}")
_VERBOSE = re.compile(r"\(\?[a-zA-Z]*x")  # (?x), (?ix:...): whitespace and #comments vanish
_BRACED_ESCAPES = frozenset("pPNxgu")  # \p{L}, \N{name}, \x{263a}, \g{1}: braces are not repeats


class PatternTooLarge(ValueError):
    """A pattern whose compiled form would be too large to build safely."""


def _class_end(pattern: str, start: int) -> int:
    """The index just past the character class opening at ``start``."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def _escape_end(pattern: str, start: int) -> int:
    """The index just past the escape at ``start`` (a backslash)."""
    i = start + 2
    braced = start + 1 < len(pattern) and pattern[start + 1] in _BRACED_ESCAPES
    if braced and i < len(pattern) and pattern[i] in "{<":
        close = pattern.find("}" if pattern[i] == "{" else ">", i)
        return len(pattern) if close < 0 else close + 1
    return i


def _group_body(pattern: str, start: int) -> int:
    """The index where the group opening at ``start`` begins to hold atoms, past its prefix
    (``?:``, ``?=``, ``?<=``, ``?P<name>``, ``?<name>``, inline flags...)."""
    i = start + 1
    if i >= len(pattern) or pattern[i] != "?":
        return i
    i += 1
    if pattern.startswith(("<=", "<!"), i):
        return i + 2
    if pattern.startswith(("P<", "<"), i):
        close = pattern.find(">", i)
        return len(pattern) if close < 0 else close + 1
    if i < len(pattern) and pattern[i] in ":=!>|":
        return i + 1
    while i < len(pattern) and (pattern[i].isalpha() or pattern[i] == "-"):
        i += 1  # inline flags, as in (?i) or (?s-m:...)
    return i + 1 if i < len(pattern) and pattern[i] == ":" else i


def expansion(pattern: str) -> int:
    """An upper bound on the nodes compiling ``pattern`` writes out.

    Whitespace never counts as an atom (under ``(?x)`` the engine drops it, and a repeat after
    it applies to what came before), and under ``(?x)`` neither do ``#`` comments: skipping
    them can only raise the bound."""
    verbose = _VERBOSE.search(pattern) is not None
    # One frame per open group: [what it holds so far, what its last item holds].
    frames: list[list[int]] = [[0, 0]]
    i = 0
    while i < len(pattern):
        char = pattern[i]
        frame = frames[-1]
        if char.isspace():
            i += 1
            continue
        if char == "#" and verbose:
            newline = pattern.find("\n", i)
            i = len(pattern) if newline < 0 else newline + 1
            continue
        if char == "(":
            frames.append([0, 0])
            i = _group_body(pattern, i)
            continue
        if char == ")" and len(frames) > 1:
            held = max(frames.pop()[0], 1)
            frames[-1][0] += held
            frames[-1][1] = held
            i += 1
            continue
        if char == "|":
            frame[1] = 0
            i += 1
            continue
        if char == "{":
            counted = _COUNTED.match(pattern, i)
            if counted is not None and (counted.group(1) or counted.group(3)):
                least = int(counted.group(1) or 0)
                frame[0] += frame[1] * (max(least, 1) - 1)
                frame[1] *= max(least, 1)
                i = counted.end()
                continue
        if char in "*+?":
            i += 1
            continue
        if char == "[":
            i = _class_end(pattern, i)
        elif char == "\\":
            i = _escape_end(pattern, i)
        else:
            i += 1
        frame[0] += 1
        frame[1] = 1
    while len(frames) > 1:  # unbalanced: the compiler will say so; count what is there
        held = frames.pop()[0]
        frames[-1][0] += held
    return frames[0][0]


def check_pattern(pattern: str) -> None:
    """Raise PatternTooLarge, with what to do instead, for a pattern too large to compile."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternTooLarge(
            f"the pattern is {len(pattern)} characters, above the {MAX_PATTERN_CHARS}-character "
            "limit; search for a shorter one"
        )
    size = expansion(pattern)
    if size > MAX_EXPANSION:
        raise PatternTooLarge(
            f"the pattern would compile to about {size:,} nodes (its counted repeats multiply), "
            f"above the {MAX_EXPANSION:,} limit; use smaller counts, e.g. a{{3,}} or a+ "
            "instead of a{20000}"
        )
