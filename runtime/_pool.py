"""The host's view of the zygote: start it, fork workers through it, keep spares ready.

The zygote starts from a scrubbed environment (``python -I``, no variables but ``LC_ALL`` and
``TZ``): nothing of the host's environment, config or credentials is in any worker to steal.
Workers are killed through the zygote, which knows their PIDs in its own PID namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runtime._errors import SandboxClosed, SandboxUnavailable
from runtime._spares import DEFAULT_CAP, QUIET_S, SparePolicy
from runtime.worker import _wire
from runtime.worker._confine import ENVIRONMENT, KEPT_ENV

_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)
_CONTROL_MAX = 16 * 1024
ZYGOTE_GONE = -1
"""The exit status of a worker whose zygote died before reporting it (it died with it)."""
_STREAM_LIMIT = 16 * 1024 * 1024  # read big frames without flow-control stalls


def boot_argv(then: str, *args: str, options: tuple[str, ...] = ()) -> list[str]:
    """The command that starts an interpreter readied for the runtime, which then runs the
    code ``then`` with ``args`` from ``sys.argv[2]`` on (``sys.argv[1]`` is
    :func:`boot_path`'s folders). functools' C lru_cache frees a link it still uses when a
    key's ``__eq__`` empties the cache (gh-94879, open in 3.11): deleted before anything
    imports functools, functools keeps its pure-Python twin; ``-S`` keeps site's ``.pth``
    files from importing functools first, ``-I`` the environment and the current folder out."""
    program = (
        "import os, sys; sys.path[:0] = sys.argv[1].split(os.pathsep); "
        "import _functools; del _functools._lru_cache_wrapper\n" + then
    )
    return [sys.executable, *options, "-I", "-S", "-c", program, boot_path(), *args]


_ZYGOTE = "from runtime.worker._zygote import main; main(sys.argv[2:])"


def boot_path() -> str:
    """Where the zygote finds the runtime and its two dependencies, whatever the host's setup
    (``python -I`` ignores ``PYTHONPATH`` and the current folder)."""
    import RestrictedPython

    folders = [_PACKAGE_ROOT, str(Path(RestrictedPython.__file__).resolve().parent.parent)]
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError):
        pass
    else:
        folders.append(str(Path(pyseccomp.__file__).resolve().parent))
    return os.pathsep.join(dict.fromkeys(folders))


def _zygote_environment() -> dict[str, str]:
    env = dict(ENVIRONMENT)
    env.update({k: os.environ[k] for k in KEPT_ENV if k in os.environ})
    return env


class Worker:
    """One forked worker, good for exactly one execution."""

    def __init__(
        self,
        worker_id: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        exit_status: asyncio.Future[int],
        kill: Callable[[int], None],
        *,
        lean: bool = False,
    ) -> None:
        self.id = worker_id
        self.lean = lean
        """Forked without a rehearsal or a heap (for a waiting call, or in a burst)."""
        self.reader = reader
        self.writer = writer
        self.exit_status = exit_status
        self.killed = False
        self._kill = kill

    @property
    def alive(self) -> bool:
        return not self.exit_status.done()

    def kill(self) -> None:
        if self.alive and not self.killed:
            self.killed = True
            self._kill(self.id)

    def discard(self) -> None:
        self.kill()
        self.writer.close()


class WorkerPool:
    """Starts the zygote, forks workers on demand and keeps ``spares`` forked in advance."""

    def __init__(
        self,
        *,
        spares: int = 2,
        max_spares: int = DEFAULT_CAP,
        isolation: str = "full",
        without: tuple[str, ...] = (),
    ) -> None:
        self.isolation = isolation
        self.without = without
        self._policy = SparePolicy(spares, max_spares)
        self.layers: list[dict[str, Any]] = []
        """The zygote's report of each isolation layer (filled in by ``start``)."""
        self._spares: list[Worker] = []
        self._ids = itertools.count(1)
        self._forks: dict[int, asyncio.Future[int]] = {}
        self._exits: dict[int, asyncio.Future[int]] = {}
        self._ctrl: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._refill: asyncio.Task[None] | None = None
        self._refill_later: asyncio.TimerHandle | None = None
        self._trim: asyncio.TimerHandle | None = None
        self._ready: asyncio.Future[int] | None = None
        self._closed = False

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv = boot_argv(_ZYGOTE, str(child_end.fileno()))
        try:
            self._process = subprocess.Popen(
                [*argv, self.isolation, ",".join(self.without)],
                pass_fds=(child_end.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=_zygote_environment(),
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
            self.layers = list(message.get("layers") or [])
            self._ready.set_result(int(message["pid"]))
        elif op == "forked":
            worker_id = int(message["id"])
            self._exits[worker_id] = asyncio.get_running_loop().create_future()
            future = self._forks.pop(worker_id, None)
            if future is not None and not future.done():
                future.set_result(worker_id)
        elif op == "error":
            future = self._forks.pop(int(message["id"]), None)
            if future is not None and not future.done():
                future.set_exception(SandboxUnavailable(str(message.get("message"))))
        elif op == "exited":
            exit_future = self._exits.pop(int(message["id"]), None)
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
                exit_future.set_result(ZYGOTE_GONE)
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
        fork: _wire.ForkRequest = {"op": "fork", "id": request_id, "spare": spare}
        payload = json.dumps(fork).encode()
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
            worker_id = await future
            reader, writer = await asyncio.open_unix_connection(sock=host_end, limit=_STREAM_LIMIT)
        except BaseException:
            host_end.close()
            raise
        exit_status = self._exits.get(worker_id) or _done(loop, -1)
        return Worker(worker_id, reader, writer, exit_status, self._kill, lean=not spare)

    def _kill(self, worker_id: int) -> None:
        """Ask the zygote to SIGKILL a worker (a datagram, never blocking the loop; sent again
        shortly when the control socket is full, so no kill is lost)."""
        if self._ctrl is None or self._closed:
            return
        try:
            kill: _wire.KillRequest = {"op": "kill", "id": worker_id}
            self._ctrl.send(json.dumps(kill).encode())
        except BlockingIOError:
            asyncio.get_running_loop().call_later(0.001, self._kill, worker_id)
        except OSError:
            pass  # the zygote is gone, and its workers with it

    @property
    def zygote_pid(self) -> int | None:
        """The PID (on the host) of the process this pool started, while it runs."""
        return self._process.pid if self._process is not None else None

    async def acquire(self) -> Worker:
        """A ready worker: a spare if one is alive, else a fresh fork.

        Spares are replaced by ``refill()`` once an execution is over, so that forking and
        warming the next worker does not compete with a running snippet for the CPU. A call
        that finds no spare forks its own, and the refill starts at once beside it.
        """
        now = time.monotonic()
        self._policy.arrived(now)
        self._spares.sort(key=lambda w: w.lean)  # full spares first, each kind oldest first
        while self._spares:
            worker = self._spares.pop(0)
            if worker.alive:
                return worker
            worker.discard()
        worker = await self._fork(spare=False)
        self._schedule_refill()
        return worker

    def refill(self) -> None:
        """Top the spares up again (or trim them after a burst), in the background."""
        plan = self._policy.plan(time.monotonic())
        for lean, keep in ((True, plan.lean), (False, plan.full)):
            kind = [w for w in self._spares if w.lean is lean]
            for worker in kind[keep:]:  # the newest go: the oldest are the readiest
                self._spares.remove(worker)
                worker.discard()
        self._schedule_refill()

    def _schedule_refill(self) -> None:
        """Refill soon; in the middle of a burst, once it pauses (forking and preparing spares
        would take CPU from the calls, and the spares a burst needs are forked before it)."""
        if self._closed or (self._refill is not None and not self._refill.done()):
            return
        loop = asyncio.get_running_loop()
        pause = self._policy.until_pause(time.monotonic())
        if pause > 0 and self._spares:
            if self._refill_later is None or self._refill_later.cancelled():
                self._refill_later = loop.call_later(pause, self._refill_now)
            return
        self._refill = loop.create_task(self._fill_spares())

    def _trim_now(self) -> None:
        self._trim = None
        self.refill()

    def _refill_now(self) -> None:
        self._refill_later = None
        self._schedule_refill()

    async def _fill_spares(self) -> None:
        while not self._closed:
            plan = self._policy.plan(time.monotonic())
            if plan.lean and self._trim is None:  # look again once the burst is forgotten
                self._trim = asyncio.get_running_loop().call_later(QUIET_S, self._trim_now)
            full = sum(not w.lean for w in self._spares)
            lean = len(self._spares) - full
            if full >= plan.full and lean >= plan.lean:
                return
            try:
                worker = await self._fork(spare=full < plan.full)
            except (SandboxUnavailable, SandboxClosed):
                return
            if self._closed:
                worker.discard()
                return
            self._spares.append(worker)

    async def close(self) -> None:
        self._closed = True
        for timer in (self._refill_later, self._trim):
            if timer is not None:
                timer.cancel()
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
