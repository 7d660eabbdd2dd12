"""The host's view of the zygote: start it, fork workers through it, keep spares ready."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from runtime._errors import SandboxClosed, SandboxUnavailable

_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)
_CONTROL_MAX = 4096
_STREAM_LIMIT = 16 * 1024 * 1024  # read big frames without flow-control stalls


class Worker:
    """One forked worker, good for exactly one execution."""

    def __init__(
        self,
        pid: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        exit_status: asyncio.Future[int],
    ) -> None:
        self.pid = pid
        self.reader = reader
        self.writer = writer
        self.exit_status = exit_status
        self.killed = False

    @property
    def alive(self) -> bool:
        return not self.exit_status.done()

    def kill(self) -> None:
        if self.alive and not self.killed:
            self.killed = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)

    def discard(self) -> None:
        self.kill()
        self.writer.close()


class WorkerPool:
    """Starts the zygote, forks workers on demand and keeps ``spares`` forked in advance."""

    def __init__(self, *, spares: int = 2) -> None:
        self._spares_wanted = spares
        self._spares: list[Worker] = []
        self._ids = itertools.count(1)
        self._forks: dict[int, asyncio.Future[int]] = {}
        self._exits: dict[int, asyncio.Future[int]] = {}
        self._ctrl: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._refill: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[int] | None = None
        self._closed = False

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, env.get("PYTHONPATH")]))
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "runtime.worker", str(child_end.fileno())],
                pass_fds=(child_end.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise SandboxUnavailable(f"cannot start the sandbox process: {exc}") from exc
        finally:
            child_end.close()
        host_end.setblocking(False)
        self._ctrl = host_end
        self._ready = loop.create_future()
        self._reader = loop.create_task(self._read_control())
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), 30)
        except (TimeoutError, SandboxUnavailable) as exc:
            await self.close()
            raise SandboxUnavailable(f"the sandbox process did not start: {exc}") from exc
        self._schedule_refill()

    async def _read_control(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._ctrl is not None
        try:
            while True:
                data = await loop.sock_recv(self._ctrl, _CONTROL_MAX)
                if not data:
                    break
                self._on_control(json.loads(data))
        except (OSError, ValueError):
            pass
        finally:
            self._on_zygote_gone()

    def _on_control(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "ready" and self._ready is not None and not self._ready.done():
            self._ready.set_result(int(message["pid"]))
        elif op == "forked":
            pid = int(message["pid"])
            self._exits[pid] = asyncio.get_running_loop().create_future()
            future = self._forks.pop(int(message["id"]), None)
            if future is not None and not future.done():
                future.set_result(pid)
        elif op == "error":
            future = self._forks.pop(int(message["id"]), None)
            if future is not None and not future.done():
                future.set_exception(SandboxUnavailable(str(message.get("message"))))
        elif op == "exited":
            exit_future = self._exits.pop(int(message["pid"]), None)
            if exit_future is not None and not exit_future.done():
                exit_future.set_result(int(message["status"]))

    def _on_zygote_gone(self) -> None:
        error = SandboxUnavailable("the sandbox process exited")
        for future in [*self._forks.values(), self._ready]:
            if future is not None and not future.done():
                future.set_exception(error)
        self._forks.clear()
        for exit_future in self._exits.values():
            if not exit_future.done():
                exit_future.set_result(-1)
        self._exits.clear()

    async def _fork(self, *, spare: bool) -> Worker:
        """Fork a worker: a spare prepares itself while it waits, one for immediate use
        goes straight to its request."""
        if self._closed or self._ctrl is None:
            raise SandboxClosed("the sandbox is closed")
        if self._reader is None or self._reader.done():
            raise SandboxUnavailable("the sandbox process is not running")
        loop = asyncio.get_running_loop()
        host_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        request_id = next(self._ids)
        future: asyncio.Future[int] = loop.create_future()
        self._forks[request_id] = future
        payload = json.dumps({"op": "fork", "id": request_id, "spare": spare}).encode()
        try:
            while True:
                try:
                    socket.send_fds(self._ctrl, [payload], [worker_end.fileno()])
                    break
                except BlockingIOError:
                    await asyncio.sleep(0.001)
        except OSError as exc:
            self._forks.pop(request_id, None)
            host_end.close()
            raise SandboxUnavailable(f"cannot reach the sandbox process: {exc}") from exc
        finally:
            worker_end.close()
        try:
            pid = await future
            reader, writer = await asyncio.open_unix_connection(sock=host_end, limit=_STREAM_LIMIT)
        except BaseException:
            host_end.close()
            raise
        return Worker(pid, reader, writer, self._exits.get(pid) or _done(loop, -1))

    async def acquire(self) -> Worker:
        """A ready worker: a spare if one is alive, else a fresh fork.

        Spares are replaced by ``refill()`` once an execution is over, so that forking and
        warming the next worker does not compete with a running snippet for the CPU.
        """
        while self._spares:
            worker = self._spares.pop(0)
            if worker.alive:
                return worker
            worker.discard()
        return await self._fork(spare=False)

    def refill(self) -> None:
        """Top the spares up again, in the background."""
        self._schedule_refill()

    def _schedule_refill(self) -> None:
        if self._closed or (self._refill is not None and not self._refill.done()):
            return
        self._refill = asyncio.get_running_loop().create_task(self._fill_spares())

    async def _fill_spares(self) -> None:
        while not self._closed and len(self._spares) < self._spares_wanted:
            try:
                worker = await self._fork(spare=True)
            except (SandboxUnavailable, SandboxClosed):
                return
            if self._closed:
                worker.discard()
                return
            self._spares.append(worker)

    async def close(self) -> None:
        self._closed = True
        if self._refill is not None:
            self._refill.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._refill
        for worker in self._spares:
            worker.discard()
        self._spares.clear()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._ctrl is not None:
            self._ctrl.close()  # the zygote sees EOF, kills its children and exits
        if self._process is not None:
            try:
                await asyncio.wait_for(asyncio.to_thread(self._process.wait), 5)
            except TimeoutError:
                self._process.kill()
                await asyncio.to_thread(self._process.wait)


def _done(loop: asyncio.AbstractEventLoop, value: int) -> asyncio.Future[int]:
    future: asyncio.Future[int] = loop.create_future()
    future.set_result(value)
    return future
