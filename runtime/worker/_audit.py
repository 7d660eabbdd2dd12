"""A CPython audit hook: the language layer's net for whatever gets past the value checks.

Installed in a worker just before its snippet runs, it refuses with ``PolicyError`` every
audited operation a snippet has no business doing: opening files, importing, compiling or
executing code, creating code or functions from parts, walking the heap, touching ``os``,
``subprocess``, ``socket``, ``ctypes`` and the like. The worker's own few uses (executing the
compiled snippet, decoding host replies with marshal) run inside :func:`trusted`. Reads of
frames and code (``object.__getattr__`` events) are left to the guards, which refuse them by
name and by value: asyncio itself reads ``cr_code`` while it runs tasks. Audit hooks cannot
be removed once added; this is not the kernel layer, only an earlier, clearer refusal in front
of it.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from runtime.worker._errors import PolicyError

Hook = Callable[[str, tuple[Any, ...]], None]

_REFUSED = frozenset(
    {
        "open",
        "import",
        "exec",
        "compile",
        "code.__new__",
        "function.__new__",
        "object.__delattr__",
        "marshal.load",
        "marshal.loads",
        "marshal.dumps",
        "sys._getframe",
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.settrace",
        "sys.setprofile",
        "sys.addaudithook",
        "sys.setrecursionlimit",
        "builtins.input",
        "builtins.breakpoint",
        "cpython.run_command",
        "cpython.run_file",
        "cpython.run_module",
        "cpython.run_startup",
        "cpython.run_interactivehook",
        "cpython.PyInterpreterState_New",
        "cpython._PySys_ClearAuditHooks",
    }
)
_REFUSED_PREFIXES = (
    "os.",
    "subprocess.",
    "socket.",
    "ctypes.",
    "shutil.",
    "pty.",
    "mmap.",
    "sqlite3.",
    "urllib.",
    "http.",
    "ftplib.",
    "smtplib.",
    "poplib.",
    "imaplib.",
    "nntplib.",
    "telnetlib.",
    "webbrowser.",
    "glob.",
    "tempfile.",
    "fcntl.",
    "resource.",
    "syslog.",
    "gc.",
    "signal.",
    "pathlib.",
    "shelve.",
    "dbm.",
    "_posixsubprocess.",
)


def _trust_and_hook() -> tuple[Callable[[], AbstractContextManager[None]], Hook]:
    """The hook and the one way to make it trust. The trust count lives in their closure, not
    in a module attribute, so no write to this module (``_audit._trust = 1``) turns it off."""
    depth = 0

    class Trusted:
        """One window of trust: a class of this module's own, not ``contextlib``'s, whose
        ``__exit__`` nothing outside the closure can reach or replace."""

        __slots__ = ("_collecting",)

        def __enter__(self) -> None:
            nonlocal depth
            self._collecting = gc.isenabled()
            gc.disable()  # a collection here would run a snippet's finalizers while trusted
            depth += 1

        def __exit__(self, *exc: object) -> None:
            nonlocal depth
            depth -= 1
            if self._collecting and not depth:
                gc.enable()

    def trusted() -> AbstractContextManager[None]:
        """The worker's own audited operations (never snippet code) run inside this."""
        return Trusted()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if depth:
            return
        if event in _REFUSED or event.startswith(_REFUSED_PREFIXES):
            raise PolicyError(
                f"the sandbox refuses {event!r}: snippets reach files, processes, the network "
                "and other modules only through providers (tools.*, mcp.*, ctx.*)"
            )

    return trusted, hook


trusted, _hook = _trust_and_hook()


_installed = False


def install() -> None:
    """Add the hook to this process (once; it stays until the worker exits)."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
