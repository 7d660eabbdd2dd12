"""Speed of the analyzer beside libcst's parser on the same code.

    python bench/analyzer.py [--quick]

Snippets of 10, 50, 200 and 1000 lines, built from the constructs models write (provider
calls, comprehensions, loops with appends, branches, helpers, gather, encoders). Each run
appends a unique comment so the analyzer's cache never answers. The target: analysis (which
includes its own parse) at most 2x ``libcst.parse_module`` alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import libcst
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer import analyze

console = Console()

BLOCKS = [
    'text{n} = await tools.read(path="logs/app{n}.log")\n'
    'lines{n} = [l.strip() for l in text{n}.splitlines() if "ERROR" in l][:20]\n',
    'rows{n} = await mcp.db.query(sql="select * from t{n}", limit=50)\n'
    'ok{n} = [r["id"] for r in rows{n} if r.get("ok")]\n',
    "counts{n} = {{}}\n"
    "for line in lines{n}:\n"
    '    key = line.split()[0] if line else ""\n'
    "    counts{n}[key] = counts{n}.get(key, 0) + 1\n",
    "def head{n}(items, n=5):\n"
    "    out = []\n"
    "    for item in items[:n]:\n"
    "        out.append(str(item))\n"
    "    return out\n",
    'a{n}, b{n} = await asyncio.gather(tools.ls(path="."), tools.read(path="README.md"))\n'
    'summary{n} = {{"files": len(a{n}), "readme": b{n}[:200]}}\n',
    "if len(text{n}) > 1000:\n"
    '    note{n} = f"long: {{len(text{n})}}"\n'
    "else:\n"
    "    note{n} = json.dumps(lines{n}[:3])\n",
]


def snippet(lines: int) -> str:
    out: list[str] = ["import json, asyncio"]
    n = 0
    while sum(part.count("\n") for part in out) < lines - 1:
        out.append(BLOCKS[n % len(BLOCKS)].format(n=n // len(BLOCKS)))
        n += 1
    out.append('return {"lines": lines0, "summary": summary0, "note": note0}\n')
    return "".join(part if part.endswith("\n") else part + "\n" for part in out)


def timed(fn: Callable[[int], object], repeat: int) -> float:
    samples = []
    for i in range(repeat):
        began = time.perf_counter()
        fn(i)
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


READ = 'await tools.read(path="x.txt")'
CASES: list[tuple[str, str, bool]] = [
    (
        "a loop-carried chain of 3",
        f"a = b = c = None\nfor i in range(3):\n    c = b\n    b = a\n    a = {READ}\nreturn c",
        False,
    ),
    (
        "a loop-carried chain of 8",
        "v0=v1=v2=v3=v4=v5=v6=v7=v8=None\nfor i in range(9):\n"
        + "".join(f"    v{k} = v{k + 1}\n" for k in range(8))
        + f"    v8 = {READ}\nreturn v0",
        False,
    ),
    (
        "a chain sliced on the way",
        f'a = b = ""\nfor i in range(3):\n    b = a[:10]\n    a = {READ}\nreturn b',
        True,
    ),
    (
        "a while loop carrying",
        f"a = b = None\nn = 0\nwhile n < 5:\n    b = a\n    a = {READ}\n    n += 1\nreturn b",
        False,
    ),
    (
        "appends in an unbounded loop",
        f"out = []\nwhile True:\n    out.append({READ})\nreturn out",
        False,
    ),
    ("a slice of lines", f"t = {READ}\nreturn t.splitlines()[:20]", True),
    (
        "a helper after a direct call",
        f"def h():\n    return {READ}\nx = {READ}\nreturn await h()",
        False,
    ),
    ("json of the whole", f"t = {READ}\nreturn json.dumps(t)", False),
    ("a count", f"t = {READ}\nreturn len(t)", True),
]
"""(what, code, bounded): flows whose boundedness is known, for the soundness count."""


def soundness() -> None:
    table = Table(title="verdicts on flows of known boundedness")
    for column in ("flow", "expected", "judged", "sound"):
        table.add_column(column)
    unsound = 0
    for what, code, bounded in CASES:
        got = analyze(code)
        judged = got.bounded or got.classification.value == "NONE"
        wrong = judged and not bounded
        unsound += wrong
        table.add_row(
            what,
            "bounded" if bounded else "unbounded",
            f"{got.classification.value}, {'bounded' if judged else 'unbounded'}",
            "NO" if wrong else "yes",
        )
    console.print(table)
    console.print(f"unbounded flows judged bounded: {unsound} (target 0)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 5 if args.quick else 25
    table = Table(title="analysis beside libcst.parse_module (median of runs)")
    for column in ("snippet", "lines", "parse ms", "analyze ms", "analyze / parse"):
        table.add_column(column, justify="right" if column != "snippet" else "left")
    for size in (10, 50, 200, 1000):
        code = snippet(size)
        parse_s = timed(lambda i, c=code: libcst.parse_module(f"{c}# run {i}\n"), repeat)
        analyze_s = timed(lambda i, c=code: analyze(f"{c}# run {i}\n"), repeat)
        table.add_row(
            f"{size}-line",
            str(code.count("\n")),
            f"{parse_s * 1000:.2f}",
            f"{analyze_s * 1000:.2f}",
            f"{analyze_s / parse_s:.2f}x",
        )
    console.print(table)
    console.print("target: analysis at most 2x the time of libcst.parse_module alone")
    verdict = analyze(snippet(50))
    console.print(f"(the 50-line snippet: {verdict.classification.value}, {verdict.verdict})")
    soundness()


if __name__ == "__main__":
    main()
