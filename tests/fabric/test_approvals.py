"""Approvals by risk class: ``allow``, ``ask`` and ``deny`` per class and per tool glob, the
approver that is asked (a Python callback here; MCP elicitation in test_approvals_mcp.py),
``ask`` failing closed without one, and every decision in telemetry and ``ctx_status``."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import (
    ApprovalPolicy,
    ApprovalRequest,
    ConfigError,
    Fabric,
    Limits,
    ProviderRegistry,
)
from fabric.providers import RISKS, Risk

CALL = """
try:
    return await extensions.act(note="hello")
except ToolError as e:
    return {"code": e.code, "message": e.message}
"""


def registry_with(risk: Risk | None) -> ProviderRegistry:
    registry = ProviderRegistry()

    async def act(note: str) -> str:
        """Do something of the given class."""
        return f"acted: {note}"

    registry.register("extensions", "act", act, risk=risk)
    return registry


def configure(root: Path, approvals: Any, **more: Any) -> None:
    """Write config.json (its mtime moved on, so a running session sees the change)."""
    path = root / ".fabric" / "config.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"approvals": approvals, **more}))
    later = time.time_ns() + 10**9 * (1 + len(path.read_text()) % 7)
    os.utime(path, ns=(later, later))


class Recorder:
    """An approver that answers what it is told to and keeps what it was asked."""

    def __init__(self, answer: Any = "allow") -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Any:
        self.asked.append(request)
        return self.answer


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[Fabric]:
    async with Fabric(tmp_path, registry=registry_with("execute")) as fab:
        yield fab


def events(fab: Fabric, kind: str) -> list[dict[str, Any]]:
    return [e for e in fab.telemetry.events.recent(200) if e["kind"] == kind]


@pytest.mark.parametrize("risk", RISKS)
@pytest.mark.parametrize("mode", ["allow", "ask", "deny"])
async def test_each_class_in_each_mode(tmp_path: Path, risk: Risk, mode: str) -> None:
    """allow runs without asking, ask runs once the approver allows, deny fails naming the
    tool, its class and the key to change."""
    configure(tmp_path, {risk: mode})
    approver = Recorder("allow")
    async with Fabric(tmp_path, registry=registry_with(risk), approver=approver) as fab:
        result = await fab.exec(CALL)
    assert result.ok, result.text
    if mode == "deny":
        assert result.value["code"] == "denied"
        message = result.value["message"]
        assert "extensions.act" in message and f"risk class is {risk}" in message
        assert f'"{risk}": "allow"' in message and "approvals" in message
        assert approver.asked == []
    else:
        assert result.value == "acted: hello"
        assert len(approver.asked) == (1 if mode == "ask" else 0)
    record = result.call_log[0]
    assert record.risk == risk
    assert record.approval == {"allow": "allow", "ask": "approved", "deny": "deny"}[mode]


@pytest.mark.parametrize(
    ("risk", "expected"),
    [
        ("read", "allow"),
        ("write", "allow"),
        ("execute", "ask"),
        ("network", "deny"),
        ("agent", "ask"),
        (None, "ask"),  # a provider registered without a class is judged as execute
    ],
)
async def test_the_defaults(tmp_path: Path, risk: Risk | None, expected: str) -> None:
    async with Fabric(tmp_path, registry=registry_with(risk)) as fab:
        assert fab.approvals.decide(risk, "extensions.act") == expected
        result = await fab.exec(CALL)
    want = {"allow": "acted: hello", "ask": "approval_required", "deny": "denied"}[expected]
    assert (result.value if expected == "allow" else result.value["code"]) == want
    assert result.call_log[0].risk == (risk or "execute")


async def test_ask_without_an_approver_fails_closed_naming_the_key(session: Fabric) -> None:
    result = await session.exec(CALL)
    assert result.value["code"] == "approval_required"
    message = result.value["message"]
    assert "approvals.execute is ask" in message and "no approver is connected" in message
    assert '"approvals": {"extensions.act": "allow"}' in message
    assert "Fabric(approver=...)" in message and "elicitation" in message
    assert result.call_log[0].approval == "unasked"


async def test_tool_keys_beat_class_keys_and_the_most_specific_glob_wins(tmp_path: Path) -> None:
    configure(
        tmp_path,
        {
            "execute": "deny",
            "extensions": "ask",
            "extensions.git.*": "allow",
            "extensions.git.push": "deny",
            "extensions.g?t.*": "ask",
        },
    )
    async with Fabric(tmp_path) as fab:
        decide = fab.approvals.decision
        assert decide("execute", "extensions.git.status").key == "extensions.git.*"
        assert decide("execute", "extensions.git.status").mode == "allow"
        assert decide("execute", "extensions.git.push").mode == "deny"  # named exactly
        assert decide("execute", "extensions.get.x").key == "extensions.g?t.*"
        assert decide("execute", "extensions.other").key == "extensions"
        assert decide("execute", "mcp.other").key == "execute"
        assert decide("execute", "mcp.other").mode == "deny"
        assert decide("read", "tools.read").source == "default"


async def test_a_tie_between_globs_goes_to_the_stricter_mode() -> None:
    policy = ApprovalPolicy({"mcp.a*": "allow", "mcp.*b": "deny", "mcp.*c": "ask"})
    assert policy.decide("read", "mcp.ab").mode == "deny"
    assert policy.decide("read", "mcp.ac").mode == "ask"


NAMES = st.sampled_from(["git", "time", "x"])


@settings(max_examples=200, deadline=None)
@given(
    tool=st.tuples(NAMES, NAMES).map(lambda parts: f"mcp.{parts[0]}.{parts[1]}"),
    keys=st.dictionaries(
        st.one_of(
            st.sampled_from(RISKS),
            st.tuples(NAMES, st.sampled_from(["*", "status", "git", "x"])).map(
                lambda parts: f"mcp.{parts[0]}.{parts[1]}"
            ),
            st.sampled_from(["mcp", "mcp.*", "mcp.g*", "mcp.*.x"]),
        ),
        st.sampled_from(["allow", "ask", "deny"]),
        max_size=8,
    ),
    risk=st.sampled_from(RISKS),
)
def test_the_precedence_as_a_property(tool: str, keys: dict[str, Any], risk: Risk) -> None:
    """The exact key, else the matching glob with the most literal characters, else the
    class's key, else its default."""
    import fnmatch

    decision = ApprovalPolicy(keys).decide(risk, tool)
    if tool in keys:
        assert (decision.key, decision.mode) == (tool, keys[tool])
        return
    globs = {k: (k if "." in k else f"{k}.*") for k in keys if k not in RISKS and k != tool}
    matching = [k for k, pattern in globs.items() if fnmatch.fnmatchcase(tool, pattern)]
    if matching:
        literal = {k: len(globs[k].replace("*", "").replace("?", "")) for k in matching}
        best = max(literal.values())
        assert decision.key in [k for k in matching if literal[k] == best]
        assert decision.source == "tool"
    elif risk in keys:
        assert (decision.key, decision.mode, decision.source) == (risk, keys[risk], "class")
    else:
        assert decision.source == "default" and decision.key == risk


async def test_bad_keys_and_values_are_settings_warnings_naming_the_key(tmp_path: Path) -> None:
    configure(
        tmp_path,
        {
            "execute": "allow",
            "exec": "allow",
            "network": "sometimes",
            "files.*": "deny",
        },
    )
    async with Fabric(tmp_path) as fab:
        warnings = " | ".join(fab.warnings)
        assert "approvals.exec: not a risk class" in warnings
        assert "approvals.network: must be allow, ask or deny, not 'sometimes'" in warnings
        assert "approvals.files.*: a tool key is a namespace" in warnings
        assert fab.approvals.decide("execute", "extensions.x") == "allow"  # the good one applies
        assert fab.approvals.decide("network", "extensions.x") == "deny"
    configure(tmp_path, ["execute"])
    async with Fabric(tmp_path) as fab:
        assert any("approvals must be an object" in w for w in fab.warnings)


async def test_a_changed_config_applies_to_the_next_execution(session: Fabric) -> None:
    root = session.workspace.root
    configure(root, {"extensions.act": "allow"})
    assert (await session.exec(CALL)).value == "acted: hello"
    configure(root, {"extensions.act": "deny"})
    assert (await session.exec(CALL)).value["code"] == "denied"


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ("allow", "acted: hello"),
        (True, "acted: hello"),
        ("deny", "refused"),
        (False, "refused"),
        ("perhaps", "refused"),
        ({"allow": True}, "refused"),
    ],
)
async def test_the_python_approver_answers(session: Fabric, answer: Any, outcome: str) -> None:
    approver = Recorder(answer)
    result = await session.exec(CALL, approver=approver)
    assert (result.value if isinstance(result.value, str) else result.value["code"]) == outcome
    (request,) = approver.asked
    assert (request.namespace, request.name, request.risk) == ("extensions", "act", "execute")
    assert request.arguments == {"note": "hello"} and request.key == "execute"
    if outcome == "refused":
        assert "refused by the approver" in result.value["message"]
        assert "approvals.execute is ask" in result.value["message"]


async def test_a_sync_approver_runs_off_the_event_loop(session: Fabric) -> None:
    seen: list[str] = []

    def approver(request: ApprovalRequest) -> str:
        seen.append(request.describe())
        return "allow"

    result = await session.exec(CALL, approver=approver)
    assert result.value == "acted: hello"
    assert seen == ["a snippet calls extensions.act(note='hello'), risk class execute "
                    "(approvals.execute is ask)"]  # fmt: skip


async def test_an_approver_that_raises_denies(session: Fabric) -> None:
    async def approver(request: ApprovalRequest) -> str:
        raise RuntimeError("the approval service is down")

    result = await session.exec(CALL, approver=approver)
    assert result.value["code"] == "refused"
    assert (
        "the approver failed: RuntimeError: the approval service is down"
        in (result.value["message"])
    )
    assert (await session.exec(CALL, approver=Recorder())).value == "acted: hello"


async def test_an_approver_that_hangs_denies_after_the_bounded_time(tmp_path: Path) -> None:
    configure(tmp_path, {}, approvalTimeoutS=1)
    never = asyncio.Event()

    async def approver(request: ApprovalRequest) -> str:
        await never.wait()
        return "allow"

    async with Fabric(tmp_path, registry=registry_with("execute")) as fab:
        result = await fab.exec(CALL, approver=approver)
        assert result.value["code"] == "refused"
        assert "no answer within approvalTimeoutS (1 s)" in result.value["message"]
        (event,) = events(fab, "approval")
        assert event["outcome"] == "refused" and event["ms"] >= 1000


async def test_the_snippet_deadline_holds_while_an_approver_waits(tmp_path: Path) -> None:
    never = asyncio.Event()

    async def approver(request: ApprovalRequest) -> str:
        await never.wait()
        return "allow"

    limits = Limits(timeout_s=1)
    async with Fabric(tmp_path, registry=registry_with("execute"), limits=limits) as fab:
        result = await fab.exec(CALL, approver=approver)
        assert not result.ok and result.error is not None and result.error.kind == "timeout"
        assert result.call_log[0].ms is None  # never answered
        assert (await fab.exec(CALL, approver=Recorder())).value == "acted: hello"


async def test_always_and_never_are_remembered_for_the_session(session: Fabric) -> None:
    approver = Recorder("always")
    code = "return [await extensions.act(note=str(i)) for i in range(3)]"
    result = await session.exec(code, approver=approver)
    assert result.value == ["acted: 0", "acted: 1", "acted: 2"] and len(approver.asked) == 1
    assert [r.approval for r in result.call_log] == ["approved", "session_allow", "session_allow"]
    assert session.approvals.decide("execute", "extensions.act") == "allow"
    assert (await session.exec(CALL)).value == "acted: hello"  # no approver needed now
    assert session.status()["approvals"]["remembered"] == {"extensions.act": "always"}
    session.approvals.remembered.clear()
    assert (await session.exec(CALL, approver=Recorder("never"))).value["code"] == "refused"
    assert (await session.exec(CALL, approver=Recorder("allow"))).value["code"] == "refused"


async def test_concurrent_asks_are_put_one_at_a_time(session: Fabric) -> None:
    """Fifty calls under gather: the first question's "always" answers the other 49, which
    would each have asked had the questions not waited their turn."""
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> str:
        asked.append(request)
        for _ in range(10):  # let every other call reach the approvals while this one waits
            await asyncio.sleep(0)
        return "always"

    code = (
        "import asyncio\n"
        "return len(await asyncio.gather(*[extensions.act(note='x') for _ in range(50)]))"
    )
    result = await session.exec(code, approver=approver)
    assert result.value == 50 and len(asked) == 1


async def test_the_session_approver_is_asked_when_the_run_brings_none(tmp_path: Path) -> None:
    approver = Recorder("allow")
    async with Fabric(tmp_path, registry=registry_with("agent"), approver=approver) as fab:
        assert (await fab.exec(CALL)).value == "acted: hello"
        assert fab.status()["approvals"]["approver"] is True
    assert [r.risk for r in approver.asked] == ["agent"]


async def test_the_approver_sees_long_arguments_shortened(session: Fabric) -> None:
    approver = Recorder("deny")
    await session.exec("await extensions.act(note='z' * 100_000)", approver=approver)
    shown = approver.asked[0].arguments["note"]
    assert shown.startswith("z" * 200) and shown.endswith("... (100000 chars)")


async def test_every_decision_is_in_telemetry_and_ctx_status(tmp_path: Path) -> None:
    registry = registry_with("network")

    async def look() -> str:
        return "seen"

    registry.register("extensions", "look", look, risk="read")
    registry.register("extensions", "run", look, risk="execute")
    async with Fabric(tmp_path, registry=registry) as fab:
        code = (
            "out = [await extensions.look() for _ in range(3)]\n"
            "for _ in range(4):\n"
            "    try:\n"
            "        await extensions.act(note='x')\n"
            "    except ToolError as e:\n"
            "        out.append(e.code)\n"
            "return out"
        )
        result = await fab.exec(code)
        assert result.value == ["seen"] * 3 + ["denied"] * 4
        (denial,) = events(fab, "approval")  # the first denial of a tool; the rest counted
        assert denial == denial | {
            "tool": "extensions.act",
            "risk": "network",
            "key": "approvals.network",
            "outcome": "deny",
        }
        (executed,) = events(fab, "exec")
        rows = {row["tool"]: row for row in executed["providers"]}
        assert rows["extensions.look"]["approvals"] == {"allow": 3}
        assert rows["extensions.act"]["approvals"] == {"deny": 4}
        assert rows["extensions.act"]["failed"] == 4 and rows["extensions.act"]["risk"] == "network"
        await fab.exec("await extensions.run()", approver=Recorder("deny"))
        asked = events(fab, "approval")[-1]
        assert asked == asked | {"tool": "extensions.run", "outcome": "refused", "answer": "deny"}
        for scope in ("runtime", "session", "lifetime"):
            status = fab.status(scope=scope)  # type: ignore[arg-type]
            assert status["provider_calls"] == 8 and status["calls_stopped"] == 5
            assert status["approvals_asked"] == 1 and status["approvals_refused"] == 1
            tools = {row["tool"]: row for row in status["providers"]}
            assert tools["extensions.act"]["approvals"] == {"deny": 4}
            assert tools["extensions.run"]["approvals"] == {"refused": 1}
        assert fab.status()["approvals"]["modes"]["network"] == "deny"
        reply = await fab.ctx.status(scope="runtime")
        assert "provider calls: 8 (5 failed, 5 stopped by approvals)" in reply.text
        assert "approvals asked: 1 (1 refused)" in reply.text


async def test_every_call_is_recorded_with_its_duration_and_sizes(tmp_path: Path) -> None:
    registry = ProviderRegistry()

    async def slow(payload: str) -> str:
        await asyncio.sleep(0.05)
        return "r" * 200_000

    registry.register("extensions", "slow", slow, risk="read")
    async with Fabric(tmp_path, registry=registry) as fab:
        code = "return [len(await extensions.slow(payload='p' * 50_000)) for _ in range(30)]"
        result = await fab.exec(code)
        assert result.value == [200_000] * 30
        assert len(result.call_log) == 20  # the first ones whole
        record = result.call_log[0]
        assert record.ms is not None and record.ms >= 50
        assert 50_000 < record.bytes_in < 51_000 and 200_000 < record.bytes_out < 201_000
        (totals,) = result.call_totals  # every call, added up
        assert totals.calls == 30 and totals.failed == 0 and totals.ms >= 30 * 50
        assert totals.bytes_in > 30 * 50_000 and totals.bytes_out > 30 * 200_000
        assert (totals.risk, totals.approvals) == ("read", {"allow": 30})
        assert fab.status(scope="runtime")["provider_bytes_out"] == totals.bytes_out


async def test_an_approver_must_be_callable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="approver must be a callable taking an ApprovalRequest"):
        Fabric(tmp_path, approver="yes")  # type: ignore[arg-type]
