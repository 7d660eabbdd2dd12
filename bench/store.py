"""Speed of the content-addressed store, beside the physical limit of the same disk.

    python bench/store.py [--quick] [--dir PATH]

Prints one table per target of issue "Content-addressed store":

- putting a 100 MB payload, beside sha256 plus a plain write of the same bytes to the same
  folder (with and without fsync, since the store's put is durable);
- resolving a handle (``stat``) and getting a small payload with 100,000 entries in the index;
- evicting 10,000 entries (through ``gc`` and through the ``put`` that goes over budget);
- reading a 4 KB range from a 100 MB blob.

Ratios are computed within this one run. ``--dir`` picks the disk (default: a temporary folder
under the repository, i.e. the disk a workspace would be on).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from store import Store

console = Console()
MB = 1024 * 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def samples_ms(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def plain_write(folder: Path, data: bytes, fsync: bool) -> None:
    hashlib.sha256(data).hexdigest()
    path = folder / f"plain-{random.random()}"
    with open(path, "wb") as f:
        f.write(data)
        if fsync:
            f.flush()
            os.fsync(f.fileno())
    path.unlink()


def bench_put(root: Path, size_mb: int, repeat: int) -> None:
    workspace = root / "put"
    workspace.mkdir()
    plain = workspace / "plain"
    plain.mkdir()
    payloads = [os.urandom(size_mb * MB) for _ in range(repeat)]
    with Store(workspace) as store:
        store.put(b"warm up")
        fabric_s, durable_s, plain_s = [], [], []
        for data in payloads:  # interleaved, so disk state drifts evenly over all three
            start = time.perf_counter()
            plain_write(plain, data, fsync=False)
            plain_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            plain_write(plain, data, fsync=True)
            durable_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            store.put(data, tool="bench.put")
            fabric_s.append(time.perf_counter() - start)
    best = {
        name: min(s)
        for name, s in (("fabric", fabric_s), ("durable", durable_s), ("plain", plain_s))
    }
    table = Table(title=f"putting a {size_mb} MB payload (best of {repeat})")
    for column in ("", "seconds", "MB/s", "fabric speed / this"):
        table.add_column(column, justify="right" if column else "left")
    for name, label in (
        ("fabric", "Store.put (hash, chunk digests, write, fsync, rename, index)"),
        ("durable", "sha256 + write + fsync (the physical limit)"),
        ("plain", "sha256 + write, no fsync"),
    ):
        ratio = best[name] / best["fabric"]
        table.add_row(label, f"{best[name]:.3f}", f"{size_mb / best[name]:.0f}", f"{ratio:.2f}")
    console.print(table)
    console.print("target: Store.put at >= 50% of the speed of sha256 + a plain file write\n")


def _populate(args: tuple[str, int, int]) -> list[str]:
    workspace, start, count = args
    with Store(workspace) as store:
        return [
            store.put(f"entry {i} " + "x" * (i % 200), tool="bench.fill", args={"i": i}).handle
            for i in range(start, start + count)
        ]


def populate(workspace: Path, count: int, procs: int = 4) -> list[str]:
    step = -(-count // procs)
    jobs = [(str(workspace), i, min(step, count - i)) for i in range(0, count, step)]
    with ProcessPoolExecutor(procs) as pool:
        return [h for part in pool.map(_populate, jobs) for h in part]


def bench_resolve(root: Path, entries: int, n: int) -> None:
    workspace = root / "resolve"
    workspace.mkdir()
    start = time.perf_counter()
    handles = populate(workspace, entries)
    fill_s = time.perf_counter() - start
    with Store(workspace) as store:
        pick = random.Random(1).choice
        stat = samples_ms(lambda: store.stat(pick(handles)), n)
        get = samples_ms(lambda: store.get(pick(handles)), n)
        live = store.usage().entries
    table = Table(title=f"resolving a handle with {live:,} entries in the index")
    for column in ("", "p50 ms", "p99 ms"):
        table.add_column(column, justify="right" if column else "left")
    table.add_row(
        "stat(handle): index lookup",
        f"{percentile(stat, 0.5):.3f}",
        f"{percentile(stat, 0.99):.3f}",
    )
    table.add_row(
        "get(handle): lookup, read, sha256 check, LRU touch",
        f"{percentile(get, 0.5):.3f}",
        f"{percentile(get, 0.99):.3f}",
    )
    console.print(table)
    console.print(f"(filled with {entries:,} puts from 4 processes in {fill_s:.0f} s)")
    console.print("target: resolving a handle p50 <= 1 ms with 100,000 entries\n")


def bench_evict(root: Path, count: int) -> None:
    rows = []
    for how in ("gc", "put over budget"):
        workspace = root / f"evict-{how.replace(' ', '-')}"
        workspace.mkdir()
        populate(workspace, count)
        with Store(workspace, max_bytes=1000) as store:
            before = store.usage().entries
            start = time.perf_counter()
            if how == "gc":
                store.gc()
            else:
                store.put(b"n" * 1000, tool="bench.newest")  # keeps only itself
            seconds = time.perf_counter() - start
            evicted = before - store.usage().entries + (how != "gc")
            rows.append((how, evicted, seconds))
    table = Table(title=f"evicting {count:,} entries")
    for column in ("through", "entries evicted", "seconds"):
        table.add_column(column, justify="right" if column != "through" else "left")
    for how, evicted, seconds in rows:
        table.add_row(how, f"{evicted:,}", f"{seconds:.3f}")
    console.print(table)
    console.print("target: eviction of 10,000 entries <= 1 s\n")


def bench_range(root: Path, size_mb: int, n: int) -> None:
    workspace = root / "range"
    workspace.mkdir()
    with Store(workspace) as store:
        handle = store.put(os.urandom(size_mb * MB), tool="bench.big").handle
        offsets = random.Random(2)
        span = size_mb * MB - 4096
        ranged = samples_ms(lambda: store.read_range(handle, offsets.randrange(span), 4096), n)
        path = next((workspace / ".fabric" / "store" / "blobs").rglob("*" + handle[-8:] + "*"))
        with open(path, "rb") as f:
            plain = samples_ms(lambda: (f.seek(offsets.randrange(span)), f.read(4096)), n)
    table = Table(title=f"reading a 4 KB range of a {size_mb} MB blob ({n} random offsets)")
    for column in ("", "p50 ms", "p99 ms"):
        table.add_column(column, justify="right" if column else "left")
    table.add_row(
        "Store.read_range (lookup, 64 KiB chunk read and sha256 check, touch)",
        f"{percentile(ranged, 0.5):.3f}",
        f"{percentile(ranged, 0.99):.3f}",
    )
    table.add_row(
        "plain seek + read of an open file",
        f"{percentile(plain, 0.5):.4f}",
        f"{percentile(plain, 0.99):.4f}",
    )
    console.print(table)
    console.print("target: <= 1 ms\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--dir", type=Path, help="folder on the disk to measure")
    args = parser.parse_args()
    base = args.dir or Path(__file__).resolve().parent
    root = Path(tempfile.mkdtemp(prefix=".bench-store-", dir=base))
    try:
        size = 10 if args.quick else 100
        bench_put(root, size, 2 if args.quick else 5)
        bench_range(root, size, 200 if args.quick else 2000)
        bench_evict(root, 1000 if args.quick else 10_000)
        bench_resolve(root, 5000 if args.quick else 100_000, 500 if args.quick else 5000)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
