"""Context windows: ordered context elements and a lorebook of keyed entries.

One merge rule serves every merge (an entry into an entry, a window into a window): the old
value is kept and the new value's facts (its non-blank lines) that it lacks are appended; a
blank value never replaces a set one; alias, linked and required keys are unions, de-duplicated
case-insensitively, in the order first seen. Selection finds the entries a text triggers and
packs them into a :class:`~store.TokenBudget`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from store._budget import Count, TokenBudget
from store._errors import InvalidRequest

_TOKEN = re.compile(r"\w+|[^\w\s]")
_MAX_PHRASE_WORDS = 32


class LorebookEntry(BaseModel):
    """A keyed fact that a text triggers by naming its key or one of its aliases."""

    model_config = ConfigDict(extra="forbid")

    key: str
    """The entry's name, unique in its lorebook (case-insensitively)."""
    value: str = ""
    """What the entry says; facts are its lines."""
    weight: int = 0
    """Selection order: heavier entries come first and are the last to give way."""
    alias_keys: list[str] = Field(default_factory=list)
    """Other names that trigger the entry."""
    linked_keys: list[str] = Field(default_factory=list)
    """Entries selected with this one (by key or alias, transitively)."""
    required_keys: list[str] = Field(default_factory=list)
    """Words that must all occur in the text too for the entry to be selected."""

    @field_validator("key")
    @classmethod
    def _key_not_blank(cls, key: str) -> str:
        if not key.strip():
            raise ValueError("a lorebook entry's key must not be blank")
        return key

    def merge(self, other: LorebookEntry) -> LorebookEntry:
        """Fold ``other`` into this entry by the merge rule (see the module); returns self."""
        self.value = _merge_text(self.value, other.value)
        if other.weight:
            self.weight = other.weight
        self.alias_keys = _union(self.alias_keys, other.alias_keys, exclude=self.key)
        self.linked_keys = _union(self.linked_keys, other.linked_keys, exclude=self.key)
        self.required_keys = _union(self.required_keys, other.required_keys)
        return self

    def names(self) -> Iterator[str]:
        """The key, then the aliases."""
        yield self.key
        yield from self.alias_keys

    def render(self) -> str:
        """The entry as the model reads it, and as its tokens are counted."""
        return f"{self.key}: {self.value}"

    def to_data(self) -> dict[str, Any]:
        """Plain data without the key (the lorebook is keyed by it)."""
        return {
            "value": self.value,
            "weight": self.weight,
            "alias_keys": list(self.alias_keys),
            "linked_keys": list(self.linked_keys),
            "required_keys": list(self.required_keys),
        }


class Selection(BaseModel):
    """What :meth:`ContextWindow.select` returns."""

    model_config = ConfigDict(frozen=True)

    entries: list[LorebookEntry]
    """The selected entries (copies), heaviest first, within the budget."""
    tokens: int
    """The sum of the entries' token counts (each counted as :meth:`LorebookEntry.render`)."""
    limit: int
    """Tokens the budget allowed; ``tokens`` never exceeds it."""
    omitted: list[str]
    """Keys of triggered entries the budget left out."""

    @property
    def text(self) -> str:
        """The entries rendered, one a line."""
        return "\n".join(entry.render() for entry in self.entries)


class ContextWindow(BaseModel):
    """Ordered context elements and a lorebook, the payload of a context page."""

    model_config = ConfigDict(extra="forbid")

    context: list[str] = Field(default_factory=list)
    """Context elements, oldest first."""
    lorebook: dict[str, LorebookEntry] = Field(default_factory=dict)
    """Entries by key."""

    @model_validator(mode="before")
    @classmethod
    def _entries_as_list(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("lorebook"), list | tuple):
            entries = [LorebookEntry.model_validate(e) for e in data["lorebook"]]
            data = {**data, "lorebook": {e.key: e for e in entries}}
        return data

    @model_validator(mode="after")
    def _keys_agree(self) -> ContextWindow:
        for name, entry in self.lorebook.items():
            if name != entry.key:
                raise ValueError(f"lorebook entry {entry.key!r} is filed under {name!r}")
        return self

    @classmethod
    def of(
        cls, context: Iterable[str] = (), entries: Iterable[LorebookEntry] = ()
    ) -> ContextWindow:
        """A window of these elements and entries (entries with the same key are merged)."""
        window = cls(context=list(context))
        for entry in entries:
            window.add(entry)
        return window

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> ContextWindow:
        """The inverse of :meth:`to_data` (a ``"key"`` field beside them is ignored)."""
        lorebook = data.get("lorebook") or {}
        if not isinstance(lorebook, dict):
            raise InvalidRequest("a page's lorebook must be an object of entries by key")
        entries = [
            LorebookEntry.model_validate({**fields, "key": key}) for key, fields in lorebook.items()
        ]
        return cls.of(data.get("context") or [], entries)

    def to_data(self) -> dict[str, Any]:
        """Plain data: ``{"context": [...], "lorebook": {key: {"value", "weight", ...}}}``."""
        return {
            "context": list(self.context),
            "lorebook": {key: entry.to_data() for key, entry in self.lorebook.items()},
        }

    def copy_window(self) -> ContextWindow:
        """An independent copy (nothing shared with this window)."""
        return ContextWindow.model_validate_json(self.model_dump_json())

    def add(self, entry: LorebookEntry) -> LorebookEntry:
        """Put ``entry`` in the lorebook, merged into the entry of the same key (any case)
        when there is one; returns the stored entry."""
        existing = self.lorebook.get(entry.key) or self._by_key(entry.key)
        if existing is None:
            stored = entry.model_copy(deep=True)
            stored.alias_keys = _union(stored.alias_keys, [], exclude=stored.key)
            stored.linked_keys = _union(stored.linked_keys, [], exclude=stored.key)
            stored.required_keys = _union(stored.required_keys, [])
            self.lorebook[stored.key] = stored
            return stored
        return existing.merge(entry)

    def merge(self, other: ContextWindow) -> ContextWindow:
        """Fold ``other`` in: its context elements this window lacks are appended in order, and
        each of its entries is merged by :meth:`add`. Returns self, so that
        ``bank.update(key, lambda w: w.merge(new))`` reads as it does."""
        present = set(self.context)
        for element in other.context:
            if element not in present:
                self.context.append(element)
                present.add(element)
        for entry in other.lorebook.values():
            self.add(entry)
        return self

    def clean(self, replace: str = "_", with_: str = " ") -> ContextWindow:
        """Replace ``replace`` by ``with_`` in every element, key, value and alias, linked and
        required key (for model output that writes ``Alice_Smith``); entries whose keys become
        equal are merged. Returns self."""
        if not replace:
            raise InvalidRequest("clean needs a non-empty text to replace")
        self.context = [element.replace(replace, with_) for element in self.context]
        entries = list(self.lorebook.values())
        self.lorebook = {}
        for entry in entries:
            fix = functools.partial(_replace_all, old=replace, new=with_)
            cleaned = LorebookEntry(
                key=entry.key.replace(replace, with_).strip() or entry.key,
                value=entry.value.replace(replace, with_),
                weight=entry.weight,
                alias_keys=fix(entry.alias_keys),
                linked_keys=fix(entry.linked_keys),
                required_keys=fix(entry.required_keys),
            )
            self.add(cleaned)
        return self

    def find(self, key: str) -> LorebookEntry | None:
        """The entry whose key or an alias equals ``key``, ignoring case and spacing."""
        if key in self.lorebook:
            return self.lorebook[key]
        wanted = _fold(key)
        for entry in self.lorebook.values():
            if any(_fold(name) == wanted for name in entry.names()):
                return entry
        return None

    def select(self, text: str, budget: TokenBudget, count: Count | None = None) -> Selection:
        """The entries ``text`` triggers, within ``budget``.

        An entry is triggered when its key or an alias occurs in ``text`` as whole words
        (case-insensitively) and so does each of its ``required_keys``; the entries linked from
        a selected one (by key or alias, transitively) come with it, required keys honoured.
        They are ordered by weight, heaviest first (lorebook order among equals), and packed
        into the budget by its truncation; tokens are counted with the budget's ``count``,
        else ``count``, else estimated.
        """
        counter = budget.counter(count)
        limit = budget.limit(text, counter)
        present = _Phrases(text, self._phrase_lengths())
        chosen: dict[str, LorebookEntry] = {}
        for entry in self.lorebook.values():
            if any(present.has(name) for name in entry.names()) and present.all(
                entry.required_keys
            ):
                chosen[entry.key] = entry
        queue = list(chosen.values())
        while queue:
            for linked in queue.pop().linked_keys:
                target = self.find(linked)
                if (
                    target is not None
                    and target.key not in chosen
                    and present.all(target.required_keys)
                ):
                    chosen[target.key] = target
                    queue.append(target)
        position = {key: i for i, key in enumerate(self.lorebook)}
        ordered = sorted(chosen.values(), key=lambda e: (-e.weight, position[e.key]))
        costs = [counter(entry.render()) for entry in ordered]
        kept = budget.fit(costs, limit)
        kept_set = set(kept)
        return Selection(
            entries=[ordered[i].model_copy(deep=True) for i in kept],
            tokens=sum(costs[i] for i in kept),
            limit=limit,
            omitted=[e.key for i, e in enumerate(ordered) if i not in kept_set],
        )

    def _by_key(self, key: str) -> LorebookEntry | None:
        wanted = _fold(key)
        for entry in self.lorebook.values():
            if _fold(entry.key) == wanted:
                return entry
        return None

    def _phrase_lengths(self) -> set[int]:
        lengths = set()
        for entry in self.lorebook.values():
            for name in (*entry.names(), *entry.required_keys):
                lengths.add(len(_phrase(name)))
        return {n for n in lengths if 0 < n <= _MAX_PHRASE_WORDS}


class _Phrases:
    """The word sequences of a text, for whole-word lookups of keys."""

    def __init__(self, text: str, lengths: set[int]) -> None:
        tokens = _TOKEN.findall(text.casefold())
        self.grams: set[tuple[str, ...]] = set()
        for n in lengths:
            self.grams.update(zip(*(tokens[i:] for i in range(n)), strict=False))

    def has(self, name: str) -> bool:
        words = _phrase(name)
        return bool(words) and words in self.grams

    def all(self, names: list[str]) -> bool:
        return all(self.has(name) for name in names)


@functools.lru_cache(maxsize=1 << 16)
def _phrase(name: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(name.casefold()))


@functools.lru_cache(maxsize=1 << 16)
def _fold(name: str) -> str:
    return " ".join(name.casefold().split())


def _merge_text(old: str, new: str) -> str:
    if not new.strip():
        return old
    if not old.strip():
        return new
    have = {line.strip() for line in old.splitlines()}
    facts = [line for line in new.splitlines() if line.strip() and line.strip() not in have]
    return "\n".join([old.rstrip("\n"), *facts]) if facts else old


def _union(first: list[str], second: list[str], exclude: str | None = None) -> list[str]:
    seen = {_fold(exclude)} if exclude is not None else set()
    out = []
    for name in (*first, *second):
        folded = _fold(name)
        if folded and folded not in seen:
            seen.add(folded)
            out.append(name)
    return out


def _replace_all(names: list[str], *, old: str, new: str) -> list[str]:
    return [name.replace(old, new) for name in names]
