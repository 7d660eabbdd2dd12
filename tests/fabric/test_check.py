"""ce_exec (fab.check, `fabric check`, `fabric explain`) and strict mode in fab.exec."""

from __future__ import annotations

import json
from pathlib import Path

from analyzer import Options
from fabric import Fabric, ProviderRegistry

from .test_cli import fabric as cli

UNBOUNDED = "r = await tools.fetch()\nreturn r"
BOUNDED = "r = await tools.fetch()\nreturn r[:5]"


def recording_registry() -> tuple[ProviderRegistry, list[str]]:
    calls: list[str] = []
    registry = ProviderRegistry()

    async def fetch() -> str:
        calls.append("fetch")
        return "payload " * 1000

    registry.register("tools", "fetch", fetch, risk="read")
    return registry, calls


async def test_check_diagnoses_without_running(tmp_path: Path) -> None:
    registry, calls = recording_registry()
    async with Fabric(tmp_path, registry=registry, spares=0) as fab:
        got = fab.check(UNBOUNDED)
        assert (got.classification.value, got.bounded, got.verdict) == ("RAW", False, "WARN")
        assert fab.check(UNBOUNDED, strict=True).verdict == "BLOCK"
    assert calls == []


async def test_every_exec_carries_its_analysis_and_runs_by_default(tmp_path: Path) -> None:
    registry, calls = recording_registry()
    async with Fabric(tmp_path, registry=registry, spares=0) as fab:
        result = await fab.exec(UNBOUNDED)
        assert result.ok and calls == ["fetch"]
        assert result.analysis.verdict == "WARN" and result.analysis.classification == "RAW"
        bounded = await fab.exec(BOUNDED)
        assert bounded.analysis.verdict == "PASS" and bounded.value == "paylo"


async def test_strict_refuses_before_anything_runs(tmp_path: Path) -> None:
    registry, calls = recording_registry()
    async with Fabric(tmp_path, registry=registry, spares=0) as fab:
        result = await fab.exec(UNBOUNDED, strict=True)
        assert not result.ok and result.error is not None
        assert (result.error.kind, result.error.type) == ("policy", "Blocked")
        assert "nothing was run" in result.text and "[:200]" in result.text
        assert "tools.fetch (line 1) -> return" in result.text
        assert calls == []
        allowed = await fab.exec(BOUNDED, strict=True)
        assert allowed.ok and calls == ["fetch"]


async def test_session_options_and_effects_rows(tmp_path: Path) -> None:
    registry, calls = recording_registry()
    rows = [{"match": "tools.fetch", "effect": "scalar"}, {"match": "tools.x", "effect": "nope"}]
    options = Options(block_unbounded_returns=True)
    async with Fabric(tmp_path, registry=registry, spares=0, analysis=options, effects=rows) as fab:
        assert len(fab.warnings) == 1 and "effects row 1" in fab.warnings[0]
        result = await fab.exec(UNBOUNDED)  # the row says tools.fetch returns a scalar
        assert result.ok and result.analysis.classification == "PROJECTED"
    async with Fabric(tmp_path, registry=registry, spares=0, analysis=options) as fab:
        blocked = await fab.exec(UNBOUNDED)
        assert not blocked.ok and blocked.error is not None and blocked.error.type == "Blocked"
    assert calls == ["fetch"]


def test_fabric_check_and_explain(tmp_path: Path) -> None:
    snippet = tmp_path / "s.py"
    snippet.write_text('t = await tools.read(path="a")\nreturn t.splitlines()[:20]\n')
    shown = cli("check", str(snippet))
    assert shown.returncode == 0 and "PASS" in shown.stdout and "SELECTED, bounded" in shown.stdout
    as_json = json.loads(cli("check", "--json", str(snippet)).stdout)
    assert {"classification", "bounded", "verdict", "sources", "diagnostics", "trail"} <= set(
        as_json
    )
    assert as_json["sources"] == [{"namespace": "tools", "name": "read", "line": 1, "column": 11}]
    as_trail = json.loads(cli("explain", "--json", str(snippet)).stdout)
    assert as_trail["trail"][0] == "tools.read (line 1)"
    explained = cli("explain", str(snippet))
    assert (
        explained.stdout.strip()
        == "tools.read (line 1) -> splitlines -> [:20] (20 items) -> return"
    )
    blocked = cli("check", "--strict", "-", stdin=UNBOUNDED)
    assert (
        blocked.returncode == 1
        and "BLOCK" in blocked.stdout
        and "unbounded-return" in blocked.stdout
    )


def test_fabric_exec_strict_flag(tmp_path: Path) -> None:
    done = cli(
        "exec",
        "--strict",
        "--workspace",
        str(tmp_path),
        "-",
        stdin='return await tools.ls(path=".")',
    )
    assert done.returncode == 1 and "Blocked" in done.stdout


async def test_exec_returns_the_diagnosis_typed(tmp_path: Path) -> None:
    """``fab.exec`` gives a FabricResult whose analysis is the analyzer's Analysis, also for
    a result made without running (an empty snippet has none)."""
    from analyzer import Analysis
    from fabric import FabricResult

    async with Fabric(tmp_path, spares=0) as fab:
        done = await fab.exec("return 1 + 1")
        empty = await fab.exec("")
    assert isinstance(done, FabricResult) and isinstance(done.analysis, Analysis)
    assert done.value == 2 and done.analysis.verdict == "PASS"
    assert isinstance(empty, FabricResult) and empty.analysis is None
