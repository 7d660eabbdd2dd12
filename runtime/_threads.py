"""Provider work in threads that stops when the execution it serves ends.

A provider that walks a tree or scans a file runs the work in a thread, so the event loop
stays free. Python cannot kill a thread, so stopping is cooperative: :func:`run_sync` runs the
function in a thread and, if the call's task is cancelled (the snippet timed out, failed or
returned without waiting for the call), tells the thread to stop; the function calls
:func:`stop_if_requested` in its loops and raises :class:`CallStopped` there.

    async def grep(pattern: str) -> list[str]:
        return await run_sync(_grep, pattern)

    def _grep(pattern: str) -> list[str]:
        for path in files():
            stop_if_requested()
            ...
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from runtime._errors import SandboxError

_T = TypeVar("_T")
_stop: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "fabric_stop", default=None
)


class CallStopped(SandboxError):
    """Raised inside a provider's thread once the execution it served has ended."""

    code = "stopped"


async def run_sync(func: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """``func(*args, **kwargs)`` in a thread, asked to stop when this call is cancelled."""
    stop = threading.Event()
    context = contextvars.copy_context()
    context.run(_stop.set, stop)
    call = functools.partial(context.run, func, *args, **kwargs)
    future = asyncio.get_running_loop().run_in_executor(_PROVIDER_WORK, call)
    try:
        return await future
    except asyncio.CancelledError:
        stop.set()
        raise


# Provider calls, however many a snippet starts, queue on threads of their own, so they can
# delay neither the host's decoding nor the loop's default executor (analysis, MCP reads).
_PROVIDER_WORK = ThreadPoolExecutor(
    max_workers=min(32, (os.cpu_count() or 1) + 4), thread_name_prefix="fabric-provider"
)
_HOST_WORK = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fabric-host")


async def run_host_work(func: Callable[..., _T], /, *args: Any) -> _T:
    """``func(*args)`` on threads of the host's own (decoding results, the boundary), which
    provider calls, however many, cannot take: they have their own threads."""
    return await asyncio.get_running_loop().run_in_executor(_HOST_WORK, func, *args)


def stop_requested() -> bool:
    """Whether the execution this thread works for has ended."""
    stop = _stop.get()
    return stop is not None and stop.is_set()


def stop_if_requested() -> None:
    """Raise :class:`CallStopped` if the execution this thread works for has ended."""
    if stop_requested():
        raise CallStopped("the execution this call served has ended")
