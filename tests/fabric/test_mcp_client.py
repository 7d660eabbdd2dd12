"""``mcp.<server>.<tool>(...)``: configured MCP servers called from snippets, with real servers
(mcp-server-git, mcp-server-time) and a small fake one that crashes, hangs or fails to start."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric import Fabric, Limits
from fabric.mcp import exec_description

FAKE = str(Path(__file__).resolve().parent / "mcp_fakes" / "fake_server.py")
PYTHON = sys.executable
AUTHORS = ["Ann", "Bo", "Cy"]


def _server(*args: str, **settings: Any) -> dict[str, Any]:
    return {"command": PYTHON, "args": list(args), **settings}


TRUSTED = {"mcp.*": "allow"}
"""The test servers' tools run whatever their class (approvals have tests of their own)."""


def configure(root: Path, servers: dict[str, Any], approvals: dict[str, str] | None = None) -> None:
    (root / ".fabric").mkdir(exist_ok=True)
    config = {"mcpServers": servers, "approvals": TRUSTED if approvals is None else approvals}
    (root / ".fabric" / "config.json").write_text(json.dumps(config))


def make_repo(root: Path, commits: int) -> list[str]:
    """A git repository whose commits are by AUTHORS in turn; the authors, newest first."""
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    authors = []
    for n in range(commits):
        author = AUTHORS[(n * n) % len(AUTHORS)]
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": author,
            "GIT_AUTHOR_EMAIL": f"{author.lower()}@example.com",
            "GIT_COMMITTER_NAME": author,
            "GIT_COMMITTER_EMAIL": f"{author.lower()}@example.com",
        }
        subprocess.run(
            ["git", "-C", str(root), "commit", "-q", "--allow-empty", "-m", f"change {n}"],
            check=True,
            env=env,
        )
        authors.append(author)
    return authors[::-1]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("git") / "repo"
    return root, make_repo(root, 60)


@pytest.fixture(scope="module")
async def fab(
    tmp_path_factory: pytest.TempPathFactory, repo: tuple[Path, list[str]]
) -> AsyncIterator[Fabric]:
    root = tmp_path_factory.mktemp("mcp")
    configure(
        root,
        {
            "git": _server("-m", "mcp_server_git", "--repository", str(repo[0])),
            "time": _server("-m", "mcp_server_time"),
            "fake": _server(FAKE, timeoutS=3),
            "nostart": _server(FAKE, "fail"),
            "mute": _server(FAKE, "mute", startTimeoutS=1.5),
        },
    )
    async with Fabric(workspace=root, limits=Limits(timeout_s=20)) as session:
        yield session


async def run(fab: Fabric, code: str) -> Any:
    result = await fab.exec(code)
    assert result.ok, result.text
    return result.value


async def failure(fab: Fabric, code: str) -> str:
    """The ToolError a snippet catches: its code and message."""
    wrapped = f"try:\n    {code}\nexcept ToolError as exc:\n    return [exc.code, exc.message]\n"
    value = await run(fab, wrapped)
    assert isinstance(value, list), f"no ToolError: {value!r}"
    return f"{value[0]}: {value[1]}"


async def test_git_log_commits_per_author(fab: Fabric, repo: tuple[Path, list[str]]) -> None:
    """A snippet lists the last 50 commits of a repository and returns commits per author."""
    path, authors = repo
    code = (
        f"log = await mcp.git.git_log(repo_path={str(path)!r}, max_count=50)\n"
        "counts = {}\n"
        "for line in log.splitlines():\n"
        "    if line.startswith('Author: '):\n"
        "        name = line.removeprefix('Author: ')\n"
        "        counts[name] = counts.get(name, 0) + 1\n"
        "return counts\n"
    )
    assert await run(fab, code) == dict(Counter(authors[:50]))


async def test_time_get_current_time_is_structured(fab: Fabric) -> None:
    """Structured content comes back as a dict."""
    now = await run(fab, 'return await mcp.time.get_current_time(timezone="UTC")')
    assert now["timezone"] == "UTC" and isinstance(now["is_dst"], bool)
    stamp = datetime.datetime.fromisoformat(now["datetime"])
    assert abs((stamp - datetime.datetime.now(datetime.UTC)).total_seconds()) < 120


async def test_positional_arguments_bind_in_schema_order(fab: Fabric) -> None:
    assert await run(fab, "return await mcp.fake.add(2, b=40)") == 42
    assert await run(fab, 'return await mcp.fake.echo("x", 3)') == {"text": "x", "times": 3}


async def test_bad_argument_is_caught_before_the_call(fab: Fabric) -> None:
    """A wrong type or a missing argument is named, with the signature; the server never
    sees the call."""
    said = await failure(fab, 'await mcp.fake.record("many")')
    assert said.startswith("bad_arguments: mcp.fake.record: n: 'many' is not of type 'integer'")
    assert "call it as mcp.fake.record(n: int)" in said
    said = await failure(fab, "await mcp.fake.add(1)")
    assert "'b' is a required property" in said and "mcp.fake.add(a: int, b: int)" in said
    assert await run(fab, "return await mcp.fake.recorded()") == []


async def test_text_images_and_tool_errors(fab: Fabric) -> None:
    """Text is a str (a tool named shout-loud is shout_loud), an image a content block with
    its bytes, isError a ToolError with the server's message."""
    assert await run(fab, 'return await mcp.fake.shout_loud("hey")') == "HEY"
    code = "b = (await mcp.fake.picture())[0]\nreturn [b['type'], b['mime_type'], b['data'][:4]]"
    assert await run(fab, code) == ["image", "image/png", b"\x89PNG"]
    said = await failure(fab, 'await mcp.fake.broken("on a Tuesday")')
    assert said.startswith("tool_error: mcp.fake.broken: ")
    assert said.endswith("broken on purpose: on a Tuesday")


async def test_an_image_returned_reaches_the_model_as_an_image(fab: Fabric) -> None:
    result = await fab.exec("return await mcp.fake.picture()")
    assert result.ok and [b.type for b in result.blocks] == ["image"], result.text


async def test_a_server_that_dies_mid_call_is_named_and_restarted(fab: Fabric) -> None:
    """The error names the server and quotes its stderr; the others keep working; the next
    call starts it again."""
    said = await failure(fab, "await mcp.fake.crash()")
    assert said.startswith("mcp_server: MCP server 'fake' went away during crash")
    assert "fake: about to crash" in said
    assert (await run(fab, 'return await mcp.time.get_current_time("UTC")'))["timezone"] == "UTC"
    assert await run(fab, "return await mcp.fake.add(1, 1)") == 2


async def test_a_server_that_exits_between_calls_is_started_again(fab: Fabric) -> None:
    """A server whose process ended while idle is started again by the next call, which
    succeeds."""
    assert await run(fab, "return await mcp.fake.leave()") == "bye"
    await asyncio.sleep(1.5)
    assert await run(fab, "return await mcp.fake.add(5, 5)") == 10


async def test_a_server_that_never_answers_fails_within_its_timeout(fab: Fabric) -> None:
    started = time.monotonic()
    said = await failure(fab, "await mcp.fake.hang()")
    assert time.monotonic() - started < 10
    assert "MCP server 'fake' did not answer hang within 3 s (timeoutS)" in said
    assert await run(fab, "return await mcp.fake.add(2, 2)") == 4


async def test_a_call_stops_before_the_execution_deadline(fab: Fabric) -> None:
    """With less time left in the execution than the server's timeout, the call fails in time
    for the snippet to see why, rather than the whole execution timing out."""
    assert await run(fab, "return await mcp.fake.add(1, 1)") == 2  # started: only the call waits
    result = await fab.exec(
        "try:\n    await mcp.fake.hang()\nexcept ToolError as exc:\n    return exc.message",
        timeout=2,
    )
    assert result.ok, result.text
    assert "did not answer hang within" in result.value
    assert "(the execution's deadline)" in result.value


async def test_a_server_that_fails_to_start(fab: Fabric) -> None:
    for _ in range(2):  # each call tries again
        said = await failure(fab, "await mcp.nostart.anything()")
        assert "MCP server 'nostart' failed to start: its process exited" in said
        assert "fake: cannot start: missing FAKE_TOKEN" in said
    assert await run(fab, "return await mcp.fake.add(3, 3)") == 6


async def test_a_server_that_never_starts(fab: Fabric) -> None:
    started = time.monotonic()
    said = await failure(fab, "await mcp.mute.anything()")
    assert time.monotonic() - started < 6
    assert "MCP server 'mute' did not start within 1.5 s (startTimeoutS)" in said


async def test_fifty_concurrent_calls_on_one_server(fab: Fabric) -> None:
    """Each call returns only once all 50 wait together: sequential calls would deadlock."""
    code = (
        "import asyncio\n"
        "got = await asyncio.gather(*[mcp.fake.meet(50) for _ in range(50)])\n"
        "return [len(got), min(got)]\n"
    )
    assert await run(fab, code) == [50, 50]


async def test_unknown_tool_names_what_exists(fab: Fabric) -> None:
    await run(fab, "return await mcp.fake.add(0, 0)")
    result = await fab.exec("return await mcp.fake.ad(1, 2)")
    assert not result.ok and "did you mean mcp.fake.add?" in result.text
    result = await fab.exec("return await mcp.fkae.add(1, 2)")
    assert not result.ok and "mcp.fkae" in result.text, result.text
    said = await failure(fab, "await mcp.describe('nothere.x')")
    assert "no MCP server 'nothere'; servers: fake, git, mute, nostart, time" in said


async def test_list_is_one_line_per_tool(fab: Fabric) -> None:
    listed = await run(fab, "return await mcp.list()")
    assert set(listed) == {"git", "time", "fake", "nostart", "mute"}
    assert listed["fake"]["tools"]["echo"] == "Say it back."
    assert "git_log" in listed["git"]["tools"]
    assert "missing FAKE_TOKEN" in listed["nostart"]["error"]
    assert list(await run(fab, 'return await mcp.list("time")')) == ["time"]


async def test_describe_gives_a_python_signature(fab: Fabric) -> None:
    described = await run(fab, 'return await mcp.describe("git.git_log")')
    assert described["signature"].startswith("mcp.git.git_log(repo_path: str, max_count: int")
    assert described["risk"] == "read"
    shout = await run(fab, 'return await mcp.describe("fake.shout_loud")')
    assert shout["server_name"] == "shout-loud"
    assert shout["signature"] == "mcp.fake.shout_loud(text: str)"
    every = await run(fab, 'return await mcp.describe("fake")')
    assert "mcp.fake.echo(text: str, times: int = 1)" in every["tools"]


async def test_risk_classes_come_from_annotations(fab: Fabric) -> None:
    await run(fab, "return await mcp.list()")
    risk = {p.name: p.risk for p in fab.providers.providers("mcp")}
    assert risk["git.git_log"] == "read" and risk["git.git_commit"] == "write"
    assert risk["fake.picture"] == "network"  # openWorldHint
    assert risk["fake.broken"] == "write"  # no annotations


async def test_an_mcp_tool_is_judged_by_its_class_like_any_provider(tmp_path: Path) -> None:
    """openWorldHint makes a tool network, denied by default; a read-only one runs."""
    configure(tmp_path, {"fake": _server(FAKE)}, approvals={})
    async with Fabric(workspace=tmp_path) as fab:
        denied = await fab.exec("return await mcp.fake.picture()")
        assert denied.error is not None and denied.error.code == "denied", denied.text
        assert '"mcp.fake.picture": "allow"' in denied.text


async def test_servers_start_lazily_and_close_with_the_session(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    configure(
        tmp_path,
        {"a": _server(FAKE, env={"FAKE_PID_FILE": str(pids)}, risk="execute")},
    )
    async with Fabric(workspace=tmp_path) as fab:
        assert (await fab.exec("return 1")).ok
        assert not pids.exists()  # not started before its first call
        assert await run(fab, "return await mcp.a.add(1, 2)") == 3
        assert fab.providers.get("mcp", "a.add").risk == "execute"  # the server's override
        (pid,) = map(int, pids.read_text().split())
        os.kill(pid, 0)
    assert await gone(pid)


async def gone(pid: int) -> bool:
    """Whether process ``pid`` (one this test started) has exited, waiting up to 10 s."""
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        await asyncio.sleep(0.1)
    return False


async def test_a_config_change_takes_a_server_away(tmp_path: Path) -> None:
    """A server the config no longer lists is stopped then, not at the session's end."""
    pids = tmp_path / "pids"
    configure(tmp_path, {"a": _server(FAKE, env={"FAKE_PID_FILE": str(pids)})})
    async with Fabric(workspace=tmp_path) as fab:
        assert await run(fab, "return await mcp.a.add(1, 2)") == 3
        (pid,) = map(int, pids.read_text().split())
        configure(tmp_path, {"b": _server(FAKE)})
        os.utime(tmp_path / ".fabric" / "config.json", ns=(1, 1))
        result = await fab.exec("return await mcp.a.add(1, 2)")
        assert not result.ok and "mcp.a is not a tool" in result.text, result.text
        assert await run(fab, "return await mcp.b.add(2, 2)") == 4
        assert await gone(pid)


@pytest.fixture
def http_server() -> Iterator[str]:
    """The fake server over streamable HTTP on a free port of 127.0.0.1; its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [PYTHON, FAKE, "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(200):
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()


async def test_streamable_http_with_headers_from_the_environment(
    tmp_path: Path, http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``url`` and ``headers``; ``${VAR}`` is expanded when the server is started."""
    monkeypatch.setenv("FAKE_TEST_TOKEN", "s3cret")
    headers = {"Authorization": "Bearer ${FAKE_TEST_TOKEN}", "X-Missing": "${FAKE_TEST_NONE}"}
    configure(
        tmp_path,
        {
            "web": {"url": http_server, "headers": {"Authorization": headers["Authorization"]}},
            "unset": {"url": http_server, "headers": headers},
        },
    )
    async with Fabric(workspace=tmp_path) as fab:
        warned = [w for w in fab.warnings if "mcpServers.unset" in w]
        assert warned and "${FAKE_TEST_NONE}, which is not set" in warned[0]
        code = 'return await mcp.web.header("authorization")'
        assert await run(fab, code) == "Bearer s3cret"
        said = await failure(fab, "await mcp.unset.header('x')")
        assert "MCP server 'unset' cannot start: ${FAKE_TEST_NONE} is not set" in said
        assert "stderr" not in said
        status = fab.status(detail="full")["settings"]["mcpServers"]
        assert status["web"]["headers"] == {"Authorization": "Bearer ${FAKE_TEST_TOKEN}"}


def test_the_cli_lists_and_tests_each_server(tmp_path: Path) -> None:
    """``fabric mcp-servers --json``: each server started, its tools or its error, timed;
    the entries left out as warnings; exit 1 when one failed."""
    configure(
        tmp_path,
        {
            "time": _server("-m", "mcp_server_time"),
            "nostart": _server(FAKE, "fail"),
            "bad": {"command": 3},
        },
    )
    command = [PYTHON, "-m", "fabric._cli", "mcp-servers", "--workspace", str(tmp_path)]
    done = subprocess.run(
        [*command, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    servers = {s["server"]: s for s in report["servers"]}
    assert servers["time"]["ok"] and servers["time"]["tools"] == [
        "get_current_time",
        "convert_time",
    ]
    assert servers["time"]["ms"] > 0
    assert not servers["nostart"]["ok"] and "missing FAKE_TOKEN" in servers["nostart"]["error"]
    assert "mcpServers.bad.command must be a string, not 3" in report["warnings"][0]
    only = subprocess.run(
        [*command, "--server", "time"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert only.returncode == 0 and "get_current_time" in only.stdout, only.stderr


async def test_the_exec_description_counts_servers_not_tools(fab: Fabric) -> None:
    """``fabric_exec``'s description grows with the servers only by a count and their names."""
    await run(fab, "return await mcp.list()")  # every tool known
    description = exec_description(fab.providers, 16_384)
    (line,) = [x for x in description.splitlines() if x.startswith("- mcp: ")]
    assert "tools on 5 servers (fake, git, mute, nostart, time)" in line  # two never started
    assert "await mcp.list() lists them" in line and "git_log" not in description
