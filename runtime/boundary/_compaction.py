"""Compacting a long error: its first lines, the diagnostic lines of the omitted middle once
each with their repeat counts, its last lines (the last one always), how many lines that
shows, and where the exact original is."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from runtime.boundary._fit import size as _size
from runtime.boundary._preview_text import MARKERS
from runtime.boundary._redact import redact as redact_secrets

_HEAD = 8
_TAIL = 6
_LINE = 200
_READ = 4000
"""Bytes of the original the suggested reads ask for."""


@dataclass(frozen=True)
class _Shown:
    """A line as the compacted error shows it, and how many original lines it stands for."""

    text: str
    lines: int = 1


def compact_error_text(text: str, budget: int, handle: str, *, redact: bool = True) -> str:
    """At most ``budget`` bytes (never less than the footer and the last line need) that
    stand for ``text``, stored whole as ``handle``."""
    size = _size(text)
    lines = (redact_secrets(text) if redact else text).splitlines() or [""]
    total = len(lines)
    tail_start = max(0, total - _TAIL)
    middle = lines[min(_HEAD, tail_start) : tail_start]
    repeats = _diagnostic_counts(middle)
    seen = {line.strip() for line in lines[:_HEAD] + lines[tail_start:]}
    diagnostics = [
        _Shown(f"  [x{count}] {_cut(line)}" if count > 1 else f"  {_cut(line)}", count)
        for line, count in repeats.items()
        if line not in seen
    ]
    unnoted = dict(repeats)  # each recurring line says so once, where it is first shown
    head = _noting(_folded(lines[: min(_HEAD, tail_start)]), unnoted)
    tail = _noting(_folded(lines[tail_start:], last=max(_LINE, budget // 2)), unnoted)

    def footer(shown: int) -> str:
        return (
            f"[error compacted, {shown} of {total} lines shown; all {size} bytes: "
            f'ctx.read("{handle}", offset={max(0, size - _READ)}, length={_READ}) for the end, '
            'offset=0 the start, query="..." lines]'
        )

    room = budget - _size(footer(total)) - 1 - _gap_bytes(middle, diagnostics)
    head, chosen, tail = _fitted(head, diagnostics, tail, room)
    parts = [line.text for line in head]
    if middle:
        parts.append(_gap(middle, diagnostics, len(chosen)))
        parts += [line.text for line in chosen]
    parts += [line.text for line in tail]
    return "\n".join([*parts, footer(sum(line.lines for line in head + chosen + tail))])


def _fitted(
    head: list[_Shown], diagnostics: list[_Shown], tail: list[_Shown], room: int
) -> tuple[list[_Shown], list[_Shown], list[_Shown]]:
    """The lines shown within ``room`` bytes. The last line first (it says what failed),
    then the first; within a third of the room each, the lines around them; the diagnostics
    get the rest, and what they leave goes back to the first and last lines."""
    share = room // 3
    tail_lines = _within(tail, max(share, _bytes(tail[-1:])), keep_last=True)
    first = min(_bytes(head[:1]), room - _bytes(tail_lines))
    head_lines = _within(head, max(share, first), keep_last=False)
    room -= _bytes(tail_lines) + _bytes(head_lines)
    chosen: list[_Shown] = []
    for line in diagnostics:
        if _size(line.text) + 1 > room:
            break
        chosen.append(line)
        room -= _size(line.text) + 1
    spare, before = max(0, room), _bytes(head_lines)
    head_lines = _within(head, before + spare, keep_last=False)
    spare -= _bytes(head_lines) - before
    return head_lines, chosen, _within(tail, _bytes(tail_lines) + spare, keep_last=True)


def _folded(lines: list[str], last: int = _LINE) -> list[tuple[str, _Shown]]:
    """Lines with runs of the same line folded into one, with a count; the last one cut at
    ``last`` characters (it is often the one that says what failed), the others at 200."""
    out: list[tuple[str, _Shown]] = []
    runs = [(line, len(list(run))) for line, run in groupby(lines)]
    for index, (line, count) in enumerate(runs):
        shown = _cut(line, last if index == len(runs) - 1 else _LINE)
        out.append((line.strip(), _Shown(f"[x{count}] {shown}" if count > 1 else shown, count)))
    return out


def _diagnostic_counts(middle: list[str]) -> dict[str, int]:
    """The distinct diagnostic lines of ``middle``, in order of first appearance, each with
    how often it occurs."""
    counts: dict[str, int] = {}
    for line in middle:
        if MARKERS.search(line):
            key = line.strip()
            counts[key] = counts.get(key, 0) + 1
    return counts


def _noting(lines: list[tuple[str, _Shown]], repeats: dict[str, int]) -> list[_Shown]:
    """Shown lines; the first shown of each line that recurs in the omitted middle says how
    often (its count is taken out of ``repeats``, so the next one does not say it again)."""
    out: list[_Shown] = []
    for key, line in lines:
        more = repeats.pop(key, 0)
        out.append(
            _Shown(f"{line.text}  [+{more} in the omitted lines]", line.lines + more)
            if more
            else line
        )
    return out


def _gap(middle: list[str], diagnostics: list[_Shown], shown: int) -> str:
    if not diagnostics:
        return f"… {len(middle)} lines omitted, none a diagnostic"
    more = len(diagnostics) - shown
    rest = f", {more} not shown" if more else ""
    return f"… {len(middle)} lines omitted; their {len(diagnostics)} distinct diagnostics{rest}:"


def _gap_bytes(middle: list[str], diagnostics: list[_Shown]) -> int:
    return _size(_gap(middle, diagnostics, 0)) + 1 if middle else 0


def _within(lines: list[_Shown], room: int, *, keep_last: bool) -> list[_Shown]:
    """The lines that fit in ``room`` bytes: the first ones, or with ``keep_last`` the last
    ones, and then always the last line (cut, if it alone is too long)."""
    kept: list[_Shown] = []
    order = reversed(lines) if keep_last else iter(lines)
    for line in order:
        if _size(line.text) + 1 > room:
            break
        kept.append(line)
        room -= _size(line.text) + 1
    if keep_last and not kept and lines:
        last = lines[-1]
        cut = last.text.encode()[: max(60, room - 30)].decode("utf-8", "ignore")
        kept.append(_Shown(f"{cut}… (line cut to fit)" if cut != last.text else cut, last.lines))
    return kept[::-1] if keep_last else kept


def _bytes(lines: list[_Shown]) -> int:
    return sum(_size(line.text) + 1 for line in lines)


def _cut(line: str, limit: int = _LINE) -> str:
    """``line``, or its start and end around how many characters are cut between them."""
    if len(line) <= limit:
        return line
    start, end = limit * 2 // 3, limit // 3
    return f"{line[:start]} … ({len(line) - start - end} characters cut) … {line[-end:]}"
