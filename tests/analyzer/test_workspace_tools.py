"""How the analyzer classifies what the workspace tools give back (rows of effects.json)."""

from __future__ import annotations

import pytest

from analyzer import analyze


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('return await tools.read_json(path="a.json")', ("RAW", False, "WARN")),
        ('d = await tools.read_json(path="a.json")\nreturn len(d)', ("PROJECTED", True, "PASS")),
        ('r = await tools.bash(command="ls")\nreturn r["stdout"]', ("RAW", False, "WARN")),
        (
            'r = await tools.bash(command="ls")\nreturn r["stdout"][:300]',
            ("SELECTED", True, "PASS"),
        ),
        ('return await tools.glob(pattern="**/*.py")', ("SELECTED", True, "PASS")),
        ('return await tools.glob(pattern="*", max_results=20)', ("SELECTED", True, "PASS")),
        ('return await tools.write(path="a", content="x")', ("PROJECTED", True, "PASS")),
        ('return await tools.edit(path="a", old="x", new="y")', ("SELECTED", True, "PASS")),
    ],
)
def test_workspace_tools(code: str, expected: tuple[str, bool, str]) -> None:
    """read_json and bash are sources; glob is bounded by max_results; write returns a status
    and edit a diff of bounded size."""
    got = analyze(code)
    assert (got.classification.value, got.bounded, got.verdict) == expected
    assert not [d for d in got.diagnostics if d.code == "estimated-oversized"]


def test_a_glob_estimate_counts_its_paths() -> None:
    """A glob's bound is its max_results, each path estimated at 60 bytes."""
    got = analyze('return await tools.glob(pattern="*", max_results=100)')
    assert got.estimate is not None and got.estimate.bytes == 6000


def test_bash_output_is_text() -> None:
    """A slice of a stream counts characters, its lines count as lines."""
    chars = analyze('r = await tools.bash(command="ls")\nreturn r["stdout"][:300]')
    assert chars.bound is not None and (chars.bound.value, chars.bound.unit) == (300, "bytes")
    lines = analyze('r = await tools.bash(command="ls")\nreturn r["stdout"].splitlines()[:20]')
    assert lines.estimate is not None and lines.estimate.bytes == 2000


def test_the_signatures_default_is_the_declared_bound() -> None:
    """glob's and grep's max_results defaults are the effects table's default bounds."""
    import inspect

    from analyzer import EffectsTable
    from fabric import ProviderRegistry
    from fabric.providers import Workspace, register_file_tools

    registry = ProviderRegistry()
    register_file_tools(registry, Workspace("."))
    for name in ("glob", "grep"):
        row = EffectsTable.default().lookup(f"tools.{name}")
        default = inspect.signature(registry.get("tools", name).func).parameters["max_results"]
        assert row is not None and row.default_bound == default.default
