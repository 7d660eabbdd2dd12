"""Exceptions of the store package.

Every error names the problem and the way out; nothing already stored is lost by raising one::

    StoreError                  base of everything the store raises
    ├── InvalidName             a handle, key or fact name that is malformed or unsafe
    ├── NotFound                no live entry (or fact) answers to the name: unknown, expired,
    │                           evicted, deleted or removed as corrupt; ``reason`` says which
    ├── IntegrityError          stored bytes no longer match their sha256 (bit flip, truncation)
    ├── BudgetExceeded          a payload or fact that cannot fit the configured budget
    ├── InvalidRequest          a bad range, query or option passed to the API
    ├── AlreadyExists           a context page or its enrollment is already there (create)
    ├── ContextAccessDenied     an access scope does not allow the operation on a page (also a
    │                           PermissionError); ``code`` is the reason, e.g. MISSING_PERMISSION
    └── StoreUnavailable        the store folder or index cannot be used (disk full, permissions,
                                a symlinked folder, an index written by a newer Fabric)
"""

from __future__ import annotations

from enum import StrEnum


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


class AlreadyExists(StoreError):
    """A context page, or the enrollment sidecar of one, is already stored under ``key``."""

    code = "already_exists"

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


class DenialReason(StrEnum):
    """Why a :class:`ContextAccessDenied` was raised."""

    MISSING_PERMISSION = "MISSING_PERMISSION"
    """The scope's rights do not select the resource for the operation (or the operation is
    reserved to the trusted host)."""
    METADATA_UNAVAILABLE = "METADATA_UNAVAILABLE"
    """The resource is not enrolled and the scope requires enrollment."""
    INVALID_METADATA = "INVALID_METADATA"
    """The enrollment sidecar is corrupt, of an unknown schema version or of another kind."""
    UNSAFE_REFERENCE = "UNSAFE_REFERENCE"
    """A mutable reference was asked for inside a scope, where only copies are handed out."""


class ContextAccessDenied(StoreError, PermissionError):
    """The ambient access scope does not allow ``operation`` on a resource.

    ``operation`` is ``READ``, ``WRITE``, ``CREATE``, ``DELETE``, ``ENUMERATE`` or ``DELEGATE``;
    ``resource_kind`` is ``CONTEXT_WINDOW``, ``TODO_LIST`` or ``BANKED_CONTEXT``;
    ``resource_key`` the page key (``"<execution>"`` for a child scope, ``"__banked_context"``
    for the bank itself); ``reason`` a :class:`DenialReason`, whose value is also the error's
    ``code``.
    Raised before the value, a callback or the page on disk is touched.
    """

    def __init__(
        self, message: str, *, operation: str, resource_kind: str, resource_key: str, reason: str
    ) -> None:
        super().__init__(message)
        self.operation = operation
        self.resource_kind = resource_kind
        self.resource_key = resource_key
        self.reason = DenialReason(reason)
        self.code = self.reason.value

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""
