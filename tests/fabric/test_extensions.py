"""``extensions.*``: async functions registered by installed packages (the
``fabric.extensions`` entry-point group) or named in config.json."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from fabric import Fabric, Limits, ProviderRegistry, RegistrationError, extension

_PACKAGE = "fabric_ext_demo"
_MODULE = textwrap.dedent(
    '''
    from fabric import extension

    @extension(risk="network")
    async def shout(text: str, times: int = 1) -> str:
        """Upper-case text, repeated."""
        return text.upper() * times

    async def count_words(text: str) -> int:
        """How many words text has."""
        return len(text.split())

    def not_async(text: str) -> str:
        return text

    async def also_shout(text: str) -> str:
        return text.upper()
    '''
)
_ENTRY_POINTS = textwrap.dedent(
    f"""
    [fabric.extensions]
    shout = {_PACKAGE}:shout
    broken = fabric_ext_no_such_module:thing
    plain = {_PACKAGE}:not_async
    bad-name = {_PACKAGE}:also_shout
    """
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A tiny distribution, as pip would leave it in site-packages: its module and a
    dist-info with entry points, on sys.path."""
    root = tmp_path_factory.mktemp("site")
    (root / f"{_PACKAGE}.py").write_text(_MODULE)
    info = root / f"{_PACKAGE}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {_PACKAGE}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(_ENTRY_POINTS)
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))
    sys.modules.pop(_PACKAGE, None)


def _workspace(tmp_path: Path, config: Mapping[str, object] | None = None) -> Path:
    if config is not None:
        (tmp_path / ".fabric").mkdir(exist_ok=True)
        (tmp_path / ".fabric" / "config.json").write_text(json.dumps(config))
    return tmp_path


async def test_an_entry_point_is_callable_from_a_snippet(installed: Path, tmp_path: Path) -> None:
    """A package's entry point becomes extensions.<its name>, arguments from its signature;
    its risk class (network, denied by default) is what approvals judge it by."""
    async with Fabric(workspace=_workspace(tmp_path), limits=Limits(timeout_s=10)) as fab:
        denied = await fab.exec("return await extensions.shout('hi')")
        assert denied.error is not None and denied.error.code == "denied", denied.text
    allowed = _workspace(tmp_path, {"approvals": {"extensions.shout": "allow"}})
    async with Fabric(workspace=allowed, limits=Limits(timeout_s=10)) as fab:
        result = await fab.exec("return await extensions.shout('hi', times=2)")
        assert result.ok, result.text
        assert result.value == "HIHI"
        provider = fab.providers.get("extensions", "shout")
        assert provider.signature() == "extensions.shout(text: str, times: int = 1)"
        assert provider.risk == "network"
        assert provider.description == "Upper-case text, repeated."


async def test_bad_entry_points_are_warnings_naming_them(installed: Path, tmp_path: Path) -> None:
    """An import that fails, a function that is not async and a bad name are each a settings
    warning that names the entry; the good one still loads."""
    async with Fabric(workspace=_workspace(tmp_path)) as fab:
        warnings = [w for w in fab.warnings if w.startswith("extension ")]
        assert len(warnings) == 3, warnings
        bad_name, broken, plain = sorted(warnings, key=lambda w: w.split("'")[1])
        assert "'bad-name = fabric_ext_demo:also_shout'" in bad_name
        assert "bad provider name 'bad-name'" in bad_name
        assert "'broken = fabric_ext_no_such_module:thing'" in broken
        assert "ModuleNotFoundError" in broken
        assert "'plain = fabric_ext_demo:not_async'" in plain
        assert "not an async function" in plain
        assert fab.providers.catalog()["extensions"] == ["shout"]
        assert "settings warnings" in (await fab.ctx.status(detail="full")).text


async def test_config_entries_load_and_duplicates_warn(installed: Path, tmp_path: Path) -> None:
    """config.json's "extensions" adds functions under their own names; a name already taken,
    a malformed entry and a missing attribute are warnings, not crashes."""
    config = {
        "extensions": [
            f"{_PACKAGE}:count_words",
            f"{_PACKAGE}:shout",
            "no colon here",
            f"{_PACKAGE}:missing",
        ],
        "approvals": {"extensions.count_words": "allow"},  # undeclared risk: asked by default
    }
    async with Fabric(workspace=_workspace(tmp_path, config)) as fab:
        result = await fab.exec("return await extensions.count_words(text='a b c')")
        assert result.ok and result.value == 3, result.text
        assert provider_risk(fab, "count_words") is None  # undeclared
        warnings = [w for w in fab.warnings if w.startswith("extension config.json")]
        assert len(warnings) == 3, warnings
        assert "extensions[1]" in warnings[0] and "already registered" in warnings[0]
        assert "extensions[2]" in warnings[1] and '"package.module:function"' in warnings[1]
        assert "extensions[3]" in warnings[2] and "AttributeError" in warnings[2]


def provider_risk(fab: Fabric, name: str) -> str | None:
    return fab.providers.get("extensions", name).risk


async def test_a_users_registry_is_not_touched(installed: Path, tmp_path: Path) -> None:
    """Extensions go into the session's own layer, never into the registry it was given."""
    shared = ProviderRegistry()
    async with Fabric(workspace=_workspace(tmp_path), registry=shared) as fab:
        assert "shout" in fab.providers.catalog()["extensions"]
    assert shared.catalog()["extensions"] == []


def test_extension_refuses_an_unknown_risk() -> None:
    """The risk class is one of the five, checked where it is declared."""
    with pytest.raises(RegistrationError, match="risk must be one of read, write"):
        extension(risk="dangerous")  # type: ignore[arg-type]
