"""Full-text search of stored payloads (``Store.search``): ranked with BM25, each hit located
byte for byte, bounded output, and no query a user types ever reaching FTS5 as syntax."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import INDEXED_BYTES, InvalidRequest, Store

_FIXTURE = [HealthCheck.function_scoped_fixture]


def test_a_hit_names_the_entry_the_line_and_where_the_match_is(store: Store) -> None:
    """handle, key, the 1-based line, the match's byte offset and length, its line's offset,
    and the line itself."""
    lines = [f"2026-11-30 INFO request {i} served" for i in range(1, 501)]
    lines[320] = "2026-11-30 ERROR disk full on /dev/sda1"
    log = "\n".join(lines) + "\n"
    entry = store.put(log, tool="tools.read", args={"path": "app.log"}, key="applog")
    store.put("nothing to see here")
    found = store.search("error")
    assert found.total == 1 and found.pending == 0 and found.match == "all"
    [hit] = found.hits
    payload = log.encode()
    assert (hit.handle, hit.key, hit.line) == (entry.handle, "applog", 321)
    assert payload[hit.offset : hit.offset + hit.length] == b"ERROR" and hit.match == "ERROR"
    assert payload[hit.line_offset :].startswith(lines[320].encode())
    assert hit.text == lines[320]
    assert (hit.bytes, hit.indexed) == (len(payload), len(payload))


def test_bm25_ranks_where_the_words_weigh_most_first(store: Store) -> None:
    """A short text that repeats the word beats a long one that mentions it once; with
    match="any", a rare word outweighs a common one."""
    filler = " ".join(f"word{i}" for i in range(300))
    once = store.put(f"{filler} quokka {filler}")
    often = store.put("quokka quokka quokka sighted")
    store.put("no such animal")
    found = store.search("quokka")
    assert [h.handle for h in found.hits] == [often.handle, once.handle]
    assert found.hits[0].score > found.hits[1].score
    for i in range(20):
        store.put(f"common entry {i}")
    rare = store.put("common and numbat")
    assert store.search("common numbat", match="any").hits[0].handle == rare.handle


def test_entries_sharing_a_blob_are_each_found_and_outlive_each_other(store: Store) -> None:
    """Identical payloads are stored (and indexed) once; each entry is a hit of its own, and
    removing one leaves the other findable."""
    first = store.put("shared payload about wombats", key="first")
    second = store.put("shared payload about wombats", key="second")
    assert first.sha256 == second.sha256 and first.handle != second.handle
    assert {h.key for h in store.search("wombats").hits} == {"first", "second"}
    store.delete("first")
    found = store.search("wombats")
    assert [h.key for h in found.hits] == ["second"] and found.total == 1


def test_words_phrases_and_prefixes(store: Store) -> None:
    """Every word must appear in one passage; "quoted" words must be adjacent; word* is a
    prefix; case and accents do not matter; punctuation only separates words."""
    near = store.put("the disk is full again")
    adjacent = store.put("error: disk-full on sda1")
    assert {h.handle for h in store.search("full disk").hits} == {near.handle, adjacent.handle}
    assert [h.handle for h in store.search('"disk full"').hits] == [adjacent.handle]
    assert [h.match for h in store.search("sda*").hits] == ["sda1"]
    accented = store.put("Café Wörld")
    assert [h.handle for h in store.search("cafe WORLD").hits] == [accented.handle]
    assert store.search("disk nothere").hits == []


def test_json_is_searched_as_text(store: Store) -> None:
    """Keys and values of a JSON payload are words like any others."""
    users = [{"name": "alice", "role": "admin"}, {"name": "bob", "role": "viewer"}]
    entry = store.put(users, key="users")
    [hit] = store.search("bob viewer").hits
    assert hit.handle == entry.handle and hit.match == "bob"
    assert json.dumps(users, separators=(",", ":")).encode()[hit.offset :].startswith(b"bob")


def test_binary_payloads_are_not_indexed(store: Store) -> None:
    store.put(b"\xff\xfe needle in bytes")
    text = store.put("needle in text")
    assert [h.handle for h in store.search("needle").hits] == [text.handle]


# -- what a user types --------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    ['foo-bar "x', "AND(", "NEAR(a b", "a OR", "NOT x", "col:x", "^x", "x*y", "a + b", 'say "hi'],
)
def test_fts5_operators_and_quotes_are_taken_as_text(store: Store, query: str) -> None:
    """What would be FTS5 syntax is searched as the words in it."""
    entry = store.put(f"before {query} after")
    found = store.search(query)
    assert [h.handle for h in found.hits] == [entry.handle]
    assert store.search(query, match="any").total == 1


@settings(max_examples=300, deadline=None, suppress_health_check=_FIXTURE)
@given(
    query=st.text(min_size=1, max_size=60).filter(str.strip), match=st.sampled_from(["all", "any"])
)
def test_no_query_is_ever_an_fts5_error(store: Store, query: str, match: str) -> None:
    """Any text at all either searches or is refused with a message about the query; never an
    FTS5 syntax error, never a failing store."""
    store.put("some stored text to search")
    try:
        store.search(query, match=match)  # type: ignore[arg-type]
    except InvalidRequest as exc:
        assert str(exc).startswith(f"query {query[:80]!r} has no word to search for")


@pytest.mark.parametrize(
    ("query", "has_word"),
    [("a\x00b", True), ("\x00", False), ("\ud800 a", True), ("\udfff", False)],
)
@pytest.mark.parametrize("match", ["all", "any", "fts5"])
def test_nul_and_lone_surrogates_are_word_breaks(
    store: Store, query: str, has_word: bool, match: str
) -> None:
    """A NUL would end FTS5's string and a lone surrogate cannot be sent to SQLite (an MCP
    client's JSON can carry both): they separate words like punctuation, and a query left
    with no word is refused as such."""
    store.put("a b")
    if has_word:
        assert store.search(query, match=match).total == 1  # type: ignore[arg-type]
    else:
        with pytest.raises(InvalidRequest, match=r"^query "):
            store.search(query, match=match)  # type: ignore[arg-type]


def test_a_query_without_a_word_says_so_and_what_to_do(store: Store) -> None:
    with pytest.raises(InvalidRequest, match=r"query '--' has no word.*ctx_read\(handle"):
        store.search("--")


def test_fts5_mode_takes_fts5_syntax_and_names_the_query_when_refused(store: Store) -> None:
    """match="fts5" reads the query as FTS5 syntax; a query FTS5 refuses is an InvalidRequest
    that names the field and the way out, not a failing store."""
    store.put("alpha beta")
    gamma = store.put("gamma only")
    assert store.search("alpha OR gamma", match="fts5").total == 2
    assert [h.handle for h in store.search("gamma NOT alpha", match="fts5").hits] == [gamma.handle]
    for bad in ("AND(", "a:b", '"open', "NEAR(a b, x)", "full:", "locked:"):
        with pytest.raises(InvalidRequest, match=r'^query .* is not FTS5 syntax.*match="all"'):
            store.search(bad, match="fts5")


def test_bad_arguments_are_refused_with_the_field(store: Store) -> None:
    for kwargs, field in (
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"limit": True}, "limit"),
        ({"match": "regex"}, "match"),
    ):
        with pytest.raises(InvalidRequest, match=f"^{field} must be"):
            store.search("x", **kwargs)  # type: ignore[arg-type]
    for query in ("", "   ", "x" * 1001):
        with pytest.raises(InvalidRequest, match=r"^query must be"):
            store.search(query)


# -- bounds ---------------------------------------------------------------------------------


def test_limit_bounds_the_hits_and_total_counts_them_all(store: Store) -> None:
    for i in range(30):
        store.put(f"payload {i} mentions the keyword")
    found = store.search("keyword", limit=5)
    assert len(found.hits) == 5 and found.total == 30
    assert len(store.search("keyword").hits) == 10  # the default


def test_a_hit_on_a_huge_line_shows_a_bounded_window(store: Store) -> None:
    """A megabyte of JSON on one line: the hit's text is about 200 bytes around the match,
    cut with '...', and a very long matched word is cut too."""
    rows = [{"id": i, "note": f"row number {i}"} for i in range(20_000)]
    rows[12_345]["note"] = "the needle row"
    entry = store.put(rows)
    [hit] = store.search("needle").hits
    assert hit.line == 1 and hit.text.startswith("...") and hit.text.endswith("...")
    assert "the needle row" in hit.text and len(hit.text.encode()) <= 206
    assert store.get(entry.handle)[hit.offset : hit.offset + 6] == b"needle"
    store.put("x " + "y" * 3000 + " z")
    [long] = store.search("yyy*").hits
    assert long.length == 3000 and long.match.startswith("yyy")
    assert len(long.text.encode()) <= 206 and "..." in long.text


def test_only_the_head_of_a_huge_payload_is_searchable(store: Store) -> None:
    """The first INDEXED_BYTES of a payload are indexed; what lies past them is left to the
    literal scan, which reads every byte."""
    line = "filler line of a large log\n"
    head = "headword here\n" + line * (INDEXED_BYTES // len(line))
    entry = store.put(head + "tailword here\n")
    [hit] = store.search("headword").hits
    assert (hit.handle, hit.bytes, hit.indexed) == (entry.handle, entry.bytes, INDEXED_BYTES)
    assert store.search("tailword").hits == []
    assert [h.handle for h in store.scan("tailword").hits] == [entry.handle]


# -- offsets are true -----------------------------------------------------------------------

_NEEDLE = "zqxneedle"
_CHARS = st.sampled_from(["é", "ß", "ж", "語", "🦘", "a", "1", " ", "\n", ",", "-", "\t", "\r"])
_FILLER = st.lists(_CHARS, max_size=40).map("".join)


def _check(payload: bytes, hit_offset: int, length: int, line: int, line_offset: int) -> None:
    assert payload[hit_offset : hit_offset + length].decode().lower() == _NEEDLE
    assert line == payload[:hit_offset].count(b"\n") + 1
    assert b"\n" not in payload[line_offset:hit_offset]
    assert line_offset == 0 or payload[line_offset - 1 : line_offset] == b"\n"


@settings(max_examples=200, deadline=None, suppress_health_check=_FIXTURE)
@given(
    parts=st.lists(st.tuples(_FILLER, st.sampled_from([_NEEDLE, _NEEDLE.upper()])), max_size=6),
    tail=_FILLER,
    repeat=st.integers(0, 6000),
)
def test_byte_offsets_are_true_in_multibyte_text(
    store: Store, parts: list[tuple[str, str]], tail: str, repeat: int
) -> None:
    """Whatever characters surround it, and wherever passages are cut (up to ~40 KB of text,
    some of it one long line), the payload holds the match at the hit's offset, on the hit's
    line."""
    store.clear()
    padding = ("ж語 " if repeat % 3 else "ж語\n") * repeat  # one long line, or many short ones
    text = padding + "".join(f"{before} {needle} " for before, needle in parts) + tail
    entry = store.put(text, content_type="text")
    found = store.search(_NEEDLE)
    if not parts:
        assert found.hits == []
        return
    [hit] = found.hits
    payload = text.encode()
    _check(payload, hit.offset, hit.length, hit.line, hit.line_offset)
    assert hit.handle == entry.handle and _NEEDLE in hit.text.lower()


@settings(max_examples=150, deadline=None, suppress_health_check=_FIXTURE)
@given(
    before=st.lists(
        st.sampled_from(
            [b"\xff", b"\xc3", b"\xe2\x82", b"\x00", b"\x01", "ü".encode(), b" ", b"\n"]
        ),
        max_size=30,
    ),
)
def test_byte_offsets_are_true_past_bytes_that_are_not_utf8(
    store: Store, before: list[bytes]
) -> None:
    """A payload stored as text that is not all UTF-8 (or holds control bytes) is indexed byte
    for byte: offsets still point at the match."""
    store.clear()
    payload = b"".join(before) + b" " + _NEEDLE.encode() + b" end"
    store.put(payload, content_type="text")
    [hit] = store.search(_NEEDLE).hits
    _check(payload, hit.offset, hit.length, hit.line, hit.line_offset)
