"""Concurrency, proved with events that would deadlock if things ran one after another."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fabric import Fabric, Limits, ProviderRegistry


@pytest.fixture(scope="module")
async def rendezvous(workspace: Path) -> AsyncIterator[Fabric]:
    registry = ProviderRegistry()
    events: dict[str, asyncio.Event] = {}

    async def wait(name: str) -> str:
        """Wait until signal(name) is called."""
        await asyncio.wait_for(events.setdefault(name, asyncio.Event()).wait(), 5)
        return f"{name} seen"

    async def signal(name: str) -> str:
        """Release wait(name)."""
        events.setdefault(name, asyncio.Event()).set()
        return f"{name} sent"

    registry.register("extensions", "wait", wait, risk="read")
    registry.register("extensions", "signal", signal, risk="read")
    async with Fabric(workspace=workspace, registry=registry, limits=Limits(timeout_s=10)) as fab:
        yield fab


async def test_gathered_provider_calls_run_concurrently(rendezvous: Fabric) -> None:
    """wait() only returns once signal() ran: sequential calls would deadlock."""
    code = (
        "import asyncio\n"
        "return await asyncio.gather(extensions.wait(name='a'), extensions.signal(name='a'))"
    )
    result = await rendezvous.exec(code)
    assert result.ok, result.text
    assert result.value == ["a seen", "a sent"]


async def test_executions_run_concurrently(rendezvous: Fabric) -> None:
    """One execution waits for a signal that only a second, concurrent execution sends."""
    waiting = rendezvous.exec("return await extensions.wait(name='b')")
    sending = rendezvous.exec("return await extensions.signal(name='b')")
    first, second = await asyncio.gather(waiting, sending)
    assert first.value == "b seen" and second.value == "b sent"


async def test_fifty_concurrent_executions_complete(fab: Fabric) -> None:
    """50 executions at once from one host all return their own answer."""
    results = await asyncio.gather(
        *(
            fab.exec(f"t = await tools.read(path='notes.txt')\nreturn [{i}, len(t)]")
            for i in range(50)
        )
    )
    assert [r.value for r in results] == [[i, 17] for i in range(50)]


async def test_executions_beyond_max_running_wait_their_turn(workspace: Path) -> None:
    """With one slot, a second execution waits (counted in ``queued``) until the first one,
    held on an event, finishes; it then runs. Were the cap not kept, the second would enter
    the provider while the first still holds it."""
    registry = ProviderRegistry()
    inside, release = asyncio.Event(), asyncio.Event()
    entered: list[str] = []

    async def hold(name: str) -> str:
        """Wait inside the provider until released."""
        entered.append(name)
        inside.set()
        await release.wait()
        return name

    registry.register("extensions", "hold", hold, risk="read")
    async with Fabric(workspace=workspace, registry=registry, max_running=1) as fab:
        first = asyncio.ensure_future(fab.exec("return await extensions.hold(name='first')"))
        await inside.wait()
        second = asyncio.ensure_future(fab.exec("return await extensions.hold(name='second')"))
        while fab.queued == 0 and len(entered) < 2:  # one or the other happens
            await asyncio.sleep(0)
        assert entered == ["first"] and fab.queued == 1
        release.set()
        done = await asyncio.gather(first, second)
        assert [r.value for r in done] == ["first", "second"] and fab.queued == 0


async def test_a_task_left_running_never_writes_into_the_result(fab: Fabric) -> None:
    """A task the snippet started and never awaited keeps calling a provider while the result,
    sent in slices, goes out: its calls wait, so the host gets exactly the value returned (a
    call frame between two slices was once read as part of the result)."""
    code = (
        "import asyncio\nasync def busy():\n    while True:\n        try:\n"
        "            await tools.read(path='missing.txt')\n        except Exception:\n"
        "            pass\nrunning = asyncio.as_completed([busy()])\nnext(running)\n"
        "await asyncio.sleep(0.05)\n"
        "return {'a': {f'k{i}': 'y' * 1000 for i in range(3000)}}"
    )
    done = await fab.exec(code)
    assert done.ok, done.text
    assert "JSON object, 1 key: a" in done.text and "$.a = object, 3000 keys" in done.text
    last = await fab.ctx.read(done.handle, json_path="$.a.k2999")
    assert "y" * 1000 in last.text


_EVIL_NUMBER = (
    "import asyncio\nclass Evil:\n    def __sub__(self, o):\n        raise SystemExit(9)\n"
    "    __rsub__ = __add__ = __radd__ = __lt__ = __gt__ = __le__ = __ge__ = __mul__ = __sub__\n"
    "class T(float):\n    def __radd__(self, o):\n        return Evil()\n    __add__ = __radd__\n"
    "async def quick():\n    await asyncio.sleep(0)\n    return 2\n"
)
STOPPING: dict[str, tuple[str, object]] = {
    "SystemExit in a gathered coroutine": (
        "import asyncio\nasync def f():\n    raise SystemExit(1)\nawait asyncio.gather(f())",
        ("SystemExit", 3),
    ),
    "KeyboardInterrupt gathered with return_exceptions": (
        "import asyncio\nasync def f():\n    await asyncio.sleep(0)\n    raise KeyboardInterrupt()\n"
        "async def g():\n    await asyncio.sleep(1)\n"
        "await asyncio.gather(g(), f(), return_exceptions=True)",
        ("KeyboardInterrupt", 4),
    ),
    "SystemExit under wait_for": (
        "import asyncio\nasync def f():\n    raise SystemExit(1)\nawait asyncio.wait_for(f(), 5)",
        ("SystemExit", 3),
    ),
    "SystemExit from as_completed": (
        "import asyncio\nasync def f():\n    raise SystemExit(1)\n"
        "for c in asyncio.as_completed([f()]):\n    await c",
        ("SystemExit", 3),
    ),
    "a return_exceptions whose truth raises": (
        "import asyncio\nclass B:\n    def __bool__(self):\n        raise SystemExit(2)\n"
        "async def f():\n    raise ValueError(1)\nawait asyncio.gather(f(), return_exceptions=B())",
        ("SystemExit", 4),
    ),
    "a sleep whose delay is a number type of the snippet's": (
        _EVIL_NUMBER + "await asyncio.sleep(T(0.01))\n1",
        1,
    ),
    "a wait_for timeout of the snippet's": (
        _EVIL_NUMBER + "await asyncio.wait_for(quick(), T(5))",
        2,
    ),
    "an asyncio.timeout of the snippet's": (
        _EVIL_NUMBER + "async with asyncio.timeout(T(5)):\n    x = await quick()\nx",
        2,
    ),
    "an as_completed timeout of the snippet's": (
        _EVIL_NUMBER + "[await c for c in asyncio.as_completed([quick()], timeout=T(5))]",
        [2],
    ),
}
"""asyncio lets ``SystemExit`` and ``KeyboardInterrupt`` out of a task, and out of any
callback, through the event loop itself; and its timers add, compare and multiply whatever
number they were given, inside the loop. Each would stop the worker without a result."""


@pytest.mark.parametrize("name", STOPPING)
async def test_nothing_a_task_raises_stops_the_event_loop(fab: Fabric, name: str) -> None:
    code, expected = STOPPING[name]
    result = await fab.exec(code)
    if isinstance(expected, tuple):
        assert result.error is not None, result.text
        assert (result.error.kind, result.error.type, result.error.line) == ("runtime", *expected)
    else:
        assert result.ok, result.text
        assert result.value == expected
