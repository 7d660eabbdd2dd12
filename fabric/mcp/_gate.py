"""The gate in front of ``fabric mcp --http``: every HTTP request is checked before the SDK
sees it. The first check that fails answers, in this order::

    Host           one of this server's names with the bound port: 127.0.0.1, localhost,
                   [::1], the --host value, an --allow-host name      -> 403 forbidden_host
    Origin         if sent: http:// and an allowed Host, or an --allow-origin
                                                                      -> 403 forbidden_origin
    Authorization  if a token is set: ``Bearer <token>``, compared in constant time
                                                 -> 401 missing_token, 401 invalid_token

Host and Origin defeat DNS rebinding: a web page that points its own name at 127.0.0.1 still
sends that name as Host and its own origin as Origin. A refusal's body is
``{"error": {"code": ..., "message": ...}}``; it never contains the expected token. (With
--allow-origin, CORS sits outside the gate and answers those origins' preflights itself.)
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
REALM = 'Bearer realm="fabric"'


def authority(name: str, port: int) -> str:
    """``name:port`` as a Host header spells it (an IPv6 address in brackets)."""
    return f"[{name}]:{port}" if ":" in name else f"{name}:{port}"


@dataclass(frozen=True)
class Gate:
    """What the gate lets through: Host values, Origin values, and the token (None: no token)."""

    hosts: frozenset[str]
    origins: frozenset[str]
    token: bytes | None

    @classmethod
    def build(
        cls, names: Iterable[str], port: int, origins: Iterable[str], token: str | None
    ) -> Gate:
        """A gate for a server bound to ``port`` and reached by ``names`` (and loopback)."""
        spelled = {authority(name.lower(), port) for name in (*LOOPBACK_NAMES, *names)}
        if port == 80:  # a client may leave the default port out of Host and Origin
            spelled |= {host.rpartition(":")[0] for host in spelled}
        return cls(
            hosts=frozenset(spelled),
            origins=frozenset({f"http://{host}" for host in spelled} | set(origins)),
            token=None if token is None else token.encode(),
        )

    def refusal(self, headers: Headers) -> JSONResponse | None:
        """The response that refuses a request with these headers, or None to let it in."""
        return (
            self._host_refusal(headers.get("host"))
            or self._origin_refusal(headers.get("origin"))
            or self._token_refusal(headers.get("authorization"))
        )

    def _host_refusal(self, host: str | None) -> JSONResponse | None:
        if host is None:
            return _refuse(403, "forbidden_host", "the request has no Host header")
        if host.lower() in self.hosts:
            return None
        names = ", ".join(sorted(self.hosts))
        return _refuse(
            403,
            "forbidden_host",
            f"Host {host[:100]!r} is not this server's address (it answers to {names}); "
            "start it with --allow-host NAME to accept another name",
        )

    def _origin_refusal(self, origin: str | None) -> JSONResponse | None:
        if origin is None or origin.lower().rstrip("/") in self.origins:
            return None
        return _refuse(
            403,
            "forbidden_origin",
            f"Origin {origin[:100]!r} may not call this server; "
            "start it with --allow-origin ORIGIN to allow a browser origin",
        )

    def _token_refusal(self, header: str | None) -> JSONResponse | None:
        if self.token is None:
            return None
        scheme, _, given = (header or "").partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return _refuse(
                401,
                "missing_token",
                "this server needs a bearer token: send the header 'Authorization: Bearer <token>'",
                authenticate=REALM,
            )
        if not hmac.compare_digest(given.strip().encode(), self.token):
            return _refuse(
                401,
                "invalid_token",
                "the bearer token is wrong",
                authenticate=f'{REALM}, error="invalid_token"',
            )
        return None


def _refuse(
    status: int, code: str, message: str, *, authenticate: str | None = None
) -> JSONResponse:
    headers = {"WWW-Authenticate": authenticate} if authenticate else None
    return JSONResponse({"error": {"code": code, "message": message}}, status, headers)


class GatedApp:
    """ASGI app that puts ``gate`` in front of ``app``: HTTP requests are checked, the
    lifespan passes through, and anything else (WebSockets: Fabric serves none) is closed."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self.gate.refusal(Headers(scope=scope))
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        elif scope["type"] != "lifespan":
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)
