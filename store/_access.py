"""ContextAccess: which pages an execution may read, write, create, delete, enumerate or delegate.

A host issues a root scope for a principal and installs it with :func:`use_scope`; the scope
lives in a ``contextvars`` variable, so it follows the code that runs under it, asyncio tasks
and ``asyncio.to_thread`` included, and nothing else. Every bank operation checks the ambient
scope before it touches the value, a callback or the disk. Authority only ever shrinks::

    issue_root_scope(principal, rights, mode)     the host's grant
    use_scope(scope)                               install it; inside another scope it nests:
                                                   the ambient principal stays, rights are
                                                   intersected, the stricter mode wins
    scope.attenuate(rights)                        every selector set and ``delegable``
                                                   intersected
    await scope.attenuate_for_resources(ids, fn)   exact resources, each admitted when it is
                                                   granted exactly or a trusted resolver
                                                   confirms it lies in a granted boundary
    child_scope(principal, rights)                 a new principal under the ambient scope,
                                                   which must be delegable; it receives only
                                                   what the parent holds *and* may delegate

Selectors name enrolled resources, never page keys: ``Resource(id)`` matches the resource id of
a page's enrollment sidecar, ``Boundary(id)`` any of its boundary ids.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from store._errors import ContextAccessDenied, DenialReason, InvalidRequest

EXECUTION_KEY = "<execution>"
"""The resource key of a denied child scope."""
BANK_KEY = "__banked_context"
"""The resource key of the bank itself (its enrollment is ``__banked_context.bank.access``)."""
_ID_LIMIT = 256


class ResourceKind(StrEnum):
    """What a resource is."""

    CONTEXT_WINDOW = "CONTEXT_WINDOW"
    """A context page: context elements and a lorebook."""
    TODO_LIST = "TODO_LIST"
    """A todo page."""
    BANKED_CONTEXT = "BANKED_CONTEXT"
    """The bank as a whole (enumeration, delegation)."""


class Operation(StrEnum):
    """What a scope may do to a resource; each has its selector set in :class:`AccessRights`."""

    READ = "READ"
    WRITE = "WRITE"
    CREATE = "CREATE"
    DELETE = "DELETE"
    ENUMERATE = "ENUMERATE"
    DELEGATE = "DELEGATE"


class AccessMode(StrEnum):
    """How a scope treats resources without enrollment."""

    LEGACY_COMPATIBLE = "LEGACY_COMPATIBLE"
    """Unenrolled resources behave as without a scope; enrolled ones are checked."""
    REQUIRE_ENROLLMENT = "REQUIRE_ENROLLMENT"
    """Unenrolled resources are denied (``METADATA_UNAVAILABLE``)."""


def _check_id(what: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequest(f"{what} must be a non-blank string, not {value!r}")
    if len(value) > _ID_LIMIT or "\x00" in value:
        raise InvalidRequest(f"{what} must be at most {_ID_LIMIT} characters without NUL")
    return value


@dataclass(frozen=True)
class ExecutionPrincipal:
    """Who runs: an agent, an execution, a child task. A blank id is refused."""

    id: str

    def __post_init__(self) -> None:
        _check_id("an execution principal's id", self.id)


@dataclass(frozen=True)
class Resource:
    """Selects the one enrolled resource whose resource id is ``id``."""

    id: str

    def __post_init__(self) -> None:
        _check_id("a Resource selector's id", self.id)


@dataclass(frozen=True)
class Boundary:
    """Selects every enrolled resource that lists ``id`` among its boundary ids."""

    id: str

    def __post_init__(self) -> None:
        _check_id("a Boundary selector's id", self.id)


Selector = Resource | Boundary
Selectors = frozenset[Selector]


@dataclass(frozen=True)
class ResourceMetadata:
    """A resource's enrollment: its kind, its resource id and the boundaries it lies in."""

    kind: ResourceKind
    resource_id: str
    boundary_ids: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ResourceKind(self.kind))
        _check_id("a resource id", self.resource_id)
        object.__setattr__(self, "boundary_ids", frozenset(self.boundary_ids))
        for boundary in self.boundary_ids:
            _check_id("a boundary id", boundary)

    def matched_by(self, selectors: Selectors) -> bool:
        return any(
            (isinstance(s, Resource) and s.id == self.resource_id)
            or (isinstance(s, Boundary) and s.id in self.boundary_ids)
            for s in selectors
        )


_FIELDS = {op: op.value.lower() for op in Operation}


@dataclass(frozen=True)
class AccessRights:
    """A selector set per operation, plus whether the holder may make child scopes."""

    read: Selectors = frozenset()
    write: Selectors = frozenset()
    create: Selectors = frozenset()
    delete: Selectors = frozenset()
    enumerate: Selectors = frozenset()
    delegate: Selectors = frozenset()
    """Resources the holder may hand on to a child scope."""
    delegable: bool = False
    """Whether the holder may make child scopes at all."""

    def __post_init__(self) -> None:
        for name in _FIELDS.values():
            selectors = frozenset(getattr(self, name))
            for s in selectors:
                if not isinstance(s, Resource | Boundary):
                    raise InvalidRequest(
                        f"the {name} rights hold {s!r}; use Resource(id) or Boundary(id)"
                    )
            object.__setattr__(self, name, selectors)
        if not isinstance(self.delegable, bool):
            raise InvalidRequest(f"delegable must be true or false, not {self.delegable!r}")

    def selectors(self, operation: Operation) -> Selectors:
        result: Selectors = getattr(self, _FIELDS[Operation(operation)])
        return result

    def intersect(self, other: AccessRights) -> AccessRights:
        """What both grant: each selector set intersected, ``delegable`` only if both are."""
        return AccessRights(
            **{name: self.selectors(op) & other.selectors(op) for op, name in _FIELDS.items()},
            delegable=self.delegable and other.delegable,
        )

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> AccessRights:
        """Rights from plain data (a config file):
        ``{"read": [{"resource": "r17"}, {"boundary": "ws3"}], ..., "delegable": false}``."""
        if not isinstance(data, Mapping):
            raise InvalidRequest("rights must be an object of operation: [selectors]")
        known = {*_FIELDS.values(), "delegable"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidRequest(
                f"rights have unknown fields {unknown}; the fields are {sorted(known)}"
            )
        sets: dict[str, Selectors] = {}
        for name in _FIELDS.values():
            items = data.get(name, [])
            if not isinstance(items, list):
                raise InvalidRequest(f"rights.{name} must be a list of selectors")
            sets[name] = frozenset(_selector(name, item) for item in items)
        return cls(**sets, delegable=data.get("delegable", False))

    def to_data(self) -> dict[str, Any]:
        """The inverse of :meth:`from_data`."""
        out: dict[str, Any] = {
            name: [
                {"resource": s.id} if isinstance(s, Resource) else {"boundary": s.id}
                for s in sorted(self.selectors(op), key=lambda s: (type(s).__name__, s.id))
            ]
            for op, name in _FIELDS.items()
        }
        out["delegable"] = self.delegable
        return out


def _selector(field_name: str, item: object) -> Selector:
    if isinstance(item, dict) and len(item) == 1:
        ((kind, value),) = item.items()
        if kind == "resource":
            return Resource(value)
        if kind == "boundary":
            return Boundary(value)
    raise InvalidRequest(
        f'rights.{field_name} holds {item!r}; a selector is {{"resource": id}} or '
        '{"boundary": id}'
    )


Resolver = Callable[[str, str], Awaitable[bool] | bool]
"""A trusted host function: does resource ``resource_id`` lie in boundary ``boundary_id``?"""


@dataclass(frozen=True, eq=False)
class AccessScope:
    """A principal's authority over the bank. Install it with :func:`use_scope`."""

    principal: ExecutionPrincipal
    rights: AccessRights
    mode: AccessMode = AccessMode.LEGACY_COMPATIBLE
    parent: AccessScope | None = field(default=None, repr=False)
    """The scope this one was made a child of (:func:`child_scope`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.principal, ExecutionPrincipal):
            raise InvalidRequest("a scope's principal must be an ExecutionPrincipal")
        if not isinstance(self.rights, AccessRights):
            raise InvalidRequest("a scope's rights must be AccessRights")
        object.__setattr__(self, "mode", AccessMode(self.mode))

    def allows(self, operation: Operation, metadata: ResourceMetadata) -> bool:
        """Whether the rights for ``operation`` select this enrolled resource."""
        return metadata.matched_by(self.rights.selectors(operation))

    def attenuate(self, rights: AccessRights) -> AccessScope:
        """The same principal and mode with only what both this scope and ``rights`` grant."""
        return AccessScope(self.principal, self.rights.intersect(rights), self.mode, self.parent)

    async def attenuate_for_resources(
        self, resource_ids: Iterable[str], resolver: Resolver
    ) -> AccessScope:
        """A scope over exactly these resources: for each operation, a resource is kept when
        this scope grants it exactly (``Resource(id)``), or when ``resolver(resource_id,
        boundary_id)`` confirms it lies in a boundary this scope grants for that operation.
        A resolver that answers anything but ``True`` or raises leaves it out; cancellation
        propagates. ``delegable`` is kept."""
        wanted = [Resource(rid) for rid in dict.fromkeys(resource_ids)]
        memo: dict[tuple[str, str], bool] = {}

        async def confirmed(resource_id: str, boundary_id: str) -> bool:
            if (resource_id, boundary_id) not in memo:
                try:
                    answer = resolver(resource_id, boundary_id)
                    if inspect.isawaitable(answer):
                        answer = await answer
                    memo[resource_id, boundary_id] = answer is True
                except Exception:
                    memo[resource_id, boundary_id] = False
            return memo[resource_id, boundary_id]

        sets: dict[str, Selectors] = {}
        for op, name in _FIELDS.items():
            held = self.rights.selectors(op)
            boundaries = sorted(s.id for s in held if isinstance(s, Boundary))
            kept = set()
            for resource in wanted:
                if resource in held:
                    kept.add(resource)
                    continue
                for boundary in boundaries:
                    if await confirmed(resource.id, boundary):
                        kept.add(resource)
                        break
            sets[name] = frozenset(kept)
        rights = AccessRights(**sets, delegable=self.rights.delegable)
        return AccessScope(self.principal, rights, self.mode, self.parent)


_AMBIENT: contextvars.ContextVar[AccessScope | None] = contextvars.ContextVar(
    "fabric_context_access_scope", default=None
)


def current_scope() -> AccessScope | None:
    """The scope installed around the running code, or None (trusted host code)."""
    return _AMBIENT.get()


def issue_root_scope(
    principal: ExecutionPrincipal,
    rights: AccessRights,
    mode: AccessMode = AccessMode.LEGACY_COMPATIBLE,
) -> AccessScope:
    """The host's grant to ``principal``; nothing is installed until :func:`use_scope`."""
    return AccessScope(principal, rights, AccessMode(mode))


def _stricter(a: AccessMode, b: AccessMode) -> AccessMode:
    if AccessMode.REQUIRE_ENROLLMENT in (a, b):
        return AccessMode.REQUIRE_ENROLLMENT
    return AccessMode.LEGACY_COMPATIBLE


@contextlib.contextmanager
def use_scope(scope: AccessScope) -> Iterator[AccessScope]:
    """Install ``scope`` for the code in the ``with`` block (and the tasks it starts).

    Inside another scope it nests: the ambient principal stays (unless ``scope`` is a child made
    from the ambient scope by :func:`child_scope`), rights are intersected and the stricter mode
    wins, so installing a scope never adds authority. Yields the scope in effect.
    """
    ambient = _AMBIENT.get()
    effective = scope
    if ambient is not None:
        principal = scope.principal if scope.parent is ambient else ambient.principal
        effective = AccessScope(
            principal,
            ambient.rights.intersect(scope.rights),
            _stricter(ambient.mode, scope.mode),
            scope.parent if scope.parent is ambient else ambient.parent,
        )
    token = _AMBIENT.set(effective)
    try:
        yield effective
    finally:
        _AMBIENT.reset(token)


def child_scope(
    principal: ExecutionPrincipal, rights: AccessRights, mode: AccessMode | None = None
) -> AccessScope:
    """A scope for a child execution under the ambient scope, which must be delegable (else a
    ``DELEGATE`` denial on ``BANKED_CONTEXT``, key ``"<execution>"``). Each operation's
    selectors are those requested that the parent holds for that operation and may delegate;
    the mode is the stricter of the parent's and ``mode``."""
    ambient = _AMBIENT.get()
    if ambient is None or not ambient.rights.delegable:
        why = "no access scope is installed" if ambient is None else "the scope is not delegable"
        raise ContextAccessDenied(
            f"cannot make a child scope for {principal.id!r}: {why}. The host must grant "
            "delegable rights (delegable=True) to the parent.",
            operation=Operation.DELEGATE.value,
            resource_kind=ResourceKind.BANKED_CONTEXT.value,
            resource_key=EXECUTION_KEY,
            reason=DenialReason.MISSING_PERMISSION,
        )
    handed = ambient.rights.selectors(Operation.DELEGATE)
    sets = {
        name: rights.selectors(op) & ambient.rights.selectors(op) & handed
        for op, name in _FIELDS.items()
    }
    granted = AccessRights(**sets, delegable=rights.delegable)
    return AccessScope(
        principal, granted, _stricter(ambient.mode, AccessMode(mode or ambient.mode)), ambient
    )
