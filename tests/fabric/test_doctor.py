"""The isolation mode as a Fabric session sees it: status, config, warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabric import ConfigError, Fabric


async def test_status_shows_the_mode_and_the_active_layers(tmp_path: Path) -> None:
    """ctx_status names the isolation mode and the active layers; detail=full adds what each
    layer does."""
    async with Fabric(workspace=tmp_path) as fab:
        compact = fab.status()
        assert compact["isolation"]["mode"] == "full"
        assert "seccomp" in compact["isolation"]["active"]
        full = fab.status(detail="full")
        assert any(layer["name"] == "landlock" for layer in full["isolation"]["layers"])


async def test_minimal_isolation_from_the_config_file_warns_on_results(tmp_path: Path) -> None:
    """`"isolation": "minimal"` in config.json applies, and every result carries the warning."""
    (tmp_path / ".fabric").mkdir()
    (tmp_path / ".fabric" / "config.json").write_text(json.dumps({"isolation": "minimal"}))
    async with Fabric(workspace=tmp_path) as fab:
        result = await fab.exec("return 3")
        assert result.ok and result.value == 3
        assert any("minimal" in w for w in result.warnings)
        assert fab.status()["isolation"]["mode"] == "minimal"


async def test_the_doctor_of_a_session_probes_its_own_store(tmp_path: Path) -> None:
    """Fabric.doctor puts a blob in the store and the worker cannot read it."""
    async with Fabric(workspace=tmp_path) as fab:
        report = await fab.doctor()
    store = next(p for p in report.probes if p.name == "read_store")
    assert report.ok and store.denied, report.probes


def test_an_unknown_isolation_is_a_config_error(tmp_path: Path) -> None:
    """Fabric(isolation=...) names the accepted values."""
    with pytest.raises(ConfigError, match="full, minimal"):
        Fabric(workspace=tmp_path, isolation="none")  # type: ignore[arg-type]


def test_the_isolation_modes_are_declared_once() -> None:
    """The worker's modes, the runtime's type, the config field and the CLI all agree."""
    import argparse
    import typing

    from fabric._cli import _parser
    from fabric._config import FabricConfig
    from runtime import ISOLATIONS
    from runtime.worker import ISOLATION_MODES

    assert tuple(ISOLATION_MODES) == ISOLATIONS
    assert typing.get_args(FabricConfig.model_fields["isolation"].annotation) == ISOLATIONS
    commands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    doctor = commands.choices["doctor"]
    flag = next(a for a in doctor._actions if "--isolation" in a.option_strings)
    assert tuple(flag.choices or ()) == ISOLATIONS
