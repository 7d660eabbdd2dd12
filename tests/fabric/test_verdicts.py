"""Each verdict is checked against what came back: a bounded verdict whose result is far
larger than its estimate, or an unbounded one on a tiny result, is a ``verdict_mismatch``
event, counted in ``ctx_status``; the oversized kind also warns on the result."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fabric import Fabric
from fabric._events import Events

WIDE = 't = await tools.read(path="wide.txt")\n'


@pytest.fixture
async def fab(tmp_path: Path) -> AsyncIterator[Fabric]:
    (tmp_path / "wide.txt").write_text("".join("x" * 3000 + "\n" for _ in range(50)))
    (tmp_path / "narrow.txt").write_text("".join(f"line {i}\n" for i in range(50)))
    async with Fabric(tmp_path, spares=0) as session:
        yield session


def _kinds(tmp_path: Path) -> list[str]:
    return [e["kind"] for e in Events(tmp_path / ".fabric" / "events.jsonl").recent(50)]


async def test_a_bounded_result_far_above_its_estimate_is_a_mismatch(
    fab: Fabric, tmp_path: Path
) -> None:
    done = await fab.exec(WIDE + "return t.splitlines()[:20]")
    assert done.ok and done.analysis is not None and done.analysis.bounded
    assert done.analysis.estimate is not None and done.analysis.estimate.bytes == 2000
    assert any("the analyzer expected about 2000 bytes" in w for w in done.warnings)
    assert _kinds(tmp_path) == ["verdict_mismatch", "exec"]
    mismatch = Events(tmp_path / ".fabric" / "events.jsonl").recent(2)[0]
    assert mismatch["mismatch"] == "oversized" and mismatch["bytes"] == done.bytes
    status = fab.status()
    assert (status["verdicts_checked"], status["verdict_mismatches"]) == (1, 1)
    shown = await fab.ctx.status()
    assert "analyzer verdicts checked: 1, mismatched: 1 (100%)" in shown.text


async def test_an_estimate_that_holds_is_checked_and_not_a_mismatch(
    fab: Fabric, tmp_path: Path
) -> None:
    done = await fab.exec('t = await tools.read(path="narrow.txt")\nreturn t.splitlines()[:20]')
    assert done.ok and not any("analyzer expected" in w for w in done.warnings)
    assert _kinds(tmp_path) == ["exec"]
    assert (fab.status()["verdicts_checked"], fab.status()["verdict_mismatches"]) == (1, 0)


async def test_an_unbounded_verdict_on_a_tiny_result_is_overcautious(
    fab: Fabric, tmp_path: Path
) -> None:
    (tmp_path / "tiny.txt").write_text("ok\n")
    done = await fab.exec('return await tools.read(path="tiny.txt")')
    assert done.analysis is not None and not done.analysis.bounded
    assert not any("analyzer expected" in w for w in done.warnings)
    event = Events(tmp_path / ".fabric" / "events.jsonl").recent(2)[0]
    assert (event["kind"], event["mismatch"]) == ("verdict_mismatch", "overcautious")


async def test_a_bounded_verdict_without_a_size_is_checked_too(fab: Fabric, tmp_path: Path) -> None:
    """A verdict that gave no size is belied by a very large result; when it said NONE (no
    provider data) the event is recorded and the result is not warned about."""
    small = await fab.exec("return 1 + 1")
    assert small.ok and fab.status()["verdicts_checked"] == 1
    big = await fab.exec('return ["x" * 1000 for i in range(100)]')
    assert big.analysis is not None and big.analysis.classification.value == "NONE"
    assert not any("analyzer expected" in w for w in big.warnings)
    event = Events(tmp_path / ".fabric" / "events.jsonl").recent(2)
    assert event[0]["kind"] == "verdict_mismatch" and event[0]["mismatch"] == "oversized"
    assert event[1]["mismatch"] == "oversized"


async def test_explain_last_shows_both_sides(fab: Fabric, tmp_path: Path) -> None:
    await fab.exec(WIDE + "return t.splitlines()[:20]")
    done = subprocess.run(
        [sys.executable, "-m", "fabric._cli", "explain", "--last", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    report = json.loads(done.stdout)
    assert report["analyzer"]["estimate_bytes"] == 2000 and report["analyzer"]["bounded"]
    assert report["actual"]["bytes"] > 8000 and report["mismatch"] == "oversized"


async def test_a_fovea_selection_comes_back_inline(tmp_path: Path) -> None:
    """A budgeted selection is already small: it is classified as such and not offloaded."""
    from fabric import ProviderRegistry

    registry = ProviderRegistry()

    @registry.provider("extensions", risk="read")
    async def fovea_focus(query: str, maxTokens: int = 4000) -> str:
        return ("the part of the code about " + query + ". ") * 40

    async with Fabric(tmp_path, registry=registry, spares=0) as session:
        done = await session.exec(
            'return await extensions.fovea_focus(query="auth", maxTokens=500)'
        )
    assert done.ok and done.policy_applied == "inline" and done.handle is None
    assert done.analysis is not None and done.analysis.classification.value == "SELECTED"
    assert not any("analyzer expected" in w for w in done.warnings)
