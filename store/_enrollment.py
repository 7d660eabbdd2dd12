"""Enrollment sidecars: a resource's metadata as JSON, decoded strictly and failing closed.

A sidecar lies beside its payload: ``<key>.bank.access`` for a context page,
``<key>.todo.access`` for a todo page, ``__banked_context.bank.access`` for the bank::

    {"schemaVersion": 1, "kind": "CONTEXT_WINDOW", "resourceId": "r17", "boundaryIds": ["ws3"]}

Anything else (another version, a missing or extra field, a wrong type, a duplicated field, a
kind other than the file's) is invalid: the resource is denied, never guessed at.
"""

from __future__ import annotations

import json
from typing import Any

from store._access import ResourceKind, ResourceMetadata
from store._errors import InvalidRequest

SCHEMA_VERSION = 1
"""The one sidecar schema this Fabric reads and writes."""
MAX_SIDECAR_BYTES = 64 * 1024
_FIELDS = {"schemaVersion", "kind", "resourceId", "boundaryIds"}


class InvalidMetadata(Exception):
    """A sidecar that cannot be trusted; ``why`` says what is wrong with it."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def encode_metadata(metadata: ResourceMetadata) -> bytes:
    record = {
        "schemaVersion": SCHEMA_VERSION,
        "kind": metadata.kind.value,
        "resourceId": metadata.resource_id,
        "boundaryIds": sorted(metadata.boundary_ids),
    }
    return json.dumps(record, sort_keys=True).encode()


def decode_metadata(data: bytes, kind: ResourceKind) -> ResourceMetadata:
    """The metadata in ``data``, which must be a sidecar of ``kind``; else InvalidMetadata."""
    if len(data) > MAX_SIDECAR_BYTES:
        raise InvalidMetadata(f"it is {len(data)} bytes, over {MAX_SIDECAR_BYTES}")
    try:
        record = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidMetadata(f"it is not JSON ({exc})") from None
    if not isinstance(record, dict):
        raise InvalidMetadata("it is not a JSON object")
    version = record.get("schemaVersion")
    if type(version) is not int or version != SCHEMA_VERSION:
        raise InvalidMetadata(
            f"its schemaVersion is {version!r}; this Fabric reads version {SCHEMA_VERSION} only"
        )
    if set(record) != _FIELDS:
        missing, extra = sorted(_FIELDS - set(record)), sorted(set(record) - _FIELDS)
        raise InvalidMetadata(f"its fields are wrong (missing {missing}, unknown {extra})")
    if record["kind"] != kind.value:
        raise InvalidMetadata(f"it is a {record['kind']!r} record where {kind.value} belongs")
    boundaries = record["boundaryIds"]
    if not isinstance(record["resourceId"], str) or not isinstance(boundaries, list):
        raise InvalidMetadata("resourceId must be a string and boundaryIds a list of strings")
    if not all(isinstance(b, str) for b in boundaries) or len(set(boundaries)) != len(boundaries):
        raise InvalidMetadata("boundaryIds must be distinct strings")
    try:
        return ResourceMetadata(kind, record["resourceId"], frozenset(boundaries))
    except InvalidRequest as exc:
        raise InvalidMetadata(str(exc)) from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in pairs:
        if name in out:
            raise ValueError(f"the field {name!r} appears twice")
        out[name] = value
    return out
