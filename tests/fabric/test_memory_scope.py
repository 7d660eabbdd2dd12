"""``memoryScope`` in config.json and ``Fabric(memory_scope=...)``: a good scope applies, a
malformed one fails closed (no page at all) and says which field is wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import ConfigError, Fabric
from fabric._config import parse
from store import ContextBank, ContextWindow, Operation

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


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_SELECTOR = st.fixed_dictionaries({}, optional={"resource": _JSON, "boundary": _JSON}) | _JSON
_SCOPES = (
    st.fixed_dictionaries(
        {},
        optional={
            "principal": st.sampled_from(["agent-1", "", " "]) | _JSON,
            "mode": st.sampled_from(["LEGACY_COMPATIBLE", "REQUIRE_ENROLLMENT", "open"]) | _JSON,
            "rights": st.dictionaries(
                st.sampled_from(["read", "write", "create", "delete", "enumerate", "x"]),
                st.lists(_SELECTOR, max_size=3) | _JSON,
            )
            | _JSON,
            "extra": _JSON,
        },
    )
    | _JSON
)


@settings(max_examples=300, deadline=None)
@given(raw=_SCOPES)
def test_any_memory_scope_applies_or_fails_closed(raw: Any) -> None:
    """Whatever the file holds, the session gets a scope: the one written, or one that grants
    nothing with a warning naming memoryScope; never no scope at all."""
    loaded = parse({"memoryScope": raw})
    chosen = loaded.config.memory_scope
    assert chosen is not None
    scope = chosen.scope()
    if loaded.warnings:
        assert all("memoryScope" in w and "denied every page" in w for w in loaded.warnings)
        assert scope.mode.value == "REQUIRE_ENROLLMENT"
        assert all(not scope.rights.selectors(op) for op in Operation)
    else:
        assert scope.principal.id == raw["principal"]
