"""``ContextTools``: a session's context, what the ``ctx`` operations work on. The store
behind the boundary (opened here unless the caller gave one, closed with the session), the
workspace's remembered facts (opened on first use), reads, searches and offloads.

``read`` also takes a workspace file path, so a file can be drilled into the same way as a
stored result.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from fabric._config import FabricConfig
from fabric.providers import REFUSALS, Workspace, read_bytes
from runtime import ProviderCallError, ReadError
from runtime.boundary import (
    Boundary,
    BytesReadable,
    Readable,
    ReadResult,
    StoredReadable,
    TokenCounter,
    read,
)
from store import Facts, NotFound, SearchMatch, SearchResult, Store, StoreError

_FILE_TYPES = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}
MAX_FILE_BYTES = 256 * 1024 * 1024


class ContextTools:
    """Reads, offloads and facts against one workspace's store."""

    def __init__(
        self,
        boundary: Boundary,
        workspace: Workspace,
        on_event: Callable[..., object] | None = None,
        *,
        owns_store: bool = False,
    ) -> None:
        self.boundary = boundary
        self.workspace = workspace
        self.on_event = on_event or (lambda kind, **fields: None)
        self._owns_store = owns_store
        self._facts: Facts | None = None

    @classmethod
    def open(
        cls,
        workspace: Workspace,
        config: FabricConfig,
        tokens: TokenCounter,
        on_event: Callable[..., object],
        store: Store | None = None,
    ) -> tuple[ContextTools, list[str]]:
        """The context of ``workspace``: on ``store``, or on the workspace's own store, opened
        with ``config``'s budgets; and the warnings of opening it (a store that cannot be
        opened leaves the session without one, and says so)."""
        warnings = []
        owns = store is None
        if store is None:
            try:
                store = Store(
                    workspace.root, ttl_ms=config.store_ttl_ms, max_bytes=config.store_max_bytes
                )
            except StoreError as exc:
                warnings.append(f"results cannot be stored: {exc}")
        tools = cls(Boundary(store, config.boundary, tokens), workspace, on_event, owns_store=owns)
        return tools, warnings

    def configure(self, config: FabricConfig) -> None:
        """Take new settings: the boundary's, and the store's budgets if it is the session's
        own."""
        self.boundary.config = config.boundary
        if self.boundary.store is not None and self._owns_store:
            self.boundary.store.ttl_ms = config.store_ttl_ms
            self.boundary.store.max_bytes = config.store_max_bytes

    @property
    def facts(self) -> Facts:
        """The workspace's remembered facts (opened on first use)."""
        if self._facts is None:
            self._facts = Facts(self.workspace.root, count_tokens=self.boundary.tokens.count)
        return self._facts

    def close(self) -> None:
        if self._owns_store and self.boundary.store is not None:
            self.boundary.store.close()
        if self._facts is not None:
            self._facts.close()

    @property
    def store(self) -> Store:
        if self.boundary.store is None:
            raise ProviderCallError(
                "the store of this workspace is unavailable, so nothing can be stored or read; "
                "check that <workspace>/.fabric is writable",
                code="store_unavailable",
            )
        return self.boundary.store

    def read(
        self,
        handle: str,
        *,
        offset: int | None = None,
        length: int | None = None,
        query: str | None = None,
        regex: bool = False,
        ignore_case: bool = False,
        max_matches: int = 100,
        context: int = 1,
        json_path: str | None = None,
        budget: int | None = None,
    ) -> ReadResult:
        """Read part of a stored result (by handle or key) or of a workspace file, within
        ``budget`` bytes (default: ``readOffloadThreshold``)."""
        found = read(
            self._readable(handle),
            budget=budget or self.boundary.config.read_offload_threshold,
            offset=offset,
            length=length,
            query=query,
            regex_mode=regex,
            ignore_case=ignore_case,
            max_matches=max_matches,
            context=context,
            json_path=json_path,
        )
        self.on_event(
            "read", mode=found.mode, handle=found.handle, text_bytes=len(found.text.encode())
        )
        return found

    def search(self, query: str, *, limit: int, match: SearchMatch) -> SearchResult:
        """The stored results whose words match ``query``, best first (``Store.search``)."""
        found = self.store.search(query, limit=limit, match=match)
        self.on_event("search", hits=len(found.hits), total=found.total, pending=found.pending)
        return found

    def offload(
        self,
        data: Any,
        *,
        key: str | None = None,
        label: str | None = None,
        source: str | None = None,
    ) -> dict[str, Any]:
        """Store ``data`` and return its handle, sizes and a preview; ``source`` says what
        produced it (kept as the entry's tool)."""
        try:
            stored = self.boundary.offload(
                data,
                key=key,
                tool=source or "ctx.offload",
                args={"label": label} if label else None,
            )
        except StoreError as exc:
            raise ProviderCallError(str(exc), code=exc.code) from None
        entry = stored.entry
        self.on_event("offload", handle=entry.handle, bytes=entry.bytes, tokens=entry.tokens)
        return {
            "handle": entry.handle,
            "key": entry.key,
            "bytes": entry.bytes,
            "tokens": entry.tokens,
            "content_type": entry.content_type,
            "preview": stored.notice,
        }

    def _readable(self, ref: str) -> Readable:
        if not isinstance(ref, str) or not ref:
            raise ReadError("not_found", "pass a handle (from an offload notice) or a file path")
        store_error: StoreError | None = None
        try:
            entry = self.store.stat(ref)
            return StoredReadable(self.store, entry)
        except StoreError as exc:
            store_error = exc
        except ProviderCallError:
            pass
        file = self._file(ref)
        if file is not None:
            return file
        message = str(store_error) if store_error else f"no stored entry or file named {ref!r}"
        code = "not_found" if isinstance(store_error, NotFound | None) else store_error.code
        raise ReadError(code, f"{message} (ctx.read also takes a workspace file path)")

    def _file(self, ref: str) -> Readable | None:
        """The workspace file ``ref``, opened beneath the root; None when there is none.

        A path that exists but may not be read that way (outside the workspace, inside
        ``.fabric/``) is refused with its own code rather than reported as not found.
        """
        try:
            opened = self.workspace.open(ref)
        except ProviderCallError as exc:
            if exc.code in REFUSALS:
                raise ReadError(exc.code, exc.message) from None
            return None
        with opened:
            info = os.fstat(opened.fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size > MAX_FILE_BYTES:
                raise ReadError(
                    "bad_range",
                    f"{ref} is {info.st_size} bytes; ctx.read reads files up to "
                    f"{MAX_FILE_BYTES} bytes",
                )
            data = read_bytes(opened.fd, MAX_FILE_BYTES)
        suffix = PurePosixPath(opened.name).suffix.lower()
        ctype = _FILE_TYPES.get(suffix, "bytes" if b"\x00" in data[:8192] else "text")
        return BytesReadable(opened.name, data, ctype)
