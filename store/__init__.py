"""Content-addressed store of payloads, and remembered facts.

``Store`` keeps large results, error originals and explicit offloads under
``<workspace>/.fabric/store/``, each addressable by a short handle across turns, processes and
restarts, and searchable by words (a full-text index in the same SQLite file); ``Facts``
keeps named project facts under ``<workspace>/.fabric/facts/``.

Imports nothing from the other packages of Fabric.
"""

from store._errors import (
    BudgetExceeded,
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
from store._store import DEFAULT_TTL_MS, MAX_BYTES, Store, estimate_tokens

__all__ = [
    "DEFAULT_TTL_MS",
    "FACTS_MAX_BYTES",
    "INDEXED_BYTES",
    "MAX_BYTES",
    "BudgetExceeded",
    "CheckReport",
    "Chunk",
    "ContentType",
    "Entry",
    "Fact",
    "Facts",
    "GcReport",
    "IntegrityError",
    "InvalidName",
    "InvalidRequest",
    "NotFound",
    "Recall",
    "ScanHit",
    "ScanResult",
    "SearchHit",
    "SearchMatch",
    "SearchResult",
    "Source",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "Usage",
    "estimate_tokens",
    "json_default",
]
