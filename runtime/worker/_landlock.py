"""Landlock: a ruleset that grants the worker no filesystem access at all.

The ruleset handles every access right the running kernel knows and adds no rule, so once a
worker restricts itself it can open no file or directory anywhere (descriptors it already
holds keep working). From ABI 4 it also handles TCP ``bind`` and ``connect``, and from ABI 6
it scopes signals and abstract Unix sockets to the worker itself: each worker calls
``landlock_restrict_self`` on its own and so gets a domain of its own, apart from its siblings,
the zygote and the host.
"""

from __future__ import annotations

import ctypes
import os

from runtime.worker import _libc

_CREATE_RULESET_VERSION = 1 << 0

# Filesystem rights by the ABI that introduced them: 13 in ABI 1, REFER in 2, TRUNCATE in 3,
# IOCTL_DEV in 5.
_FS_RIGHTS = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}
_NET_TCP = 0b11  # BIND_TCP | CONNECT_TCP, ABI 4
_SCOPES = 0b11  # ABSTRACT_UNIX_SOCKET | SIGNAL, ABI 6


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


def abi() -> int:
    """The Landlock ABI version of the running kernel; 0 when it has none (or it is disabled)."""
    try:
        return _libc.syscall("landlock_create_ruleset", None, 0, _CREATE_RULESET_VERSION)
    except OSError:
        return 0


def describe(version: int) -> str:
    if version <= 0:
        return "not available in this kernel"
    parts = ["no filesystem access"]
    if version >= 4:
        parts.append("no TCP bind or connect")
    if version >= 6:
        parts.append("signals and abstract sockets scoped to the worker")
    return f"ABI {version}: " + ", ".join(parts)


def create_ruleset(version: int) -> int:
    """A ruleset descriptor denying all that ``version`` can express (made once, in the zygote)."""
    rights = _FS_RIGHTS.get(version, 16)
    attr = _RulesetAttr((1 << rights) - 1, _NET_TCP if version >= 4 else 0, 0)
    size = 8
    if version >= 4:
        size = 16
    if version >= 6:
        attr.scoped = _SCOPES
        size = 24
    fd = _libc.syscall("landlock_create_ruleset", ctypes.byref(attr), size, 0)
    os.set_inheritable(fd, True)
    return fd


def restrict_self(ruleset: int) -> None:
    """Enforce ``ruleset`` on this process from now on; needs ``no_new_privs``. Raises OSError."""
    _libc.prctl(_libc.PR_SET_NO_NEW_PRIVS, 1)
    _libc.syscall("landlock_restrict_self", ruleset, 0)
