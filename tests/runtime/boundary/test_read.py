"""ctx_read: byte ranges, queries and JSON paths over stored payloads."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime import ReadError
from runtime.boundary import BytesReadable, StoredReadable, read
from store import Store

_FIXTURE = [HealthCheck.function_scoped_fixture]
LOG = "".join(
    f"2026-11-30 {'ERROR' if i % 250 == 7 else 'INFO'} request {i} ok\n" for i in range(40_000)
)


def stored(store: Store, data: str | bytes, ctype: str | None = None) -> StoredReadable:
    entry = store.put(data, content_type=ctype)  # type: ignore[arg-type]
    return StoredReadable(store, entry)


def test_a_range_never_splits_a_character(store: Store) -> None:
    text = "αβγδε" * 100
    source = stored(store, text)
    got = read(source, budget=4096, offset=1, length=5)
    assert got.offset == 2 and got.content == "βγ"
    assert got.next_offset == 6 and "continue with" in got.text


@settings(max_examples=60, deadline=None, suppress_health_check=_FIXTURE)
@given(text=st.text(min_size=1, max_size=3000), length=st.integers(8, 700))
def test_following_next_offset_reassembles_the_text(store: Store, text: str, length: int) -> None:
    source = stored(store, text.encode("utf-8", "surrogatepass"), "text")
    parts, offset = [], 0
    while offset is not None:
        got = read(source, budget=4096, offset=offset, length=length)
        parts.append(got.content or "")
        offset = got.next_offset
    assert "".join(parts).encode("utf-8", "surrogatepass") == text.encode("utf-8", "surrogatepass")


def test_a_literal_query_counts_every_match_and_shows_windows(store: Store) -> None:
    source = stored(store, LOG)
    got = read(source, budget=16_384, query="ERROR", max_matches=3, context=1)
    assert got.total_matches == LOG.count("ERROR") == 160
    assert [w.line for w in got.windows] == [8, 258, 508]
    first = got.windows[0].text.splitlines()
    assert first == [
        "       7 | 2026-11-30 INFO request 6 ok",
        ">      8 | 2026-11-30 ERROR request 7 ok",
        "       9 | 2026-11-30 INFO request 8 ok",
    ]
    assert got.windows[0].column == 12
    assert len(got.samples) == 10 and all("ERROR" in s.line for s in got.samples)
    sample = got.samples[3]
    assert LOG.encode()[sample.offset :].startswith(sample.line.encode())


def test_query_is_case_sensitive_unless_asked(store: Store) -> None:
    source = stored(store, LOG)
    assert read(source, budget=4096, query="error").total_matches == 0
    assert read(source, budget=4096, query="error", ignore_case=True).total_matches == 160


def test_regex_queries(store: Store) -> None:
    source = stored(store, LOG)
    got = read(source, budget=4096, query=r"request 1\d{3} ok", regex_mode=True, max_matches=1)
    assert got.total_matches == len(re.findall(r"request 1\d{3} ok", LOG)) == 1000
    assert got.windows[0].line == 1001


def test_an_invalid_regex_is_named(store: Store) -> None:
    with pytest.raises(ReadError) as caught:
        read(stored(store, LOG), budget=4096, query="(unclosed", regex_mode=True)
    assert caught.value.code == "invalid_regex" and "regex=False" in caught.value.message


def test_a_catastrophic_regex_times_out(store: Store) -> None:
    source = stored(store, "a" * 5000 + "!\n")
    with pytest.raises(ReadError) as caught:
        read(source, budget=4096, query=r"(a+)+$", regex_mode=True, regex_timeout=0.2)
    assert caught.value.code == "regex_timeout"


def test_query_output_stays_within_the_budget(store: Store) -> None:
    source = stored(store, LOG)
    got = read(source, budget=1024, query="request", max_matches=500)
    assert len(got.text.encode()) <= 1024 and got.total_matches == 40_000
    assert len(got.windows) < 500


def test_matches_are_found_across_the_store_s_read_pieces(store: Store) -> None:
    """A 12 MB payload streams in 4 MiB pieces; a match that straddles two is still found."""
    piece = 4 * 1024 * 1024
    head = "x" * (piece - 3)
    source = stored(store, head + "NEEDLE\n" + "y\n" * 3_000_000)
    got = read(source, budget=4096, query="NEEDLE")
    assert got.total_matches == 1 and got.windows[0].line == 1


DOC = {
    "ok": True,
    "items": [{"id": i, "name": f"n{i}", "tags": ["a", "b"]} for i in range(50)],
    "odd key": {"x y": 1},
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("$.ok", [True]),
        ("$.items[0].name", ["n0"]),
        ("$.items[-1].id", [49]),
        ("$.items[0:3].id", [0, 1, 2]),
        ("$.items[47:].id", [47, 48, 49]),
        ("$.items[*].tags[1]", ["b"] * 50),
        ('$["odd key"]["x y"]', [1]),
        ("$['odd key'].*", [1]),
        ("$.missing", []),
    ],
)
def test_json_paths(store: Store, path: str, expected: list[object]) -> None:
    got = read(stored(store, json.dumps(DOC)), budget=16_384, json_path=path)
    assert [v.value for v in got.values] == expected and got.total_values == len(expected)


@pytest.mark.parametrize("path", ["items", "$.", "$[", "$.items[x]", "$.items[1:2:3]", "$['a'"])
def test_bad_json_paths_say_what_paths_look_like(store: Store, path: str) -> None:
    with pytest.raises(ReadError) as caught:
        read(stored(store, json.dumps(DOC)), budget=4096, json_path=path)
    assert caught.value.code == "bad_json_path" and "$.items[0:5]" in caught.value.message


def test_json_path_on_text_says_which_mode_fits(store: Store) -> None:
    with pytest.raises(ReadError) as caught:
        read(stored(store, LOG), budget=4096, json_path="$.a")
    assert caught.value.code == "not_json" and 'query="..."' in caught.value.message


def test_a_value_too_large_for_one_read_is_described(store: Store) -> None:
    got = read(stored(store, json.dumps(DOC)), budget=1024, json_path="$.items")
    assert "more than one read holds" in got.text and "$.items[0:10]" in got.text
    assert len(got.text.encode()) <= 1024


def test_one_mode_per_read() -> None:
    source = BytesReadable("f.txt", b"abc")
    with pytest.raises(ReadError) as caught:
        read(source, budget=4096, query="a", json_path="$")
    assert caught.value.code == "bad_query"


def reference(value: object, path: str) -> list[object]:
    """A tiny evaluator over parsed data, for comparison."""
    current = [value]
    for name, index, start, stop, wild in re.findall(
        r"\.(\w+)|\[(-?\d+)\]|\[(-?\d*):(-?\d*)\]|\[(\*)\]", path[1:]
    ):
        nxt: list[object] = []
        for node in current:
            if name and isinstance(node, dict) and name in node:
                nxt.append(node[name])
            elif index and isinstance(node, list) and -len(node) <= int(index) < len(node):
                nxt.append(node[int(index)])
            elif not (name or index or wild) and isinstance(node, list):
                nxt.extend(node[slice(int(start) if start else None, int(stop) if stop else None)])
            elif wild and isinstance(node, list):
                nxt.extend(node)
            elif wild and isinstance(node, dict):
                nxt.extend(node.values())
        current = nxt
    return current


keys = st.sampled_from(["a", "b", "c"])
docs = st.recursive(
    st.integers(0, 9) | st.text(max_size=4),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(keys, c, max_size=3),
    max_leaves=25,
)
steps = [".a", ".b", ".c", "[0]", "[1]", "[-1]", "[*]", "[1:]", "[-2:]", "[:1]"]
paths = st.lists(st.sampled_from(steps), max_size=4).map(lambda chosen: "$" + "".join(chosen))


@settings(max_examples=300, deadline=None, suppress_health_check=_FIXTURE)
@given(doc=docs, path=paths, indent=st.sampled_from([None, 1]))
def test_lazy_json_paths_agree_with_parsed_data(
    store: Store, doc: object, path: str, indent: int | None
) -> None:
    text = json.dumps(doc, indent=indent)
    got = read(stored(store, text, "json"), budget=65_536, json_path=path)
    assert [v.value for v in got.values] == reference(doc, path)


@pytest.mark.parametrize(
    "text", ['{"a" ! 1 ? "b": 2}', '{"a": 1,}', "[1,]", "[1 2]", '{"a": 1 "b": 2}', "{a: 1}"]
)
def test_a_path_read_is_strict_about_delimiters(store: Store, text: str) -> None:
    with pytest.raises(ReadError) as caught:
        read(stored(store, text, "json"), budget=4096, json_path="$.*")
    assert caught.value.code == "not_json" and "not valid JSON" in caught.value.message


@settings(max_examples=300, deadline=None, suppress_health_check=_FIXTURE)
@given(
    doc=st.lists(docs, min_size=1, max_size=3) | st.dictionaries(keys, docs, min_size=1),
    where=st.integers(0, 10_000),
    char=st.sampled_from(list(',:{}[]" x1')),
)
def test_a_wildcard_read_accepts_exactly_the_json_the_decoder_accepts(
    store: Store, doc: object, where: int, char: str
) -> None:
    """One character of a container's JSON changed: "$.*" reads it if and only if it is
    still one JSON value (and then reads the same values as the parsed data)."""
    text = json.dumps(doc)
    at = where % len(text)
    text = text[:at] + char + text[at + 1 :]
    try:
        parsed, _ = json.JSONDecoder().raw_decode(text, len(text) - len(text.lstrip()))
    except json.JSONDecodeError:
        parsed = None
    if parsed is None or not isinstance(parsed, list | dict):
        if text.lstrip()[:1] in ("[", "{"):
            with pytest.raises(ReadError) as caught:
                read(stored(store, text, "json"), budget=65_536, json_path="$.*")
            assert caught.value.code == "not_json"
        return
    got = read(stored(store, text, "json"), budget=65_536, json_path="$.*")
    assert [v.value for v in got.values] == reference(parsed, "$[*]")


def test_a_path_of_positive_steps_reads_a_deep_document_once(store: Store) -> None:
    """Each level of a walk hands its end to the level above, which does not decode the
    child again: 60 levels over a 4 MB leaf stay within the few passes a read may make."""
    doc: object = list(range(400_000))
    for _ in range(60):
        doc = [0, doc]
    source = stored(store, json.dumps(doc), "json")
    for path in ["$" + "[1]" * 60, "$" + "[*]" * 60 + "[0]", "$" + "[1]" * 56 + "[-1]" * 4]:
        got = read(source, budget=4096, json_path=path)
        assert got.total_values >= 1


def test_nested_negative_indexes_are_refused_before_they_reread_the_content(
    store: Store,
) -> None:
    doc: object = list(range(400_000))
    for _ in range(60):
        doc = [0, doc]
    with pytest.raises(ReadError) as caught:
        read(stored(store, json.dumps(doc), "json"), budget=4096, json_path="$" + "[-1]" * 60)
    assert (
        caught.value.code == "json_path_too_costly" and "positive indexes" in caught.value.message
    )


def test_a_path_has_at_most_64_steps(store: Store) -> None:
    with pytest.raises(ReadError) as caught:
        read(stored(store, "[]", "json"), budget=4096, json_path="$" + "[0]" * 65)
    assert caught.value.code == "bad_json_path" and "at most 64" in caught.value.message


def test_json_nested_past_the_decoder_is_refused_with_the_modes_that_fit(store: Store) -> None:
    source = stored(store, "[" * 100_000 + "]" * 100_000, "json")
    with pytest.raises(ReadError) as caught:
        read(source, budget=4096, json_path="$[0]")
    assert caught.value.code == "json_path_too_costly" and 'query="..."' in caught.value.message


def test_a_value_nested_deeper_than_a_read_hands_back_is_refused_naming_its_path(
    store: Store,
) -> None:
    """150 levels decode, but not every serializer or MCP client on the way reads them: the
    read says so, and a value nearer its leaves still reads."""
    doc: object = 1
    for _ in range(150):
        doc = {"k": doc}
    source = stored(store, json.dumps(doc), "json")
    with pytest.raises(ReadError) as caught:
        read(source, budget=4096, json_path="$")
    assert caught.value.code == "json_path_too_costly"
    assert "the value at $ nests deeper than 100 levels" in caught.value.message
    near = read(source, budget=4096, json_path="$" + "['k']" * 60)
    assert near.total_values == 1


@pytest.mark.parametrize("needle", ["ERROR", "aa", "abab", "request 3"])
def test_counts_equal_one_left_to_right_pass_on_large_payloads(store: Store, needle: str) -> None:
    """Past the first windows the count runs piece by piece; it must still equal str.count,
    also for needles whose matches can overlap, and across the 4 MiB pieces."""
    text = (LOG + "aaaaaaa ababab\n") * 8
    got = read(stored(store, text), budget=4096, query=needle, max_matches=2)
    assert got.total_matches == text.count(needle)


@settings(max_examples=300, deadline=None)
@given(key=st.text(max_size=12), value=st.integers())
def test_every_key_a_read_shows_reads_back_by_the_path_it_is_shown_under(
    key: str, value: int
) -> None:
    """The path a JSON path read names a value by (``$["a\\nb"]``, ``$.name``) is a path that
    reads that value: keys with quotes, backslashes, control characters and any Unicode."""
    doc = json.dumps({key: value, "other": None}, ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    )
    found = read(BytesReadable("doc", doc, "json"), budget=4096, json_path="$.*")
    shown = next(v.path for v in found.values if v.value == value)
    again = read(BytesReadable("doc", doc, "json"), budget=4096, json_path=shown)
    assert [v.value for v in again.values] == [value]
