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
_VIEW = 1 << 20
"""Characters of a long error's start and of its end that compaction looks at, line by line."""
_MAX_DIAGNOSTICS = 2000
"""Distinct diagnostic lines counted at most (the rest of the middle is not told apart)."""
_CUT_NOTE = "characters cut here: the message is larger than the result limit allows"
"""The worker's note where it cut a message: always shown, first among the diagnostics."""


@dataclass(frozen=True)
class _Shown:
    """A line as the compacted error shows it, and how many original lines it stands for."""

    text: str
    lines: int = 1


def compact_error_text(text: str, budget: int, handle: str, *, redact: bool = True) -> str:
    """At most ``budget`` bytes (never less than the footer and the last line need) that
    stand for ``text``, stored whole as ``handle``. Only the first and last ``_VIEW``
    characters are looked at line by line, and only what is shown is redacted, so the cost
    is bounded whatever the error's size."""
    size = _size(text)
    lines, unseen = _viewed(text)
    total = len(lines) + unseen
    tail_start = max(0, len(lines) - _TAIL)
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
    omitted = len(middle) + unseen

    def footer(shown: int, folded: int) -> str:
        more = f", {folded} more as repeat counts" if folded else ""
        return (
            f"[error compacted, {shown} of {total} lines shown{more}; all {size} bytes: "
            f'ctx.read("{handle}", offset={max(0, size - _READ)}, length={_READ}) for the end, '
            'offset=0 the start, query="..." lines]'
        )

    gap = _gap(omitted, unseen, repeats, diagnostics, len(diagnostics)) if omitted else ""
    room = budget - _size(footer(total, total)) - 1 - (_size(gap) + 1 if gap else 0)
    head, chosen, tail = _fitted(head, diagnostics, tail, room)
    parts = [line.text for line in head]
    if omitted:
        parts.append(_gap(omitted, unseen, repeats, diagnostics, len(chosen)))
        parts += [line.text for line in chosen]
    parts += [line.text for line in tail]
    body = "\n".join(parts)
    shown_lines = head + chosen + tail
    represented = sum(line.lines for line in shown_lines)
    return (
        f"{redact_secrets(body) if redact else body}\n"
        f"{footer(len(shown_lines), represented - len(shown_lines))}"
    )


def _viewed(text: str) -> tuple[list[str], int]:
    """The lines compaction looks at (all of them, or those of the first and last ``_VIEW``
    characters of a larger text), and how many lines between those it did not look at."""
    if len(text) <= 2 * _VIEW:
        lines = text.split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()
        return [line.rstrip("\r") for line in lines], 0
    head = text[:_VIEW].split("\n")[:-1] or [text[:_LINE]]  # whole lines only
    tail = text[-_VIEW:].split("\n")[1:] or [text[-_LINE:]]
    if len(tail) > 1 and tail[-1] == "":
        tail.pop()
    total = text.count("\n") + (0 if text.endswith("\n") else 1)
    unseen = max(0, total - len(head) - len(tail))
    return [line.rstrip("\r") for line in head + tail], unseen


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
    """The distinct diagnostic lines of ``middle`` (at most ``_MAX_DIAGNOSTICS``), in order
    of first appearance (the worker's note of a cut first), each with how often it occurs."""
    counts: dict[str, int] = {}
    for line in middle:
        key = line.strip()
        if key in counts:
            counts[key] += 1
        elif _CUT_NOTE in line:
            counts = {key: 1, **counts}
        elif len(counts) < _MAX_DIAGNOSTICS and MARKERS.search(line):
            counts[key] = 1
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


def _gap(
    omitted: int, unseen: int, repeats: dict[str, int], diagnostics: list[_Shown], shown: int
) -> str:
    """The line that stands for the omitted middle: how many lines, and its diagnostics."""
    head = f"… {omitted} lines omitted"
    if unseen:
        head += f" ({unseen} of them not looked at: query the handle for them)"
    if not diagnostics:
        if repeats:
            return f"{head}; the diagnostics among them recur in the lines shown ([+N] counts)"
        return f"{head}, none a diagnostic"
    more = len(diagnostics) - shown
    rest = f", {more} not shown" if more else ""
    return f"{head}; their {len(diagnostics)} distinct diagnostics{rest}:"


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
