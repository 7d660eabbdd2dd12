"""``Fabric``: one session of code mode over a workspace.

A session composes owners, each with its own lifetime: its ``Settings`` (reloaded when
config.json changes), its ``Telemetry``, its context (``ContextTools``: the store, facts,
reads and offloads; ``Summaries``), its providers, and its ``Executions`` (the sandbox, the
analyzer, the boundary). ``Fabric`` builds them, hands each the others it needs, and closes
them in turn.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from analyzer import Analysis, EffectsTable, Options
from fabric._approver import Approvals, Approver
from fabric._config import FabricConfig, Source
from fabric._context import ContextTools
from fabric._errors import ConfigError, FabricClosed
from fabric._events import Telemetry
from fabric._executions import Executions
from fabric._extensions import load_extensions
from fabric._hooks import PostHook, PostHooks
from fabric._llm import Completer
from fabric._memory import AgentMemory, MiniBankHook, api_scope
from fabric._operations import Calls, register_operations
from fabric._outcomes import FabricResult
from fabric._settings import Overrides, Settings
from fabric._state import SessionState, Variables
from fabric._summaries import Summaries
from fabric.mcpclient import McpServers
from fabric.providers import ProviderRegistry, Workspace, register_file_tools
from runtime import ISOLATIONS, MAX_RUNNING, DoctorReport, Isolation, Layer, Limits
from runtime.boundary import Boundary, BoundaryConfig, ResultFormat, ResultPolicy, TokenCounter
from store import AccessScope, Facts, Store

_log = logging.getLogger("fabric")


def existing_workspace(workspace: str | os.PathLike[str]) -> Path:
    """``workspace`` as a path, or ConfigError where it is not a folder."""
    root = Path(workspace)
    if not root.is_dir():
        raise ConfigError(f"workspace {str(root)!r} is not a directory; pass an existing folder")
    return root


class Fabric:
    """Runs snippets against a workspace, with providers served by the host.

    ``persist_variables=True`` (``persistVariables`` in config.json) hands the top-level
    plain-data variables of one execution to the next; ``None`` lets the file decide.
    ``memory_scope`` (a ``store.AccessScope`` or a mapping shaped as config.json's
    ``memoryScope``) is the ContextAccess scope of ``memory.*``; ``None`` lets the file decide.

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
        approver: Approver | None = None,
        persist_variables: bool | None = None,
        memory_scope: AccessScope | Mapping[str, Any] | None = None,
    ) -> None:
        root = existing_workspace(workspace)
        if isolation is not None and isolation not in ISOLATIONS:
            raise ConfigError(
                f"isolation must be one of {', '.join(ISOLATIONS)}, not {isolation!r}"
            )
        if persist_variables is not None and type(persist_variables) is not bool:
            raise ConfigError(
                f"persist_variables must be True, False or None (the file decides), not "
                f"{persist_variables!r}"
            )
        if type(max_running) is not int or max_running < 1:
            raise ConfigError(
                f"max_running must be a whole number >= 1, not {max_running!r}; executions "
                "beyond it wait their turn"
            )
        scope = api_scope(memory_scope)
        self.workspace = Workspace(root)
        self.settings = Settings(
            root,
            Overrides(
                limits, boundary, analysis, list(effects or []), isolation, persist_variables
            ),
        )
        """The effective settings, where each came from, and what was wrong with them."""
        self.telemetry = Telemetry(root / ".fabric" / "events.jsonl")
        self.approvals = Approvals(self.settings, approver, self.telemetry.record)
        """The approvals of this session's snippet calls: ``approvals.decide(risk, tool)`` says
        ``allow``, ``ask`` or ``deny``; ``approver`` is asked where the config says ``ask``."""
        self.tokens = TokenCounter()
        self.agent_memory = AgentMemory(
            root, self.tokens.count, scope, lambda: self.config.memory_scope
        )
        """``memory.*``: the bank on ``.fabric/bank/`` (opened on first use), the ContextAccess
        scope its calls run under (``memory_scope``, else ``memoryScope``) and the MiniBank."""
        self.context, self._setup_warnings = ContextTools.open(
            self.workspace, self.config, self.tokens, self.telemetry.record, store
        )
        """Reads, offloads and facts against the workspace's store."""
        self.summaries = Summaries(
            self.context, self.tokens, self.telemetry.record, lambda: self.config.model
        )
        """``ctx.summarize``: deterministic and model summaries, the source under a handle."""
        self.session_state = SessionState(lambda: self.config.state_max_bytes)
        """``state.*``: JSON values kept for this session's lifetime (``stateMaxBytes``)."""
        self.variables = Variables()
        """With ``persistVariables``: the variables the last execution left for the next."""
        self.providers = ProviderRegistry(base=registry)
        """This session's providers: its own tools layered over ``registry`` (never modified)."""
        register_file_tools(
            self.providers,
            self.workspace,
            sandbox=lambda: self.config.bash_sandbox,
            network=lambda: self.approvals.decide("network", "tools.bash.network") == "allow",
        )
        register_operations(self.providers, self)
        self._setup_warnings = [
            *self._setup_warnings,
            *load_extensions(self.providers, self.config.extensions),
        ]
        self.mcp = McpServers(self.providers, self.workspace.root)
        """The MCP servers of ``mcpServers`` (``mcp.<server>.<tool>`` in snippets), each started
        on its first call and closed with the session."""
        self.mcp.configure(self.config.mcp_servers)
        self.ctx = Calls(self, "ctx")
        """The context operations as Python calls: ``await fab.ctx.read(handle, query="x")``
        takes what ``ctx.read`` takes in a snippet and returns a ``Reply``."""
        self.state = Calls(self, "state")
        self.memory = Calls(self, "memory")
        """``memory.*`` as Python calls, under the session's scope:
        ``(await fab.memory.get("notes")).data``."""
        """``state.*`` as Python calls: ``(await fab.state.get("k")).data``."""
        self.executions = Executions(
            self.settings,
            self.providers,
            self.approvals,
            self.boundary,
            self.telemetry.record,
            spares=spares,
            max_running=max_running,
            variables=self.variables,
        )
        self.hooks = PostHooks(self.telemetry.record)
        """Work run after each execution, detached from it (``add_post_hook``)."""
        self._closed = False

    # -- settings ------------------------------------------------------------------------

    def refresh(self) -> None:
        """Take config.json's values again if the file changed since it was read."""
        if self.settings.refresh():
            self.context.configure(self.config)
            self.mcp.configure(self.config.mcp_servers)
            self.executions.settings_changed()

    @property
    def config(self) -> FabricConfig:
        return self.settings.config

    @property
    def sources(self) -> dict[str, Source]:
        """Where each setting came from: ``default``, ``file``, ``clamped``, ``argument`` or
        ``policy``."""
        return self.settings.sources

    @property
    def limits(self) -> Limits:
        return self.settings.limits

    @property
    def isolation(self) -> Isolation:
        return self.settings.isolation

    @property
    def analysis_options(self) -> Options:
        return self.settings.analysis

    @property
    def effects(self) -> EffectsTable:
        return self.settings.effects

    @property
    def warnings(self) -> list[str]:
        """Problems met while setting up: config warnings, a store that could not be opened."""
        return [*self._setup_warnings, *self.settings.warnings]

    # -- the parts -------------------------------------------------------------------------

    @property
    def boundary(self) -> Boundary:
        """The result policy, previews and the store results are kept in."""
        return self.context.boundary

    @property
    def facts(self) -> Facts:
        """The workspace's remembered facts (opened on first use)."""
        return self.context.facts

    @property
    def summary_model(self) -> Completer | None:
        """What answers ``mode="model"`` summaries; set it to use your own (tests use a
        double). Without one, the configured endpoint (``model`` in config.json) does."""
        return self.summaries.model

    @summary_model.setter
    def summary_model(self, model: Completer | None) -> None:
        self.summaries.model = model

    # -- running -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the sandbox now rather than at the first ``exec``."""
        self._check_open()
        self.tokens.preload()
        await self.executions.sandbox.start()
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
        approver: Approver | None = None,
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
        ``approver`` answers this run's ``ask`` calls instead of the session's approver.
        """
        self._check_open()
        self.refresh()
        mini = await self.agent_memory.rebuild()
        try:
            result = await self.executions.run(
                code,
                timeout=timeout,
                memory_mb=memory_mb,
                policy=policy,
                result_format=result_format,
                strict=strict,
                on_call=on_call,
                approver=approver,
            )
        finally:
            self.agent_memory.forget(mini)
        self.hooks.after(code, result)
        return result

    def add_post_hook(self, func: PostHook, *, retries: int = 5, timeout_s: float = 180.0) -> None:
        """Run ``func`` after every execution, detached: given a ``Completed`` (the code and
        its result), tried up to ``1 + retries`` times, each attempt at most ``timeout_s``.
        The execution never waits for it and never fails because of it; failures are logged
        and counted in ``ctx_status``. ``close()`` waits for runs in flight."""
        self.hooks.add(func, retries=retries, timeout_s=timeout_s)

    def set_minibank(self, fn: MiniBankHook | None) -> None:
        """Rebuild a MiniBank before every execution: ``fn()`` (sync or async) returns
        ``{name: ContextWindow}`` (or its plain data), read in the snippet as
        ``memory.mini(name)``; never persisted. A hook that raises (or takes over 30 s) fails
        that execution's ``memory.mini`` calls, not the execution. ``None`` removes it."""
        self.agent_memory.set_minibank(fn)

    def check(
        self,
        code: str,
        *,
        strict: bool | None = None,
        block_unbounded_returns: bool | None = None,
    ) -> Analysis:
        """``ce_exec``: what ``code`` would return, classified, without running it;
        ``strict`` and ``block_unbounded_returns`` judge as those settings would."""
        return self.executions.check(
            code, strict=strict, block_unbounded_returns=block_unbounded_returns
        )

    @property
    def queued(self) -> int:
        """Executions waiting for a slot (at most ``max_running`` run at once)."""
        return self.executions.sandbox.queued

    @property
    def running(self) -> int:
        """Executions whose worker has not exited yet (one cancelled or timed out counts
        until its worker is dead)."""
        return self.executions.sandbox.running

    @property
    def layers(self) -> tuple[Layer, ...]:
        """The isolation layers of this session's sandbox, as its zygote reports them (empty
        until the session has started)."""
        return self.executions.layers

    def isolation_report(self, *, detail: bool = False) -> dict[str, Any]:
        """The isolation mode and which layers are active (with what each does, on request)."""
        return self.executions.isolation_report(detail=detail)

    async def doctor(self) -> DoctorReport:
        """``fabric doctor``: each isolation layer, and probes run inside a real worker with the
        language layer bypassed (reading and writing outside the workspace, writing the
        workspace, reading a blob of the store, connecting to a listener on 127.0.0.1, ``fork``,
        ``exec``, signalling the host). ``ok`` only when every probe was denied."""
        self._check_open()
        store_file = None
        store = self.boundary.store
        if store is not None:
            probe = b"fabric doctor: a stored blob that no worker may read\n"
            entry = await asyncio.to_thread(
                store.put, probe, key="fabric-doctor-probe", tool="fabric.doctor"
            )
            store_file = store.blob_path(entry.handle)
        return await self.executions.doctor(self.workspace.root, store_file)

    def status(
        self,
        *,
        scope: Literal["runtime", "session", "lifetime"] = "session",
        detail: Literal["compact", "full"] = "compact",
    ) -> dict[str, Any]:
        """``ctx_status``: what Fabric did for the context, the reference's scopes: this
        ``runtime`` (this Fabric), the host ``session`` (every runtime that shares its
        ``FABRIC_HOST_SESSION``; without it, this runtime) or the workspace's ``lifetime``."""
        if scope not in ("runtime", "session", "lifetime") or detail not in ("compact", "full"):
            raise ConfigError(
                'scope is "runtime", "session" or "lifetime"; detail is "compact" or "full"'
            )
        events = self.telemetry.events
        report: dict[str, Any] = {"scope": scope, "running": self.running, "queued": self.queued}
        if scope == "runtime":
            report.update(self.telemetry.counters.as_dict())
        else:
            report.update(events.lifetime(session_only=scope == "session"))
            report["host_session"] = events.session
        store = self.boundary.store
        if store is not None:
            usage = store.usage()
            report["store"] = {
                "entries": usage.entries,
                "bytes": usage.bytes,
                "max_bytes": usage.max_bytes,
            }
        if self.hooks.report()["hooks"]:
            report["post_hooks"] = self.hooks.report()
        report["approvals"] = self.approvals.report()
        if scope == "runtime":
            report["providers"] = self.telemetry.tools.rows()
        else:
            report["providers"] = events.tools(session_only=scope == "session")
        if self.layers:  # known once the sandbox has started
            report["isolation"] = self.isolation_report(detail=detail == "full")
        report["state"] = self.session_state.usage()
        if self.config.persist_variables:
            report["variables"] = self.variables.usage(self.config.persist_variables_max_bytes)
        if detail == "full":
            failure = [events.failure] if events.failure else []
            report["settings_warnings"] = self.warnings + failure
            report["lifetime"] = events.lifetime()
            report["settings"] = self.config.flat()
        return report

    # -- lifetime ----------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise FabricClosed("this Fabric session is closed")

    async def close(self) -> None:
        """Wait for post hooks in flight (each until its deadline), stop the sandbox, then
        close the store (if the session opened it), facts and telemetry."""
        if not self._closed:
            self._closed = True
            await self.hooks.close()
            await self.executions.sandbox.close()
            await self.mcp.close()
            self.context.close()
            self.agent_memory.close()
            self.telemetry.close()

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
