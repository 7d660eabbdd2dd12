"""The workspace tools side by side: what containing ``tools.bash`` costs, and what ripgrep's
first pass saves ``tools.grep``.

    python bench/tools.py [--quick]

Prints two tables, each a ratio within this one run: a trivial ``tools.bash`` call contained
(namespaces, read-only mounts, Landlock) beside the same call with ``bashSandbox`` off, taking
turns; and ``tools.grep`` for a rare word over a tree of text files with ``rg`` on PATH beside
the Python search alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fabric import ProviderRegistry
from fabric.providers import Workspace, register_file_tools

console = Console()


def tools(root: Path, sandbox: bool) -> ProviderRegistry:
    registry = ProviderRegistry()
    register_file_tools(registry, Workspace(root), sandbox=lambda: sandbox)
    return registry


async def timed(registry: ProviderRegistry, name: str, arguments: dict[str, object]) -> float:
    start = time.perf_counter()
    await registry.call("tools", name, arguments)
    return (time.perf_counter() - start) * 1000


async def bash_table(root: Path, rounds: int) -> Table:
    contained, plain = tools(root, True), tools(root, False)
    times: dict[str, list[float]] = {"contained": [], "plain": []}
    for _ in range(rounds):  # taking turns, so load on the machine falls on both alike
        times["contained"].append(await timed(contained, "bash", {"command": "true"}))
        times["plain"].append(await timed(plain, "bash", {"command": "true"}))
    return _table("tools.bash('true')", times, "contained", "plain")


async def grep_table(root: Path, rounds: int, files: int) -> Table:
    tree = root / "tree"
    for n in range(files):
        folder = tree / f"d{n % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        words = "lorem ipsum dolor sit amet " * 400
        rare = "needle\n" if n % 97 == 0 else ""
        (folder / f"f{n}.txt").write_text(f"{words}\n{rare}{words}\n")
    registry = tools(root, True)
    rg = shutil.which("rg", path=str(Path(sys.executable).parent)) or shutil.which("rg")
    if rg is None:
        table = Table(title="tools.grep: ripgrep is not installed (pip install ripgrep)")
        return table
    times: dict[str, list[float]] = {"ripgrep first": [], "python alone": []}
    path = os.environ.get("PATH", "")
    arguments: dict[str, object] = {"pattern": "needle", "path": "tree", "max_results": 10_000}
    try:
        for _ in range(rounds):
            os.environ["PATH"] = str(Path(rg).parent)
            times["ripgrep first"].append(await timed(registry, "grep", arguments))
            os.environ["PATH"] = "/nonexistent"
            times["python alone"].append(await timed(registry, "grep", arguments))
    finally:
        os.environ["PATH"] = path
    size = sum(p.stat().st_size for p in tree.rglob("*.txt")) / 1e6
    return _table(
        f"tools.grep over {files} files, {size:.0f} MB", times, "ripgrep first", "python alone"
    )


def _table(title: str, times: dict[str, list[float]], first: str, second: str) -> Table:
    table = Table(title=title)
    for column in ("way", "median ms", "p90 ms", f"ratio to {second}"):
        table.add_column(column)
    base = statistics.median(times[second])
    for name, values in times.items():
        p90 = sorted(values)[int(len(values) * 0.9) - 1] if len(values) > 1 else values[0]
        median = statistics.median(values)
        table.add_row(name, f"{median:.1f}", f"{p90:.1f}", f"{median / base:.2f}x")
    return table


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and files")
    quick = parser.parse_args().quick
    root = Path(tempfile.mkdtemp(prefix="fabric-bench-tools-"))
    try:
        console.print(await bash_table(root, 10 if quick else 40))
        console.print(await grep_table(root, 3 if quick else 10, 300 if quick else 3000))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
