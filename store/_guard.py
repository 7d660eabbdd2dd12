"""Access checks of the bank, declared once: whether a scope may do an operation on a
resource, and the denial that says why not."""

from __future__ import annotations

from store._access import AccessMode, AccessScope, Operation, ResourceKind
from store._enrollment import InvalidMetadata, decode_metadata
from store._errors import ContextAccessDenied, DenialReason


def authorize(
    scope: AccessScope, operation: Operation, kind: ResourceKind, key: str, raw: bytes | None
) -> None:
    """Raise ContextAccessDenied unless ``scope`` allows ``operation`` on the resource whose
    enrollment sidecar holds ``raw`` (None: not enrolled)."""
    if raw is None:
        if scope.mode is AccessMode.REQUIRE_ENROLLMENT:
            raise denied(
                operation,
                kind,
                key,
                DenialReason.METADATA_UNAVAILABLE,
                "it is not enrolled and the scope requires enrollment; the host must "
                "register it (or create it with create_context_window / create_todo_list)",
            )
        return
    try:
        metadata = decode_metadata(raw, kind)
    except InvalidMetadata as exc:
        raise denied(
            operation,
            kind,
            key,
            DenialReason.INVALID_METADATA,
            f"its enrollment sidecar is invalid ({exc.why}); the host must register it again",
        ) from None
    if not scope.allows(operation, metadata):
        raise denied(operation, kind, key, DenialReason.MISSING_PERMISSION, no_right(scope))


def denied(
    operation: Operation, kind: ResourceKind, key: str, reason: DenialReason, why: str
) -> ContextAccessDenied:
    return ContextAccessDenied(
        f"{operation.value} on {kind.value} {key!r} denied ({reason.value}): {why}",
        operation=operation.value,
        resource_kind=kind.value,
        resource_key=key,
        reason=reason,
    )


def no_right(scope: AccessScope) -> str:
    return f"the scope of {scope.principal.id!r} has no selector that matches its enrollment"
