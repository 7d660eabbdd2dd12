"""Content-addressed store of payloads, and remembered facts.

``Store`` keeps large results, error originals and explicit offloads under
``<workspace>/.fabric/store/``, each addressable by a short handle across turns, processes and
restarts, and searchable by words (a full-text index in the same SQLite file); ``Facts``
keeps named project facts under ``<workspace>/.fabric/facts/``; ``ContextBank`` keeps agent
memory pages (context windows with lorebooks, todo lists) under ``<workspace>/.fabric/bank/``,
governed by ContextAccess scopes (``issue_root_scope``, ``use_scope``).

Imports nothing from the other packages of Fabric.
"""

from store._access import (
    BANK_KEY,
    EXECUTION_KEY,
    AccessMode,
    AccessRights,
    AccessScope,
    Boundary,
    ExecutionPrincipal,
    Operation,
    Resolver,
    Resource,
    ResourceKind,
    ResourceMetadata,
    Selector,
    child_scope,
    current_scope,
    issue_root_scope,
    use_scope,
)
from store._backends import (
    KEY_LIMIT,
    ContextPersistenceBackend,
    ContextResourceMetadataBackend,
    LocalDiskBackend,
    MemoryMetadataBackend,
    check_key,
)
from store._bank import ContextBank
from store._budget import Count, TokenBudget, Truncation
from store._enrollment import SCHEMA_VERSION
from store._errors import (
    AlreadyExists,
    BudgetExceeded,
    ContextAccessDenied,
    DenialReason,
    IntegrityError,
    InvalidName,
    InvalidRequest,
    NotFound,
    StoreError,
    StoreUnavailable,
)
from store._facts import FACTS_MAX_BYTES, Facts
from store._fulltext import INDEXED_BYTES
from store._json import json_default
from store._lorebook import ContextWindow, LorebookEntry, Selection
from store._models import (
    CheckReport,
    Chunk,
    ContentType,
    Entry,
    Fact,
    GcReport,
    Recall,
    ScanHit,
    ScanResult,
    SearchHit,
    SearchMatch,
    SearchResult,
    Source,
    Usage,
)
from store._pages import StorageMode
from store._store import DEFAULT_TTL_MS, MAX_BYTES, Store, estimate_tokens
from store._todo import TodoItem, TodoList, TodoStatus

__all__ = [
    "BANK_KEY",
    "DEFAULT_TTL_MS",
    "EXECUTION_KEY",
    "FACTS_MAX_BYTES",
    "INDEXED_BYTES",
    "KEY_LIMIT",
    "MAX_BYTES",
    "SCHEMA_VERSION",
    "AccessMode",
    "AccessRights",
    "AccessScope",
    "AlreadyExists",
    "Boundary",
    "BudgetExceeded",
    "CheckReport",
    "Chunk",
    "ContentType",
    "ContextAccessDenied",
    "ContextBank",
    "ContextPersistenceBackend",
    "ContextResourceMetadataBackend",
    "ContextWindow",
    "Count",
    "DenialReason",
    "Entry",
    "ExecutionPrincipal",
    "Fact",
    "Facts",
    "GcReport",
    "IntegrityError",
    "InvalidName",
    "InvalidRequest",
    "LocalDiskBackend",
    "LorebookEntry",
    "MemoryMetadataBackend",
    "NotFound",
    "Operation",
    "Recall",
    "Resolver",
    "Resource",
    "ResourceKind",
    "ResourceMetadata",
    "ScanHit",
    "ScanResult",
    "SearchHit",
    "SearchMatch",
    "SearchResult",
    "Selection",
    "Selector",
    "Source",
    "StorageMode",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "TodoItem",
    "TodoList",
    "TodoStatus",
    "TokenBudget",
    "Truncation",
    "Usage",
    "check_key",
    "child_scope",
    "current_scope",
    "estimate_tokens",
    "issue_root_scope",
    "json_default",
    "use_scope",
]
