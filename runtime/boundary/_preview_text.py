"""Structural previews of text: logs, Markdown and YAML, and single enormous lines.

- Text and logs: totals, the first and last lines with their numbers, and the lines of the
  omitted middle that carry error markers (error, exception, failed, traceback, warning...).
- Markdown and YAML with sections: an outline of every section with line numbers and sizes,
  small sections shown whole.
- One enormous line (minified JSON, base64): the first and last bytes, by bytes not lines.

A line is never cut without saying so: a long line shows its first ``_LINE`` characters and
``… (line cut at 200 of 5,321 characters)``, a view by bytes says in which lines its cuts
fall, and lines left out to fit the budget are counted.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

import regex

from runtime.boundary._cut import cut_line
from runtime.boundary._fit import fit
from runtime.boundary._fit import size as _size

MARKERS = regex.compile(
    r"(?i:\b(?:errors?|exception|failed|failure|traceback|warning|fatal|panic|critical)\b)"
    r"|\b[A-Z]\w*(?:Error|Exception|Warning)\b"
)
_LINE = 200
_HEAD_LINES = 20
_TAIL_LINES = 10
_MARKER_SCAN_BYTES = 16 * 1024 * 1024
_KEEP = 200
_TITLE = 120
_MD_HEADING = re.compile(r"^#{1,6}+[ \t][^\n]++", re.MULTILINE)
"""A heading line, whole: one to six ``#``, a space and at least one more character (in one
pass: a title matched lazily before trailing spaces took time quadratic in them)."""
_YAML_KEY = re.compile(r"^[A-Za-z0-9_\"'][^:\n#]*+:(?:[ \t]|$)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class TextView:
    text: str
    coverage: float
    """Share of the lines shown (by bytes, for a view of the first and last bytes)."""


def preview_text(text: str, budget: int, *, kind: str = "text") -> TextView:
    """At most ``budget`` bytes that show the structure of ``text``.

    ``kind`` is ``text``, ``yaml``, ``markdown`` (detected from the text when ``text``) or
    ``plain`` (lines only, never sections: code whose ``#`` comments are no headings).
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= budget:
        return TextView(text, 1.0)
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    longest_possible = size / max(lines, 1)
    if lines <= 3 or longest_possible > budget:
        return _by_bytes(text, size, lines, budget)
    sections = _sections(text, kind)
    if len(sections) >= 2:
        return _outline(text, sections, size, lines, budget, kind)
    return _head_tail(text, size, lines, budget)


def _by_bytes(text: str, size: int, lines: int, budget: int) -> TextView:
    title = f"text, {lines} line{'s' if lines != 1 else ''}, {size} bytes"
    title += " (partial view: first and last bytes)"
    widest = _note(  # no note is longer: its numbers are at most the size
        size,
        [
            f"line {size} cut at {size:,} of {size:,} characters",
            f"line {size} shown from character {size:,} of {size:,}",
        ],
    )
    room = max(0, budget - _size(title) - _size(widest) - 3)
    head = _prefix(text, int(room * 0.7))
    tail = _suffix(text[len(head) :], room - _size(head))
    omitted = size - _size(head) - _size(tail)
    note = _note(omitted, _cuts(text, len(head), len(text) - len(tail)))
    shown = fit(f"{title}\n{head}\n{note}\n{tail}", budget)
    return TextView(shown, (_size(head) + _size(tail)) / size)


def _note(omitted: int, cuts: list[str]) -> str:
    where = f" ({'; '.join(cuts)})" if cuts else ""
    return f"… {omitted} bytes omitted{where}; read ranges with offset and length …"


def _cuts(text: str, head_end: int, tail_start: int) -> list[str]:
    """In which lines the cuts of a view by bytes fall: where the first bytes stop and the
    last bytes start, unless at a line's end or start."""
    cuts = []
    if 0 < head_end < len(text) and text[head_end - 1] != "\n":
        begin = text.rfind("\n", 0, head_end) + 1
        end = _line_end(text, head_end)
        number = text.count("\n", 0, head_end) + 1
        cuts.append(f"line {number} cut at {head_end - begin:,} of {end - begin:,} characters")
    if 0 < tail_start < len(text) and text[tail_start - 1] != "\n":
        begin = text.rfind("\n", 0, tail_start) + 1
        end = _line_end(text, tail_start)
        number = text.count("\n", 0, tail_start) + 1
        cuts.append(
            f"line {number} shown from character {tail_start - begin + 1:,} of {end - begin:,}"
        )
    return cuts


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return end if end >= 0 else len(text)


def _prefix(text: str, limit: int) -> str:
    """The longest start of ``text`` of at most ``limit`` bytes."""
    k = min(len(text), max(0, limit))
    while k and (over := _size(text[:k]) - limit) > 0:
        k -= max(1, over // 4)
    return text[:k]


def _suffix(text: str, limit: int) -> str:
    """The longest end of ``text`` of at most ``limit`` bytes."""
    return _prefix(text[::-1], limit)[::-1]


def _head_tail(text: str, size: int, lines: int, budget: int) -> TextView:
    title = f"text, {lines} lines, {size} bytes (partial view: first and last lines"
    head_budget, tail_budget = int(budget * 0.35), int(budget * 0.2)
    head = _take(text.split("\n", _HEAD_LINES)[:_HEAD_LINES], 1, head_budget)
    body = text[:-1] if text.endswith("\n") else text  # its last line ends at its end
    tail_lines = body.rsplit("\n", _TAIL_LINES)[-_TAIL_LINES:]
    tail_start = lines - len(tail_lines) + 1
    while tail_lines and tail_start <= len(head):
        tail_lines, tail_start = tail_lines[1:], tail_start + 1
    tail = _take_last(tail_lines, tail_start, tail_budget)
    first_tail = lines - len(tail) + 1
    start = min(len(text), sum(len(line) + 1 for line in head))
    end = max(start, len(body) - len("\n".join(tail)))
    found, total, capped = _markers(text, start, end, len(head) + 1)
    before = [title + (", lines with error markers" if total else "") + ")"]
    numbered = [_numbered(n, line) for n, line in enumerate(head, 1)]
    after = [_numbered(n, line) for n, line in enumerate(tail, first_tail)]
    middle: list[str] = []
    notes: list[str] = []
    omitted = first_tail - len(head) - 1
    if omitted > 0 and total:
        many = f"{total}+ (counted in the first {_MARKER_SCAN_BYTES >> 20} MB)" if capped else total
        middle.append(f"… {omitted} lines omitted; {many} of them have error markers:")
        notes.append(_more_markers(total, found))
    elif omitted > 0:
        middle.append(f"… {omitted} lines omitted (no error markers among them)")
    fixed = sum(_size(line) + 1 for line in before + numbered + middle + notes + after)
    shown = _spread(found, budget - fixed)
    notes = [_more_markers(total - len(shown), found)] if len(shown) < total else []
    parts = [(line, 0) for line in before] + [(line, 1) for line in numbered]
    parts += [(line, 0) for line in middle] + [(line, 1) for line in shown]
    parts += [(line, 0) for line in notes] + [(line, 1) for line in after]
    view, kept = fit_parts(parts, budget)
    return TextView(view, kept / lines)


def _more_markers(count: int, found: list[str]) -> str:
    query = _marker_query(found)
    return f"… {count} more marker lines not shown: query={query!r}, ignore_case=True"


def fit_parts(parts: list[tuple[str, int]], budget: int, unit: str = "") -> tuple[str, int]:
    """The first whole parts that fit in ``budget`` bytes, and the sum of their weights (the
    lines of the original they show); a last line says when parts were left out."""
    total = sum(_size(text) + 1 for text, _ in parts) - 1
    if total <= budget:
        return "\n".join(text for text, _ in parts), sum(weight for _, weight in parts)
    widest = _left_out(len(parts), unit)
    kept: list[str] = []
    weight = used = 0
    for text, lines in parts:
        cost = _size(text) + 1
        if used + cost + _size(widest) > budget:
            break
        kept.append(text)
        used += cost
        weight += lines
    if not kept:
        return fit(parts[0][0], budget), 0
    return "\n".join([*kept, _left_out(len(parts) - len(kept), unit)]), weight


def _left_out(count: int, unit: str) -> str:
    return f"… {count} more {unit} not shown" if unit else "…"


def _markers(text: str, start: int, end: int, first_line: int) -> tuple[list[str], int, bool]:
    """Numbered lines between offsets ``start`` and ``end`` that carry an error marker: the
    first and last ``_KEEP`` of them, and how many there are."""
    first: list[str] = []
    last: deque[str] = deque(maxlen=_KEEP)
    total = 0
    capped = end - start > _MARKER_SCAN_BYTES
    end = min(end, start + _MARKER_SCAN_BYTES)
    line_no, pos = first_line, start
    last_line = -1
    for match in MARKERS.finditer(text, start, end):
        line_no += text.count("\n", pos, match.start())
        pos = match.start()
        if line_no == last_line:
            continue
        last_line = line_no
        total += 1
        begin = text.rfind("\n", 0, match.start()) + 1
        stop = text.find("\n", match.start())
        line = _numbered(line_no, text[begin : stop if stop >= 0 else len(text)])
        if len(first) < _KEEP:
            first.append(line)
        else:
            last.append(line)
    return first + list(last), total, capped


def _spread(lines: list[str], budget: int) -> list[str]:
    """As many lines as fit, taken from the start and the end alternately, in order."""
    front: list[str] = []
    back: list[str] = []
    used = 0
    i, j = 0, len(lines) - 1
    while i <= j:
        for pick_front in (True, False):
            if i > j:
                break
            line = lines[i] if pick_front else lines[j]
            if used + len(line) + 1 > budget:
                return front + back[::-1]
            used += len(line) + 1
            if pick_front:
                front.append(line)
                i += 1
            else:
                back.append(line)
                j -= 1
    return front + back[::-1]


def _marker_query(found: list[str]) -> str:
    for line in found:
        match = MARKERS.search(line)
        if match:
            return match.group(0).lower()
    return "error"


@dataclass(slots=True)
class _Section:
    title: str
    start: int
    """1-based first line."""
    end: int = 0
    begin_offset: int = 0
    end_offset: int = 0


def _sections(text: str, kind: str) -> list[_Section]:
    if kind == "plain":
        return []
    if kind == "text":
        headings = list(_MD_HEADING.finditer(text))
        if len(headings) >= 2 and not _looks_like_code(text):
            kind = "markdown"
        else:
            return []
    pattern = _MD_HEADING if kind == "markdown" else _YAML_KEY
    found: list[_Section] = []
    line, pos = 1, 0
    for match in pattern.finditer(text):
        line += text.count("\n", pos, match.start())
        pos = match.start()
        found.append(_Section(match.group(0).strip(), line, begin_offset=match.start()))
    if not found:
        return []
    if found[0].start > 1:
        found.insert(0, _Section("(before the first section)", 1, begin_offset=0))
    total_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    for this, after in zip(found, [*found[1:], None], strict=True):
        this.end = after.start - 1 if after else total_lines
        this.end_offset = after.begin_offset if after else len(text)
    return found


def _looks_like_code(text: str) -> bool:
    return text.count("#include") + text.count("#!/") + text.count("# type:") > 2


def _outline(
    text: str, sections: list[_Section], size: int, lines: int, budget: int, kind: str
) -> TextView:
    name = "Markdown" if kind in ("text", "markdown") else "YAML"
    title = f"{name}, {lines} lines, {size} bytes, {len(sections)} sections (partial view: outline"
    entries = []
    for section in sections:
        body = text[section.begin_offset : section.end_offset]
        count = section.end - section.start + 1
        entries.append(
            (
                section,
                body,
                f"L{section.start}-{section.end} {cut_line(section.title, _TITLE)} "
                f"({count} lines, {_size(body)} bytes)",
            )
        )
    used = len(title) + 40 + sum(len(e[2]) + 1 for e in entries)
    whole: set[int] = set()
    for n in sorted(range(len(entries)), key=lambda k: len(entries[k][1])):
        cost = _size(entries[n][1]) + 1
        if used + cost <= budget:
            whole.add(n)
            used += cost
    parts = [(title + (", small sections whole)" if whole else ")"), 0)]
    for n, (section, body, line) in enumerate(entries):
        if n in whole:
            parts.append((body.rstrip("\n"), section.end - section.start + 1))
        else:
            parts.append((line, 1))
    view, kept = fit_parts(parts, budget, "sections")
    return TextView(view, kept / lines)


def _take(lines: list[str], first: int, budget: int) -> list[str]:
    kept: list[str] = []
    used = 0
    for n, line in enumerate(lines, first):
        cost = len(_numbered(n, line)) + 1
        if used + cost > budget and kept:
            break
        kept.append(line)
        used += cost
    return kept


def _take_last(lines: list[str], first: int, budget: int) -> list[str]:
    kept: list[str] = []
    used = 0
    for n in range(len(lines) - 1, -1, -1):
        cost = len(_numbered(first + n, lines[n])) + 1
        if used + cost > budget and kept:
            break
        kept.insert(0, lines[n])
        used += cost
    return kept


def _numbered(n: int, line: str) -> str:
    return f"{n:>6} | {cut_line(line.rstrip(chr(13)), _LINE)}"
