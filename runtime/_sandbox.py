"""``Sandbox``: the host-side entry point that runs snippets in forked workers."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from runtime import _doctor
from runtime._errors import SandboxClosed, SandboxUnavailable
from runtime._execution import ProviderHost, WorkerLost, execute, failed_result, probe
from runtime._isolation import (
    ISOLATIONS,
    LANGUAGE_LAYER,
    MINIMAL_WARNING,
    DoctorReport,
    Isolation,
    Layer,
    measurement_warning,
    refusal,
)
from runtime._models import ExecError, ExecResult, Limits, Timings
from runtime._pool import Worker, WorkerPool
from runtime._spares import DEFAULT_CAP
from runtime.worker import OPTIONAL_LAYERS, PROBES
from runtime.worker._probes import LOCK_DOWN

MAX_CODE_BYTES = 1024 * 1024
MAX_RUNNING = 8
"""Executions one sandbox runs at once by default; more wait their turn (each running one
holds a worker and its memory, so a burst of calls cannot take the host's memory)."""


@dataclass(frozen=True)
class _Kept:
    """What an execution starts with and keeps (persistVariables)."""

    variables: Mapping[str, Any] | None
    persist: int | None


class Sandbox:
    """Runs snippets, each in its own short-lived worker process.

    >>> async with Sandbox() as sandbox:
    ...     result = await sandbox.execute("return 1 + 1", providers=my_providers)

    ``isolation="full"`` (the default) requires the kernel layer (seccomp at least) and refuses
    every snippet without it; ``"minimal"`` runs without it and warns on every result.
    """

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        spares: int = 2,
        max_spares: int = DEFAULT_CAP,
        isolation: Isolation = "full",
        without: tuple[str, ...] = (),
        max_running: int = MAX_RUNNING,
    ) -> None:
        if not isinstance(max_running, int) or max_running < 1:
            raise ValueError(f"max_running must be a whole number >= 1, not {max_running!r}")
        if isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, not {isolation!r}")
        unknown = set(without) - set(OPTIONAL_LAYERS)
        if unknown:
            raise ValueError(f"without: unknown layers {sorted(unknown)}; one of {OPTIONAL_LAYERS}")
        self.limits = limits or Limits()
        self._spares = spares
        self._max_spares = max_spares
        self._isolation: Isolation = isolation
        self._without = tuple(without)
        """Kernel layers switched off, to prove the others hold alone or measure each one's cost
        (tests and benchmarks only: every result then carries a warning)."""
        self._slots = asyncio.Semaphore(max_running)
        self._waiting = 0
        self._busy: set[Worker] = set()
        self._pool = self._new_pool()
        self._layers: tuple[object, tuple[Layer, ...]] = (None, ())
        self._restarting = asyncio.Lock()
        self._started = False
        self._closed = False

    @property
    def isolation(self) -> Isolation:
        return self._isolation

    @property
    def queued(self) -> int:
        """Executions waiting for one of the ``max_running`` slots."""
        return self._waiting

    @property
    def running(self) -> int:
        """Workers given an execution that have not exited yet: an execution that ended by
        timeout or cancellation counts until the zygote has seen its worker die."""
        return len(self._busy)

    async def set_isolation(self, isolation: Isolation) -> None:
        """Switch isolation; the next execution starts a new zygote under it."""
        if isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, not {isolation!r}")
        if isolation == self._isolation:
            return
        async with self._restarting:
            self._isolation = isolation
            await self._restart()

    @property
    def layers(self) -> tuple[Layer, ...]:
        """Each isolation layer as the running zygote reports it (empty before ``start``)."""
        reported = self._pool.layers
        if not reported:
            return ()
        if self._layers[0] is not reported:  # one zygote's report, read once
            rows = [*reported, LANGUAGE_LAYER]
            self._layers = (reported, tuple(Layer.model_validate(row) for row in rows))
        return self._layers[1]

    @property
    def zygote_pid(self) -> int | None:
        """The host PID of the process that forks workers, while it runs."""
        return self._pool.zygote_pid

    async def start(self) -> None:
        if self._closed:
            raise SandboxClosed("the sandbox is closed")
        if not self._started:
            await self._pool.start()
            self._started = True

    def _new_pool(self) -> WorkerPool:
        return WorkerPool(
            spares=self._spares,
            max_spares=self._max_spares,
            isolation=self._isolation,
            without=self._without,
        )

    async def _restart(self) -> None:
        await self._pool.close()
        self._pool = self._new_pool()
        if self._started and not self._closed:
            await self._pool.start()

    async def _worker(self) -> Worker:
        await self.start()
        pool = self._pool
        try:
            return await pool.acquire()
        except (SandboxUnavailable, SandboxClosed):
            if self._closed:
                raise
            # The zygote died (killed from outside, say), or another call is replacing it:
            # one new zygote for all the calls that noticed, then one more try.
            async with self._restarting:
                if self._pool is pool:
                    await self._restart()
            return await self._pool.acquire()

    async def execute(
        self,
        code: str,
        *,
        providers: ProviderHost,
        limits: Limits | None = None,
        render: bool = True,
        variables: Mapping[str, Any] | None = None,
        persist: int | None = None,
    ) -> ExecResult:
        """Run ``code``; faults of the snippet come back in the result, never as exceptions.

        ``render=False`` leaves a successful result's ``text`` empty, for a caller that renders
        the value itself (Fabric's boundary does, so a large value is not serialized twice).
        ``variables`` are names the snippet starts with; with ``persist`` (bytes) a successful
        result's ``variables`` are the plain-data top-level variables it left, within that
        many bytes of JSON, and a warning names those dropped (REPL continuity: hand them to
        the next execution)."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, not {type(code).__name__}")
        if len(code.encode("utf-8", "surrogatepass")) > MAX_CODE_BYTES:
            error = ExecError(
                kind="limit",
                type="SnippetTooLarge",
                message=f"the snippet is larger than {MAX_CODE_BYTES} bytes",
                limit=MAX_CODE_BYTES,
                hint="send a shorter snippet",
            )
            return failed_result(code, error, Timings())
        await self.start()
        refused = refusal(self._isolation, self.layers)
        if refused is not None:
            return failed_result(code, refused, Timings())
        self._waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self._waiting -= 1
        try:
            kept = _Kept(variables, persist)
            result = await self._run(code, providers, limits or self.limits, render, kept)
        finally:
            self._slots.release()
        if self._isolation == "minimal":
            result = result.model_copy(update={"warnings": (*result.warnings, MINIMAL_WARNING)})
        elif self._without:
            note = measurement_warning(self._without)
            result = result.model_copy(update={"warnings": (*result.warnings, note)})
        return result

    async def _run(
        self, code: str, providers: ProviderHost, limits: Limits, render: bool, kept: _Kept
    ) -> ExecResult:
        for attempt in (1, 2):
            worker = await self._worker()
            self._busy.add(worker)
            worker.exit_status.add_done_callback(functools.partial(self._exited, worker))
            try:
                return await execute(
                    worker,
                    code,
                    providers,
                    limits,
                    render=render,
                    variables=kept.variables,
                    persist=kept.persist,
                )
            except WorkerLost:
                if attempt == 2:
                    raise SandboxUnavailable("workers keep dying with their zygote") from None
            finally:
                # The worker has answered (or failed and been killed): retiring it and forking
                # the next spare wait one turn of the loop, so the caller gets its result first.
                asyncio.get_running_loop().call_soon(self._retire, worker)
        raise AssertionError("unreachable")

    async def doctor(self, *, workspace: Path, store_file: Path | None = None) -> DoctorReport:
        """Run every probe of :mod:`runtime.worker._probes` inside a real worker.

        ``store_file`` is a file of the store (a blob) the worker must not be able to read."""
        await self.start()

        async def run(targets: dict[str, Any]) -> list[dict[str, Any]]:
            worker = await self._worker()
            try:
                return await probe(worker, targets)
            finally:
                asyncio.get_running_loop().call_soon(self._retire, worker)

        probes = await _doctor.run_probes(
            run, Path(workspace), store_file, PROBES, optional=(LOCK_DOWN,)
        )
        return DoctorReport(
            ok=all(p.denied for p in probes),
            isolation=self._isolation,
            layers=self.layers,
            probes=tuple(probes),
        )

    def _exited(self, worker: Worker, _: object) -> None:
        self._busy.discard(worker)

    def _retire(self, worker: Worker) -> None:
        worker.discard()
        self._pool.refill()

    async def close(self) -> None:
        self._closed = True
        await self._pool.close()

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
