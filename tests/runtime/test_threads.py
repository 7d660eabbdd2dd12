"""Provider work in threads stops when the execution it serves ends."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from fabric import Fabric, Limits, ProviderRegistry
from runtime import CallStopped, run_sync, stop_if_requested
from runtime.boundary import BytesReadable, read


class Spinner:
    """A provider whose thread works until it is told to stop."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.saw: BaseException | None = None

    def work(self) -> str:
        self.started.set()
        try:
            while True:
                stop_if_requested()
                threading.Event().wait(0.001)  # stands for a piece of real work
        except CallStopped as exc:
            self.saw = exc
            raise
        finally:
            self.stopped.set()

    async def spin(self) -> str:
        """Work until the execution ends."""
        return await run_sync(self.work)


@pytest.fixture
def spinner() -> Spinner:
    return Spinner()


@pytest.fixture
def registry(spinner: Spinner) -> ProviderRegistry:
    registry = ProviderRegistry()
    registry.register("extensions", "spin", spinner.spin, risk="read")
    return registry


async def test_a_thread_stops_when_its_snippet_times_out(
    workspace: Path, registry: ProviderRegistry, spinner: Spinner
) -> None:
    """The snippet is killed at its time limit; the provider's thread is told to stop and
    does (this would wait forever if it were not)."""
    async with Fabric(workspace=workspace, registry=registry, limits=Limits(timeout_s=1)) as fab:
        result = await fab.exec("return await extensions.spin()")
        assert result.error is not None and result.error.kind == "timeout"
        assert await asyncio.to_thread(spinner.stopped.wait, 60)
    assert isinstance(spinner.saw, CallStopped)


async def test_a_thread_stops_when_its_snippet_fails_meanwhile(
    workspace: Path, registry: ProviderRegistry, spinner: Spinner
) -> None:
    """A snippet that fails while a call is still running ends the call's thread too."""
    code = (
        "import asyncio\n"
        "async def boom():\n"
        "    await asyncio.sleep(0.05)\n"
        "    raise ValueError('stop here')\n"
        "await asyncio.gather(extensions.spin(), boom())"
    )
    async with Fabric(workspace=workspace, registry=registry, limits=Limits(timeout_s=30)) as fab:
        result = await fab.exec(code)
        assert result.error is not None and result.error.type == "ValueError"
        assert spinner.started.is_set()
        assert await asyncio.to_thread(spinner.stopped.wait, 60)


async def test_outside_a_call_nothing_is_ever_stopped() -> None:
    """run_sync used by a program of its own simply runs the function."""
    assert await run_sync(lambda: stop_if_requested() or "done") == "done"


@pytest.mark.parametrize(
    "how", [{"json_path": "$[*].a"}, {"query": "needle"}], ids=["json_path", "query"]
)
async def test_reads_stop_when_their_call_is_cancelled(how: dict[str, str]) -> None:
    """A read started after its call was cancelled stops at its first check, with the call's
    stop signal, however much is left to scan."""
    source = BytesReadable(
        "big.json", json.dumps([{"a": i} for i in range(100_000)]).encode(), "json"
    )
    started, gate, done = threading.Event(), threading.Event(), threading.Event()
    outcome: list[BaseException] = []

    def work() -> None:
        started.set()
        gate.wait()
        try:
            read(source, budget=4096, **how)  # type: ignore[arg-type]
        except BaseException as exc:
            outcome.append(exc)
        finally:
            done.set()

    call = asyncio.ensure_future(run_sync(work))
    assert await asyncio.to_thread(started.wait, 60)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    gate.set()
    assert await asyncio.to_thread(done.wait, 60)
    assert outcome and isinstance(outcome[0], CallStopped)


async def test_provider_calls_however_many_leave_the_loops_own_threads_free() -> None:
    """Provider work has threads of its own: with more calls blocked than any pool has
    threads, work on the loop's default executor (analysis, MCP reads) still runs, here the
    very work that unblocks them (this would deadlock if they shared the threads)."""
    release = threading.Event()
    calls = [asyncio.ensure_future(run_sync(release.wait, 120)) for _ in range(40)]
    await asyncio.sleep(0)
    await asyncio.wait_for(asyncio.to_thread(release.set), 60)
    assert all(await asyncio.gather(*calls))
