"""``ctx_read`` by query: literal, regex or case-insensitive matches, counted exactly, with
windows of context around the first matches and lines sampled from the rest.

Literal queries are counted piece by piece as the store streams them (a match straddling two
pieces is caught at their junction), yielding the GIL so the store's read-ahead thread keeps
its pipeline full; other queries run on line-aligned decoded blocks under a deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import regex

from runtime._errors import ReadError
from runtime._threads import stop_if_requested
from runtime.boundary._fit import fit
from runtime.boundary._fit import size as _size
from runtime.boundary._patterns import PatternTooLarge, check_pattern
from runtime.boundary._query_json import MAX_JSON_QUERY_BYTES, TooCostly, json_windows
from runtime.boundary._readable import Line, Readable, ReadResult, Sample, Window

MAX_MATCHES_CAP = 500
MAX_CONTEXT_LINES = 10
REGEX_SECONDS = 10.0
_LINE = 240
_SAMPLES = 10
_WINDOW_LINES = 12
"""A window grows by joining matches until it holds this many lines (and the context)."""
_STEP = 1024 * 1024


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
        stop_if_requested()
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


class Matcher:
    """Finds the query in line-aligned blocks, as bytes (fast path) or as text."""

    def __init__(self, query: str, use_regex: bool, ignore_case: bool, seconds: float) -> None:
        if not isinstance(query, str) or not query:
            raise ReadError("bad_query", "query must be non-empty text")
        if "\n" in query:
            raise ReadError("bad_query", "queries match within one line; drop the newline")
        self.bytes_mode = not use_regex and not ignore_case
        self.needle = query.encode("utf-8", "surrogatepass")
        self.overlapping = _overlaps_itself(self.needle)
        self.query = query
        self.use_regex, self.ignore_case, self.seconds = use_regex, ignore_case, seconds
        self.deadline = time.monotonic() + seconds
        if self.bytes_mode:
            return
        pattern = query if use_regex else regex.escape(query)
        try:
            check_pattern(pattern)
        except PatternTooLarge as exc:
            raise ReadError("pattern_too_large", str(exc)) from None
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

    def text_count(self, text: str) -> int:
        """Matches in decoded ``text`` (the same count as in its UTF-8 bytes)."""
        return text.count(self.query) if self.bytes_mode else self.count(text)

    def find_from(self, text: str, position: int) -> tuple[int, int] | None:
        """The (start, end) of the first match in decoded ``text`` at or after ``position``."""
        if self.bytes_mode:
            at = text.find(self.query, position)
            return (at, at + len(self.query)) if at >= 0 else None
        try:
            found = self.pattern.search(text, position, timeout=self._left(), concurrent=True)
        except TimeoutError:
            raise self._timeout() from None
        return found.span() if found else None

    def count_from(self, text: str, position: int, before: int) -> tuple[int, int]:
        """How many matches from ``position`` start before ``before``, and where the last
        ends: a literal is counted in one pass, never match by match."""
        if self.bytes_mode:
            reach = before + len(self.query) - 1
            count = text.count(self.query, position, reach)
            last = text.rfind(self.query, position, reach) if count else -1
            return count, (last + len(self.query) if count else position)
        count, end = 0, position
        try:
            for found in self.pattern.finditer(
                text, position, timeout=self._left(), concurrent=True
            ):
                if found.start() >= before:
                    break
                count, end = count + 1, found.end()
        except TimeoutError:
            raise self._timeout() from None
        return count, end

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
            stop_if_requested()
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


def query_read(
    source: Readable, matcher: Matcher, max_matches: int, context: int, budget: int
) -> ReadResult:
    if not isinstance(max_matches, int) or not 1 <= max_matches <= MAX_MATCHES_CAP:
        raise ReadError("bad_query", f"max_matches must be between 1 and {MAX_MATCHES_CAP}")
    if not isinstance(context, int) or not 0 <= context <= MAX_CONTEXT_LINES:
        raise ReadError("bad_query", f"context must be between 0 and {MAX_CONTEXT_LINES} lines")
    if source.content_type == "json" and source.size <= MAX_JSON_QUERY_BYTES:
        by_item = _json_query(source, matcher, max_matches, context, budget)
        if by_item is not None:
            return by_item
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
    held = sum(window.matches for window in windows)
    samples = _spread(candidates, _SAMPLES) if total > held else []
    return _result(source, matcher, total, windows, samples, budget)


def _result(
    source: Readable,
    matcher: Matcher,
    total: int,
    windows: list[Window],
    samples: list[Sample],
    budget: int,
) -> ReadResult:
    text, shown, sampled = _render_query(
        source,
        matcher.query,
        total,
        windows,
        samples,
        budget,
        matcher.use_regex,
        matcher.ignore_case,
    )
    return ReadResult(
        handle=source.name,
        mode="query",
        content_type=source.content_type,
        total_bytes=source.size,
        text=text,
        query=matcher.query,
        total_matches=total,
        windows=windows[:shown],
        samples=samples[:sampled],
    )


class _Building:
    """A window being built: its lines by number, and its matches."""

    def __init__(self, line: int, column: int) -> None:
        self.line, self.column = line, column
        self.lines: dict[int, tuple[str, bool]] = {}
        self.matches = 0
        self.last_hit = line

    def add(self, number: int, text: str, hit: bool) -> None:
        was = self.lines.get(number)
        self.lines[number] = (text if was is None or hit else was[0], hit or bool(was and was[1]))

    def window(self) -> Window:
        lines = [Line(number=n, text=t, hit=h) for n, (t, h) in sorted(self.lines.items())]
        return Window(
            line=self.line,
            column=self.column,
            text=render_lines(lines),
            lines=lines,
            matches=self.matches,
        )


def render_lines(lines: list[Line]) -> str:
    """Numbered lines for display, matched ones marked '>'."""
    return "\n".join(f"{'>' if ln.hit else ' '} {ln.number:>6} | {ln.text}" for ln in lines)


def _json_query(
    source: Readable, matcher: Matcher, max_matches: int, context: int, budget: int
) -> ReadResult | None:
    """Matches in stored JSON by item, with their ``$`` paths; None if it is not valid JSON
    after all (it is then queried by line)."""
    try:
        text = b"".join(source.pieces()).decode("utf-8")
        total = matcher.text_count(text)
        windows = json_windows(text, matcher, context, max_matches)
    except (ValueError, IndexError, RecursionError, TooCostly):  # not JSON, or too big to walk
        return None
    return _result(source, matcher, total, windows, [], budget)


def _windows(
    block: str | bytes, matcher: Matcher, lines_before: int, wanted: int, context: int
) -> tuple[list[Window], int]:
    """Up to ``wanted`` windows, and where in ``block`` the last match they hold ended.

    A match whose context touches or overlaps the previous window's joins it, so no line is
    shown twice; several far-apart matches on one long line get a window each."""
    newline: Any = b"\n" if isinstance(block, bytes) else "\n"
    out: list[_Building] = []
    line_no, counted = lines_before + 1, 0
    last_line, shown_until = -1, -1
    stop = 0
    for span in matcher.spans(block):
        start, end = span
        line_no += block.count(newline, counted, start)
        counted = start
        if start < shown_until or (line_no == last_line and shown_until < 0):
            if out:
                out[-1].matches += 1
                stop = end
            continue  # already in the previous window
        current = out[-1] if out else None
        shown_max = max(current.lines) if current is not None else 0
        full = current is not None and len(current.lines) >= _WINDOW_LINES
        joins = current is not None and line_no > current.last_hit
        joins = joins and (
            line_no <= shown_max or (not full and line_no - context <= shown_max + 1)
        )
        if not joins and len(out) >= wanted:
            break
        stop = end
        last_line = line_no
        begin = block.rfind(newline, 0, start) + 1
        shown, cut_from, cut_to = _around(block, begin, start, end)
        shown_until = cut_to if cut_from > begin or cut_to < _line_end(block, begin) else -1
        if not joins or current is None:
            current = _Building(line_no, len(_decode(block[begin:start])) + 1)
            out.append(current)
        current.matches += 1
        current.last_hit = line_no
        current.add(line_no, shown, True)
        before, after = begin, block.find(newline, start)
        for k in range(1, context + 1):
            if before <= 0 or line_no - k <= shown_max:
                break  # shown already, in this window or the one before
            prev = block.rfind(newline, 0, before - 1) + 1
            current.add(line_no - k, _text(block, prev), False)
            before = prev
        for k in range(1, 0 if joins and full else context + 1):
            if after < 0 or after + 1 >= len(block):
                break
            current.add(line_no + k, _text(block, after + 1), False)
            after = block.find(newline, after + 1)
    return [building.window() for building in out], stop


def _samples(
    block: str | bytes, raw: bytes, matcher: Matcher, offset: int, start: int, count: int
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
    held = sum(window.matches for window in windows)
    used = _size(head) + 340  # the head's own counts, and the notes' first line
    shown: list[str] = []
    for window in windows:
        cost = _size(window.text) + 4
        if used + cost > budget:
            break
        shown.append(window.text)
        used += cost
    in_shown = sum(window.matches for window in windows[: len(shown)])
    head += f"; showing {in_shown} in {len(shown)} window{'s' if len(shown) != 1 else ''}:"
    notes: list[str] = []
    if len(shown) < len(windows):
        notes.append(
            f"… {len(windows) - len(shown)} more windows did not fit this read; "
            "lower max_matches or narrow the query"
        )
    sampled = 0
    room = budget - used - 80  # what sampled lines may take, their heading line too
    samples = [x for x in samples if (room := room - _size(f"  {x.offset}: {x.line}") - 1) >= 0]
    if total > held and not samples:
        notes.append(
            f"… {total - held} more matches after these windows; raise max_matches (up to "
            f"{MAX_MATCHES_CAP}) or narrow the query"
        )
    if samples:
        notes.append(
            f"matched lines sampled from the other {total - held} matches (byte offset: line):"
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
