"""The store under stress: many processes at once, writers killed mid-put, a full disk.

Every scenario ends with the same promises: every handle that was handed out resolves to
exactly its content, no partial blob is ever served, and index and files agree after gc.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from store import Store, StoreUnavailable

REPO = Path(__file__).resolve().parents[2]


def run_python(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


def payload(seed: str, size: int) -> bytes:
    block = hashlib.sha256(seed.encode()).digest()
    return (block * (size // 32 + 1))[:size]


WORKER = """
import hashlib, json, sys
from store import Store

def payload(seed, size):
    block = hashlib.sha256(seed.encode()).digest()
    return (block * (size // 32 + 1))[:size]

workspace, number = sys.argv[1], int(sys.argv[2])
with Store(workspace) as store:
    for i in range(200):
        variant = i % 40                      # shared by all workers: overlapping payloads
        size = 100_000 if variant % 10 == 0 else 200 + variant
        data = payload(f"v{variant}", size)
        entry = store.put(data, tool=f"tools.w{number}", args={"i": i})
        assert store.get(entry.handle) == data
        if number == 0 and i % 25 == 0:
            store.gc(temp_grace_s=3600)       # gc racing the other writers
        print(json.dumps([entry.handle, variant, size]), flush=True)
"""


def test_eight_processes_putting_and_reading_at_once(tmp_path: Path) -> None:
    """8 processes x 200 puts and reads of overlapping payloads, one of them running gc: every
    handle resolves to exactly its content and the index is consistent afterwards."""
    procs = [run_python(WORKER, str(tmp_path), str(n)) for n in range(8)]
    handed_out: dict[str, bytes] = {}
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        for line in out.splitlines():
            handle, variant, size = json.loads(line)
            handed_out[handle] = payload(f"v{variant}", size)
    assert len(handed_out) == 8 * 200
    with Store(tmp_path) as store:
        for handle, data in handed_out.items():
            assert store.get(handle) == data
        assert store.usage().blobs == 40
        assert store.check(verify=True).ok
        store.gc(temp_grace_s=0)
        report = store.check(verify=True)
        assert report.ok and report.temp_files == 0


KILLED_WRITER = """
import hashlib, json, random, sys
from store import Store

workspace, round_ = sys.argv[1], int(sys.argv[2])
rng = random.Random(round_)
with Store(workspace) as store:
    print("ready", flush=True)
    for i in range(10_000):
        size = rng.choice([10, 5000, 70_000, 1_000_000, 3_000_000])
        block = hashlib.sha256(f"{round_}-{i}".encode()).digest()
        data = (block * (size // 32 + 1))[:size]
        entry = store.put(data, tool="tools.killed", args={"round": round_, "i": i})
        print(json.dumps([entry.handle, hashlib.sha256(data).hexdigest()]), flush=True)
"""


def test_writers_killed_mid_put_never_leave_a_partial_blob(tmp_path: Path) -> None:
    """SIGKILL at random points of many puts: on reopen the store is consistent, every handle
    handed out before the kill still resolves, and gc clears the leftovers."""
    rng = random.Random(7)
    committed: dict[str, str] = {}
    for round_ in range(20):
        proc = run_python(KILLED_WRITER, str(tmp_path), str(round_))
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.25))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        for line in out.splitlines():
            if line.startswith("["):
                handle, sha = json.loads(line)
                committed[handle] = sha
        with Store(tmp_path) as store:
            report = store.check(verify=True)
            assert report.rows_without_blob == [] and report.corrupt == []
            for handle, sha in committed.items():
                assert hashlib.sha256(store.get(handle)).hexdigest() == sha
    assert len(committed) > 20
    with Store(tmp_path) as store:
        leftovers = store.check()
        # the kills did land inside puts: half-written temporaries or blobs without a row
        assert leftovers.temp_files + len(leftovers.orphan_blobs) > 0
        store.gc(temp_grace_s=0)
        report = store.check(verify=True)
        assert report.ok and report.temp_files == 0


DISK_FULL = """
import resource, signal, sys
from store import Store, StoreUnavailable

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
with Store(sys.argv[1]) as store:
    resource.setrlimit(resource.RLIMIT_FSIZE, (512 * 1024, 512 * 1024))
    try:
        store.put(b"x" * (2 * 1024 * 1024), tool="tools.big")
    except StoreUnavailable as exc:
        print("refused:", exc)
"""


def test_a_write_that_hits_the_file_size_limit_fails_cleanly(tmp_path: Path) -> None:
    """A put that the OS refuses (EFBIG) raises StoreUnavailable; what was stored before is
    intact and nothing half-written remains."""
    with Store(tmp_path) as store:
        earlier = [store.put(f"earlier {i}", tool="tools.read", args={"i": i}) for i in range(5)]
    out, err = run_python(DISK_FULL, str(tmp_path)).communicate(timeout=60)
    assert "refused:" in out and "full" in out and "Nothing already stored was changed" in out, err
    with Store(tmp_path) as store:
        for i, entry in enumerate(earlier):
            assert store.get(entry.handle) == f"earlier {i}".encode()
        report = store.check(verify=True)
        assert report.ok and report.temp_files == 0 and store.usage().entries == 5


@pytest.fixture
def small_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip("mounting a tmpfs needs root: " + done.stderr.decode().strip())
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_a_clear_error_and_the_store_stays_intact(small_disk: Path) -> None:
    """On a 3 MB tmpfs, puts fill the disk: the failing one says the disk is full, the ones
    before still resolve, and after gc index and files agree."""
    stored: list[tuple[str, bytes]] = []
    with Store(small_disk) as store:
        with pytest.raises(StoreUnavailable, match="full") as caught:
            for i in range(100):
                data = payload(f"fill-{i}", 200_000)
                stored.append((store.put(data, tool="tools.fill", args={"i": i}).handle, data))
        assert "Nothing already stored was changed" in str(caught.value)
        assert len(stored) >= 5
    for leftover in small_disk.rglob(".tmp-*"):
        pytest.fail(f"a temporary file was left behind: {leftover}")
    os.sync()
    with Store(small_disk) as store:
        for handle, data in stored:
            assert store.get(handle) == data
        store.gc(temp_grace_s=0)
        assert store.check(verify=True).ok
