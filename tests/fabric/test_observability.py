"""ctx_summarize, ctx_status, facts tools, events.jsonl telemetry, and their CLI commands."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import Fabric
from fabric._events import Events
from runtime import ProviderCallError
from runtime.boundary import TokenCounter, summarize

from .test_cli import fabric as cli

COUNT = TokenCounter().count


@pytest.fixture
async def fab(tmp_path: Path) -> AsyncIterator[Fabric]:
    async with Fabric(tmp_path, spares=0) as session:
        yield session


def big_log(planted: str | None = None) -> str:
    lines = [f"2026-11-30 12:00:{i % 60:02d} INFO worker served request {i}" for i in range(50_000)]
    if planted:
        lines[31_337] = f"2026-11-30 12:00:00 ERROR {planted}"
    return "\n".join(lines)


@settings(max_examples=40, deadline=None)
@given(
    text=st.text(max_size=20_000),
    budget=st.integers(16, 800),
    mode=st.sampled_from(["structural", "code"]),
)
def test_summaries_fit_their_budget_and_are_deterministic(
    text: str, budget: int, mode: str
) -> None:
    first = summarize(text, mode, budget, COUNT)
    assert first.tokens <= budget and COUNT(first.text) <= budget
    assert summarize(text, mode, budget, COUNT) == first


def test_a_planted_error_in_a_huge_log_appears_in_the_summary() -> None:
    done = summarize(big_log("disk /dev/sda1 failed"), "structural", 300, COUNT)
    assert "31338 | 2026-11-30 12:00:00 ERROR disk /dev/sda1 failed" in done.text
    assert done.text.startswith("log, 50000 lines; by level: INFO 49999, ERROR 1")


def test_code_summaries() -> None:
    source = (
        "import os\nfrom pathlib import Path\n\n"
        "class Store:\n    '''Keeps things.'''\n    def put(self, data: bytes) -> str:\n"
        "        '''Store data.'''\n        return ''\n\n"
        "async def main(argv: list[str]) -> int:\n    # TODO: parse flags\n    return 0\n"
    )
    done = summarize(source, "code", 300, COUNT).text
    assert "imports: 2 statements (L1-2)" in done and "pathlib" not in done
    assert "L4-8 class Store [36+120]  # Keeps things." in done
    assert "  L6-8 def put(self, data: bytes) -> str [73+83]  # Store data." in done
    assert (
        "L10-12 async def main(argv: list[str]) -> int" in done and "L11: TODO: parse flags" in done
    )
    diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-old\n+new\n+more\n"
    assert "diff: 1 files, +2 -1" in summarize(diff, "code", 200, COUNT).text
    js = "import fs from 'fs';\nexport function load(path) {\n  return 1;\n}\nclass A {}\n"
    assert "L2-4 export function load(path) [21+43]" in summarize(js, "code", 200, COUNT).text


async def test_ctx_summarize_keeps_the_source_and_reports(fab: Fabric) -> None:
    done = (await fab.ctx.summarize(text=big_log("boom"), max_tokens=200)).data
    size = len(big_log("boom").encode())
    share = 512 * 1024 / size  # one page of the whole; within it, the lines shown or folded
    assert done["tokens"] <= 200 and 0.9 * share < done["coverage"] <= share
    assert fab.boundary.store is not None
    assert fab.boundary.store.get_text(done["handle"]) == big_log("boom")
    pages = [done]
    while pages[-1]["next_offset"] is not None:  # 512 KB at a time, each saying what is next
        start = pages[-1]["next_offset"]
        assert f'ctx.summarize(handle="{done["handle"]}", offset={start})' in pages[-1]["summary"]
        page = await fab.ctx.summarize(handle=done["handle"], offset=start, max_tokens=200)
        assert page.data["offset"] == start and page.data["tokens"] <= 200
        pages.append(page.data)
    assert len(pages) == -(-size // (512 * 1024)) and "this is the end" in pages[-1]["summary"]
    assert sum(p["page_bytes"] for p in pages) == size
    assert sum("boom" in p["summary"] for p in pages) == 1
    again = (await fab.ctx.summarize(handle=done["handle"], mode="code", max_tokens=100)).data
    assert again["handle"] == done["handle"]
    with pytest.raises(ProviderCallError) as unknown:
        await fab.ctx.summarize(text="x", mode="poetry")
    assert unknown.value.code == "bad_arguments"
    assert "mode must be one of 'structural', 'code' or 'model', not 'poetry'" in str(unknown.value)
    with pytest.raises(ProviderCallError) as no_model:
        await fab.ctx.summarize(text="x", mode="model")
    assert no_model.value.code == "no_model" and "no model is configured" in no_model.value.message


async def test_snippets_reach_the_memory_tools(fab: Fabric) -> None:
    code = (
        'await ctx.remember("db", "postgres 16 on port 5433")\n'
        's = await ctx.summarize(text="a\\nb\\n" * 1000, max_tokens=50)\n'
        'r = await ctx.recall("postgres")\n'
        "st = await ctx.status()\n"
        'gone = await ctx.forget("db")\n'
        'return [r["facts"][0]["text"], s["tokens"] <= 50, st["executions"], gone["forgotten"]]'
    )
    done = await fab.exec(code)
    assert done.ok, done.text
    assert done.value == ["postgres 16 on port 5433", True, 0, True]
    bad = await fab.exec(
        'try:\n    await ctx.remember("../x", "y")\nexcept ToolError as e:\n    return e.code'
    )
    assert bad.value == "invalid_name"


async def test_events_and_status(fab: Fabric, tmp_path: Path) -> None:
    await fab.exec("return 1 + 1")
    big = await fab.exec('return "z" * 40000')
    await fab.exec('return await tools.ls(path=".")', strict=True)
    fab.context.read(big.handle or "", query="z", max_matches=1)
    events = Events(tmp_path / ".fabric" / "events.jsonl").recent(10)
    kinds = [e["kind"] for e in events]
    assert kinds == ["exec", "exec", "block", "read"]
    first = events[0]
    assert first["ok"] is True and first["verdict"] == "PASS" and first["bytes"] == 1
    assert "code" not in first and "value" not in first and "text" not in first
    assert events[1]["policy"] == "offload" and events[1]["bytes"] == 40000
    session = fab.status()
    assert (session["executions"], session["blocks"], session["offloads"], session["reads"]) == (
        2,
        1,
        1,
        1,
    )
    assert session["bytes_produced"] == 40001 and session["bytes_returned"] < 3000
    assert session["store"]["entries"] >= 1
    full = fab.status(scope="lifetime", detail="full")
    assert full["executions"] == 2 and "settings" in full and full["settings_warnings"] == []


def test_events_rotate_at_their_cap(tmp_path: Path) -> None:
    events = Events(tmp_path / "events.jsonl", max_bytes=2000)
    for i in range(100):
        events.record("exec", ok=True, bytes=i)
    assert (tmp_path / "events.jsonl.1").exists()
    assert (tmp_path / "events.jsonl").stat().st_size < 2100
    assert [e["bytes"] for e in events.recent(5)] == [95, 96, 97, 98, 99]


def test_the_cli_commands(tmp_path: Path) -> None:
    ws = ["--workspace", str(tmp_path)]
    assert cli("exec", *ws, "-", stdin="return 41 + 1").returncode == 0
    status = json.loads(cli("status", *ws, "--json").stdout)
    assert status["executions"] == 1 and status["scope"] == "lifetime"
    assert "1 executions" in cli("status", *ws).stdout
    trace = json.loads(cli("trace", "5", *ws, "--json").stdout)
    assert trace[0]["kind"] == "exec" and trace[0]["ok"] is True
    (tmp_path / ".fabric" / "config.json").write_text('{"offloadPreviewBytes": 99999}')
    shown = json.loads(cli("settings", *ws, "--json").stdout)
    assert shown["values"]["offloadPreviewBytes"] == {"value": 4096, "source": "clamped"}
    assert "outside 256..4096" in shown["warnings"][0]
    log = "\n".join(big_log("kaput").splitlines()[30_000:35_000])  # within one page
    summary = cli("summarize", "-", *ws, "--max-tokens", "100", stdin=log)
    assert summary.returncode == 0 and "ERROR kaput" in summary.stdout
    assert cli("remember", "owner", "alice", *ws).returncode == 0
    assert "owner: alice" in cli("recall", "alice", *ws).stdout
    assert cli("forget", "owner", *ws).returncode == 0
    assert cli("forget", "owner", *ws).returncode == 1
    refused = cli("clear", *ws)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    cleared = json.loads(cli("clear", "--facts", "--yes", *ws, "--json").stdout)
    assert cleared["cleared"] >= 1


def test_lifetime_totals_follow_appends_and_rotation(tmp_path: Path) -> None:
    """Totals are read incrementally: each call counts what was appended since, across a
    rotation, and a line still being written is counted once it is whole."""
    log = Events(tmp_path / "events.jsonl", max_bytes=500, session="s")
    for _ in range(3):
        log.record("read", mode="range")
    assert log.lifetime()["reads"] == 3
    for _ in range(10):  # past max_bytes: the log rotates into events.jsonl.1
        log.record("exec", ok=True, bytes=10)
    assert (tmp_path / "events.jsonl.1").exists()
    totals = log.lifetime()
    assert totals["reads"] == 3 and totals["executions"] == 10
    with open(tmp_path / "events.jsonl", "a") as f:
        f.write('{"ts": 1, "kind": "read"')  # half a line, as a writer in another process
    assert log.lifetime()["reads"] == 3
    with open(tmp_path / "events.jsonl", "a") as f:
        f.write("}\n")
    assert log.lifetime()["reads"] == 4


async def test_calls_are_recorded_by_parameter_name_so_hints_run_as_written(
    tmp_path: Path,
) -> None:
    """A positional call is recorded under the parameter it filled: the stored result's
    source, shown in recovery hints, is code that runs as written."""
    (tmp_path / "big.txt").write_text("line\n" * 20_000)
    async with Fabric(tmp_path, spares=0) as fab:
        done = await fab.exec('return await tools.read("big.txt")')
        assert done.handle is not None and done.calls == 1
        entry = fab.boundary.store.stat(done.handle)  # type: ignore[union-attr]
        assert str(entry.source) == 'tools.read(path="big.txt")'
        again = await fab.exec(f"return len(await {entry.source})")
        assert again.ok and again.value == len("line\n" * 20_000)


async def test_summaries_and_compacted_errors_redact_and_the_original_stays(fab: Fabric) -> None:
    """Redaction applies to what the model reads (previews, summaries, compacted errors);
    the stored original stays byte for byte."""
    log = "\n".join(f"INFO request {i} ok" for i in range(400)) + "\nERROR password=hunter2\n"
    done = (await fab.ctx.summarize(text=log, max_tokens=200)).data
    assert "hunter2" not in done["summary"] and "password=[REDACTED]" in done["summary"]
    assert fab.boundary.store is not None
    assert fab.boundary.store.get_text(done["handle"]) == log
    failed = await fab.exec(
        "lines = ['step %d: Authorization: Bearer abc.def' % i for i in range(2000)]\n"
        "raise ValueError('\\n'.join(lines))"
    )
    assert not failed.ok and "abc.def" not in failed.text


async def test_dropped_output_is_reported_and_text_tokens_count_what_is_read(
    fab: Fabric,
) -> None:
    """A print flood past outputBytes: the text says how much was printed, kept and dropped
    (the marker in the dropped part is not shown), and text_tokens counts that text only."""
    done = await fab.exec(
        "for i in range(20000):\n"
        '    print("line", i, "x" * 40)\n'
        'print("PLANTED-MARKER")\n'
        'return "done"'
    )
    assert done.ok and done.logs_dropped > 0
    printed = done.logs_dropped + len(done.logs.encode())
    assert f"{printed} bytes were printed, the first {len(done.logs.encode())} kept" in done.text
    assert f"the other {done.logs_dropped} dropped" in done.text
    assert "its last line cut at the limit" in done.text
    assert "PLANTED-MARKER" not in done.text
    assert done.text_tokens == TokenCounter().count(done.text)
