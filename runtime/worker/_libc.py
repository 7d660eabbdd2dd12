"""The few libc entry points the kernel layer needs that the standard library lacks.

``prctl``, ``capset``, ``unshare`` and raw ``syscall`` (for seccomp and Landlock) through
ctypes. System call numbers come from libseccomp, which knows every architecture; where it is
missing, the Landlock calls fall back to their numbers on the common architectures (the same
on x86-64 and arm64), and seccomp is simply unavailable.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
PR_CAPBSET_DROP = 24

CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

_LANDLOCK_NUMBERS = {
    "landlock_create_ruleset": 444,
    "landlock_add_rule": 445,
    "landlock_restrict_self": 446,
}
_FALLBACK_NUMBERS = {
    "x86_64": {**_LANDLOCK_NUMBERS, "capget": 125, "capset": 126},
    "aarch64": {**_LANDLOCK_NUMBERS, "capget": 90, "capset": 91},
}

_libc: Any = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int
_libc.unshare.restype = ctypes.c_int

try:
    import pyseccomp as _seccomp
except (ImportError, RuntimeError, OSError) as exc:  # no libseccomp on this system
    seccomp_module: Any = None
    SECCOMP_MISSING = f"{type(exc).__name__}: {exc}"
else:
    seccomp_module = _seccomp
    SECCOMP_MISSING = ""


def number(name: str) -> int | None:
    """The system call number of ``name`` on this machine, or None when unknown."""
    if seccomp_module is not None:
        try:
            value = int(seccomp_module.resolve_syscall(seccomp_module.system_arch(), name))
        except (OSError, ValueError, RuntimeError):
            value = -1
        if value >= 0:
            return value
    return _FALLBACK_NUMBERS.get(os.uname().machine, {}).get(name)


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def syscall(name: str, *args: Any) -> int:
    """Call system call ``name``; raises OSError with errno on failure."""
    nr = number(name)
    if nr is None:
        raise OSError(38, f"{name}: not known on this architecture")
    return _check(int(_libc.syscall(nr, *args)), name)


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    return _check(_libc.prctl(option, arg2, arg3, arg4, arg5), f"prctl({option})")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


_CAP_VERSION_3 = 0x20080522
_LAST_CAP = 63


def drop_capabilities() -> None:
    """Empty the bounding, effective, permitted and inheritable capability sets of this process.

    A process that created a user namespace holds every capability inside it; a worker needs
    none of them.
    """
    for cap in range(_LAST_CAP + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError:
            break  # EINVAL past the last capability this kernel knows
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    syscall("capset", ctypes.byref(header), ctypes.byref(data))


def capabilities() -> int:
    """The effective capability set of this process, as a bit mask."""
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    syscall("capget", ctypes.byref(header), ctypes.byref(data))
    return int(data[0].effective) | (int(data[1].effective) << 32)
