"""Test doubles that ship with the runtime, for tests and benchmarks of your own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runtime._errors import ProviderCallError


class NoProviders:
    """A provider host with no providers: every namespace is empty, and a call (which a
    snippet cannot even make) fails as a provider error would."""

    def catalog(self) -> Mapping[str, Sequence[str]]:
        return {}

    def parameters(self, namespace: str, name: str) -> Sequence[str]:
        return ()

    def help(self) -> Mapping[str, str]:
        return {"": "no provider namespaces have calls here"}

    async def call(
        self, namespace: str, name: str, arguments: dict[str, Any], positional: Sequence[Any] = ()
    ) -> Any:
        raise ProviderCallError(f"{namespace}.{name} is not a tool", code="unknown_tool")
