"""The table of operations: each context operation is declared once, and the snippet
provider, the MCP tool, the command and the Python call are made from it, so they take the
same arguments, answer the same way and refuse a bad argument in the same words."""

from __future__ import annotations

import argparse
import inspect
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from fabric import Fabric
from fabric._cli import _parser
from fabric._operations import OPERATIONS, Args, Cli, Reply, Surface, operation
from fabric.mcp import build_server
from runtime import ProviderCallError


@pytest.fixture
async def fab(tmp_path: Path) -> AsyncIterator[Fabric]:
    (tmp_path / "app.log").write_text("".join(f"line {i}\n" for i in range(1, 401)))
    async with Fabric(tmp_path, spares=0) as session:
        yield session


def _cli(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fabric._cli", *argv, "--workspace", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _commands() -> dict[str, argparse.ArgumentParser]:
    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def _dests(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions} - {"help", "workspace", "json"}


async def test_every_operation_is_on_every_surface_with_the_same_arguments(fab: Fabric) -> None:
    """Drift test: a field of the model is a parameter of the snippet provider, a property of
    the MCP tool's schema, a flag or argument of the command and a parameter of the Python
    call; nothing more, nothing less. An operation that opts out of a surface is not there."""
    tools = {t.name: t for t in await build_server(fab).list_tools()}
    commands = _commands()
    for op in OPERATIONS.values():
        fields = list(op.args.model_fields)
        assert list(fab.providers.parameters(op.namespace, op.name)) == fields, op.qualified
        if op.offered_on("mcp"):
            assert list(tools[op.tool_name].input_schema["properties"]) == fields, op.tool_name
            assert tools[op.tool_name].input_schema.get("additionalProperties") is False
            assert tools[op.tool_name].description.startswith(op.help)
        else:
            assert op.tool_name not in tools
        if op.offered_on("cli"):
            assert _dests(commands[op.command]) == set(fields), op.command
        else:
            assert op.command not in commands
        if op.offered_on("python"):
            call = getattr(getattr(fab, op.namespace), op.name)
            assert list(inspect.signature(call).parameters) == fields, op.qualified
        else:
            assert not hasattr(getattr(fab, op.namespace), op.name)


async def test_a_snippet_gets_the_data_and_mcp_the_text_beside_it(fab: Fabric) -> None:
    done = await fab.exec(
        'found = await ctx.read("app.log", query="line 40", context=0)\n'
        'kept = await ctx.offload({"rows": [1, 2, 3]}, key="rows")\n'
        'return found["total_matches"], kept["key"], "preview" in kept, "text" in found'
    )
    assert done.ok, done.text
    assert done.value == [2, "rows", True, False]  # line 40 and line 400
    server = build_server(fab)
    answer = await server.call_tool("ctx_read", {"handle": "rows", "json_path": "$.rows[1]"})
    assert answer.content[0].text.splitlines()[-1] == "$.rows[1] = 2"
    assert answer.structured_content["values"] == [{"path": "$.rows[1]", "value": 2}]


async def test_the_python_call_takes_what_the_snippet_takes(fab: Fabric) -> None:
    reply = await fab.ctx.read("app.log", query="line 399", context=0)
    assert isinstance(reply, Reply) and reply.data["total_matches"] == 1
    assert "line 399" in reply.text
    forgot = await fab.ctx.forget("nothing")
    assert forgot.ok is False
    assert forgot.data == {"ok": False, "name": "nothing", "forgotten": False}
    with pytest.raises(ProviderCallError) as caught:
        await fab.ctx.read("app.log", max_matches=0)
    assert caught.value.code == "bad_arguments"
    assert str(caught.value).startswith("ctx.read: max_matches must be at least 1, not 0; call")
    with pytest.raises(ProviderCallError, match="did you mean max_matches"):
        await fab.ctx.read("app.log", max_match=3)
    with pytest.raises(AttributeError, match="no operation 'reed'"):
        fab.ctx.reed  # noqa: B018


async def test_mcp_takes_camel_case_and_refuses_names_it_does_not_know(fab: Fabric) -> None:
    """The reference's tools spell arguments in camelCase; both spellings work, and a name the
    tool does not have is refused, never silently ignored."""
    server = build_server(fab)
    camel = await server.call_tool(
        "ctx_read", {"handle": "app.log", "query": "line 3", "maxMatches": 2, "ignoreCase": True}
    )
    snake = await server.call_tool(
        "ctx_read", {"handle": "app.log", "query": "line 3", "max_matches": 2, "ignore_case": True}
    )
    assert not camel.is_error and camel.content[0].text == snake.content[0].text
    unknown = await server.call_tool("ctx_read", {"handle": "app.log", "maxMatch": 2})
    assert unknown.is_error
    assert unknown.structured_content == {
        "error": {
            "code": "bad_arguments",
            "message": "ctx_read: maxMatch is not a parameter here; did you mean max_matches?",
        }
    }


async def test_one_bad_argument_reads_the_same_on_every_surface(
    fab: Fabric, tmp_path: Path
) -> None:
    """The model's bound is the only check, and each surface names the field as its caller
    typed it."""
    inside = await fab.exec(
        'try:\n    await ctx.read("app.log", query="x", max_matches=501)\n'
        "except ToolError as e:\n    return e.code, e.message"
    )
    assert inside.value is not None and inside.value[0] == "bad_arguments"
    assert inside.value[1].startswith("ctx.read: max_matches must be at most 500, not 501")
    over_mcp = await build_server(fab).call_tool(
        "ctx_read", {"handle": "app.log", "query": "x", "max_matches": 501}
    )
    assert over_mcp.structured_content["error"]["message"] == (
        "ctx_read: max_matches must be at most 500, not 501"
    )
    done = _cli(tmp_path, "read", "app.log", "--query", "x", "--max-matches", "501")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--max-matches must be at most 500, not 501" in done.stderr


def test_commands_print_the_text_or_the_data(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text(json.dumps({"owner": "ops", "rows": list(range(50))}))
    notes = str(tmp_path / "notes.json")  # a file named on the command line: from the cwd
    stored = _cli(tmp_path, "offload", notes, "--key", "notes", "--json")
    assert stored.returncode == 0, stored.stderr
    entry = json.loads(stored.stdout)
    assert entry["key"] == "notes" and entry["content_type"] == "json" and entry["preview"]
    read = _cli(tmp_path, "read", "notes", "--json-path", "$.owner")
    assert read.returncode == 0 and read.stdout.splitlines()[-1] == '$.owner = "ops"'
    assert _cli(tmp_path, "remember", "db", "postgres 16").returncode == 0
    recalled = json.loads(_cli(tmp_path, "recall", "postgres", "--json").stdout)
    assert [f["text"] for f in recalled["facts"]] == ["postgres 16"]
    assert _cli(tmp_path, "forget", "db").returncode == 0
    again = _cli(tmp_path, "forget", "db")
    assert again.returncode == 1 and again.stdout.strip() == "there was no fact named db"
    status = json.loads(_cli(tmp_path, "status", "--json").stdout)
    assert status["scope"] == "lifetime" and status["reads"] == 1


@pytest.fixture
def declared() -> Iterator[str]:
    """An operation declared for one test, and taken out of the table after it."""

    class EchoArgs(Args):
        words: str = Field(description="what to say back")
        times: int = Field(1, ge=1, le=3, description="how often")

    def echo(session: Fabric, args: EchoArgs, surface: Surface) -> Reply:
        said = " ".join([args.words] * args.times)
        return Reply(said, {"said": said, "surface": surface})

    operation(EchoArgs, help="Say it back", cli=Cli(positional=("words",)))(echo)
    try:
        yield "ctx.echo"
    finally:
        del OPERATIONS["ctx.echo"]


async def test_an_operation_declared_once_is_served_everywhere(
    declared: str, tmp_path: Path
) -> None:
    """Adding an operation touches one place: its model and function. The snippet, MCP,
    the command line and Python get it from there."""
    async with Fabric(tmp_path, spares=0) as fab:
        inside = await fab.exec('return await ctx.echo("hi", times=2)')
        assert inside.value == {"said": "hi hi", "surface": "snippet"}
        server = build_server(fab)
        over_mcp = await server.call_tool("ctx_echo", {"words": "hi", "times": 3})
        assert over_mcp.content[0].text == "hi hi hi"
        assert over_mcp.structured_content == {"said": "hi hi hi", "surface": "mcp"}
        assert (await fab.ctx.echo("yo")).data == {"said": "yo", "surface": "python"}
    from fabric._cli import main

    assert "echo" in _commands()
    assert main(["echo", "hey", "--times", "4", "--workspace", str(tmp_path)]) == 2


def test_a_second_declaration_of_a_name_is_refused(declared: str) -> None:
    class Nothing(Args):
        pass

    def echo(session: Fabric, args: Any, surface: Surface) -> Reply:
        return Reply("", None)

    with pytest.raises(ValueError, match=r"ctx\.echo is declared twice"):
        operation(Nothing, help="again")(echo)


def test_the_readme_table_is_generated_from_the_operations() -> None:
    """Regenerate with ``python -m fabric._operations README.md``."""
    from contract import readme_block
    from fabric._operations._docs import END, START, readme_table

    text = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert readme_block(text, START, END) == readme_table()


async def test_a_call_with_a_flood_of_arguments_is_refused_unread(fab: Fabric) -> None:
    """A snippet cannot make the host describe a hundred thousand bad arguments: past twice
    the parameters a call is refused before anything is validated, in one short line."""
    done = await fab.exec(
        "try:\n"
        '    await ctx.read("app.log", **{f"k{i}": 1 for i in range(100_000)})\n'
        "except ToolError as e:\n"
        "    return e.code, len(e.message), e.message.split(';')[0]"
    )
    assert done.value is not None
    code, size, start = done.value
    assert code == "bad_arguments" and size < 600
    assert start == "ctx.read takes 9 arguments, not 100001"


def test_signatures_show_the_values_a_choice_takes(fab: Fabric) -> None:
    shown = fab.providers.get("ctx", "status").signature()
    assert "scope: Literal['runtime', 'session', 'lifetime'] = 'session'" in shown


async def test_python_calls_translate_errors_and_refuse_a_closed_session(tmp_path: Path) -> None:
    fab = Fabric(tmp_path, spares=0)
    with pytest.raises(ProviderCallError) as caught:
        await fab.ctx.remember("../x", "y")
    assert caught.value.code == "invalid_name"
    await fab.close()
    from fabric import FabricClosed

    with pytest.raises(FabricClosed):
        await fab.ctx.recall("x")


async def test_both_spellings_of_one_argument_are_refused(fab: Fabric) -> None:
    answer = await build_server(fab).call_tool(
        "ctx_read", {"handle": "app.log", "max_matches": 3, "maxMatches": 7}
    )
    assert answer.structured_content["error"]["message"] == (
        "ctx_read: maxMatches and max_matches are one parameter: give it once"
    )


async def test_the_servers_own_tools_have_models_too(fab: Fabric) -> None:
    """fabric_exec and ce_exec refuse names they do not have and take camelCase; ce_exec
    judges as strict would when asked."""
    server = build_server(fab)
    unknown = await server.call_tool("fabric_exec", {"code": "1", "timeoutSeconds": 3})
    assert unknown.is_error
    assert "timeoutSeconds is not a parameter here" in unknown.content[0].text
    camel = await server.call_tool("fabric_exec", {"code": "return 2", "resultPolicy": "inline"})
    assert not camel.is_error and camel.structured_content["value"] == 2
    code = 'return await tools.read(path="app.log")'
    loose = await server.call_tool("ce_exec", {"code": code})
    strict = await server.call_tool("ce_exec", {"code": code, "strict": True})
    assert loose.structured_content["verdict"] == "WARN"
    assert strict.structured_content["verdict"] == "BLOCK"
    blocking = await server.call_tool("ce_exec", {"code": code, "blockUnboundedReturns": True})
    assert blocking.structured_content["verdict"] == "BLOCK"


def test_the_command_line_shows_bounds_and_prints_the_text_with_json(tmp_path: Path) -> None:
    shown = _cli(tmp_path, "read", "--help").stdout
    assert "(default: 1; 0 to 10)" in " ".join(shown.split())
    assert "first byte of a range (at least 0)" in " ".join(shown.split())
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    printed = json.loads(_cli(tmp_path, "read", "a.txt", "--query", "beta", "--json").stdout)
    assert printed["total_matches"] == 1 and "beta" in printed["text"]


def test_an_operation_may_not_take_a_name_every_command_has() -> None:
    class Clashing(Args):
        workspace: bool = False

    def clash(session: Fabric, args: Any, surface: Surface) -> Reply:
        return Reply("", None)

    with pytest.raises(ValueError, match="call the fields something else"):
        operation(Clashing, help="clash")(clash)
    assert "ctx.clash" not in OPERATIONS


async def test_storage_results_say_ok_and_offload_takes_its_source(fab: Fabric) -> None:
    stored = await fab.ctx.offload("grep output\n" * 10, source="grep")
    handle = stored.data["handle"]
    assert stored.data["ok"] is True and handle.startswith("grep-")
    assert fab.boundary.store is not None
    assert fab.boundary.store.stat(handle).source.tool == "grep"
    remembered = await fab.ctx.remember("build", "make all")
    assert remembered.data["ok"] is True and remembered.data["name"] == "build"


async def test_status_has_the_references_three_scopes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``runtime``: this Fabric; ``session``: every runtime of the host session
    (``FABRIC_HOST_SESSION``); ``lifetime``: every session of the workspace."""

    async def run(n: int) -> Fabric:
        session = Fabric(tmp_path, spares=0)
        async with session:
            for _ in range(n):
                assert (await session.exec("return 1")).ok
        return session

    monkeypatch.setenv("FABRIC_HOST_SESSION", "host-a")
    await run(2)
    monkeypatch.setenv("FABRIC_HOST_SESSION", "host-b")
    await run(1)
    monkeypatch.setenv("FABRIC_HOST_SESSION", "host-a")
    async with Fabric(tmp_path, spares=0) as fab:
        assert (await fab.exec("return 1")).ok
        runtime = (await fab.ctx.status(scope="runtime")).data
        host = (await fab.ctx.status(scope="session")).data
        lifetime = (await fab.ctx.status(scope="lifetime")).data
    assert (runtime["executions"], host["executions"], lifetime["executions"]) == (1, 3, 4)
    assert host["host_session"] == "host-a" and runtime["scope"] == "runtime"


async def test_a_stored_files_name_says_which_language_a_summary_outlines(fab: Fabric) -> None:
    source = "package main\n\n" + "".join(
        f"func Handler{i}() int {{\n\treturn {i}\n}}\n\n" for i in range(40)
    )
    stored = await fab.ctx.offload(source, key="server.go")
    summary = await fab.ctx.summarize(handle=stored.data["handle"], max_tokens=120)
    assert "\ngo, " in summary.text and "func Handler0" in summary.text
    assert 0 < summary.data["coverage"] < 1


async def test_code_and_json_over_a_page_are_summarized_whole(fab: Fabric) -> None:
    """Paging them would mislead: a page's outline counts lines and offsets from the page,
    and a page of JSON has no shape; up to 16 MB they are summarized whole."""
    rows = [{"id": i, "name": f"n{i}", "tags": ["a"]} for i in range(40_000)]
    stored = await fab.ctx.offload(rows, key="rows")
    summary = await fab.ctx.summarize(handle=stored.data["handle"], max_tokens=200)
    assert "40000" in summary.text and "next_offset" not in summary.data
    source = "".join(f"class C{i}:\n    x = {'1' * 200}\n\n" for i in range(5000))
    stored = await fab.ctx.offload(source, key="big.py")
    assert stored.data["bytes"] > 1024 * 1024
    summary = await fab.ctx.summarize(handle=stored.data["handle"], mode="code", max_tokens=300)
    found = re.search(r"class C(\d+)\S* \[(\d+)\+(\d+)\]", summary.text)
    assert found, summary.text
    start = int(found[2])
    assert source[start:].startswith(f"class C{found[1]}:")
