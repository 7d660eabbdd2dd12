"""Token counts with o200k_base, offline, and safe on pathological input."""

from __future__ import annotations

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
