"""``asyncio`` for snippets, rebuilt from small wrappers so no task, future or event loop ever
reaches a snippet: ``gather``, ``sleep``, ``wait_for``, ``timeout`` and ``as_completed``, the
locks, events and queues, and tasks (``create_task``, ``TaskGroup``) behind a handle that shows
only a task's state.

Every coroutine or awaitable a snippet hands over runs inside a coroutine of ours
(:func:`_child`): asyncio never meets a snippet's object, so nothing of the snippet's runs in an
event loop callback, where whatever it raised would stop the loop (and the worker). The
wrappers' classes are final to snippets (:func:`runtime.worker._guards.final_class`): a
snippet's subclass could not reach the real primitive, but nothing is gained by letting it try.
"""

from __future__ import annotations

import asyncio
import contextlib
import operator
import types
from collections.abc import Awaitable, Callable, Generator, Iterable, Iterator
from typing import Any

from runtime.worker._guards import final_class
from runtime.worker._vetted import public, public_class


def _awaitables(aws: Iterable[Any], what: str) -> list[Any]:
    """``aws``, each inside a coroutine of ours (:func:`_child`). asyncio then never meets an
    object of the snippet's, so it never asks one whether it is a future (a property may
    answer differently each time), for its loop, or to take asyncio's callbacks."""
    given = list(aws)
    for i, aw in enumerate(given):
        if type(aw) is not types.CoroutineType and not hasattr(type(aw), "__await__"):
            raise TypeError(f"{what} takes coroutines and awaitables, not {type(aw).__name__}")
        given[i] = _child(aw)
    return given


class _Stopped(Exception):
    """A ``SystemExit`` or ``KeyboardInterrupt`` raised in a task, carried as an exception
    asyncio passes on: raised as it is, asyncio would stop the event loop (and the worker)."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__()
        self.raised = raised


async def _child(aw: Awaitable[Any]) -> Any:
    try:
        return await aw
    except (SystemExit, KeyboardInterrupt) as exc:
        raise _Stopped(exc) from None


def _stopped(results: list[Any]) -> list[Any]:
    """``results`` of a gather, raising what a child raised that stops a program."""
    for item in results:
        if type(item) is _Stopped:
            raise item.raised
    return results


async def _gather(*aws: Awaitable[Any], return_exceptions: bool = False) -> list[Any]:
    given = _awaitables(aws, "asyncio.gather()")
    keep = bool(return_exceptions)  # asked here, not in asyncio's callback inside the loop
    return _stopped(list(await _await(asyncio.gather(*given, return_exceptions=keep))))


def _seconds(value: Any) -> Any:
    """A delay or timeout as the loop's timers will hold it: an exact number. A snippet's own
    number type would be added, compared and multiplied inside the event loop, where whatever
    it raises stops the worker; here ``float()`` asks it once, in the snippet's own call."""
    if value is None or type(value) in (int, float):
        return value
    if isinstance(value, str | bytes | bytearray):  # float() would parse them
        raise TypeError(f"unsupported operand type(s) for +: 'float' and '{type(value).__name__}'")
    return float(value)


async def _sleep(delay: float, result: Any = None) -> Any:
    return await asyncio.sleep(_seconds(delay), result)


async def _wait_for(fut: Awaitable[Any], timeout: float | None) -> Any:
    (given,) = _awaitables((fut,), "asyncio.wait_for()")
    return await _await(asyncio.wait_for(given, _seconds(timeout)))


class Timeout:
    """``async with asyncio.timeout(s) as scope:`` without exposing the loop-bound Timeout
    object: ``scope.when()``, ``scope.reschedule(when)`` and ``scope.expired()`` are its."""

    __slots__ = ("_abandoned", "_delay", "_inner")

    def __init__(self, delay: float | None) -> None:
        self._delay = _seconds(delay)
        self._inner: Any = None
        self._abandoned = False

    async def __aenter__(self) -> Timeout:
        if self._inner is not None:  # CPython's Timeout says so too
            raise RuntimeError("Timeout has already been entered")
        self._inner = asyncio.timeout(self._delay)
        await self._inner.__aenter__()
        _ENTERED.add(self)
        return self

    def abandon(self) -> None:
        """Never fire, whatever a task left running asks later (see :func:`settle`)."""
        self._abandoned = True
        if not self._inner.expired():
            self._inner.reschedule(None)

    def _entered(self) -> Any:
        if self._inner is None:
            raise RuntimeError("Timeout has not been entered")
        return self._inner

    def when(self) -> float | None:
        """The loop time the scope ends at, or None."""
        found: float | None = self._entered().when()
        return found

    def reschedule(self, when: float | None) -> None:
        """End the scope at loop time ``when`` (``scope.when() + 5``), or never (None)."""
        if when is not None and type(when) not in (int, float):
            raise TypeError("reschedule() takes a loop time (a number, as when() gives) or None")
        if self._abandoned:
            raise RuntimeError("the snippet that entered this timeout has returned")
        # a float here: the loop subtracts its clock from the time it holds, and an int too
        # large for a float would raise OverflowError inside the loop (stopping the worker)
        self._entered().reschedule(None if when is None else float(when))

    def expired(self) -> bool:
        """Whether the scope ran out."""
        return bool(self._entered().expired())

    async def __aexit__(self, *exc: Any) -> bool | None:
        left = self._entered()  # from any task: the loop closes an abandoned generator in its own
        try:
            result: bool | None = await left.__aexit__(*exc)
        finally:
            _ENTERED.discard(self)
        return result

    def __repr__(self) -> str:
        return "<Timeout [created]>" if self._inner is None else repr(self._inner)


def _timeout(delay: float | None) -> Timeout:
    return Timeout(delay)


def _as_completed(fs: Iterable[Awaitable[Any]], *, timeout: float | None = None) -> Iterator[Any]:
    given = _awaitables(fs, "asyncio.as_completed()")
    for future in asyncio.as_completed(given, timeout=_seconds(timeout)):
        yield _await(future)


async def _await(aw: Awaitable[Any]) -> Any:
    """``await aw``, raising what a child raised that stops a program as it was raised."""
    try:
        return await aw
    except _Stopped as stopped:
        raised = stopped.raised
    raise raised  # outside the handler: it carries no trace of the carrier


_ENTERED: set[Any] = set()
"""The timeouts and task groups the snippet entered and has not left (held: the loop still
holds a timeout's timer when nothing of the snippet holds the timeout): each is bound to the
task that entered it, which is the runtime's own once the snippet has returned. Each stays here
until it has been left (from any task), so one still being left when the snippet returns is
disarmed like one never left."""


def settle() -> None:
    """When the snippet's main has finished: a timeout it left entered never fires (it would
    cancel the runtime's work that sends the result), and the tasks of a task group it left
    entered are cancelled (one that failed would cancel it too)."""
    scopes = list(_ENTERED)
    _ENTERED.clear()
    for scope in scopes:
        with contextlib.suppress(Exception):  # the snippet's own result matters more
            scope.abandon()


def _count(value: Any) -> Any:
    """A semaphore's value or a queue's ``maxsize`` as asyncio will hold it: an exact number
    (a snippet's ``__index__`` is asked here, once, never inside the event loop)."""
    if type(value) in (int, float, bool):
        return value
    if isinstance(value, float):
        return float.__float__(value)
    return operator.index(value)


class _LoopBoundMixin:
    """What the wrappers share, as asyncio's primitives share their mixin: the real one,
    held where no snippet reads it."""

    __slots__ = ("_inner",)
    _inner: Any

    def __repr__(self) -> str:
        return repr(self._inner)


class _Acquirable(_LoopBoundMixin):
    __slots__ = ()

    async def acquire(self) -> bool:
        """Wait until it is free, then take it."""
        return bool(await self._inner.acquire())

    def release(self) -> None:
        """Give it back, waking a waiter."""
        self._inner.release()

    def locked(self) -> bool:
        """Whether ``acquire()`` would wait."""
        return bool(self._inner.locked())

    async def __aenter__(self) -> None:
        await self._inner.acquire()

    async def __aexit__(self, *exc: Any) -> None:
        self._inner.release()


class Semaphore(_Acquirable):
    """``asyncio.Semaphore``: ``async with sem:`` lets ``value`` holders in at once."""

    __slots__ = ()
    _made: Callable[[Any], Any] = asyncio.Semaphore

    def __init__(self, value: int = 1) -> None:
        self._inner = type(self)._made(_count(value))


class BoundedSemaphore(Semaphore):
    """``asyncio.BoundedSemaphore``: a ``release()`` past the initial value raises ValueError."""

    __slots__ = ()
    _made = asyncio.BoundedSemaphore


class Lock(_Acquirable):
    """``asyncio.Lock``: ``async with lock:`` lets one holder in at a time."""

    __slots__ = ()

    def __init__(self) -> None:
        self._inner = asyncio.Lock()


class Event(_LoopBoundMixin):
    """``asyncio.Event``: ``set()``, ``clear()``, ``is_set()`` and ``await event.wait()``."""

    __slots__ = ()

    def __init__(self) -> None:
        self._inner = asyncio.Event()

    def set(self) -> None:
        """Set the flag, waking every waiter."""
        self._inner.set()

    def clear(self) -> None:
        """Clear the flag."""
        self._inner.clear()

    def is_set(self) -> bool:
        """Whether the flag is set."""
        return bool(self._inner.is_set())

    async def wait(self) -> bool:
        """Wait until the flag is set."""
        return bool(await self._inner.wait())


class Queue(_LoopBoundMixin):
    """``asyncio.Queue``: first in, first out; ``maxsize`` above zero bounds it."""

    __slots__ = ()
    _made: Callable[[Any], Any] = asyncio.Queue
    __class_getitem__: Any = classmethod(types.GenericAlias)

    def __init__(self, maxsize: int = 0) -> None:
        self._inner = type(self)._made(_count(maxsize))

    @property
    def maxsize(self) -> Any:
        """How many items the queue holds at most (0: no bound)."""
        return self._inner.maxsize

    def qsize(self) -> int:
        """How many items it holds."""
        return int(self._inner.qsize())

    def empty(self) -> bool:
        """Whether it holds nothing."""
        return bool(self._inner.empty())

    def full(self) -> bool:
        """Whether it holds ``maxsize`` items."""
        return bool(self._inner.full())

    async def put(self, item: Any) -> None:
        """Put ``item`` in, waiting for room."""
        await self._inner.put(item)

    def put_nowait(self, item: Any) -> None:
        """Put ``item`` in, or raise ``asyncio.QueueFull``."""
        self._inner.put_nowait(item)

    async def get(self) -> Any:
        """Take the next item out, waiting for one."""
        return await self._inner.get()

    def get_nowait(self) -> Any:
        """Take the next item out, or raise ``asyncio.QueueEmpty``."""
        return self._inner.get_nowait()

    def task_done(self) -> None:
        """Tell ``join()`` that an item taken out was dealt with."""
        self._inner.task_done()

    async def join(self) -> None:
        """Wait until every item put in was taken out and marked done."""
        await self._inner.join()


class PriorityQueue(Queue):
    """``asyncio.PriorityQueue``: the smallest item comes out first."""

    __slots__ = ()
    _made = asyncio.PriorityQueue


class LifoQueue(Queue):
    """``asyncio.LifoQueue``: the last item put in comes out first."""

    __slots__ = ()
    _made = asyncio.LifoQueue


def _raised(exc: BaseException | None) -> BaseException | None:
    """What a task raised, as the snippet raised it (never the carrier of a SystemExit)."""
    return exc.raised if type(exc) is _Stopped else exc


class Task:
    """What ``asyncio.create_task`` gives: await it, or ask its state; never the task itself
    (its stack holds frames, its loop the worker's)."""

    __slots__ = ("_inner",)
    _inner: asyncio.Task[Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("asyncio.Task is made by asyncio.create_task(coro) or TaskGroup")

    def __await__(self) -> Generator[Any, None, Any]:
        return _await(self._inner).__await__()

    def done(self) -> bool:
        """Whether it finished (returned, raised or was cancelled)."""
        return bool(self._inner.done())

    def cancelled(self) -> bool:
        """Whether it was cancelled."""
        return bool(self._inner.cancelled())

    def cancel(self, msg: Any = None) -> bool:
        """Ask it to stop (a CancelledError inside it); False if it is done."""
        return bool(self._inner.cancel(None if msg is None else str(msg)))

    def result(self) -> Any:
        """What it returned; raises what it raised, or InvalidStateError while it runs."""
        try:
            return self._inner.result()
        except _Stopped as stopped:
            raised = stopped.raised
        raise raised

    def exception(self) -> BaseException | None:
        """What it raised, or None."""
        return _raised(self._inner.exception())

    def get_name(self) -> str:
        """Its name (``Task-2``, or the one given)."""
        return str(self._inner.get_name())

    def set_name(self, value: Any) -> None:
        """Rename it."""
        self._inner.set_name(str(value))

    def __repr__(self) -> str:
        inner: Any = self._inner  # its private state: asyncio offers no way to say this
        state = "pending" if not inner.done() else "cancelled" if inner.cancelled() else "finished"
        return f"<Task {state} name={inner.get_name()!r}>"


def _task(inner: asyncio.Task[Any]) -> Task:
    made = object.__new__(Task)
    made._inner = inner
    return made


def _coroutine(coro: Any) -> Any:
    if type(coro) is not types.CoroutineType:
        raise TypeError(f"a coroutine was expected, got {coro!r}")
    return coro


def _name(name: Any) -> str | None:
    return None if name is None else str(name)


def _create_task(coro: Any, *, name: Any = None) -> Task:
    return _task(asyncio.get_running_loop().create_task(_child(_coroutine(coro)), name=_name(name)))


class TaskGroup:
    """``async with asyncio.TaskGroup() as tg: tg.create_task(coro)``: every task is awaited
    when the block ends; if one fails, the others are cancelled and an ExceptionGroup holds
    what they raised."""

    __slots__ = ("_entered", "_inner", "_tasks")

    def __init__(self) -> None:
        self._inner = asyncio.TaskGroup()
        self._tasks: list[asyncio.Task[Any]] = []
        self._entered = False

    async def __aenter__(self) -> TaskGroup:
        await self._inner.__aenter__()
        self._entered = True
        _ENTERED.add(self)
        return self

    def abandon(self) -> None:
        """Cancel what still runs, take no new task, and never cancel the task that entered
        the group, whatever a task does later (see :func:`settle`)."""
        inner: Any = self._inner  # its private state: asyncio offers no way to say this
        inner._parent_cancel_requested = True  # a failing task cancels no parent then
        inner._abort()  # its tasks cancelled, and create_task says it is shutting down
        for task in self._tasks:
            task.cancel()

    async def __aexit__(self, *exc: Any) -> None:
        if not self._entered:
            raise RuntimeError("TaskGroup has not been entered")
        try:
            await self._inner.__aexit__(*exc)
        except BaseExceptionGroup as group:
            stopped = group.subgroup(lambda e: type(e) is _Stopped)
            if stopped is None:
                raise
            first: BaseException = stopped.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raised = first.raised if isinstance(first, _Stopped) else first
        else:
            return
        finally:
            _ENTERED.discard(self)  # left only now: settle() disarms a group still being left
        raise raised  # outside the handler: a SystemExit in a task, as it was raised

    def create_task(self, coro: Any, *, name: Any = None) -> Task:
        """Start ``coro`` in the group."""
        made = self._inner.create_task(_child(_coroutine(coro)), name=_name(name))
        self._tasks.append(made)
        return _task(made)

    def __repr__(self) -> str:
        return repr(self._inner)


_CLASSES: tuple[tuple[type, str], ...] = (
    (_LoopBoundMixin, "asyncio.mixins"),
    (_Acquirable, "asyncio.locks"),
    (Timeout, "asyncio.timeouts"),
    (Semaphore, "asyncio.locks"),
    (BoundedSemaphore, "asyncio.locks"),
    (Lock, "asyncio.locks"),
    (Event, "asyncio.locks"),
    (Queue, "asyncio.queues"),
    (PriorityQueue, "asyncio.queues"),
    (LifoQueue, "asyncio.queues"),
    (Task, "asyncio"),
    (TaskGroup, "asyncio.taskgroups"),
)
"""Each wrapper with the module CPython defines the class it stands for in."""
HANDLES: tuple[type, ...] = tuple(cls for cls, _ in _CLASSES)
"""The wrappers whose instances a snippet holds (a facade lists most, not ``Timeout`` or
``Task``, which only its functions make)."""


def members() -> dict[str, Any]:
    """Every name the asyncio facade may list (``contract.MODULES`` says which it does)."""
    for cls, module in _CLASSES:
        final_class(public_class(cls, module))
    functions = {
        "gather": _gather,
        "sleep": _sleep,
        "wait_for": _wait_for,
        "timeout": _timeout,
        "as_completed": _as_completed,
        "create_task": _create_task,
    }
    return {
        **{name: public(func, name, "asyncio") for name, func in functions.items()},
        **{cls.__name__: cls for cls, _ in _CLASSES if cls.__name__[0] != "_"},
        "TimeoutError": TimeoutError,
        "CancelledError": asyncio.CancelledError,
        "InvalidStateError": asyncio.InvalidStateError,
        "QueueEmpty": asyncio.QueueEmpty,
        "QueueFull": asyncio.QueueFull,
    }
