"""Query windows: matches whose context touches join one window, so no line is shown twice;
each window carries its lines as data (number, text without the gutter, matched or not)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.boundary import BytesReadable, read

_FIXTURE = [HealthCheck.function_scoped_fixture]


def text_of(lines: list[str]) -> BytesReadable:
    return BytesReadable("doc", ("\n".join(lines) + "\n").encode(), "text")


def test_adjacent_matches_are_one_window() -> None:
    lines = [f"line {i}" for i in range(1, 41)]
    for n in (10, 11, 13, 30):
        lines[n - 1] += " HIT"
    got = read(text_of(lines), budget=8192, query="HIT", context=1)
    assert got.total_matches == 4
    assert [(w.line, w.matches) for w in got.windows] == [(10, 3), (30, 1)]
    first = got.windows[0]
    assert [ln.number for ln in first.lines] == [9, 10, 11, 12, 13, 14]
    assert [ln.number for ln in first.lines if ln.hit] == [10, 11, 13]
    assert first.lines[1].text == "line 10 HIT"  # no gutter inside snippets
    assert first.text.splitlines()[1] == ">     10 | line 10 HIT"


def test_a_run_of_matches_is_cut_into_windows_without_repeating_a_line() -> None:
    lines = [f"HIT {i}" for i in range(1, 101)]
    got = read(text_of(lines), budget=65_536, query="HIT", context=2, max_matches=500)
    numbers = [ln.number for w in got.windows for ln in w.lines]
    assert numbers == list(range(1, 101))
    assert sum(w.matches for w in got.windows) == got.total_matches == 100
    assert all(len(w.lines) <= 12 + 2 for w in got.windows)


@settings(max_examples=150, deadline=None, suppress_health_check=_FIXTURE)
@given(
    hits=st.lists(st.booleans(), min_size=1, max_size=300),
    context=st.integers(0, 4),
    wanted=st.integers(1, 30),
)
def test_windows_never_show_a_line_twice_and_mark_every_match(
    hits: list[bool], context: int, wanted: int
) -> None:
    lines = [f"row {i}{' MATCH' if hit else ''}" for i, hit in enumerate(hits, 1)]
    got = read(text_of(lines), budget=1 << 20, query="MATCH", context=context, max_matches=wanted)
    numbers = [ln.number for w in got.windows for ln in w.lines]
    assert numbers == sorted(set(numbers))  # in order, each once
    for window in got.windows:
        for ln in window.lines:
            assert ln.text == lines[ln.number - 1]
            assert ln.hit == hits[ln.number - 1]
        assert window.matches == sum(ln.hit for ln in window.lines)
    assert got.total_matches == sum(hits)
    assert len(got.windows) <= wanted
    if got.total_matches:
        first_hit = hits.index(True) + 1
        assert got.windows[0].line == first_hit


@pytest.mark.parametrize("context", [0, 1, 3])
def test_matches_on_one_line_are_one_window(context: int) -> None:
    got = read(text_of(["a HIT b HIT c HIT", "x"]), budget=4096, query="HIT", context=context)
    assert got.total_matches == 3 and len(got.windows) == 1 and got.windows[0].matches == 3


# -- JSON: matches by item, with their $ paths -------------------------------------------------

TOKEN = "ZQX"
pieces = st.lists(st.sampled_from(["a", " ", "é", '"', "\\", "\n", TOKEN]), max_size=4)
json_docs = st.recursive(
    st.none() | st.booleans() | st.integers() | pieces.map("".join),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(pieces.map("".join), children, max_size=6)
    ),
    max_leaves=60,
)


def value_at(doc: object, path: str) -> object:
    """The value at a path as the windows spell it, read back through json_path."""
    source = BytesReadable("doc", json.dumps(doc).encode(), "json")
    found = read(source, budget=1 << 20, json_path=path)
    assert found.total_values == 1, path
    return found.values[0].value


@settings(max_examples=200, deadline=None, suppress_health_check=_FIXTURE)
@given(doc=json_docs, indent=st.sampled_from([None, 2]), context=st.integers(0, 2))
def test_json_matches_are_reported_at_the_path_of_their_item(
    doc: object, indent: int | None, context: int
) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    got = read(
        BytesReadable("doc", text.encode(), "json"), budget=1 << 20, query=TOKEN, context=context
    )
    assert got.total_matches == text.count(TOKEN)
    held = sum(w.matches for w in got.windows)
    assert held == got.total_matches  # 100 windows hold every match of a small document
    for window in got.windows:
        assert window.path is not None and window.path.startswith("$")
        lines = text.splitlines()
        assert TOKEN in lines[window.line - 1]
        assert lines[window.line - 1][window.column - 1 :].startswith(TOKEN)
        for row in window.lines:
            assert row.path is not None
            value = value_at(doc, row.path)
            raw = json.dumps(value, indent=indent, ensure_ascii=False)
            if row.hit:  # the match is in the item's value, or in its key
                assert TOKEN in raw or TOKEN in row.path


def test_a_query_over_minified_json_names_items_not_line_1() -> None:
    doc = {"items": [{"id": i, "name": f"n{i}"} for i in range(2000)]}
    doc["items"][1234]["name"] = "PLANTED"
    source = BytesReadable("doc", json.dumps(doc).encode(), "json")
    got = read(source, budget=4096, query="PLANTED", context=1)
    (window,) = got.windows
    assert window.path == "$.items[1234].name"
    assert [row.path for row in window.lines] == [
        "$.items[1234].id",
        "$.items[1234].name",
    ]
    assert '> $.items[1234].name = "PLANTED"' in got.text


def test_json_matches_beyond_the_windows_are_counted() -> None:
    doc = [{"v": "HIT"} for _ in range(50)]
    got = read(
        BytesReadable("d", json.dumps(doc).encode(), "json"),
        budget=8192,
        query="HIT",
        context=0,
        max_matches=3,
    )
    assert got.total_matches == 50 and len(got.windows) == 3
    assert "47 more matches after these windows" in got.text


def test_text_that_is_not_json_after_all_is_queried_by_line() -> None:
    got = read(BytesReadable("d", b'{"a": 1,\n"HIT": oops', "json"), budget=4096, query="HIT")
    assert got.total_matches == 1 and got.windows[0].path is None and got.windows[0].line == 2


def test_json_deeper_than_the_walk_goes_is_shown_as_one_item() -> None:
    """Each level the walk descends decodes its part again, so it descends 8 at most."""
    text = "[" * 30 + '"HIT"' + "]" * 30
    got = read(BytesReadable("d", text.encode(), "json"), budget=4096, query="HIT")
    assert got.total_matches == 1 and got.windows[0].path == "$" + "[0]" * 8


def test_json_with_more_items_than_the_walk_visits_is_queried_by_line() -> None:
    text = "[" + "1," * 300_000 + '"HIT"]'
    got = read(BytesReadable("d", text.encode(), "json"), budget=4096, query="HIT")
    assert got.total_matches == 1 and got.windows[0].path is None and got.windows[0].line == 1


def test_the_matches_inside_one_item_are_counted_at_once() -> None:
    text = json.dumps({"log": "a" * 1_000_000, "other": "a"})
    got = read(BytesReadable("d", text.encode(), "json"), budget=4096, query="a", context=0)
    assert got.total_matches == 1_000_001
    (window,) = got.windows  # adjacent items share a window
    assert window.matches == 1_000_001 and window.path == "$.log"
    assert [row.path for row in window.lines] == ["$.log", "$.other"]


def test_the_heading_counts_the_windows_shown_not_those_found() -> None:
    lines = [f"{i} HIT {'x' * 60}" if i % 10 == 0 else f"{i} row" for i in range(3000)]
    got = read(text_of(lines), budget=4000, query="HIT", max_matches=100)
    shown = sum(w.matches for w in got.windows)
    assert f"showing {shown} in {len(got.windows)} windows:" in got.text
    assert len(got.windows) < 100 and "more windows did not fit this read" in got.text
    if "sampled from the other" in got.text:
        assert got.samples
