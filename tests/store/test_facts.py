"""Remembered facts: named upserts, ranked recall within a token budget, deletion."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import BudgetExceeded, Facts, InvalidName, InvalidRequest, NotFound

_FIXTURE = [HealthCheck.function_scoped_fixture]


@pytest.fixture
def facts(tmp_path: Path) -> Iterator[Facts]:
    with Facts(tmp_path) as opened:
        yield opened


def test_remember_then_recall_by_query(facts: Facts) -> None:
    """A fact is found by any of its words, best match first."""
    facts.remember("test.command", "Run the tests with .venv/bin/pytest -q")
    facts.remember("style", "ruff format with line length 100")
    facts.remember("db", "the tests use a temporary SQLite database")
    found = facts.recall("pytest")
    assert [f.name for f in found.facts] == ["test.command"]
    ranked = facts.recall("tests pytest")
    assert ranked.facts[0].name == "test.command" and ranked.matches == 2


def test_words_match_by_prefix_and_names_count(facts: Facts) -> None:
    """'deploy' finds 'deployment'; a fact named exactly like the query comes first."""
    facts.remember("release", "deployment happens from the main branch")
    facts.remember("deploy", "see the release fact")
    found = facts.recall("deploy")
    assert [f.name for f in found.facts] == ["deploy", "release"]


def test_remember_is_an_upsert(facts: Facts) -> None:
    """The same name replaces the text and keeps its creation time."""
    first = facts.remember("owner", "alice")
    second = facts.remember("owner", "bob")
    assert facts.get("owner").text == "bob"
    assert second.created == first.created and len(facts.list()) == 1
    assert facts.recall("alice").facts == []


def test_forget_deletes_and_says_whether_it_existed(facts: Facts) -> None:
    facts.remember("tmp", "temporary note")
    assert facts.forget("tmp") is True
    assert facts.forget("tmp") is False
    with pytest.raises(NotFound):
        facts.get("tmp")
    assert facts.recall("temporary").facts == []


def test_recall_stays_within_its_token_budget(facts: Facts) -> None:
    """Facts are added best first while they fit; a single oversized best match is cut."""
    for i in range(10):
        facts.remember(f"note{i}", f"shared word plus filler {'x' * 200} {i}")
    found = facts.recall("shared", max_tokens=150)
    assert found.tokens <= 150 and found.truncated and 0 < len(found.facts) < 10
    facts.remember("huge", "giant " * 5000)
    cut = facts.recall("giant", max_tokens=50)
    assert len(cut.facts) == 1 and cut.facts[0].tokens <= 50 and cut.truncated
    assert cut.facts[0].text.endswith("...")


def test_an_empty_query_lists_recent_facts(tmp_path: Path) -> None:
    """recall('') returns the most recently updated facts first."""
    now = [1_800_000_000.0]
    with Facts(tmp_path, clock=lambda: now[0]) as facts:
        facts.remember("a", "first")
        now[0] += 1
        facts.remember("b", "second")
        assert [f.name for f in facts.recall("").facts] == ["b", "a"]


def test_custom_token_counter(tmp_path: Path) -> None:
    """A caller may count tokens its own way (Fabric passes tiktoken's o200k)."""
    with Facts(tmp_path, count_tokens=lambda text: len(text.split())) as facts:
        facts.remember("words", "one two three")
        assert facts.recall("one").facts[0].tokens == 3


def test_facts_persist_and_live_apart_from_the_store(tmp_path: Path) -> None:
    """Facts survive reopening and live under .fabric/facts/."""
    with Facts(tmp_path) as facts:
        facts.remember("kept", "across sessions")
    with Facts(tmp_path) as facts:
        assert facts.get("kept").text == "across sessions"
    assert (tmp_path / ".fabric" / "facts" / "facts.db").exists()


def test_over_the_budget_the_oldest_facts_are_evicted_and_said(tmp_path: Path) -> None:
    """The reference evicts facts over their 5 MB budget, oldest first, and reports it (a
    fact used to be refused); one fact holds at most an eighth of the budget, so remembering
    one never forgets all the others, and a larger one is refused, nothing forgotten."""
    clock = iter(range(1, 100))
    with Facts(tmp_path, max_bytes=8000, clock=lambda: next(clock)) as facts:
        for name in "abcdefg":
            facts.remember(name, name * 1000)
        facts.remember("a", "A" * 1000)  # updated: now the newest
        added = facts.remember("h", "h" * 1000)
        assert added.evicted == []
        added = facts.remember("i", "i" * 1000)
        assert added.evicted == ["b"]
        assert facts.remember("i", "I" * 1000).evicted == []  # replacing counts the new size
        with pytest.raises(BudgetExceeded, match="one fact holds at most 1000 bytes"):
            facts.remember("huge", "h" * 1001)
        kept = facts.recall("", limit=100, max_tokens=100_000).facts
        assert sorted(f.name for f in kept) == list("acdefghi")
        assert facts.total_bytes() == 8000
    with pytest.raises(InvalidRequest):
        Facts(tmp_path, max_bytes=6 * 1024 * 1024)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 125), min_size=1, max_size=30))
def test_the_facts_never_exceed_their_budget(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int]
) -> None:
    with Facts(tmp_path_factory.mktemp("facts"), max_bytes=1000) as facts:
        kept: dict[str, int] = {}
        for i, size in enumerate(sizes):
            added = facts.remember(f"f{i}", "x" * size)
            for name in added.evicted:
                del kept[name]
            kept[f"f{i}"] = size
            assert facts.total_bytes() == sum(kept.values()) <= 1000


@pytest.mark.parametrize("name", ["../x", "a/b", "", "x\x00", "ü", "a" * 129])
def test_bad_names_are_refused(facts: Facts, name: str) -> None:
    with pytest.raises(InvalidName):
        facts.remember(name, "text")


@settings(max_examples=150, deadline=None, suppress_health_check=_FIXTURE)
@given(query=st.text(max_size=100))
def test_any_query_text_is_safe(facts: Facts, query: str) -> None:
    """FTS5 syntax in a query (quotes, operators, NEAR, '*') is taken as words, never an error."""
    facts.remember("sample", 'AND OR NOT NEAR quotes " and stars * here')
    found = facts.recall(query)
    assert found.tokens >= 0
