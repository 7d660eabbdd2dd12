"""Compacting a long error: first lines, representative diagnostic lines with repeat counts,
last lines, and where the original is."""

from __future__ import annotations

from collections import Counter

from runtime.boundary._preview_text import MARKERS
from runtime.boundary._redact import redact as redact_secrets

_HEAD = 8
_TAIL = 6
_LINE = 200


def compact_error_text(text: str, budget: int, handle: str, *, redact: bool = True) -> str:
    lines = text.splitlines()
    footer = (
        f"[error compacted: the full text ({len(text.encode())} bytes, {len(lines)} lines) is "
        f'stored as {handle}; read it with await ctx.read("{handle}", offset=0, length=4000) '
        'or query="..."]'
    )
    head, tail = lines[:_HEAD], lines[-_TAIL:] if len(lines) > _HEAD else []
    middle = lines[_HEAD : len(lines) - len(tail)]
    counts = Counter(line.strip() for line in middle if MARKERS.search(line))
    representative = [
        f"  [x{count}] {_cut(line)}" if count > 1 else f"  {_cut(line)}"
        for line, count in counts.most_common()
    ]
    parts = [_cut(line) for line in head]
    if middle:
        parts.append(f"… {len(middle)} lines omitted; diagnostic lines among them:")
    room = budget - len(footer) - sum(len(p) + 1 for p in parts + tail) - 8
    for line in representative:
        if len(line) + 1 > room:
            break
        parts.append(line)
        room -= len(line) + 1
    parts += [_cut(line) for line in tail]
    body = "\n".join(parts)
    if redact:
        body = redact_secrets(body)
    data = body.encode()
    if len(data) + len(footer) + 1 > budget:
        body = data[: max(0, budget - len(footer) - 5)].decode("utf-8", "ignore") + "\n…"
    return f"{body}\n{footer}"


def _cut(line: str) -> str:
    return line if len(line) <= _LINE else line[:_LINE] + f"… (+{len(line) - _LINE} chars)"
