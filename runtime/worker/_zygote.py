"""The lean parent that forks sandbox workers.

The host starts it once per runtime (``python -I -c BOOT ROOT FD ISOLATION``) and talks to it
over a ``SOCK_SEQPACKET`` control socket:

- ``{"op": "fork", "id": N, "spare": bool}`` carries the worker's end of a fresh socket pair as
  an ``SCM_RIGHTS`` attachment; the zygote forks, the child serves one execution on that
  socket, and the zygote answers ``{"op": "forked", "id": N}``;
- ``{"op": "kill", "id": N}`` kills worker N (the host cannot: in the zygote's PID namespace
  workers have PIDs the host does not see);
- the zygote reaps its children and reports ``{"op": "exited", "id": N, "status": S}``, so the
  host can name the limit that killed a worker. When the host goes away the zygote kills its
  children and exits.

Under ``full`` isolation the process the host started builds the kernel layer
(:mod:`runtime.worker._confine`), enters new namespaces and forks the zygote proper, which is
PID 1 of its PID namespace; the starter only waits for it. The zygote imports only the
standard library, RestrictedPython and libseccomp's binding, so a fork costs about a
millisecond.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import json
import os
import selectors
import signal
import socket
import sys
import time
from typing import Any, NoReturn

from runtime.worker import _libc, _repairs, _sealed, _wire
from runtime.worker._confine import FULL, Kernel
from runtime.worker._modules import facade_members
from runtime.worker._process import Prepared, serve

MAX_CONTROL = 16 * 1024


class Zygote:
    def __init__(
        self,
        ctrl: socket.socket,
        prepared: Prepared,
        kernel: Kernel,
        lifeline: int,
        interpreter: dict[str, Any],
    ) -> None:
        self.ctrl = ctrl
        self.interpreter = interpreter  # the repairs' row of the layers
        self.prepared = prepared  # built once; each worker inherits a pristine copy
        self.kernel = kernel
        self.lifeline = lifeline
        self.children: dict[int, int] = {}  # pid -> worker id
        self.pids: dict[int, int] = {}  # worker id -> pid
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.ctrl, selectors.EVENT_READ)
        self.selector.register(self.wake_r, selectors.EVENT_READ)
        if lifeline >= 0:
            self.selector.register(lifeline, selectors.EVENT_READ)

    def send(self, message: _wire.ZygoteReport) -> None:
        try:
            self.ctrl.send(json.dumps(message).encode())
        except OSError:
            self.shutdown()

    def run(self) -> NoReturn:
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.set_wakeup_fd(self.wake_w)
        gc.freeze()  # children never collect the shared heap, so never write to its pages
        ready: _wire.ZygoteReady = {
            "op": "ready",
            "pid": os.getpid(),
            "layers": [*self.kernel.layers(), self.interpreter],
        }
        self.send(ready)
        while True:
            for key, _ in self.selector.select():
                if key.fileobj == self.wake_r:
                    while True:
                        try:
                            if not os.read(self.wake_r, 512):
                                break
                        except BlockingIOError:
                            break
                elif key.fileobj == self.lifeline:
                    self.shutdown()  # the process that started us is gone
                else:
                    self.handle_request()
            self.reap()

    def handle_request(self) -> None:
        try:
            data, fds, _flags, _addr = socket.recv_fds(self.ctrl, MAX_CONTROL, 1)
        except OSError:
            self.shutdown()
        if not data:
            for fd in fds:
                os.close(fd)
            self.shutdown()
        try:
            request = json.loads(data)
            request_id = int(request["id"])
            op = request.get("op")
        except (ValueError, KeyError, TypeError, AttributeError):
            for fd in fds:
                os.close(fd)
            return
        if op == "kill":
            for fd in fds:
                os.close(fd)
            pid = self.pids.get(request_id)
            if pid is not None:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            return
        if op != "fork" or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            self.send(_failed(request_id, "bad fork request"))
            return
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(fds[0])
            self.send(_failed(request_id, f"fork failed: {exc}"))
            return
        if pid == 0:
            self.become_worker(fds[0], spare=request.get("spare") is not False)
        os.close(fds[0])
        self.children[pid] = request_id
        self.pids[request_id] = pid
        forked: _wire.ZygoteForked = {"op": "forked", "id": request_id}
        self.send(forked)

    def become_worker(self, fd: int, *, spare: bool) -> NoReturn:
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            self.selector.close()
            for own in (self.wake_r, self.wake_w, self.lifeline):
                if own >= 0:
                    os.close(own)
            os.close(self.ctrl.detach())
            sock = socket.socket(fileno=fd)
        except BaseException:
            os._exit(71)
        serve(sock, self.prepared, self.kernel, spare=spare)

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                self.pids.clear()
                return
            if pid == 0:
                return
            worker = self.children.pop(pid, None)
            if worker is None:
                continue  # an orphan reparented to us as PID 1
            self.pids.pop(worker, None)
            exited: _wire.ZygoteExited = {"op": "exited", "id": worker, "status": status}
            self.send(exited)

    def shutdown(self) -> NoReturn:
        for pid in self.children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        os._exit(0)


def warm_up() -> None:
    """Load now what the standard library would otherwise load on first use, from files the
    workers can no longer open: the local time zone, ``_strptime``, hash implementations."""
    time.localtime()
    datetime.datetime.now()
    datetime.datetime.strptime("2024-01-02 03:04:05", "%Y-%m-%d %H:%M:%S")
    time.strftime("%c")
    import hashlib

    for name in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "sha3_512"):
        hashlib.new(name, b"").hexdigest()
    "x".encode("idna")
    import unicodedata

    unicodedata.normalize("NFC", "x")


def _wait_for(child: int) -> NoReturn:
    """The starter's whole job once the zygote runs in its PID namespace: wait and mirror."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            _, status = os.waitpid(child, 0)
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
        os._exit(code)


def main(argv: list[str] | None = None) -> NoReturn:
    args = sys.argv[1:] if argv is None else argv
    for fd in (0, 1, 2):  # received fds must land above the standard three
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)
    ctrl = socket.socket(fileno=int(args[0]))
    isolation = args[1] if len(args) > 1 else FULL
    without = frozenset(filter(None, (args[2] if len(args) > 2 else "").split(",")))
    interpreter = _repairs.repair()  # first: every list subclass made later inherits it
    warm_up()
    prepared = Prepared()
    _sealed.seal(facade_members(prepared.facades))  # before any snippet: workers inherit it
    kernel = Kernel.prepare(isolation, without)
    lifeline = -1
    if kernel.namespaces.pid:
        lifeline, held = os.pipe()  # the starter holds the write end until it dies
        child = os.fork()  # the first child is PID 1 of the new namespace
        if child:
            os.close(lifeline)
            ctrl.close()
            _wait_for(child)
        os.close(held)
        _libc.prctl(_libc.PR_SET_PDEATHSIG, signal.SIGKILL)
    kernel.verify()
    Zygote(ctrl, prepared, kernel, lifeline, interpreter).run()


def _failed(request_id: int, message: str) -> _wire.ZygoteError:
    return {"op": "error", "id": request_id, "message": message}
