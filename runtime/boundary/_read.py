"""``ctx_read``: read exactly what is needed from a stored payload (or a workspace file).

Three modes, one per call:

- a byte range (``offset``, ``length``), never splitting a UTF-8 character;
- a ``query``: literal and case-sensitive by default, ``regex=True``, ``ignore_case=True``;
  windows with line numbers and context for the first ``max_matches`` matches, the exact total,
  and matched lines sampled from the rest (see ``_query``);
- a ``json_path`` (``$.a.b[0]``, ``[*]``, ``.*``, ``[0:5]``).

The text a read returns always fits ``budget``, so a read never triggers another offload.
"""

from __future__ import annotations

import json

from runtime._errors import ReadError
from runtime.boundary import _jsonpath
from runtime.boundary._fit import fit
from runtime.boundary._fit import size as _size
from runtime.boundary._preview import preview
from runtime.boundary._query import REGEX_SECONDS, Matcher, query_read
from runtime.boundary._readable import PathValue, Readable, ReadResult


def read(
    source: Readable,
    *,
    budget: int,
    offset: int | None = None,
    length: int | None = None,
    query: str | None = None,
    regex_mode: bool = False,
    ignore_case: bool = False,
    max_matches: int = 100,
    context: int = 1,
    json_path: str | None = None,
    regex_timeout: float = REGEX_SECONDS,
) -> ReadResult:
    """Serve one read of ``source``; bad arguments raise ReadError with a code and the fix.

    A regular expression gets ``regex_timeout`` seconds for the whole read."""
    chosen = [
        m
        for m, on in (
            ("query", query is not None),
            ("json_path", json_path is not None),
            ("range", offset is not None or length is not None),
        )
        if on
    ]
    if len(chosen) > 1:
        raise ReadError(
            "bad_query",
            f"pass one of offset/length, query or json_path, not {' and '.join(chosen)}",
        )
    budget = max(budget, 512)
    if query is not None:
        matcher = Matcher(query, regex_mode, ignore_case, regex_timeout)
        return query_read(source, matcher, max_matches, context, budget)
    if json_path is not None:
        return _json_path(source, json_path, budget)
    return _range(source, offset or 0, length, budget)


# -- ranges ---------------------------------------------------------------------------------


def _range(source: Readable, offset: int, length: int | None, budget: int) -> ReadResult:
    room = budget - 200
    if not isinstance(offset, int) or offset < 0 or offset > source.size:
        raise ReadError(
            "bad_range", f"offset must be between 0 and {source.size} (the size of {source.name})"
        )
    if length is None:
        length = min(4000, room)
    if not isinstance(length, int) or length < 0:
        raise ReadError("bad_range", "length must be a whole number >= 0")
    length = min(length, room)
    raw = source.read(offset, length + 4)
    start = 0
    while start < min(4, len(raw)) and 0x80 <= raw[start] < 0xC0:  # inside a character
        start += 1
    end = _char_end(raw, min(len(raw), start + length))
    data = raw[start:end]
    first, last = offset + start, offset + end
    content = data.decode("utf-8", "replace")
    more = last < source.size
    head = f"{source.name}: bytes {first}-{last} of {source.size}"
    if source.content_type == "bytes":
        content = data.hex(" ")
        head += " (binary, shown as hex)"
    if more:
        head += f'; continue with ctx.read("{source.name}", offset={last}, length={length})'
    else:
        head += "; this is the end"
    return ReadResult(
        handle=source.name,
        mode="range",
        content_type=source.content_type,
        total_bytes=source.size,
        text=fit(f"{head}\n{content}", budget),
        offset=first,
        next_offset=last if more else None,
        content=content,
    )


def _char_end(data: bytes, end: int) -> int:
    """The largest index <= end that does not cut a UTF-8 character."""
    if end >= len(data):
        return end
    back = end
    while back > 0 and end - back < 4 and 0x80 <= data[back] < 0xC0:
        back -= 1
    return back


# -- queries --------------------------------------------------------------------------------


# -- JSON paths -----------------------------------------------------------------------------


def _json_path(source: Readable, path: str, budget: int) -> ReadResult:
    steps = _jsonpath.parse(path)
    if source.content_type != "json":
        mode = "binary data" if source.content_type == "bytes" else f"{source.content_type}"
        raise ReadError(
            "not_json",
            f"{source.name} holds {mode}, not JSON, so json_path does not apply; read it with "
            'query="..." (matching lines) or offset=/length= (a byte range)',
        )
    text = b"".join(source.pieces()).decode("utf-8", "surrogatepass")
    values, total = _jsonpath.evaluate(text, steps, limit=1000)
    head = f"{path} in {source.name}: {total} value{'s' if total != 1 else ''}"
    parts = [head]
    used = len(head) + 100
    kept: list[PathValue] = []
    for found_path, value in values:
        rendered = json.dumps(value, ensure_ascii=False)
        line = f"{found_path} = {rendered}"
        if used + _size(line) + 1 > budget:
            if not kept:  # one value too large for the read: describe its structure
                room = max(256, budget - used - 200)
                shown = preview(value, room, "json", redact=False).text
                parts.append(
                    f"{found_path} is {_size(rendered)} bytes, more than one "
                    f"read holds; its structure:\n{shown}\nnarrow the path, e.g. "
                    f"{found_path}[0:10] or {found_path}.<key>"
                )
                kept.append(PathValue(path=found_path, value=None))
            break
        parts.append(line)
        kept.append(PathValue(path=found_path, value=value))
        used += _size(line) + 1
    if len(kept) < total:
        parts.append(f"… {total - len(kept)} more values; narrow the path or slice it")
    return ReadResult(
        handle=source.name,
        mode="json_path",
        content_type=source.content_type,
        total_bytes=source.size,
        text=fit("\n".join(parts), budget),
        json_path=path,
        values=kept,
        total_values=total,
    )
