"""The configured MCP servers of one session, served to snippets as ``mcp.<server>.<tool>``.

Each server is mounted in the session's registry under its name: until it is connected the
worker's catalog holds ``git.*``, so ``mcp.git.git_log(...)`` reaches the host, which starts the
server (once, however many calls arrive together), lists its tools and registers each as a
provider with the tool's input schema (checked before the call) and its risk class. Later
executions see the tool names themselves. A server that fails is dropped and the next call
starts it again; the others are not touched. The session closes every server it started.

Risk classes, from the tool's annotations unless the server's ``risk`` setting says: a tool
that declares ``openWorldHint: true`` is ``network``; else one that declares
``readOnlyHint: true`` is ``read``; anything else is ``write`` (MCP's defaults assume a tool
may change things).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema

from fabric.mcpclient._errors import ServerFailed
from fabric.mcpclient._settings import McpServer, python_name
from fabric.providers import Provider, ProviderRegistry, Risk, schema_signature
from runtime import ProviderCallError, call_deadline

if TYPE_CHECKING:
    import mcp_types

    from fabric.mcpclient._connection import Connection

NAMESPACE = "mcp"
_MARGIN_S = 0.5
"""A call stops this long before its execution's deadline, so the snippet sees why."""
_LINE_CHARS = 100
"""Characters of a tool's description ``mcp.list()`` shows (its first line)."""
_DESCRIPTION_CHARS = 4000
"""Characters of a tool's description ``mcp.describe()`` shows."""


def risk_of(tool: mcp_types.Tool, override: Risk | None) -> Risk:
    """The tool's risk class (see the module's docstring)."""
    if override is not None:
        return override
    hints = tool.annotations
    if hints is not None and hints.open_world_hint is True:
        return "network"
    if hints is not None and hints.read_only_hint is True:
        return "read"
    return "write"


def one_line(text: str | None, limit: int = _LINE_CHARS) -> str:
    first = (text or "").strip().split("\n", 1)[0].strip()
    return first if len(first) <= limit else first[: limit - 3].rstrip() + "..."


def _budget(timeout_s: float, what: str) -> tuple[float, str]:
    """How long a wait may take: the server's setting, or less when the execution ends first."""
    deadline = call_deadline()
    if deadline is None:
        return timeout_s, what
    left = deadline - asyncio.get_running_loop().time() - _MARGIN_S
    if left < timeout_s:
        return max(left, 0.05), "the execution's deadline"
    return timeout_s, what


class Server:
    """One configured server: its connection (when started) and its tools as providers."""

    def __init__(self, name: str, config: McpServer, workspace: Path) -> None:
        self.name = name
        self.attr = python_name(name)
        self.config = config
        self._workspace = workspace
        self._connection: Connection | None = None
        self._providers: dict[str, Provider] | None = None
        self._tools: dict[str, mcp_types.Tool] = {}
        """The server's tools by the attribute they are reached by."""
        self.skipped: list[str] = []
        """Tools that could not be offered, and why."""
        self._lock = asyncio.Lock()
        self._closing: set[asyncio.Task[None]] = set()
        self._version = 0
        self._closed = False

    # -- Mount -------------------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self._version

    def loaded(self) -> Mapping[str, Provider] | None:
        return self._providers

    async def load(self) -> None:
        await self.connected()

    # -- the connection ----------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._connection is not None and self._connection.usable

    async def connected(self) -> Connection:
        """The live connection, started now if there is none (one start for many callers)."""
        connection = self._connection
        if connection is not None and connection.usable:
            return connection
        async with self._lock:
            connection = self._connection
            if connection is not None and connection.usable:
                return connection
            if self._closed:
                raise ServerFailed(self.name, "is closed with its session", restarts=False)
            if connection is not None:
                self._retire(connection)
            from fabric.mcpclient._connection import Connection  # the SDK, on first use

            connection = Connection(self.name, self.config, self._workspace)
            timeout, why = _budget(self.config.start_timeout_s, "startTimeoutS")
            try:
                await connection.start(timeout, why)
            except BaseException:
                self._retire(connection)
                raise
            self._connection = connection
            self._index(connection.tools)
            return connection

    def _retire(self, connection: Connection) -> None:
        if self._connection is connection:
            self._connection = None
        task = asyncio.get_running_loop().create_task(connection.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        """Stop the server (and any being stopped); it does not start again."""
        self._closed = True
        if self._connection is not None:
            self._retire(self._connection)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    # -- the tools ---------------------------------------------------------------------------

    def _index(self, tools: list[mcp_types.Tool]) -> None:
        providers: dict[str, Provider] = {}
        self._tools, self.skipped = {}, []
        for tool in tools:
            attr = python_name(tool.name)
            if not attr or attr in self._tools:
                why = "has no letters or digits" if not attr else f"is {attr} as another tool is"
                self.skipped.append(f"{tool.name!r} {why}")
                continue
            schema: dict[str, Any] = tool.input_schema
            try:
                jsonschema.validators.validator_for(schema).check_schema(schema)
            except jsonschema.SchemaError as exc:
                self.skipped.append(f"{tool.name!r}'s input schema is not valid: {exc.message}")
                continue
            name = f"{self.attr}.{attr}"
            providers[name] = Provider(
                namespace=NAMESPACE,
                name=name,
                func=self._caller(tool),
                description=(tool.description or "").strip(),
                schema=schema,
                risk=risk_of(tool, self.config.risk),
            )
            self._tools[attr] = tool
        self._providers = providers
        self._version += 1

    def _caller(self, tool: mcp_types.Tool) -> Any:
        qualified = f"{NAMESPACE}.{self.attr}.{python_name(tool.name)}"

        async def call(**arguments: Any) -> Any:
            return await self.call(tool, qualified, arguments)

        return call

    async def call(self, tool: mcp_types.Tool, qualified: str, arguments: dict[str, Any]) -> Any:
        from fabric.mcpclient._results import plain_result

        connection = await self.connected()
        timeout, why = _budget(self.config.timeout_s, "timeoutS")
        try:
            result = await connection.call(tool.name, arguments, timeout, why=why)
        except ServerFailed as exc:
            if exc.restarts:
                self._retire(connection)
            raise
        return plain_result(qualified, result, tool.output_schema)

    def tool(self, attr: str) -> mcp_types.Tool | None:
        return self._tools.get(attr)

    def tool_names(self) -> list[str]:
        return list(self._tools)


class McpServers:
    """Every configured server of a session, mounted in its registry, and ``mcp.list`` and
    ``mcp.describe`` beside them."""

    def __init__(self, registry: ProviderRegistry, workspace: Path) -> None:
        self._registry = registry
        self._workspace = workspace
        self._servers: dict[str, Server] = {}
        self._retired: list[Server] = []
        self._stopping: set[asyncio.Task[None]] = set()
        registry.register(NAMESPACE, "list", self.list_servers, risk="read")
        registry.register(NAMESPACE, "describe", self.describe_tool, risk="read")

    @property
    def servers(self) -> dict[str, Server]:
        """The offered servers by the attribute they are reached by."""
        return dict(self._servers)

    def configure(self, configured: Mapping[str, McpServer]) -> None:
        """Offer exactly these servers: a removed or changed one is closed, a new one mounted."""
        wanted = {python_name(n): (n, c) for n, c in configured.items() if not c.disabled}
        for attr, server in list(self._servers.items()):
            if wanted.get(attr) != (server.name, server.config):
                self._registry.unmount(NAMESPACE, attr)
                self._retire(self._servers.pop(attr))
        for attr, (name, config) in wanted.items():
            if attr not in self._servers:
                self._servers[attr] = Server(name, config, self._workspace)
                self._registry.mount(NAMESPACE, attr, self._servers[attr])

    def _retire(self, server: Server) -> None:
        """Stop a server the config no longer lists: now, when there is a loop to do it on."""
        try:
            task = asyncio.get_running_loop().create_task(server.close())
        except RuntimeError:
            self._retired.append(server)
            return
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def close(self) -> None:
        servers = [*self._servers.values(), *self._retired]
        self._retired = []
        await asyncio.gather(*(s.close() for s in servers), *self._stopping, return_exceptions=True)

    def only(self, name: str) -> None:
        """Keep just the server ``name`` (``fabric mcp-servers --server``)."""
        keep = self._server(name)
        for attr in list(self._servers):
            if self._servers[attr] is not keep:
                self._registry.unmount(NAMESPACE, attr)
                del self._servers[attr]

    def _server(self, name: str) -> Server:
        server = self._servers.get(python_name(name))
        if server is None:
            known = ", ".join(sorted(self._servers)) or "none are configured (mcpServers)"
            raise ProviderCallError(
                f"no MCP server {name!r}; servers: {known}", code="unknown_server"
            )
        return server

    async def list_servers(self, server: str | None = None) -> dict[str, Any]:
        """The MCP servers and their tools, each with the first line of its description; a
        server that cannot start says why. ``server`` lists one."""
        chosen = [self._server(server)] if server else list(self._servers.values())

        async def one(each: Server) -> dict[str, Any]:
            try:
                await each.connected()
            except ServerFailed as exc:
                return {"error": exc.message}
            listed: dict[str, Any] = {
                attr: one_line(tool.description) for attr, tool in each._tools.items()
            }
            entry: dict[str, Any] = {"tools": listed}
            if each.skipped:
                entry["skipped"] = each.skipped
            return entry

        found = await asyncio.gather(*(one(s) for s in chosen))
        return {s.attr: entry for s, entry in zip(chosen, found, strict=True)}

    async def describe_tool(self, name: str) -> dict[str, Any]:
        """One tool (``"git.git_log"``): its Python signature, risk class and description;
        a server's name alone gives every tool's signature."""
        server_name, _, tool_name = name.removeprefix(f"{NAMESPACE}.").partition(".")
        server = self._server(server_name)
        await server.connected()
        if not tool_name:
            return {
                "server": server.attr,
                "tools": [
                    self._registry.get(NAMESPACE, f"{server.attr}.{attr}").signature()
                    for attr in server.tool_names()
                ],
            }
        tool = server.tool(python_name(tool_name))
        if tool is None:
            self._registry.get(NAMESPACE, f"{server.attr}.{tool_name}")  # says what exists
            raise ProviderCallError(f"{name} is not a tool", code="unknown_tool")
        provider = self._registry.get(NAMESPACE, f"{server.attr}.{python_name(tool.name)}")
        description = (tool.description or "").strip()
        if len(description) > _DESCRIPTION_CHARS:
            description = description[:_DESCRIPTION_CHARS] + " [cut]"
        parameters = {
            key: one_line(prop.get("description"), 200)
            for key, prop in (tool.input_schema.get("properties") or {}).items()
            if isinstance(prop, dict) and prop.get("description")
        }
        described: dict[str, Any] = {
            "signature": schema_signature(provider.qualified, tool.input_schema),
            "risk": provider.risk,
            "description": description,
        }
        if parameters:
            described["parameters"] = parameters
        if tool.name != python_name(tool.name):
            described["server_name"] = tool.name
        return described

    async def check(self) -> list[dict[str, Any]]:
        """``fabric mcp-servers``: start each server, list its tools, time it."""

        async def one(server: Server) -> dict[str, Any]:
            started = time.perf_counter()
            report: dict[str, Any] = {"server": server.name, "name": f"mcp.{server.attr}"}
            report["transport"] = "http" if server.config.url else "stdio"
            try:
                await server.connected()
                report.update(ok=True, tools=server.tool_names())
                if server.skipped:
                    report["skipped"] = server.skipped
            except ServerFailed as exc:
                report.update(ok=False, error=exc.detail)
            report["ms"] = round((time.perf_counter() - started) * 1000, 1)
            return report

        return list(await asyncio.gather(*(one(s) for s in self._servers.values())))
