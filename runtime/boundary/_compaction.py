"""Compacting a long error: first lines, representative diagnostic lines with repeat counts,
last lines, and where the original is."""

from __future__ import annotations

from collections import Counter
from itertools import groupby

from runtime.boundary._fit import fit
from runtime.boundary._fit import size as _size
from runtime.boundary._preview_text import MARKERS
from runtime.boundary._redact import redact as redact_secrets

_HEAD = 8
_TAIL = 6
_LINE = 200


def compact_error_text(text: str, budget: int, handle: str, *, redact: bool = True) -> str:
    lines = text.splitlines()
    footer = (
        f"[error compacted: the full text ({_size(text)} bytes, {len(lines)} lines) is "
        f'stored as {handle}; read it with await ctx.read("{handle}", offset=0, length=4000) '
        'or query="..."]'
    )
    head, tail = lines[:_HEAD], lines[-_TAIL:] if len(lines) > _HEAD else []
    middle = lines[_HEAD : len(lines) - len(tail)]
    counts = Counter(line.strip() for line in lines if MARKERS.search(line))
    representative = [
        f"  [x{count}] {_cut(line)}" if count > 1 else f"  {_cut(line)}"
        for line, count in counts.most_common()
    ]
    parts = _folded(head)
    if middle:
        parts.append(f"… {len(middle)} lines omitted; diagnostic lines among them:")
    room = budget - len(footer) - sum(len(p) + 1 for p in parts + _folded(tail)) - 8
    for line in representative:
        if len(line) + 1 > room:
            break
        parts.append(line)
        room -= len(line) + 1
    parts += _folded(tail)
    body = "\n".join(parts)
    if redact:
        body = redact_secrets(body)
    body = fit(body, max(64, budget - _size(footer) - 1))
    return f"{body}\n{footer}"


def _folded(lines: list[str]) -> list[str]:
    """Lines with runs of the same line folded into one, with a count."""
    out: list[str] = []
    for line, run in groupby(lines):
        count = len(list(run))
        out.append(f"[x{count}] {_cut(line)}" if count > 1 else _cut(line))
    return out


def _cut(line: str) -> str:
    return line if len(line) <= _LINE else line[:_LINE] + f"… (+{len(line) - _LINE} chars)"
