"""Approvals over MCP: ``fabric_exec`` asks the client by elicitation when it can, and fails
closed, naming the key, when the client cannot be asked."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters

from fabric import Fabric, ProviderRegistry
from fabric.mcp import build_server

CALL = """
try:
    return await extensions.deploy(target="staging")
except ToolError as e:
    return [e.code, e.message]
"""


@pytest.fixture
async def fab(tmp_path: Path) -> AsyncIterator[Fabric]:
    registry = ProviderRegistry()

    async def deploy(target: str) -> str:
        return f"deployed {target}"

    registry.register("extensions", "deploy", deploy, risk="execute")
    async with Fabric(tmp_path, registry=registry) as session:
        yield session


class Elicitations:
    """A client's elicitation callback that answers ``content`` (or declines) and keeps the
    requests it got."""

    def __init__(self, action: str = "accept", decision: str = "allow") -> None:
        self.action, self.decision = action, decision
        self.requests: list[mcp_types.ElicitRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        self.requests.append(params)
        if self.action != "accept":
            return mcp_types.ElicitResult(action=self.action)  # type: ignore[arg-type]
        return mcp_types.ElicitResult(action="accept", content={"decision": self.decision})


def value(result: Any) -> Any:
    assert result.structured_content is not None, result
    return result.structured_content.get("value")


async def run(fab: Fabric, code: str, **client: Any) -> Any:
    # the handshake-era protocol: its connections carry the server's requests mid-call
    async with Client(build_server(fab), mode="legacy", **client) as session:
        return await session.call_tool("fabric_exec", {"code": code})


async def test_the_client_is_asked_and_its_allow_lets_the_call_run(fab: Fabric) -> None:
    asked = Elicitations("accept", "allow")
    assert value(await run(fab, CALL, elicitation_callback=asked)) == "deployed staging"
    (request,) = asked.requests
    assert isinstance(request, mcp_types.ElicitRequestFormParams)
    assert "extensions.deploy(target='staging')" in request.message
    assert "risk class execute" in request.message and "approvals.execute is ask" in request.message
    choices = request.requested_schema["properties"]["decision"]["enum"]
    assert choices == ["allow", "always", "deny"]
    (event,) = [e for e in fab.telemetry.events.recent(50) if e["kind"] == "approval"]
    assert event["outcome"] == "approved" and event["tool"] == "extensions.deploy"


async def test_always_answers_for_the_rest_of_the_session(fab: Fabric) -> None:
    asked = Elicitations("accept", "always")
    code = "return [await extensions.deploy(target=t) for t in ('a', 'b')]"
    assert value(await run(fab, code, elicitation_callback=asked)) == ["deployed a", "deployed b"]
    assert len(asked.requests) == 1
    assert value(await run(fab, CALL)) == "deployed staging"  # remembered by the session


@pytest.mark.parametrize(
    ("action", "decision"), [("accept", "deny"), ("decline", ""), ("cancel", "")]
)
async def test_a_denial_a_decline_or_a_cancel_refuses(
    fab: Fabric, action: str, decision: str
) -> None:
    asked = Elicitations(action, decision)
    code, message = value(await run(fab, CALL, elicitation_callback=asked))
    assert code == "refused" and "approvals.execute is ask" in message


async def test_an_answer_outside_the_form_refuses(fab: Fabric) -> None:
    asked = Elicitations("accept", "sure")
    code, message = value(await run(fab, CALL, elicitation_callback=asked))
    assert code == "refused" and "the approver failed" in message


async def test_a_client_without_elicitation_fails_closed_naming_the_key(fab: Fabric) -> None:
    code, message = value(await run(fab, CALL))
    assert code == "approval_required"
    assert "approvals.execute is ask" in message
    assert '"approvals": {"extensions.deploy": "allow"}' in message


async def test_a_connection_that_cannot_carry_the_question_fails_closed(fab: Fabric) -> None:
    """An in-process client on the current protocol declares elicitation, but its connection
    has no channel for a request from the server in the middle of a call."""
    asked = Elicitations()
    async with Client(build_server(fab), elicitation_callback=asked) as session:
        result = await session.call_tool("fabric_exec", {"code": CALL})
    assert value(result)[0] == "approval_required" and asked.requests == []


async def test_a_denied_call_over_mcp_says_so_in_ctx_status(fab: Fabric) -> None:
    async with Client(build_server(fab), mode="legacy") as session:
        await session.call_tool("fabric_exec", {"code": CALL})
        status = await session.call_tool("ctx_status", {"scope": "runtime"})
    report = status.structured_content
    assert report is not None, json.dumps(status.model_dump(mode="json"))[:500]
    assert report["calls_stopped"] == 1
    assert report["providers"][0]["approvals"] == {"unasked": 1}


async def test_fabric_mcp_over_stdio_asks_its_client(tmp_path: Path) -> None:
    """The real server process, a tool key making a read ask: the client's answer decides."""
    (tmp_path / ".fabric").mkdir()
    (tmp_path / ".fabric" / "config.json").write_text('{"approvals": {"tools.ls": "ask"}}')
    (tmp_path / "a.txt").write_text("a")
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "fabric._cli", "mcp", "--workspace", str(tmp_path)]
    )
    code = (
        "try:\n    return len(await tools.ls(path='.'))\nexcept ToolError as e:\n    return e.code"
    )
    for decision, expected in (("deny", "refused"), ("allow", 1)):
        asked = Elicitations("accept", decision)
        async with Client(server, mode="legacy", elicitation_callback=asked) as session:
            result = await session.call_tool("fabric_exec", {"code": code})
        assert value(result) == expected
        assert "tools.ls" in asked.requests[0].message
