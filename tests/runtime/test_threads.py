"""Provider work in threads stops when the execution it serves ends."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from fabric import Fabric, Limits, ProviderRegistry
from runtime import CallStopped, run_sync, stop_if_requested


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
    registry.register("extensions", "spin", spinner.spin)
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
