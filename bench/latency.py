"""Latency and throughput of the sandbox, side by side with plain CPython and peers.

    python bench/latency.py [--quick] [--no-peers] [--only SECTION ...]

Prints one table per target: end-to-end latency of a trivial snippet on a warm runtime (beside
pydantic-monty in a fresh session, when installed); the same with every isolation layer on,
beside isolation "minimal" and beside each kernel layer switched off in turn, so the cost of
each layer shows; bursts of calls that arrive before a spare is ready; the workloads beside a
plain ``exec`` of the same code (and smolagents / monty when installed); provider round trips;
the rate at which a 20 MB tool result enters the sandbox; how long the host's event loop
stalls while a large result comes back; and an MCP tool (mcp-server-time) called from a snippet
beside the same call made directly with the SDK client. Ratios are computed within this one run;
each section runs in an interpreter of its own, and each peer in a process of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fabric import Fabric, Limits, ProviderRegistry
from runtime import NoProviders, Sandbox

console = Console()

# Each workload is (body, final expression); the snippet is body + "return <expr>".
WORKLOADS: dict[str, tuple[str, str]] = {
    "cpu loop (3M iterations)": (
        "total = 0\nfor i in range(3_000_000):\n    total += i * i % 7\n",
        "total",
    ),
    "100k-dict filter and sort": (
        "rows = [{'id': i, 'score': (i * 7919) % 1000, 'name': 'n' + str(i)} for i in range(100_000)]\n"
        "kept = [r for r in rows if r['score'] > 500]\n"
        "kept = sorted(kept, key=lambda r: r['score'])\n",
        "len(kept)",
    ),
    "5 MB json.loads": (
        "import json\n"
        "text = json.dumps([{'id': i, 'tags': ['a', 'b'], 'v': i * 0.5} for i in range(110_000)])\n"
        "data = json.loads(text)\n",
        "[len(text), len(data)]",
    ),
    "10 MB text split and count": (
        "text = 'lorem ipsum dolor sit amet\\n' * 400_000\nwords = text.split()\n",
        "[len(text), len(words), text.count('dolor')]",
    ),
}


GUARDED: dict[str, tuple[str, str]] = {
    "1M method calls (list.append)": (
        "out = []\nfor i in range(1_000_000):\n    out.append(i)\n",
        "len(out)",
    ),
    "1M attribute reads (namedtuple)": (
        "import collections\nP = collections.namedtuple('P', 'x')\np = P(1)\nt = 0\n"
        "for i in range(1_000_000):\n    t += p.x\n",
        "t",
    ),
    "1M loops unpacking enumerate": (
        "t = 0\nfor i, x in enumerate(range(1_000_000)):\n    t += x\n",
        "t",
    ),
    "1M dict writes": ("d = {}\nfor i in range(1_000_000):\n    d[i] = i\n", "len(d)"),
    "sort lists (100k two-item lists)": (
        "rows = [[(i * 7919) % 1000, i] for i in range(100_000)]\nrows.sort()\n",
        "rows[0]",
    ),
    "1M set adds": (
        "seen = set()\nfor i in range(1_000_000):\n    seen.add(i % 5000)\n",
        "len(seen)",
    ),
    "200k lru_cache calls (mostly misses)": (
        "import functools\n@functools.lru_cache(maxsize=1024)\ndef sq(n):\n    return n * n\n"
        "t = 0\nfor i in range(200_000):\n    t += sq(i % 2000)\n",
        "t",
    ),
    "1M calls of the snippet's own methods": (
        "class V:\n    def __init__(self, n):\n        self.n = n\n"
        "    def plus(self, other, k=1):\n        return self.n + other.n * k\n"
        "a, b = V(1), V(2)\nt = 0\nfor i in range(1_000_000):\n    t += a.plus(b)\n",
        "t",
    ),
}
"""Not targets: code that is mostly guarded operations, to show what a guard costs (a
method call is a guarded read, and its parameters are admitted as it begins), and list
ordering and set changes, which the worker's interpreter runs in Python (gh-120298,
gh-141805, runtime/worker/_repairs.py)."""

TURN_S = 0.2
"""The pause before each timed workload run: an agent's next snippet comes a model turn later,
and spare workers use idle time to fault in their heap (see runtime/worker/_heap.py)."""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def plain_exec(body: str, expr: str) -> Callable[[], Any]:
    source = "def main():\n" + textwrap.indent(body + f"return {expr}\n", "    ")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<plain>", "exec"), namespace)
    main: Callable[[], Any] = namespace["main"]
    return main


def timed(fn: Callable[[], Any], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def monty_runner() -> Callable[[str], Any] | None:
    try:
        import pydantic_monty
    except ImportError:
        return None
    pool = pydantic_monty.Monty(min_processes=1).__enter__()

    def run(code: str) -> Any:
        with pool.checkout() as session:
            return session.feed_run(code)

    return run


def smolagents_runner() -> Callable[[str], Any] | None:
    try:
        from smolagents.local_python_executor import LocalPythonExecutor
    except ImportError:
        return None

    def run(code: str) -> Any:
        executor = LocalPythonExecutor(additional_authorized_imports=["json"])
        executor.send_tools({})
        return executor(code)

    return run


PEERS: dict[str, Callable[[], Callable[[str], Any] | None]] = {
    "smolagents": smolagents_runner,
    "monty": monty_runner,
}
PEER_LIMIT_S = 60.0


def _peer_child(kind: str, code: str, repeat: int, conn: Connection) -> None:
    run = PEERS[kind]()
    if run is None:
        conn.send("not installed")
        return
    try:
        conn.send(f"{timed(lambda: run(code), repeat) * 1000:.1f} ms")
    except Exception as exc:
        conn.send(f"error: {type(exc).__name__}: {str(exc)[:60]}")


PEERS_ON = True
"""False with ``--no-peers``: the workloads run beside plain exec only (a peer that times out
takes its 30 s each run)."""


def peer_time(kind: str, code: str, repeat: int) -> str:
    """A peer's time for ``code``, measured in a process of its own that is killed after
    ``PEER_LIMIT_S``: a peer that gives up on a timeout leaves its interpreter thread running,
    and that thread would otherwise share the CPU with every measurement after it."""
    if not PEERS_ON:
        return "skipped"
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe(duplex=False)
    child = context.Process(target=_peer_child, args=(kind, code, repeat, theirs), daemon=True)
    child.start()
    theirs.close()
    try:
        answer: str = ours.recv() if ours.poll(PEER_LIMIT_S) else f"over {PEER_LIMIT_S:.0f} s"
        return answer
    except EOFError:
        return f"error: exited with {child.exitcode}"
    finally:
        child.kill()
        child.join()
        ours.close()


async def trivial_latency(
    fab: Fabric, monty: Callable[[str], Any] | None, n: int, gap_s: float
) -> tuple[list[float], list[float]]:
    """Fabric and monty take turns, each call ``gap_s`` after the previous one of either, so
    both meet the same machine: on a VM an idle CPU wakes slowly, and that cost lands on
    whichever runner goes first after a pause."""
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(n):
        if monty is not None:
            time.sleep(gap_s)
            start = time.perf_counter()
            monty("1 + 1")
            theirs.append((time.perf_counter() - start) * 1000)
        if gap_s:
            await asyncio.sleep(gap_s)
        start = time.perf_counter()
        result = await fab.exec("return 1 + 1")
        ours.append((time.perf_counter() - start) * 1000)
        assert result.value == 2, result.text
    return ours, theirs


async def bench_trivial(fab: Fabric, n: int) -> None:
    monty = monty_runner()
    table = Table(title='fab.exec("return 1 + 1"), end to end')
    for col in ("runner", "calls", "p50 ms", "p90 ms", "fabric / monty p50"):
        table.add_column(col)
    for label, gap in (("10 ms apart", 0.01), ("back to back", 0.0)):
        ours, theirs = await trivial_latency(fab, monty, n, gap)
        ratio = f"{statistics.median(ours) / statistics.median(theirs):.2f}x" if theirs else "-"
        name = "fabric, warm (spare ready)" if gap else "fabric (spares used up)"
        table.add_row(
            name, label, f"{statistics.median(ours):.3f}", f"{percentile(ours, 0.9):.3f}", ratio
        )
        if theirs:
            table.add_row(
                "pydantic-monty, fresh session",
                label,
                f"{statistics.median(theirs):.3f}",
                f"{percentile(theirs, 0.9):.3f}",
                "",
            )
        else:
            table.add_row("pydantic-monty", label, "not installed", "", "")
    console.print(table)
    console.print(
        "target: warm p50 <= 1 ms and no slower than pydantic-monty (the 10 ms apart rows); "
        "back to back, every call waits for a fresh worker to be forked\n"
    )


async def bench_workloads(fab: Fabric, repeat: int) -> None:
    table = Table(
        title="workloads: fabric end to end vs plain CPython exec of the same code "
        f"(each fabric run {TURN_S:g} s after the previous, as an agent's turns come)"
    )
    for col in ("workload", "plain exec", "fabric", "ratio", "smolagents", "pydantic-monty"):
        table.add_column(col)
    for name, (body, expr) in WORKLOADS.items():
        plain = plain_exec(body, expr)
        expected = plain()
        snippet = body + f"return {expr}\n"
        fabric_runs, plain_runs = [], []
        for _ in range(repeat):  # interleaved: a slow spell of the machine hits both alike
            await asyncio.sleep(TURN_S)
            start = time.perf_counter()
            result = await fab.exec(snippet)
            fabric_runs.append(time.perf_counter() - start)
            assert result.ok and result.value == expected, result.text
            plain_runs.append(timed(plain, 1))
        plain_s = statistics.median(plain_runs)
        fabric_s = statistics.median(fabric_runs)
        expression_form = body + f"{expr}\n"
        table.add_row(
            name,
            f"{plain_s * 1000:.1f} ms",
            f"{fabric_s * 1000:.1f} ms",
            f"{fabric_s / plain_s:.2f}x",
            peer_time("smolagents", expression_form, 1),
            peer_time("monty", expression_form, 1),
        )
    console.print(table)
    console.print("target: fabric at most 1.15x plain exec\n")
    guarded = Table(
        title="guarded operations and repaired list ordering (not a target: what each costs)"
    )
    for col in ("loop", "plain exec", "fabric", "ratio"):
        guarded.add_column(col)
    for name, (body, expr) in GUARDED.items():
        plain = plain_exec(body, expr)
        expected = plain()
        runs = []
        for _ in range(repeat):
            await asyncio.sleep(TURN_S)
            start = time.perf_counter()
            result = await fab.exec(body + f"return {expr}\n")
            runs.append(time.perf_counter() - start)
            assert result.ok and result.value == expected, result.text
        plain_s, fabric_s = timed(plain, repeat), statistics.median(runs)
        guarded.add_row(
            name,
            f"{plain_s * 1000:.1f} ms",
            f"{fabric_s * 1000:.1f} ms",
            f"{fabric_s / plain_s:.2f}x",
        )
    console.print(guarded)


async def bench_providers(workspace: Path, n: int) -> None:
    registry = ProviderRegistry()
    arrivals: list[float] = []
    big = "x" * (20 * 1024 * 1024)
    marks: dict[str, float] = {}

    async def ping(i: int) -> int:
        arrivals.append(time.perf_counter())
        return i

    async def blob() -> str:
        marks["sent"] = time.perf_counter()
        return big

    async def mark() -> None:
        marks["received"] = time.perf_counter()

    for func in (ping, blob, mark):
        registry.register("extensions", func.__name__, func, risk="read")
    async with Fabric(
        workspace=workspace, registry=registry, limits=Limits(max_calls=n + 10)
    ) as fab:
        await asyncio.sleep(0.1)
        result = await fab.exec(f"for i in range({n}):\n    await extensions.ping(i=i)\nreturn 1")
        assert result.ok, result.text
        trips = [(b - a) * 1000 for a, b in itertools.pairwise(arrivals)]
        rates = []
        for _ in range(5):
            await asyncio.sleep(0.05)
            result = await fab.exec(
                "t = await extensions.blob()\nawait extensions.mark()\nreturn len(t)"
            )
            assert result.value == len(big), result.text
            rates.append(len(big) / (marks["received"] - marks["sent"]) / 1e6)
    table = Table(title="provider calls")
    for col in ("measure", "value", "target"):
        table.add_column(col)
    table.add_row(
        "round trip snippet -> host -> snippet, p50",
        f"{statistics.median(trips):.3f} ms",
        "<= 0.2 ms",
    )
    table.add_row("round trip p90", f"{percentile(trips, 0.9):.3f} ms", "")
    table.add_row(
        "20 MB tool result into the sandbox, median",
        f"{statistics.median(rates):.0f} MB/s",
        ">= 200 MB/s",
    )
    console.print(table)


LAYER_RUNS: dict[str, dict[str, Any]] = {
    "full (every layer)": {},
    "full without seccomp": {"without": ("seccomp",)},
    "full without landlock": {"without": ("landlock",)},
    "full without namespaces": {"without": ("namespaces",)},
    "minimal": {"isolation": "minimal"},
}


async def _timed_exec(sandbox: Sandbox) -> float:
    start = time.perf_counter()
    result = await sandbox.execute("return 1 + 1", providers=NoProviders())
    assert result.ok and result.value == 2, result.text
    return (time.perf_counter() - start) * 1000


async def bench_layers(n: int) -> None:
    """Every configuration gets its own sandbox; calls take turns, so all meet the same
    machine. Warm: a spare is ready (10 ms apart). Fork: no spares, every call waits for a
    fresh worker, so the layers' set-up in the worker is on the clock."""
    warm: dict[str, list[float]] = {name: [] for name in LAYER_RUNS}
    fork: dict[str, list[float]] = {name: [] for name in LAYER_RUNS}
    for spares, into, rounds in ((2, warm, n), (0, fork, max(20, n // 4))):
        boxes = {name: Sandbox(spares=spares, **kw) for name, kw in LAYER_RUNS.items()}
        for box in boxes.values():
            await box.start()
        await asyncio.sleep(0.3)
        try:
            for _ in range(rounds):
                for name, box in boxes.items():
                    await asyncio.sleep(0.01)
                    into[name].append(await _timed_exec(box))
        finally:
            for box in boxes.values():
                await box.close()
    table = Table(title='isolation layers: runtime.Sandbox "return 1 + 1", calls in turns')
    for col in ("configuration", "warm p50 ms", "vs minimal", "fork p50 ms", "layer's cost"):
        table.add_column(col)
    minimal_warm = statistics.median(warm["minimal"])
    full_warm, full_fork = statistics.median(warm["full (every layer)"]), 0.0
    full_fork = statistics.median(fork["full (every layer)"])
    for name in LAYER_RUNS:
        w, f = statistics.median(warm[name]), statistics.median(fork[name])
        cost = ""
        if name.startswith("full without"):
            layer = name.removeprefix("full without ")
            cost = f"{layer}: {full_warm - w:+.3f} warm, {full_fork - f:+.3f} fork"
        elif name == "minimal":
            cost = f"all kernel layers: {full_warm - w:+.3f} warm, {full_fork - f:+.3f} fork"
        table.add_row(name, f"{w:.3f}", f"{w / minimal_warm:.2f}x", f"{f:.3f}", cost)
    console.print(table)
    console.print(
        "target: warm p50 with every layer <= 1 ms and <= 1.10x minimal; the layers are set up "
        "while a spare waits, so their cost shows in the fork column\n"
    )


async def bench_bursts(bursts: int, size: int = 8) -> None:
    """Bursts of back-to-back calls a model turn apart: each call arrives before the spare
    forked for it could be ready. The first burst meets the pool as an agent's pace left it;
    later ones find the spares the recent bursts asked for."""
    first: list[float] = []
    later: list[float] = []
    sustained: list[float] = []
    async with Sandbox() as box:
        await asyncio.sleep(0.5)
        for burst in range(bursts):
            await asyncio.sleep(TURN_S)
            for _ in range(size):
                (first if burst == 0 else later).append(await _timed_exec(box))
        await asyncio.sleep(TURN_S)
        for _ in range(size * bursts):
            sustained.append(await _timed_exec(box))
    table = Table(title=f"bursts: {size} calls back to back, {TURN_S:g} s between bursts")
    for col in ("calls", "p50 ms", "p90 ms", "target"):
        table.add_column(col)
    table.add_row(
        "first burst", f"{statistics.median(first):.3f}", f"{percentile(first, 0.9):.3f}", ""
    )
    table.add_row(
        "later bursts",
        f"{statistics.median(later):.3f}",
        f"{percentile(later, 0.9):.3f}",
        "<= 1.5 ms",
    )
    table.add_row(
        f"{len(sustained)} back to back, no pause",
        f"{statistics.median(sustained):.3f}",
        f"{percentile(sustained, 0.9):.3f}",
        "",
    )
    console.print(table)


async def _stall_during(fab: Fabric, code: str) -> tuple[float, float, int]:
    """The longest the event loop went without running a 1 ms ticker, during ``code``."""
    lags: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            lags.append(now - last - 0.001)
            last = now

    task = asyncio.ensure_future(ticker())
    start = time.perf_counter()
    result = await fab.exec(code)
    total = time.perf_counter() - start
    stop.set()
    await task
    assert result.ok, result.text
    return max(lags) * 1000, total * 1000, result.bytes


async def bench_stall(workspace: Path) -> None:
    table = Table(title="the host's event loop while a large result comes back")
    for col in ("result", "bytes", "exec ms", "longest loop stall ms", "target"):
        table.add_column(col)
    shapes = {
        "600k records": "[{'k': i, 's': 'abc'} for i in range(600_000)]",
        "1M-key dict one level down": "{'n': 1, 'items': {str(i): i for i in range(1_000_000)}}",
        "25 MB string": "'x' * 25_000_000",
    }
    async with Fabric(workspace=workspace, limits=Limits(timeout_s=120, memory_mb=2048)) as fab:
        await asyncio.sleep(0.3)
        for name, expression in shapes.items():
            stall, total, size = await _stall_during(fab, f"return {expression}")
            table.add_row(name, f"{size:,}", f"{total:.0f}", f"{stall:.0f}", "no second-long stall")
    console.print(table)


MCP_CALL = 'await mcp.time.get_current_time(timezone="UTC")'
MCP_TIMED = (
    "import datetime\n"
    "spent = []\n"
    "for i in range({n}):\n"
    "    start = datetime.datetime.now()\n"
    "    {call}\n"
    "    spent.append((datetime.datetime.now() - start).total_seconds() * 1000)\n"
    "return spent\n"
)
"""Each call's round trip as the snippet sees it: snippet -> host -> server and back."""


async def bench_mcp(workspace: Path, rounds: int, gap_s: float = TURN_S) -> None:
    """``mcp.time.get_current_time`` from a snippet beside the same call made directly with the
    SDK's own client (on a server process of its own), side by side in turns so both meet the
    same machine. The round trip: in each round, 20 calls back to back from one snippet, each
    timed inside it, and 20 direct calls. Whole executions: a snippet that makes one call
    (``fab.exec`` end to end, a fresh sandboxed worker each) beside one direct call, ``gap_s``
    apart as an agent's snippets come."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    config = workspace / ".fabric" / "config.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps({"mcpServers": {"time": server}}))
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_time"])
    direct: list[float] = []
    snippet: list[float] = []
    hop: list[float] = []
    provided: list[float] = []
    registry = ProviderRegistry()
    answer = {"timezone": "UTC", "datetime": "2026-12-01T19:22:32+00:00", "is_dst": False}

    async def fixed_time(timezone: str) -> dict[str, Any]:
        """The same shape of answer, from the host at once: what the hop itself costs."""
        return answer

    async def sdk_time(timezone: str) -> dict[str, Any] | None:
        """The direct client's call, made by a host provider: Fabric's MCP layer left out."""
        answer = await client.call_tool("get_current_time", {"timezone": timezone})
        return answer.structured_content

    registry.register("extensions", "fixed_time", fixed_time, risk="read")
    registry.register("extensions", "sdk_time", sdk_time, risk="read")
    direct_single: list[float] = []
    whole: list[float] = []

    async def sdk_call() -> float:
        start = time.perf_counter()
        answer = await client.call_tool("get_current_time", {"timezone": "UTC"})
        assert answer.structured_content is not None
        return (time.perf_counter() - start) * 1000

    async with (
        Client(stdio_client(params), mode="legacy", cache=None) as client,
        Fabric(workspace=workspace, registry=registry) as fab,
    ):
        assert (await fab.exec(f"return {MCP_CALL}")).ok  # starts the server
        for _ in range(rounds):
            await asyncio.sleep(gap_s)
            result = await fab.exec(MCP_TIMED.format(n=20, call=MCP_CALL))
            assert result.ok, result.text
            snippet.extend(result.value)
            await asyncio.sleep(gap_s)
            fixed = 'await extensions.fixed_time(timezone="UTC")'
            result = await fab.exec(MCP_TIMED.format(n=20, call=fixed))
            assert result.ok, result.text
            hop.extend(result.value)
            await asyncio.sleep(gap_s)
            through = 'await extensions.sdk_time(timezone="UTC")'
            result = await fab.exec(MCP_TIMED.format(n=20, call=through))
            assert result.ok, result.text
            provided.extend(result.value)
            await asyncio.sleep(gap_s)
            direct.extend([await sdk_call() for _ in range(20)])
        for _ in range(rounds * 4):
            await asyncio.sleep(gap_s)
            direct_single.append(await sdk_call())
            await asyncio.sleep(gap_s)
            start = time.perf_counter()
            result = await fab.exec(f"return {MCP_CALL}")
            whole.append((time.perf_counter() - start) * 1000)
            assert result.ok and result.value["timezone"] == "UTC", result.text
    config.unlink()
    table = Table(
        title="MCP: mcp.time.get_current_time from a snippet vs the SDK client directly, "
        "side by side"
    )
    for col in ("call", "calls", "p50 ms", "p90 ms", "vs SDK p50", "target"):
        table.add_column(col)
    rows = (
        ("SDK client call_tool, back to back", direct, direct, ""),
        ("from a snippet, back to back (timed inside it)", snippet, direct, "<= 1.5x"),
        ("a host provider from a snippet (the hop alone)", hop, direct, ""),
        ("the SDK client's call in a host provider, from a snippet", provided, direct, ""),
        (f"SDK client call_tool, {gap_s:g} s apart", direct_single, direct_single, ""),
        ("fab.exec of a snippet making the call, end to end", whole, direct_single, ""),
    )
    for name, runs, base, target in rows:
        ratio = "" if runs is base else f"{statistics.median(runs) / statistics.median(base):.2f}x"
        table.add_row(
            name,
            str(len(runs)),
            f"{statistics.median(runs):.3f}",
            f"{percentile(runs, 0.9):.3f}",
            ratio,
            target,
        )
    console.print(table)
    console.print(
        "the target is the call's round trip from a snippet; the hop row is the worker's trip to "
        "the host and back with no MCP in it, the row below it the same SDK call made by a plain "
        "provider (what a worker waiting a few ms costs, without Fabric's MCP layer); an "
        "execution's own cost (a fresh sandboxed worker, the boundary) is in the end-to-end row\n"
    )


SECTIONS = ("trivial", "workloads", "layers", "bursts", "providers", "stall", "mcp")


async def run_section(name: str, quick: bool) -> None:
    n, repeat = (100, 3) if quick else (400, 5)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        if name in ("trivial", "workloads"):
            limits = Limits(timeout_s=120, memory_mb=2048)
            async with Fabric(workspace=workspace, limits=limits) as fab:
                await asyncio.sleep(0.2)
                await (bench_trivial(fab, n) if name == "trivial" else bench_workloads(fab, repeat))
        elif name == "layers":
            await bench_layers(n // 2)
        elif name == "bursts":
            await bench_bursts(8 if quick else 20)
        elif name == "providers":
            await bench_providers(workspace, 2000)
        elif name == "stall":
            await bench_stall(workspace)
        else:
            await bench_mcp(workspace, 5 if quick else 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--no-peers", action="store_true", help="skip smolagents and monty")
    parser.add_argument("--only", choices=SECTIONS, action="append", help="run only this section")
    args = parser.parse_args()
    global PEERS_ON
    PEERS_ON = not args.no_peers
    if args.only and len(args.only) == 1:
        asyncio.run(run_section(args.only[0], args.quick))
        console.file.flush()
        os._exit(0)  # a peer's leftover threads never hold the section open
    # Each section in an interpreter of its own: nothing one leaves behind (workers still
    # exiting, a peer's imports and threads) shares the machine with the next.
    for name in args.only or SECTIONS:
        flags = [
            flag for flag, on in (("--quick", args.quick), ("--no-peers", args.no_peers)) if on
        ]
        command = [sys.executable, __file__, "--only", name, *flags]
        subprocess.run(command, check=True)


if __name__ == "__main__":
    main()
