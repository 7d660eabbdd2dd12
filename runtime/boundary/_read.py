"""``ctx_read``: read exactly what is needed from a stored payload (or a workspace file).

Three modes, one per call:

- a byte range (``offset``, ``length``), never splitting a UTF-8 character;
- a ``query``: literal and case-sensitive by default, ``regex=True``, ``ignore_case=True``;
  windows with line numbers and context for the first ``max_matches`` matches, the exact total,
  and matched lines sampled from the rest;
- a ``json_path`` (``$.a.b[0]``, ``[*]``, ``.*``, ``[0:5]``).

The text a read returns always fits ``budget``, so a read never triggers another offload.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any, Literal, Protocol

import regex
from pydantic import BaseModel, ConfigDict

from runtime._errors import ReadError
from runtime.boundary import _jsonpath
from runtime.boundary._fit import fit
from runtime.boundary._fit import size as _size
from runtime.boundary._preview import preview
from store import Entry, Store

MAX_MATCHES_CAP = 500
_LINE = 240
_SAMPLES = 10
REGEX_SECONDS = 10.0
_STEP = 1024 * 1024
Mode = Literal["range", "query", "json_path"]


class Readable(Protocol):
    """Something ``read`` can read: a stored entry or a file."""

    name: str
    content_type: str
    size: int

    def read(self, offset: int, length: int) -> bytes: ...

    def pieces(self) -> Iterator[bytes]: ...


class BytesReadable:
    """In-memory content (a workspace file's bytes, say)."""

    def __init__(self, name: str, data: bytes, content_type: str = "text") -> None:
        self.name, self.data, self.content_type, self.size = name, data, content_type, len(data)

    def read(self, offset: int, length: int) -> bytes:
        return self.data[offset : offset + length]

    def pieces(self) -> Iterator[bytes]:
        step = 4 * 1024 * 1024
        for start in range(0, len(self.data), step):
            yield self.data[start : start + step]


class StoredReadable:
    """A live entry of the store."""

    def __init__(self, store: Store, entry: Entry) -> None:
        self.store, self.entry = store, entry
        self.name, self.size = entry.handle, entry.bytes
        self.content_type: str = entry.content_type

    def read(self, offset: int, length: int) -> bytes:
        return self.store.read_range(self.entry.handle, offset, length).data

    def pieces(self) -> Iterator[bytes]:
        return self.store.iter_bytes(self.entry.handle)


class Window(BaseModel):
    model_config = ConfigDict(frozen=True)

    line: int
    """1-based line of the match."""
    column: int
    """1-based character column of the match in that line."""
    text: str
    """The numbered lines around the match; the match's line is marked with '>'."""


class Sample(BaseModel):
    model_config = ConfigDict(frozen=True)

    offset: int
    """Byte offset of the matched line (read around it with offset=...)."""
    line: str


class PathValue(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    value: Any


class ReadResult(BaseModel):
    """What a read found; ``text`` is what the model sees, within the read's budget."""

    model_config = ConfigDict(frozen=True)

    handle: str
    mode: Mode
    content_type: str
    total_bytes: int
    text: str
    offset: int | None = None
    next_offset: int | None = None
    content: str | None = None
    query: str | None = None
    total_matches: int | None = None
    windows: list[Window] = []
    samples: list[Sample] = []
    json_path: str | None = None
    values: list[PathValue] = []
    total_values: int | None = None


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
        matcher = _Matcher(query, regex_mode, ignore_case, regex_timeout)
        return _query(source, matcher, query, max_matches, context, budget)
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


def _count_rest(blocks: _Blocks, needle: bytes) -> tuple[int, list[Sample]]:
    """Count a literal in the rest of the stream piece by piece, without aligning lines: a
    match that straddles two pieces is caught in the few bytes around their junction."""
    overlap = len(needle) - 1
    data, offset = blocks.carry, blocks.offset
    total = data.count(needle)
    samples = _piece_samples(data, needle, offset) if total else []
    tail = data[-overlap:] if overlap else b""
    offset += len(data)
    for piece in blocks.pieces:
        found = _count(piece, needle)
        if overlap:
            total += (tail + piece[:overlap]).count(needle)
            tail = (tail + piece)[-overlap:] if len(piece) < overlap else piece[-overlap:]
        if found:
            total += found
            samples += _piece_samples(piece, needle, offset)
        offset += len(piece)
    return total, samples


def _overlaps_itself(needle: bytes) -> bool:
    """Whether two matches of ``needle`` can overlap ("aa" in "aaa"): counting such a needle
    in separate spans could count differently from one left-to-right pass, so it is counted
    in line-aligned blocks instead."""
    return any(needle[:k] == needle[-k:] for k in range(1, len(needle)))


def _count(piece: bytes, needle: bytes) -> int:
    """``piece.count(needle)`` in 1 MiB steps, yielding the GIL between them.

    The store's read-ahead thread reads and checks the next piece while this counts, but it
    needs the GIL between its system calls; ``bytes.count`` holds it throughout, and Python
    hands it over only every few milliseconds. A ``sleep(0)`` per step hands it over at once,
    which lets the two overlap (about twice as fast on two cores)."""
    total = 0
    reach = len(needle) - 1
    for start in range(0, len(piece), _STEP):
        total += piece.count(needle, start, min(len(piece), start + _STEP + reach))
        time.sleep(0)
    return total


def _piece_samples(piece: bytes, needle: bytes, offset: int) -> list[Sample]:
    """Two matched lines of a piece (its first match and one past the middle)."""
    found: list[Sample] = []
    for start in (0, len(piece) // 2):
        at = piece.find(needle, start)
        if at < 0:
            continue
        begin = piece.rfind(b"\n", 0, at) + 1
        shown, cut_from, _ = _around(piece, begin, at, at + len(needle))
        if found and found[-1].offset == offset + cut_from:
            continue
        found.append(Sample(offset=offset + cut_from, line=shown))
    return found


class _Matcher:
    """Finds the query in line-aligned blocks, as bytes (fast path) or as text."""

    def __init__(self, query: str, use_regex: bool, ignore_case: bool, seconds: float) -> None:
        if not isinstance(query, str) or not query:
            raise ReadError("bad_query", "query must be non-empty text")
        if "\n" in query:
            raise ReadError("bad_query", "queries match within one line; drop the newline")
        self.bytes_mode = not use_regex and not ignore_case
        self.needle = query.encode("utf-8", "surrogatepass")
        self.overlapping = _overlaps_itself(self.needle)
        self.use_regex, self.ignore_case, self.seconds = use_regex, ignore_case, seconds
        self.deadline = time.monotonic() + seconds
        if self.bytes_mode:
            return
        pattern = query if use_regex else regex.escape(query)
        try:
            self.pattern = regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
        except regex.error as exc:
            raise ReadError(
                "invalid_regex",
                f"{query!r} is not a valid regular expression ({exc}); fix it, or pass "
                "regex=False to search for the literal text",
            ) from None
        if self.pattern.fullmatch(""):
            raise ReadError("bad_query", f"the pattern {query!r} matches empty text; anchor it")

    def count(self, block: str | bytes) -> int:
        if isinstance(block, bytes):
            return block.count(self.needle) if self.overlapping else _count(block, self.needle)
        try:
            return len(self.pattern.findall(block, timeout=self._left(), concurrent=True))
        except TimeoutError:
            raise self._timeout() from None

    def spans(self, block: str | bytes) -> Iterator[tuple[int, int]]:
        if isinstance(block, bytes):
            at = block.find(self.needle)
            while at >= 0:
                yield at, at + len(self.needle)
                at = block.find(self.needle, at + max(1, len(self.needle)))
            return
        try:
            for match in self.pattern.finditer(block, timeout=self._left(), concurrent=True):
                yield match.span()
        except TimeoutError:
            raise self._timeout() from None

    def first_from(self, block: str | bytes, position: int) -> int | None:
        """Where the first match at or after ``position`` starts."""
        if isinstance(block, bytes):
            at = block.find(self.needle, position)
            return at if at >= 0 else None
        try:
            match = self.pattern.search(block, position, timeout=self._left(), concurrent=True)
        except TimeoutError:
            raise self._timeout() from None
        return match.start() if match else None

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self._timeout()
        return left

    def _timeout(self) -> ReadError:
        return ReadError(
            "regex_timeout",
            f"the regular expression ran longer than {self.seconds:g} s; simplify it "
            "(avoid nested repetition) or search for literal text",
        )


class _Blocks:
    """Line-aligned blocks of a stream of pieces, with their byte offsets. After the caller
    stops early, ``carry`` holds the bytes read past the last full line and ``offset`` where
    they start; the pieces not yet read stay in the stream."""

    def __init__(self, pieces: Iterator[bytes]) -> None:
        self.pieces = pieces
        self.carry = b""
        self.offset = 0

    def __iter__(self) -> Iterator[tuple[bytes, int]]:
        for piece in self.pieces:
            buf = self.carry + piece if self.carry else piece
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                self.carry = buf
                continue
            self.carry = buf[cut:]
            start = self.offset
            self.offset += cut
            yield (buf[:cut] if cut < len(buf) else buf), start
        if self.carry:
            rest, self.carry = self.carry, b""
            yield rest, self.offset


def _query(
    source: Readable, matcher: _Matcher, query: str, max_matches: int, context: int, budget: int
) -> ReadResult:
    if not isinstance(max_matches, int) or not 1 <= max_matches <= MAX_MATCHES_CAP:
        raise ReadError("bad_query", f"max_matches must be between 1 and {MAX_MATCHES_CAP}")
    if not isinstance(context, int) or not 0 <= context <= 10:
        raise ReadError("bad_query", "context must be between 0 and 10 lines")
    total = 0
    lines_before = 0
    windows: list[Window] = []
    candidates: list[Sample] = []
    blocks = _Blocks(source.pieces())
    for raw, offset in blocks:
        block: str | bytes = raw if matcher.bytes_mode else raw.decode("utf-8", "replace")
        found = matcher.count(block)
        total += found
        resume: int | None = 0
        if found and len(windows) < max_matches:
            wanted = max_matches - len(windows)
            new, resume = _windows(block, matcher, lines_before, wanted, context)
            windows += new
            resume = resume if len(new) == wanted else None
        if found and resume is not None:
            per_block = _SAMPLES if not candidates else 2
            candidates += _samples(block, raw, matcher, offset, resume, per_block)
        if len(windows) < max_matches:
            lines_before += raw.count(b"\n")
        elif matcher.bytes_mode and not matcher.overlapping:
            counted, more = _count_rest(blocks, matcher.needle)
            total += counted
            candidates += more
            break
    samples = _spread(candidates, _SAMPLES) if total > len(windows) else []
    text, shown, sampled = _render_query(
        source, query, total, windows, samples, budget, matcher.use_regex, matcher.ignore_case
    )
    return ReadResult(
        handle=source.name,
        mode="query",
        content_type=source.content_type,
        total_bytes=source.size,
        text=text,
        query=query,
        total_matches=total,
        windows=windows[:shown],
        samples=samples[:sampled],
    )


def _windows(
    block: str | bytes, matcher: _Matcher, lines_before: int, wanted: int, context: int
) -> tuple[list[Window], int]:
    """Up to ``wanted`` windows, and where in ``block`` the last one's match ended."""
    newline: Any = b"\n" if isinstance(block, bytes) else "\n"
    out: list[Window] = []
    line_no, counted = lines_before + 1, 0
    last_line, shown_until = -1, -1
    stop = 0
    for span in matcher.spans(block):
        start, stop = span
        line_no += block.count(newline, counted, start)
        counted = start
        if start < shown_until or (line_no == last_line and shown_until < 0):
            continue  # already in the previous window
        last_line = line_no
        begin = block.rfind(newline, 0, start) + 1
        shown, cut_from, cut_to = _around(block, begin, start, stop)
        shown_until = cut_to if cut_from > begin or cut_to < _line_end(block, begin) else -1
        lines = [(line_no, shown, True)]
        before, after = begin, block.find(newline, start)
        for k in range(1, context + 1):
            if before <= 0:
                break
            prev = block.rfind(newline, 0, before - 1) + 1
            lines.insert(0, (line_no - k, _text(block, prev), False))
            before = prev
        for k in range(1, context + 1):
            if after < 0 or after + 1 >= len(block):
                break
            lines.append((line_no + k, _text(block, after + 1), False))
            after = block.find(newline, after + 1)
        column = len(_decode(block[begin:start])) + 1
        text = "\n".join(f"{'>' if hit else ' '} {n:>6} | {line}" for n, line, hit in lines)
        out.append(Window(line=line_no, column=column, text=text))
        if len(out) >= wanted:
            break
    return out, stop


def _samples(
    block: str | bytes, raw: bytes, matcher: _Matcher, offset: int, start: int, count: int
) -> list[Sample]:
    """Matched lines spread evenly over ``block`` from ``start``, as (byte offset, line)."""
    found: list[Sample] = []
    seen: set[int] = set()
    newline: Any = b"\n" if isinstance(block, bytes) else "\n"
    for k in range(count):
        at = matcher.first_from(block, start + k * (len(block) - start) // count)
        if at is None:
            break
        begin = block.rfind(newline, 0, at) + 1
        if begin in seen:
            continue
        seen.add(begin)
        shown, cut_from, _ = _around(block, begin, at, at + 1)
        where = cut_from if isinstance(block, bytes) else _size(block[:cut_from])
        found.append(Sample(offset=offset + where, line=shown))
    return found


def _line_end(block: str | bytes, begin: int) -> int:
    newline: Any = b"\n" if isinstance(block, bytes) else "\n"
    end = block.find(newline, begin)
    return end if end >= 0 else len(block)


def _around(block: str | bytes, begin: int, start: int, stop: int) -> tuple[str, int, int]:
    """The line from ``begin`` that holds the match [start, stop): whole when it is short,
    else a window of about ``_LINE`` characters centred on the match, with '…' at the cuts.
    Also where the window starts and ends in ``block``."""
    end = _line_end(block, begin)
    if end - begin <= _LINE:
        return _decode(block[begin:end]).rstrip("\r"), begin, end
    left = max(begin, min(start - (_LINE - (stop - start)) // 2, end - _LINE))
    right = min(end, max(left + _LINE, stop))
    if isinstance(block, bytes):  # do not cut a UTF-8 character
        while left > begin and 0x80 <= block[left] < 0xC0:
            left -= 1
        while right < end and 0x80 <= block[right] < 0xC0:
            right += 1
    text = _decode(block[left:right]).rstrip("\r")
    before = f"…(+{left - begin}) " if left > begin else ""
    after = f" …(+{end - right})" if right < end else ""
    return before + text + after, left, right


def _text(block: str | bytes, begin: int) -> str:
    newline: Any = b"\n" if isinstance(block, bytes) else "\n"
    end = block.find(newline, begin)
    line = _decode(block[begin : end if end >= 0 else len(block)]).rstrip("\r")
    return line if len(line) <= _LINE else line[:_LINE] + f"… (+{len(line) - _LINE} chars)"


def _decode(part: str | bytes) -> str:
    return part.decode("utf-8", "replace") if isinstance(part, bytes) else part


def _spread(items: list[Sample], count: int) -> list[Sample]:
    if len(items) <= count:
        return items
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]


def _render_query(
    source: Readable,
    query: str,
    total: int,
    windows: list[Window],
    samples: list[Sample],
    budget: int,
    use_regex: bool,
    ignore_case: bool,
) -> tuple[str, int, int]:
    """The text of a query's result, and how many windows and samples it shows."""
    how = ("regex " if use_regex else "") + ("ignoring case" if ignore_case else "")
    plural = "es" if total != 1 else ""
    head = f"{total} match{plural} of {query!r}{f' ({how.strip()})' if how else ''}"
    head += f" in {source.name} ({source.size} bytes)"
    if not total:
        hint = "" if ignore_case else "; try ignore_case=True"
        return fit(head + hint + (" or regex=True" if not use_regex else ""), budget), 0, 0
    head += f"; showing {len(windows)} with line numbers:"
    used = _size(head) + 300
    shown: list[str] = []
    for window in windows:
        cost = _size(window.text) + 4
        if used + cost > budget:
            break
        shown.append(window.text)
        used += cost
    notes: list[str] = []
    if len(shown) < len(windows):
        notes.append(
            f"… {len(windows) - len(shown)} more windows did not fit this read; "
            "lower max_matches or narrow the query"
        )
    sampled = 0
    if samples:
        notes.append(
            f"matched lines sampled from the other {total - len(windows)} matches "
            "(byte offset: line):"
        )
        for sample in samples:
            line = f"  {sample.offset}: {sample.line}"
            if used + len(line) + 1 > budget:
                break
            notes.append(line)
            used += len(line) + 1
            sampled += 1
    text = fit("\n".join([head, "\n--\n".join(shown), *notes]), budget)
    return text, len(shown), sampled


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
