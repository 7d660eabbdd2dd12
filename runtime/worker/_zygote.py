"""The lean parent that forks sandbox workers.

The host starts it once per runtime (``python -m runtime.worker FD``) and talks to it over a
``SOCK_SEQPACKET`` control socket: each ``fork`` request carries the worker's end of a fresh
socket pair as an ``SCM_RIGHTS`` attachment; the zygote forks, the child serves one
execution on that socket, and the zygote answers with the child's pid. It reaps children
and reports their wait status, so the host can name the limit that killed a worker. When the
host goes away the zygote kills its children and exits.

It imports only the standard library and RestrictedPython, so a fork costs about a
millisecond.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import selectors
import signal
import socket
import sys
from typing import NoReturn

from runtime.worker._sandbox import Prepared, serve

MAX_CONTROL = 4096


class Zygote:
    def __init__(self, ctrl: socket.socket) -> None:
        self.ctrl = ctrl
        self.prepared = Prepared()  # built once; each worker inherits a pristine copy
        self.children: set[int] = set()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.ctrl, selectors.EVENT_READ)
        self.selector.register(self.wake_r, selectors.EVENT_READ)

    def send(self, message: dict[str, object]) -> None:
        try:
            self.ctrl.send(json.dumps(message).encode())
        except OSError:
            self.shutdown()

    def run(self) -> NoReturn:
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.set_wakeup_fd(self.wake_w)
        gc.freeze()  # children never collect the shared heap, so never write to its pages
        self.send({"op": "ready", "pid": os.getpid()})
        while True:
            for key, _ in self.selector.select():
                if key.fileobj == self.wake_r:
                    while True:
                        try:
                            if not os.read(self.wake_r, 512):
                                break
                        except BlockingIOError:
                            break
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
            request_id = request["id"]
        except (ValueError, KeyError, TypeError):
            for fd in fds:
                os.close(fd)
            return
        if request.get("op") != "fork" or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            self.send({"op": "error", "id": request_id, "message": "bad fork request"})
            return
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(fds[0])
            self.send({"op": "error", "id": request_id, "message": f"fork failed: {exc}"})
            return
        if pid == 0:
            self.become_worker(fds[0], spare=request.get("spare") is not False)
        os.close(fds[0])
        self.children.add(pid)
        self.send({"op": "forked", "id": request_id, "pid": pid})

    def become_worker(self, fd: int, *, spare: bool) -> NoReturn:
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            self.selector.close()
            os.close(self.wake_r)
            os.close(self.wake_w)
            os.close(self.ctrl.detach())
            sock = socket.socket(fileno=fd)
        except BaseException:
            os._exit(71)
        serve(sock, self.prepared, spare=spare)

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            self.children.discard(pid)
            self.send({"op": "exited", "pid": pid, "status": status})

    def shutdown(self) -> NoReturn:
        for pid in self.children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        os._exit(0)


def main(argv: list[str] | None = None) -> NoReturn:
    args = sys.argv[1:] if argv is None else argv
    for fd in (0, 1, 2):  # received fds must land above the standard three
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)
    ctrl = socket.socket(fileno=int(args[0]))
    Zygote(ctrl).run()
