"""Context windows: ordered context elements and a lorebook of keyed entries.

One merge rule serves every merge (an entry into an entry, a window into a window): the old
value is kept and the new value's facts (its non-blank lines) that it lacks are appended; a
blank value never replaces a set one; a non-zero weight replaces the old one; alias, linked and
required keys are unions, de-duplicated case-insensitively, in the order first seen. Entries
are immutable (a merge makes a new one), so a page is written by reusing the JSON of the
entries that did not change. Selection finds the entries a text triggers and packs them into a
:class:`~store.TokenBudget`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from store._budget import Count, TokenBudget
from store._errors import InvalidRequest

_TOKEN = re.compile(r"\w+|[^\w\s]")
_MAX_PHRASE_WORDS = 32


class LorebookEntry(BaseModel):
    """A keyed fact that a text triggers by naming its key or one of its aliases (immutable:
    ``merge`` and ``model_copy(update=...)`` make new entries)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(pattern=r"\S")
    """The entry's name, unique in its lorebook; never blank."""
    value: str = ""
    """What the entry says; facts are its lines."""
    weight: int = 0
    """Selection order: heavier entries come first and are the last to give way."""
    alias_keys: tuple[str, ...] = ()
    """Other names that trigger the entry."""
    linked_keys: tuple[str, ...] = ()
    """Entries selected with this one (by key or alias, transitively)."""
    required_keys: tuple[str, ...] = ()
    """Words that must all occur in the text too for the entry to be selected."""

    def merge(self, other: LorebookEntry) -> LorebookEntry:
        """This entry with ``other`` folded in by the merge rule (see the module)."""
        return LorebookEntry(
            key=self.key,
            value=_merge_text(self.value, other.value),
            weight=other.weight or self.weight,
            alias_keys=_union(self.alias_keys, other.alias_keys, exclude=self.key),
            linked_keys=_union(self.linked_keys, other.linked_keys, exclude=self.key),
            required_keys=_union(self.required_keys, other.required_keys),
        )

    def tidy(self) -> LorebookEntry:
        """The entry with blank and repeated names dropped (as a merge leaves them)."""
        return self.merge(LorebookEntry(key=self.key))

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
    """The selected entries, heaviest first, within the budget."""
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

    def to_data(self) -> dict[str, Any]:
        """Plain data: ``{"entries": {key: {"value", ...}}, "tokens", "limit", "omitted"}``,
        the entries in selection order."""
        return {
            "entries": {entry.key: entry.to_data() for entry in self.entries},
            "tokens": self.tokens,
            "limit": self.limit,
            "omitted": list(self.omitted),
        }


class ContextWindow(BaseModel):
    """Ordered context elements and a lorebook, the payload of a context page."""

    model_config = ConfigDict(extra="forbid")

    context: list[str] = Field(default_factory=list)
    """Context elements, oldest first."""
    lorebook: dict[str, LorebookEntry] = Field(default_factory=dict)
    """Entries by key."""
    _fragments: dict[str, bytes] = PrivateAttr(default_factory=dict)
    _fragments_of: object = PrivateAttr(default=None)
    _lookup: _Index | None = PrivateAttr(default=None)
    _dumped_once: object = PrivateAttr(default=None)
    _costs: dict[str, tuple[LorebookEntry, Count, int]] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _keys_agree(self) -> ContextWindow:
        for name, entry in self.lorebook.items():
            if name != entry.key:
                raise ValueError(f"lorebook entry {entry.key!r} is filed under {name!r}")
        self.lorebook = _Lorebook(self.lorebook)
        return self

    def __eq__(self, other: object) -> bool:
        """Windows are equal when their elements and entries are (caches aside)."""
        if not isinstance(other, ContextWindow):
            return NotImplemented
        return self.context == other.context and dict(self.lorebook) == dict(other.lorebook)

    __hash__ = None  # type: ignore[assignment]

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
        """An independent copy: changing it never changes this window (entries are
        immutable, so they are shared)."""
        book = _Lorebook(self.lorebook)
        copy = ContextWindow.model_construct(context=list(self.context), lorebook=book)
        if self._in_step():
            copy._fragments = dict(self._fragments)
            copy._fragments_of = book
        return copy

    def dump_json(self) -> bytes:
        """The window as JSON. The JSON of each entry is kept, and only the entries set or
        removed since the last dump are encoded again, so writing a large page after a small
        change costs little more than joining bytes."""
        book = self.lorebook
        if not isinstance(book, _Lorebook):
            book = self.lorebook = _Lorebook(book)
        if not self._in_step(ignore_changes=True):
            if self._dumped_once is not book:
                # a window written once (a DISK_ONLY page, or one another process changed, is
                # read, changed and written once) is encoded in one go; the pieces are made
                # the second time
                self._dumped_once = book
                book.changed = set()
                return self.model_dump_json().encode()
            self._fragments = {key: _fragment(key, entry) for key, entry in book.items()}
            self._fragments_of = book
        elif changed := book.changed:
            for key in changed:
                if key in book:
                    self._fragments[key] = _fragment(key, book[key])
                else:
                    self._fragments.pop(key, None)
        book.changed = set()
        context = json.dumps(self.context, separators=(",", ":")).encode()
        return b'{"context":%s,"lorebook":{%s}}' % (context, b",".join(self._fragments.values()))

    def _in_step(self, ignore_changes: bool = False) -> bool:
        """Whether the kept JSON fragments follow the lorebook (in content and order)."""
        book = self.lorebook
        return (
            isinstance(book, _Lorebook)
            and self._fragments_of is book
            and book.changed is not None
            and (ignore_changes or not book.changed)
        )

    def add(self, entry: LorebookEntry) -> LorebookEntry:
        """Put ``entry`` in the lorebook, merged into the entry of the same key when there is
        one (keys are exact; :meth:`find` is the case-insensitive lookup); returns the stored
        entry."""
        existing = self.lorebook.get(entry.key)
        stored = entry.tidy() if existing is None else existing.merge(entry)
        self.lorebook[entry.key] = stored
        return stored

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
        return self.lorebook.get(self._index().names.get(_fold(key), ""))

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
        index = self._index()
        present = _Phrases(text, index.lengths)
        chosen: dict[str, LorebookEntry] = {}
        triggers = index.triggers
        for gram in present.grams:
            for key in triggers.get(gram, ()):
                entry = self.lorebook[key]
                if key not in chosen and present.all(entry.required_keys):
                    chosen[key] = entry
        queue = list(chosen.values())
        while queue:
            for linked in queue.pop().linked_keys:
                target = self.lorebook.get(index.names.get(_fold(linked), ""))
                if (
                    target is not None
                    and target.key not in chosen
                    and present.all(target.required_keys)
                ):
                    chosen[target.key] = target
                    queue.append(target)
        position = index.position
        ordered = sorted(chosen.values(), key=lambda e: (-e.weight, position[e.key]))
        costs = [self._cost(entry, counter) for entry in ordered]
        kept = budget.fit(costs, limit)
        kept_set = set(kept)
        return Selection(
            entries=[ordered[i] for i in kept],
            tokens=sum(costs[i] for i in kept),
            limit=limit,
            omitted=[e.key for i, e in enumerate(ordered) if i not in kept_set],
        )

    def _cost(self, entry: LorebookEntry, counter: Count) -> int:
        """Tokens of the entry, remembered while the entry (immutable) and the count stay."""
        cached = self._costs.get(entry.key)
        if cached is not None and cached[0] is entry and cached[1] == counter:
            return cached[2]
        if len(self._costs) > 2 * len(self.lorebook) + 64:
            self._costs = {k: c for k, c in list(self._costs.items()) if k in self.lorebook}
        cost = counter(entry.render())
        self._costs[entry.key] = (entry, counter, cost)
        return cost

    def _index(self) -> _Index:
        """The lookup tables of the lorebook, made again only after it changed."""
        book = self.lorebook
        if not isinstance(book, _Lorebook):
            book = self.lorebook = _Lorebook(book)
        cached = self._lookup
        if cached is None or cached.book is not book or cached.generation != book.generation:
            cached = self._lookup = _Index(book)
        return cached


class _Index:
    """Entries by the word sequences that trigger them, and by their folded names."""

    def __init__(self, book: _Lorebook) -> None:
        self.book = book
        self.generation = book.generation
        self.triggers: dict[tuple[str, ...], list[str]] = {}
        self.names: dict[str, str] = {}
        self.position: dict[str, int] = {}
        self.lengths: set[int] = set()
        for i, (key, entry) in enumerate(book.items()):
            self.position[key] = i
            for name in entry.names():
                self.names.setdefault(_fold(name), key)
                words = _phrase(name)
                if 0 < len(words) <= _MAX_PHRASE_WORDS:
                    self.triggers.setdefault(words, []).append(key)
                    self.lengths.add(len(words))
            for name in entry.required_keys:
                self.lengths.add(min(len(_phrase(name)), _MAX_PHRASE_WORDS))
        self.lengths.discard(0)


class _Lorebook(dict[str, LorebookEntry]):
    """A lorebook that remembers which keys were set since its JSON was last made (entries
    are immutable, so setting is the only way one changes). ``changed`` is None after anything
    that may reorder it (a removal, a clear), which makes the next dump start afresh."""

    __slots__ = ("changed", "generation", "unsaved")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.changed: set[str] | None = set()
        """Keys set since the JSON was last made (for :meth:`ContextWindow.dump_json`)."""
        self.unsaved: set[str] | None = None
        """Keys set since the page was last saved (for the page file's deltas)."""
        self.generation = 0
        """Counts the changes, so that lookup tables know when they are out of date."""

    def __setitem__(self, key: str, value: LorebookEntry) -> None:
        super().__setitem__(key, value)
        self.generation += 1
        if self.changed is not None:
            self.changed.add(key)
        if self.unsaved is not None:
            self.unsaved.add(key)

    def _reordered(self) -> None:
        self.generation += 1
        self.changed = None
        self.unsaved = None

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self._reordered()

    def pop(self, *args: Any) -> Any:
        self._reordered()
        return super().pop(*args)

    def popitem(self) -> tuple[str, LorebookEntry]:
        self._reordered()
        return super().popitem()

    def clear(self) -> None:
        self._reordered()
        super().clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._reordered()
        super().update(*args, **kwargs)

    def setdefault(self, key: str, default: Any = None) -> Any:
        self._reordered()
        return super().setdefault(key, default)

    def __ior__(self, other: Any) -> _Lorebook:  # type: ignore[override,misc]
        self._reordered()
        super().__ior__(other)
        return self


def saved_lorebook(window: ContextWindow) -> _Lorebook:
    """Mark the window's lorebook as saved: from now on, the keys set are remembered."""
    book = window.lorebook
    if not isinstance(book, _Lorebook):
        book = window.lorebook = _Lorebook(book)
    book.unsaved = set()
    return book


def unsaved_keys(window: ContextWindow) -> list[str] | None:
    """The keys set since :func:`saved_lorebook`, in lorebook order; None when that cannot be
    told (entries were removed, or the lorebook was replaced)."""
    book = window.lorebook
    if not isinstance(book, _Lorebook) or book.unsaved is None:
        return None
    unsaved = book.unsaved
    if len(unsaved) * 8 < len(book):
        return sorted(unsaved, key=list(book).index) if len(unsaved) > 1 else list(unsaved)
    return [key for key in book if key in unsaved]


def _fragment(key: str, entry: LorebookEntry) -> bytes:
    return json.dumps(key).encode() + b":" + entry.model_dump_json().encode()


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

    def all(self, names: tuple[str, ...]) -> bool:
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


def _union(
    first: tuple[str, ...], second: tuple[str, ...], exclude: str | None = None
) -> tuple[str, ...]:
    seen = {_fold(exclude)} if exclude is not None else set()
    out = []
    for name in (*first, *second):
        folded = _fold(name)
        if folded and folded not in seen:
            seen.add(folded)
            out.append(name)
    return tuple(out)


def _replace_all(names: tuple[str, ...], *, old: str, new: str) -> tuple[str, ...]:
    return tuple(name.replace(old, new) for name in names)
