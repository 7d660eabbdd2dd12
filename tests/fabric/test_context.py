"""Results through the boundary end to end: fab.exec offloads, ctx.read and ctx.offload in
snippets, and `fabric read`."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from fabric import Fabric, Limits
from runtime.boundary import BoundaryConfig
from store import Store

from .test_cli import fabric as cli

LINES = 30_000


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ctx")
    lines = [f"INFO job {i} finished" for i in range(LINES)]
    lines[12_345] = "ERROR job 12345 lost its lease"
    (root / "app.log").write_text("\n".join(lines) + "\n")
    (root / "data.json").write_text(json.dumps({"users": [{"id": i} for i in range(100)]}))
    return root


@pytest.fixture(scope="module")
async def session(workspace: Path) -> AsyncIterator[Fabric]:
    async with Fabric(workspace=workspace, limits=Limits(timeout_s=20)) as fab:
        yield fab


async def test_a_large_result_is_offloaded_and_read_back_by_query(session: Fabric) -> None:
    first = await session.exec('return await tools.read(path="app.log")')
    assert first.ok and first.policy_applied == "offload"
    assert first.handle is not None and first.handle.startswith("read-app-log-")
    assert len(first.text) < 16 * 1024 + 1024
    second = await session.exec(
        f'found = await ctx.read("{first.handle}", query="lost its lease")\n'
        'window = found["windows"][0]\n'
        'hit = [line for line in window["lines"] if line["hit"]][0]\n'
        'return [found["total_matches"], window["line"], hit["number"], hit["text"]]'
    )
    assert second.ok and second.value[:3] == [1, 12_346, 12_346]
    assert "lost its lease" in second.value[3] and "|" not in second.value[3]


async def test_ctx_offload_in_a_snippet(session: Fabric, workspace: Path) -> None:
    done = await session.exec(
        'stored = await ctx.offload({"rows": list(range(5000))}, key="rows", label="demo")\n'
        'back = await ctx.read("rows", json_path="$.rows[4999]")\n'
        'return [stored["handle"], stored["content_type"], back["values"][0]["value"]]'
    )
    assert done.ok, done.text
    handle, ctype, last = done.value
    assert handle.startswith("rows-") and ctype == "json" and last == 4999
    with Store(workspace) as store:
        assert json.loads(store.get("rows")) == {"rows": list(range(5000))}


async def test_a_python_file_is_previewed_by_its_outline(session: Fabric, workspace: Path) -> None:
    """A large Python file read from the workspace is previewed as an outline of its main
    class; the bytes the outline gives a method are one ctx.read, and hold the method."""
    methods = [
        f"    def step_{n}(self, job):\n"
        + "".join(f"        job.field_{k} = {k}  # except Exception\n" for k in range(40))
        for n in range(30)
    ]
    methods[15] = methods[15].replace("job.field_20 = 20", "job.field_20 = 'ZEBRA-4471'")
    source = "import os\nimport sys\n\n\nclass Engine:\n" + "\n".join(methods)
    (workspace / "engine.py").write_text(source)
    first = await session.exec('return await tools.read(path="engine.py")')
    assert first.policy_applied == "offload" and first.handle is not None
    entry = re.search(
        r"^  L(\d+)-(\d+) def step_15\(self, job\) \[(\d+)\+(\d+)\]$", first.text, re.M
    )
    assert entry is not None, first.text
    assert 'query="Engine")' in first.text and "except Exception" not in first.text
    offset, length = entry[3], entry[4]
    second = await session.exec(
        f'found = await ctx.read("{first.handle}", offset={offset}, length={length})\n'
        'return found["content"]'
    )
    assert second.value.startswith("    def step_15(self, job):\n") and "ZEBRA-4471" in second.value
    lines = source.split("\n")
    assert lines[int(entry[1]) - 1] == "    def step_15(self, job):"


async def test_ctx_read_takes_a_workspace_file(session: Fabric) -> None:
    done = await session.exec(
        'r = await ctx.read("data.json", json_path="$.users[-1].id")\n'
        'return r["values"][0]["value"]'
    )
    assert done.ok and done.value == 99


async def test_read_errors_reach_the_snippet_with_their_code(session: Fabric) -> None:
    done = await session.exec(
        'try:\n    await ctx.read("app.log", query="(", regex=True)\n'
        "except ToolError as e:\n    return [e.code, str(e)[:40]]"
    )
    assert done.ok and done.value[0] == "invalid_regex"


async def test_policy_and_format_per_call(session: Fabric) -> None:
    inline = await session.exec('return "x" * 40000', policy="inline")
    assert inline.policy_applied == "inline" and len(inline.text) == 40000
    as_json = await session.exec('return {"a": [1, 2]}', result_format="json")
    assert as_json.text == '{"a": [1, 2]}'


def test_fabric_read_from_the_command_line(workspace: Path) -> None:
    with Store(workspace) as store:
        handle = store.put((workspace / "app.log").read_text(), tool="tools.read").handle
    found = cli("read", handle, "--query", "lease", "--workspace", str(workspace))
    assert found.returncode == 0 and ">  12346 | ERROR job 12345 lost its lease" in found.stdout
    as_json = json.loads(
        cli(
            "read",
            "data.json",
            "--json-path",
            "$.users[0:2].id",
            "--json",
            "--workspace",
            str(workspace),
        ).stdout
    )
    assert [v["value"] for v in as_json["values"]] == [0, 1]
    bad = cli("read", handle, "--query", "(", "--regex", "--workspace", str(workspace))
    assert bad.returncode == 2 and "invalid_regex" in bad.stderr  # the caller's mistake


def test_fabric_exec_prints_the_offload_notice(workspace: Path) -> None:
    done = cli(
        "exec", "--workspace", str(workspace), "-", stdin='return await tools.read(path="app.log")'
    )
    assert done.returncode == 0 and "stored as read-app-log-" in done.stdout
    assert "nothing is lost" in done.stdout


async def test_clamped_settings_are_reported(tmp_path: Path) -> None:
    """A file value out of bounds is clamped and warned; the same value passed from Python
    is refused, naming the field and its bound."""
    (tmp_path / ".fabric").mkdir()
    (tmp_path / ".fabric" / "config.json").write_text('{"offloadPreviewBytes": 99999}')
    async with Fabric(workspace=tmp_path, spares=0) as fab:
        assert fab.boundary.config.offload_preview_bytes == 4096
        assert len(fab.warnings) == 1
        assert "offloadPreviewBytes 99999 is outside 256..4096; using 4096" in fab.warnings[0]
    with pytest.raises(ValidationError) as caught:
        BoundaryConfig(offload_preview_bytes=99_999)
    assert "offload_preview_bytes" in str(caught.value) and "4096" in str(caught.value)


def test_fabric_exec_policy_and_format_flags(workspace: Path) -> None:
    done = cli(
        "exec",
        "--workspace",
        str(workspace),
        "--policy",
        "offload",
        "--json",
        "-",
        stdin='return {"a": 1}',
    )
    result = json.loads(done.stdout)
    assert result["policy_applied"] == "offload" and result["handle"].startswith("exec-")
    shown = cli(
        "exec", "--workspace", str(workspace), "--format", "json", "-", stdin='return {"a": [1]}'
    )
    assert shown.stdout.strip() == '{"a": [1]}'
