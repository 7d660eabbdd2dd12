"""What the bank keeps of a page: its storage mode, its file's schema, the copy held in
memory, and the thread locks of pages in use."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from store._access import ResourceKind
from store._backends import Version
from store._lorebook import ContextWindow
from store._todo import TodoList


class StorageMode(StrEnum):
    """Where a page lives."""

    MEMORY_ONLY = "MEMORY_ONLY"
    """In this process only; gone when it ends."""
    MEMORY_AND_DISK = "MEMORY_AND_DISK"
    """In memory and written through to the backend; re-read when another process wrote it."""
    DISK_ONLY = "DISK_ONLY"
    """In the backend only, read on demand."""


class _WindowFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal[1]
    kind: Literal["CONTEXT_WINDOW"]
    mode: StorageMode
    page: ContextWindow


class _TodoFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal[1]
    kind: Literal["TODO_LIST"]
    mode: StorageMode
    page: TodoList


PAGE_FILES: dict[ResourceKind, type[_WindowFile] | type[_TodoFile]] = {
    ResourceKind.CONTEXT_WINDOW: _WindowFile,
    ResourceKind.TODO_LIST: _TodoFile,
}
MODE_PREFIX = re.compile(rb'\{"format":1,"kind":"[A-Z_]+","mode":"([A-Z_]+)"')


@dataclass
class Held:
    mode: StorageMode
    page: Any
    version: Version | None = None
    consumed: int | None = None
    """Bytes of the page file this copy reflects (for reading only what was appended)."""
    snapshot: int = 0
    """Bytes of the file's snapshot line."""
    saved_context: list[str] | None = None
    """The context elements as saved, to tell what an update changed."""
    book: object = None
    """The lorebook object as saved: a replaced one is written as a new snapshot."""


class PageLocks:
    """One thread lock per page in use, dropped when no thread holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[tuple[ResourceKind, str], tuple[threading.Lock, int]] = {}

    @contextlib.contextmanager
    def hold(self, kind: ResourceKind, key: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get((kind, key), (threading.Lock(), 0))
            self._locks[kind, key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[kind, key]
                if users == 1:
                    del self._locks[kind, key]
                else:
                    self._locks[kind, key] = (lock, users - 1)
