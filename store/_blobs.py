"""Blob files: content addressed, written atomically, verified on every read.

A blob lives at ``blobs/<first two hex digits>/<sha256>``. It is written to a temporary file in
that same folder, flushed to disk, renamed into place and the folder flushed, so a reader sees
either nothing or the whole payload. Besides the sha256 of the whole payload, the index keeps
a sha256 of every 64 KiB chunk and a CRC32 of every 4 MiB piece: reading a small range of a
large blob verifies only the chunks it touches against their sha256, and streaming a whole blob
(search, queries) checks each piece's CRC32 in a read-ahead thread, which catches bit flips
and truncation at a fraction of the cost (one CRC call per piece, so the thread rarely needs
the GIL while the reader works). A bit flip is never served.
"""

from __future__ import annotations

import errno
import hashlib
import os
import queue
import secrets
import stat
import threading
import time
import zlib
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from store._errors import IntegrityError, StoreUnavailable

CHUNK = 64 * 1024
DIGEST = 32
_TMP_PREFIX = ".tmp-"
_PARALLEL_HASH = 4 * 1024 * 1024
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
PIECE = 64 * CHUNK
_PARALLEL_UNLINK = 64
_UNLINK_THREADS = 8


class Digests(NamedTuple):
    sha256: str
    """Hex sha256 of the whole payload: its address."""
    chunks: bytes
    """sha256 digests of the 64 KiB chunks, concatenated."""
    crcs: bytes
    """CRC32 of the 4 MiB pieces, 4 bytes each, concatenated."""


def digests(data: bytes) -> Digests:
    """The address of ``data`` and the digests of its chunks."""
    view = memoryview(data)
    whole = hashlib.sha256()
    if len(data) >= _PARALLEL_HASH:  # hashlib releases the GIL: hash the whole in parallel
        thread = threading.Thread(target=whole.update, args=(view,))
        thread.start()
        chunks = _chunk_digests(view)
        thread.join()
    else:
        whole.update(view)
        chunks = _chunk_digests(view)
    return Digests(whole.hexdigest(), chunks, _piece_crcs(view))


def _chunk_digests(view: memoryview) -> bytes:
    pieces = [view[start : start + CHUNK] for start in range(0, len(view), CHUNK)] or [view]
    return b"".join(hashlib.sha256(piece).digest() for piece in pieces)


def _piece_crcs(view: memoryview) -> bytes:
    starts = range(0, len(view), PIECE) or range(1)
    return b"".join(zlib.crc32(view[start : start + PIECE]).to_bytes(4, "big") for start in starts)


def ensure_dir(path: Path) -> None:
    """Create ``path`` with mode 0700, refusing to follow a symlink at that place."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            raise StoreUnavailable(
                f"{path} is a symlink or not a folder; the store refuses to follow it. "
                "Remove it, or point the store at another workspace."
            ) from None
        if stat.S_IMODE(info.st_mode) != 0o700:
            os.chmod(path, 0o700)
    except OSError as exc:
        raise unavailable(f"cannot create the folder {path}", exc) from None


GITIGNORE = "# Fabric's private state (stored results, facts, logs): never commit it\n*\n"


def ensure_private_dir(path: Path) -> None:
    """Create the workspace's ``.fabric`` folder like :func:`ensure_dir`, with a ``.gitignore``
    that keeps all of it out of the user's commits (written once, never overwritten)."""
    ensure_dir(path)
    try:
        fd = os.open(
            path / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600
        )
    except FileExistsError:
        return
    except OSError as exc:
        raise unavailable(f"cannot write {path / '.gitignore'}", exc) from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(GITIGNORE)


def unavailable(what: str, exc: OSError) -> StoreUnavailable:
    """A StoreUnavailable that names the cause and what to do about it."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        fix = "the disk (or a quota) is full: free space or lower storeMaxBytes"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "permission denied: check the owner and mode of the workspace's .fabric folder"
    else:
        fix = exc.strerror or str(exc)
    return StoreUnavailable(f"{what}: {fix}. Nothing already stored was changed.")


class BlobFiles:
    """The ``blobs/`` folder of a store."""

    def __init__(self, root: Path) -> None:
        self.root = root / "blobs"
        self.quarantine_dir = root / "quarantine"
        ensure_dir(self.root)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def present(self, sha256: str, size: int) -> bool:
        """Whether a complete-looking blob is in place (its size is right)."""
        try:
            info = os.lstat(self.path(sha256))
        except FileNotFoundError:
            return False
        return stat.S_ISREG(info.st_mode) and info.st_size == size

    def write(self, sha256: str, data: bytes) -> None:
        """Store ``data`` under its hash atomically, unless an intact-looking copy is there."""
        if self.present(sha256, len(data)):
            return
        folder = self.root / sha256[:2]
        ensure_dir(folder)
        tmp = folder / f"{_TMP_PREFIX}{secrets.token_hex(8)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view[: 1 << 24]) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(tmp, self.path(sha256))
            fsync_dir(folder)
        except OSError as exc:
            _unlink_quietly(tmp)
            raise unavailable(f"cannot write a blob of {len(data)} bytes", exc) from None

    def read(self, sha256: str, size: int, ref: str) -> bytes:
        """The whole blob, after checking its sha256."""
        data = self._read_at(sha256, size, 0, size, ref)
        if hashlib.sha256(data).hexdigest() != sha256:
            raise _corrupt(ref, sha256, "its bytes do not match its sha256")
        return data

    def read_chunks(
        self, sha256: str, size: int, first: int, last: int, chunk_digests: bytes, ref: str
    ) -> bytes:
        """Chunks ``first`` to ``last`` (inclusive), each checked against its digest."""
        start = first * CHUNK
        data = self._read_at(sha256, size, start, min(size, (last + 1) * CHUNK) - start, ref)
        view = memoryview(data)
        for i in range(last - first + 1):
            piece = view[i * CHUNK : (i + 1) * CHUNK]
            if hashlib.sha256(piece).digest() != chunk_digests[i * DIGEST : (i + 1) * DIGEST]:
                raise _corrupt(ref, sha256, f"chunk {first + i} does not match its digest")
        return data

    def stream(
        self, sha256: str, size: int, crcs: bytes, chunks: bytes, ref: str
    ) -> Generator[bytes, None, None]:
        """The blob in pieces of 4 MiB, first to last, each checked against its CRC32.

        A thread reads and checks the next pieces while the caller works on the current one
        (reads and CRCs release the GIL); it stops as soon as the caller does.
        """
        fd = self._open(sha256, ref)
        try:
            actual = os.fstat(fd).st_size
            if actual != size:
                raise _corrupt(ref, sha256, f"it is {actual} bytes on disk, {size} were stored")
            offsets = range(0, max(size, 1), PIECE)
            check = _crc_check(crcs, sha256, ref)
            if len(crcs) != 4 * len(offsets):  # an older index: check each chunk's sha256
                check = _digest_check(chunks, sha256, ref)
            if len(offsets) == 1:
                yield check(os.pread(fd, size, 0), 0)
                return
            yield from _read_ahead(fd, offsets, check)
        finally:
            os.close(fd)

    def _open(self, sha256: str, ref: str) -> int:
        try:
            return os.open(self.path(sha256), os.O_RDONLY | _NOFOLLOW)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise unavailable(f"cannot open the blob of {ref}", exc) from None

    def _read_at(self, sha256: str, size: int, offset: int, length: int, ref: str) -> bytes:
        fd = self._open(sha256, ref)
        try:
            actual = os.fstat(fd).st_size
            if actual != size:
                raise _corrupt(ref, sha256, f"it is {actual} bytes on disk, {size} were stored")
            return os.pread(fd, length, offset) if length else b""
        finally:
            os.close(fd)

    def unlink(self, sha256: str) -> bool:
        return _unlink_quietly(self.path(sha256))

    def unlink_many(self, shas: list[str]) -> None:
        """Unlink many blobs; in threads when there are many, since each unlink waits on the
        file system's journal and the kernel serves unlinks in different folders in parallel."""
        if len(shas) < _PARALLEL_UNLINK:
            for sha in shas:
                self.unlink(sha)
            return
        ordered = sorted(shas)  # contiguous slices touch different shard folders
        step = -(-len(ordered) // _UNLINK_THREADS)
        slices = [ordered[i : i + step] for i in range(0, len(ordered), step)]
        with ThreadPoolExecutor(max_workers=_UNLINK_THREADS) as pool:
            list(pool.map(lambda part: [self.unlink(sha) for sha in part], slices))

    def quarantine(self, sha256: str) -> None:
        """Move a corrupt blob aside (for inspection) so that a new put can write it afresh."""
        ensure_dir(self.quarantine_dir)
        try:
            os.replace(self.path(sha256), self.quarantine_dir / sha256)
        except OSError:
            self.unlink(sha256)

    def scan(self) -> Iterator[tuple[str, Path, os.stat_result]]:
        """Every file under ``blobs/``: (name, path, lstat), blobs and temporary files alike."""
        try:
            shards = list(os.scandir(self.root))
        except OSError:
            return
        for shard in shards:
            if not shard.is_dir(follow_symlinks=False):
                continue
            try:
                entries = list(os.scandir(shard.path))
            except OSError:
                continue
            for entry in entries:
                try:
                    yield entry.name, Path(entry.path), entry.stat(follow_symlinks=False)
                except OSError:
                    continue

    @staticmethod
    def is_temporary(name: str) -> bool:
        return name.startswith(_TMP_PREFIX)

    @staticmethod
    def is_stale(info: os.stat_result, grace_s: float) -> bool:
        return time.time() - info.st_mtime >= grace_s


Check = Callable[[bytes, int], bytes]


def _crc_check(crcs: bytes, sha256: str, ref: str) -> Check:
    def check(piece: bytes, offset: int) -> bytes:
        index = offset // PIECE
        if zlib.crc32(piece).to_bytes(4, "big") != crcs[index * 4 : index * 4 + 4]:
            raise _corrupt(ref, sha256, f"piece {index} (from byte {offset}) fails its CRC32")
        return piece

    return check


def _digest_check(chunks: bytes, sha256: str, ref: str) -> Check:
    def check(piece: bytes, offset: int) -> bytes:
        view = memoryview(piece)
        first = offset // CHUNK
        for i in range(0, max(len(piece), 1), CHUNK):
            n = first + i // CHUNK
            if (
                hashlib.sha256(view[i : i + CHUNK]).digest()
                != chunks[n * DIGEST : (n + 1) * DIGEST]
            ):
                raise _corrupt(ref, sha256, f"chunk {n} does not match its digest")
        return piece

    return check


_END = object()


def _read_ahead(fd: int, offsets: range, check: Check) -> Iterator[bytes]:
    ready: queue.Queue[object] = queue.Queue(maxsize=4)
    stop = threading.Event()

    def hand_over(item: object) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for offset in offsets:
                piece = check(os.pread(fd, PIECE, offset), offset)
                if not hand_over(piece):
                    return
            hand_over(_END)
        except (OSError, IntegrityError) as exc:
            hand_over(exc)

    thread = threading.Thread(target=produce, name="fabric-store-read-ahead", daemon=True)
    thread.start()
    try:
        while (item := ready.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, bytes)
            yield item
    finally:
        stop.set()
        thread.join()


def _corrupt(ref: str, sha256: str, why: str) -> IntegrityError:
    return IntegrityError(
        f"the stored data of {ref} is corrupt on disk ({why}); it was not served and has been "
        "moved aside. Run the producing call again to store a fresh copy.",
        ref=ref,
        sha256=sha256,
    )


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(path: Path) -> bool:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True
