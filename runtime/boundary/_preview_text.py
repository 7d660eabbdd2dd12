"""Structural previews of text: logs, Markdown and YAML, and single enormous lines.

- Text and logs: totals, the first and last lines with their numbers, and the lines of the
  omitted middle that carry error markers (error, exception, failed, traceback, warning...).
- Markdown and YAML with sections: an outline of every section with line numbers and sizes,
  small sections shown whole.
- One enormous line (minified JSON, base64): the first and last bytes, by bytes not lines.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

import regex

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
_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_YAML_KEY = re.compile(r"^([A-Za-z0-9_\"'][^:\n#]*):(?:[ \t]|$)", re.MULTILINE)


def preview_text(text: str, budget: int, *, kind: str = "text") -> str:
    """At most ``budget`` bytes that show the structure of ``text``.

    ``kind`` is ``text``, ``yaml`` or ``markdown`` (detected from the text when ``text``).
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= budget:
        return text
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    longest_possible = size / max(lines, 1)
    if lines <= 3 or longest_possible > budget:
        return _by_bytes(text, size, lines, budget)
    sections = _sections(text, kind)
    if len(sections) >= 2:
        return _outline(text, sections, size, lines, budget, kind)
    return _head_tail(text, size, lines, budget)


def _by_bytes(text: str, size: int, lines: int, budget: int) -> str:
    head_n, tail_n = int(budget * 0.6), int(budget * 0.25)
    data = text.encode("utf-8", "surrogatepass")
    head = data[:head_n].decode("utf-8", "ignore")
    tail = data[-tail_n:].decode("utf-8", "ignore") if tail_n else ""
    omitted = size - _size(head) - _size(tail)
    title = f"text, {lines} line{'s' if lines != 1 else ''}, {size} bytes"
    return (
        f"{title} (partial view: first and last bytes)\n{head}\n"
        f"… {omitted} bytes omitted; read ranges with offset and length …\n{tail}"
    )


def _head_tail(text: str, size: int, lines: int, budget: int) -> str:
    title = f"text, {lines} lines, {size} bytes (partial view: first and last lines"
    head_budget, tail_budget = int(budget * 0.35), int(budget * 0.2)
    head = _take(text.split("\n", _HEAD_LINES)[:_HEAD_LINES], 1, head_budget)
    tail_lines = text.rstrip("\n").rsplit("\n", _TAIL_LINES)[-_TAIL_LINES:]
    tail_start = lines - len(tail_lines) + 1
    while tail_lines and tail_start <= len(head):
        tail_lines, tail_start = tail_lines[1:], tail_start + 1
    tail = _take_last(tail_lines, tail_start, tail_budget)
    first_tail = lines - len(tail) + 1
    start = min(len(text), sum(len(line) + 1 for line in head))
    end = max(start, len(text.rstrip("\n")) - len("\n".join(tail)))
    found, total, capped = _markers(text, start, end, len(head) + 1)
    before = [title + (", lines with error markers" if total else "") + ")"]
    before += [_numbered(n, line) for n, line in enumerate(head, 1)]
    after = [_numbered(n, line) for n, line in enumerate(tail, first_tail)]
    middle: list[str] = []
    notes: list[str] = []
    omitted = first_tail - len(head) - 1
    if omitted > 0 and total:
        many = f"{total}+ (counted in the first {_MARKER_SCAN_BYTES >> 20} MB)" if capped else total
        middle.append(f"… {omitted} lines omitted; {many} of them have error markers:")
        notes.append(f"… more marker lines: query={_marker_query(found)!r}, ignore_case=True")
    elif omitted > 0:
        middle.append(f"… {omitted} lines omitted (no error markers among them)")
    fixed = sum(_size(line) + 1 for line in before + middle + notes + after)
    shown = _spread(found, budget - fixed)
    if len(shown) == len(found):
        notes = []
    return fit("\n".join(before + middle + shown + notes + after), budget)


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
        title = match.group(0).strip()
        found.append(_Section(title[:120], line, begin_offset=match.start()))
    if found and found[0].start > 1:
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
) -> str:
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
                f"L{section.start}-{section.end} {section.title} "
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
    out = [title + (", small sections whole)" if whole else ")")]
    for n, (_, body, line) in enumerate(entries):
        out.append(body.rstrip("\n") if n in whole else line)
    return fit("\n".join(out), budget)


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
    line = line.rstrip("\r")
    if len(line) > _LINE:
        line = line[:_LINE] + f"… (+{len(line) - _LINE} chars)"
    return f"{n:>6} | {line}"
