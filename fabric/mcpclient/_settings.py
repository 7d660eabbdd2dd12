"""``mcpServers`` in config.json: the MCP servers whose tools snippets call as ``mcp.<server>.*``.

The common format, as other MCP clients read it::

    "mcpServers": {
      "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"GIT_DIR": "${HOME}/x"}},
      "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
    }

Each entry is checked on its own: a bad one is a settings warning naming
``mcpServers.<name>.<field>`` and is left out, the others load. ``${VAR}`` (and
``${VAR:-default}``) in ``command``, ``args``, ``env``, ``cwd``, ``url`` and ``headers`` is
expanded from the environment when the server is started, never stored expanded; a variable
that is not set is a warning at load and an error naming it when the server would start.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from fabric.providers import Risk

RESERVED = ("list", "describe")
"""Names of ``mcp.*`` itself: no server may take them."""
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_NOT_NAME = re.compile(r"[^A-Za-z0-9]+")


class McpServer(BaseModel):
    """One configured MCP server: a command to run (stdio) or a URL (streamable HTTP)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    command: str | None = Field(None, min_length=1)
    """The program that runs the server over stdio (``uvx``, ``npx``, a path)."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the minimal environment the server starts with (``PATH``, ``HOME``...)."""
    cwd: str | None = None
    """Its working directory (relative to the workspace); the workspace by default."""
    url: str | None = Field(None, pattern=r"^https?://")
    """A streamable HTTP endpoint, instead of a command."""
    headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers sent with every request to ``url``."""
    type: Literal["stdio", "http", "streamable-http"] | None = None
    """The transport, as other clients spell it; taken from ``command`` or ``url`` when left out."""
    risk: Risk | None = None
    """The risk class of every tool of this server, over what each tool's annotations say."""
    timeout_s: float = Field(60.0, ge=0.1, le=3600)
    """How long one tool call may take (never past the execution's own deadline)."""
    start_timeout_s: float = Field(30.0, ge=0.1, le=600)
    """How long the server may take to start and list its tools."""
    disabled: bool = False
    """Leave the server configured but not offered."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError('give "command" (a server run over stdio) or "url", exactly one')
        if self.type == "stdio" and self.command is None:
            raise ValueError('type "stdio" needs "command"')
        if self.type in ("http", "streamable-http") and self.url is None:
            raise ValueError(f'type "{self.type}" needs "url"')
        if self.headers and self.url is None:
            raise ValueError('"headers" are sent to a "url"; a stdio server takes "env"')
        return self

    @field_serializer("env", "headers")
    def _hidden(self, values: dict[str, str]) -> dict[str, str]:
        """Shown (in ``ctx_status``, ``fabric config``) only where a variable stands in: a
        literal value may be a secret."""
        return {k: v if _VARIABLE.search(v) else "<hidden>" for k, v in values.items()}

    def variables(self) -> list[str]:
        """The ``${VAR}`` names it uses that have no default, in order."""
        found: list[str] = []
        for text in self._texts():
            for match in _VARIABLE.finditer(text):
                if match.group(2) is None and match.group(1) not in found:
                    found.append(match.group(1))
        return found

    def _texts(self) -> list[str]:
        texts = [self.command or "", self.url or "", self.cwd or "", *self.args]
        return texts + list(self.env.values()) + list(self.headers.values())


class UnsetVariable(Exception):
    """A ``${VAR}`` a server's settings use is not set."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def expand(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with each ``${VAR}`` replaced; raises :class:`UnsetVariable`."""
    source = os.environ if environ is None else environ

    def one(match: re.Match[str]) -> str:
        value = source.get(match.group(1))
        if value is None:
            if match.group(2) is None:
                raise UnsetVariable(match.group(1))
            return match.group(2)
        return value

    return _VARIABLE.sub(one, text)


def python_name(name: str) -> str:
    """The attribute a server or tool is reached by: ``my-server`` is ``my_server``."""
    spelled = _NOT_NAME.sub("_", name).strip("_")
    if not spelled:
        return ""
    return spelled if spelled[0].isalpha() else f"t_{spelled}"


def parse_servers(raw: Any, where: str) -> tuple[dict[str, McpServer] | None, list[str]]:
    """The valid entries of ``mcpServers``, and a warning for each one left out (None, the
    default, when it is not an object at all)."""
    if not isinstance(raw, dict):
        problem = "mcpServers must be an object of servers by name; using the default"
        return None, [f"{where}: {problem}"]
    servers: dict[str, McpServer] = {}
    taken: dict[str, str] = {}
    warnings: list[str] = []
    for name, entry in raw.items():
        key = f"mcpServers.{name}"
        spelled = python_name(str(name))
        if not spelled or spelled in RESERVED:
            problem = "is mcp's own" if spelled in RESERVED else "has no letters or digits"
            warnings.append(f"{where}: {key}: the name {problem}; rename the server")
            continue
        if spelled in taken:
            warnings.append(
                f"{where}: {key}: reached as mcp.{spelled}, as {taken[spelled]!r} is; rename one"
            )
            continue
        if not isinstance(entry, dict):
            warnings.append(f"{where}: {key} must be an object; left out")
            continue
        try:
            server = McpServer.model_validate(entry, strict=True)
        except ValidationError as exc:
            warnings.append(f"{where}: {_explained(key, exc)}; left out")
            continue
        for variable in server.variables():
            if variable not in os.environ:
                warnings.append(
                    f"{where}: {key} uses ${{{variable}}}, which is not set; set it before "
                    "the server is used, or write ${" + variable + ":-default}"
                )
        taken[spelled] = str(name)
        servers[str(name)] = server
    return servers, warnings


def _explained(key: str, exc: ValidationError) -> str:
    """Each problem under the key the user typed: ``mcpServers.git.args.0 must be a string``."""
    from fabric._translate import describe

    fields = list(McpServer.model_fields)
    typed = {str(e["loc"][0]) for e in exc.errors() if e.get("loc")}
    names = {t: f"{key}.{t}" for t in typed} | {f: f"{key}.{to_camel(f)}" for f in fields}
    said = describe(exc, names, known=[f"{key}.{to_camel(f)}" for f in fields])
    said = said.replace("the input: value error, ", f"{key}: ")
    return said if said.startswith(key) else f"{key}: {said}"
