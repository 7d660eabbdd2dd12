"""Post hooks: work a host runs after each execution, detached from it.

A lorebook writer is the reason they exist: after a snippet ran, a hook reads what it did and
updates the agent's memory. The execution never waits for a hook and never fails because of
one. Each run of a hook is tried ``1 + retries`` times, each attempt bounded by ``timeout_s``,
with a short back-off between attempts; failures are logged, written to the event log and
counted (``ctx_status`` reports the counts). ``Fabric.close()`` waits for the hooks still
running, each at most until its attempt's deadline, and cancels what is left.

A hook is given a :class:`Completed`: the snippet's code and its result. It may be a plain
function: it then runs in a provider thread, where ``runtime.stop_if_requested()`` raises once
its attempt timed out (Python cannot kill a thread; a plain function that never looks keeps
its thread until it returns).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

from fabric._errors import ConfigError
from fabric._outcomes import FabricResult
from runtime import run_sync

_log = logging.getLogger("fabric")

MAX_RETRIES = 100
MAX_TIMEOUT_S = 24 * 3600.0
BACKOFF_S = 0.05
"""The first pause between attempts; each next one doubles, up to ``MAX_BACKOFF_S``."""
MAX_BACKOFF_S = 5.0
_CANCEL_GRACE_S = 1.0


@dataclass(frozen=True)
class Completed:
    """What a post hook is given: one finished execution."""

    code: str
    """The snippet as it was sent."""
    result: FabricResult
    """What it returned, as ``fab.exec`` returned it."""


PostHook = Callable[[Completed], "Awaitable[object] | object"]


@dataclass(frozen=True)
class _Hook:
    func: PostHook
    retries: int
    timeout_s: float

    @property
    def name(self) -> str:
        return getattr(self.func, "__qualname__", None) or repr(self.func)


@dataclass
class HookCounts:
    """How the session's post hooks went (``ctx_status`` reports these)."""

    runs: int = 0
    """Runs started: one per hook per execution."""
    succeeded: int = 0
    failed: int = 0
    """Runs whose every attempt failed or timed out."""
    retries: int = 0
    """Attempts after a first one that failed."""
    timeouts: int = 0
    """Attempts that overran their hook's ``timeout_s``."""
    cancelled: int = 0
    """Runs still going when the session closed and their deadline passed."""
    running: int = 0


class PostHooks:
    """The hooks of one session, and the runs of them in flight."""

    def __init__(self, record: Callable[..., None]) -> None:
        self._record = record
        self._hooks: list[_Hook] = []
        self._running: dict[asyncio.Task[None], float] = {}
        """Each run in flight, with the deadline of its current attempt (loop time)."""
        self.counts = HookCounts()
        self._closing = asyncio.Event()

    def add(self, func: PostHook, *, retries: int = 5, timeout_s: float = 180.0) -> None:
        if not callable(func):
            raise ConfigError(f"a post hook must be callable, not {type(func).__name__}")
        if type(retries) is not int or not 0 <= retries <= MAX_RETRIES:
            raise ConfigError(
                f"retries must be a whole number from 0 to {MAX_RETRIES}, not {retries!r}"
            )
        if (
            isinstance(timeout_s, bool)
            or not isinstance(timeout_s, int | float)
            or not 0 < timeout_s <= MAX_TIMEOUT_S
        ):
            raise ConfigError(
                f"timeout_s must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}, "
                f"not {timeout_s!r}"
            )
        self._hooks.append(_Hook(func, retries, float(timeout_s)))

    def after(self, code: str, result: FabricResult) -> None:
        """Start every hook on a finished execution; returns at once."""
        if not self._hooks:
            return
        completed = Completed(code, result)
        loop = asyncio.get_running_loop()
        for hook in self._hooks:
            self.counts.runs += 1
            self.counts.running += 1
            task = loop.create_task(self._run(hook, completed), name=f"post hook {hook.name}")
            self._running[task] = loop.time() + hook.timeout_s
            task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.pop(task, None)
        self.counts.running -= 1
        if task.cancelled():
            self.counts.cancelled += 1
            self._record("post_hook", ok=False, outcome="cancelled")

    async def _run(self, hook: _Hook, completed: Completed) -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        problem = ""
        started = time.perf_counter()
        attempts = 0
        for attempt in range(hook.retries + 1):
            if attempt:
                pause = min(BACKOFF_S * 2 ** (attempt - 1), MAX_BACKOFF_S)
                if task is not None:
                    self._running[task] = loop.time() + pause + _CANCEL_GRACE_S
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), pause)
                if self._closing.is_set():
                    problem += "; not tried again: the session closed"
                    break
                self.counts.retries += 1
            attempts += 1
            if task is not None:
                self._running[task] = loop.time() + hook.timeout_s
            try:
                async with asyncio.timeout(hook.timeout_s):
                    await _call(hook.func, completed)
            except TimeoutError:
                self.counts.timeouts += 1
                problem = f"timed out after {hook.timeout_s:g} s"
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                self.counts.succeeded += 1
                self._record(
                    "post_hook",
                    ok=True,
                    hook=hook.name,
                    attempts=attempt + 1,
                    ms=round((time.perf_counter() - started) * 1000, 1),
                )
                return
        self.counts.failed += 1
        _log.warning(
            "fabric: post hook %s failed after %d attempts: %s", hook.name, attempts, problem
        )
        self._record("post_hook", ok=False, hook=hook.name, attempts=attempts, error=problem[:500])

    async def close(self) -> None:
        """Wait for the runs in flight, each until its attempt's deadline; cancel the rest.
        A run between attempts is not tried again."""
        self._closing.set()
        loop = asyncio.get_running_loop()
        while self._running:
            task, deadline = min(self._running.items(), key=lambda item: item[1])
            try:
                await asyncio.wait_for(asyncio.shield(task), max(0.0, deadline - loop.time()))
            except TimeoutError:
                if self._running.get(task, deadline) <= loop.time():
                    task.cancel()
                    await asyncio.wait({task}, timeout=_CANCEL_GRACE_S)
                    self._running.pop(task, None)  # one that will not stop is left to itself
            except asyncio.CancelledError:
                if not task.done():  # we were cancelled ourselves, not the hook
                    raise

    def report(self) -> dict[str, Any]:
        return {"hooks": len(self._hooks), **asdict(self.counts)}


async def _call(func: PostHook, completed: Completed) -> None:
    if inspect.iscoroutinefunction(func):
        await func(completed)
        return
    value = await run_sync(func, completed)
    if inspect.isawaitable(value):  # a callable object whose __call__ is async
        await value
