"""`fabric mcp --http` end to end: a real server on a port it picks, the bearer token, the Host
and Origin checks, and the settings it refuses to start with."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TOKEN_ENV = "FABRIC_TEST_MCP_TOKEN"
TOKEN = secrets.token_urlsafe(24)
APP_ORIGIN = "http://localhost:5173"
PROXY_NAME = "fabric.test"
MISSING_TOKEN = {
    "code": "missing_token",
    "message": "this server needs a bearer token: send the header 'Authorization: Bearer <token>'",
}
WRONG_TOKEN = {"code": "invalid_token", "message": "the bearer token is wrong"}
READY = "fabric mcp: serving streamable HTTP on "
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


def fabric_mcp(*flags: str) -> list[str]:
    return [sys.executable, "-m", "fabric._cli", "mcp", *flags]


def environment(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    return env | values


@dataclass
class Served:
    """A `fabric mcp --http` process and what it wrote to stderr."""

    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)

    def drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if line.startswith(READY):
                self.ready.set()
        self.ready.set()  # end of stderr: the server exited

    @property
    def announcement(self) -> str:
        found = [line.strip() for line in self.lines if line.startswith(READY)]
        if not found:
            pytest.fail("fabric mcp did not start:\n" + "".join(self.lines))
        return found[0]

    @property
    def url(self) -> str:
        match = re.search(r"http://\S+/mcp", self.announcement)
        assert match is not None, self.announcement
        return match.group()

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].removesuffix("/mcp"))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One token-protected server on port 0 (the kernel picks), with one more origin and name."""
    workspace = tmp_path_factory.mktemp("mcp-http")
    (workspace / "notes.txt").write_text("hello\n")
    flags = ("--http", "--port", "0", "--token-env", TOKEN_ENV)
    flags += ("--allow-origin", APP_ORIGIN, "--allow-host", PROXY_NAME)
    proc = subprocess.Popen(
        fabric_mcp(*flags, "--workspace", str(workspace)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(**{TOKEN_ENV: TOKEN}),
    )
    server = Served(proc)
    threading.Thread(target=server.drain, daemon=True).start()
    server.ready.wait(timeout=120)  # the line comes once uvicorn accepts connections
    try:
        yield server
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def post(served: Served, **headers: str) -> httpx.Response:
    """An `initialize` request with these headers, as a client would send it."""
    base = {"Accept": "application/json, text/event-stream"}
    return httpx.post(served.url, json=INITIALIZE, headers=base | headers, timeout=30)


def bearer(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def error_of(response: httpx.Response) -> dict[str, Any]:
    assert response.headers["content-type"] == "application/json"
    error: dict[str, Any] = response.json()["error"]
    return error


def host_refusal(served: Served, host: str) -> dict[str, str]:
    names = ["127.0.0.1", "[::1]", PROXY_NAME, "localhost"]
    answers = ", ".join(sorted(f"{name}:{served.port}" for name in names))
    return {
        "code": "forbidden_host",
        "message": f"Host {host!r} is not this server's address (it answers to {answers}); "
        "start it with --allow-host NAME to accept another name",
    }


def origin_refusal(origin: str) -> dict[str, str]:
    return {
        "code": "forbidden_origin",
        "message": f"Origin {origin!r} may not call this server; "
        "start it with --allow-origin ORIGIN to allow a browser origin",
    }


# -- serving ------------------------------------------------------------------------------


def test_the_server_says_where_it_serves_on_one_stderr_line(served: Served) -> None:
    """One line on stderr names the URL, on the port the kernel picked, and the token rule."""
    assert re.fullmatch(
        r"fabric mcp: serving streamable HTTP on http://127\.0\.0\.1:\d+/mcp "
        r"\(bearer token required\)",
        served.announcement,
    )
    assert served.port > 0


async def test_the_right_token_initializes_and_lists_tools(served: Served) -> None:
    """The SDK's client, sending the header, completes `initialize` and `tools/list`."""
    async with httpx2.AsyncClient(headers=bearer()) as http:
        transport = streamable_http_client(served.url, http_client=http)
        async with Client(transport, mode="legacy") as client:
            assert client.server_info is not None and client.server_info.name == "fabric"
            names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"fabric_exec", "ctx_read"} <= names


# -- the bearer token ---------------------------------------------------------------------


def test_a_request_without_a_token_gets_401_saying_what_to_send(served: Served) -> None:
    response = post(served)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="fabric"'
    assert error_of(response) == MISSING_TOKEN


def test_a_credential_of_another_scheme_gets_401_missing_token(served: Served) -> None:
    response = post(served, Authorization=f"Basic {TOKEN}")
    assert response.status_code == 401
    assert error_of(response) == MISSING_TOKEN


def test_a_wrong_token_gets_401_and_the_token_is_never_echoed(served: Served) -> None:
    response = post(served, **bearer(TOKEN[:-1]))
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="fabric", error="invalid_token"'
    assert error_of(response) == WRONG_TOKEN
    assert TOKEN not in response.text


# -- Host and Origin ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", f"{PROXY_NAME}:{{port}}"]
)
def test_loopback_and_allowed_names_with_the_bound_port_are_accepted(
    served: Served, host: str
) -> None:
    response = post(served, Host=host.format(port=served.port), **bearer())
    assert response.status_code == 200
    assert "fabric" in response.text  # the initialize result names the server


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "localhost"])
def test_a_foreign_host_gets_403(served: Served, host: str) -> None:
    """DNS rebinding: a page whose name resolves to 127.0.0.1 still sends its own name."""
    spelled = host.format(port=served.port)
    response = post(served, Host=spelled, **bearer())
    assert response.status_code == 403
    assert error_of(response) == host_refusal(served, spelled)


def test_the_host_check_comes_before_the_token(served: Served) -> None:
    spelled = f"evil.example:{served.port}"
    response = post(served, Host=spelled)
    assert response.status_code == 403
    assert error_of(response) == host_refusal(served, spelled)


def test_a_foreign_origin_gets_403(served: Served) -> None:
    response = post(served, Origin="http://evil.example", **bearer())
    assert response.status_code == 403
    assert error_of(response) == origin_refusal("http://evil.example")


@pytest.mark.parametrize(
    "origin", ["http://127.0.0.1:{port}", "http://localhost:{port}", APP_ORIGIN]
)
def test_the_servers_own_origin_and_an_allowed_origin_pass(served: Served, origin: str) -> None:
    response = post(served, Origin=origin.format(port=served.port), **bearer())
    assert response.status_code == 200


def test_the_servers_host_on_another_scheme_is_a_foreign_origin(served: Served) -> None:
    origin = f"https://127.0.0.1:{served.port}"
    response = post(served, Origin=origin, **bearer())
    assert response.status_code == 403
    assert error_of(response) == origin_refusal(origin)


def test_a_preflight_from_an_allowed_origin_is_answered_without_a_token(served: Served) -> None:
    """A browser's CORS preflight carries no credentials; --allow-origin answers it."""
    response = httpx.options(
        served.url,
        headers={
            "Origin": APP_ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
        timeout=30,
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == APP_ORIGIN
    assert response.headers["access-control-allow-headers"] == "authorization, content-type"


@pytest.mark.parametrize(
    ("token", "status"), [(TOKEN, 200), (None, 401)], ids=["token", "no-token"]
)
def test_responses_to_an_allowed_origin_carry_cors_headers(
    served: Served, token: str | None, status: int
) -> None:
    """A browser app can read its answers, a 401 included, and the session id."""
    response = post(served, Origin=APP_ORIGIN, **(bearer(token) if token else {}))
    assert response.status_code == status
    assert response.headers["access-control-allow-origin"] == APP_ORIGIN
    assert "mcp-session-id" in response.headers["access-control-expose-headers"]


# -- settings it refuses ------------------------------------------------------------------


def refused(*flags: str, env: dict[str, str] | None = None) -> str:
    """Run `fabric mcp` with these flags; it must exit 2 without a traceback. Its message."""
    done = subprocess.run(
        fabric_mcp(*flags),
        capture_output=True,
        text=True,
        env=env or environment(),
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    return " ".join(done.stderr.split())


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7"])
def test_a_non_loopback_address_without_a_token_refuses_to_start(host: str) -> None:
    message = refused("--http", "--host", host)
    assert message.startswith(
        f"error (bad_arguments): refusing to serve on --host {host} without a bearer token"
    )
    assert "anyone who can reach that address could run code" in message
    assert "--token-env NAME" in message and "--host 127.0.0.1" in message


def test_an_unset_token_variable_refuses_to_start() -> None:
    message = refused("--http", "--token-env", TOKEN_ENV)
    assert message.startswith(
        f"error (bad_arguments): --token-env {TOKEN_ENV}: the environment variable {TOKEN_ENV} is not set;"
    )
    assert f"export {TOKEN_ENV}=" in message


def test_an_empty_token_variable_refuses_to_start() -> None:
    message = refused("--http", "--token-env", TOKEN_ENV, env=environment(**{TOKEN_ENV: " "}))
    assert f"the environment variable {TOKEN_ENV} is empty;" in message


def test_a_token_a_header_cannot_carry_refuses_to_start() -> None:
    env = environment(**{TOKEN_ENV: "two words"})
    message = refused("--http", "--token-env", TOKEN_ENV, env=env)
    assert "holds characters a header cannot carry" in message


def test_http_flags_without_http_refuse_to_start() -> None:
    message = refused("--token-env", TOKEN_ENV)
    assert (
        message == "error (bad_arguments): --token-env, --allow-host and --allow-origin need --http"
    )


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--allow-origin", "localhost:5173", "is not an origin; write scheme://host[:port]"),
        ("--allow-origin", "http://localhost:5173/app", "is not an origin"),
        ("--allow-origin", "http://localhost:port", "is not an origin"),
        ("--allow-origin", "http://me@localhost:5173", "is not an origin"),
        ("--allow-host", "myhost.lan:8080", "is not a host name; give a name or address without"),
        ("--port", "70000", "is not a port; use 1-65535, or 0 for a free one"),
    ],
)
def test_a_malformed_flag_refuses_to_start_naming_it(flag: str, value: str, says: str) -> None:
    message = refused("--http", flag, value)
    assert message.startswith(f"error (bad_arguments): {flag} ")
    assert says in message
