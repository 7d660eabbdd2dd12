"""ContextAccess: principals, rights, scopes on contextvars, attenuation, child scopes, and
each bank operation granted and denied for each reason."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import (
    BANK_KEY,
    EXECUTION_KEY,
    AccessMode,
    AccessRights,
    AccessScope,
    Boundary,
    ContextAccessDenied,
    ContextBank,
    ContextWindow,
    DenialReason,
    ExecutionPrincipal,
    InvalidRequest,
    LorebookEntry,
    Operation,
    Resource,
    ResourceKind,
    ResourceMetadata,
    StorageMode,
    TokenBudget,
    child_scope,
    current_scope,
    issue_root_scope,
    use_scope,
)

AGENT = ExecutionPrincipal("agent-1")
ALL = frozenset({Boundary("ws3")})
LEGACY = AccessMode.LEGACY_COMPATIBLE
STRICT = AccessMode.REQUIRE_ENROLLMENT


def rights(**ops: Any) -> AccessRights:
    return AccessRights(
        **{op: frozenset(sel) for op, sel in ops.items() if op != "delegable"},
        delegable=ops.get("delegable", False),
    )


def scope(mode: AccessMode = STRICT, **ops: Any) -> AccessScope:
    return issue_root_scope(AGENT, rights(**ops), mode)


@pytest.fixture
def bank(tmp_path: Path) -> ContextBank:
    """A bank with page "p" enrolled as resource r1 in boundary ws3, and unenrolled "u"."""
    bank = ContextBank(tmp_path)
    bank.create_context_window(
        "p", ContextWindow(context=["secret"]), resource_id="r1", boundary_ids=["ws3"]
    )
    bank.emplace("u", ContextWindow(context=["legacy"]))
    bank.register_metadata(ResourceKind.BANKED_CONTEXT, BANK_KEY, resource_id="bank")
    return bank


def denied(reason: DenialReason, operation: Operation) -> Callable[[ContextAccessDenied], bool]:
    def check(exc: ContextAccessDenied) -> bool:
        return exc.reason is reason and exc.operation == operation.value

    return check


# -- values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: ExecutionPrincipal(""),
        lambda: ExecutionPrincipal("  "),
        lambda: Resource(""),
        lambda: Boundary(" "),
    ],
)
def test_blank_ids_are_refused(make: Callable[[], object]) -> None:
    with pytest.raises(InvalidRequest, match="non-blank"):
        make()


def test_rights_from_config_data() -> None:
    data = {
        "read": [{"resource": "r17"}, {"boundary": "ws3"}],
        "write": [],
        "create": [],
        "delete": [],
        "enumerate": [],
        "delegable": False,
    }
    parsed = AccessRights.from_data(data)
    assert parsed.read == {Resource("r17"), Boundary("ws3")} and not parsed.write
    assert AccessRights.from_data(parsed.to_data()) == parsed
    with pytest.raises(InvalidRequest, match="unknown fields \\['reed'\\]"):
        AccessRights.from_data({"reed": []})
    with pytest.raises(InvalidRequest, match=r"rights\.read holds"):
        AccessRights.from_data({"read": [{"path": "x"}]})


def test_a_denial_is_a_permission_error_with_fields(bank: ContextBank) -> None:
    with use_scope(scope()), pytest.raises(PermissionError) as info:
        bank.get("p")
    exc = info.value
    assert isinstance(exc, ContextAccessDenied)
    assert (exc.operation, exc.resource_kind, exc.resource_key, exc.reason, exc.code) == (
        "READ",
        "CONTEXT_WINDOW",
        "p",
        DenialReason.MISSING_PERMISSION,
        "MISSING_PERMISSION",
    )


# -- each operation granted and denied ---------------------------------------------------

OPERATIONS: dict[str, tuple[dict[str, Any], Callable[[ContextBank], object]]] = {
    "READ get": ({"read": ALL}, lambda b: b.get("p")),
    "READ select": ({"read": ALL}, lambda b: b.select("p", "secret", TokenBudget(9))),
    "WRITE emplace": ({"write": ALL}, lambda b: b.emplace("p", ContextWindow())),
    "WRITE update": ({"read": ALL, "write": ALL}, lambda b: b.update("p", lambda w: None)),
    "DELETE": ({"delete": ALL}, lambda b: b.delete("p")),
    "ENUMERATE": ({"enumerate": [Resource("bank")], "read": ALL}, lambda b: b.keys()),
}


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_each_operation_is_granted_by_its_right(bank: ContextBank, name: str) -> None:
    granted, call = OPERATIONS[name]
    with use_scope(scope(**granted)):
        call(bank)


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_each_operation_is_denied_without_its_right(bank: ContextBank, name: str) -> None:
    """Every other right is granted; only the operation's own is missing."""
    granted, call = OPERATIONS[name]
    everything = {
        op: ALL | {Resource("bank")} for op in ("read", "write", "create", "delete", "enumerate")
    }
    needed = [op for op in granted if op != "read" or name.startswith("READ")]
    for op in needed:
        everything[op] = frozenset()
    with use_scope(scope(**everything)), pytest.raises(ContextAccessDenied) as info:
        call(bank)
    assert info.value.reason is DenialReason.MISSING_PERMISSION


def test_update_needs_read_as_well_as_write(bank: ContextBank) -> None:
    with use_scope(scope(write=ALL)), pytest.raises(ContextAccessDenied) as info:
        bank.update("p", lambda w: None)
    assert info.value.operation == "READ"


def test_create_is_checked_against_the_new_enrollment(bank: ContextBank) -> None:
    """A scoped creator needs CREATE on the resource it enrolls, by resource or boundary."""
    with use_scope(scope(create=[Boundary("ws3")])):
        bank.create_context_window("n1", ContextWindow(), resource_id="r9", boundary_ids=["ws3"])
        with pytest.raises(ContextAccessDenied) as info:
            bank.create_context_window(
                "n2", ContextWindow(), resource_id="r9", boundary_ids=["ws4"]
            )
    assert info.value.operation == "CREATE" and info.value.resource_key == "n2"
    with use_scope(scope(create=[Resource("r5")])):
        bank.create_context_window("n3", ContextWindow(), resource_id="r5")
    assert bank.keys() == ["n1", "n3", "p", "u"]


def test_emplace_on_a_new_enrolled_key_needs_create(bank: ContextBank) -> None:
    """The host may enroll a key first; a scope then creates the page with CREATE."""
    bank.register_metadata(ResourceKind.CONTEXT_WINDOW, "later", resource_id="r2")
    with use_scope(scope(write=[Resource("r2")])), pytest.raises(ContextAccessDenied) as info:
        bank.emplace("later", ContextWindow())
    assert info.value.operation == "CREATE"
    with use_scope(scope(create=[Resource("r2")])):
        bank.update("later", lambda w: w.context.append("made"))
    assert bank.get("later").context == ["made"]


# -- selectors ----------------------------------------------------------------------------


def test_resource_and_boundary_selectors(bank: ContextBank) -> None:
    for selectors in ([Resource("r1")], [Boundary("ws3")]):
        with use_scope(scope(read=selectors)):
            assert bank.get("p").context == ["secret"]
    for selectors in ([Resource("r2")], [Boundary("ws4")], [Boundary("r1")], [Resource("ws3")]):
        with use_scope(scope(read=selectors)), pytest.raises(ContextAccessDenied):
            bank.get("p")


def test_page_keys_never_match_selectors(bank: ContextBank) -> None:
    with use_scope(scope(read=[Resource("p"), Boundary("p")])), pytest.raises(ContextAccessDenied):
        bank.get("p")


# -- denial reasons -----------------------------------------------------------------------


def test_unenrolled_pages_in_each_mode(bank: ContextBank) -> None:
    """LEGACY_COMPATIBLE lets unenrolled pages behave as without a scope; REQUIRE_ENROLLMENT
    denies them (METADATA_UNAVAILABLE), creation of new unenrolled pages included."""
    with use_scope(scope(LEGACY)):
        assert bank.get("u").context == ["legacy"]
        bank.update("new", lambda w: w.context.append("x"))
        with pytest.raises(ContextAccessDenied):
            bank.get("p")  # enrolled pages are still checked
    with use_scope(scope(STRICT, read=ALL, write=ALL, create=ALL)):
        for call in (lambda: bank.get("u"), lambda: bank.update("other", lambda w: None)):
            with pytest.raises(ContextAccessDenied) as info:
                call()
            assert info.value.reason is DenialReason.METADATA_UNAVAILABLE


@pytest.mark.parametrize("mode", [LEGACY, STRICT])
def test_an_invalid_sidecar_fails_closed_in_every_mode(
    bank: ContextBank, tmp_path: Path, mode: AccessMode
) -> None:
    (tmp_path / ".fabric" / "bank" / "p.bank.access").write_text("{not json")
    with use_scope(scope(mode, read=ALL)), pytest.raises(ContextAccessDenied) as info:
        bank.get("p")
    assert info.value.reason is DenialReason.INVALID_METADATA


def test_mutable_references_are_unsafe_inside_a_scope(bank: ContextBank) -> None:
    bank.emplace("m", ContextWindow(), StorageMode.MEMORY_ONLY)
    assert bank.get_reference("m") is bank.get_reference("m")
    with use_scope(scope(LEGACY, read=ALL)):
        for call in (lambda: bank.get_reference("m"), lambda: bank.get_todo_reference("m")):
            with pytest.raises(ContextAccessDenied) as info:
                call()
            assert info.value.reason is DenialReason.UNSAFE_REFERENCE


def test_update_in_a_scope_never_hands_out_the_banks_object(bank: ContextBank) -> None:
    kept: list[ContextWindow] = []
    with use_scope(scope(read=ALL, write=ALL)):
        bank.update("p", kept.append)
    kept[0].context.append("changed later, outside the lock")
    assert bank.get("p").context == ["secret"]


def test_a_denial_comes_before_the_callback_and_the_disk(bank: ContextBank, tmp_path: Path) -> None:
    """A denied update never calls its function nor writes; a denied get never reads."""
    page = tmp_path / ".fabric" / "bank" / "p.bank.json"
    before = page.read_bytes(), page.stat().st_mtime_ns
    called: list[object] = []
    reads: list[object] = []
    backend = bank.backend
    assert backend is not None
    original = backend.read
    backend.read = lambda *a: reads.append(a) or original(*a)  # type: ignore[method-assign]
    bank._hot.clear()  # nothing held in memory: a read would have to go to the disk
    with use_scope(scope(read=ALL)):
        with pytest.raises(ContextAccessDenied):
            bank.update("p", called.append)
        with pytest.raises(ContextAccessDenied):
            bank.emplace("p", ContextWindow())
        with pytest.raises(ContextAccessDenied):
            bank.delete("p")
    with use_scope(scope()), pytest.raises(ContextAccessDenied):
        bank.get("p")
    assert called == [] and reads == []
    assert (page.read_bytes(), page.stat().st_mtime_ns) == before


def test_enumeration_needs_the_bank_and_filters_to_readable_pages(bank: ContextBank) -> None:
    bank.create_context_window("q", ContextWindow(), resource_id="r2", boundary_ids=["ws4"])
    with use_scope(scope(enumerate=[Resource("bank")], read=[Boundary("ws4")])):
        assert bank.keys() == ["q"]
    with use_scope(scope(LEGACY, enumerate=[Resource("bank")])):
        assert bank.keys() == ["u"]  # unenrolled pages are visible in legacy mode only
    with use_scope(scope(read=ALL)), pytest.raises(ContextAccessDenied) as info:
        bank.keys()
    assert (info.value.resource_kind, info.value.resource_key) == ("BANKED_CONTEXT", BANK_KEY)
    bank.delete_metadata(ResourceKind.BANKED_CONTEXT, BANK_KEY)
    with use_scope(scope(enumerate=[Resource("bank")])), pytest.raises(ContextAccessDenied) as info:
        bank.keys()
    assert info.value.reason is DenialReason.METADATA_UNAVAILABLE


def test_enrollment_is_refused_inside_a_scope(bank: ContextBank) -> None:
    with use_scope(scope(LEGACY, read=ALL, write=ALL, create=ALL, delete=ALL)):
        with pytest.raises(ContextAccessDenied):
            bank.register_metadata(ResourceKind.CONTEXT_WINDOW, "p", resource_id="mine")
        with pytest.raises(ContextAccessDenied):
            bank.delete_metadata(ResourceKind.CONTEXT_WINDOW, "p")
    assert bank.metadata(ResourceKind.CONTEXT_WINDOW, "p") == ResourceMetadata(
        ResourceKind.CONTEXT_WINDOW, "r1", frozenset({"ws3"})
    )


def test_deleting_a_page_keeps_its_enrollment(bank: ContextBank) -> None:
    with use_scope(scope(delete=ALL)):
        assert bank.delete("p")
    with use_scope(scope(read=ALL)), pytest.raises(Exception, match="no context page"):
        bank.get("p")
    assert bank.metadata(ResourceKind.CONTEXT_WINDOW, "p") is not None


# -- scopes on contextvars ----------------------------------------------------------------


def test_scopes_follow_asyncio_tasks_and_stay_in_them(bank: ContextBank) -> None:
    """A task started inside a scope runs under it; a sibling task and the code after the
    block do not see it."""
    seen: dict[str, AccessScope | None] = {}

    async def child(name: str) -> None:
        seen[name] = current_scope()

    async def main() -> None:
        root = scope(read=ALL)
        with use_scope(root) as installed:
            inner = asyncio.create_task(child("inside"))
            await asyncio.to_thread(bank.get, "p")
        outer = asyncio.create_task(child("outside"))
        await asyncio.gather(inner, outer)
        seen["installed"] = installed

    asyncio.run(main())
    assert seen["inside"] is seen["installed"] and seen["outside"] is None
    assert current_scope() is None


def test_nested_scopes_keep_the_principal_intersect_rights_and_stricter_mode() -> None:
    outer = issue_root_scope(AGENT, rights(read=[Resource("a"), Resource("b")]), STRICT)
    inner = issue_root_scope(
        ExecutionPrincipal("someone-else"),
        rights(read=[Resource("b"), Resource("c")], delegable=True),
        LEGACY,
    )
    with use_scope(outer), use_scope(inner) as effective:
        assert effective.principal == AGENT
        assert effective.rights.read == {Resource("b")}
        assert effective.mode is STRICT
        assert not effective.rights.delegable
    with use_scope(inner), use_scope(outer) as effective:
        assert effective.mode is STRICT and effective.principal.id == "someone-else"


def test_attenuate_intersects_every_set_and_delegable() -> None:
    root = scope(read=[Resource("a"), Boundary("x")], write=[Resource("a")], delegable=True)
    narrowed = root.attenuate(rights(read=[Boundary("x"), Resource("z")], delete=[Resource("a")]))
    assert narrowed.rights.read == {Boundary("x")}
    assert not narrowed.rights.write and not narrowed.rights.delete
    assert not narrowed.rights.delegable and narrowed.principal == AGENT


SELECTOR = st.one_of(
    st.builds(Resource, st.sampled_from("abc")), st.builds(Boundary, st.sampled_from("xyz"))
)
RIGHTS = st.builds(
    AccessRights,
    **{
        name: st.frozensets(SELECTOR, max_size=4)
        for name in ("read", "write", "create", "delete", "enumerate", "delegate")
    },
    delegable=st.booleans(),
)
METADATA = st.builds(
    ResourceMetadata,
    kind=st.just(ResourceKind.CONTEXT_WINDOW),
    resource_id=st.sampled_from("abc"),
    boundary_ids=st.frozensets(st.sampled_from("xyz"), max_size=2),
)


def broadens(narrow: AccessScope, wide: AccessScope, metadata: ResourceMetadata) -> bool:
    return any(narrow.allows(op, metadata) and not wide.allows(op, metadata) for op in Operation)


@settings(max_examples=200, deadline=None)
@given(held=RIGHTS, asked=RIGHTS, metadata=METADATA)
def test_attenuation_nesting_and_children_never_broaden(
    held: AccessRights, asked: AccessRights, metadata: ResourceMetadata
) -> None:
    """Whatever rights are asked for, the result grants nothing the holder lacks."""
    root = issue_root_scope(AGENT, held, STRICT)
    assert not broadens(root.attenuate(asked), root, metadata)
    assert root.attenuate(asked).rights.delegable <= held.delegable
    with use_scope(root), use_scope(issue_root_scope(AGENT, asked, LEGACY)) as nested:
        assert not broadens(nested, root, metadata) and nested.mode is STRICT
        if nested.rights.delegable:
            child = child_scope(ExecutionPrincipal("child"), asked)
            assert not broadens(child, root, metadata)
            with use_scope(child) as installed:
                assert not broadens(installed, root, metadata)


# -- attenuate_for_resources ----------------------------------------------------------------


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_exact_resources_are_admitted_without_the_resolver() -> None:
    root = scope(read=[Resource("r1")])
    calls: list[tuple[str, str]] = []
    narrowed = run(
        root.attenuate_for_resources(["r1", "r2"], lambda r, b: calls.append((r, b)) or True)
    )
    assert narrowed.rights.read == {Resource("r1")} and calls == []


@pytest.mark.parametrize(
    ("answer", "admitted"),
    [(True, True), (False, False), ("yes", False), (RuntimeError("resolver down"), False)],
)
def test_the_resolver_decides_resources_in_boundaries(answer: object, admitted: bool) -> None:
    """A resource in a granted boundary is admitted only when the resolver answers True;
    False, anything else, or raising leaves it out."""
    root = scope(read=[Boundary("ws3")], write=[Boundary("ws3")])

    async def resolver(resource_id: str, boundary_id: str) -> object:
        assert (resource_id, boundary_id) == ("r7", "ws3")
        if isinstance(answer, Exception):
            raise answer
        return answer

    narrowed = run(root.attenuate_for_resources(["r7"], resolver))  # type: ignore[arg-type]
    expected = {Resource("r7")} if admitted else set()
    assert narrowed.rights.read == expected and narrowed.rights.write == expected
    assert Boundary("ws3") not in narrowed.rights.read


def test_the_resolver_may_be_synchronous() -> None:
    narrowed = run(scope(read=[Boundary("b")]).attenuate_for_resources(["r"], lambda r, b: True))
    assert narrowed.rights.read == {Resource("r")}


def test_cancellation_of_the_resolver_propagates() -> None:
    async def main() -> None:
        started = asyncio.Event()

        async def resolver(resource_id: str, boundary_id: str) -> bool:
            started.set()
            await asyncio.Event().wait()
            return True

        task = asyncio.create_task(
            scope(read=[Boundary("b")]).attenuate_for_resources(["r"], resolver)
        )
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())


# -- child scopes -------------------------------------------------------------------------


def test_a_child_scope_needs_an_ambient_delegable_scope() -> None:
    for ambient in (None, scope(read=ALL)):
        with (
            use_scope(ambient) if ambient else _nothing(),
            pytest.raises(ContextAccessDenied) as info,
        ):
            child_scope(ExecutionPrincipal("child"), rights(read=ALL))
        exc = info.value
        assert (exc.operation, exc.resource_kind, exc.resource_key) == (
            "DELEGATE",
            "BANKED_CONTEXT",
            EXECUTION_KEY,
        )


def _nothing() -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


def test_a_child_gets_only_what_the_parent_holds_and_may_delegate(bank: ContextBank) -> None:
    parent = scope(
        read=[Boundary("ws3"), Resource("r2")],
        write=[Boundary("ws3")],
        delegate=[Boundary("ws3")],
        delegable=True,
    )
    with use_scope(parent):
        child = child_scope(
            ExecutionPrincipal("child"), rights(read=[Boundary("ws3"), Resource("r2")], delete=ALL)
        )
        assert child.rights.read == {Boundary("ws3")} and not child.rights.delete
        with use_scope(child) as installed:
            assert installed.principal.id == "child"
            assert bank.get("p").context == ["secret"]
            with pytest.raises(ContextAccessDenied):
                bank.emplace("p", ContextWindow())
            with pytest.raises(ContextAccessDenied):  # the child was not made delegable
                child_scope(ExecutionPrincipal("grandchild"), rights(read=ALL))


def test_entries_written_in_a_scope_reach_the_page(bank: ContextBank) -> None:
    with use_scope(scope(read=ALL, write=ALL)):
        bank.update("p", lambda w: w.add(LorebookEntry(key="k", value="v")) and None)
    assert bank.get("p").lorebook["k"].value == "v"


def test_sidecar_on_disk_is_the_documented_record(bank: ContextBank, tmp_path: Path) -> None:
    record = json.loads((tmp_path / ".fabric" / "bank" / "p.bank.access").read_text())
    assert record == {
        "schemaVersion": 1,
        "kind": "CONTEXT_WINDOW",
        "resourceId": "r1",
        "boundaryIds": ["ws3"],
    }
    assert (tmp_path / ".fabric" / "bank" / "__banked_context.bank.access").exists()
