"""``Fabric``: one session of code mode over a workspace."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from pydantic import ValidationError

from analyzer import Analysis, EffectsTable, Options, analyze
from fabric._config import ConfigFile, Loaded, capped, overlay
from fabric._context import ContextTools
from fabric._errors import ConfigError, FabricClosed
from fabric._events import Counters, Events
from fabric._llm import Completer
from fabric._operations import Calls, register_operations
from fabric._outcomes import (
    FabricResult,
    Watched,
    blocked,
    disabled,
    empty_snippet,
    is_small,
    verdict_fields,
)
from fabric._summaries import Summaries
from fabric._translate import describe
from fabric.providers import ProviderRegistry, Workspace, register_file_tools
from runtime import (
    ISOLATIONS,
    MAX_RUNNING,
    DoctorReport,
    Isolation,
    Layer,
    Limits,
    ProviderHost,
    Sandbox,
    run_host_work,
)
from runtime.boundary import (
    Boundary,
    BoundaryConfig,
    ResultFormat,
    ResultPolicy,
    TokenCounter,
)
from store import Facts, Store, StoreError

_log = logging.getLogger("fabric")


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
        isolation: Isolation | None = None,
        max_running: int = MAX_RUNNING,
    ) -> None:
        root = Path(workspace)
        if not root.is_dir():
            raise ConfigError(
                f"workspace {str(root)!r} is not a directory; pass an existing folder"
            )
        self.workspace = Workspace(root)
        self.config_file = ConfigFile(root)
        if isolation is not None and isolation not in ISOLATIONS:
            raise ConfigError(
                f"isolation must be one of {', '.join(ISOLATIONS)}, not {isolation!r}"
            )
        if type(max_running) is not int or max_running < 1:
            raise ConfigError(
                f"max_running must be a whole number >= 1, not {max_running!r}; executions "
                "beyond it wait their turn"
            )
        self._explicit = _Overrides(limits, boundary, analysis, list(effects or []), isolation)
        self._analyses: dict[tuple[str, bool | None], Analysis] = {}
        loaded = self.config_file.current()
        self.config = loaded.config
        self.providers = ProviderRegistry(base=registry)
        """This session's providers: its own tools layered over ``registry`` (never modified)."""
        self._setup_warnings: list[str] = []
        self._own_store = store is None
        if store is None:
            try:
                store = Store(
                    root, ttl_ms=self.config.store_ttl_ms, max_bytes=self.config.store_max_bytes
                )
            except StoreError as exc:
                self._setup_warnings.append(f"results cannot be stored: {exc}")
        self.tokens = TokenCounter()
        self._facts: Facts | None = None
        self.boundary = Boundary(store, None, self.tokens)
        self.events = Events(root / ".fabric" / "events.jsonl")
        self.counters = Counters()
        self._apply(loaded)
        self.context = ContextTools(self.boundary, self.workspace, self._event)
        self.summaries = Summaries(
            self.context, self.tokens, self._event, lambda: self.config.model
        )
        """``ctx.summarize``: deterministic and model summaries, the source under a handle."""
        register_file_tools(self.providers, self.workspace)
        register_operations(self.providers, self)
        self.ctx = Calls(self, "ctx")
        """The context operations as Python calls: ``await fab.ctx.read(handle, query="x")``
        takes what ``ctx.read`` takes in a snippet and returns a ``Reply``."""
        self._sandbox = Sandbox(
            limits=self.limits, spares=spares, isolation=self.isolation, max_running=max_running
        )
        self._closed = False

    def _apply(self, loaded: Loaded) -> None:
        """Take the settings of ``loaded``, under the ones passed to the constructor."""
        self._analyses = {}
        explicit = self._explicit
        given = overlay(
            loaded,
            limits=explicit.limits,
            boundary=explicit.boundary,
            analysis=explicit.analysis,
            isolation=explicit.isolation,
        )
        loaded = capped(given)
        config = self.config = loaded.config
        self.sources = loaded.sources
        """Where each setting came from: ``default``, ``file``, ``clamped``, ``argument`` or
        ``policy``."""
        boundary = config.boundary
        self.boundary.config = boundary
        self.limits = config.limits
        self.isolation: Isolation = config.isolation
        self.analysis_options = config.analysis.model_copy(
            update={"read_bytes": boundary.read_offload_threshold}
        )
        rows = list(config.effects) + explicit.effects
        self.effects, effect_warnings = EffectsTable.default().extended(rows)
        self._config_warnings = [*loaded.warnings, *effect_warnings]
        if self.boundary.store is not None and self._own_store:
            self.boundary.store.ttl_ms = config.store_ttl_ms
            self.boundary.store.max_bytes = config.store_max_bytes

    @property
    def warnings(self) -> list[str]:
        """Problems met while setting up: config warnings, a store that could not be opened."""
        return [*self._setup_warnings, *self._config_warnings]

    def _refresh(self) -> None:
        if self.config_file.changed():
            self._apply(self.config_file.current())

    async def start(self) -> None:
        """Start the sandbox now rather than at the first ``exec``."""
        if self._closed:
            raise FabricClosed("this Fabric session is closed")
        self.tokens.preload()
        await self._sandbox.start()
        if self.config.notify_on_start:
            _log.warning(
                "fabric: workspace %s, offload above %d bytes, policy %s%s%s",
                self.workspace.root,
                self.boundary.config.read_offload_threshold,
                self.boundary.config.result_policy,
                ", strict" if self.analysis_options.strict else "",
                f", {len(self.warnings)} settings warnings" if self.warnings else "",
            )

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
    ) -> FabricResult:
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
        self._refresh()
        if not self.config.enabled:
            return disabled()
        if not code.strip():
            return empty_snippet()
        await self._sandbox.set_isolation(self.isolation)
        limits = self.limits
        overrides = {
            k: v for k, v in (("timeout_s", timeout), ("memory_mb", memory_mb)) if v is not None
        }
        if overrides:
            try:
                limits = Limits.model_validate({**limits.model_dump(), **overrides})
            except ValidationError as exc:
                raise ConfigError(describe(exc, {"timeout_s": "timeout"})) from None
        options = self._options(strict)
        if options.strict or options.block_unbounded_returns:
            diagnosis = await asyncio.to_thread(self.check, code, strict=strict)
            if diagnosis.verdict == "BLOCK":
                self._event("block", code_bytes=len(code), **verdict_fields(diagnosis))
                return blocked(diagnosis)
            running = asyncio.get_running_loop().create_future()
            running.set_result(diagnosis)
        else:
            known = self._analyses.get((code, strict))
            running = asyncio.get_running_loop().create_future()
            if known is not None:  # analysed before: no thread needed
                running.set_result(known)
            else:
                running = asyncio.ensure_future(
                    asyncio.to_thread(self._check_and_keep, code, strict)
                )
        providers: ProviderHost = self.providers
        if on_call is not None:
            providers = Watched(self.providers, on_call)
        result = await self._sandbox.execute(code, providers=providers, limits=limits, render=False)
        if is_small(result):  # a thread hop costs more than finishing a small result here
            result = self.boundary.finish(result, policy=policy, fmt=result_format)
        else:
            finish = functools.partial(self.boundary.finish, policy=policy, fmt=result_format)
            result = await run_host_work(finish, result)
        result = FabricResult.of(result, await running)
        advisory = self.config.runtime_advisory_threshold
        if advisory and result.ok and result.policy_applied == "inline" and result.bytes > advisory:
            note = (
                f"the result is {result.bytes} bytes, above runtimeAdvisoryThreshold ({advisory})"
            )
            result = result.model_copy(update={"warnings": (*result.warnings, note)})
        self._event(
            "exec",
            ok=result.ok,
            error=result.error.kind if result.error else None,
            policy=result.policy_applied,
            bytes=result.bytes,
            tokens=result.tokens,
            text_bytes=len(result.text.encode("utf-8", "surrogatepass")),
            text_tokens=result.text_tokens,
            handle=result.handle,
            calls=result.calls,
            ms=round(result.timings.total_ms, 2),
            code_bytes=len(code),
            **verdict_fields(result.analysis),
        )
        return result

    def _check_and_keep(self, code: str, strict: bool | None) -> Analysis:
        analysis = self.check(code, strict=strict)
        if len(self._analyses) >= 256:
            self._analyses.pop(next(iter(self._analyses)))
        self._analyses[(code, strict)] = analysis
        return analysis

    def _event(self, kind: str, **fields: Any) -> None:
        self.counters.count(self.events.record(kind, **fields))

    @property
    def queued(self) -> int:
        """Executions waiting for a slot (at most ``max_running`` run at once)."""
        return self._sandbox.queued

    @property
    def running(self) -> int:
        """Executions whose worker has not exited yet (one cancelled or timed out counts
        until its worker is dead)."""
        return self._sandbox.running

    @property
    def layers(self) -> tuple[Layer, ...]:
        """The isolation layers of this session's sandbox, as its zygote reports them (empty
        until the session has started)."""
        return self._sandbox.layers

    async def doctor(self) -> DoctorReport:
        """``fabric doctor``: each isolation layer, and probes run inside a real worker with the
        language layer bypassed (reading and writing outside the workspace, writing the
        workspace, reading a blob of the store, connecting to a listener on 127.0.0.1, ``fork``,
        ``exec``, signalling the host). ``ok`` only when every probe was denied."""
        if self._closed:
            raise FabricClosed("this Fabric session is closed")
        await self._sandbox.set_isolation(self.isolation)
        store_file = None
        store = self.boundary.store
        if store is not None:
            probe = b"fabric doctor: a stored blob that no worker may read\n"
            entry = await asyncio.to_thread(
                store.put, probe, key="fabric-doctor-probe", tool="fabric.doctor"
            )
            store_file = store.blob_path(entry.handle)
        return await self._sandbox.doctor(workspace=self.workspace.root, store_file=store_file)

    def isolation_report(self, *, detail: bool = False) -> dict[str, Any]:
        """The isolation mode and which layers are active (with what each does, on request)."""
        layers = self.layers
        report: dict[str, Any] = {
            "mode": self.isolation,
            "active": [layer.name for layer in layers if layer.active],
            "inactive": [layer.name for layer in layers if not layer.active],
        }
        if detail:
            report["layers"] = [layer.model_dump() for layer in layers]
        return report

    def status(
        self,
        *,
        scope: Literal["session", "lifetime"] = "session",
        detail: Literal["compact", "full"] = "compact",
    ) -> dict[str, Any]:
        """``ctx_status``: what Fabric did for the context (this session, or ``lifetime``)."""
        report: dict[str, Any] = {"scope": scope, "running": self.running, "queued": self.queued}
        report.update(self.counters.as_dict() if scope == "session" else self.events.lifetime())
        store = self.boundary.store
        if store is not None:
            usage = store.usage()
            report["store"] = {
                "entries": usage.entries,
                "bytes": usage.bytes,
                "max_bytes": usage.max_bytes,
            }
        if self.layers:  # known once the sandbox has started
            report["isolation"] = self.isolation_report(detail=detail == "full")
        if detail == "full":
            failure = [self.events.failure] if self.events.failure else []
            report["settings_warnings"] = self.warnings + failure
            report["lifetime"] = self.events.lifetime()
            report["settings"] = self.config.flat()
        return report

    @property
    def summary_model(self) -> Completer | None:
        """What answers ``mode="model"`` summaries; set it to use your own (tests use a
        double). Without one, the configured endpoint (``model`` in config.json) does."""
        return self.summaries.model

    @summary_model.setter
    def summary_model(self, model: Completer | None) -> None:
        self.summaries.model = model

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
            self.events.close()

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


@dataclass(frozen=True)
class _Overrides:
    """Settings passed to the constructor; they win over the config file."""

    limits: Limits | None
    boundary: BoundaryConfig | None
    analysis: Options | None
    effects: list[Any]
    isolation: Isolation | None
