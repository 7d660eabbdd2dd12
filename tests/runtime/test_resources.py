"""Resource bombs are contained with a clear error, and the host keeps serving."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fabric import Fabric, Limits


@pytest.fixture(scope="module")
async def tight(workspace: Path) -> AsyncIterator[Fabric]:
    limits = Limits(
        timeout_s=2, memory_mb=128, output_bytes=4096, max_result_bytes=1024 * 1024, max_calls=500
    )
    async with Fabric(workspace=workspace, limits=limits) as fab:
        yield fab


async def still_serving(fab: Fabric) -> None:
    result = await fab.exec("return 1 + 1")
    assert result.ok and result.value == 2


async def test_infinite_loop_times_out(tight: Fabric) -> None:
    """A busy loop is killed at the wall-clock limit, which the error names."""
    result = await tight.exec("while True:\n    pass")
    assert result.error is not None and result.error.kind == "timeout"
    assert result.error.limit == 2
    assert "2 s" in result.text
    await still_serving(tight)


async def test_sleeping_forever_times_out(tight: Fabric) -> None:
    """An await that never finishes is killed too."""
    result = await tight.exec("import asyncio\nawait asyncio.sleep(10 ** 6)")
    assert result.error is not None and result.error.kind == "timeout"
    await still_serving(tight)


@pytest.mark.parametrize(
    "code",
    [
        "x = 'a' * (10 ** 10)",
        "x = [0] * (10 ** 9)",
        "chunks = []\nwhile True:\n    chunks.append('a' * 10 ** 6)",
        "d = {}\nfor i in range(10 ** 9):\n    d[i] = str(i) * 10",
    ],
)
async def test_memory_bomb_hits_the_memory_limit(tight: Fabric, code: str) -> None:
    """Allocations beyond the limit fail with a memory error naming the limit."""
    result = await tight.exec(code)
    assert result.error is not None and result.error.kind == "memory", result.text
    assert "128 MB" in result.text
    await still_serving(tight)


async def test_the_heap_a_spare_fills_while_it_waits_is_part_of_the_limit(tight: Fabric) -> None:
    """Spares fault in a heap when left idle; a snippet still gets its limit, no more, no less."""
    await asyncio.sleep(0.5)  # long enough for the spares to fill their heaps
    fits = await tight.exec("keep = [bytes(400) for _ in range(130_000)]\nreturn len(keep)")
    assert fits.ok and fits.value == 130_000, fits.text  # about 60 MB of small objects
    await asyncio.sleep(0.5)
    over = await tight.exec("keep = [bytes(400) for _ in range(320_000)]\nreturn len(keep)")
    assert over.error is not None and over.error.kind == "memory", over.text  # about 145 MB
    await still_serving(tight)


async def test_deep_recursion_is_a_recursion_error(tight: Fabric) -> None:
    """Unbounded recursion stops with RecursionError and the snippet line."""
    result = await tight.exec("def f(n):\n    return f(n + 1)\nf(0)")
    assert result.error is not None and result.error.type == "RecursionError"
    assert result.error.line == 2
    await still_serving(tight)


async def test_output_flood_is_capped(tight: Fabric) -> None:
    """200,000 prints (20 MB) keep only the capped output and say how much was dropped (a
    million raced the 2 s wall clock on a loaded machine)."""
    result = await tight.exec("for i in range(2 * 10 ** 5):\n    print('x' * 100)\nreturn 'done'")
    assert result.ok and result.value == "done"
    assert len(result.logs) == 4096
    assert result.logs_dropped == 2 * 10**5 * 101 - 4096


async def test_huge_return_value_is_refused(tight: Fabric) -> None:
    """A return value above max_result_bytes is an error that suggests returning less."""
    result = await tight.exec("return 'x' * (8 * 2 ** 20)")
    assert result.error is not None and result.error.kind == "limit"
    assert "slice" in result.text
    await still_serving(tight)


async def test_fork_attempts_fail(tight: Fabric) -> None:
    """There is no way to reach fork: os is not importable and nothing exposes it."""
    result = await tight.exec("import os\nos.fork()")
    assert not result.ok
    await still_serving(tight)


async def test_ten_thousand_provider_calls_hit_the_call_limit(workspace: Path) -> None:
    """A flood of provider calls stops at max_calls with a clear error (with time to spare:
    the 500 calls must not race the wall clock on a busy machine)."""
    limits = Limits(timeout_s=60, max_calls=500)
    async with Fabric(workspace=workspace, limits=limits, spares=0) as fab:
        code = "for i in range(10000):\n    await tools.read(path='notes.txt')"
        result = await fab.exec(code)
        assert result.error is not None and result.error.kind == "limit"
        assert "500" in result.text
        await still_serving(fab)


async def test_ten_thousand_gathered_calls_hit_the_call_limit(tight: Fabric) -> None:
    """The same flood under asyncio.gather is contained as well."""
    code = "import asyncio\nawait asyncio.gather(*[tools.read(path='notes.txt') for i in range(10000)])"
    result = await tight.exec(code)
    assert result.error is not None and result.error.kind == "limit"
    await still_serving(tight)


async def test_system_exit_is_an_ordinary_error(tight: Fabric) -> None:
    """raise SystemExit ends the snippet, not the worker's protocol or the host."""
    result = await tight.exec("raise SystemExit(3)")
    assert result.error is not None and result.error.type == "SystemExit"
    await still_serving(tight)


async def test_oversized_snippet_is_refused_before_running(tight: Fabric) -> None:
    """A snippet over 1 MB is refused with a limit error."""
    result = await tight.exec("x = 1\n" * 300_000)
    assert result.error is not None and result.error.kind == "limit"
    await still_serving(tight)


async def test_very_deep_nesting_is_a_syntax_error_not_a_dead_worker(tight: Fabric) -> None:
    """800 nested lambdas, or 2,000 subscripts in a row (too long for the host to compile it
    first, so the worker does): a clean error, whoever compiles the snippet."""
    for code in ("f = " + "lambda: " * 800 + "1\nreturn 1", "return x" + "[0]" * 2000):
        result = await tight.exec(code)
        assert result.error is not None and result.error.kind == "syntax", result.text
        assert "nested too deeply" in result.error.message
    await still_serving(tight)


async def test_calls_that_find_the_zygote_dead_share_one_restart(workspace: Path) -> None:
    """Four executions arriving after the process that forks workers was killed all get a
    result: one new zygote serves them, none raises."""
    import asyncio
    import os
    import signal

    from runtime import NoProviders, Sandbox

    async with Sandbox() as sandbox:
        assert (await sandbox.execute("return 1", providers=NoProviders())).ok
        first = sandbox.zygote_pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        results = await asyncio.gather(
            *(sandbox.execute(f"return {i}", providers=NoProviders()) for i in range(4))
        )
        assert [r.value for r in results] == [0, 1, 2, 3], [r.text for r in results]
        assert sandbox.zygote_pid not in (None, first)
