"""The Store: put payloads, get them back by handle, keep the whole within its budgets."""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

from store import _fulltext, _search, _upkeep
from store._blobs import CHUNK, DIGEST, BlobFiles, digests, ensure_dir, ensure_private_dir
from store._errors import (
    BudgetExceeded,
    IntegrityError,
    InvalidRequest,
    NotFound,
    StoreUnavailable,
)
from store._models import (
    CheckReport,
    Chunk,
    ContentType,
    Entry,
    GcReport,
    ScanResult,
    SearchMatch,
    SearchResult,
    Usage,
)
from store._names import (
    HEX_DIGITS,
    check_handle,
    check_name,
    hash_prefix,
    is_handle,
    is_name,
    make_handle,
    slugify,
    source_slug,
)
from store._payload import encode, make_source
from store._scan import scan
from store._schema import COLUMNS, INFLATE, MIGRATIONS, bury, inflate, not_found, to_entry
from store._sqlite import Database

DAY_MS = 24 * 3600 * 1000
DEFAULT_TTL_MS = 7 * DAY_MS
MAX_BYTES = 500_000_000
"""The most a store may hold; ``max_bytes`` defaults to it and never exceeds it."""
INDEX_CACHE_MIB = 64
"""Pages of the index SQLite may keep in memory: a word found in most payloads has postings
of several MB, which a search of 10,000 payloads reads again each time through the default
2 MiB (85 ms against 53 ms, bench/store.py). Memory mapping would be as fast, but turns an
I/O error into SIGBUS."""
_T = TypeVar("_T")
Order = Literal["recent", "created", "largest"]
_ORDER_SQL = {"recent": "accessed DESC", "created": "created DESC", "largest": "bytes DESC"}


def estimate_tokens(size: int) -> int:
    """About four bytes per token: the estimate used when the caller does not count."""
    return math.ceil(size / 4)


class Store:
    """Content-addressed payloads under ``<workspace>/.fabric/store/``.

    ``put`` stores bytes once per sha256 and returns an ``Entry`` whose ``handle`` resolves to
    exactly those bytes, across processes and restarts, until it expires (``ttl_ms``) or is
    evicted to keep the store under ``max_bytes`` (least recently used first, never the entry
    just put). Safe to use from several threads and processes at once.
    """

    def __init__(
        self,
        workspace: str | Path,
        *,
        ttl_ms: int = DEFAULT_TTL_MS,
        max_bytes: int = MAX_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(ttl_ms, int) or ttl_ms <= 0:
            raise InvalidRequest(f"ttl_ms must be a positive number of milliseconds, not {ttl_ms}")
        if not isinstance(max_bytes, int) or not 0 < max_bytes <= MAX_BYTES:
            raise InvalidRequest(
                f"max_bytes must be between 1 and {MAX_BYTES} (500 MB), not {max_bytes}"
            )
        self.workspace = Path(workspace)
        if not self.workspace.is_dir():
            raise StoreUnavailable(
                f"the workspace {self.workspace} is not a folder; create it or pass another one"
            )
        self.root = self.workspace / ".fabric" / "store"
        ensure_private_dir(self.root.parent)
        ensure_dir(self.root)
        self.ttl_ms = ttl_ms
        self.max_bytes = max_bytes
        self._clock = clock
        self._blobs = BlobFiles(self.root)
        self._db = Database(
            self.root / "index.db",
            MIGRATIONS,
            cache_mib=INDEX_CACHE_MIB,
            functions={INFLATE: inflate},
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _now(self) -> int:
        return int(self._clock() * 1000)

    # -- writing -----------------------------------------------------------------------------

    def put(
        self,
        data: str | bytes | Any,
        *,
        tool: str = "put",
        args: dict[str, Any] | None = None,
        key: str | None = None,
        content_type: ContentType | None = None,
        tokens: int | None = None,
        ttl_ms: int | None = None,
    ) -> Entry:
        """Store ``data`` (text, bytes, or any JSON value) and return its entry.

        ``tool`` and ``args`` record how the data was made; they name the handle
        (``read-app-log-3fa2b1c9``) unless a ``key`` is given, which then names it and can be
        used in place of the handle. Putting the same source and bytes again returns the same
        handle with a renewed expiry.
        """
        payload, ctype = encode(data, content_type)
        if key is not None:
            check_name(key, what="key")
        if len(payload) > self.max_bytes:
            raise BudgetExceeded(
                f"the payload is {len(payload)} bytes and the store holds at most "
                f"{self.max_bytes}; store a smaller part (select or summarize it first)",
                size=len(payload),
                limit=self.max_bytes,
            )
        life = self.ttl_ms if ttl_ms is None else ttl_ms
        if not isinstance(life, int) or life <= 0:
            raise InvalidRequest(f"ttl_ms must be a positive number of milliseconds, not {life}")
        source = make_source(tool, args)
        slug = slugify(key) if key is not None else source_slug(source.tool, source.args)
        sha, chunks, crcs = digests(payload)
        self._blobs.write(sha, payload)
        with self._db.write() as conn:
            # A concurrent gc may have removed the file as an orphan before our row existed;
            # it cannot now, because we hold the write lock.
            if not self._blobs.present(sha, len(payload)):
                self._blobs.write(sha, payload)
            conn.execute(
                "INSERT OR IGNORE INTO blobs (sha256, bytes, chunks, crcs) VALUES (?, ?, ?, ?)",
                (sha, len(payload), chunks, crcs),
            )
            handle = _free_handle(conn, slug, sha)
            now = self._now()
            if key is not None:
                conn.execute(
                    "UPDATE entries SET key = NULL WHERE key = ? AND handle != ?", (key, handle)
                )
            conn.execute(
                f"INSERT INTO entries ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (handle) DO UPDATE SET key = coalesce(excluded.key, key), "
                "tool = excluded.tool, args = excluded.args, content_type = excluded.content_type,"
                " tokens = excluded.tokens, accessed = excluded.accessed, "
                "expires = excluded.expires",
                (
                    handle,
                    key,
                    source.tool,
                    json.dumps(source.args, ensure_ascii=False),
                    sha,
                    ctype,
                    len(payload),
                    estimate_tokens(len(payload)) if tokens is None else max(0, int(tokens)),
                    now,
                    now,
                    now + life,
                ),
            )
            conn.execute("DELETE FROM gone WHERE handle = ?", (handle,))
            if ctype != "bytes":
                _fulltext.index(conn, sha, payload)
            _upkeep.expire(conn, self._blobs, now, limit=1000)
            _upkeep.evict(conn, self._blobs, self.max_bytes, now, keep=handle)
            row = conn.execute(f"SELECT {COLUMNS} FROM entries WHERE handle = ?", (handle,))
            return to_entry(row.fetchone())

    def delete(self, ref: str) -> Entry:
        """Remove one entry (its blob goes when no other entry shares it); return what it was."""
        with self._db.write() as conn:
            entry = self._find(conn, ref)
            bury(conn, [entry.handle], "deleted", self._now())
            _upkeep.drop_blobs(conn, self._blobs, {entry.sha256})
            return entry

    def clear(self) -> int:
        """Remove every entry and blob; return how many entries there were."""
        with self._db.write() as conn:
            handles = [h for (h,) in conn.execute("SELECT handle FROM entries")]
            # emptied at once, rather than each passage's words read again to take them out
            conn.execute("INSERT INTO search_text (search_text) VALUES ('delete-all')")
            bury(conn, handles, "cleared", self._now())
            shas = {sha for (sha,) in conn.execute("SELECT sha256 FROM blobs")}
            _upkeep.drop_blobs(conn, self._blobs, shas)
            return len(handles)

    # -- reading -----------------------------------------------------------------------------

    def stat(self, ref: str) -> Entry:
        """The entry of a handle (or key), without reading its content."""
        with self._db.read() as conn:
            entry = self._find(conn, ref)
        if entry.expires.timestamp() * 1000 <= self._now():
            raise self._remove(entry, "expired")
        return entry

    def get(self, ref: str) -> bytes:
        """The exact bytes stored under a handle (or key), verified against their sha256."""
        entry = self.stat(ref)
        data = self._guard(entry, lambda: self._blobs.read(entry.sha256, entry.bytes, ref))
        self._touch(entry.handle)
        return data

    def get_text(self, ref: str) -> str:
        """The content decoded as UTF-8 (undecodable bytes show as U+FFFD)."""
        return self.get(ref).decode("utf-8", errors="replace")

    def read_range(self, ref: str, offset: int = 0, length: int = 4096) -> Chunk:
        """``length`` bytes from ``offset``; only the 64 KiB chunks touched are read and checked."""
        if not isinstance(offset, int) or not isinstance(length, int) or offset < 0 or length < 0:
            raise InvalidRequest(
                f"offset and length must be whole numbers >= 0, not {offset!r} and {length!r}"
            )
        entry = self.stat(ref)
        if offset > entry.bytes:
            raise InvalidRequest(
                f"offset {offset} is past the end of {entry.handle} ({entry.bytes} bytes); "
                f"read from an offset below {entry.bytes}"
            )
        end = min(entry.bytes, offset + length)
        data = b""
        if end > offset:
            first, last = offset // CHUNK, (end - 1) // CHUNK
            with self._db.read() as conn:
                row = conn.execute(
                    "SELECT substr(chunks, ?, ?) FROM blobs WHERE sha256 = ?",
                    (first * DIGEST + 1, (last - first + 1) * DIGEST, entry.sha256),
                ).fetchone()
            digests = row[0] if row else b""
            block = self._guard(
                entry,
                lambda: self._blobs.read_chunks(
                    entry.sha256, entry.bytes, first, last, digests, ref
                ),
            )
            data = block[offset - first * CHUNK : end - first * CHUNK]
        self._touch(entry.handle)
        return Chunk(
            handle=entry.handle,
            offset=offset,
            data=data,
            total=entry.bytes,
            next_offset=end if end < entry.bytes else None,
        )

    def blob_path(self, ref: str) -> Path:
        """The file that holds an entry's bytes (for integrity tools and ``fabric doctor``)."""
        with self._db.read() as conn:
            entry = self._find(conn, ref)
        return self._blobs.path(entry.sha256)

    def iter_bytes(self, ref: str) -> Iterator[bytes]:
        """The content in pieces of 4 MiB, read ahead in a thread, every 64 KiB chunk checked
        against its CRC32: the way to read a large entry whole (``scan`` and queries use it)."""
        entry = self.stat(ref)
        with self._db.read() as conn:
            row = conn.execute("SELECT crcs, chunks FROM blobs WHERE sha256 = ?", (entry.sha256,))
            crcs, chunks = (bytes(v) for v in (row.fetchone() or (b"", b"")))
        pieces = self._blobs.stream(entry.sha256, entry.bytes, crcs, chunks, entry.handle)
        try:
            while True:
                piece = self._guard(entry, lambda: next(pieces, None))
                if piece is None:
                    return
                yield piece
        finally:
            pieces.close()

    def list(self, *, limit: int = 50, offset: int = 0, order: Order = "recent") -> list[Entry]:
        """Live entries, most recently accessed first (or ``created``, ``largest``)."""
        if order not in _ORDER_SQL:
            raise InvalidRequest(f"order must be one of {', '.join(_ORDER_SQL)}, not {order!r}")
        if limit < 0 or offset < 0:
            raise InvalidRequest("limit and offset must be >= 0")
        self._expire()
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM entries ORDER BY {_ORDER_SQL[order]}, handle "
                "LIMIT ? OFFSET ?",
                (limit, offset),
            ).fetchall()
        entries = [to_entry(row) for row in rows]
        dangling = [e for e in entries if not self._blobs.present(e.sha256, e.bytes)]
        for entry in dangling:
            self._remove(entry, "missing")
        return [e for e in entries if e not in dangling]

    def scan(
        self,
        text: str,
        *,
        handle: str | None = None,
        max_hits: int = 20,
        max_bytes: int = 256 * 1024 * 1024,
        window: int = 120,
    ) -> ScanResult:
        """Lines of live payloads that contain ``text`` (case-insensitive, literal), read byte
        by byte: text inside words, punctuation, past the indexed head (``search`` matches
        words in the index instead).

        Scans the most recently accessed entries first, or only ``handle``; stops after
        ``max_hits`` hits or ``max_bytes`` bytes read, and says whether it covered everything.
        """
        if not isinstance(text, str) or not text.strip() or len(text) > 1000:
            raise InvalidRequest("the text to scan for must be non-empty, at most 1000 characters")
        if max_hits < 1 or max_bytes < 1 or not 20 <= window <= 2000:
            raise InvalidRequest("max_hits and max_bytes must be >= 1, window 20 to 2000")
        entries = iter([self.stat(handle)]) if handle is not None else self._searchable()
        return scan(self, text, entries, max_hits=max_hits, max_bytes=max_bytes, window=window)

    def search(self, query: str, *, limit: int = 10, match: SearchMatch = "all") -> SearchResult:
        """Live entries whose text matches ``query`` by words, best first (BM25), each with
        where: the match's byte offset and line, and the line around it.

        The first ``INDEXED_BYTES`` (1 MiB) of every text, JSON and YAML payload are searched;
        ``match`` says how the query is read (``_search`` has the syntax). ``scan`` finds a
        literal text byte by byte instead. Payloads of an older store are indexed a batch per
        search (``pending`` says how many wait) or all at once by ``gc``.
        """
        _search.check(query, limit, match)
        self._expire()
        self._index_queued(whole=False)
        while True:
            with self._db.read() as conn:
                found, total = _search.search(conn, query, match, limit, self._now())
                pending = _fulltext.pending(conn)
            dangling = [e for e, _ in found if not self._blobs.present(e.sha256, e.bytes)]
            for entry in dangling:  # each round buries one at least, so this ends
                self._remove(entry, "missing")
            if not dangling:
                hits = [hit for _, hit in found]
                return SearchResult(
                    query=query, match=match, hits=hits, total=total, pending=pending
                )

    def usage(self) -> Usage:
        with self._db.read() as conn:
            (entries,) = conn.execute("SELECT count(*) FROM entries").fetchone()
            blobs, size = conn.execute("SELECT blobs, bytes FROM totals").fetchone()
        return Usage(
            entries=entries, blobs=blobs, bytes=size, max_bytes=self.max_bytes, ttl_ms=self.ttl_ms
        )

    # -- upkeep ------------------------------------------------------------------------------

    def gc(self, *, verify: bool = False, temp_grace_s: float = 3600.0) -> GcReport:
        """Expire, evict to budget, drop dangling rows and orphan files, and with ``verify``
        re-hash every blob, moving corrupt ones aside. Temporary files of writes are removed
        once older than ``temp_grace_s`` (a write may still be in progress before that).
        Payloads still waiting for the full-text index are indexed, all of them."""
        with self._db.write() as conn:
            report = _upkeep.collect(
                conn, self._blobs, self.max_bytes, self._now(), verify, temp_grace_s
            )
        return report.model_copy(update={"indexed": self._index_queued(whole=True)})

    def check(self, *, verify: bool = False) -> CheckReport:
        """How consistent index and blobs are, changing nothing; with ``verify`` every blob is
        re-hashed and the full-text index checked against the passages it indexes."""
        with self._db.read() as conn:
            report = _upkeep.check(conn, self._blobs, verify)
        if not verify:
            return report
        with self._db.write() as conn:  # FTS5 runs its check as a command, which needs a write
            return report.model_copy(update={"search_index_ok": _fulltext.consistent(conn)})

    # -- internals ---------------------------------------------------------------------------

    def _find(self, conn: sqlite3.Connection, ref: str) -> Entry:
        if not (isinstance(ref, str) and (is_handle(ref) or is_name(ref))):
            check_handle(ref)
        query = f"SELECT {COLUMNS} FROM entries WHERE {{}} = ?"
        row = conn.execute(query.format("handle"), (ref,)).fetchone()
        if row is None:
            row = conn.execute(query.format("key"), (ref,)).fetchone()
        if row is None:
            raise self._not_found(conn, ref)
        entry = to_entry(row)
        if not entry.sha256.startswith(hash_prefix(entry.handle)):
            raise StoreUnavailable(
                f"the index row of {entry.handle} names another hash; the index was edited "
                "outside Fabric. Run `fabric store clear` to start afresh."
            )
        return entry

    def _not_found(self, conn: sqlite3.Connection, ref: str) -> NotFound:
        return not_found(conn, ref, ttl_ms=self.ttl_ms, max_bytes=self.max_bytes)

    def _remove(self, entry: Entry, reason: str) -> NotFound:
        """Bury an entry found expired or dangling; return the error that explains it."""
        with self._db.write() as conn:
            exists = conn.execute("SELECT 1 FROM entries WHERE handle = ?", (entry.handle,))
            if exists.fetchone() is not None:
                bury(conn, [entry.handle], reason, self._now())
                _upkeep.drop_blobs(conn, self._blobs, {entry.sha256})
            return self._not_found(conn, entry.handle)

    def _guard(self, entry: Entry, read: Callable[[], _T]) -> _T:
        """Run a blob read; a vanished or corrupt blob removes the entry and says so."""
        try:
            return read()
        except FileNotFoundError:
            raise self._remove(entry, "missing") from None
        except IntegrityError:
            self._quarantine(entry.sha256)
            raise

    def _quarantine(self, sha: str) -> None:
        with self._db.write() as conn:
            rows = conn.execute("SELECT handle FROM entries WHERE sha256 = ?", (sha,))
            handles = [h for (h,) in rows]
            bury(conn, handles, "corrupt", self._now())
            conn.execute("DELETE FROM blobs WHERE sha256 = ?", (sha,))
            self._blobs.quarantine(sha)

    def _index_queued(self, *, whole: bool) -> int:
        """Index payloads queued by the migration: one batch of BACKFILL_BYTES, or all of them
        (a transaction per batch, so writers get their turn); return how many."""
        done = 0
        while True:
            with self._db.read() as conn:
                if not _fulltext.queued(conn):
                    return done
            with self._db.write() as conn:
                done += _fulltext.backfill(conn, self._blobs, _fulltext.BACKFILL_BYTES)
            if not whole:
                return done

    def _touch(self, handle: str) -> None:
        with self._db.write() as conn:
            conn.execute("UPDATE entries SET accessed = ? WHERE handle = ?", (self._now(), handle))

    def _expire(self) -> None:
        now = self._now()
        with self._db.read() as conn:
            (first,) = conn.execute("SELECT min(expires) FROM entries").fetchone()
        if first is not None and first <= now:
            with self._db.write() as conn:
                _upkeep.expire(conn, self._blobs, now, limit=None)

    def _searchable(self) -> Iterator[Entry]:
        """Live text entries, most recently used first, fetched a page at a time so that a
        scan that stops early never loads the whole index."""
        self._expire()
        last: tuple[int, str] = (2**62, "")
        while True:
            with self._db.read() as conn:
                rows = conn.execute(
                    f"SELECT {COLUMNS} FROM entries WHERE content_type != 'bytes' AND "
                    "(accessed, handle) < (?, ?) ORDER BY accessed DESC, handle DESC LIMIT 200",
                    last,
                ).fetchall()
            if not rows:
                return
            for row in rows:
                yield to_entry(row)
            last = (rows[-1][9], rows[-1][0])


def _free_handle(conn: sqlite3.Connection, slug: str, sha: str) -> str:
    """The handle for (slug, sha): 8 hex digits, more only if another payload has those."""
    digits = HEX_DIGITS
    while True:
        handle = make_handle(slug, sha, digits)
        row = conn.execute("SELECT sha256 FROM entries WHERE handle = ?", (handle,)).fetchone()
        if row is None or row[0] == sha or digits >= 64:
            return handle
        digits += 4
