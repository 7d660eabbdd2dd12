"""The host's one way into CPython's parser: under one lock, and never for an f-string of
so many fields that CPython 3.11 would hold the parser (and the GIL) for seconds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contract import parse
from contract._python import MAX_FSTRING_FIELDS, fstring_fields


def test_an_f_string_of_too_many_fields_is_refused_before_the_parser_sees_it() -> None:
    source = 'x = f"' + "{a}" * (MAX_FSTRING_FIELDS + 1) + '"\n'
    with pytest.raises(ValueError, match=f"an f-string holds {MAX_FSTRING_FIELDS + 1} replacement"):
        parse(source)
    assert parse('x = f"' + "{a}" * MAX_FSTRING_FIELDS + '"\n').body


@pytest.mark.parametrize(
    ("source", "most"),
    [
        ('x = "{}{}{}"', 0),  # not an f-string
        ("x = f\"{a}{b}\" + f'{c}'", 2),
        ('x = rf"{a}" + Fr"{b}{c}{d}"', 3),
        ('x = f"""{a}\n{b}\n{c}"""', 3),
        ("def f(): pass", 0),
        ('elif f"{a}"', 1),
    ],
)
def test_fields_are_counted_per_f_string(source: str, most: int) -> None:
    assert fstring_fields(source) == most


@given(st.lists(st.integers(0, 50), max_size=8))
def test_the_count_never_misses_a_field(counts: list[int]) -> None:
    """Over-counting is allowed (``{{``), under-counting never: each f-string's fields are
    found, however many f-strings a line holds."""
    source = " + ".join('f"' + "{a}" * n + '"' for n in counts) or "x"
    assert fstring_fields(source) >= max(counts, default=0)
