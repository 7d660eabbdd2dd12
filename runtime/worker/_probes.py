"""The doctor's probes: what a worker can do to the host once the language layer is gone.

Each probe is fixed code of the runtime, run inside a real, fully confined worker in place of
a snippet: it calls the operating system directly (``os.open``, ``socket``, ``os.fork``...), as
code that had escaped RestrictedPython would. The host chooses the targets so that only the
kernel layer stands in the way: a file outside the workspace that the worker's uid may read, a
world-writable folder outside the workspace, a blob of the store, a TCP listener on
127.0.0.1, a world-writable Unix socket outside the workspace, the host's own PID. A probe is
``denied`` when the operation failed. Two probes, ``list_order`` and ``bytearray_reads``, aim
at the interpreter instead: whether the CPython bugs :mod:`runtime.worker._repairs` repairs
are repaired; ``sandbox_classes`` whether the classes :mod:`runtime.worker._sealed` seals
refuse the real ``setattr``.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
from collections.abc import Callable
from typing import Any

from runtime.worker._repairs import BYTEARRAY_READS, LIST_ORDER
from runtime.worker._sealed import SEALED, unsealed

PROBES = (
    "read_outside",
    "write_outside",
    "write_workspace",
    "read_store",
    "network_connect",
    "connect_unix",
    "fork",
    "signal_host",
    "environment",
    "list_order",
    "bytearray_reads",
    "sandbox_classes",
    "exec",
)
"""Every probe, in the order they run (``exec`` last: if it worked, the worker is gone)."""

LOCK_DOWN = "lock_down"
"""The probe a worker adds when it could not lock itself down (the others then mean little)."""


def _refused(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, str(exc.errno))
    return f"{name}: {exc.strerror or exc}"


def _read(path: str) -> str:
    fd = os.open(path, os.O_RDONLY)
    try:
        data = os.read(fd, 64)
    finally:
        os.close(fd)
    return f"read {len(data)} bytes of {path}"


def _write(folder: str) -> str:
    path = os.path.join(folder, f"fabric-doctor-probe-{os.getpid()}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, b"the sandbox let a worker write here\n")
    finally:
        os.close(fd)
    return f"created {path}"


def _connect(address: list[Any]) -> str:
    host, port = str(address[0]), int(address[1])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        sock.connect((host, port))
        sock.sendall(b"fabric doctor probe\n")
    return f"connected to {host}:{port}"


def _connect_unix(path: Any) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        sock.connect(str(path))
        sock.sendall(b"fabric doctor probe\n")
    return f"connected to the Unix socket {path}"


def _fork(_: object) -> str:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return f"forked process {pid}"


def _signal(pid: Any) -> str:
    os.kill(int(pid), 0)  # signal 0: only the permission check, nothing is delivered
    return f"may signal host process {pid}"


class _Held(Exception):
    """A probe found its target out of reach without the operating system refusing a call."""


def _environment(allowed: Any) -> str:
    leaked = sorted(set(os.environ) - set(allowed or ()))
    if leaked:
        return "the worker sees the host's " + ", ".join(leaked)
    raise _Held("nothing of the host's environment: " + (", ".join(sorted(os.environ)) or "empty"))


def _list_order(_: object) -> str:
    """gh-120298: does ``list < list`` hold the items it compares? Read from the reference count
    of the right-hand item once its list was emptied mid-comparison; the probe answers False,
    never ``NotImplemented``, so even an unrepaired interpreter never touches freed memory."""
    emptied: list[object] = [object()]
    counts: list[int] = []

    class Left:
        def __lt__(self, other: object) -> bool:
            emptied.clear()
            counts.append(sys.getrefcount(other))  # its parameter and getrefcount's own
            return False

    _ = [Left()] < emptied  # type: ignore[operator]
    if counts and counts[0] > 2:
        raise _Held(f"list ordering holds the items it compares ({LIST_ORDER} repaired)")
    return (
        f"list ordering compares items it does not hold ({LIST_ORDER}): a snippet that empties "
        "a list mid-comparison reaches freed memory"
    )


def _bytearray_reads(_: object) -> str:
    """Does ``bytearray.find`` read its buffer only after the snippet's ``__index__`` ran? The
    ``__index__`` empties the bytearray: a find that still finds read freed memory (a read of a
    block just freed, which this probe can afford)."""
    data = bytearray(b"x" * 4096)

    class Start:
        def __index__(self) -> int:
            data.clear()
            return 0

    found = data.find(b"x", Start())
    if found == -1:
        raise _Held(
            f"bytearray reads its buffer after converting its arguments ({BYTEARRAY_READS})"
        )
    return (
        f"bytearray.find read freed memory ({BYTEARRAY_READS} and kin): it found b'x' at {found} "
        "in a bytearray its argument had emptied"
    )


def _sandbox_classes(_: object) -> str:
    """Do the sandbox's own classes, and those the facades hand out, refuse a new attribute
    written with the real ``setattr`` (as copy's reduce once wrote one)?"""
    if not SEALED:
        return "no class of the sandbox's was sealed: the real setattr writes to any of them"
    opened = unsealed()
    if opened:
        return f"{len(opened)} of the sandbox's classes take new attributes: " + ", ".join(
            opened[:5]
        )
    raise _Held(f"the sandbox's {len(SEALED)} classes refuse new attributes, even natively")


_RUNNERS: dict[str, Callable[[Any], str]] = {
    "read_outside": _read,
    "write_outside": _write,
    "write_workspace": _write,
    "read_store": _read,
    "network_connect": _connect,
    "connect_unix": _connect_unix,
    "fork": _fork,
    "signal_host": _signal,
    "environment": _environment,
    "list_order": _list_order,
    "bytearray_reads": _bytearray_reads,
    "sandbox_classes": _sandbox_classes,
}


def run(name: str, target: Any) -> dict[str, Any]:
    """Try one probe against ``target``; never raises."""
    try:
        done = _RUNNERS[name](target)
    except OSError as exc:
        return {"name": name, "denied": True, "detail": _refused(exc)}
    except _Held as held:
        return {"name": name, "denied": True, "detail": str(held)}
    except Exception as exc:  # a probe that could not even be tried is not a denial
        return {"name": name, "denied": False, "detail": f"probe failed: {exc!r}"[:300]}
    return {"name": name, "denied": False, "detail": done}


def try_exec(executable: str) -> dict[str, Any]:
    """Try to replace this process with ``executable``; returns only when that was refused."""
    try:
        os.execv(executable, [executable, "-c", "pass"])
    except OSError as exc:
        return {"name": "exec", "denied": True, "detail": _refused(exc)}
    raise AssertionError("unreachable")  # pragma: no cover
