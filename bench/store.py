"""Speed of the content-addressed store, beside the physical limit of the same disk.

    python bench/store.py [--quick] [--dir PATH]
        [--only put|range|evict|resolve|indexing|search|bank-update|bank-select]

Prints one table per target of issue "Content-addressed store":

- putting a 100 MB payload, beside sha256 plus a plain write of the same bytes to the same
  folder (with and without fsync, since the store's put is durable);
- resolving a handle (``stat``) and getting a small payload with 100,000 entries in the index;
- evicting 10,000 entries (through ``gc`` and through the ``put`` that goes over budget);
- reading a 4 KB range from a 100 MB blob;
- what indexing adds to putting text, beside the same bytes stored as binary (not indexed);
- searching 10,000 stored payloads (1-32 KB of log-like text each) through the full-text index,
  beside the literal scan that reads every byte of them, for the same queries;
- ``ContextBank.update`` merging lorebook entries into one disk page: from one process (one
  caller, and 16 asyncio tasks), beside plain atomic file replacements of the same bytes, and
  from 4 processes at once, counting the merges that reached the page (issue "Agent memory");
- ``ContextWindow.select`` over a 10,000-entry lorebook for 2,000-word texts, counted with
  tiktoken, beside a whole-word regular expression per entry.

Ratios are computed within this one run. ``--dir`` picks the disk (default: a temporary folder
under the repository, i.e. the disk a workspace would be on).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runtime.boundary import TokenCounter
from store import ContextBank, ContextWindow, LorebookEntry, StorageMode, Store, TokenBudget

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


def each_ms(fn: Callable[[str], object], args: list[str]) -> list[float]:
    """Milliseconds of ``fn`` on each of ``args`` in turn."""
    left = iter(args)
    return samples_ms(lambda: fn(next(left)), len(args))


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


_LEVELS = ("INFO",) * 6 + ("WARN", "DEBUG", "ERROR")


def _log_payload(i: int) -> str:
    """Payload ``i``: 1-32 KB of log lines, words drawn from a 20,000-word vocabulary with
    Zipf's law (the word of rank r about 1/r as often as the first); its own trace id in its first line, and "disk full" in 1 payload of 100."""
    rng = random.Random(i)
    words = _vocabulary()
    size = int(2 ** rng.uniform(10, 15))
    lines = [f"trace-{i:06x} started by worker-{i % 16}"]
    total = len(lines[0])
    while total < size:
        picked = " ".join(words[int(len(words) ** rng.random()) - 1] for _ in range(6))
        line = (
            f"2026-11-30T12:{rng.randrange(60):02}:{rng.randrange(60):02} {rng.choice(_LEVELS)} "
            f"api-{rng.randrange(8)} request {rng.randrange(10**6)} took {rng.randrange(1, 999)} ms "
            f"path=/v1/{picked.replace(' ', '/', 1)}"
        )
        lines.append(line)
        total += len(line) + 1
    if i % 100 == 7:
        lines.insert(rng.randrange(1, len(lines)), "ERROR write failed: disk full on /dev/sdb1")
    return "\n".join(lines) + "\n"


@functools.cache
def _vocabulary() -> list[str]:
    rng = random.Random(0)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(4, 10))) for _ in range(20_000)]


def _populate_logs(args: tuple[str, int, int]) -> int:
    workspace, start, count = args
    with Store(workspace) as store:
        for i in range(start, start + count):
            store.put(_log_payload(i), tool="bench.log", args={"i": i})
    return count


def bench_indexing(root: Path, n: int) -> None:
    """What indexing adds to a put: the same text stored as text (indexed) and as bytes (not),
    taking turns; only the first MiB of a larger payload is indexed."""
    workspace = root / "indexing"
    workspace.mkdir()
    text = "".join(_log_payload(i) for i in range(500))
    table = Table(title=f"what the full-text index adds to a put (p50 of {n})")
    for column in ("payload", "as text, indexed ms", "as bytes ms", "added ms"):
        table.add_column(column, justify="left" if column == "payload" else "right")
    with Store(workspace) as store:
        store.put("warm up")
        for size in (16 * 1024, 256 * 1024, MB, 4 * MB):
            body = text[:size]
            indexed, plain = [], []
            for i in range(n):  # a new payload each time, or the put would find it stored
                unique = f"{i:08} {size} " + body
                start = time.perf_counter()
                store.put(unique, tool="bench.text")
                indexed.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                store.put(unique.encode(), content_type="bytes", tool="bench.bytes")
                plain.append((time.perf_counter() - start) * 1000)
            p50, base = percentile(indexed, 0.5), percentile(plain, 0.5)
            label = f"{size // 1024:,} KiB of log text"
            table.add_row(label, f"{p50:.1f}", f"{base:.1f}", f"{p50 - base:.1f}")
    console.print(table)
    console.print(
        "(puts are durable: both columns include the fsyncs of the blob and its folder)\n"
    )


def bench_search(root: Path, count: int, n: int) -> None:
    workspace = root / "search"
    workspace.mkdir()
    start = time.perf_counter()
    step = -(-count // 4)
    jobs = [(str(workspace), i, min(step, count - i)) for i in range(0, count, step)]
    with ProcessPoolExecutor(4) as pool:
        list(pool.map(_populate_logs, jobs))
    fill_s = time.perf_counter() - start
    words, pick = _vocabulary(), random.Random(3)

    def rare() -> str:  # ranks 1,000 to 10,000: in a few to a few hundred payloads
        return words[pick.randrange(1000, 10_000)]

    kinds: dict[str, Callable[[], tuple[str, str]]] = {  # the index's query, the scan's text
        "a trace id": lambda: (f"trace-{pick.randrange(count):06x}",) * 2,
        "a rare word": lambda: (w := rare(), w),
        "a common word": lambda: (w := words[pick.randrange(3)], w),
        '"disk full"': lambda: ('"disk full"', "disk full"),
        "rare word + error": lambda: (f"{(w := rare())} error", w),
    }
    rows = []
    with Store(workspace) as store:
        usage = store.usage()
        store.search("warm up")
        for kind, make in kinds.items():
            queries = [make() for _ in range(n)]
            matching = statistics.median(store.search(q).total for q, _ in queries)
            fts = each_ms(store.search, [q for q, _ in queries])
            scan = each_ms(
                lambda text: store.scan(text, max_hits=10**9, max_bytes=2**40),
                [text for _, text in queries[:3]],
            )
            rows.append((kind, f"{matching:,.0f}", fts, scan))
    rows.append(
        ("all five kinds", "", [t for r in rows for t in r[2]], [t for r in rows for t in r[3]])
    )
    store_dir = workspace / ".fabric" / "store"
    index_mb = sum(f.stat().st_size for f in store_dir.glob("index.db*")) / MB
    table = Table(title=f"searching {usage.entries:,} stored payloads ({usage.bytes / MB:.0f} MB)")
    for column in ("query", "matching", "p50 ms", "p99 ms", "scan p50 ms", "scan / index"):
        table.add_column(column, justify="left" if column == "query" else "right")
    for kind, matching, fts, scan in rows:
        p50, scan50 = percentile(fts, 0.5), percentile(scan, 0.5)
        p99 = percentile(fts, 0.99)
        table.add_row(
            kind, matching, f"{p50:.2f}", f"{p99:.2f}", f"{scan50:.0f}", f"{scan50 / p50:,.0f}x"
        )
    console.print(table)
    console.print(
        f"(p50 and p99: {n} queries of each kind through Store.search, limit 10; matching: the "
        "median number of entries one matches; scan: 3 of them through Store.scan, which reads "
        "every byte, looking for the query's first word as literal text. Filled from 4 "
        f"processes in {fill_s:.0f} s; index.db is {index_mb:.0f} MB)"
    )
    console.print("target: search over 10,000 stored payloads answers in under 50 ms p50\n")


def _merge(key: str) -> Callable[[ContextWindow], ContextWindow]:
    new = ContextWindow.of(entries=[LorebookEntry(key=key, value=f"fact about {key}", weight=1)])
    return lambda window: window.merge(new)


def _bank_writer(args: tuple[str, int, int]) -> float:
    workspace, n, count = args
    bank = ContextBank(workspace)
    start = time.perf_counter()
    for i in range(count):
        bank.update("shared", _merge(f"proc{n}-{i}"))
    return time.perf_counter() - start


def _replace_file(folder: Path, data: bytes, n: int) -> float:
    """n atomic replacements of one file by ``data`` (temporary file + rename), no fsync."""
    target = folder / "plain.json"
    start = time.perf_counter()
    for _ in range(n):
        tmp = folder / f".tmp-{random.random()}"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    return time.perf_counter() - start


def bench_bank_update(root: Path, n: int) -> None:
    import asyncio

    workspace = root / "bank"
    workspace.mkdir()
    rows = []
    for mode in (StorageMode.MEMORY_AND_DISK, StorageMode.DISK_ONLY):
        bank = ContextBank(workspace)
        key = f"one-{mode.value.lower()}"
        bank.emplace(key, ContextWindow(), mode)
        start = time.perf_counter()
        for i in range(n):
            bank.update(key, _merge(f"e{i}"))
        seconds = time.perf_counter() - start
        assert len(bank.get(key).lorebook) == n
        rows.append((f"one caller, {mode.value}", n, n, seconds))
    final = (workspace / ".fabric" / "bank" / "one-memory_and_disk.bank.json").read_bytes()

    bank = ContextBank(workspace)
    bank.emplace("tasks", ContextWindow())
    per_task = n // 16

    async def writer(t: int) -> None:
        for i in range(per_task):
            await asyncio.to_thread(bank.update, "tasks", _merge(f"t{t}-{i}"))

    async def all_tasks() -> None:
        await asyncio.gather(*(writer(t) for t in range(16)))

    start = time.perf_counter()
    asyncio.run(all_tasks())
    seconds = time.perf_counter() - start
    present = len(ContextBank(workspace).get("tasks").lorebook)
    rows.append(("16 asyncio tasks", per_task * 16, present, seconds))

    ContextBank(workspace).emplace("shared", ContextWindow())
    per_proc = n // 4
    start = time.perf_counter()
    with ProcessPoolExecutor(4) as pool:
        list(pool.map(_bank_writer, [(str(workspace), p, per_proc) for p in range(4)]))
    seconds = time.perf_counter() - start
    present = len(ContextBank(workspace).get("shared").lorebook)
    rows.append(("4 processes", per_proc * 4, present, seconds))

    plain = workspace / "plain"
    plain.mkdir()
    plain_s = _replace_file(plain, final, n)
    table = Table(title=f"ContextBank.update: {n:,} lorebook merges into one disk page")
    for column in ("writers", "merges", "on the page", "lost", "merges/s", "plain replaces / this"):
        table.add_column(column, justify="left" if column == "writers" else "right")
    for label, merges, on_page, seconds in rows:
        rate = merges / seconds
        table.add_row(
            label,
            f"{merges:,}",
            f"{on_page:,}",
            f"{merges - on_page:,}",
            f"{rate:,.0f}",
            f"{(n / plain_s) / rate:.2f}",
        )
    table.add_row(
        "plain file replaces",
        f"{n:,}",
        "",
        "",
        f"{n / plain_s:,.0f}",
        "1.00",
    )
    console.print(table)
    console.print(
        f"(each merge adds one entry, so the page grows from 0 to {n:,} entries, "
        f"{len(final) / 1024:.0f} KB at the end; tasks and processes write MEMORY_AND_DISK "
        "pages; plain file replaces: a temporary file with the final page's bytes renamed over "
        "one file, no lock, no read; process start-up is inside the 4-process time)"
    )
    console.print(
        "target: update on a disk page at least 2,000 merges/s from one process, and no lost "
        "update at 4 processes\n"
    )


def _lorebook(entries: int, pick: random.Random) -> tuple[ContextWindow, list[str]]:
    words = _vocabulary()
    keys = [f"{words[i % len(words)]}{i}" for i in range(entries)]
    lorebook = [
        LorebookEntry(
            key=key,
            value=" ".join(pick.choice(words) for _ in range(12)),
            weight=pick.randrange(10),
            alias_keys=[f"{key}-alias"],
            linked_keys=[keys[pick.randrange(entries)]] if i % 10 == 0 else [],
        )
        for i, key in enumerate(keys)
    ]
    return ContextWindow.of(entries=lorebook), keys


def bench_bank_select(root: Path, entries: int, n: int) -> None:
    import re

    pick = random.Random(5)
    window, keys = _lorebook(entries, pick)
    words = _vocabulary()
    texts = [
        " ".join(
            pick.choice(keys) if pick.random() < 0.05 else pick.choice(words) for _ in range(2000)
        )
        for _ in range(n)
    ]
    counter = TokenCounter()
    counter.count("warm up")
    budget = TokenBudget(2000, count=counter.count)
    start = time.perf_counter()
    first = window.select(texts[0], budget)
    first_ms = (time.perf_counter() - start) * 1000
    fabric = each_ms(lambda text: window.select(text, budget), texts)
    patterns = [
        (entry, [re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.I) for name in entry.names()])
        for entry in window.lorebook.values()
    ]

    def naive(text: str) -> int:
        hits = [e for e, pats in patterns if any(p.search(text) for p in pats)]
        return sum(counter.count(e.render()) for e in hits)

    regex = each_ms(naive, texts[:3])
    p50, p99, naive50 = percentile(fabric, 0.5), percentile(fabric, 0.99), percentile(regex, 0.5)
    table = Table(title=f"ContextWindow.select over a {entries:,}-entry lorebook, 2,000-word texts")
    for column in ("", "p50 ms", "p99 ms", "regex / this"):
        table.add_column(column, justify="left" if not column else "right")
    table.add_row(
        "select",
        f"{p50:.2f}",
        f"{p99:.2f}",
        f"{naive50 / p50:.0f}x",
    )
    table.add_row("first select on the window", f"{first_ms:.2f}", "", "")
    table.add_row("a regex per key and alias", f"{naive50:.0f}", "", "1x")
    console.print(table)
    console.print(
        f"({n} texts, about {len(first.entries) + len(first.omitted)} entries triggered each, "
        f"{len(first.entries)} fit the {budget.max_tokens}-token budget, counted with "
        "o200k_base; the first select builds the trigger index and counts every triggered "
        "entry, later ones count only entries not counted before; the regex row tries a "
        "whole-word pattern per key and alias on each text, then counts the hits)"
    )
    console.print("target: select over a 10,000-entry lorebook, 2,000-word text, under 20 ms p50\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--dir", type=Path, help="folder on the disk to measure")
    quick = parser.parse_known_args()[0].quick
    size = 10 if quick else 100
    tables: dict[str, Callable[[Path], None]] = {
        "put": lambda root: bench_put(root, size, 2 if quick else 5),
        "range": lambda root: bench_range(root, size, 200 if quick else 2000),
        "evict": lambda root: bench_evict(root, 1000 if quick else 10_000),
        "resolve": lambda root: bench_resolve(
            root, 5000 if quick else 100_000, 500 if quick else 5000
        ),
        "indexing": lambda root: bench_indexing(root, 5 if quick else 20),
        "search": lambda root: bench_search(root, 1000 if quick else 10_000, 20 if quick else 100),
        "bank-update": lambda root: bench_bank_update(root, 400 if quick else 2000),
        "bank-select": lambda root: bench_bank_select(
            root, 1000 if quick else 10_000, 20 if quick else 200
        ),
    }
    parser.add_argument("--only", choices=tables, action="append", help="this table (repeatable)")
    args = parser.parse_args()
    base = args.dir or Path(__file__).resolve().parent
    root = Path(tempfile.mkdtemp(prefix=".bench-store-", dir=base))
    try:
        for name in args.only or tables:
            tables[name](root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
