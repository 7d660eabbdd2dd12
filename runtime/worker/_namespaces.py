"""Namespaces for the zygote: its own user, network, IPC and PID namespaces, entered once.

``enter()`` unshares all four at once. The user namespace maps exactly one id: the id the
workers will run as. A host running as root maps it to ``nobody`` (65534), so a worker's files
and processes are nobody's on the host; a host that is not root can only map its own uid, so
there the kernel still sees the host's uid and the seccomp and Landlock layers are what keep
the host's files and processes out of reach. The map is written by a short-lived helper that
stays in the parent namespace, since only a process there may map another uid.

In the new network namespace the loopback interface is down and nothing else exists. After
``enter()`` the caller forks the zygote proper, which becomes PID 1 of the new PID namespace:
its workers see only each other and it, and die with it.

When user namespaces are not available and the host is root, the network, IPC and PID
namespaces are still entered (root needs no user namespace for them) and workers drop to
``nobody`` with ``setuid``. Otherwise nothing is entered and the report says why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from runtime.worker import _libc

NOBODY = 65534
ALL = _libc.CLONE_NEWUSER | _libc.CLONE_NEWNET | _libc.CLONE_NEWIPC | _libc.CLONE_NEWPID
WITHOUT_USER = _libc.CLONE_NEWNET | _libc.CLONE_NEWIPC | _libc.CLONE_NEWPID


@dataclass
class Entered:
    """Which namespaces the zygote is in, and how ids map."""

    user: bool = False
    network: bool = False
    ipc: bool = False
    pid: bool = False
    host_uid: int = 0
    worker_uid: int = 0
    """The uid the kernel sees for a worker: nobody for a root host, else the host's own."""
    problems: list[str] = field(default_factory=list)


def _write_maps(target: int, uid: int, gid: int, ready_r: int, done_w: int) -> None:
    """Body of the helper: wait until ``target`` has unshared, then write its id maps."""
    status = 1
    try:
        os.read(ready_r, 1)
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"0 {uid} 1\n"),
            ("gid_map", f"0 {gid} 1\n"),
        ):
            fd = os.open(f"/proc/{target}/{name}", os.O_WRONLY)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
        os.write(done_w, b"1")
        status = 0
    except OSError as exc:
        os.write(done_w, f"0{exc}".encode()[:200])
    finally:
        os._exit(status)


def _enter_user_namespace(flags: int, uid: int, gid: int) -> str | None:
    """Unshare ``flags`` (CLONE_NEWUSER among them) and become uid 0 of the new namespace.

    Returns None on success, else why not; on failure nothing has changed."""
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    me = os.getpid()
    helper = os.fork()
    if helper == 0:
        os.close(ready_w)
        os.close(done_r)
        _write_maps(me, uid, gid, ready_r, done_w)
    os.close(ready_r)
    os.close(done_w)
    try:
        try:
            _libc.unshare(flags)
        except OSError as exc:
            os.close(ready_w)  # the helper reads EOF and exits
            return str(exc)
        os.write(ready_w, b"x")
        os.close(ready_w)
        answer = os.read(done_r, 256)
        if not answer.startswith(b"1"):
            return f"writing the uid map failed: {answer[1:].decode(errors='replace')}"
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
        return None
    finally:
        os.close(done_r)
        os.waitpid(helper, 0)


def enter() -> Entered:
    """Enter new namespaces where the kernel allows it (call once, single-threaded)."""
    host_uid = os.geteuid()
    report = Entered(host_uid=host_uid, worker_uid=host_uid)
    uid = NOBODY if host_uid == 0 else host_uid
    gid = NOBODY if host_uid == 0 else os.getegid()
    if host_uid == 0:
        os.setgroups([])  # the gid map keeps no supplementary group: drop them now
    problem = _enter_user_namespace(ALL, uid, gid)
    if problem is None:
        report.user = report.network = report.ipc = report.pid = True
        report.worker_uid = uid
        return report
    report.problems.append(f"user namespace: {problem}")
    if host_uid == 0:
        try:
            _libc.unshare(WITHOUT_USER)
        except OSError as exc:
            report.problems.append(f"network, IPC and PID namespaces: {exc}")
        else:
            report.network = report.ipc = report.pid = True
        report.worker_uid = NOBODY  # workers setuid to nobody themselves
    return report
