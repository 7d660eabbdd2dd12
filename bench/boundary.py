"""Speed and memory of the boundary, beside the baselines the targets name.

    python bench/boundary.py [--quick]

- Preview of a 50 MB JSON document (an API-like list of records) beside ``json.loads`` of the
  same bytes: time ratio, and the peak memory each adds once the bytes are loaded (Linux
  VmHWM, reset through /proc/self/clear_refs), over the payload size. Each side runs in a
  fresh process.
- ``ctx_read`` with a query over a 100 MB log kept in the store (every 64 KiB chunk checked
  against its CRC32 while it streams) beside ``grep -c`` on the same bytes in a plain file.

Ratios are computed within this one run.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

console = Console()
MB = 1024 * 1024

MEASURE = """
import json, sys, time
sys.path.insert(0, {root!r})
from runtime.boundary import preview


def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])


data = open({path!r}, "rb").read()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the high-water mark to what is resident now
start = status("VmRSS")
began = time.perf_counter()
if {mode!r} == "json.loads":
    json.loads(data)
else:
    preview(data.decode("utf-8"), 2048, "json")
seconds = time.perf_counter() - began
print(json.dumps({{"seconds": seconds, "grown_kb": status("VmHWM") - start}}))
"""


def make_json(path: Path, size_mb: int) -> int:
    rng = random.Random(3)
    rows = []
    total = 0
    i = 0
    while total < size_mb * MB:
        row = {
            "id": i,
            "name": f"user {i}",
            "email": f"user{i}@example.com",
            "tags": rng.sample(["a", "b", "c", "d", "e"], 2),
            "score": round(rng.random() * 100, 3),
            "active": i % 3 == 0,
            "bio": "lorem ipsum " * rng.randrange(0, 6),
        }
        rows.append(row)
        total += 130 + len(row["bio"])
        i += 1
    text = json.dumps({"ok": True, "total": len(rows), "items": rows})
    path.write_text(text)
    return len(text)


def measure(path: Path, mode: str) -> dict[str, float]:
    code = MEASURE.format(root=str(ROOT), path=str(path), mode=mode)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def bench_json(folder: Path, size_mb: int, repeat: int) -> None:
    path = folder / "big.json"
    size = make_json(path, size_mb)
    rows = {}
    for mode in ("json.loads", "preview"):
        runs = [measure(path, mode) for _ in range(repeat)]
        rows[mode] = (min(r["seconds"] for r in runs), max(r["grown_kb"] for r in runs) * 1024)
    table = Table(title=f"preview of a {size / MB:.0f} MB JSON document (best of {repeat})")
    for column in ("", "seconds", "time / json.loads", "peak memory added", "/ payload"):
        table.add_column(column, justify="right" if column else "left")
    for mode, label in (("json.loads", "json.loads of the bytes"), ("preview", "Fabric preview")):
        seconds, grown = rows[mode]
        table.add_row(
            label,
            f"{seconds:.3f}",
            f"{seconds / rows['json.loads'][0]:.2f}",
            f"{grown / MB:.0f} MB",
            f"{grown / size:.2f}x",
        )
    console.print(table)
    console.print("target: preview <= 1.5x the time of json.loads; memory peak <= 3x the payload\n")


def make_log(path: Path, size_mb: int) -> None:
    rng = random.Random(1)
    levels = ["INFO", "DEBUG", "WARN", "ERROR"]
    with path.open("w") as f:
        written = i = 0
        while written < size_mb * MB:
            level = levels[rng.randrange(4)] if rng.random() < 0.1 else "INFO"
            line = (
                f"2026-11-30T12:00:{i % 60:02d} {level} worker-{i % 17} request {i} took "
                f"{rng.randrange(1000)} ms path=/api/v1/items/{i % 1000}\n"
            )
            f.write(line)
            written += len(line)
            i += 1


def best(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - began)
    return min(times)


def bench_query(folder: Path, size_mb: int, repeat: int) -> None:
    from runtime.boundary import StoredReadable, read
    from store import Store

    log = folder / "app.log"
    make_log(log, size_mb)
    store = Store(folder)
    entry = store.put(log.read_bytes(), tool="bench.log", content_type="text")
    source = StoredReadable(store, entry)
    grep = shutil.which("grep")
    rows = []
    if grep:
        seconds = best(
            lambda: subprocess.run(
                [grep, "-c", "ERROR", str(log)], check=True, capture_output=True
            ),
            repeat,
        )
        rows.append(("grep -c ERROR (plain file)", seconds))
        seconds = best(
            lambda: subprocess.run(
                [grep, "-c", "-i", "error", str(log)], check=True, capture_output=True
            ),
            repeat,
        )
        rows.append(("grep -c -i error (plain file)", seconds))
    cases = [
        ("ctx_read query='ERROR'", {"query": "ERROR"}),
        ("ctx_read query='error', ignore_case", {"query": "error", "ignore_case": True}),
        (
            "ctx_read query='took 9\\d\\d ms', regex",
            {"query": r"took 9\d\d ms", "regex_mode": True},
        ),
    ]
    for label, options in cases:
        rows.append((label, best(lambda o=options: read(source, budget=16_384, **o), repeat)))
    store.close()
    table = Table(title=f"a query over a {size_mb} MB log (best of {repeat})")
    for column in ("", "seconds", "MB/s", "speed / grep -c"):
        table.add_column(column, justify="right" if column else "left")
    base = rows[0][1] if grep else None
    for label, seconds in rows:
        ratio = f"{base / seconds:.0%}" if base else "-"
        table.add_row(label, f"{seconds:.3f}", f"{size_mb / seconds:.0f}", ratio)
    console.print(table)
    console.print("target: ctx_read query at >= 40% of the speed of grep -c on the same file\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix=".bench-boundary-", dir=ROOT / "bench"))
    try:
        bench_json(folder, 10 if args.quick else 50, 1 if args.quick else 3)
        bench_query(folder, 20 if args.quick else 100, 2 if args.quick else 7)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
