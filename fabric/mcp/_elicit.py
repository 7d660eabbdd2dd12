"""Approvals over MCP: ``fabric_exec`` asks the client by elicitation (a form with one choice)
when the client declared the elicitation capability and the connection can carry a request
from the server in the middle of a call. Otherwise there is no approver, and a call whose mode
is ``ask`` fails closed with the key to change."""

from __future__ import annotations

from typing import Any, Literal

import mcp_types
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from fabric._approver import Answer, ApprovalRequest, Approver

_ELICITATION = mcp_types.ClientCapabilities(elicitation=mcp_types.ElicitationCapability())


class Choice(BaseModel):
    """The form the client shows."""

    decision: Literal["allow", "always", "deny"] = Field(
        description="allow this call, allow this tool for the rest of the session, or deny it"
    )


def elicitation_approver(ctx: Context[Any, Any]) -> Approver | None:
    """An approver that asks the client of ``ctx``'s request, or None when it cannot be asked."""
    try:
        session = ctx.request_context.session
        if not session.check_client_capability(_ELICITATION) or not session.can_send_request:
            return None
    except Exception:  # no request context, or a session without the checks
        return None

    async def ask_the_client(request: ApprovalRequest) -> Answer:
        reply = await ctx.elicit(f"Fabric: {request.describe()}. Allow it?", Choice)
        if reply.action != "accept":  # declined or cancelled
            return "deny"
        return reply.data.decision

    return ask_the_client
