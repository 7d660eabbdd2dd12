"""The snippet contract is declared once, in ``contract``: the sandbox, the analyzer, the
provider registry, the MCP description and the README agree with it."""

from __future__ import annotations

import asyncio
import builtins
import importlib
import re
from pathlib import Path

import pytest

from analyzer import KNOWLEDGE
from contract import (
    BUILTINS,
    MODULES,
    NAMESPACES,
    NEVER,
    REFUSED_BUILTINS,
    readme_block,
    readme_lists,
)
from fabric import Fabric, ProviderRegistry
from fabric.mcp import exec_description

README = Path(__file__).parents[2] / "README.md"


def probing(names: list[str], error: str) -> str:
    """A snippet returning which of ``names`` evaluate without ``error``."""
    lines = ["found = []"]
    for name in names:
        lines += [
            "try:",
            f"    {name}",
            f"    found.append({name!r})",
            f"except {error}:",
            "    pass",
        ]
    return "\n".join([*lines, "return found"])


async def test_every_module_and_name_the_contract_lists_is_in_the_sandbox(fab: Fabric) -> None:
    imports = [f"import {module}" for module in MODULES]
    names = [f"{module}.{name}" for module, vetted in MODULES.items() for name in vetted]
    result = await fab.exec("\n".join(imports) + "\n" + probing(names, "AttributeError"))
    assert result.ok, result.text
    assert result.value == names


async def test_no_other_public_name_of_an_allowed_module_is_in_the_sandbox(fab: Fabric) -> None:
    imports = [f"import {module}" for module in MODULES]
    extra = [
        f"{module}.{name}"
        for module, vetted in MODULES.items()
        for name in dir(importlib.import_module(module))
        if not name.startswith("_") and name not in vetted
    ]
    assert len(extra) > 100  # uuid.os, json.codecs, asyncio.get_event_loop ...
    result = await fab.exec("\n".join(imports) + "\n" + probing(extra, "AttributeError"))
    assert result.ok, result.text
    assert result.value == []


async def test_the_sandbox_has_every_builtin_of_the_contract(fab: Fabric) -> None:
    result = await fab.exec(probing(list(BUILTINS), "NameError"))
    assert result.ok, result.text
    assert result.value == list(BUILTINS)


OTHER_BUILTINS = sorted(
    {n for n in dir(builtins) if not n.startswith("_")} - set(BUILTINS) | {"__import__"}
)


@pytest.mark.parametrize("name", OTHER_BUILTINS)
async def test_no_other_builtin_is_in_the_sandbox(fab: Fabric, name: str) -> None:
    """Every other builtin is missing (a NameError) or refused before the snippet runs."""
    result = await fab.exec(f"{name}\nreturn 'reached'")
    assert result.error is not None, f"{name} is in the sandbox"
    refused_at_compile = result.error.kind == "policy" and name in result.error.message
    missing = result.error.type == "NameError" and repr(name) in result.error.message
    assert refused_at_compile or missing, result.text
    assert name not in BUILTINS


def test_the_refused_builtins_are_real_ones() -> None:
    assert set(REFUSED_BUILTINS) <= set(OTHER_BUILTINS)


@pytest.mark.parametrize("module", sorted(NEVER))
async def test_a_module_refused_on_purpose_says_why(fab: Fabric, module: str) -> None:
    result = await fab.exec(f"import {module}")
    assert result.error is not None and result.error.type == "ImportError"
    assert NEVER[module] in result.error.message and "allowed modules: " in result.error.message
    assert module not in MODULES


def test_the_analyzer_knows_the_contracts_modules_and_nothing_the_sandbox_refuses() -> None:
    assert KNOWLEDGE.modules == set(MODULES)
    assert KNOWLEDGE.namespaces == set(NAMESPACES)
    for dotted in KNOWLEDGE.module_functions:
        module, name = dotted.split(".")[:2]
        assert name in MODULES.get(module, ()), f"the analyzer models {dotted}, not allowed"
    assert KNOWLEDGE.builtins <= set(BUILTINS)


def test_the_registry_has_the_contracts_namespaces() -> None:
    assert tuple(ProviderRegistry().catalog()) == NAMESPACES


async def test_the_mcp_description_lists_every_allowed_module(fab: Fabric) -> None:
    description = exec_description(fab.providers, 16_384)
    imports = re.search(r"Imports: (.*?), and asyncio \((.*?)\)\.", description)
    assert imports is not None, description
    assert imports.group(1).split(", ") == [m for m in MODULES if m != "asyncio"]
    listed = imports.group(2).removesuffix(" and its errors").split(", ")
    left_out = [name for name in MODULES["asyncio"] if name not in listed]
    assert listed == [name for name in MODULES["asyncio"] if name in listed]
    assert left_out and all(issubclass(getattr(asyncio, name), BaseException) for name in left_out)
    refused = re.search(r"Not there: (.*?)\.", description)
    assert refused is not None and set(refused.group(1).split(", ")) <= set(REFUSED_BUILTINS)


def test_the_readme_lists_are_generated_from_the_contract() -> None:
    """Regenerate with ``python -m contract README.md``."""
    text = README.read_text(encoding="utf-8")
    assert readme_block(text) == readme_lists()
    namespaces = re.search(r"Provider namespaces are globals: (.*?)\. ", text, re.S)
    assert namespaces is not None
    assert tuple(re.findall(r"`(\w+)`", namespaces.group(1))) == NAMESPACES
