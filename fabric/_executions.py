"""``Executions``: how a session runs snippets. The analyzer beside (or, when strict, before)
the run, the sandbox's worker, the boundary after it, and an ``exec`` event for each."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from analyzer import Analysis, analyze
from fabric import _verdicts as verdicts
from fabric._approver import Approvals, Approver, Gated
from fabric._errors import ConfigError
from fabric._outcomes import (
    FabricResult,
    blocked,
    call_fields,
    disabled,
    empty_snippet,
    is_small,
    verdict_fields,
)
from fabric._settings import Settings
from fabric._state import Variables
from fabric._translate import describe
from fabric.providers import ProviderRegistry
from runtime import (
    DoctorReport,
    ExecResult,
    Layer,
    Limits,
    ProviderHost,
    Sandbox,
    run_host_work,
)
from runtime.boundary import Boundary, ResultFormat, ResultPolicy

_KEPT_ANALYSES = 256


class Executions:
    """Runs snippets under one session's settings, with its providers and boundary."""

    def __init__(
        self,
        settings: Settings,
        providers: ProviderRegistry,
        approvals: Approvals,
        boundary: Boundary,
        record: Callable[..., None],
        *,
        spares: int,
        max_running: int,
        variables: Variables,
    ) -> None:
        self._settings, self._providers, self._boundary = settings, providers, boundary
        self._approvals = approvals
        self._variables = variables
        self._record = record
        self._analyses: dict[tuple[str, bool | None], Analysis] = {}
        self.sandbox = Sandbox(
            limits=settings.limits,
            spares=spares,
            isolation=settings.isolation,
            max_running=max_running,
        )

    def settings_changed(self) -> None:
        """Forget analyses made under the settings before."""
        self._analyses = {}

    async def run(
        self,
        code: str,
        *,
        timeout: float | None,
        memory_mb: int | None,
        policy: ResultPolicy | None,
        result_format: ResultFormat | None,
        strict: bool | None,
        on_call: Callable[[str], None] | None,
        approver: Approver | None = None,
    ) -> FabricResult:
        """``Fabric.exec``: one snippet, its faults in the result; its calls judged by the
        session's approvals, ``approver`` (else the session's) asked where they say ``ask``."""
        settings = self._settings
        if not settings.config.enabled:
            return disabled()
        if not code.strip():
            return empty_snippet()
        await self.sandbox.set_isolation(settings.isolation)
        limits = _limits(settings.limits, timeout, memory_mb)
        options = settings.options(strict)
        if options.strict or options.block_unbounded_returns:
            diagnosis = await asyncio.to_thread(self.check, code, strict=strict)
            if diagnosis.verdict == "BLOCK":
                self._record("block", code_bytes=len(code), **verdict_fields(diagnosis))
                return blocked(diagnosis)
            analysis = _done(diagnosis)
        else:
            known = self._analyses.get((code, strict))
            if known is not None:  # analysed before: no thread needed
                analysis = _done(known)
            else:
                analysis = asyncio.ensure_future(
                    asyncio.to_thread(self._check_and_keep, code, strict)
                )
        providers = Gated(self._providers, self._approvals, approver, on_call)
        result = await self._execute(code, providers, limits)
        finish = functools.partial(self._boundary.finish, policy=policy, fmt=result_format)
        if is_small(result):  # a thread hop costs more than finishing a small result here
            result = finish(result)
        else:
            result = await run_host_work(finish, result)
        done = _advised(FabricResult.of(result, await analysis), settings)
        wrong = verdicts.mismatch(done.analysis, done.ok, done.bytes)
        if wrong is not None:
            if wrong.kind == "oversized" and wrong.warn:
                done = done.model_copy(update={"warnings": (*done.warnings, wrong.warning())})
            self._record(
                "verdict_mismatch",
                mismatch=wrong.kind,
                bytes=done.bytes,
                tokens=done.tokens,
                handle=done.handle,
                **verdict_fields(done.analysis),
            )
        self._record(
            "exec",
            ok=done.ok,
            error=done.error.kind if done.error else None,
            policy=done.policy_applied,
            bytes=done.bytes,
            tokens=done.tokens,
            text_bytes=len(done.text.encode("utf-8", "surrogatepass")),
            text_tokens=done.text_tokens,
            media_bytes=done.media_bytes,
            handle=done.handle,
            calls=done.calls,
            providers=call_fields(done.call_totals),
            ms=round(done.timings.total_ms, 2),
            code_bytes=len(code),
            checked=verdicts.checked(done.analysis, done.ok),
            mismatch=wrong.kind if wrong is not None else None,
            **verdict_fields(done.analysis),
        )
        return done

    async def _execute(self, code: str, providers: ProviderHost, limits: Limits) -> ExecResult:
        """The sandbox's run, starting with the variables the last one kept and keeping this
        one's when ``persistVariables`` is on (forgetting them when it is off)."""
        config = self._settings.config
        if not config.persist_variables:
            self._variables.clear()
            return await self.sandbox.execute(
                code, providers=providers, limits=limits, render=False
            )
        result = await self.sandbox.execute(
            code,
            providers=providers,
            limits=limits,
            render=False,
            variables=self._variables.current(),
            persist=config.persist_variables_max_bytes,
        )
        if result.ok and result.variables is not None:
            self._variables.take(result.variables, result.variables_bytes)
        return result

    def check(
        self,
        code: str,
        *,
        strict: bool | None = None,
        block_unbounded_returns: bool | None = None,
    ) -> Analysis:
        """``ce_exec``: what ``code`` would return, classified, without running it."""
        if not isinstance(code, str):
            raise ConfigError(f"code must be a str, not {type(code).__name__}")
        options = self._settings.options(strict, block_unbounded_returns)
        return analyze(code, self._settings.effects, options)

    def _check_and_keep(self, code: str, strict: bool | None) -> Analysis:
        analysis = self.check(code, strict=strict)
        if len(self._analyses) >= _KEPT_ANALYSES:
            self._analyses.pop(next(iter(self._analyses)))
        self._analyses[(code, strict)] = analysis
        return analysis

    async def doctor(self, workspace: Path, store_file: Path | None) -> DoctorReport:
        await self.sandbox.set_isolation(self._settings.isolation)
        return await self.sandbox.doctor(workspace=workspace, store_file=store_file)

    @property
    def layers(self) -> tuple[Layer, ...]:
        return self.sandbox.layers

    def isolation_report(self, *, detail: bool = False) -> dict[str, Any]:
        """The isolation mode and which layers are active (with what each does, on request)."""
        layers = self.layers
        report: dict[str, Any] = {
            "mode": self._settings.isolation,
            "active": [layer.name for layer in layers if layer.active],
            "inactive": [layer.name for layer in layers if not layer.active],
        }
        if detail:
            report["layers"] = [layer.model_dump() for layer in layers]
        return report


def _limits(limits: Limits, timeout: float | None, memory_mb: int | None) -> Limits:
    """The session's limits with this call's ``timeout`` and ``memory_mb``, checked."""
    given = {k: v for k, v in (("timeout_s", timeout), ("memory_mb", memory_mb)) if v is not None}
    if not given:
        return limits
    try:
        return Limits.model_validate({**limits.model_dump(), **given})
    except ValidationError as exc:
        raise ConfigError(describe(exc, {"timeout_s": "timeout"})) from None


def _done(analysis: Analysis) -> asyncio.Future[Analysis]:
    future = asyncio.get_running_loop().create_future()
    future.set_result(analysis)
    return future


def _advised(result: FabricResult, settings: Settings) -> FabricResult:
    """``result``, with a warning when an inlined value is above ``runtimeAdvisoryThreshold``."""
    advisory = settings.config.runtime_advisory_threshold
    if not (advisory and result.ok and result.policy_applied == "inline"):
        return result
    if result.bytes <= advisory:
        return result
    note = f"the result is {result.bytes} bytes, above runtimeAdvisoryThreshold ({advisory})"
    return result.model_copy(update={"warnings": (*result.warnings, note)})
