"""``state.*``: JSON values a session keeps between executions, capped by stateMaxBytes, shown
in ctx_status, offered in snippets and Python only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric import Fabric, Limits, ProviderCallError
from fabric._cli_ops import commands
from fabric._operations import OPERATIONS
from fabric._state import SessionState
from fabric.mcp._tools import operation_tools

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


async def test_values_survive_between_executions(tmp_path: Path) -> None:
    """What one snippet sets, the next reads; keys, delete and default work as in a dict."""
    async with Fabric(workspace=tmp_path, limits=Limits(timeout_s=10)) as fab:
        first = await fab.exec(
            "await state.set('seen', ['a.py'])\nawait state.set('n', 1)\nreturn await state.keys()"
        )
        assert first.ok and first.value == ["n", "seen"], first.text
        second = await fab.exec(
            "seen = await state.get('seen')\n"
            "gone = await state.delete('n')\n"
            "return seen, gone, await state.get('n', default=0), await state.delete('n')"
        )
        assert second.ok and second.value == [["a.py"], True, 0, False], second.text
        assert (await fab.state.get("seen")).data == ["a.py"]


async def test_state_is_per_session(tmp_path: Path) -> None:
    """Two sessions over one workspace each have their own state, gone with the session."""
    async with Fabric(workspace=tmp_path) as one, Fabric(workspace=tmp_path) as two:
        await one.state.set("k", {"v": 1})
        assert (await two.state.get("k")).data is None
    async with Fabric(workspace=tmp_path) as again:
        assert (await again.state.keys()).data == []


async def test_a_set_over_the_cap_fails_naming_the_setting(tmp_path: Path) -> None:
    """Above stateMaxBytes a set fails with ToolError naming it; the state keeps what it had;
    ctx_status reports the size and the cap."""
    (tmp_path / ".fabric").mkdir()
    (tmp_path / ".fabric" / "config.json").write_text(json.dumps({"stateMaxBytes": 2048}))
    async with Fabric(workspace=tmp_path, limits=Limits(timeout_s=10)) as fab:
        result = await fab.exec(
            "await state.set('small', 'x' * 100)\n"
            "try:\n"
            "    await state.set('big', 'x' * 5000)\n"
            "except ToolError as e:\n"
            "    return e.code, e.message, await state.keys()"
        )
        assert result.ok, result.text
        code, message, keys = result.value
        assert code == "too_large" and keys == ["small"]
        assert "stateMaxBytes (2,048)" in message and ".fabric/config.json" in message
        status = (await fab.ctx.status()).data["state"]
        assert status == {"keys": 1, "bytes": len("small") + 102, "max_bytes": 2048}
        assert "state: 1 keys, 107 of 2048 bytes" in (await fab.ctx.status()).text


async def test_a_value_that_is_not_json_is_refused(tmp_path: Path) -> None:
    """bytes and NaN are not JSON: the error says what to keep instead."""
    async with Fabric(workspace=tmp_path) as fab:
        with pytest.raises(ProviderCallError, match="not JSON") as info:
            await fab.state.set("k", b"raw")
        assert info.value.code == "bad_arguments"
        with pytest.raises(ProviderCallError, match="not JSON"):
            await fab.state.set("k", float("nan"))
        with pytest.raises(ProviderCallError, match="key must be 1 to 256 characters"):
            await fab.state.set("", 1)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.none() | JSON), max_size=30))
def test_the_size_is_what_the_values_take(steps: list[tuple[str, object]]) -> None:
    """Against a dict as oracle: values round-trip as JSON, and the size is always the JSON
    of what is kept (None in the steps stands for a delete)."""
    state = SessionState(lambda: 10**9)
    oracle: dict[str, object] = {}
    for key, value in steps:
        if value is None:
            assert state.delete(key) == (key in oracle)
            oracle.pop(key, None)
        else:
            state.set(key, value)
            oracle[key] = json.loads(json.dumps(value))
    assert state.keys() == sorted(oracle)
    assert {k: state.get(k) for k in oracle} == oracle
    expected = sum(len(k) + len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode())
                   for k, v in oracle.items())  # fmt: skip
    assert state.bytes == expected


async def test_state_is_no_command_and_no_mcp_tool(tmp_path: Path) -> None:
    """A command has no session and a client can run a snippet: state.* is offered in
    snippets and Python only, and the table says so."""
    state_ops = [op for op in OPERATIONS.values() if op.namespace == "state"]
    assert {op.name for op in state_ops} == {"get", "set", "delete", "keys"}
    assert not any(op.command in commands() for op in state_ops)
    async with Fabric(workspace=tmp_path) as fab:
        names = {tool.name for tool in operation_tools(fab)}
        assert "ctx_read" in names and not any(n.startswith("state_") for n in names)
        assert fab.providers.catalog()["state"] == ["delete", "get", "keys", "set"]
        assert sorted(dir(fab.state)) == ["delete", "get", "keys", "set"]
