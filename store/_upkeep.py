"""Keeping the store within its budgets and consistent: expiry, eviction, gc, check.

Every function here runs inside the caller's write (or read) transaction. Blob files are
unlinked inside that transaction, and ``put`` re-checks its blob under the same lock, so a blob
still referenced by a live entry is never deleted, whatever runs at the same time.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from store._blobs import BlobFiles
from store._models import CheckReport, GcReport
from store._schema import bury, trim_gone, unreferenced

_PAGE = 500


def drop_blobs(conn: sqlite3.Connection, blobs: BlobFiles, shas: set[str]) -> int:
    """Delete those of ``shas`` no entry references any more; return the bytes freed."""
    dropped = unreferenced(conn, shas)
    for start in range(0, len(dropped), _PAGE):
        batch = [sha for sha, _ in dropped[start : start + _PAGE]]
        conn.execute(f"DELETE FROM blobs WHERE sha256 IN ({','.join('?' * len(batch))})", batch)
    blobs.unlink_many([sha for sha, _ in dropped])
    return sum(size for _, size in dropped)


def expire(conn: sqlite3.Connection, blobs: BlobFiles, now: int, limit: int | None) -> int:
    """Remove entries past their expiry (at most ``limit`` of them); return how many."""
    rows = conn.execute(
        "SELECT handle, sha256 FROM entries WHERE expires <= ? ORDER BY expires LIMIT ?",
        (now, -1 if limit is None else limit),
    ).fetchall()
    if rows:
        bury(conn, [h for h, _ in rows], "expired", now)
        drop_blobs(conn, blobs, {sha for _, sha in rows})
    return len(rows)


def evict(
    conn: sqlite3.Connection, blobs: BlobFiles, max_bytes: int, now: int, keep: str | None
) -> tuple[int, int]:
    """Remove least recently used entries until the blobs fit ``max_bytes``; never ``keep``.

    Entries that share a blob free its bytes only together, so the walk counts references
    before choosing. Returns (entries evicted, bytes freed).
    """
    (total,) = conn.execute("SELECT bytes FROM totals").fetchone()
    if total <= max_bytes:
        return 0, 0
    chosen: list[str] = []
    freeing: set[str] = set()
    freed = 0
    refs: dict[str, int] = {}
    last = (-1, "")
    while total - freed > max_bytes:
        page = conn.execute(
            "SELECT handle, sha256, bytes, accessed FROM entries WHERE (accessed, handle) > (?, ?)"
            " AND handle != ? ORDER BY accessed, handle LIMIT ?",
            (*last, keep or "", _PAGE),
        ).fetchall()
        if not page:
            break
        _count_refs(conn, {sha for _, sha, _, _ in page} - refs.keys(), refs)
        for handle, sha, size, accessed in page:
            last = (accessed, handle)
            chosen.append(handle)
            refs[sha] -= 1
            if refs[sha] == 0:
                freeing.add(sha)
                freed += size
                if total - freed <= max_bytes:
                    break
    bury(conn, chosen, "evicted", now)
    drop_blobs(conn, blobs, freeing)
    return len(chosen), freed


def _count_refs(conn: sqlite3.Connection, shas: set[str], into: dict[str, int]) -> None:
    ordered = sorted(shas)
    for start in range(0, len(ordered), _PAGE):
        batch = ordered[start : start + _PAGE]
        marks = ",".join("?" * len(batch))
        into.update(
            conn.execute(
                f"SELECT sha256, count(*) FROM entries WHERE sha256 IN ({marks}) GROUP BY sha256",
                batch,
            ).fetchall()
        )


def collect(
    conn: sqlite3.Connection,
    blobs: BlobFiles,
    max_bytes: int,
    now: int,
    verify: bool,
    temp_grace_s: float,
) -> GcReport:
    """A full garbage collection; see ``Store.gc``."""
    expired = expire(conn, blobs, now, limit=None)
    known: dict[str, int] = dict(conn.execute("SELECT sha256, bytes FROM blobs").fetchall())
    present: set[str] = set()
    bad: set[str] = set()
    orphans = temps = freed = 0
    for name, path, info in blobs.scan():
        if blobs.is_temporary(name):
            if blobs.is_stale(info, temp_grace_s):
                path.unlink(missing_ok=True)
                temps += 1
        elif name not in known:
            path.unlink(missing_ok=True)
            orphans += 1
            freed += info.st_size
        elif info.st_size != known[name] or (verify and not _intact(path, name)):
            bad.add(name)
        else:
            present.add(name)
    dangling = 0
    for sha in sorted(known.keys() - present):
        reason = "corrupt" if sha in bad else "missing"
        handles = [
            h for (h,) in conn.execute("SELECT handle FROM entries WHERE sha256 = ?", (sha,))
        ]
        bury(conn, handles, reason, now)
        conn.execute("DELETE FROM blobs WHERE sha256 = ?", (sha,))
        if reason == "corrupt":
            blobs.quarantine(sha)
        else:
            dangling += len(handles)
    freed += drop_blobs(conn, blobs, present)
    evicted, evicted_bytes = evict(conn, blobs, max_bytes, now, keep=_newest(conn))
    trim_gone(conn)
    return GcReport(
        expired=expired,
        evicted=evicted,
        dangling=dangling,
        corrupt=len(bad),
        orphan_blobs=orphans,
        temp_files=temps,
        bytes_freed=freed + evicted_bytes,
    )


def check(conn: sqlite3.Connection, blobs: BlobFiles, verify: bool) -> CheckReport:
    """Compare index and files without changing either; see ``Store.check``."""
    known: dict[str, int] = dict(conn.execute("SELECT sha256, bytes FROM blobs").fetchall())
    (entries,) = conn.execute("SELECT count(*) FROM entries").fetchone()
    present: set[str] = set()
    orphans: list[str] = []
    corrupt: list[str] = []
    temps = 0
    for name, path, info in blobs.scan():
        if blobs.is_temporary(name):
            temps += 1
        elif name not in known:
            orphans.append(name)
        else:
            present.add(name)
            if info.st_size != known[name] or (verify and not _intact(path, name)):
                corrupt.append(name)
    missing = sorted(known.keys() - present)
    rows = [
        h
        for sha in missing
        for (h,) in conn.execute("SELECT handle FROM entries WHERE sha256 = ?", (sha,))
    ]
    return CheckReport(
        entries=entries,
        blobs=len(known),
        rows_without_blob=sorted(rows),
        orphan_blobs=sorted(orphans),
        unreferenced=sorted(sha for sha, _ in unreferenced(conn, set(known))),
        temp_files=temps,
        corrupt=sorted(corrupt),
    )


def _newest(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT handle FROM entries ORDER BY created DESC LIMIT 1").fetchone()
    return None if row is None else str(row[0])


def _intact(path: Path, sha: str) -> bool:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
    except OSError:
        return False
    return digest.hexdigest() == sha
