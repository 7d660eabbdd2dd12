"""Content blocks at the boundary: one text budget for all the text of a result.

Within the budget (``readOffloadThreshold``, printed output included) every block reaches the
model as it is. Over it, the text goes under one handle: a result with one text block keeps
its exact text there; one with several keeps ``{"textBlocks": [{"index": i, "text": ...}]}``,
every text block at its index among the returned blocks (an embedded resource's with its
``uri`` and ``mime_type``; a single resource's are said in the notice). The model gets the
media at their places, a bounded allowance of short text blocks beside them, and in place of
the first text block it does not get, the offload notice with a preview of the text that was
held back. This module makes those choices; the boundary stores
and words them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence

from runtime._content import ContentBlock, ResourceBlock, TextBlock, TextResource, text_of
from runtime.boundary._fit import size as _size
from runtime.boundary._preview import Preview

SIBLING_BYTES = 512
"""A text block this short may stay beside the media when the rest of the text is offloaded."""
SIBLINGS_BYTES = 2048
"""The most text such blocks keep in all (and never more than a quarter of the budget)."""
SIBLINGS = 8
"""The most such blocks kept."""
PREVIEWED = 4
"""Offloaded text blocks previewed one by one; the others are counted."""
_SLICE_CHARS = 1 << 20
_PREVIEW_MIN = 64

Texts = list[tuple[int, str]]
"""The text of each text-bearing block, with its index among the blocks."""


def texts_of(blocks: Sequence[ContentBlock]) -> Texts:
    return [(i, text) for i, block in enumerate(blocks) if (text := text_of(block)) is not None]


def siblings(texts: Texts, allowance: int) -> frozenset[int]:
    """The short text blocks kept beside the media, first come first kept, within
    ``allowance`` bytes and :data:`SIBLINGS` blocks."""
    kept: list[int] = []
    used = 0
    for index, text in texts:
        size = _size(text)
        if len(kept) < SIBLINGS and size <= SIBLING_BYTES and used + size <= allowance:
            kept.append(index)
            used += size
    return frozenset(kept)


def text_payload(blocks: Sequence[ContentBlock], texts: Texts) -> str:
    """``{"textBlocks": [{"index": i, "text": ...}, ...]}``, long texts encoded a slice at a
    time (``json.dumps`` of one long string would hold the interpreter for its whole run)."""
    entries = []
    for index, text in texts:
        entry = f'{{"index":{index},"text":{_json_string(text)}'
        block = blocks[index]
        if isinstance(block, ResourceBlock) and isinstance(block.resource, TextResource):
            entry += f',"uri":{_json_string(block.resource.uri)}'
            if block.resource.mime_type is not None:
                entry += f',"mime_type":{_json_string(block.resource.mime_type)}'
        entries.append(entry + "}")
    return '{"textBlocks":[' + ",".join(entries) + "]}"


def _json_string(text: str) -> str:
    if len(text) <= _SLICE_CHARS:
        return json.dumps(text, ensure_ascii=False)
    pieces = []
    for start in range(0, len(text), _SLICE_CHARS):
        pieces.append(json.dumps(text[start : start + _SLICE_CHARS], ensure_ascii=False)[1:-1])
        time.sleep(0)  # let the event loop's thread run
    return '"' + "".join(pieces) + '"'


def previews(
    texts: Texts, kept: frozenset[int], budget: int, show: Callable[[str, int], Preview]
) -> Preview:
    """A preview of each text block held back (the first :data:`PREVIEWED`), within
    ``budget`` bytes, and the first query one of them suggests; ``show(text, budget)``
    previews one."""
    held = [(k, index, text) for k, (index, text) in enumerate(texts) if index not in kept]
    shown = held[:PREVIEWED]
    parts: list[str] = []
    query = None
    rest = len(held) - len(shown)
    tail = f"… and {rest} more text blocks, in the handle" if rest else ""
    room = budget - _size(tail) - 1
    for n, (k, index, text) in enumerate(shown):
        head = f"-- block {index}: {_size(text)} bytes, $.textBlocks[{k}].text --"
        share = (room - sum(_size(p) + 1 for p in parts)) // (len(shown) - n)
        room_here = share - _size(head) - 1
        body = show(text, room_here) if room_here >= _PREVIEW_MIN else Preview("")
        query = query or body.query
        part = f"{head}\n{body.text}" if body.text else head
        if _size(part) > share:
            part = head if _size(head) <= share else ""
        if part:
            parts.append(part)
    if tail:
        parts.append(tail)
    return Preview("\n".join(parts), None, query)


def placed(
    blocks: Sequence[ContentBlock], texts: Texts, kept: frozenset[int], notice: str
) -> tuple[ContentBlock, ...]:
    """The blocks the model gets: media and kept text where they were, ``notice`` at the
    place of the first text block held back (after the others if none is)."""
    text_indices = {index for index, _ in texts}
    held = [index for index, _ in texts if index not in kept]
    at = held[0] if held else len(blocks)
    out: list[ContentBlock] = []
    for index, block in enumerate(blocks):
        if index == at:
            out.append(TextBlock(text=notice))
        if index not in text_indices or index in kept:
            out.append(block)
    if at == len(blocks):
        out.append(TextBlock(text=notice))
    return tuple(out)


def holds(blocks: Sequence[ContentBlock], texts: Texts, kept: frozenset[int]) -> str:
    """What the handle holds, for the notice (a line of bounded length: a uri is at most
    :data:`~runtime._content.MAX_URI_CHARS`); a single resource's uri and media type are
    said here, the handle keeping its exact text."""
    count = len(blocks)
    shown = sorted(kept)
    beside = ""
    if len(shown) == 1:
        beside = f"; block {shown[0]} is also shown here"
    elif shown:
        beside = f"; blocks {', '.join(map(str, shown))} are also shown here"
    if len(texts) == 1:
        index = texts[0][0]
        block = blocks[index]
        what = ""
        if isinstance(block, ResourceBlock) and isinstance(block.resource, TextResource):
            kind = f", {block.resource.mime_type}" if block.resource.mime_type else ""
            what = f" (the resource {block.resource.uri}{kind})"
        return (
            f"It holds the exact text of block {index}{what} of the {count} content blocks; "
            "the media are shown in place."
        )
    return (
        f'It holds {{"textBlocks": [{{"index", "text"}}]}}: all {len(texts)} text blocks, '
        f"each at its index among the {count} content blocks{beside}; the media are shown "
        "in place."
    )
