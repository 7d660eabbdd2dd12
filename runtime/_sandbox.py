"""``Sandbox``: the host-side entry point that runs snippets in forked workers."""

from __future__ import annotations

import asyncio
from types import TracebackType

from runtime._errors import SandboxClosed, SandboxUnavailable
from runtime._execution import ProviderHost, execute, failed_result
from runtime._models import ExecError, ExecResult, Limits, Timings
from runtime._pool import Worker, WorkerPool

MAX_CODE_BYTES = 1024 * 1024


class Sandbox:
    """Runs snippets, each in its own short-lived worker process.

    >>> async with Sandbox() as sandbox:
    ...     result = await sandbox.execute("return 1 + 1", providers=my_providers)
    """

    def __init__(self, *, limits: Limits | None = None, spares: int = 2) -> None:
        self.limits = limits or Limits()
        self._spares = spares
        self._pool = WorkerPool(spares=spares)
        self._started = False
        self._closed = False

    async def start(self) -> None:
        if self._closed:
            raise SandboxClosed("the sandbox is closed")
        if not self._started:
            await self._pool.start()
            self._started = True

    async def execute(
        self,
        code: str,
        *,
        providers: ProviderHost,
        limits: Limits | None = None,
        render: bool = True,
    ) -> ExecResult:
        """Run ``code``; faults of the snippet come back in the result, never as exceptions.

        ``render=False`` leaves a successful result's ``text`` empty, for a caller that renders
        the value itself (Fabric's boundary does, so a large value is not serialized twice)."""
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
        try:
            worker = await self._pool.acquire()
        except SandboxUnavailable:
            # The zygote died (killed from outside, say): start a new one, once.
            await self._pool.close()
            self._pool = WorkerPool(spares=self._spares)
            await self._pool.start()
            worker = await self._pool.acquire()
        try:
            return await execute(worker, code, providers, limits or self.limits, render=render)
        finally:
            # The worker has answered (or failed and been killed): retiring it and forking the
            # next spare wait one turn of the loop, so the caller gets its result first.
            asyncio.get_running_loop().call_soon(self._retire, worker)

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
