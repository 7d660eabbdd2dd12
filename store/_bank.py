"""ContextBank: named pages of agent memory (context windows and todo lists) that outlive an
execution, a session and a process.

Each page has a storage mode: ``MEMORY_ONLY`` (this process only), ``MEMORY_AND_DISK`` (kept in
memory and written through to the backend) or ``DISK_ONLY`` (read from the backend on demand,
so the hot bank stays small). Reads hand out copies; ``update`` is a read-modify-write under the
page's lock, which for a persisted page also holds across processes and re-reads the page when
another process changed it, so concurrent writers never lose an update. Every operation first
checks the ambient access scope (:mod:`store._access`), before it touches the value, a callback
or the disk. Methods block (on the disk and on locks) and are safe from any thread: async code
calls them in a thread (``asyncio.to_thread``; the scope follows).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from store._access import (
    BANK_KEY,
    Operation,
    ResourceKind,
    ResourceMetadata,
    current_scope,
)
from store._backends import (
    ContextPersistenceBackend,
    ContextResourceMetadataBackend,
    LocalDiskBackend,
    MemoryMetadataBackend,
    check_key,
)
from store._budget import Count, TokenBudget
from store._enrollment import InvalidMetadata, decode_metadata, encode_metadata
from store._errors import (
    AlreadyExists,
    ContextAccessDenied,
    DenialReason,
    IntegrityError,
    InvalidRequest,
    NotFound,
)
from store._guard import authorize, denied, no_right
from store._journal import COMPACT_SLACK, apply_tail, decode, encode_delta, encode_snapshot
from store._lorebook import ContextWindow, Selection, saved_lorebook
from store._pages import MODE_PREFIX, PAGE_FILES, Held, PageLocks, StorageMode
from store._todo import TodoList


class ContextBank:
    """Pages of agent memory by key.

    ``ContextBank(workspace)`` keeps persisted pages and enrollment sidecars under
    ``<workspace>/.fabric/bank/`` (:class:`LocalDiskBackend`); ``ContextBank()`` is a bank of
    this process only. ``backend`` and ``metadata`` replace the local ones (a remote store).
    ``default_mode`` applies to pages created without a mode (``MEMORY_AND_DISK`` with a
    backend, else ``MEMORY_ONLY``). ``fsync`` makes every disk write durable across a power
    cut. ``count`` counts tokens for :meth:`select` when the budget brings no count of its own
    (the fabric layer passes tiktoken's; default: an estimate of four bytes a token).
    """

    def __init__(
        self,
        workspace: str | Path | None = None,
        *,
        backend: ContextPersistenceBackend | None = None,
        metadata: ContextResourceMetadataBackend | None = None,
        default_mode: StorageMode | None = None,
        fsync: bool = False,
        count: Count | None = None,
    ) -> None:
        if workspace is not None and backend is None:
            local = LocalDiskBackend.for_workspace(workspace, fsync=fsync)
            backend = local
            metadata = metadata or local
        self.backend = backend
        self.metadata_backend: ContextResourceMetadataBackend = metadata or (
            backend
            if isinstance(backend, ContextResourceMetadataBackend)
            else MemoryMetadataBackend()
        )
        self.default_mode = StorageMode(
            default_mode or (StorageMode.MEMORY_AND_DISK if backend else StorageMode.MEMORY_ONLY)
        )
        self._check_mode(self.default_mode)
        self.count = count
        self._hot: dict[tuple[ResourceKind, str], Held] = {}
        self._memory_metadata: dict[tuple[ResourceKind, str], bytes] = {}
        self._locks = PageLocks()

    # -- context windows ----------------------------------------------------------------------

    def get(self, key: str) -> ContextWindow:
        """A copy of the context page ``key`` (NotFound when there is none). Needs ``READ``."""
        page: ContextWindow = self._get(ResourceKind.CONTEXT_WINDOW, key)
        return page

    def get_data(self, key: str) -> dict[str, Any]:
        """The page as plain data: ``{"key", "context": [...], "lorebook": {entry_key:
        {"value", "weight", "alias_keys", "linked_keys", "required_keys"}}}``."""
        return {"key": key, **self.get(key).to_data()}

    def get_reference(self, key: str) -> ContextWindow:
        """The page object held in memory itself, not a copy: changes to it are seen by every
        later read in this process and reach the disk with the next write of the page. Only
        outside any access scope (inside one: ``UNSAFE_REFERENCE``); not for ``DISK_ONLY``
        pages, which have no object in memory."""
        page: ContextWindow = self._reference(ResourceKind.CONTEXT_WINDOW, key)
        return page

    def emplace(self, key: str, window: ContextWindow, mode: StorageMode | None = None) -> None:
        """Store a copy of ``window`` as page ``key``, replacing what was there. ``mode``
        defaults to the page's present mode, else the bank's default. Needs ``WRITE`` on an
        existing page, ``CREATE`` on a new one."""
        self._emplace(ResourceKind.CONTEXT_WINDOW, key, window, mode)

    def update(
        self,
        key: str,
        fn: Callable[[ContextWindow], ContextWindow | None],
        mode: StorageMode | None = None,
    ) -> None:
        """Read-modify-write page ``key`` under its lock (across processes for a persisted
        page): ``fn`` gets the current window (an empty one for a new page, created with
        ``mode``) and changes it in place or returns a replacement. When ``fn`` raises, nothing
        is written. Needs ``READ`` and ``WRITE`` on an existing page, ``CREATE`` on a new one."""
        self._update(ResourceKind.CONTEXT_WINDOW, key, fn, mode)

    def delete(self, key: str) -> bool:
        """Remove page ``key`` (its enrollment stays); False when there was none. Needs
        ``DELETE``."""
        return self._delete(ResourceKind.CONTEXT_WINDOW, key)

    def keys(self) -> list[str]:
        """The keys of the context pages, sorted. In a scope: needs ``ENUMERATE`` on the bank
        (``BANKED_CONTEXT``) and lists only the pages the scope may read."""
        return self._keys(ResourceKind.CONTEXT_WINDOW)

    def select(self, key: str, text: str, budget: TokenBudget) -> Selection:
        """The entries of page ``key``'s lorebook that ``text`` triggers, within ``budget``
        (see :meth:`ContextWindow.select`), counted with the budget's count, else the bank's.
        Needs ``READ``."""
        selection: Selection = self._read(
            ResourceKind.CONTEXT_WINDOW, key, lambda w: w.select(text, budget, self.count)
        )
        return selection

    def create_context_window(
        self,
        key: str,
        window: ContextWindow,
        *,
        resource_id: str,
        boundary_ids: Iterable[str] = (),
        mode: StorageMode | None = None,
    ) -> ResourceMetadata:
        """Create page ``key`` enrolled as resource ``resource_id`` in ``boundary_ids``: the
        sidecar and a copy of the payload are written together under the page's lock, the
        sidecar first, so the page is never visible unenrolled. AlreadyExists when the page
        or its sidecar is there. In a scope, needs ``CREATE`` on the new resource."""
        return self._create(
            ResourceKind.CONTEXT_WINDOW, key, window, resource_id, boundary_ids, mode
        )

    # -- todo lists ---------------------------------------------------------------------------

    def get_todo(self, key: str) -> TodoList:
        """A copy of the todo page ``key``. Needs ``READ``."""
        page: TodoList = self._get(ResourceKind.TODO_LIST, key)
        return page

    def get_todo_data(self, key: str) -> dict[str, Any]:
        """``{"key", "items": [{"id", "text", "status"}, ...]}``."""
        return {"key": key, **self.get_todo(key).to_data()}

    def get_todo_reference(self, key: str) -> TodoList:
        """Like :meth:`get_reference`, for a todo page."""
        page: TodoList = self._reference(ResourceKind.TODO_LIST, key)
        return page

    def emplace_todo(self, key: str, todo: TodoList, mode: StorageMode | None = None) -> None:
        """Like :meth:`emplace`, for a todo page."""
        self._emplace(ResourceKind.TODO_LIST, key, todo, mode)

    def update_todo(
        self, key: str, fn: Callable[[TodoList], TodoList | None], mode: StorageMode | None = None
    ) -> None:
        """Like :meth:`update`, for a todo page."""
        self._update(ResourceKind.TODO_LIST, key, fn, mode)

    def delete_todo(self, key: str) -> bool:
        """Like :meth:`delete`, for a todo page."""
        return self._delete(ResourceKind.TODO_LIST, key)

    def todo_keys(self) -> list[str]:
        """Like :meth:`keys`, for todo pages."""
        return self._keys(ResourceKind.TODO_LIST)

    def create_todo_list(
        self,
        key: str,
        todo: TodoList,
        *,
        resource_id: str,
        boundary_ids: Iterable[str] = (),
        mode: StorageMode | None = None,
    ) -> ResourceMetadata:
        """Like :meth:`create_context_window`, for a todo page."""
        return self._create(ResourceKind.TODO_LIST, key, todo, resource_id, boundary_ids, mode)

    # -- enrollment (trusted host) ------------------------------------------------------------

    def register_metadata(
        self,
        kind: ResourceKind,
        key: str,
        *,
        resource_id: str,
        boundary_ids: Iterable[str] = (),
    ) -> ResourceMetadata:
        """Enroll resource ``key`` of ``kind`` (replacing its enrollment): for the bank itself,
        ``kind=BANKED_CONTEXT`` and ``key="__banked_context"``. Refused inside a scope."""
        kind = self._enrollable(kind, key, "register")
        metadata = ResourceMetadata(kind, resource_id, frozenset(boundary_ids))
        with self._page_lock(kind, key):
            self._memory_metadata.pop((kind, key), None)
            self.metadata_backend.write_metadata(kind, key, encode_metadata(metadata))
        return metadata

    def delete_metadata(self, kind: ResourceKind, key: str) -> bool:
        """Remove the enrollment of ``key``; False when there was none. Refused in a scope."""
        kind = self._enrollable(kind, key, "delete")
        with self._page_lock(kind, key):
            in_memory = self._memory_metadata.pop((kind, key), None) is not None
            return self.metadata_backend.delete_metadata(kind, key) or in_memory

    def metadata(self, kind: ResourceKind, key: str) -> ResourceMetadata | None:
        """The enrollment of ``key``, None when it has none; IntegrityError when its sidecar
        is invalid (a scope is then denied the resource: ``INVALID_METADATA``)."""
        kind = ResourceKind(kind)
        raw = self._raw_metadata(kind, self._key(kind, key))
        if raw is None:
            return None
        try:
            return decode_metadata(raw, kind)
        except InvalidMetadata as exc:
            raise IntegrityError(
                f"the enrollment of {key!r} is invalid: {exc.why}. Register it again.",
                ref=key,
                sha256=hashlib.sha256(raw).hexdigest(),
            ) from None

    # -- the machinery ------------------------------------------------------------------------

    def _get(self, kind: ResourceKind, key: str) -> Any:
        return self._read(kind, key, self._copy)

    def _read(self, kind: ResourceKind, key: str, use: Callable[[Any], Any]) -> Any:
        """``use`` applied to the current page (maybe the object held in memory, which ``use``
        only reads), under the page's thread lock: an update in this process is seen whole or
        not at all. Other processes replace files atomically, so no file lock is needed."""
        key = self._key(kind, key)
        self._authorize(Operation.READ, kind, key)
        with self._locks.hold(kind, key):
            hot = self._hot.get((kind, key))
            if hot is not None and hot.mode is StorageMode.MEMORY_ONLY:
                return use(hot.page)
            loaded = self._load(kind, key, hot)
            if loaded is None:
                raise self._missing(kind, key)
            return use(loaded.page)

    def _reference(self, kind: ResourceKind, key: str) -> Any:
        key = self._key(kind, key)
        if current_scope() is not None:
            raise denied(
                Operation.READ,
                kind,
                key,
                DenialReason.UNSAFE_REFERENCE,
                "a mutable reference is never handed out inside an access scope; use get "
                "(a copy) and update",
            )
        with self._page_lock(kind, key):
            hot = self._hot.get((kind, key))
            if hot is None or hot.mode is not StorageMode.MEMORY_ONLY:
                loaded = self._load(kind, key, hot)
                if loaded is None:
                    raise self._missing(kind, key)
                if loaded.mode is StorageMode.DISK_ONLY:
                    raise InvalidRequest(
                        f"page {key!r} is DISK_ONLY and has no object in memory; use get and "
                        "update, or emplace it as MEMORY_AND_DISK"
                    )
                hot = loaded
            return hot.page

    def _emplace(self, kind: ResourceKind, key: str, page: Any, mode: StorageMode | None) -> None:
        key = self._key(kind, key)
        self._check_page(kind, page)
        exists = self._exists(kind, key)
        self._authorize(Operation.WRITE if exists else Operation.CREATE, kind, key)
        copy = self._copy(page)
        with self._page_lock(kind, key):
            hot = self._hot.get((kind, key))
            if mode is None:
                mode = hot.mode if hot is not None else self._stored_mode(kind, key)
            self._store(kind, key, copy, StorageMode(mode))

    def _update(self, kind: ResourceKind, key: str, fn: Callable[[Any], Any], mode: Any) -> None:
        key = self._key(kind, key)
        if not callable(fn):
            raise InvalidRequest("update needs a function that changes the page")
        if mode is not None:
            self._check_mode(StorageMode(mode))
        scope = current_scope()
        if scope is not None:
            if self._exists(kind, key):
                self._authorize(Operation.READ, kind, key)
                self._authorize(Operation.WRITE, kind, key)
            else:
                self._authorize(Operation.CREATE, kind, key)
        with self._page_lock(kind, key):
            hot = self._hot.get((kind, key))
            if hot is not None and hot.mode is StorageMode.MEMORY_ONLY:
                current = Held(hot.mode, self._copy(hot.page))
            else:
                loaded = self._load(kind, key, hot)
                current = loaded or Held(StorageMode(mode or self.default_mode), self._new(kind))
            shared = current.page is getattr(self._hot.get((kind, key)), "page", None)
            if shared and scope is not None:  # code in a scope never holds the bank's object
                current = Held(current.mode, self._copy(current.page))
                shared = False
            try:
                result = fn(current.page)
                if result is not None:
                    self._check_page(kind, result)
            except BaseException:
                if shared:
                    self._hot.pop((kind, key), None)  # half changed: read it afresh next time
                raise
            final = current.page if result is None else result
            if scope is not None:  # the function may keep its object: the bank keeps its own
                final = self._copy(final)
            if current.mode is StorageMode.MEMORY_ONLY or current.version is None:
                self._store(kind, key, final, current.mode)
            else:
                self._save(kind, key, final, current)

    def _delete(self, kind: ResourceKind, key: str) -> bool:
        key = self._key(kind, key)
        self._authorize(Operation.DELETE, kind, key)
        with self._page_lock(kind, key):
            hot = self._hot.pop((kind, key), None)
            on_disk = self.backend.delete(kind, key) if self.backend else False
            return on_disk or hot is not None

    def _keys(self, kind: ResourceKind) -> list[str]:
        scope = current_scope()
        if scope is not None:
            self._authorize(Operation.ENUMERATE, ResourceKind.BANKED_CONTEXT, BANK_KEY)
        found = {  # persisted pages are listed from the backend, which sees other processes
            key
            for (k, key), hot in list(self._hot.items())
            if k is kind and hot.mode is StorageMode.MEMORY_ONLY
        }
        if self.backend is not None:
            found.update(self.backend.keys(kind))
        if scope is None:
            return sorted(found)
        visible = []
        for key in sorted(found):
            with contextlib.suppress(ContextAccessDenied):
                self._authorize(Operation.READ, kind, key)
                visible.append(key)
        return visible

    def _create(
        self,
        kind: ResourceKind,
        key: str,
        page: Any,
        resource_id: str,
        boundary_ids: Iterable[str],
        mode: StorageMode | None,
    ) -> ResourceMetadata:
        key = self._key(kind, key)
        self._check_page(kind, page)
        metadata = ResourceMetadata(kind, resource_id, frozenset(boundary_ids))
        mode = StorageMode(mode or self.default_mode)
        self._check_mode(mode)
        scope = current_scope()
        if scope is not None and not scope.allows(Operation.CREATE, metadata):
            raise denied(
                Operation.CREATE, kind, key, DenialReason.MISSING_PERMISSION, no_right(scope)
            )
        copy = self._copy(page)
        with self._page_lock(kind, key):
            if self._exists(kind, key):
                raise AlreadyExists(
                    f"page {key!r} already exists; update it, or pick another key", key=key
                )
            if self._raw_metadata(kind, key) is not None:
                raise AlreadyExists(
                    f"{key!r} is already enrolled (its sidecar is there); emplace the page "
                    "under that enrollment, or delete the enrollment first",
                    key=key,
                )
            record = encode_metadata(metadata)
            if mode is StorageMode.MEMORY_ONLY:
                self._memory_metadata[kind, key] = record
            else:
                self.metadata_backend.write_metadata(kind, key, record, exclusive=True)
            try:
                self._store(kind, key, copy, mode)
            except BaseException:
                self._memory_metadata.pop((kind, key), None)
                if mode is not StorageMode.MEMORY_ONLY:
                    self.metadata_backend.delete_metadata(kind, key)
                raise
        return metadata

    def _store(self, kind: ResourceKind, key: str, page: Any, mode: StorageMode) -> None:
        """Write ``page`` (owned by the bank from now on) in ``mode``; under the page lock."""
        self._check_mode(mode)
        if mode is StorageMode.MEMORY_ONLY:
            before = self._hot.get((kind, key))
            if self.backend is not None and getattr(before, "mode", None) is not mode:
                self.backend.delete(kind, key)  # the page moves to memory
            self._hot[kind, key] = Held(mode, page)
            return
        assert self.backend is not None
        data = encode_snapshot(kind, mode.value, page)
        version = self.backend.write(kind, key, data)
        self._saved(kind, key, Held(mode, page, version, len(data), len(data)))

    def _saved(self, kind: ResourceKind, key: str, hot: Held) -> None:
        """Note what is now on disk; keep it in memory for a MEMORY_AND_DISK page."""
        if isinstance(hot.page, ContextWindow):
            hot.book = saved_lorebook(hot.page)
            hot.saved_context = list(hot.page.context)
        if hot.mode is StorageMode.MEMORY_AND_DISK:
            self._hot[kind, key] = hot
        else:
            self._hot.pop((kind, key), None)

    def _save(self, kind: ResourceKind, key: str, page: Any, loaded: Held) -> None:
        """Write ``page``, changed from ``loaded`` in place, as a delta line when one can say
        the change and the file has room for it, else as a new snapshot."""
        assert self.backend is not None
        delta = None
        if (
            isinstance(page, ContextWindow)
            and page is loaded.page
            and page.lorebook is loaded.book
            and loaded.consumed is not None
            and loaded.saved_context is not None
            and loaded.consumed < 2 * loaded.snapshot + COMPACT_SLACK
        ):
            delta = encode_delta(page, loaded.saved_context)
        if delta is None:
            self._store(kind, key, page, loaded.mode)
            return
        if delta:
            offset = loaded.consumed or 0
            loaded.version = self.backend.append(kind, key, delta, offset)
            loaded.consumed = offset + len(delta)
        self._saved(kind, key, loaded)

    def _load(self, kind: ResourceKind, key: str, hot: Held | None) -> Held | None:
        """The persisted page, from memory while the stored version is the one held there."""
        if self.backend is None:
            return None
        if hot is not None and hot.version is not None:
            version = self.backend.version(kind, key)
            if version == hot.version:
                return hot
            if version is not None and hot.consumed is not None:
                tail = self.backend.read_tail(kind, key, hot.version, hot.consumed)
                if tail is not None:
                    with contextlib.suppress(ValueError, ValidationError):
                        hot.consumed += apply_tail(hot.page, tail[0])
                        hot.version = tail[1]
                        hot.saved_context = list(hot.page.context)
                        return hot
            self._hot.pop((kind, key), None)  # read it whole
        got = self.backend.read(kind, key)
        if got is None:
            self._hot.pop((kind, key), None)
            return None
        data, version = got
        decoded = decode(kind, key, data, PAGE_FILES)
        loaded = Held(
            StorageMode(decoded.mode), decoded.page, version, decoded.consumed, decoded.snapshot
        )
        if isinstance(loaded.page, ContextWindow):
            loaded.book = loaded.page.lorebook
            loaded.saved_context = list(loaded.page.context)
        if loaded.mode is StorageMode.MEMORY_AND_DISK:
            self._hot[kind, key] = loaded
        return loaded

    def _stored_mode(self, kind: ResourceKind, key: str) -> StorageMode:
        if self.backend is not None:
            got = self.backend.read(kind, key)
            if got is not None and (match := MODE_PREFIX.match(got[0][:120])):
                with contextlib.suppress(ValueError):
                    return StorageMode(match.group(1).decode())
        return self.default_mode

    def _exists(self, kind: ResourceKind, key: str) -> bool:
        if (kind, key) in self._hot:
            return True
        return self.backend is not None and self.backend.version(kind, key) is not None

    def _authorize(self, operation: Operation, kind: ResourceKind, key: str) -> None:
        """Raise ContextAccessDenied unless the ambient scope allows ``operation``."""
        scope = current_scope()
        if scope is not None:
            authorize(scope, operation, kind, key, self._raw_metadata(kind, key))

    def _raw_metadata(self, kind: ResourceKind, key: str) -> bytes | None:
        raw = self._memory_metadata.get((kind, key))
        return raw if raw is not None else self.metadata_backend.read_metadata(kind, key)

    def _enrollable(self, kind: ResourceKind, key: str, verb: str) -> ResourceKind:
        kind = ResourceKind(kind)
        self._key(kind, key)
        if current_scope() is not None:
            raise denied(
                Operation.WRITE,
                kind,
                key,
                DenialReason.MISSING_PERMISSION,
                f"to {verb} enrollment is for the trusted host, never inside an access scope",
            )
        return kind

    @contextlib.contextmanager
    def _page_lock(self, kind: ResourceKind, key: str) -> Iterator[None]:
        with self._locks.hold(kind, key):
            if self.backend is None:
                yield
                return
            if kind is ResourceKind.BANKED_CONTEXT:
                with self.backend.bank_lock():
                    yield
                return
            with self.backend.page_lock(kind, key):
                yield

    def _key(self, kind: ResourceKind, key: str) -> str:
        if kind is ResourceKind.BANKED_CONTEXT:
            if key != BANK_KEY:
                raise InvalidRequest(f"the bank's own enrollment has the key {BANK_KEY!r}")
            return key
        return check_key(key)

    def _check_mode(self, mode: StorageMode) -> None:
        if mode is not StorageMode.MEMORY_ONLY and self.backend is None:
            raise InvalidRequest(
                f"{mode.value} needs a bank with a disk: open ContextBank(workspace) or pass a "
                "backend, or use StorageMode.MEMORY_ONLY"
            )

    def _check_page(self, kind: ResourceKind, page: object) -> None:
        model = ContextWindow if kind is ResourceKind.CONTEXT_WINDOW else TodoList
        if not isinstance(page, model):
            raise InvalidRequest(
                f"a {kind.value} page must be a {model.__name__}, not {type(page).__name__}"
            )

    @staticmethod
    def _copy(page: Any) -> Any:
        return page.model_copy(deep=True) if isinstance(page, TodoList) else page.copy_window()

    @staticmethod
    def _new(kind: ResourceKind) -> Any:
        return ContextWindow() if kind is ResourceKind.CONTEXT_WINDOW else TodoList()

    @staticmethod
    def _missing(kind: ResourceKind, key: str) -> NotFound:
        what = "context page" if kind is ResourceKind.CONTEXT_WINDOW else "todo page"
        return NotFound(
            f"no {what} {key!r}; list them with keys(), or create it with emplace or update",
            ref=key,
            reason="unknown",
        )
