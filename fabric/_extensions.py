"""``extensions.*``: async functions that Python packages (or the workspace's config) add.

A package registers one in the ``fabric.extensions`` entry-point group::

    [project.entry-points."fabric.extensions"]
    weather = "my_pkg.tools:weather"

and a workspace names more in config.json: ``"extensions": ["my_pkg.tools:forecast"]`` (served
under the function's own name). Either way the function must be ``async``; its arguments are
described by its signature, as for any provider, and its risk class is what
:func:`extension` declared (else none: approvals then apply their default for undeclared
providers). A registration that cannot be made (an import that fails, a function that is not
async, a bad or duplicate name) is a settings warning naming the entry; the others load.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from fabric._errors import RegistrationError
from fabric.providers import RISKS, ProviderFunc, ProviderRegistry, Risk

GROUP = "fabric.extensions"
"""The entry-point group packages register extensions in."""
RISK_ATTRIBUTE = "__fabric_risk__"
"""Where :func:`extension` keeps an extension's declared risk class."""


def extension(*, risk: Risk) -> Callable[[ProviderFunc], ProviderFunc]:
    """Declare the risk class (``read``, ``write``, ``execute``, ``network``, ``agent``) of an
    extension function, which approvals are set by::

        @extension(risk="network")
        async def weather(city: str) -> dict: ...
    """
    if risk not in RISKS:
        raise RegistrationError(f"risk must be one of {', '.join(RISKS)}, not {risk!r}")

    def declare(func: ProviderFunc) -> ProviderFunc:
        setattr(func, RISK_ATTRIBUTE, risk)
        return func

    return declare


@dataclass(frozen=True)
class Entry:
    """One registration to make: where it was declared, the name it gets, what it loads."""

    source: str
    """``entry point 'weather = my_pkg.tools:weather'`` or ``config.json extensions[0]``:
    what a warning names."""
    name: str
    target: str
    """``module:attribute``."""


@functools.lru_cache(maxsize=4)
def _installed(path: tuple[str, ...]) -> tuple[Entry, ...]:
    """The group's entry points as the distributions on ``path`` declare them (looked up once
    per ``sys.path``: reading every distribution's metadata takes a while)."""
    return tuple(
        Entry(f"entry point '{ep.name} = {ep.value}'", ep.name, ep.value)
        for ep in sorted(metadata.entry_points(group=GROUP), key=lambda ep: ep.name)
    )


def entries(configured: Iterable[str]) -> list[Entry]:
    """The entry points of the group, then the config's entries, in that order."""
    found = list(_installed(tuple(sys.path)))
    for index, target in enumerate(configured):
        attribute = target.partition(":")[2]
        name = attribute.rsplit(".", 1)[-1]
        found.append(Entry(f"config.json extensions[{index}] {target!r}", name, target))
    return found


def _load(target: str) -> Any:
    module_name, colon, attribute = target.partition(":")
    if not colon or not module_name or not attribute:
        raise RegistrationError('write it as "package.module:function"')
    value: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


def load_extensions(registry: ProviderRegistry, configured: Iterable[str]) -> list[str]:
    """Register every extension into ``registry``; the warnings of those that could not be."""
    warnings: list[str] = []
    taken = set(registry.catalog()["extensions"])
    for entry in entries(configured):
        try:
            func = _load(entry.target)
        except RegistrationError as exc:
            warnings.append(f"extension {entry.source} ignored: {exc}")
            continue
        except (Exception, SystemExit) as exc:  # a package's import may fail in any way
            why = f"{type(exc).__name__}: {exc}"[:300]
            warnings.append(f"extension {entry.source} ignored: it cannot be loaded ({why})")
            continue
        problem = _unusable(entry, func, taken)
        if problem is None:
            try:
                risk = getattr(func, RISK_ATTRIBUTE, None)
                registry.register("extensions", entry.name, func, risk=risk)
            except RegistrationError as exc:
                problem = str(exc)
            except Exception as exc:  # an annotation pydantic cannot describe, say
                problem = f"its signature cannot be described ({type(exc).__name__}: {exc})"[:300]
        if problem is not None:
            warnings.append(f"extension {entry.source} ignored: {problem}")
            continue
        taken.add(entry.name)
    return warnings


def _unusable(entry: Entry, func: Any, taken: set[str]) -> str | None:
    """Why ``func`` cannot be ``extensions.<name>``, or None."""
    if entry.name in taken:
        return f"extensions.{entry.name} is already registered (the first one is kept)"
    if not inspect.iscoroutinefunction(func):
        kind = "function" if callable(func) else type(func).__name__
        return f"{entry.target} is a {kind}, not an async function (define it with async def)"
    return None
