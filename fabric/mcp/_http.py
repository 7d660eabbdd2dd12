"""Streamable HTTP for ``fabric mcp --http``: the SDK's Starlette app behind the gate
(``_gate.py``), on uvicorn as the SDK runs it, on a socket bound here so that port 0 works.

Anyone who can reach the endpoint can run code in the workspace, so the settings refuse a
non-loopback address without a bearer token. The token comes from an environment variable
(``--token-env NAME``), never from the command line, where ``ps`` would show it.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, ConfigDict, SecretStr, field_validator, model_validator
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp

from fabric._errors import ConfigError
from fabric.mcp._gate import Gate, GatedApp, authority

ENDPOINT = "/mcp"
TOKEN_HINT = "openssl rand -hex 32"

# The gate checks Host and Origin on every path, exactly, before the SDK; the SDK's own check
# (loopback binds only, any port, 421 for a bad Host, the MCP path only) is switched off so
# the rules live in one place. It still checks a POST's Content-Type.
_SDK_HEADER_CHECKS_OFF = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpSettings(BaseModel):
    """Where ``fabric mcp --http`` listens and whom it serves. Invalid settings raise
    ``ConfigError`` naming the flag and the fix."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    """Address to bind (``--host``). Any but a loopback address needs ``token``."""
    port: int = 8765
    """Port to bind (``--port``); 0 picks a free one, and ``ready`` is told which."""
    token: SecretStr | None = None
    """The bearer token every request must carry (``--token-env``); None: no token."""
    allow_hosts: tuple[str, ...] = ()
    """More names the Host header may carry (``--allow-host``), with the bound port."""
    allow_origins: tuple[str, ...] = ()
    """More browser origins that may call (``--allow-origin``), as ``scheme://host[:port]``."""

    @field_validator("port")
    @classmethod
    def _port(cls, port: int) -> int:
        if not 0 <= port <= 65535:
            raise ConfigError(f"--port {port} is not a port; use 1-65535, or 0 for a free one")
        return port

    @field_validator("allow_hosts")
    @classmethod
    def _allow_hosts(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_host_name(name) for name in names)

    @field_validator("allow_origins")
    @classmethod
    def _allow_origins(cls, origins: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_origin(origin) for origin in origins)

    @model_validator(mode="after")
    def _token_off_loopback(self) -> HttpSettings:
        if self.token is None and not is_loopback(self.host):
            raise ConfigError(
                f"refusing to serve on --host {self.host} without a bearer token: anyone who "
                "can reach that address could run code in this workspace. Put a secret in an "
                "environment variable and pass its name with --token-env NAME, or serve on "
                "this machine only with --host 127.0.0.1"
            )
        return self


def _host_name(name: str) -> str:
    bare = name.strip().removeprefix("[").removesuffix("]")
    if not bare or "/" in bare or (":" in bare and not _is_ip(bare)):
        raise ConfigError(
            f"--allow-host {name!r} is not a host name; give a name or address without a "
            "port (the port is --port's), e.g. --allow-host myhost.lan"
        )
    return bare.lower()


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _origin(origin: str) -> str:
    parts = urlsplit(origin.strip().lower().rstrip("/"))
    try:
        valid = parts.scheme in ("http", "https") and parts.port != 0
    except ValueError:  # a port that is not a number
        valid = False
    if not valid or not parts.hostname or "@" in parts.netloc or parts.path or parts.query:
        raise ConfigError(
            f"--allow-origin {origin!r} is not an origin; write scheme://host[:port], "
            "e.g. --allow-origin http://localhost:5173"
        )
    return f"{parts.scheme}://{parts.netloc}"


def read_token(name: str, environ: Mapping[str, str] = os.environ) -> SecretStr:
    """The bearer token held by environment variable ``name`` (``--token-env NAME``)."""
    value = environ.get(name)
    problem = _token_problem(value)
    if value is None or problem is not None:
        raise ConfigError(
            f"--token-env {name}: the environment variable {name} {problem}; set it to a "
            f'secret first, e.g. export {name}="$({TOKEN_HINT})"'
        )
    return SecretStr(value.strip())


def _token_problem(value: str | None) -> str | None:
    if value is None:
        return "is not set"
    token = value.strip()
    if not token:
        return "is empty"
    if not (token.isascii() and token.isprintable()) or " " in token:
        return "holds characters a header cannot carry (use printable ASCII, no spaces)"
    return None


async def serve_http(
    server: MCPServer, settings: HttpSettings, *, ready: Callable[[str], None] | None = None
) -> None:
    """Serve ``server`` on streamable HTTP until shut down. ``ready`` gets the endpoint's URL
    once the server accepts connections."""
    with _bind(settings.host, settings.port) as sock:
        port = int(sock.getsockname()[1])
        url = f"http://{authority(settings.host, port)}{ENDPOINT}"
        app = _gated_app(server, settings, port)
        config = uvicorn.Config(app, log_level=server.settings.log_level.lower())

        def started() -> None:
            if ready is not None:
                ready(url)

        await _Uvicorn(config, started).serve(sockets=[sock])


def _gated_app(server: MCPServer, settings: HttpSettings, port: int) -> ASGIApp:
    """The SDK's app behind the gate and, for ``--allow-origin``, CORS around both: a browser's
    preflight from an allowed origin is answered without a token (it carries none), every other
    request meets the gate, and every response (a 401 too) carries the CORS headers."""
    token = settings.token.get_secret_value() if settings.token else None
    names = (settings.host, *settings.allow_hosts)
    gate = Gate.build(names, port, settings.allow_origins, token)
    sdk_app = server.streamable_http_app(
        streamable_http_path=ENDPOINT, transport_security=_SDK_HEADER_CHECKS_OFF
    )
    app: ASGIApp = GatedApp(sdk_app, gate)
    if settings.allow_origins:
        app = CORSMiddleware(
            app,
            allow_origins=settings.allow_origins,
            allow_methods=("GET", "POST", "DELETE"),
            allow_headers=("*",),  # mirrored back, so Authorization too
            expose_headers=("mcp-session-id", "www-authenticate"),
        )
    return app


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, bound the way uvicorn binds one."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen()
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on --host {host} --port {port}: {exc.strerror or exc}"
        ) from None
    return sock


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, calling ``started`` once it accepts connections."""

    def __init__(self, config: uvicorn.Config, started: Callable[[], None]) -> None:
        super().__init__(config)
        self._started = started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._started()
