"""Enrollment sidecars: strict decoding that fails closed, and atomic creation with the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import (
    AccessMode,
    AccessRights,
    AlreadyExists,
    Boundary,
    ContextAccessDenied,
    ContextBank,
    ContextWindow,
    DenialReason,
    ExecutionPrincipal,
    IntegrityError,
    ResourceKind,
    StorageMode,
    StoreUnavailable,
    TodoList,
    issue_root_scope,
    use_scope,
)

GOOD = {"schemaVersion": 1, "kind": "CONTEXT_WINDOW", "resourceId": "r1", "boundaryIds": ["ws3"]}
READER = issue_root_scope(
    ExecutionPrincipal("agent"),
    AccessRights(read=frozenset({Boundary("ws3")})),
    AccessMode.REQUIRE_ENROLLMENT,
)


def sidecar(workspace: Path, key: str = "p", kind: str = "bank") -> Path:
    return workspace / ".fabric" / "bank" / f"{key}.{kind}.access"


@pytest.fixture
def bank(tmp_path: Path) -> ContextBank:
    bank = ContextBank(tmp_path)
    bank.create_context_window(
        "p", ContextWindow(context=["x"]), resource_id="r1", boundary_ids=["ws3"]
    )
    return bank


def test_a_valid_sidecar_grants(bank: ContextBank, tmp_path: Path) -> None:
    sidecar(tmp_path).write_text(json.dumps(GOOD))
    with use_scope(READER):
        assert bank.get("p").context == ["x"]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ({**GOOD, "schemaVersion": 2}, "schemaVersion is 2"),
        ({**GOOD, "schemaVersion": "1"}, "schemaVersion is '1'"),
        ({**GOOD, "schemaVersion": True}, "schemaVersion is True"),
        ({k: v for k, v in GOOD.items() if k != "schemaVersion"}, "schemaVersion is None"),
        ({**GOOD, "kind": "TODO_LIST"}, "'TODO_LIST' record"),
        ({**GOOD, "extra": 1}, "unknown ['extra']"),
        ({k: v for k, v in GOOD.items() if k != "boundaryIds"}, "missing ['boundaryIds']"),
        ({**GOOD, "resourceId": 17}, "resourceId must be a string"),
        ({**GOOD, "resourceId": " "}, "non-blank"),
        ({**GOOD, "boundaryIds": "ws3"}, "boundaryIds a list"),
        ({**GOOD, "boundaryIds": ["ws3", "ws3"]}, "distinct"),
        ({**GOOD, "boundaryIds": [3]}, "distinct strings"),
        ([GOOD], "not a JSON object"),
    ],
)
def test_a_malformed_sidecar_fails_closed(
    bank: ContextBank, tmp_path: Path, content: object, why: str
) -> None:
    """Unknown versions, malformed records and kind mismatches deny (INVALID_METADATA)."""
    sidecar(tmp_path).write_text(json.dumps(content))
    with use_scope(READER), pytest.raises(ContextAccessDenied) as info:
        bank.get("p")
    assert info.value.reason is DenialReason.INVALID_METADATA
    assert why in str(info.value)
    with pytest.raises(IntegrityError, match="enrollment of 'p' is invalid"):
        bank.metadata(ResourceKind.CONTEXT_WINDOW, "p")


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"{",
        b"\xff\xfe",
        b'{"schemaVersion": 1, "schemaVersion": 1, "kind": "CONTEXT_WINDOW", '
        b'"resourceId": "r1", "boundaryIds": []}',
        b" " * (65 * 1024),
    ],
)
def test_corrupt_bytes_fail_closed(bank: ContextBank, tmp_path: Path, raw: bytes) -> None:
    sidecar(tmp_path).write_bytes(raw)
    with use_scope(READER), pytest.raises(ContextAccessDenied) as info:
        bank.get("p")
    assert info.value.reason is DenialReason.INVALID_METADATA


def test_the_bank_sidecar_must_be_of_the_bank_kind(bank: ContextBank, tmp_path: Path) -> None:
    (tmp_path / ".fabric" / "bank" / "__banked_context.bank.access").write_text(json.dumps(GOOD))
    scope = issue_root_scope(
        ExecutionPrincipal("agent"), AccessRights(enumerate=frozenset({Boundary("ws3")}))
    )
    with use_scope(scope), pytest.raises(ContextAccessDenied) as info:
        bank.keys()
    assert info.value.reason is DenialReason.INVALID_METADATA


def test_create_rejects_an_existing_payload_or_sidecar(bank: ContextBank, tmp_path: Path) -> None:
    with pytest.raises(AlreadyExists, match="already exists"):
        bank.create_context_window("p", ContextWindow(), resource_id="r2")
    bank.emplace("plain", ContextWindow())
    with pytest.raises(AlreadyExists, match="already exists"):
        bank.create_context_window("plain", ContextWindow(), resource_id="r2")
    bank.register_metadata(ResourceKind.CONTEXT_WINDOW, "enrolled", resource_id="r3")
    with pytest.raises(AlreadyExists, match="already enrolled"):
        bank.create_context_window("enrolled", ContextWindow(), resource_id="r2")
    sidecar(tmp_path, "broken").write_text("junk")
    with pytest.raises(AlreadyExists):
        bank.create_context_window("broken", ContextWindow(), resource_id="r2")
    assert not (tmp_path / ".fabric" / "bank" / "enrolled.bank.json").exists()


def test_create_stores_a_defensive_copy(bank: ContextBank) -> None:
    window = ContextWindow(context=["a"])
    bank.create_context_window("c", window, resource_id="r9")
    window.context.append("changed")
    assert bank.get("c").context == ["a"]


def test_a_failed_payload_write_leaves_no_enrollment(tmp_path: Path) -> None:
    """The sidecar and the payload go together: when the payload cannot be written, the
    sidecar written just before is removed again."""
    bank = ContextBank(tmp_path)
    assert bank.backend is not None

    def full(*args: object) -> object:
        raise StoreUnavailable("the disk is full")

    bank.backend.write = full  # type: ignore[method-assign]
    with pytest.raises(StoreUnavailable):
        bank.create_context_window("c", ContextWindow(), resource_id="r9")
    assert not sidecar(tmp_path, "c").exists()
    assert bank.metadata(ResourceKind.CONTEXT_WINDOW, "c") is None


def test_todo_lists_enroll_with_their_own_sidecar(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    todo = TodoList()
    todo.add("ship")
    bank.create_todo_list("plan", todo, resource_id="t1", boundary_ids=["ws3"])
    record = json.loads(sidecar(tmp_path, "plan", "todo").read_text())
    assert record["kind"] == "TODO_LIST"
    with use_scope(READER):
        assert bank.get_todo("plan").items[0].text == "ship"
        with pytest.raises(ContextAccessDenied) as info:
            bank.get("plan")  # the context page of that key is another resource
        assert info.value.reason is DenialReason.METADATA_UNAVAILABLE


def test_memory_only_pages_keep_their_enrollment_in_memory(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.create_context_window(
        "m", ContextWindow(), resource_id="r1", boundary_ids=["ws3"], mode=StorageMode.MEMORY_ONLY
    )
    assert not sidecar(tmp_path, "m").exists()
    with use_scope(READER):
        assert bank.get("m") == ContextWindow()
    other = ContextBank(tmp_path)
    other.create_context_window("m", ContextWindow(), resource_id="r1")  # no leftover
