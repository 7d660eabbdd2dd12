"""Patterns are sized before they are compiled: nested counted repeats multiply."""

from __future__ import annotations

import contextlib

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from runtime.boundary import MAX_EXPANSION, PatternTooLarge, check_pattern, expansion


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("abc", 3),
        ("a{300}", 300),
        ("(?:a{300}){300}", 90_000),
        ("(?:a{20000}){20000}", 400_000_000),
        ("a{1,100000}", 1),  # only the lower bound is written out
        ("(?:a|bc){5}", 15),
        ("[a-z{}]{10}", 10),  # a class is one atom, whatever it holds
        (r"\p{L}{3}", 3),  # \p{...} is an escape, not a repeat
        ("x{,5}", 1),
        ("(?x)(?:a{1000}) {1000}", 1_000_001),  # verbose: the space is not there
        ("(?x)(?:a{1000}) # a comment\n{1000}", 1_000_001),
        ("(?ix:(?:a{300})\n{300})", 90_000),
        ("#(?:a{300}){300}", 90_001),  # not verbose: # is a character
    ],
)
def test_expansion_multiplies_lower_bounds(pattern: str, size: int) -> None:
    assert expansion(pattern) == size


@pytest.mark.parametrize(
    "pattern",
    [
        r"\d{4}-\d{2}-\d{2}",
        r"^\s*(ERROR|WARN)\b",
        r"[A-Z]{3,}\d+",
        r"(?i)timeout after \d+ ?ms",
        r"\w+@\w+\.\w{2,6}",
    ],
)
def test_ordinary_patterns_pass(pattern: str) -> None:
    check_pattern(pattern)


def test_a_multiplying_pattern_is_refused_with_the_fix() -> None:
    with pytest.raises(PatternTooLarge, match=r"about 400,000,000 nodes.*a\{3,\} or a\+"):
        check_pattern("(?:a{20000}){20000}")
    with pytest.raises(PatternTooLarge, match="characters"):
        check_pattern("a" * 5000)


@given(st.text(alphabet="ab(){},|*+?[]\\^:0123456789", max_size=60))
def test_any_text_is_sized_without_error(pattern: str) -> None:
    """The sizer never raises on odd input; what it passes compiles within its budget."""
    size = expansion(pattern)
    assert size >= 0
    if size <= MAX_EXPANSION:
        with contextlib.suppress(regex.error):
            regex.compile(pattern)


@given(st.integers(1, 400), st.integers(1, 400))
def test_nested_counts_multiply(inner: int, outer: int) -> None:
    assert expansion(f"(?:a{{{inner}}}){{{outer}}}") == inner * outer
