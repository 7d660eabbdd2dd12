"""``Fabric``: one session of code mode over a workspace."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from analyzer import Analysis, EffectsTable, Options, analyze
from fabric._context import ContextTools, register_context_tools
from fabric._errors import ConfigError, FabricClosed
from fabric.providers import ProviderRegistry, Workspace, register_file_tools
from runtime import (
    ExecError,
    ExecResult,
    Limits,
    ProviderHost,
    Sandbox,
    Timings,
    render_error,
)
from runtime.boundary import Boundary, BoundaryConfig, ResultFormat, ResultPolicy, TokenCounter
from store import Facts, Store, StoreError


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
        boundary: BoundaryConfig | None = None,
        store: Store | None = None,
        analysis: Options | None = None,
        effects: list[Any] | None = None,
    ) -> None:
        root = Path(workspace)
        if not root.is_dir():
            raise ConfigError(
                f"workspace {str(root)!r} is not a directory; pass an existing folder"
            )
        self.workspace = Workspace(root)
        self.limits = limits or Limits()
        self.providers = registry or ProviderRegistry()
        self.warnings: list[str] = []
        """Problems met while setting up (a store that could not be opened, say)."""
        self._own_store = store is None
        if store is None:
            try:
                store = Store(root)
            except StoreError as exc:
                self.warnings.append(f"results cannot be stored: {exc}")
        self.tokens = TokenCounter()
        self._facts: Facts | None = None
        self.boundary = Boundary(store, boundary, self.tokens)
        self.warnings += self.boundary.config.warnings
        self.analysis_options = (analysis or Options()).model_copy(
            update={"read_bytes": self.boundary.config.read_offload_threshold}
        )
        self.effects, effect_warnings = EffectsTable.default().extended(effects or [])
        self.warnings += effect_warnings
        self.context = ContextTools(self.boundary, self.workspace)
        register_file_tools(self.providers, self.workspace)
        register_context_tools(self.providers, self.context)
        self._sandbox = Sandbox(limits=self.limits, spares=spares)
        self._closed = False

    async def start(self) -> None:
        """Start the sandbox now rather than at the first ``exec``."""
        if self._closed:
            raise FabricClosed("this Fabric session is closed")
        self.tokens.preload()
        await self._sandbox.start()

    async def exec(
        self,
        code: str,
        *,
        timeout: float | None = None,
        memory_mb: int | None = None,
        policy: ResultPolicy | None = None,
        result_format: ResultFormat | None = None,
        strict: bool | None = None,
        on_call: Callable[[str], None] | None = None,
    ) -> ExecResult:
        """Run a snippet. Its faults come back in the result (``ok=False``), never raised.

        The result passes the boundary: ``text`` is at most the offload threshold (plus a fixed
        header), the full original stored under ``handle`` when it was larger. ``policy`` and
        ``result_format`` override the session's settings for this call.

        The analyzer's diagnosis lands in ``result.analysis``. By default it runs beside the
        worker and never delays execution; with ``strict`` (or ``block_unbounded_returns`` in
        the session's analysis options) it runs first, and a BLOCK verdict returns a policy
        error with the fixes before anything runs.

        ``on_call`` is told the name of each provider call as it starts (for progress reports).
        """
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
        options = self._options(strict)
        if options.strict or options.block_unbounded_returns:
            diagnosis = await asyncio.to_thread(self.check, code, strict=strict)
            if diagnosis.verdict == "BLOCK":
                return _blocked(diagnosis)
            running = asyncio.get_running_loop().create_future()
            running.set_result(diagnosis)
        else:
            running = asyncio.ensure_future(asyncio.to_thread(self.check, code, strict=strict))
        providers: ProviderHost = self.providers
        if on_call is not None:
            providers = _Watched(self.providers, on_call)
        result = await self._sandbox.execute(code, providers=providers, limits=limits)
        result = await asyncio.to_thread(
            self.boundary.finish, result, policy=policy, fmt=result_format
        )
        return result.model_copy(update={"analysis": await running})

    @property
    def facts(self) -> Facts:
        """The workspace's remembered facts (opened on first use)."""
        if self._facts is None:
            self._facts = Facts(self.workspace.root, count_tokens=self.tokens.count)
        return self._facts

    def check(self, code: str, *, strict: bool | None = None) -> Analysis:
        """``ce_exec``: what ``code`` would return, classified, without running it."""
        if not isinstance(code, str):
            raise ConfigError(f"code must be a str, not {type(code).__name__}")
        return analyze(code, self.effects, self._options(strict))

    def _options(self, strict: bool | None) -> Options:
        if strict is None or strict == self.analysis_options.strict:
            return self.analysis_options
        return self.analysis_options.model_copy(update={"strict": strict})

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._sandbox.close()
            if self._own_store and self.boundary.store is not None:
                self.boundary.store.close()
            if self._facts is not None:
                self._facts.close()

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


class _Watched:
    """A provider host that reports each call before serving it."""

    def __init__(self, inner: ProviderHost, on_call: Callable[[str], None]) -> None:
        self.inner, self.on_call = inner, on_call

    def catalog(self) -> Mapping[str, Sequence[str]]:
        return self.inner.catalog()

    async def call(
        self, namespace: str, name: str, arguments: dict[str, Any], positional: Sequence[Any] = ()
    ) -> Any:
        self.on_call(f"{namespace}.{name}")
        return await self.inner.call(namespace, name, arguments, positional)


def _blocked(diagnosis: Analysis) -> ExecResult:
    """The result of a snippet refused before it ran."""
    first = next((d for d in diagnosis.diagnostics if d.severity == "error"), None)
    message = first.message if first else "the analyzer blocked this snippet"
    error = ExecError(
        kind="policy",
        type="Blocked",
        message=f"{message}; nothing was run. Trail: {diagnosis.explain()}",
        line=first.line if first else None,
        column=first.column if first else None,
        hint=first.fix if first else None,
    )
    return ExecResult(
        ok=False, text=render_error(error), error=error, timings=Timings(), analysis=diagnosis
    )
