"""``fabric mcp-servers [--json]``: the MCP servers of ``mcpServers``, each started and asked
for its tools.

For each server: its name in snippets, transport, whether it started, how long starting and
listing took, its tools, or the error (with the tail of its stderr). The config's warnings
about ``mcpServers`` (entries left out) come first. Exit status 0 when every server started,
1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fabric._cli_common import subcommand
from fabric._session import Fabric

COMMAND = "mcp-servers"
_out = Console(highlight=False, soft_wrap=True)
_TOOLS_SHOWN = 12


def add_parser(commands: Any) -> None:
    parser = subcommand(
        commands, COMMAND, "list the configured MCP servers; start each and list its tools"
    )
    parser.add_argument("--server", help="test only this server")


def run(args: argparse.Namespace) -> int:
    async def go() -> tuple[list[dict[str, Any]], list[str]]:
        fab = Fabric(workspace=args.workspace, spares=0)
        try:
            warnings = [w for w in fab.warnings if "mcpServers" in w]
            if args.server:
                fab.mcp.only(args.server)
            return await fab.mcp.check(), warnings
        finally:
            await fab.close()

    servers, warnings = asyncio.run(go())
    if args.json:
        sys.stdout.write(json.dumps({"servers": servers, "warnings": warnings}, indent=2) + "\n")
    else:
        _render(servers, warnings)
    return 0 if all(s["ok"] for s in servers) else 1


def _render(servers: list[dict[str, Any]], warnings: list[str]) -> None:
    for warning in warnings:
        _out.print(f"[yellow]warning:[/] {escape(warning)}")
    if not servers:
        _out.print(
            'no MCP servers are configured: add them under "mcpServers" in .fabric/config.json'
        )
        return
    table = Table(title="MCP servers")
    for column in ("server", "transport", "started", "ms", "tools"):
        table.add_column(column, overflow="fold")
    for server in servers:
        if server["ok"]:
            tools = server["tools"]
            shown = ", ".join(tools[:_TOOLS_SHOWN])
            more = f" (+{len(tools) - _TOOLS_SHOWN} more)" if len(tools) > _TOOLS_SHOWN else ""
            detail, started = f"{len(tools)}: {shown}{more}", "[green]yes[/]"
        else:
            detail, started = server["error"], "[bold red]no[/]"
        table.add_row(
            escape(server["name"]),
            server["transport"],
            started,
            f"{server['ms']:.0f}",
            escape(detail),
        )
    _out.print(table)
