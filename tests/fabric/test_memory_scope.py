"""``memoryScope`` in config.json and ``Fabric(memory_scope=...)``: a good scope applies, a
malformed one fails closed (no page at all) and says which field is wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabric import ConfigError, Fabric
from store import ContextBank, ContextWindow

BAD = {
    "principal": ({"principal": " ", "rights": {}}, "memoryScope.principal"),
    "mode": ({"principal": "a", "mode": "OPEN", "rights": {}}, "memoryScope.mode"),
    "rights": ({"principal": "a", "rights": {"read": [{"page": "x"}]}}, "memoryScope.rights"),
    "unknown right": ({"principal": "a", "rights": {"admin": []}}, "memoryScope.rights"),
    "field": ({"principal": "a", "rights": {}, "role": "x"}, "memoryScope.role"),
    "shape": (["agent-1"], "memoryScope must be an object"),
}


def config(root: Path, value: Any) -> None:
    (root / ".fabric").mkdir(exist_ok=True)
    (root / ".fabric" / "config.json").write_text(json.dumps({"memoryScope": value}))


async def denied(fab: Fabric, key: str) -> str | None:
    done = await fab.exec(
        f"try:\n    await memory.get({key!r})\nexcept ToolError as e:\n    return e.code"
    )
    assert done.ok, done.text
    return done.value  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", sorted(BAD))
async def test_a_malformed_scope_fails_closed_and_says_so(tmp_path: Path, case: str) -> None:
    """Without any scope the unenrolled page would be shared; a bad ``memoryScope`` denies it
    instead, with a warning naming the field and what follows from it."""
    ContextBank(tmp_path).emplace("loose", ContextWindow.of(["free"]))
    value, field = BAD[case]
    config(tmp_path, value)
    async with Fabric(tmp_path, spares=0) as fab:
        assert any(field in w and "denied every page" in w for w in fab.warnings), fab.warnings
        assert await denied(fab, "loose") == "METADATA_UNAVAILABLE"


async def test_no_scope_is_legacy_shared_behaviour(tmp_path: Path) -> None:
    ContextBank(tmp_path).emplace("loose", ContextWindow.of(["free"]))
    async with Fabric(tmp_path, spares=0) as fab:
        assert fab.config.memory_scope is None
        assert await denied(fab, "loose") is None


async def test_the_config_scope_follows_the_file(tmp_path: Path) -> None:
    ContextBank(tmp_path).emplace("loose", ContextWindow.of(["free"]))
    config(tmp_path, {"principal": "a", "mode": "LEGACY_COMPATIBLE", "rights": {}})
    async with Fabric(tmp_path, spares=0) as fab:
        assert await denied(fab, "loose") is None
        config(tmp_path, {"principal": "a", "mode": "REQUIRE_ENROLLMENT", "rights": {}})
        assert await denied(fab, "loose") == "METADATA_UNAVAILABLE"


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_malformed_api_scope_is_refused(tmp_path: Path, case: str) -> None:
    value, field = BAD[case]
    with pytest.raises(ConfigError) as refused:
        Fabric(tmp_path, spares=0, memory_scope=value)
    assert field.replace("memoryScope", "memory_scope") in str(refused.value)
