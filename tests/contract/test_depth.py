"""How deep a value nests is read from its JSON text, strings with brackets, quotes and
escapes in them included, and agrees with the depth of the value itself."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from contract import MAX_DEPTH, json_nests_within

_TEXT = st.text(st.sampled_from('ab[]{}"\\\n\u00e9'), max_size=6)
_VALUES = st.recursive(
    st.none() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=30,
)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


@given(_VALUES, st.integers(0, 8))
@example("[", 0)  # brackets inside a string only: no level at all
@example(["["], 0)
def test_the_text_tells_the_depth_of_the_value(value: Any, limit: int) -> None:
    text = json.dumps(value, ensure_ascii=bool(limit % 2))
    assert json_nests_within(text, limit) is (_depth(value) <= limit)
    assert json_nests_within(text.encode(), limit) is (_depth(value) <= limit)


def test_max_depth_levels_cross_and_one_more_does_not() -> None:
    value: Any = "x"
    for _ in range(MAX_DEPTH):
        value = [value]
    assert json_nests_within(json.dumps(value))
    assert not json_nests_within(json.dumps([value]))
    assert not json_nests_within(json.dumps({"k": value, "s": "]]]" * 200}))
