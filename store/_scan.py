"""A bounded scan of stored payloads for a literal, case-insensitive text (``Store.scan``).

It reads every byte it covers, so it finds what the full-text index cannot: text inside words,
punctuation, and anything past the indexed head of a large payload. ``Store.search`` answers
by words from the index instead, ranked and fast; the two are different questions, not two
engines for one (``fabric store search`` is this scan, ``fabric search`` the index).
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from store._errors import IntegrityError, NotFound
from store._models import Entry, ScanHit, ScanResult

if TYPE_CHECKING:
    from store._store import Store


def scan(
    store: Store,
    query: str,
    entries: Iterable[Entry],
    *,
    max_hits: int,
    max_bytes: int,
    window: int,
) -> ScanResult:
    needle = query.lower()
    hits: list[ScanHit] = []
    unreadable: list[str] = []
    scanned = read = 0
    complete = True
    for entry in entries:
        if len(hits) >= max_hits or read >= max_bytes:
            complete = False
            break
        scanned += 1
        pieces = _Budgeted(store.iter_bytes(entry.handle), max_bytes - read)
        try:
            for number, line in _lines(pieces):
                column = line.lower().find(needle)
                if column >= 0:
                    hits.append(_hit(entry.handle, number, column, line, len(query), window))
                    if len(hits) >= max_hits:
                        complete = False
                        break
        except IntegrityError:
            unreadable.append(entry.handle)
        except NotFound:
            continue
        read += pieces.bytes
        if pieces.bytes < entry.bytes:
            complete = False
    return ScanResult(
        query=query,
        hits=hits,
        entries_scanned=scanned,
        bytes_scanned=read,
        complete=complete,
        unreadable=unreadable,
    )


class _Budgeted:
    """Passes pieces on until ``budget`` bytes have gone by, counting them."""

    def __init__(self, pieces: Iterable[bytes], budget: int) -> None:
        self.pieces = pieces
        self.budget = budget
        self.bytes = 0

    def __iter__(self) -> Iterator[bytes]:
        for piece in self.pieces:
            self.bytes += len(piece)
            yield piece
            if self.bytes >= self.budget:
                return


def _lines(pieces: Iterable[bytes]) -> Iterator[tuple[int, str]]:
    """Numbered lines of UTF-8 pieces, a line cut between pieces joined again."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    carry = ""
    number = 0
    for piece in pieces:
        lines = (carry + decoder.decode(piece)).split("\n")
        carry = lines.pop()
        for line in lines:
            number += 1
            yield number, line.rstrip("\r")
    carry += decoder.decode(b"", final=True)
    if carry:
        yield number + 1, carry.rstrip("\r")


def _hit(handle: str, number: int, column: int, line: str, width: int, window: int) -> ScanHit:
    start = max(0, min(column - (window - width) // 2, len(line) - window))
    text = line[start : start + window]
    if start > 0:
        text = "..." + text
    if start + window < len(line):
        text += "..."
    return ScanHit(handle=handle, line=number, column=column + 1, text=text)
