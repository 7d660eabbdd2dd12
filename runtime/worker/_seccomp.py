"""The worker's seccomp filter: an allowlist of system calls, everything else fails with EPERM.

By the time the filter is loaded the worker has imported every module, opened every file and
built its event loop, so what it still needs is small: memory, reading and writing the one
socket it holds, waiting, clocks, randomness, signals to itself from the kernel, and exit. The
rules are data (``ALLOWED`` and ``CONDITIONAL``); libseccomp compiles them once in the zygote,
for this machine's architecture, and each worker loads the resulting program with one system
call. Failing with ``EPERM`` rather than killing the process means a refused call surfaces as a
clean ``PermissionError`` inside the sandbox.

What is refused, by omission: opening files (``open``, ``openat``, ``openat2``, ``creat``),
running programs (``execve``, ``execveat``), sockets (``socket``, ``connect``, ``bind``,
``listen``, ``accept``), new processes and threads (``fork``, ``vfork``, ``clone``,
``clone3``), signals (``kill``, ``tkill``, ``tgkill``, ``pidfd_*``), ``ptrace``,
``process_vm_*``, mounts and namespaces (``mount``, ``unshare``, ``setns``, ``chroot``,
``pivot_root``), ``bpf``, ``perf_event_open``, ``keyctl``, ``io_uring_*``, ``userfaultfd``,
``memfd_create``, every call that changes a file (``link``, ``symlink``, ``rename``,
``unlink``, ``truncate``, ``chmod``, ``chown`` and their ``*at`` forms), ``stat`` by path,
``dup*``, ``prctl``, and anything added to the kernel later.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from runtime.worker import _libc

ALLOWED: tuple[str, ...] = (
    # the protocol socket, /dev/null and descriptors opened before the filter
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "close",
    "lseek",
    "recvfrom",
    "recvmsg",
    "sendto",
    "sendmsg",
    "shutdown",
    "getsockname",
    "getpeername",
    "getsockopt",
    # memory
    "brk",
    "munmap",
    "mremap",
    "madvise",
    # waiting
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "epoll_ctl",
    "futex",
    "sched_yield",
    "nanosleep",
    "clock_nanosleep",
    # clocks, identity, randomness
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "getpid",
    "gettid",
    "getppid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getpgrp",
    "getrusage",
    "getrandom",
    "uname",
    # signals the kernel delivers (the alarm, CPU limit), and exit
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "sigaltstack",
    "alarm",
    "setitimer",
    "getitimer",
    "restart_syscall",
    "getrlimit",
    "setrlimit",
    "exit",
    "exit_group",
)

MAP_SHARED = 0x01
PROT_EXEC = 0x04
F_GETFD, F_SETFD, F_GETFL, F_SETFL = 1, 2, 3, 4
FIONBIO, FIOCLEX, FIONCLEX = 0x5421, 0x5451, 0x5450


@dataclass(frozen=True)
class Condition:
    """``args[index] & mask == value`` (mask 0 compares the whole argument for equality)."""

    index: int
    value: int
    mask: int = 0


CONDITIONAL: dict[str, tuple[tuple[Condition, ...], ...]] = {
    # private, non-executable mappings only: no shared writable memory, no new code
    "mmap": ((Condition(3, 0, MAP_SHARED), Condition(2, 0, PROT_EXEC)),),
    "mprotect": ((Condition(2, 0, PROT_EXEC),),),
    # its own limits only, and only lower (raising needs a capability the worker lacks)
    "prlimit64": ((Condition(0, 0),),),
    "fcntl": tuple((Condition(1, cmd),) for cmd in (F_GETFD, F_SETFD, F_GETFL, F_SETFL)),
    "ioctl": tuple((Condition(1, req),) for req in (FIONBIO, FIOCLEX, FIONCLEX)),
}


class SeccompUnavailable(Exception):
    """libseccomp is missing or cannot build a filter for this machine."""


def build(allowed: Iterable[str] = ALLOWED) -> bytes:
    """Compile the allowlist into a BPF program for this architecture (done once, in the zygote).

    Names this architecture does not have (``time`` on arm64, say) are skipped."""
    seccomp = _libc.seccomp_module
    if seccomp is None:
        raise SeccompUnavailable(f"libseccomp cannot be loaded ({_libc.SECCOMP_MISSING})")
    try:
        rules = seccomp.SyscallFilter(seccomp.ERRNO(errno.EPERM))
        for name in allowed:
            _add(rules, seccomp, name, ())
        for name, alternatives in CONDITIONAL.items():
            for conditions in alternatives:
                _add(rules, seccomp, name, conditions)
        read_end, write_end = os.pipe()
        with os.fdopen(write_end, "wb") as sink:
            rules.export_bpf(sink)
        with os.fdopen(read_end, "rb") as source:
            program = source.read()
    except OSError as exc:
        raise SeccompUnavailable(f"libseccomp could not build the filter: {exc}") from None
    if not program or len(program) % 8:
        raise SeccompUnavailable("libseccomp produced an empty or malformed filter")
    return program


def _add(rules: Any, seccomp: Any, name: str, conditions: tuple[Condition, ...]) -> None:
    args = [
        seccomp.Arg(c.index, seccomp.MASKED_EQ, c.mask, c.value)
        if c.mask
        else seccomp.Arg(c.index, seccomp.EQ, c.value)
        for c in conditions
    ]
    with contextlib.suppress(OSError, ValueError, RuntimeError):  # not a call on this arch
        rules.add_rule(seccomp.ALLOW, name, *args)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Filter:
    """A compiled filter, ready to load with one system call in a freshly forked worker."""

    SET_MODE_FILTER = 1

    def __init__(self, program: bytes) -> None:
        self.instructions = len(program) // 8
        self._buffer = ctypes.create_string_buffer(program, len(program))
        self._program = _Program(self.instructions, ctypes.addressof(self._buffer))

    def load(self) -> None:
        """Set ``no_new_privs`` and attach the filter to this process; raises OSError."""
        _libc.prctl(_libc.PR_SET_NO_NEW_PRIVS, 1)
        _libc.syscall("seccomp", self.SET_MODE_FILTER, 0, ctypes.byref(self._program))
