"""Exceptions of the store package.

Every error names the problem and the way out; nothing already stored is lost by raising one::

    StoreError                  base of everything the store raises
    ├── InvalidName             a handle, key or fact name that is malformed or unsafe
    ├── NotFound                no live entry (or fact) answers to the name: unknown, expired,
    │                           evicted, deleted or removed as corrupt; ``reason`` says which
    ├── IntegrityError          stored bytes no longer match their sha256 (bit flip, truncation)
    ├── BudgetExceeded          a payload or fact that cannot fit the configured budget
    ├── InvalidRequest          a bad range, query or option passed to the API
    └── StoreUnavailable        the store folder or index cannot be used (disk full, permissions,
                                a symlinked folder, an index written by a newer Fabric)
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of the store's exceptions; ``code`` names the kind for programs."""

    code = "store_error"


class InvalidName(StoreError):
    """A handle, key or fact name is malformed or unsafe; the message shows the accepted form."""

    code = "invalid_name"

    def __init__(self, message: str, *, name: str) -> None:
        super().__init__(message)
        self.name = name


class NotFound(StoreError):
    """No live entry answers to ``ref``.

    ``reason`` is one of ``unknown``, ``expired``, ``evicted``, ``deleted``, ``cleared``,
    ``corrupt`` or ``missing`` (the blob vanished from disk); ``source`` is how the data was made,
    when the store still remembers it, so the caller can make it again.
    """

    code = "not_found"

    def __init__(self, message: str, *, ref: str, reason: str, source: str | None = None) -> None:
        super().__init__(message)
        self.ref = ref
        self.reason = reason
        self.source = source


class IntegrityError(StoreError):
    """Stored bytes do not match their hash; they are never served, and are moved aside."""

    code = "integrity_error"

    def __init__(self, message: str, *, ref: str, sha256: str) -> None:
        super().__init__(message)
        self.ref = ref
        self.sha256 = sha256


class BudgetExceeded(StoreError):
    """What was asked does not fit: ``size`` bytes against a ``limit``."""

    code = "budget_exceeded"

    def __init__(self, message: str, *, size: int, limit: int) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


class InvalidRequest(StoreError):
    """An argument is out of range or malformed (an offset, a query, a budget)."""

    code = "invalid_request"


class StoreUnavailable(StoreError):
    """The store cannot be read or written; the previous state on disk is intact."""

    code = "store_unavailable"
