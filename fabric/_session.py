"""``Fabric``: one session of code mode over a workspace."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from pydantic import ValidationError

from fabric._errors import ConfigError, FabricClosed
from fabric.providers import ProviderRegistry, Workspace, register_file_tools
from runtime import ExecResult, Limits, Sandbox


class Fabric:
    """Runs snippets against a workspace, with providers served by the host.

    >>> async with Fabric(workspace=".") as fab:
    ...     result = await fab.exec('files = await tools.ls(path=".")\\nreturn len(files)')
    ...     print(result.text)
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] = ".",
        *,
        limits: Limits | None = None,
        registry: ProviderRegistry | None = None,
        spares: int = 2,
    ) -> None:
        root = Path(workspace)
        if not root.is_dir():
            raise ConfigError(
                f"workspace {str(root)!r} is not a directory; pass an existing folder"
            )
        self.workspace = Workspace(root)
        self.limits = limits or Limits()
        self.providers = registry or ProviderRegistry()
        register_file_tools(self.providers, self.workspace)
        self._sandbox = Sandbox(limits=self.limits, spares=spares)
        self._closed = False

    async def start(self) -> None:
        """Start the sandbox now rather than at the first ``exec``."""
        if self._closed:
            raise FabricClosed("this Fabric session is closed")
        await self._sandbox.start()

    async def exec(
        self,
        code: str,
        *,
        timeout: float | None = None,
        memory_mb: int | None = None,
    ) -> ExecResult:
        """Run a snippet. Its faults come back in the result (``ok=False``), never raised."""
        if self._closed:
            raise FabricClosed("this Fabric session is closed")
        limits = self.limits
        overrides = {
            k: v for k, v in (("timeout_s", timeout), ("memory_mb", memory_mb)) if v is not None
        }
        if overrides:
            try:
                limits = Limits.model_validate({**limits.model_dump(), **overrides})
            except ValidationError as exc:
                first = exc.errors()[0]
                raise ConfigError(f"{first['loc'][0]}: {first['msg']}") from None
        return await self._sandbox.execute(code, providers=self.providers, limits=limits)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._sandbox.close()

    async def __aenter__(self) -> Fabric:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
