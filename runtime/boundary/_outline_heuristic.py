"""Outlines by definition-looking lines, for languages Fabric has no parser for (JavaScript,
TypeScript, Go, Rust, Java, C, C++) and for Python that does not parse.

Each language has a few regular expressions for the lines that start a definition
(``class``, ``function``, ``fn``, ``func``, ``def``, ``struct``, a method's signature...).
Nesting comes from indentation: a definition ends where the next one indented as far or less
begins (blank and decorator lines before it left out), and one inside a function is not
listed. Strings, comments and macros are not understood, so an outline made this way says so.
A line longer than ``MAX_LINE`` is never taken for a definition, and every rule is linear in
the line it looks at: text from a snippet is hostile, and a rule runs holding the GIL.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from runtime.boundary._cut import cut_line
from runtime.boundary._outline import (
    MAX_DEFINITIONS,
    Definition,
    LineTable,
    Outline,
    counted,
    group_of,
    with_bytes,
)

SCANNED_CHARS = 4 * 1024 * 1024
"""Characters looked through for definitions at most: about 300,000 definition lines, a
second of work past ``MAX_DEFINITIONS`` (where they are only counted); the outline says where
it stopped."""
MAX_LINE = 2048
"""Characters of a line that may start a definition at most: no definition line is longer,
and a rule never looks past one (each is linear in it besides, every repetition possessive
or bounded)."""
_LINE_START = rf"^(?=[^\n]{{0,{MAX_LINE}}}+$)"
_GUESS_CHARS = 64 * 1024
_SOURCE = 100
_NOT_NAMES = frozenset(
    [
        "if",
        "elif",
        "else",
        "for",
        "while",
        "do",
        "switch",
        "case",
        "catch",
        "try",
        "with",
        "function",
    ],
)
"""Words before a parenthesis that name no definition (``if (x) {``, ``function (x) {``)."""
_NOT_TYPES = _NOT_NAMES | {"return", "throw", "new", "delete", "await", "yield", "typeof"}
"""Words that cannot be the return type of a method's signature (``return f(x)``)."""
_JS_NAME = r"[A-Za-z_$][\w$]*+"
_RUST_PUB = r"pub(?:\([^)\n]*+\))?"
_GENERICS = r"<(?:[^<>\n{-]++|->?|<(?:[^<>\n{-]++|->?|<(?:[^<>\n{-]++|->?)*+>)*+>)*+>"
"""Angle brackets nested three deep at most (``<T: Into<Vec<u8>>>``), ``->`` inside them."""


def _rules(*patterns: str) -> tuple[re.Pattern[str], ...]:
    """Rules that each match at the start of a line no longer than ``MAX_LINE``."""
    return tuple(re.compile(_LINE_START + p.removeprefix("^"), re.MULTILINE) for p in patterns)


_JS_BRACE_END = r"(?:[^;=\n{]++|\{(?![ \t]*+$))*+\{[ \t]*+$"
"""The rest of a line with no ``;`` or ``=`` that ends in ``{``."""
_JS = _rules(
    r"^(?P<indent>[ \t]*+)(?P<mods>(?:(?:export|default|declare|abstract)[ \t]++)*+)"
    rf"(?P<kind>class|interface|enum|namespace)[ \t]++(?P<name>{_JS_NAME})",
    r"^(?P<indent>[ \t]*+)(?P<mods>(?:(?:export|default|declare|async)[ \t]++)*+)"
    rf"(?P<kind>function)\*?[ \t]*+(?P<name>{_JS_NAME})",
    r"^(?P<indent>[ \t]*+)(?P<mods>(?:(?:export|declare)[ \t]++)*+)"
    rf"(?P<kind>type)[ \t]++(?P<name>{_JS_NAME})[ \t]*+(?:<[^>\n]*+>)?[ \t]*+=",
    rf"^(?P<indent>[ \t]*+)(?P<mods>(?:export[ \t]++)?)(?:const|let|var)[ \t]++(?P<name>{_JS_NAME})"
    r"[ \t]*+(?::[^=\n]++)?=[ \t]*+(?:async[ \t]++)?"
    rf"(?P<kind>function\b|\([^)\n]*+\)[ \t]*+(?::[^=\n]++)?=>|{_JS_NAME}[ \t]*+=>)",
    r"^(?P<indent>[ \t]++)(?P<mods>(?:(?:public|private|protected|static|readonly|async|"
    r"override|abstract|get|set)[ \t]++(?=[#A-Za-z_$]))*+)"
    rf"(?P<name>#?{_JS_NAME})[ \t]*+(?:<[^>\n]*+>)?\([^)\n]*+\){_JS_BRACE_END}",
)
_JAVA_TAIL = r"[ \t]*+(?:throws[ \t]++[\w$., \t]++)?\{?[ \t]*+$"
_JAVA_NAME = r"[^\W\d][\w$]*+"
_C_NAME = r"~?[A-Za-z_][\w:~]*+"
_RULES: dict[str, tuple[re.Pattern[str], ...]] = {
    "python": _rules(
        r"^(?P<indent>[ \t]*+)(?P<kind>async[ \t]++def|def|class)[ \t]++(?P<name>[^\W\d]\w*+)"
    ),
    "javascript": _JS,
    "typescript": _JS,
    "go": _rules(
        r"^(?P<kind>func)[ \t]*+(?:\((?P<recv>[^)\n]*+)\)[ \t]*+)?(?P<name>[^\W\d]\w*+)",
        r"^(?P<kind>type)[ \t]++(?P<name>[^\W\d]\w*+)[ \t]++(?:struct|interface)\b",
    ),
    "rust": _rules(
        rf"^(?P<indent>[ \t]*+)(?P<mods>(?:(?:{_RUST_PUB}|const|async|unsafe|default|"
        r"extern(?:[ \t]++\"[^\"\n]*+\")?)[ \t]++)*+)(?P<kind>fn)[ \t]++(?P<name>[^\W\d]\w*+)",
        rf"^(?P<indent>[ \t]*+)(?P<mods>(?:{_RUST_PUB}[ \t]++)?)"
        r"(?P<kind>struct|enum|trait|mod|union)[ \t]++(?P<name>[^\W\d]\w*+)",
        rf"^(?P<indent>[ \t]*+)(?:unsafe[ \t]++)?(?P<kind>impl)\b(?:[ \t]*+{_GENERICS})?[ \t]++"
        r"(?P<name>(?:(?!\bwhere\b)[^{\n]){0,200}+)(?:where\b[^{\n]*+)?\{?[ \t]*+$",
    ),
    "java": _rules(
        r"^(?P<indent>[ \t]*+)(?P<mods>(?:(?:public|private|protected|static|final|abstract|"
        r"sealed|non-sealed|strictfp)[ \t]++)*+)(?P<kind>class|interface|enum|record|@interface)"
        rf"[ \t]++(?P<name>{_JAVA_NAME})",
        r"^(?P<indent>[ \t]++)(?P<mods>(?:(?:public|private|protected|static|final|abstract|"
        r"synchronized|native|default|strictfp)[ \t]++)*+)(?:<[^>\n]++>[ \t]++)?"
        rf"(?P<type>(?:(?!{_JAVA_NAME}[ \t]*+\()[\w$<>\[\],.?]++[ \t]++){{0,16}}+)"
        rf"(?P<name>{_JAVA_NAME})[ \t]*+\((?:[^;=\n)]++|\)(?!{_JAVA_TAIL}))*+\){_JAVA_TAIL}",
    ),
    "c": _rules(
        r"^(?P<mods>(?:(?:static|inline|extern|virtual|constexpr|explicit|friend)[ \t]++)*+)"
        rf"(?=[A-Za-z_~])(?P<type>(?:(?!{_C_NAME}[ \t]*+\()[\w:<>,]++[*& \t]++){{0,16}}+)"
        rf"(?P<name>{_C_NAME})[ \t]*+\([^;\n]*+$",
        rf"^(?P<indent>[ \t]*+)(?:typedef[ \t]++)?(?:template[ \t]*+{_GENERICS}[ \t]*+)?"
        r"(?P<kind>class|struct|union|enum(?:[ \t]+class)?|namespace)[ \t]++"
        r"(?P<name>[^\W\d]\w*+)[^;\n]*+$",
    ),
}
_RULES["cpp"] = _RULES["c"]
_KINDLESS = {
    "javascript": "method",
    "typescript": "method",
    "java": "method",
    "c": "function",
    "cpp": "function",
}
"""The kind of a match by a rule with no ``kind`` group (a method's signature)."""
_IMPORTS = {
    "python": r"^[ \t]*+(?:import[ \t]++\w|from[ \t]++[\w.]++[ \t]++import\b)",
    "javascript": r"^[ \t]*+(?:import\b[^(\n]|(?:const|let|var)[ \t][^=\n]*+=[ \t]*+require\()",
    "go": r"^import\b",
    "rust": rf"^[ \t]*(?:{_RUST_PUB}[ \t]+)?use[ \t]",
    "java": r"^[ \t]*import[ \t]",
    "c": r"^[ \t]*#[ \t]*include\b",
}
_IMPORTS.update(typescript=_IMPORTS["javascript"], cpp=_IMPORTS["c"])
_IMPORT = {language: re.compile(p, re.MULTILINE) for language, p in _IMPORTS.items()}
LIST_QUERIES = {"python": "def ", "go": "func ", "rust": "fn ", "javascript": "function"}
"""A query whose matches are a language's definition lines (functions, at least)."""
_GUESS_ORDER = ("python", "go", "rust", "javascript", "java", "c")


@dataclass(slots=True)
class Scan:
    found: list[Definition] = field(default_factory=list)
    more: Counter[str] = field(default_factory=Counter)
    """Definitions past the room given, by group."""
    last_line: int = 0
    """The last line looked through."""
    stop: int = 0
    """The character looking stopped at."""


@dataclass(slots=True)
class _Open:
    """A definition whose end is not found yet."""

    listed: int | None
    """Its index among the definitions found; None when it is not listed (inside a
    function, or past the room given)."""
    name: str
    indent: int
    function: bool


def scan(text: str, table: LineTable, language: str, *, start: int = 0, room: int) -> Scan:
    """The definitions on lines from character ``start`` on (at most ``room`` of them, the
    rest counted), within ``SCANNED_CHARS``."""
    stop = min(len(text), start + SCANNED_CHARS)
    done = Scan(last_line=table.line_of(max(start, stop - 1)) if text else 0, stop=stop)
    stack: list[_Open] = []
    for match in _matches(text, language, start, stop):
        at = match.start()
        line = table.line_of(at)
        indent = len(_group(match, "indent").expandtabs(4))
        while stack and stack[-1].indent >= indent:
            _close(done.found, stack.pop(), line - 1, table)
        name = match.group("name").strip()
        if stack and stack[-1].function:
            stack.append(_Open(None, name, indent, function=True))  # in a function: unlisted
            continue
        kind = _kind(match, language)
        parent = _owner(match, language) or (stack[-1].name if stack else None)
        function = group_of(kind, None) == "functions"
        if len(done.found) >= room:
            done.more[group_of(kind, parent)] += 1
            stack.append(_Open(None, name, indent, function))
            continue
        source = text[at : table.stop(line)].strip().rstrip("{").rstrip()
        done.found.append(
            Definition(
                kind=kind,
                name=name,
                line=line,
                end=line,
                first=line,
                depth=len(stack),
                parent=parent,
                source=cut_line(source, _SOURCE),
                private=_private(match, language),
            )
        )
        stack.append(_Open(len(done.found) - 1, name, indent, function))
    while stack:
        _close(done.found, stack.pop(), done.last_line, table)
    return done


def _matches(text: str, language: str, start: int, stop: int) -> Iterator[re.Match[str]]:
    """The definition lines between ``start`` and ``stop`` in order, each once: every rule
    matches at the start of a line, and the first rule to match a line wins."""
    streams = [_ranked(rule, n, text, start, stop) for n, rule in enumerate(_RULES[language])]
    last = -1
    for at, _, match in heapq.merge(*streams):
        if at != last:
            last = at
            yield match


def _ranked(
    rule: re.Pattern[str], rank: int, text: str, start: int, stop: int
) -> Iterator[tuple[int, int, re.Match[str]]]:
    for match in rule.finditer(text, start, stop):
        if _listed(match):
            yield match.start(), rank, match


def heuristic_outline(
    text: str,
    language: str,
    *,
    reason: str = "not parsed",
    guessed: bool = False,
) -> Outline:
    """The outline of ``text`` in ``language`` by its definition-looking lines."""
    table = LineTable(text)
    found = scan(text, table, language, room=MAX_DEFINITIONS)
    how = f"outline by line heuristics, {reason}"
    if guessed:
        how += f"; {language} guessed from its lines"
    if found.last_line < table.lines:
        how += f"; {looked_at(found)}"
    imports = [table.line_of(m.start()) for m in _IMPORT[language].finditer(text, 0, SCANNED_CHARS)]
    return Outline(
        language=language,
        how=how,
        lines=table.lines,
        size=table.size,
        definitions=with_bytes(table, found.found),
        more=dict(found.more),
        imports=counted(imports, "import line"),
        list_query=LIST_QUERIES.get(language),
    )


def looked_at(found: Scan) -> str:
    """What part of a text a scan stopped looking at, in lines and characters."""
    return (
        f"definitions looked for in lines 1-{found.last_line} only "
        f"(the first {found.stop:,} characters)"
    )


def guess_language(text: str) -> str | None:
    """The language whose definition lines the start of ``text`` has most of, if any."""
    end = min(len(text), _GUESS_CHARS)
    scores = {
        language: sum(len(rule.findall(text, 0, end)) for rule in _RULES[language])
        for language in _GUESS_ORDER
    }
    best = max(_GUESS_ORDER, key=lambda language: scores[language])
    return best if scores[best] else None


def _close(found: list[Definition], entry: _Open, last: int, table: LineTable) -> None:
    """End an open definition at line ``last``, less the blank and decorator lines that
    lead into the next one."""
    if entry.listed is None:
        return
    defined = found[entry.listed]
    text = table.text
    while last > defined.line:
        line = text[table.start(last) : table.stop(last)].strip()
        if line and not line.startswith(("@", "#[")):
            break
        last -= 1
    found[entry.listed] = replace(defined, end=max(defined.line, last))


def _group(match: re.Match[str], name: str) -> str:
    return (match.group(name) or "") if name in match.re.groupindex else ""


def _listed(match: re.Match[str]) -> bool:
    """Whether a match names a definition rather than a keyword (``else if (...)``,
    ``return f(x)``, ``new T() {``)."""
    name = match.group("name").strip().lstrip("#~")
    return name not in _NOT_NAMES and not set(_group(match, "type").split()[:1]) & _NOT_TYPES


def _kind(match: re.Match[str], language: str) -> str:
    kind = " ".join(_group(match, "kind").split())
    if not kind:
        return _KINDLESS[language]
    if "=>" in kind or kind.startswith("("):
        return "function"  # const f = (...) => ...
    return kind


def _owner(match: re.Match[str], language: str) -> str | None:
    """The type a definition written outside it belongs to: a Go method's receiver
    (``func (s *Server) Run`` → ``Server``), a C++ ``Server::run``."""
    receiver = _group(match, "recv").split()
    if receiver:
        return receiver[-1].lstrip("*").split("[", 1)[0] or None
    name = match.group("name")
    if language in ("c", "cpp") and "::" in name:
        return name.rsplit("::", 1)[0] or None
    return None


def _private(match: re.Match[str], language: str) -> bool:
    name = match.group("name").strip()
    mods = _group(match, "mods").split()
    if language == "go":
        return not name[:1].isupper()
    if language == "rust":
        return _group(match, "kind") != "impl" and not any(m.startswith("pub") for m in mods)
    if language == "java":
        return "private" in mods
    if language in ("c", "cpp"):
        return "static" in mods
    hidden = name.startswith(("_", "#")) and not name.endswith("__")
    return hidden or "private" in mods
