"""`.fabric/config.json`: every key, clamps, bad values, broken JSON, unknown and deprecated
keys, reload on change, and how the settings reach the session."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from fabric import Fabric
from fabric._config import (
    DEPRECATED,
    SETTINGS,
    ConfigFile,
    FabricConfig,
    QuantitativePolicy,
    capped,
    parse,
)

DEFAULTS: dict[str, Any] = {
    "enabled": True,
    "strict": False,
    "blockUnboundedReturns": False,
    "maxReturnTokens": 4000,
    "readOffloadThreshold": 16384,
    "resultPolicy": "auto",
    "resultFormat": "auto",
    "errorCompactionThreshold": 4096,
    "errorCompactionPreviewBytes": 4096,
    "offloadPreviewBytes": 2048,
    "runtimeAdvisoryThreshold": 0,
    "compactEditResults": True,
    "notifyOnStart": False,
    "storeMaxBytes": 500_000_000,
    "storeTtlMs": 604_800_000,
    "quantitativePolicy": {"maxBytes": 8192, "maxTokens": 4000, "maxCharacters": 8192},
    "isolation": "full",
    "bashSandbox": True,
    "timeoutS": 30.0,
    "memoryMb": 512,
    "outputBytes": 65536,
    "maxResultBytes": 32 * 1024 * 1024,
    "maxCalls": 2000,
    "maxConcurrentCalls": 64,
    "redactSecrets": True,
    "effects": [],
    "model": None,
    "approvals": {},
    "approvalTimeoutS": 60.0,
    "extensions": [],
    "stateMaxBytes": 1024 * 1024,
    "persistVariables": False,
    "persistVariablesMaxBytes": 1024 * 1024,
    "mcpServers": {},
    "memoryScope": None,
}

MCP_SERVER_DEFAULTS: dict[str, Any] = {
    "args": [],
    "env": {},
    "cwd": None,
    "url": None,
    "headers": {},
    "type": None,
    "risk": None,
    "timeoutS": 60.0,
    "startTimeoutS": 30.0,
    "disabled": False,
}

# key -> (a valid override, an out-of-range value and what it clamps to, a wrong-typed value)
CASES: dict[str, tuple[Any, tuple[Any, Any] | None, Any]] = {
    "enabled": (False, None, "maybe"),
    "strict": (True, None, "yes"),
    "blockUnboundedReturns": (True, None, [1]),
    "maxReturnTokens": (1000, (0, 1), "many"),
    "readOffloadThreshold": (8192, (100, 256), "big"),
    "resultPolicy": ("offload", None, "sometimes"),
    "resultFormat": ("yaml", None, "xml"),
    "errorCompactionThreshold": (2048, (10, 256), {}),  # reference: min 256
    "errorCompactionPreviewBytes": (1024, (99_999, 64_000), None),  # reference: max 64,000
    "offloadPreviewBytes": (512, (10_000, 4096), "x"),
    "runtimeAdvisoryThreshold": (1000, (-5, 0), "x"),
    "compactEditResults": (False, None, "no"),
    "notifyOnStart": (True, None, 3.5),
    "storeMaxBytes": (100_000_000, (900_000_000, 500_000_000), "x"),
    "storeTtlMs": (3_600_000, (5, 60_000), "x"),
    "quantitativePolicy": ({"maxBytes": 4096}, None, {"maxBytes": -1}),
    "isolation": ("minimal", None, "none"),
    "bashSandbox": (False, None, "off"),
    "timeoutS": (5.0, (100_000, 3600), "x"),
    "memoryMb": (256, (1, 16), "x"),
    "outputBytes": (1024, (-1, 0), "x"),
    "maxResultBytes": (1_000_000, (10, 1024), "x"),
    "maxCalls": (100, (2_000_000, 1_000_000), 1.5),
    "maxConcurrentCalls": (8, (0, 1), "8"),
    "redactSecrets": (False, None, "no"),
    "effects": ([{"match": "tools.x", "effect": "scalar"}], None, "rows"),
    "model": ({"baseUrl": "http://127.0.0.1:9/v1", "model": "m"}, None, {"model": "m"}),
    "approvals": ({"execute": "allow", "mcp.git.*": "ask"}, None, "ask"),
    "approvalTimeoutS": (10.0, (0, 1), "x"),
    "extensions": (["pkg.module:function"], None, "pkg.module:function"),
    "stateMaxBytes": (4096, (10, 1024), "x"),
    "persistVariables": (True, None, "yes"),
    "persistVariablesMaxBytes": (4096, (10**9, 64 * 1024 * 1024), "x"),
    "mcpServers": ({"git": {"command": "uvx", **MCP_SERVER_DEFAULTS}}, None, "servers"),
    "memoryScope": (
        {"principal": "agent-1", "mode": "REQUIRE_ENROLLMENT", "rights": {"read": []}},
        None,
        "agent-1",
    ),
}


def test_every_key_has_its_reference_default() -> None:
    assert FabricConfig().flat() == DEFAULTS
    assert set(CASES) == set(DEFAULTS) == set(SETTINGS)


FAILS_CLOSED = {"memoryScope"}
"""Settings whose bad value is not the default but a refusal (tests/fabric/test_memory_scope.py)."""


@pytest.mark.parametrize("key", sorted(set(CASES) - FAILS_CLOSED))
def test_each_key_overrides_clamps_and_rejects_bad_types(key: str) -> None:
    valid, clamp, wrong = CASES[key]
    loaded = parse({key: valid})
    assert loaded.warnings == () and loaded.sources[key] == "file"
    assert loaded.config.flat()[key] == (
        {**(DEFAULTS[key] if DEFAULTS[key] is not None else {"apiKeyEnv": None}), **valid}
        if isinstance(valid, dict)
        else valid
    )
    if clamp is not None:
        given, expected = clamp
        clamped = parse({key: given})
        assert clamped.config.flat()[key] == expected
        assert clamped.sources[key] == "clamped" and "outside" in clamped.warnings[0]
    bad = parse({key: wrong})
    assert bad.config.flat()[key] == DEFAULTS[key]
    assert len(bad.warnings) == 1 and "using the default" in bad.warnings[0]


def test_snake_case_and_the_policy_alias() -> None:
    loaded = parse({"read_offload_threshold": 9000, "policy": {"maxTokens": 100}})
    assert loaded.config.boundary.read_offload_threshold == 9000
    assert loaded.config.quantitative_policy.max_tokens == 100 and loaded.warnings == ()


def test_one_setting_given_under_two_spellings_is_warned_and_the_last_applies() -> None:
    loaded = parse({"policy": {"maxBytes": 100}, "quantitativePolicy": {"maxBytes": 200}})
    assert loaded.config.quantitative_policy.max_bytes == 200
    assert loaded.warnings == (
        "config.json: policy and quantitativePolicy are one setting (quantitativePolicy): "
        "give it once; the last one given applies",
    )
    worse = parse({"policy": {"maxBytes": 100}, "quantitativePolicy": 5})
    assert worse.config.quantitative_policy.max_bytes == 8192  # the last, invalid: the default
    assert worse.sources["quantitativePolicy"] == "default"


@pytest.mark.parametrize(
    ("raw", "kept", "said"),
    [
        (
            {"maxBytes": "x", "maxTokens": 30},
            (8192, 30),
            "quantitativePolicy.maxBytes must be a whole number, not 'x'; ignored, the rest "
            "of quantitativePolicy applies",
        ),
        (
            {"maxBytes": 100, "maxTokenz": 3},
            (100, 4000),
            "quantitativePolicy.maxTokenz is not a parameter here; ignored, the rest of "
            "quantitativePolicy applies",
        ),
        (5, (8192, 4000), "quantitativePolicy must be an object, not 5; using the default"),
    ],
)
def test_a_bad_entry_of_an_object_setting_drops_only_that_entry(
    raw: Any, kept: tuple[int, int], said: str
) -> None:
    loaded = parse({"quantitativePolicy": raw})
    policy = loaded.config.quantitative_policy
    assert (policy.max_bytes, policy.max_tokens) == kept
    assert loaded.warnings == (f"config.json: {said}",)


def test_an_object_setting_missing_what_it_requires_falls_back_whole() -> None:
    loaded = parse({"model": {"baseUrl": 3}})
    assert loaded.config.model is None
    assert loaded.warnings[0].endswith("model.model is required; using the default")


def test_unknown_and_deprecated_keys_are_warned() -> None:
    loaded = parse({"bogus": 1, **dict.fromkeys(DEPRECATED, 5)})
    assert loaded.config == FabricConfig()
    assert sum("unknown key 'bogus'" in w for w in loaded.warnings) == 1
    assert sum("deprecated" in w for w in loaded.warnings) == len(DEPRECATED)


def write(root: Path, content: str) -> Path:
    path = root / ".fabric" / "config.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(content)
    return path


def test_broken_json_loads_defaults_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path, '{"strict": true,,}')
    loaded = ConfigFile(tmp_path).current()
    assert loaded.config == FabricConfig() and "not valid JSON" in loaded.warnings[0]
    write(tmp_path, "[1, 2]")
    path = tmp_path / ".fabric" / "config.json"
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert "must be an object" in ConfigFile(tmp_path).current().warnings[0]


def test_the_file_is_reread_when_it_changes(tmp_path: Path) -> None:
    path = write(tmp_path, '{"maxReturnTokens": 100}')
    config_file = ConfigFile(tmp_path)
    assert config_file.current().config.analysis.max_return_tokens == 100
    path.write_text('{"maxReturnTokens": 200, "strict": true}')
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert config_file.changed()
    assert config_file.current().config.analysis.max_return_tokens == 200
    path.unlink()
    assert config_file.current().config == FabricConfig()


async def test_settings_reach_the_session_and_reload(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps({"readOffloadThreshold": 300, "timeoutS": 7, "bogus": 1}))
    async with Fabric(tmp_path, spares=0) as fab:
        assert fab.boundary.config.read_offload_threshold == 300 and fab.limits.timeout_s == 7
        assert any("bogus" in w for w in fab.warnings)
        big = await fab.exec('return "x" * 1000')
        assert big.policy_applied == "offload"
        path.write_text(json.dumps({"enabled": False}))
        os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
        refused = await fab.exec("return 1")
        assert not refused.ok and refused.error is not None and refused.error.type == "Disabled"
        assert fab.warnings == []


async def test_strict_from_the_file_blocks(tmp_path: Path) -> None:
    write(tmp_path, json.dumps({"strict": True}))
    async with Fabric(tmp_path, spares=0) as fab:
        result = await fab.exec('return await tools.ls(path=".")')
        assert not result.ok and result.error is not None and result.error.type == "Blocked"


async def test_a_policys_max_bytes_is_the_threshold_when_none_is_set(tmp_path: Path) -> None:
    """The reference: ``readOffloadThreshold ?? policy.maxBytes ?? 16384``, within 256 to
    1,000,000,000; the policy's maxTokens likewise stands in for maxReturnTokens."""
    write(tmp_path, json.dumps({"quantitativePolicy": {"maxBytes": 500, "maxTokens": 900}}))
    async with Fabric(tmp_path, spares=0) as fab:
        assert fab.boundary.config.read_offload_threshold == 500
        assert fab.sources["readOffloadThreshold"] == "policy"
        assert fab.settings.analysis.max_return_tokens == 900
        assert (await fab.exec('return "y" * 600')).policy_applied == "offload"


def test_the_policys_defaults_leave_the_threshold_alone() -> None:
    """Unset, the policy has the reference's budgets (8192 bytes, 4000 tokens, 8192
    characters) and the threshold its own default, 16384."""
    loaded = capped(parse({}))
    assert loaded.config.quantitative_policy == QuantitativePolicy(
        max_bytes=8192, max_tokens=4000, max_characters=8192
    )
    assert loaded.config.boundary.read_offload_threshold == 16_384
    assert loaded.sources["readOffloadThreshold"] == "default"


def test_a_policy_of_zeros_from_an_older_config_is_ignored_with_a_warning() -> None:
    """Fabric's older default block said 0 for no cap; loaded now, it would set a 256-byte
    threshold and a 1-token return budget without a word."""
    loaded = capped(parse({"quantitativePolicy": {"maxBytes": 0, "maxTokens": 0}}))
    assert loaded.config.boundary.read_offload_threshold == 16_384
    assert loaded.config.analysis.max_return_tokens == 4000
    assert sum("no longer means no cap" in w for w in loaded.warnings) == 2


@pytest.mark.parametrize("low", [1, 100])
def test_a_policy_below_the_thresholds_floor_is_raised_to_it(low: int) -> None:
    loaded = capped(parse({"policy": {"maxBytes": low}}))
    assert loaded.config.boundary.read_offload_threshold == 256


def test_a_policy_budget_above_a_billion_is_refused() -> None:
    """The reference's MAX_CONTEXT_BOUNDARY_BUDGET is 1,000,000,000; 2e9 used to load."""
    loaded = parse({"quantitativePolicy": {"maxBytes": 2_000_000_000}})
    assert loaded.config.quantitative_policy.max_bytes == 8192
    assert loaded.warnings == (
        "config.json: quantitativePolicy.maxBytes must be at most 1000000000, not 2000000000; "
        "using the default",
    )


async def test_notify_on_start_logs_the_effective_settings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(tmp_path, json.dumps({"notifyOnStart": True, "readOffloadThreshold": 5000}))
    with caplog.at_level("WARNING", logger="fabric"):
        async with Fabric(tmp_path, spares=0):
            pass
    assert any("offload above 5000 bytes" in r.getMessage() for r in caplog.records)


def test_each_setting_is_declared_once_by_the_model_that_uses_it() -> None:
    """The file's keys are generated from the part models' fields; their bounds are the
    models' own, so clamping to them yields a value the model accepts."""
    for key, setting in SETTINGS.items():
        low, high = setting.bounds()
        for edge in (low, high):
            if edge is not None:
                value = (
                    int(edge)
                    if setting.model.model_fields[setting.name].annotation is int
                    else edge
                )
                setting.model.model_validate({setting.name: value})
        assert key in DEFAULTS


async def test_arguments_override_only_what_they_set(tmp_path: Path) -> None:
    """``Limits()`` sets nothing, so the file's values stay; ``Limits(timeout_s=5)`` sets the
    timeout alone, and the file's memory limit still applies."""
    from fabric import Limits

    write(tmp_path, json.dumps({"timeoutS": 2, "memoryMb": 256, "maxCalls": 7}))
    async with Fabric(tmp_path, limits=Limits(), spares=0) as fab:
        assert (fab.limits.timeout_s, fab.limits.memory_mb, fab.limits.max_calls) == (2, 256, 7)
        assert fab.sources["timeoutS"] == "file"
    async with Fabric(tmp_path, limits=Limits(timeout_s=5), spares=0) as fab:
        assert (fab.limits.timeout_s, fab.limits.memory_mb) == (5, 256)
        assert fab.sources["timeoutS"] == "argument" and fab.sources["memoryMb"] == "file"


async def test_the_files_time_limit_applies_to_a_run(tmp_path: Path) -> None:
    write(tmp_path, json.dumps({"timeoutS": 1}))
    async with Fabric(tmp_path, spares=0) as fab:
        result = await fab.exec("import asyncio\nawait asyncio.sleep(2.5)\nreturn 1")
    assert result.error is not None and result.error.kind == "timeout"


def test_the_readme_shows_every_setting_with_its_default() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### `.fabric/config.json`") :]
    block = section[section.index("```json") + len("```json") : section.index("```\n", 10)]
    assert json.loads(block) == FabricConfig().flat()


async def test_the_files_threshold_wins_over_the_policy_and_arguments_over_both(
    tmp_path: Path,
) -> None:
    """The threshold the file sets wins over the policy's maxBytes (the reference's
    precedence; the policy used to win); an argument that sets other boundary fields leaves
    the file's threshold in force, and one that sets the threshold wins over both."""
    from runtime.boundary import BoundaryConfig

    write(
        tmp_path,
        json.dumps({"readOffloadThreshold": 1000, "quantitativePolicy": {"maxBytes": 600}}),
    )
    async with Fabric(tmp_path, boundary=BoundaryConfig(result_policy="offload"), spares=0) as fab:
        assert fab.boundary.config.read_offload_threshold == 1000
        assert fab.boundary.config.result_policy == "offload"
        assert fab.sources["readOffloadThreshold"] == "file"
        assert fab.status(detail="full")["settings"]["readOffloadThreshold"] == 1000
    chosen = BoundaryConfig(read_offload_threshold=5000)
    async with Fabric(tmp_path, boundary=chosen, spares=0) as fab:
        assert fab.boundary.config.read_offload_threshold == 5000


@pytest.mark.parametrize(
    ("raw", "warning"),
    [
        ({"timeoutS": "x"}, "timeoutS must be a number, not 'x'; using the default"),
        ({"memoryMb": 1.5}, "memoryMb must be a whole number, not 1.5; using the default"),
        (
            {"quantitativePolicy": {"maxBytes": -1}},
            "quantitativePolicy.maxBytes must be at least 0, not -1; using the default",
        ),
        ({"timeoutS": float("nan")}, "timeoutS must be at most 3600.0, not nan; using the default"),
    ],
)
def test_a_bad_value_is_warned_in_the_files_own_terms(raw: dict[str, Any], warning: str) -> None:
    """The warning names the key as the file spells it, what it takes and what it got."""
    assert parse(raw).warnings == (f"config.json: {warning}",)
