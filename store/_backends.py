"""Where a ContextBank keeps pages and enrollment: the backend interfaces and their local
implementations.

A backend moves bytes; the bank encodes, decodes and checks access. A remote backend (a
database, an object store) implements the same two interfaces and needs no change to the bank:

- :class:`ContextPersistenceBackend`: page payloads, read with a version token that changes on
  every write, written atomically or appended to at an offset, read from an offset on while
  only appends happened, and an exclusive per-page lock that holds across every process
  sharing the backend (plus a bank-wide lock for operations that span pages).
- :class:`ContextResourceMetadataBackend`: enrollment sidecars, created exclusively.

:class:`LocalDiskBackend` implements both under ``<workspace>/.fabric/bank/``::

    <key>.bank.json     a context page          <key>.bank.access   its enrollment
    <key>.todo.json     a todo page             <key>.todo.access   its enrollment
    <key>.<kind>.lock   the page's lock file    __banked_context.bank.access   the bank's
    .bank.lock          the bank-wide lock

A payload is written to a temporary file in the folder that takes the page's place atomically
(readers see the old or the new page, never a part), or appended to in place (the bank's delta
lines, see ``store._journal``); files are 0600 in a 0700 folder, never opened through a
symlink. Locks are
``flock`` locks on the lock file; a lock file is re-checked after locking, so one unlinked
meanwhile is never trusted. :class:`MemoryMetadataBackend` keeps enrollment in memory, for a
bank without a workspace.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import secrets
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import cast

from store._access import BANK_KEY, ResourceKind
from store._blobs import ensure_dir, ensure_private_dir, fsync_dir, unavailable
from store._errors import AlreadyExists
from store._names import check_name

KEY_LIMIT = 128
"""The longest page key."""
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_TMP_PREFIX = ".tmp-"
_STALE_S = 600
_PATHS_KEPT = 4096
_SUFFIX = {
    ResourceKind.CONTEXT_WINDOW: "bank",
    ResourceKind.TODO_LIST: "todo",
    ResourceKind.BANKED_CONTEXT: "bank",
}
Version = Hashable


def check_key(key: object) -> str:
    """A page key: ASCII letters, digits, ``.``, ``_`` and ``-``, no separator, NUL or ``..``,
    at most 128 characters; the error names the rule broken."""
    return check_name(key, what="page key", limit=KEY_LIMIT)


class ContextPersistenceBackend(ABC):
    """Stores page payloads (bytes) by kind and key."""

    @abstractmethod
    def read(self, kind: ResourceKind, key: str) -> tuple[bytes, Version] | None:
        """The payload and its version, or None when there is no page."""

    @abstractmethod
    def version(self, kind: ResourceKind, key: str) -> Version | None:
        """The version of the stored payload (it changes on every write), None when absent."""

    @abstractmethod
    def write(self, kind: ResourceKind, key: str, data: bytes) -> Version:
        """Replace the payload atomically; returns its new version."""

    @abstractmethod
    def append(self, kind: ResourceKind, key: str, data: bytes, offset: int) -> Version:
        """Write ``data`` at ``offset`` of the existing payload, cutting off whatever lies
        beyond (a record an interrupted append left half written); returns the new version.
        Called under the page lock, with the page present."""

    @abstractmethod
    def read_tail(
        self, kind: ResourceKind, key: str, version: Version, offset: int
    ) -> tuple[bytes, Version] | None:
        """The bytes from ``offset`` on and the version, when the payload is the one
        ``version`` was read from, grown by appends only; else None (read it all again)."""

    @abstractmethod
    def delete(self, kind: ResourceKind, key: str) -> bool:
        """Remove the payload; False when there was none."""

    @abstractmethod
    def keys(self, kind: ResourceKind) -> list[str]:
        """The keys of the stored pages of ``kind``."""

    @abstractmethod
    def page_lock(self, kind: ResourceKind, key: str) -> contextlib.AbstractContextManager[None]:
        """Exclusive access to one page, across every process using this backend."""

    @abstractmethod
    def bank_lock(self) -> contextlib.AbstractContextManager[None]:
        """Exclusive access for an operation that spans pages."""


class ContextResourceMetadataBackend(ABC):
    """Stores enrollment sidecars (bytes) by kind and key."""

    @abstractmethod
    def read_metadata(self, kind: ResourceKind, key: str) -> bytes | None:
        """The sidecar's bytes, or None when the resource is not enrolled."""

    @abstractmethod
    def write_metadata(
        self, kind: ResourceKind, key: str, data: bytes, *, exclusive: bool = False
    ) -> None:
        """Write the sidecar atomically; with ``exclusive``, raise AlreadyExists when one is
        there already."""

    @abstractmethod
    def delete_metadata(self, kind: ResourceKind, key: str) -> bool:
        """Remove the sidecar; False when there was none."""


class MemoryMetadataBackend(ContextResourceMetadataBackend):
    """Enrollment held in this process only."""

    def __init__(self) -> None:
        self._records: dict[tuple[ResourceKind, str], bytes] = {}
        self._lock = threading.Lock()

    def read_metadata(self, kind: ResourceKind, key: str) -> bytes | None:
        return self._records.get((kind, key))

    def write_metadata(
        self, kind: ResourceKind, key: str, data: bytes, *, exclusive: bool = False
    ) -> None:
        with self._lock:
            if exclusive and (kind, key) in self._records:
                raise _exists(key)
            self._records[kind, key] = bytes(data)

    def delete_metadata(self, kind: ResourceKind, key: str) -> bool:
        with self._lock:
            return self._records.pop((kind, key), None) is not None


class LocalDiskBackend(ContextPersistenceBackend, ContextResourceMetadataBackend):
    """Pages and sidecars as files in one folder (see the module). ``fsync``: flush every write
    to the disk before it counts (durable across a power cut, at the disk's flush latency);
    without it a write is atomic and survives a crash of the process, like the store's index
    (SQLite WAL with synchronous=NORMAL)."""

    def __init__(self, root: str | Path, *, fsync: bool = False) -> None:
        self.root = Path(root)
        ensure_dir(self.root)
        self.fsync = fsync
        self._paths: dict[tuple[ResourceKind, str, str], str] = {}
        self._sweep()

    def _sweep(self) -> None:
        """Remove temporary files that an interrupted write left (older than ten minutes, so
        a write under way in another process is never touched)."""
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.root):
                if entry.name.startswith(_TMP_PREFIX):
                    with contextlib.suppress(OSError):
                        if time.time() - entry.stat(follow_symlinks=False).st_mtime > _STALE_S:
                            os.unlink(entry.path)

    @classmethod
    def for_workspace(cls, workspace: str | Path, *, fsync: bool = False) -> LocalDiskBackend:
        """The backend of ``<workspace>/.fabric/bank/``."""
        fabric_dir = Path(workspace) / ".fabric"
        ensure_private_dir(fabric_dir)
        return cls(fabric_dir / "bank", fsync=fsync)

    def _path(self, kind: ResourceKind, key: str, ending: str) -> str:
        """The file of ``key`` (checked, and remembered for the pages in use)."""
        found = self._paths.get((kind, key, ending))
        if found is None:
            if not (kind is ResourceKind.BANKED_CONTEXT and key == BANK_KEY):
                check_key(key)
            if len(self._paths) >= _PATHS_KEPT:
                self._paths.clear()
            found = self._paths[kind, key, ending] = os.path.join(
                self.root, f"{key}.{_SUFFIX[kind]}.{ending}"
            )
        return found

    def read(self, kind: ResourceKind, key: str) -> tuple[bytes, Version] | None:
        return self._read(self._path(kind, key, "json"))

    def version(self, kind: ResourceKind, key: str) -> Version | None:
        try:
            info = os.lstat(self._path(kind, key, "json"))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise unavailable(f"cannot read page {key!r}", exc) from None
        return _version(info)

    def write(self, kind: ResourceKind, key: str, data: bytes) -> Version:
        return self._write(self._path(kind, key, "json"), data, exclusive=False)

    def append(self, kind: ResourceKind, key: str, data: bytes, offset: int) -> Version:
        path = self._path(kind, key, "json")
        try:
            fd = os.open(path, os.O_WRONLY | _NOFOLLOW)
            try:
                if os.fstat(fd).st_size != offset:
                    os.ftruncate(fd, offset)
                view = memoryview(data)
                at = offset
                while view:
                    written = os.pwrite(fd, view, at)
                    view, at = view[written:], at + written
                if self.fsync:
                    os.fdatasync(fd)
                return _version(os.fstat(fd))
            finally:
                os.close(fd)
        except OSError as exc:
            raise unavailable(f"cannot write {os.path.basename(path)}", exc) from None

    def read_tail(
        self, kind: ResourceKind, key: str, version: Version, offset: int
    ) -> tuple[bytes, Version] | None:
        path = self._path(kind, key, "json")
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not isinstance(version, tuple) or info.st_ino != version[0]:
                return None
            if info.st_size < offset or info.st_size < version[1]:
                return None
            return os.pread(fd, info.st_size - offset, offset), _version(info)
        finally:
            os.close(fd)

    def delete(self, kind: ResourceKind, key: str) -> bool:
        return self._unlink(self._path(kind, key, "json"))

    def keys(self, kind: ResourceKind) -> list[str]:
        ending = f".{_SUFFIX[kind]}.json"
        try:
            names = os.listdir(self.root)
        except OSError as exc:
            raise unavailable(f"cannot list {self.root}", exc) from None
        found = []
        for name in names:
            if name.endswith(ending) and not name.startswith(_TMP_PREFIX):
                key = name[: -len(ending)]
                with contextlib.suppress(Exception):
                    found.append(check_key(key))
        return sorted(found)

    @contextlib.contextmanager
    def page_lock(self, kind: ResourceKind, key: str) -> Iterator[None]:
        with _flocked(self._path(kind, key, "lock")):
            yield

    @contextlib.contextmanager
    def bank_lock(self) -> Iterator[None]:
        with _flocked(self.root / ".bank.lock"):
            yield

    def read_metadata(self, kind: ResourceKind, key: str) -> bytes | None:
        got = self._read(self._path(kind, key, "access"))
        return None if got is None else got[0]

    def write_metadata(
        self, kind: ResourceKind, key: str, data: bytes, *, exclusive: bool = False
    ) -> None:
        self._write(self._path(kind, key, "access"), data, exclusive=exclusive, name=key)

    def delete_metadata(self, kind: ResourceKind, key: str) -> bool:
        return self._unlink(self._path(kind, key, "access"))

    def _read(self, path: str | Path) -> tuple[bytes, Version] | None:
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise unavailable(f"cannot read {os.path.basename(path)}", exc) from None
        try:
            info = os.fstat(fd)
            chunks = []
            while chunk := os.read(fd, max(info.st_size, 1 << 16)):
                chunks.append(chunk)
            return b"".join(chunks), _version(info)
        finally:
            os.close(fd)

    def _write(self, path: str | Path, data: bytes, *, exclusive: bool, name: str = "") -> Version:
        tmp = self.root / f"{_TMP_PREFIX}{secrets.token_hex(8)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if self.fsync:
                    os.fsync(fd)
                info = os.fstat(fd)
            finally:
                os.close(fd)
            if exclusive:
                try:
                    os.link(tmp, path)  # fails when the target exists: an atomic create
                except FileExistsError:
                    raise _exists(name) from None
                finally:
                    os.unlink(tmp)
            else:
                _replace(tmp, path)
            if self.fsync:
                fsync_dir(self.root)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise unavailable(f"cannot write {os.path.basename(path)}", exc) from None
        return _version(info)

    def _unlink(self, path: str | Path) -> bool:
        try:
            os.unlink(path)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise unavailable(f"cannot delete {os.path.basename(path)}", exc) from None
        if self.fsync:
            fsync_dir(self.root)
        return True


def _load_renameat2() -> Callable[..., int] | None:
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return cast("Callable[..., int]", function)


_RENAMEAT2 = _load_renameat2()
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _replace(tmp: str | Path, path: str | Path) -> None:
    """Put ``tmp`` in the place of ``path`` atomically. An existing page is swapped with
    ``renameat2(RENAME_EXCHANGE)`` and the old file unlinked: a plain rename over an existing
    file makes ext4 (auto_da_alloc) flush the new file's data first, which costs milliseconds
    per write; the swap keeps readers seeing the old or the new page, never none."""
    if _RENAMEAT2 is not None:
        done = _RENAMEAT2(
            _AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), _RENAME_EXCHANGE
        )
        if done == 0:
            os.unlink(tmp)
            return
        if ctypes.get_errno() not in (errno.ENOENT, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), os.fspath(path))
    os.rename(tmp, path)


def _version(info: os.stat_result) -> Version:
    return (info.st_ino, info.st_size, info.st_mtime_ns)


@contextlib.contextmanager
def _flocked(path: str | Path) -> Iterator[None]:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
        except OSError as exc:
            raise unavailable(f"cannot open the lock file {os.path.basename(path)}", exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.fstat(fd).st_ino == os.lstat(path).st_ino
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)  # unlinked or replaced while we waited: lock the file now in place
    try:
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _exists(key: str) -> AlreadyExists:
    return AlreadyExists(
        f"{key!r} is already enrolled; delete its enrollment first (a trusted-host operation) "
        "or create the page under another key",
        key=key,
    )
