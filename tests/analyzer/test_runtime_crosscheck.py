"""Runtime cross-check: generated snippets run against a provider that returns a large
payload; whenever the analyzer says the return is bounded, the real return respects the bound."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric import Fabric, Limits, ProviderRegistry

BIG_TEXT = "\n".join(f"line {i} " + "x" * (i % 40) for i in range(20_000))
ROWS = [{"id": i, "ok": i % 2 == 0, "title": f"t{i}", "body": "b" * 50} for i in range(3000)]

SOURCES = ["await tools.big()", "await tools.rows()"]
STEPS = [
    "{w} = {v}",
    "{w} = [{v}][0]",
    '{w} = {{"k": {v}}}["k"]',
    "{w}, p{n} = {v}, 0",
    "def ident{n}(x):\n    return x\n{w} = ident{n}({v})",
    "async def aident{n}(x):\n    return x\n{w}, = await asyncio.gather(aident{n}({v}))",
    "if len({v}) > 3:\n    {w} = {v}\nelse:\n    {w} = {v}",
    "try:\n    {w} = {v}\nfinally:\n    p{n} = 1",
    "{w} = list({v})",
    "{w} = [x for x in {v}]",
    "{w} = {v}[:100]",
    "{w} = {v}[-7:]",
    "{w} = sorted({v}, key=lambda x: str(x))",
]
ENDINGS = [
    "return {v}",
    "return {v}[:10]",
    "return len({v})",
    "return {v}[-5:]",
    'return {{"n": len({v}), "ok": True}}',
    "return [str(x) for x in {v}][:3]",
    "return json.dumps({v}[:4])",
    "return bool({v})",
]


@pytest.fixture(scope="module")
async def fab(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fabric]:
    registry = ProviderRegistry()

    async def big() -> str:
        return BIG_TEXT

    async def rows() -> list[dict[str, Any]]:
        return ROWS

    registry.register("tools", "big", big, risk="read")
    registry.register("tools", "rows", rows, risk="read")
    workspace: Path = tmp_path_factory.mktemp("crosscheck")
    async with Fabric(workspace, registry=registry, limits=Limits(timeout_s=20)) as session:
        yield session


def measure(value: Any, unit: str) -> int | None:
    if unit == "items":
        return len(value) if isinstance(value, list | str | dict) else 1
    if unit == "bytes":
        return len(json.dumps(value).encode())
    return None


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    source=st.sampled_from(SOURCES),
    steps=st.lists(st.integers(0, len(STEPS) - 1), max_size=4),
    ending=st.sampled_from(ENDINGS),
)
async def test_bounded_verdicts_hold_at_run_time(
    fab: Fabric, source: str, steps: list[int], ending: str
) -> None:
    lines = ["import json, asyncio", f"v0 = {source}"]
    current = "v0"
    for n, index in enumerate(steps, 1):
        lines.append(STEPS[index].format(v=current, w=f"v{n}", n=n))
        current = f"v{n}"
    lines.append(ending.format(v=current))
    code = "\n".join(lines)
    result = await fab.exec(code, policy="inline")
    assert result.ok, f"{code}\n{result.text}"
    analysis = result.analysis
    if analysis.bounded and analysis.bound is not None:
        actual = measure(result.value, analysis.bound.unit)
        if actual is not None:
            assert actual <= analysis.bound.value, f"{code}\n{analysis.explain()} but got {actual}"
    if not analysis.bounded:
        assert analysis.classification.value != "NONE"
