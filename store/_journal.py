"""The page file: a snapshot line, then delta lines appended by updates.

::

    {"format":1,"kind":"CONTEXT_WINDOW","mode":"MEMORY_AND_DISK","page":{...}}\\n
    {"set":{"Alice":{...}},"append":["a new context element"]}\\n
    {"set":{"Bob":{...}},"context":["the whole context, when it changed otherwise"]}\\n

An update that only sets lorebook entries and appends or replaces context elements appends one
delta line (a few hundred bytes, whatever the page's size) instead of rewriting the page; a
bank holding the page applies only the lines appended since it last looked, also those another
process appended. Anything else (removing entries, a replaced window, a page grown to twice
its snapshot) writes a fresh snapshot that takes the file's place atomically. A line counts only
once its closing newline is written: a reader ignores a line still being written, and the next
writer cuts off one that a crash left half written.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from store._access import ResourceKind
from store._errors import IntegrityError
from store._lorebook import ContextWindow, LorebookEntry, saved_lorebook, unsaved_keys

COMPACT_SLACK = 64 * 1024
"""Deltas may grow the file to twice its snapshot plus this many bytes before a new snapshot."""


class _Delta(BaseModel):
    model_config = ConfigDict(extra="forbid")

    set: dict[str, LorebookEntry] = Field(default_factory=dict)
    context: list[str] | None = None
    append: list[str] = Field(default_factory=list)


@dataclass
class Decoded:
    mode: str
    page: Any
    consumed: int | None
    """Bytes of complete lines read; None when the file cannot take deltas."""
    snapshot: int
    """Bytes of the snapshot line."""


def encode_snapshot(kind: ResourceKind, mode: str, page: Any) -> bytes:
    body = page.dump_json() if isinstance(page, ContextWindow) else page.model_dump_json().encode()
    return b'{"format":1,"kind":"%s","mode":"%s","page":%s}\n' % (
        kind.value.encode(),
        mode.encode(),
        body,
    )


def decode(kind: ResourceKind, key: str, data: bytes, files: dict[ResourceKind, Any]) -> Decoded:
    """The page in ``data`` with its deltas applied; IntegrityError when it does not decode."""
    end = data.find(b"\n")
    snapshot = data if end < 0 else data[:end]
    try:
        stored = files[kind].model_validate_json(snapshot)
        consumed: int | None = None
        if end >= 0:
            consumed = end + 1 + apply_tail(stored.page, data[end + 1 :])
        if isinstance(stored.page, ContextWindow):
            saved_lorebook(stored.page)
    except (ValidationError, ValueError) as exc:
        raise _unreadable(key, data, exc) from None
    return Decoded(stored.mode, stored.page, consumed, len(snapshot) + 1)


def apply_tail(page: Any, data: bytes) -> int:
    """Apply the complete delta lines of ``data`` to ``page``; the bytes they took. A line
    that does not decode raises ValueError (or pydantic's ValidationError)."""
    pos = 0
    while (end := data.find(b"\n", pos)) >= 0:
        if not isinstance(page, ContextWindow):
            raise ValueError("a todo page has no deltas")
        delta = _Delta.model_validate_json(data[pos:end])
        for name, entry in delta.set.items():
            if name != entry.key:
                raise ValueError(f"lorebook entry {entry.key!r} is filed under {name!r}")
            page.lorebook[name] = entry
        if delta.context is not None:
            page.context = delta.context
        page.context.extend(delta.append)
        pos = end + 1
    if isinstance(page, ContextWindow):
        saved_lorebook(page)
    return pos


def encode_delta(page: ContextWindow, saved_context: list[str]) -> bytes | None:
    """The delta line of what changed since the page was last saved, ``b""`` when nothing
    did, None when a delta cannot say it (entries removed or the lorebook replaced)."""
    keys = unsaved_keys(page)
    if keys is None:
        return None
    parts = []
    if keys:
        book = page.lorebook
        encoded = b",".join(
            json.dumps(key).encode() + b":" + book[key].model_dump_json().encode() for key in keys
        )
        parts.append(b'"set":{%s}' % encoded)
    context = page.context
    if context != saved_context:
        known = len(saved_context)
        if len(context) > known and context[:known] == saved_context:
            parts.append(b'"append":' + _json(context[known:]))
        else:
            parts.append(b'"context":' + _json(context))
    return b"{%s}\n" % b",".join(parts) if parts else b""


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _unreadable(key: str, data: bytes, exc: Exception) -> IntegrityError:
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False)[0]["msg"]
        why = f"{exc.error_count()} problems, first: {first}"
    else:
        why = str(exc)
    return IntegrityError(
        f"page {key!r} is unreadable on disk ({why}); it was not served. Emplace it again, or "
        "delete it.",
        ref=key,
        sha256=hashlib.sha256(data).hexdigest(),
    )
