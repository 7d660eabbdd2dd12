"""A heap faulted in ahead of time, so a snippet's first megabytes of objects cost no page faults.

A forked worker starts with no memory of its own: each new page a snippet fills costs a page
fault, and building 100k small dicts touches about 8,000 of them, a third of the run. A spare
worker has time on its hands while it waits, so it fills ``HEAP_MB`` of CPython's small-object
arenas with throwaway objects and frees them again, keeping a few pinned so the arenas stay
mapped. The snippet's objects then land in pages that are already its own.

Filling starts only after the spare has waited ``IDLE_MS`` in vain, goes a mebibyte at a time,
pauses while anything else on the machine is runnable, and stops as soon as the request
arrives: a worker forked for immediate use does not wait for it, and a running snippet does not
compete with it for the CPU.
"""

from __future__ import annotations

import os
import select
import socket

HEAP_MB = 32
"""How much a spare worker faults in while it waits."""

IDLE_MS = 50
"""How long a spare waits for a request before it starts filling."""

_ARENA = 1 << 20  # CPython 3.11 small-object arena
_FILLER = 400  # bytes per filler object: inside pymalloc's largest size class (512)
_PER_ARENA = _ARENA // 448  # a 400-byte ``bytes`` takes a 448-byte block


_PAUSE_MS = 2
_MAX_PAUSE_MS = 64


def _others_running(load: int) -> bool:
    """Whether anything but this process is runnable now (``/proc/loadavg``'s running count,
    read through ``load``, a descriptor opened before the worker locked itself down)."""
    if load < 0:
        return False
    try:
        running = int(os.pread(load, 128, 0).split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return False
    return running > 1


class Heap:
    """Pinned filler objects that keep pre-faulted arenas mapped."""

    def __init__(self) -> None:
        self._pins: list[bytes] = []
        self.bytes = 0
        self._load = -1

    def watch_load(self) -> None:
        """Open ``/proc/loadavg`` now, while this worker may still open files."""
        try:
            self._load = os.open("/proc/loadavg", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self._load = -1

    def fill(self, sock: socket.socket, mb: int = HEAP_MB, idle_ms: int = IDLE_MS) -> None:
        """Once ``sock`` has stayed quiet for ``idle_ms``, fault in up to ``mb`` MiB of arenas,
        stopping early as soon as ``sock`` is readable.

        Waiting first keeps the filling out of the way of a burst of executions: a spare taken
        within ``idle_ms`` of its fork spends no CPU on it, and none competes with a running
        snippet. Two objects of every arena's worth stay alive: an arena is returned to the
        system only when all of its blocks are free, and an arena holds more than half a MiB.
        """
        waiter = select.poll()
        waiter.register(sock, select.POLLIN)
        if waiter.poll(idle_ms):
            return
        chunks: list[list[bytes]] = []  # all alive until the end, or freed blocks get reused
        pause = _PAUSE_MS
        while len(chunks) < mb:
            if _others_running(self._load):  # a snippet is running: do not slow it down
                if waiter.poll(pause):
                    break
                pause = min(pause * 2, _MAX_PAUSE_MS)
                continue
            pause = _PAUSE_MS
            if waiter.poll(0):
                break
            chunks.append([bytes(_FILLER) for _ in range(_PER_ARENA)])
        for chunk in chunks:
            self._pins.extend(chunk[:: _PER_ARENA // 2])
        self.bytes += len(chunks) * _ARENA

    def release(self) -> None:
        """Give the arenas back (for an execution whose memory limit is too small to share)."""
        self._pins.clear()
        self.bytes = 0
