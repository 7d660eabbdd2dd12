"""Context windows and lorebooks: the merge rule, clean, find, and budgeted selection."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.boundary import TokenCounter
from store import ContextWindow, InvalidRequest, LorebookEntry, TokenBudget, Truncation

COUNTER = TokenCounter()


def entry(key: str, value: str = "", **fields: object) -> LorebookEntry:
    return LorebookEntry(key=key, value=value, **fields)  # type: ignore[arg-type]


def test_merge_keeps_the_old_value_and_appends_new_facts() -> None:
    """A merge keeps the old value and appends only the facts (lines) it lacks."""
    old = entry("Alice", "a friend\nlikes tea")
    merged = old.merge(entry("Alice", "likes tea\nlives in Paris"))
    assert merged.value == "a friend\nlikes tea\nlives in Paris"
    assert old.value == "a friend\nlikes tea"  # entries are immutable


def test_merge_prefers_non_blank_values_and_set_weights() -> None:
    """A blank value never replaces a set one; a non-zero weight replaces the old one."""
    assert entry("k", "set", weight=3).merge(entry("k", "  ")).value == "set"
    assert entry("k", "").merge(entry("k", "new")).value == "new"
    assert entry("k", weight=3).merge(entry("k")).weight == 3
    assert entry("k", weight=3).merge(entry("k", weight=5)).weight == 5


def test_merge_deduplicates_aliases_case_insensitively() -> None:
    """Alias, linked and required keys are unions without repeats (any case), never the key."""
    merged = entry("Alice", alias_keys=["Ally", "alice"]).merge(
        entry("Alice", alias_keys=["ALLY", "Al"], linked_keys=["Bob", "bob"])
    )
    assert merged.alias_keys == ("Ally", "Al")
    assert merged.linked_keys == ("Bob",)


def test_window_merge_appends_missing_elements_and_merges_entries() -> None:
    """Merging windows appends context elements not there yet and merges same-key entries."""
    window = ContextWindow.of(["a", "b"], [entry("x", "one")])
    window.merge(ContextWindow.of(["b", "c"], [entry("x", "two"), entry("y", "new")]))
    assert window.context == ["a", "b", "c"]
    assert window.lorebook["x"].value == "one\ntwo"
    assert window.lorebook["y"].value == "new"


def test_clean_replaces_underscores_everywhere_and_merges_what_becomes_equal() -> None:
    """clean() turns model-written underscores into spaces in every field."""
    window = ContextWindow.of(
        ["Alice_Smith came"],
        [entry("Alice_Smith", "a_friend", alias_keys=["Ally_S"]), entry("Alice Smith", "x")],
    )
    window.clean()
    assert window.context == ["Alice Smith came"]
    assert list(window.lorebook) == ["Alice Smith"]
    assert window.lorebook["Alice Smith"].value == "a friend\nx"
    assert window.lorebook["Alice Smith"].alias_keys == ("Ally S",)
    with pytest.raises(InvalidRequest):
        window.clean(replace="")


def test_find_matches_keys_and_aliases_case_insensitively() -> None:
    window = ContextWindow.of(entries=[entry("Alice Smith", "a", alias_keys=["Ally"])])
    assert window.find("alice  SMITH") is window.lorebook["Alice Smith"]
    assert window.find("ALLY") is window.lorebook["Alice Smith"]
    assert window.find("Bob") is None


def test_find_sees_entries_added_after_a_lookup() -> None:
    """The lookup tables follow every change of the lorebook."""
    window = ContextWindow.of(entries=[entry("a")])
    assert window.find("B") is None
    window.add(entry("b", alias_keys=["bee"]))
    assert window.find("BEE") is window.lorebook["b"]
    del window.lorebook["b"]
    assert window.find("bee") is None


def test_a_lorebook_filed_under_another_key_is_refused() -> None:
    with pytest.raises(ValueError, match="filed under"):
        ContextWindow.model_validate({"lorebook": {"a": {"key": "b"}}})


def select_keys(window: ContextWindow, text: str, max_tokens: int = 1000) -> list[str]:
    return [e.key for e in window.select(text, TokenBudget(max_tokens)).entries]


def test_select_matches_whole_words_case_insensitively() -> None:
    """A key or alias triggers only as whole words, in any case."""
    window = ContextWindow.of(
        entries=[entry("cat", "c"), entry("New York", "ny", alias_keys=["NYC"]), entry("C++")]
    )
    assert select_keys(window, "The CAT sat.") == ["cat"]
    assert select_keys(window, "concatenate") == []
    assert select_keys(window, "off to new  york") == ["New York"]
    assert select_keys(window, "new, york") == []
    assert select_keys(window, "nyc!") == ["New York"]
    assert select_keys(window, "I write C++ daily") == ["C++"]


def test_select_brings_linked_entries_transitively() -> None:
    window = ContextWindow.of(
        entries=[
            entry("Alice", linked_keys=["bob"]),
            entry("Bob", linked_keys=["Carol"]),
            entry("Carol"),
            entry("Dan"),
        ]
    )
    assert sorted(select_keys(window, "alice")) == ["Alice", "Bob", "Carol"]


def test_select_honours_required_keys() -> None:
    """An entry with required keys comes only when each of them occurs in the text too,
    also when it is reached through a link."""
    window = ContextWindow.of(
        entries=[
            entry("deploy", required_keys=["prod"]),
            entry("rollback", linked_keys=["deploy"]),
        ]
    )
    assert select_keys(window, "deploy to staging") == []
    assert select_keys(window, "deploy to prod") == ["deploy"]
    assert select_keys(window, "rollback") == ["rollback"]
    assert sorted(select_keys(window, "rollback prod")) == ["deploy", "rollback"]


def test_select_orders_by_weight_then_lorebook_order() -> None:
    window = ContextWindow.of(
        entries=[entry("a", weight=1), entry("b", weight=5), entry("c", weight=1)]
    )
    assert select_keys(window, "c b a") == ["b", "a", "c"]


def test_select_packs_into_the_budget_by_truncation() -> None:
    """BOTTOM keeps the heaviest, TOP the lightest, MIDDLE both ends."""
    entries = [entry(f"k{i}", "word " * 10, weight=10 - i) for i in range(5)]
    window = ContextWindow.of(entries=entries)
    text = "k0 k1 k2 k3 k4"
    cost = COUNTER.count(entries[0].render())

    def keys(truncation: Truncation) -> list[str]:
        budget = TokenBudget(2 * cost, truncation=truncation, count=COUNTER.count)
        selection = window.select(text, budget)
        assert selection.tokens <= 2 * cost
        return [e.key for e in selection.entries]

    assert keys(Truncation.BOTTOM) == ["k0", "k1"]
    assert keys(Truncation.TOP) == ["k3", "k4"]
    assert keys(Truncation.MIDDLE) == ["k0", "k4"]
    selection = window.select(text, TokenBudget(2 * cost, count=COUNTER.count))
    assert selection.omitted == ["k2", "k3", "k4"]
    assert selection.text.splitlines()[0] == entries[0].render()


def test_context_window_size_leaves_room_for_the_text() -> None:
    """With the model's window size, the text and the selection fit together."""
    budget = TokenBudget(1000, context_window_size=50, count=COUNTER.count)
    text = "alpha " * 30
    assert budget.limit(text) == 50 - COUNTER.count(text)
    assert TokenBudget(1000, context_window_size=10, count=COUNTER.count).limit(text) == 0


@pytest.mark.parametrize(
    "fields",
    [{"max_tokens": -1}, {"max_tokens": 1.5}, {"max_tokens": True}, {"max_tokens": 10**9}],
)
def test_a_bad_budget_is_refused_with_the_field(fields: dict[str, object]) -> None:
    with pytest.raises(InvalidRequest, match="max_tokens"):
        TokenBudget(**fields)  # type: ignore[arg-type]


def test_a_bad_truncation_is_refused() -> None:
    with pytest.raises(InvalidRequest, match="TOP, BOTTOM or MIDDLE"):
        TokenBudget(10, truncation="SIDEWAYS")  # type: ignore[arg-type]


WORDS = ["alpha", "beta", "gamma", "delta", "Ελλάδα", "北京", "x_y", "long"]
ENTRY = st.builds(
    LorebookEntry,
    key=st.sampled_from(WORDS),
    value=st.text(max_size=300),
    weight=st.integers(-3, 3),
    alias_keys=st.lists(st.sampled_from(WORDS), max_size=2),
    linked_keys=st.lists(st.sampled_from(WORDS), max_size=2),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries=st.lists(ENTRY, max_size=12),
    text=st.lists(st.sampled_from([*WORDS, "noise", "."]), max_size=20).map(" ".join),
    max_tokens=st.integers(0, 300),
    truncation=st.sampled_from(list(Truncation)),
)
def test_selection_never_exceeds_its_budget(
    entries: list[LorebookEntry], text: str, max_tokens: int, truncation: Truncation
) -> None:
    """Under every truncation mode, the selected entries' tiktoken counts fit the budget, and
    every triggered entry is either selected or reported omitted."""
    window = ContextWindow.of(entries=entries)
    selection = window.select(
        text, TokenBudget(max_tokens, truncation=truncation, count=COUNTER.count)
    )
    counted = sum(COUNTER.count(e.render()) for e in selection.entries)
    assert counted == selection.tokens <= max_tokens
    assert not {e.key for e in selection.entries} & set(selection.omitted)


def test_to_data_and_back() -> None:
    window = ContextWindow.of(["c"], [entry("k", "v", weight=2, alias_keys=["a"])])
    data = window.to_data()
    assert data == {
        "context": ["c"],
        "lorebook": {
            "k": {
                "value": "v",
                "weight": 2,
                "alias_keys": ["a"],
                "linked_keys": [],
                "required_keys": [],
            }
        },
    }
    assert ContextWindow.from_data(data) == window


def test_dump_json_follows_every_change() -> None:
    """The JSON a page is written as always equals a fresh encoding of the window."""
    window = ContextWindow.of(["c"], [entry("a", "1"), entry("b", "2")])

    def fresh() -> ContextWindow:
        return ContextWindow.model_validate_json(window.dump_json())

    assert fresh() == window
    window.add(entry("a", "more"))
    assert fresh() == window
    window.lorebook.pop("b")
    window.lorebook["c"] = entry("c")
    assert fresh() == window
    window.lorebook |= {"d": entry("d")}
    assert fresh() == window
    window.lorebook = {"z": entry("z")}
    assert fresh() == window
    assert window.copy_window() == window


@pytest.mark.parametrize("key", ["", "   ", "\t"])
def test_a_blank_entry_key_is_refused(key: str) -> None:
    with pytest.raises(ValueError, match="key"):
        LorebookEntry(key=key)
