"""Opening a path a snippet names, beneath the workspace root and without races.

Every path is opened relative to a descriptor of the workspace root with ``openat2(2)`` and
``RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS``: the kernel refuses ``..`` above the root,
absolute paths, ``/proc`` magic links and symlinks leading out in the same step that opens
the object, so nothing can be swapped in between a check and the open. Symlinks that stay
inside the workspace are followed. On kernels without openat2 (before Linux 5.6), or without
``/proc/self/fd``, the path is walked one component at a time from the root descriptor with
``O_NOFOLLOW`` and every symlink is refused.

What was opened is then named by where it really is (the kernel's path of the descriptor, or
the components walked), and anything inside a ``.fabric`` folder is refused: Fabric's own
store is read by handle, never by path. From then on callers work on the descriptor only.

Refusals are ``ProviderCallError`` with a ``code``::

    bad_path            NUL byte, name too long, symlink loop
    outside_workspace   "..", an absolute path or a symlink leading out of the workspace
    fabric_private      inside .fabric/, however it was named
    symlink_refused     a symlink met on a kernel without openat2
    not_found           nothing there, or a file used as a folder
    permission_denied   the host process may not open it
    busy                the folders kept being renamed while the path was opened
    unreadable          any other failure of the operating system
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import posixpath
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from runtime import ProviderCallError

PRIVATE_DIR = ".fabric"
REFUSALS = frozenset({"outside_workspace", "fabric_private", "symlink_refused"})
"""The codes saying a path exists but snippets may not reach it through that name."""

_SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437, "arm64": 437}.get(platform.machine())
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
_EAGAIN_RETRIES = 16
_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK
_WALK_FLAGS = os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_DIRECTORY


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


@dataclass(frozen=True)
class OpenedPath:
    """A workspace file or folder opened beneath the root; close it (or use ``with``)."""

    fd: int
    """The open descriptor: readable for a file, listable with ``os.scandir(fd)`` for a
    folder; for anything else (a device, a FIFO) possibly good for ``os.fstat`` only."""
    name: str
    """Where it really is, relative to the workspace root, ``/``-separated, ``.`` for the root."""

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> OpenedPath:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def open_beneath(root: Path, path: str) -> OpenedPath:
    """Open ``path`` (as the snippet typed it) beneath ``root``, or raise a refusal."""
    relative = _relative_text(root, path)
    root_fd = _open_root(root)
    try:
        fd, name = _open(root, root_fd, relative, path)
    except ProviderCallError as exc:
        if exc.code == "not_found" and _missing_in_private(root, root_fd, relative):
            raise _private(path) from None
        raise
    finally:
        os.close(root_fd)
    opened = OpenedPath(fd, name)
    if is_private(name):
        opened.close()
        raise _private(path)
    return opened


def is_private(name: str) -> bool:
    """Whether a root-relative name lies in a ``.fabric`` folder (Fabric's store)."""
    return PRIVATE_DIR in name.split("/")


@dataclass(frozen=True)
class WalkedEntry:
    """One entry met by ``walk_beneath``."""

    name: str
    """Relative to the workspace root."""
    entry: os.DirEntry[str]
    """Its directory entry; ``entry.stat(follow_symlinks=False)`` is an ``lstat``."""
    dir_fd: int
    """The folder holding it, for opening it with ``open_entry``."""


def list_beneath(dir_fd: int, prefix: str, skipped: frozenset[str]) -> list[WalkedEntry]:
    """The entries of the folder ``dir_fd`` sorted by name, without ``.fabric`` or the
    folders named in ``skipped``; ``prefix`` is the folder's root-relative name plus ``/``."""
    with os.scandir(dir_fd) as listing:
        kept = [e for e in listing if not _skip(e, skipped)]
    return [WalkedEntry(prefix + e.name, e, dir_fd) for e in sorted(kept, key=lambda e: e.name)]


def walk_beneath(
    dir_fd: int, prefix: str, skipped: frozenset[str], depth: int | None = None
) -> Iterator[WalkedEntry]:
    """Every entry under the folder ``dir_fd``, depth first, never following a symlink.

    Each folder gives its sub-folders then its other entries, each group sorted by name,
    before its sub-folders are walked. The folder descriptor of an item is valid only until
    the walk moves on. ``depth`` (when given) is how many levels are listed, 1 for the
    folder's own entries.
    """
    entries = list_beneath(dir_fd, prefix, skipped)
    folders = [w for w in entries if w.entry.is_dir(follow_symlinks=False)]
    yield from folders
    yield from (w for w in entries if not w.entry.is_dir(follow_symlinks=False))
    if depth is not None and depth <= 1:
        return
    below = None if depth is None else depth - 1
    for walked in folders:
        name = walked.entry.name
        try:
            child = os.open(name, _READ_FLAGS | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
        except OSError:
            continue  # removed, or replaced by a symlink, since it was listed
        try:
            yield from walk_beneath(child, f"{walked.name}/", skipped, below)
        finally:
            os.close(child)


def open_entry(walked: WalkedEntry) -> int | None:
    """A readable descriptor of a regular file met by the walk; None for anything else."""
    if not walked.entry.is_file(follow_symlinks=False):
        return None  # a symlink, folder, device or FIFO: never opened
    try:
        fd = os.open(walked.entry.name, _READ_FLAGS | os.O_NOFOLLOW, dir_fd=walked.dir_fd)
    except OSError:
        return None  # a symlink (swapped in or not), gone, or not readable
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def read_bytes(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes of the file ``fd``, from its start."""
    with open(fd, "rb", closefd=False) as file:
        return file.read(limit)


def _skip(entry: os.DirEntry[str], skipped: frozenset[str]) -> bool:
    if entry.name == PRIVATE_DIR:
        return True
    return entry.name in skipped and entry.is_dir(follow_symlinks=False)


def _relative_text(root: Path, path: str) -> str:
    """The typed path as a root-relative text; an absolute path must name the root."""
    if "\x00" in path:
        raise ProviderCallError("path contains a NUL byte", code="bad_path")
    if not os.path.isabs(path):
        return path or "."
    prefix = str(root).rstrip("/") + "/"
    if path == str(root) or path.startswith(prefix):
        return path[len(prefix) :].lstrip("/") or "."
    raise _outside(root, path)


@functools.cache
def _openat2_works() -> bool:
    """Whether this kernel has openat2 and this host has ``/proc/self/fd`` to name fds."""
    if _SYS_OPENAT2 is None:
        return False
    root_fd = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = _openat2(root_fd, ".", os.O_PATH | os.O_CLOEXEC)
        try:
            return os.path.isabs(_kernel_path(fd))
        finally:
            os.close(fd)
    except OSError:
        return False
    finally:
        os.close(root_fd)


@functools.cache
def _syscall() -> ctypes._NamedFuncPointer:
    function = ctypes.CDLL(None, use_errno=True).syscall
    function.restype = ctypes.c_long
    return function


def _openat2(dir_fd: int, path: str, flags: int) -> int:
    """The raw syscall: ``path`` opened beneath ``dir_fd``; OSError with the errno if not."""
    how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    fd = int(
        _syscall()(
            ctypes.c_long(_SYS_OPENAT2 or -1),
            ctypes.c_int(dir_fd),
            ctypes.c_char_p(os.fsencode(path)),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return fd


def _kernel_path(fd: int) -> str:
    """Where the kernel says the object open as ``fd`` is now."""
    return os.readlink(f"/proc/self/fd/{fd}")


def _open_root(root: Path) -> int:
    try:
        return os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise ProviderCallError(
            f"the workspace {root} cannot be opened: {exc.strerror}; check that it still exists",
            code="unreadable",
        ) from None


def _open(root: Path, root_fd: int, relative: str, typed: str) -> tuple[int, str]:
    """``relative`` opened beneath ``root_fd``, and its real root-relative name."""
    if _openat2_works():
        return _open_resolved(root, root_fd, relative, typed)
    return _open_walked(root, root_fd, relative, typed)


def _missing_in_private(root: Path, root_fd: int, relative: str) -> bool:
    """Whether the deepest folder that exists on the way to a missing path is in
    ``.fabric``: what is or is not in the store must not show either."""
    parent = posixpath.dirname(relative.rstrip("/"))
    while parent not in ("", "/"):
        try:
            fd, name = _open(root, root_fd, parent, parent)
        except ProviderCallError as exc:
            if exc.code != "not_found":
                return False
            parent = posixpath.dirname(parent)
            continue
        os.close(fd)
        return is_private(name)
    return False


def _open_resolved(root: Path, root_fd: int, relative: str, typed: str) -> tuple[int, str]:
    """Open with openat2 beneath the root; name the result by its kernel path."""
    for _ in range(_EAGAIN_RETRIES):
        try:
            fd = _openat2(root_fd, relative, os.O_PATH | os.O_CLOEXEC)
            break
        except OSError as exc:
            if exc.errno != errno.EAGAIN:
                raise _os_error(root, exc, typed) from None
    else:
        raise ProviderCallError(
            f"{typed!r} could not be opened: its folders kept being renamed; try again",
            code="busy",
        )
    try:
        name = _name_below(_kernel_path(root_fd), _kernel_path(fd))
    except OSError as exc:
        os.close(fd)
        raise _os_error(root, exc, typed) from None
    if name is None:  # a folder on the way was moved out of the workspace meanwhile
        os.close(fd)
        raise _outside(root, typed)
    try:
        return _reopen(fd), name
    except OSError as exc:
        raise _os_error(root, exc, typed) from None


def _reopen(path_fd: int) -> int:
    """A readable descriptor of the file or folder held by the ``O_PATH`` descriptor
    ``path_fd`` (the same inode, through its ``/proc`` link), which is consumed.

    Anything else (a device, FIFO or socket) is never opened for reading, which could block
    or act on a device: its ``O_PATH`` descriptor is kept, good for ``fstat`` only.
    """
    mode = os.fstat(path_fd).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return path_fd
    try:
        return os.open(f"/proc/self/fd/{path_fd}", _READ_FLAGS)
    finally:
        os.close(path_fd)


def _name_below(root_real: str, real: str) -> str | None:
    if real == root_real:
        return "."
    prefix = root_real.rstrip("/") + "/"
    return real[len(prefix) :] if real.startswith(prefix) else None


def _open_walked(root: Path, root_fd: int, relative: str, typed: str) -> tuple[int, str]:
    """Walk from the root one component at a time, following no symlink (no openat2)."""
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    names: list[str] = []
    fds = [root_fd]
    try:
        for index, part in enumerate(parts):
            if part == "..":
                if not names:
                    raise _outside(root, typed)
                os.close(fds.pop())
                names.pop()
                continue
            final = index == len(parts) - 1
            fds.append(_open_component(root, fds[-1], part, final, typed))
            names.append(part)
        if parts and parts[-1] != "..":
            return fds.pop(), "/".join(names)
        return _open_component(root, fds[-1], ".", True, typed), "/".join(names) or "."
    finally:
        for fd in fds[1:]:
            os.close(fd)


def _open_component(root: Path, dir_fd: int, part: str, final: bool, typed: str) -> int:
    """One component below ``dir_fd``: a folder to go through, or the object to read."""
    try:
        return os.open(part, (_READ_FLAGS | os.O_NOFOLLOW) if final else _WALK_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_symlink(dir_fd, part):
            raise ProviderCallError(
                f"{typed!r} goes through the symlink {part!r}; without openat2 (Linux 5.6+) "
                "Fabric follows no symlink in the workspace; use the path of its target",
                code="symlink_refused",
            ) from None
        raise _os_error(root, exc, typed) from None


def _is_symlink(dir_fd: int, part: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(part, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _os_error(root: Path, exc: OSError, typed: str) -> ProviderCallError:
    """The refusal for an ``open`` that failed with ``exc``."""
    if exc.errno == errno.EXDEV:
        return _outside(root, typed)
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return ProviderCallError(
            f"{typed!r} does not exist in the workspace; tools.ls() shows what does",
            code="not_found",
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ProviderCallError(
            f"{typed!r} is not readable: the host process lacks permission; check its mode",
            code="permission_denied",
        )
    if exc.errno in (errno.ELOOP, errno.ENAMETOOLONG):
        return ProviderCallError(
            f"{typed!r} cannot be opened: {exc.strerror.lower() if exc.strerror else exc}; "
            "use a plain path to the file",
            code="bad_path",
        )
    return ProviderCallError(f"{typed!r} cannot be opened: {exc.strerror}", code="unreadable")


def _outside(root: Path, typed: str) -> ProviderCallError:
    return ProviderCallError(
        f"path {typed!r} is outside the workspace {root} (through '..', an absolute path or "
        "a symlink pointing out); use a path inside it",
        code="outside_workspace",
    )


def _private(typed: str) -> ProviderCallError:
    return ProviderCallError(
        f"{typed!r} is inside {PRIVATE_DIR}/, Fabric's own store, which is not readable by "
        "path; read stored results by handle with ctx.read(handle)",
        code="fabric_private",
    )
