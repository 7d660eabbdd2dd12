"""``memory.*``: the agent's durable memory (``store.ContextBank`` pages under
``.fabric/bank/``), each call run on the host under the session's ContextAccess scope
(``fabric._memory``), and ``memory.mini``, this execution's MiniBank.

The rows TPipe offers as its secure introspection set are MCP tools under TPipe's names
(``secure_listPageKeys``...); the others are offered in snippets and Python only. A denial is
raised before anything is read or written, and reaches the caller with its reason as the code
(``MISSING_PERMISSION``, ``METADATA_UNAVAILABLE``, ``INVALID_METADATA``, ``UNSAFE_REFERENCE``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from fabric._operations._table import Args, Cli, Reply, Surface, operation
from store import (
    ContextAccessDenied,
    ContextBank,
    ContextWindow,
    LorebookEntry,
    NotFound,
    StorageMode,
    TodoList,
    TokenBudget,
    Truncation,
)
from store._budget import MAX_TOKENS

if TYPE_CHECKING:
    from fabric._session import Fabric

_HERE: frozenset[Surface] = frozenset(("snippet", "python"))
_EVERYWHERE: frozenset[Surface] = frozenset(("snippet", "python", "mcp"))
_READ: frozenset[Surface] = frozenset(("snippet", "python", "mcp", "cli"))
"""Reads are commands too (``fabric memory-get notes``), under config.json's scope."""
_MINI_ONLY: frozenset[Surface] = frozenset(("snippet",))
memory_operation = functools.partial(operation, namespace="memory", surfaces=_HERE)
_PAGE = "the page's key"
_LIMIT = 1000
_TEXT = 1024 * 1024
"""The most characters of one context element, entry value or selecting text: memory holds
what a model reads, not data (keep data in files or the store)."""
_ITEMS = 10_000
"""The most context elements or entries one call writes."""
_Element = Annotated[str, Field(max_length=_TEXT)]


class EntryArgs(Args):
    """A lorebook entry as a snippet writes it."""

    key: str = Field(pattern=r"\S", max_length=1024, description="the entry's name")
    value: str = Field("", max_length=_TEXT, description="what it says; facts are its lines")
    weight: int = Field(0, description="heavier entries are selected first")
    alias_keys: list[str] = Field(default_factory=list, description="other names")
    linked_keys: list[str] = Field(default_factory=list, description="selected with it")
    required_keys: list[str] = Field(default_factory=list, description="must occur too")

    def entry(self) -> LorebookEntry:
        return LorebookEntry(
            key=self.key,
            value=self.value,
            weight=self.weight,
            alias_keys=tuple(self.alias_keys),
            linked_keys=tuple(self.linked_keys),
            required_keys=tuple(self.required_keys),
        )


def _reply(data: Any) -> Reply:
    return Reply(json.dumps(data, ensure_ascii=False), data)


def _entry_data(page: str, entry: LorebookEntry) -> dict[str, Any]:
    return {"page": page, "key": entry.key, **entry.to_data()}


def _windows(bank: ContextBank, key: str | None) -> Iterator[tuple[str, ContextWindow]]:
    """Page ``key``, or every page the scope may list and read (one deleted or withdrawn
    since it was listed is passed over)."""
    if key is not None:
        yield key, bank.get(key)
        return
    listed: list[str] = bank.keys()  # a bank is not a mapping: keys() checks ENUMERATE
    for name in listed:
        try:
            window = bank.get(name)
        except (NotFound, ContextAccessDenied):
            continue
        yield name, window


class KeyArgs(Args):
    key: str = Field(description=_PAGE)


@memory_operation(
    KeyArgs,
    help="Page key as plain data: context and lorebook",
    read_only=True,
    surfaces=_READ,
    cli=Cli(positional=("key",)),
    mcp_name="secure_getLorebook",
)
def get(session: Fabric, args: KeyArgs, surface: Surface) -> Reply:
    with session.agent_memory.scoped() as bank:
        return _reply(bank.get_data(args.key))


class PutArgs(Args):
    key: str = Field(description=_PAGE)
    context: list[_Element] = Field(
        default_factory=list, max_length=_ITEMS, description="context elements, in order"
    )
    entries: list[EntryArgs] = Field(
        default_factory=list, max_length=_ITEMS, description="lorebook entries"
    )
    mode: Literal["MEMORY_AND_DISK", "DISK_ONLY", "MEMORY_ONLY"] = Field(
        "MEMORY_AND_DISK", description="MEMORY_ONLY lives in this session only"
    )


@memory_operation(
    PutArgs,
    help="Replace page key with these context elements and entries",
    description="Persisted by default (MEMORY_AND_DISK).",
    risk="write",
)
def put(session: Fabric, args: PutArgs, surface: Surface) -> Reply:
    window = ContextWindow.of(args.context, [e.entry() for e in args.entries])
    with session.agent_memory.scoped() as bank:
        bank.emplace(args.key, window, StorageMode(args.mode))
    sizes = {"context": len(window.context), "entries": len(window.lorebook)}
    return _reply({"key": args.key, **sizes})


class UpdateArgs(Args):
    key: str = Field(description=_PAGE)
    entries: list[EntryArgs] = Field(
        default_factory=list, max_length=_ITEMS, description="entries to merge in"
    )
    context: list[_Element] = Field(
        default_factory=list, max_length=_ITEMS, description="elements to append"
    )


@memory_operation(
    UpdateArgs,
    help="Merge entries (and context) into page key, atomically",
    description="A lorebook merge under the page's lock, across processes; a new page is "
    "created (persisted).",
    risk="write",
    surfaces=_EVERYWHERE,
    mcp_name="secure_updateLorebookEntry",
)
def update(session: Fabric, args: UpdateArgs, surface: Surface) -> Reply:
    new = ContextWindow.of(args.context, [e.entry() for e in args.entries])
    sizes: dict[str, int] = {}

    def merge(window: ContextWindow) -> None:
        window.merge(new)
        sizes.update(context=len(window.context), entries=len(window.lorebook))

    with session.agent_memory.scoped() as bank:
        bank.update(args.key, merge)
    return _reply({"key": args.key, **sizes})


class RemoveArgs(Args):
    key: str = Field(description=_PAGE)
    entries: list[str] = Field(description="keys of the lorebook entries to drop")


@memory_operation(
    RemoveArgs,
    help="Drop lorebook entries from page key; the keys removed",
    risk="write",
    surfaces=_EVERYWHERE,
    mcp_name="secure_deleteLorebookEntry",
)
def remove(session: Fabric, args: RemoveArgs, surface: Surface) -> Reply:
    removed: list[str] = []

    def drop(window: ContextWindow) -> None:
        for name in args.entries:
            if window.lorebook.pop(name, None) is not None:
                removed.append(name)

    with session.agent_memory.scoped() as bank:
        bank.get(args.key)  # an unknown page is NotFound, not created empty
        bank.update(args.key, drop)
    return Reply(json.dumps(removed), {"key": args.key, "removed": removed}, ok=bool(removed))


@memory_operation(KeyArgs, help="Delete page key; whether it was there", risk="write")
def delete(session: Fabric, args: KeyArgs, surface: Surface) -> Reply:
    with session.agent_memory.scoped() as bank:
        found = bank.delete(args.key)
    return Reply(f"deleted {args.key}" if found else f"no page {args.key}", found, ok=found)


class NoArgs(Args):
    pass


@memory_operation(
    NoArgs,
    help="The page keys you may read, sorted",
    read_only=True,
    surfaces=_READ,
    mcp_name="secure_listPageKeys",
)
def keys(session: Fabric, args: NoArgs, surface: Surface) -> Reply:
    with session.agent_memory.scoped() as bank:
        names = bank.keys()
    return Reply("\n".join(names) or "no pages", names)


class SelectArgs(Args):
    text: str = Field(max_length=_TEXT, description="the text whose words trigger entries")
    max_tokens: int = Field(_LIMIT, ge=0, le=MAX_TOKENS, description="the selection's budget")
    truncation: Literal["TOP", "BOTTOM", "MIDDLE"] = Field(
        "BOTTOM", description="which entries give way: BOTTOM keeps the heaviest"
    )
    key: str | None = Field(None, description="one page; default every page you may read")


@memory_operation(
    SelectArgs,
    help="Entries text triggers, within max_tokens",
    description="Keys and aliases matched as whole words, linked entries added, heaviest "
    "first; counted with tiktoken.",
    read_only=True,
    surfaces=_READ,
    cli=Cli(positional=("text",)),
    mcp_name="secure_simulateLorebookTrigger",
)
def select(session: Fabric, args: SelectArgs, surface: Surface) -> Reply:
    budget = TokenBudget(args.max_tokens, truncation=Truncation(args.truncation))
    with session.agent_memory.scoped() as bank:
        if args.key is not None:
            selection = bank.select(args.key, args.text, budget)
        else:
            merged = ContextWindow()
            for _, window in _windows(bank, None):
                merged.merge(window)
            selection = merged.select(args.text, budget, bank.count)
    return Reply(selection.text, selection.to_data())


class FindArgs(Args):
    key: str = Field(description="an entry's key or alias (case-insensitive)")
    page: str | None = Field(None, description="one page; default every page you may read")


@memory_operation(
    FindArgs,
    help="The entries named key (or aliased), each with its page",
    read_only=True,
    surfaces=_READ,
    cli=Cli(positional=("key",)),
    mcp_name="secure_getLorebookEntry",
)
def find(session: Fabric, args: FindArgs, surface: Surface) -> Reply:
    found = []
    with session.agent_memory.scoped() as bank:
        for page, window in _windows(bank, args.page):
            entry = window.find(args.key)
            if entry is not None:
                found.append(_entry_data(page, entry))
    return _reply(found)


class SearchArgs(Args):
    key: str = Field(description=_PAGE)
    query: str = Field(description="words that must all occur (case-insensitive)")
    limit: int = Field(20, ge=1, le=1000, description="entries returned at most")


def _matching(page: str, window: ContextWindow, words: list[str]) -> Iterator[dict[str, Any]]:
    for entry in window.lorebook.values():
        haystack = " ".join((entry.key, *entry.alias_keys, entry.value)).casefold()
        if all(word in haystack for word in words):
            yield _entry_data(page, entry)


def _search(bank: ContextBank, key: str | None, query: str, limit: int) -> dict[str, Any]:
    words = query.casefold().split()
    hits: list[dict[str, Any]] = []
    total = 0
    for page, window in _windows(bank, key):
        for hit in _matching(page, window, words):
            total += 1
            if len(hits) < limit:
                hits.append(hit)
    return {"entries": hits, "total": total}


@memory_operation(
    SearchArgs,
    help="Entries of page key whose key, aliases or value hold every word of query",
    read_only=True,
    surfaces=_READ,
    cli=Cli(positional=("key", "query")),
    mcp_name="secure_queryLorebook",
)
def search(session: Fabric, args: SearchArgs, surface: Surface) -> Reply:
    with session.agent_memory.scoped() as bank:
        return _reply(_search(bank, args.key, args.query, args.limit))


class SearchAllArgs(Args):
    query: str = Field(description="words that must all occur (case-insensitive)")
    limit: int = Field(20, ge=1, le=1000, description="entries returned at most")


@memory_operation(
    SearchAllArgs,
    help="memory.search over every page you may read",
    read_only=True,
    surfaces=_READ,
    cli=Cli(positional=("query",)),
    mcp_name="secure_searchMemory",
)
def search_all(session: Fabric, args: SearchAllArgs, surface: Surface) -> Reply:
    with session.agent_memory.scoped() as bank:
        return _reply(_search(bank, None, args.query, args.limit))


@memory_operation(
    KeyArgs,
    help="Todo page key: its items (id, text, status)",
    read_only=True,
    surfaces=_READ,
    cli=Cli(positional=("key",)),
    mcp_name="secure_getTodoList",
)
def todo_get(session: Fabric, args: KeyArgs, surface: Surface) -> Reply:
    with session.agent_memory.scoped() as bank:
        return _reply(bank.get_todo_data(args.key))


class TodoUpdateArgs(Args):
    key: str = Field(description=_PAGE)
    add: list[Annotated[str, Field(pattern=r"\S")]] = Field(
        default_factory=list, description="texts of new pending items"
    )
    status: dict[str, Literal["pending", "in_progress", "done"]] = Field(
        default_factory=dict, description="item id: new status"
    )
    remove: list[str] = Field(default_factory=list, description="ids of items to drop")


@memory_operation(
    TodoUpdateArgs,
    help="Add, move or drop items of todo page key, atomically",
    risk="write",
    surfaces=_EVERYWHERE,
    mcp_name="secure_updateTodoList",
)
def todo_update(session: Fabric, args: TodoUpdateArgs, surface: Surface) -> Reply:
    added: list[str] = []

    def change(todo: TodoList) -> None:
        for id, status in args.status.items():
            todo.set_status(id, status)
        for id in args.remove:
            todo.remove(id)
        added.extend(todo.add(text).id for text in args.add)

    with session.agent_memory.scoped() as bank:
        bank.update_todo(args.key, change)
    return _reply({"key": args.key, "added": added})


class MiniArgs(Args):
    name: str = Field(description="the window's name")


@memory_operation(
    MiniArgs,
    help="Window name of this execution's MiniBank, as memory.get gives a page",
    read_only=True,
    surfaces=_MINI_ONLY,
)
def mini(session: Fabric, args: MiniArgs, surface: Surface) -> Reply:
    return _reply(session.agent_memory.mini(args.name))
