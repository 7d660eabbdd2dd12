"""Post hooks: run after each execution, detached; never delay or fail it; counted."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from fabric import Completed, ConfigError, Fabric
from runtime import stop_if_requested


async def test_the_result_comes_back_while_a_hook_is_still_running(tmp_path: Path) -> None:
    """A hook that waits for an event the test sets only after exec returned: were exec to
    wait for its hooks, this would deadlock."""
    release = asyncio.Event()
    seen: list[Completed] = []

    async def writer(done: Completed) -> None:
        await release.wait()
        seen.append(done)

    async with Fabric(tmp_path, spares=0) as fab:
        fab.add_post_hook(writer)
        result = await fab.exec("return 6 * 7")
        assert result.value == 42
        assert fab.status(scope="runtime")["post_hooks"]["running"] == 1
        release.set()
    assert [(done.code, done.result.value) for done in seen] == [("return 6 * 7", 42)]


async def test_a_hook_that_raises_never_fails_the_execution(tmp_path: Path) -> None:
    tries: list[int] = []

    async def broken(done: Completed) -> None:
        tries.append(1)
        raise RuntimeError("lorebook unavailable")

    async with Fabric(tmp_path, spares=0) as fab:
        fab.add_post_hook(broken, retries=2)
        result = await fab.exec("return 1")
        assert result.ok and result.value == 1
        while fab.hooks.counts.running:  # the three attempts, a few milliseconds apart
            await asyncio.sleep(0.01)
    assert len(tries) == 3
    hooks = fab.hooks.counts
    assert (hooks.runs, hooks.failed, hooks.retries, hooks.succeeded) == (1, 1, 2, 0)
    events = [json.loads(line) for line in (tmp_path / ".fabric" / "events.jsonl").open()]
    failed = [e for e in events if e["kind"] == "post_hook"]
    assert failed[-1]["ok"] is False and failed[-1]["attempts"] == 3
    assert "RuntimeError: lorebook unavailable" in failed[-1]["error"]


async def test_a_hook_succeeds_after_retries(tmp_path: Path) -> None:
    attempts: list[int] = []
    succeeded = asyncio.Event()

    async def flaky(done: Completed) -> None:
        attempts.append(1)
        if len(attempts) < 3:
            raise OSError("disk busy")
        succeeded.set()

    async with Fabric(tmp_path, spares=0) as fab:
        fab.add_post_hook(flaky, retries=5)
        await fab.exec("return 1")
        await asyncio.wait_for(succeeded.wait(), 30)
        text = (await fab.ctx.status(scope="runtime")).text
    hooks = fab.hooks.counts
    assert len(attempts) == 3
    assert (hooks.succeeded, hooks.failed, hooks.retries) == (1, 0, 2)
    assert "post hooks: 1 runs, 1 succeeded, 0 failed (2 retries, 0 timeouts)" in text


async def test_a_hook_that_hangs_past_its_timeout_is_stopped_and_counted(tmp_path: Path) -> None:
    forever = asyncio.Event()

    async def hangs(done: Completed) -> None:
        await forever.wait()

    async with Fabric(tmp_path, spares=0) as fab:
        fab.add_post_hook(hangs, retries=1, timeout_s=0.05)
        assert (await fab.exec("return 1")).ok
        while fab.hooks.counts.running:  # both attempts time out; nothing sets the event
            await asyncio.sleep(0.01)
    hooks = fab.hooks.counts
    assert (hooks.timeouts, hooks.retries, hooks.failed, hooks.succeeded) == (2, 1, 1, 0)


async def test_closing_stops_retries_and_lets_the_attempt_in_flight_finish(
    tmp_path: Path,
) -> None:
    attempts: list[int] = []
    first_failed = asyncio.Event()

    async def fails(done: Completed) -> None:
        attempts.append(1)
        first_failed.set()
        raise OSError("no")

    fab = Fabric(tmp_path, spares=0)
    await fab.start()
    fab.add_post_hook(fails, retries=50)
    await fab.exec("return 1")
    await first_failed.wait()
    await fab.close()
    assert len(attempts) < 50 and fab.hooks.counts.failed == 1
    assert fab.hooks.counts.cancelled == 0


async def test_close_waits_for_a_hook_in_flight(tmp_path: Path) -> None:
    finished = asyncio.Event()
    started = asyncio.Event()

    async def slow(done: Completed) -> None:
        started.set()
        await asyncio.sleep(0.01)
        finished.set()

    fab = Fabric(tmp_path, spares=0)
    await fab.start()
    fab.add_post_hook(slow)
    await fab.exec("return 1")
    await started.wait()
    await fab.close()
    assert finished.is_set()


async def test_a_plain_function_hook_runs_in_a_thread_and_is_asked_to_stop(
    tmp_path: Path,
) -> None:
    """A thread cannot be killed: a plain function that looks is stopped at its timeout."""
    looked = threading.Event()
    thread_names: list[str] = []

    def patient(done: Completed) -> None:
        thread_names.append(threading.current_thread().name)
        while True:
            try:
                stop_if_requested()
            except Exception:
                looked.set()
                raise
            threading.Event().wait(0.005)

    async with Fabric(tmp_path, spares=0) as fab:
        fab.add_post_hook(patient, retries=0, timeout_s=0.05)
        await fab.exec("return 1")
        await fab.hooks.close()
        await asyncio.to_thread(looked.wait, 10)
    assert looked.is_set()
    assert thread_names and thread_names[0].startswith("fabric-provider")
    assert fab.hooks.counts.timeouts == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"retries": -1}, "retries must be a whole number from 0 to 100"),
        ({"retries": 1.5}, "retries must be a whole number"),
        ({"timeout_s": 0}, "timeout_s must be a number of seconds above 0"),
        ({"timeout_s": True}, "timeout_s must be a number"),
    ],
)
async def test_bad_hook_settings_are_refused_by_name(
    tmp_path: Path, kwargs: dict[str, object], message: str
) -> None:
    async def hook(done: Completed) -> None:
        return None

    async with Fabric(tmp_path, spares=0) as fab:
        with pytest.raises(ConfigError, match=message):
            fab.add_post_hook(hook, **kwargs)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="must be callable"):
            fab.add_post_hook("not a function")  # type: ignore[arg-type]
