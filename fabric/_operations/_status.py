"""``ctx.status``: what Fabric did for the context, in a few lines and as data."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from fabric._config import FabricConfig
from fabric._operations._table import Args, Cli, Reply, Surface, operation

if TYPE_CHECKING:
    from fabric._session import Fabric

_DEFAULTS = FabricConfig().flat()


class StatusArgs(Args):
    scope: Literal["runtime", "session", "lifetime"] = Field(
        "session",
        description="this runtime, the host session (FABRIC_HOST_SESSION; without it this "
        "runtime), or every session of the workspace",
    )
    detail: Literal["compact", "full"] = Field(
        "compact", description="full adds the settings, their warnings and the isolation layers"
    )


@operation(
    StatusArgs,
    help="What Fabric did for your context",
    description=(
        "Executions, bytes and tokens returned against produced, offloads, reads, blocks, "
        "the store's size and the isolation layers."
    ),
    cli=Cli(defaults={"scope": "lifetime"}),
    read_only=True,
)
def status(session: Fabric, args: StatusArgs, surface: Surface) -> Reply:
    report = session.status(scope=args.scope, detail=args.detail)
    return Reply(status_text(report), report)


def status_text(report: dict[str, Any]) -> str:
    """A few lines a model (or a person) reads at a glance."""
    get = report.get
    lines = [
        f"{report['scope']}: {get('executions', 0)} executions ({get('failures', 0)} failed, "
        f"{get('blocks', 0)} blocked), {get('bytes_returned', 0)} of {get('bytes_produced', 0)} "
        f"bytes returned ({get('tokens_returned', 0)} of {get('tokens_produced', 0)} tokens), "
        f"{get('offloads', 0)} offloads, {get('reads', 0)} reads, {get('searches', 0)} "
        f"searches, {get('summaries', 0)} summaries, {get('analyzer_warnings', 0)} analyzer "
        "warnings"
    ]
    if get("provider_calls"):
        lines.append(
            f"provider calls: {get('provider_calls')} ({get('provider_failures', 0)} failed, "
            f"{get('calls_stopped', 0)} stopped by approvals), {get('provider_ms', 0)} ms, "
            f"{get('provider_bytes_in', 0)} bytes in, {get('provider_bytes_out', 0)} out; "
            f"approvals asked: {get('approvals_asked', 0)} "
            f"({get('approvals_refused', 0)} refused)"
        )
    if get("media_bytes_returned"):
        lines.append(f"media returned beside the text: {get('media_bytes_returned')} bytes")
    checked, wrong = get("verdicts_checked", 0), get("verdict_mismatches", 0)
    if checked:
        lines.append(
            f"analyzer verdicts checked: {checked}, mismatched: {wrong} "
            f"({100 * wrong / checked:.0f}%)"
        )
    store = get("store")
    if store:
        lines.append(
            f"store: {store['entries']} entries, {store['bytes']} of {store['max_bytes']} bytes"
        )
    hooks = get("post_hooks")
    if hooks:
        lines.append(
            f"post hooks: {hooks['runs']} runs, {hooks['succeeded']} succeeded, "
            f"{hooks['failed']} failed ({hooks['retries']} retries, {hooks['timeouts']} "
            f"timeouts), {hooks['running']} running"
        )
    isolation = get("isolation")
    if isolation:
        off = f"; off: {', '.join(isolation['inactive'])}" if isolation["inactive"] else ""
        lines.append(f"isolation {isolation['mode']}: {', '.join(isolation['active'])}{off}")
    state = get("state")
    if state and state["keys"]:
        lines.append(f"state: {state['keys']} keys, {state['bytes']} of {state['max_bytes']} bytes")
    kept = get("variables")
    if kept is not None:
        names = ", ".join(kept["names"][:20]) or "none"
        lines.append(f"variables kept: {names} ({kept['bytes']} of {kept['max_bytes']} bytes)")
    running, queued = get("running", 0), get("queued", 0)
    if running or queued:
        lines.append(f"now: {running} running, {queued} queued")
    settings = get("settings")
    if settings is not None:
        changed = {k: v for k, v in settings.items() if _DEFAULTS.get(k) != v}
        shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in changed.items()) or "all defaults"
        lines.append(f"settings: {shown} (`fabric settings` shows each and where it came from)")
    notes = get("settings_warnings")
    if notes:
        lines.append("settings warnings: " + "; ".join(notes))
    return "\n".join(lines)
