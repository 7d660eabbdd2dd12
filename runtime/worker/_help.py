"""``help()`` in a snippet: the namespaces and their calls, as text the host sent.

The host sends its help with each execution that names ``help`` (``ExecRequest["help"]``:
text by what it is about), so ``help()`` answers at once, without a call. It returns the
text (a snippet's last expression is its result, so ``help()`` alone shows it) and reads
nothing but that text and the names a provider proxy carries: no host object is behind it.
"""

from __future__ import annotations

import difflib
from typing import Any

from contract import MODULES
from runtime.worker._channel import Namespace, ProviderFunction
from runtime.worker._modules import Facade

USAGE = (
    'help() lists the provider namespaces; help(tools) or help("tools") one namespace; '
    'help(tools.read) or help("tools.read") one call; help("json") an allowed module'
)


class Help:
    """The snippet's ``help`` builtin; one per execution."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[str, str] = {}

    def _load(self, entries: dict[str, str] | None) -> None:
        """Take the text the host sent (private: a snippet holds this object)."""
        self._entries = dict(entries or {})

    def __call__(self, target: Any = None) -> str:
        if target is None:
            return self._entries.get("", USAGE)
        key = _key(target)
        if key is None:
            kind = type(target).__name__
            return f"help() describes Fabric's calls and modules, not a {kind}: {USAGE}"
        return self._lookup(key)

    def _lookup(self, key: str) -> str:
        key = key.strip().removeprefix("await ").removesuffix("()").strip()
        found = self._entries.get(key)
        if found is not None:
            return found
        if key in MODULES:
            return f"import {key} (sandboxed): " + ", ".join(MODULES[key])
        known = [k for k in self._entries if k] + list(MODULES)
        near = difflib.get_close_matches(key, known, n=1)
        hint = f"; did you mean {near[0]}?" if near else ""
        return f"nothing is called {key[:80]!r}{hint} {USAGE}"

    def __repr__(self) -> str:
        return "<help: call help() for the namespaces>"


def _key(target: Any) -> str | None:
    """What ``target`` names: a string as given, a provider proxy or module facade by name."""
    if type(target) is str:
        return target
    if type(target) is ProviderFunction:
        namespace = object.__getattribute__(target, "_namespace")
        return f"{namespace}.{object.__getattribute__(target, '_name')}"
    if type(target) is Namespace:
        root = object.__getattribute__(target, "_root")
        path = object.__getattribute__(target, "_path").rstrip(".")
        return f"{root}.{path}" if path else root
    if type(target) is Facade:
        name: str = object.__getattribute__(target, "_fabric_name")
        return name
    return None


Help.__module__ = "builtins"  # as the builtin it stands for
