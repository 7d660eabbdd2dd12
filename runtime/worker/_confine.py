"""The kernel layer: what a worker process can do, whatever the language layer lets through.

``Kernel.prepare(isolation)`` runs once, in the process the host starts: it compiles the
seccomp filter, opens the Landlock ruleset, scrubs what is left of the environment and, with
``isolation="full"``, enters new namespaces. Each forked worker then confines itself in two
steps, both before any snippet byte arrives:

1. ``isolate(sock)``: its own session, no descriptors but the protocol socket, ``/dev/null``
   as standard streams, no capabilities (the zygote dropped them for all its workers) or
   ``nobody`` when the host is root and no user namespace exists, and rlimits: no new
   processes, no file writes, no core dumps.
2. ``lock()``, once the worker has warmed up: ``no_new_privs``, the Landlock ruleset (no
   filesystem access, no TCP, signals scoped to itself) and the seccomp filter (an allowlist;
   no open, exec, socket, fork, kill, ptrace, mount...). A worker that cannot lock itself down
   under ``full`` isolation refuses to run its snippet.

``layers()`` reports each layer as plain data for ``fabric doctor`` and ``ctx_status``.
``isolation="minimal"`` skips seccomp, Landlock and namespaces (the host then warns on every
result); the process separation, the rlimits and the language layer stay.
"""

from __future__ import annotations

import os
import resource
from typing import Any

from runtime.worker import _landlock, _libc, _namespaces, _seccomp

FULL = "full"
MINIMAL = "minimal"
ISOLATION_MODES = (FULL, MINIMAL)
OPTIONAL_LAYERS = ("seccomp", "landlock", "namespaces")
"""Kernel layers that tests and benchmarks may switch off one by one (``without``), to show
that each of the others holds alone and what each costs."""
MAX_FDS = 16
ENVIRONMENT = {"LC_ALL": "C.UTF-8"}
"""What the zygote's environment is set to; with ``KEPT_ENV`` (copied from the host when set),
all a worker's environment holds."""
KEPT_ENV = ("TZ",)
SWITCHED_OFF = "switched off for a measurement (without=...)"
"""How the report names a layer switched off with ``without`` (the host tells these apart)."""


def _lockdown_problem(kernel: Kernel) -> str:
    """In a throwaway child: what of the lockdown does not hold ("" when all of it does)."""
    try:
        _libc.prctl(_libc.PR_SET_NO_NEW_PRIVS, 1)
    except OSError as exc:
        return f"seccomp: no_new_privs cannot be set: {exc}"
    if kernel.ruleset >= 0:
        try:
            _landlock.restrict_self(kernel.ruleset)
        except OSError as exc:
            return f"landlock: the ruleset cannot be enforced: {exc}"
    if kernel.filter is not None:
        try:
            kernel.filter.load()
        except OSError as exc:
            return f"seccomp: the filter cannot be loaded: {exc}"
    try:
        os.close(os.open("/", os.O_RDONLY))
    except OSError:
        return ""
    return "seccomp: the filter loaded but opening a file still works"


def _layer(name: str, active: bool, detail: str) -> dict[str, Any]:
    return {"name": name, "active": active, "detail": detail}


class Kernel:
    """The kernel layer's shared state, built before the first fork and inherited by workers."""

    def __init__(self, isolation: str, without: frozenset[str] = frozenset()) -> None:
        if isolation not in ISOLATION_MODES:
            raise ValueError(f"isolation must be one of {ISOLATION_MODES}, not {isolation!r}")
        unknown = without - set(OPTIONAL_LAYERS)
        if unknown:
            raise ValueError(f"unknown layers {sorted(unknown)}; optional: {OPTIONAL_LAYERS}")
        self.isolation = isolation
        self.without = without
        self.filter: _seccomp.Filter | None = None
        self.seccomp_problem = ""
        self.landlock_abi = 0
        self.ruleset = -1
        host_uid = os.geteuid()
        self.namespaces = _namespaces.Entered(
            host_uid=host_uid, worker_uid=_namespaces.NOBODY if host_uid == 0 else host_uid
        )
        self.failure = ""
        """Why this worker could not lock itself down, if it could not."""

    @property
    def full(self) -> bool:
        return self.isolation == FULL

    @classmethod
    def prepare(cls, isolation: str, without: frozenset[str] = frozenset()) -> Kernel:
        """Build the filter and ruleset; under ``full`` isolation, enter the namespaces."""
        kernel = cls(isolation, without)
        for key in list(os.environ):
            if key not in (*ENVIRONMENT, *KEPT_ENV):
                del os.environ[key]
        if not kernel.full:
            return kernel
        if "seccomp" in without:
            kernel.seccomp_problem = SWITCHED_OFF
        else:
            try:
                kernel.filter = _seccomp.Filter(_seccomp.build())
            except _seccomp.SeccompUnavailable as exc:
                kernel.seccomp_problem = str(exc)
        kernel.landlock_abi = 0 if "landlock" in without else _landlock.abi()
        if kernel.landlock_abi:
            try:
                kernel.ruleset = _landlock.create_ruleset(kernel.landlock_abi)
            except OSError:
                kernel.landlock_abi = 0
        if "namespaces" in without:
            kernel.namespaces.problems.append(SWITCHED_OFF)
        else:
            kernel.namespaces = _namespaces.enter()
        if kernel.namespaces.user:
            # Creating the user namespace gave this process every capability inside it; the
            # zygote needs none of them to fork and reap, so its workers inherit an empty set.
            _libc.drop_capabilities()
            if _libc.capabilities():
                kernel.namespaces.problems.append("capabilities could not be dropped")
                kernel.namespaces.user = False
        return kernel

    def verify(self) -> None:
        """Prove the lockdown once, in a throwaway child, before reporting any layer: load
        Landlock and the filter there and check that opening a file is refused. What fails is
        reported off, and ``full`` then refuses to run snippets. Call it in the zygote (in a
        new PID namespace the first child is its init: it must not be this one)."""
        if not self.full or (self.filter is None and self.ruleset < 0):
            return
        read_end, write_end = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(read_end)
            problem = _lockdown_problem(self)
            os.write(write_end, problem.encode()[:500])
            os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as answer:
            problem = answer.read().decode(errors="replace")
        os.waitpid(child, 0)
        if problem.startswith("seccomp"):
            self.filter = None
            self.seccomp_problem = problem
        elif problem.startswith("landlock"):
            self.landlock_abi = 0

    # -- in each worker ------------------------------------------------------------------

    def isolate(self, sock_fd: int) -> None:
        """Step 1: everything that does not depend on the worker having warmed up."""
        _libc.prctl(_libc.PR_SET_PDEATHSIG, 9)  # die with the zygote
        os.setsid()
        keep = sorted(fd for fd in (sock_fd, self.ruleset) if fd >= 0)
        start = 0
        for fd in keep:  # the zygote keeps 0-2 open, so received fds land above
            os.closerange(start, fd)
            start = fd + 1
        os.closerange(start, 1 << 16)
        null = os.open(os.devnull, os.O_RDWR)  # fd 0: keeps 0-2 from being reused
        for fd in (1, 2):
            os.dup2(null, fd)
        if os.geteuid() == 0 and not (self.full and self.namespaces.user):
            os.setgroups([])
            os.setgid(_namespaces.NOBODY)
            os.setuid(_namespaces.NOBODY)
        for limit in (resource.RLIMIT_NPROC, resource.RLIMIT_FSIZE, resource.RLIMIT_CORE):
            resource.setrlimit(limit, (0, 0))

    def lock(self) -> None:
        """Step 2: ``no_new_privs``, Landlock, seccomp. Sets ``failure`` instead of raising."""
        resource.setrlimit(resource.RLIMIT_NOFILE, (MAX_FDS, MAX_FDS))
        if not self.full:
            return
        try:
            _libc.prctl(_libc.PR_SET_NO_NEW_PRIVS, 1)
            if self.ruleset >= 0:
                _landlock.restrict_self(self.ruleset)
                os.close(self.ruleset)
                self.ruleset = -1
            if self.filter is not None:
                self.filter.load()
            elif "seccomp" not in self.without:  # unavailable, not switched off: refuse
                raise OSError(f"seccomp is unavailable: {self.seccomp_problem}")
        except OSError as exc:
            self.failure = f"the worker could not lock itself down: {exc}"

    # -- reporting -----------------------------------------------------------------------

    def layers(self) -> list[dict[str, Any]]:
        """Each layer, whether it is active, and what it does here."""
        ns = self.namespaces
        full = self.full

        def why_not(problem: str) -> str:
            return problem if full else "off: isolation is minimal"

        if full and self.filter is not None:
            seccomp = _layer(
                "seccomp",
                True,
                f"{self.filter.instructions} BPF instructions; {len(_seccomp.ALLOWED)} system "
                "calls allowed (a few more with argument checks), every other one fails with EPERM",
            )
        else:
            seccomp = _layer("seccomp", False, why_not(self.seccomp_problem))
        landlocked = full and self.landlock_abi > 0
        entered = "; ".join(ns.problems) or "not entered"
        if ns.worker_uid not in (0, ns.host_uid):
            uid = f"workers run as uid {ns.worker_uid} on the host (nobody)"
        else:
            uid = (
                f"the kernel sees the host's own uid {ns.host_uid}: a host that is not root cannot "
                "map another uid, so seccomp and Landlock keep its files and processes out of reach"
            )
        mapping = f"uid 0 inside maps to {ns.worker_uid} on the host; workers hold no capabilities"
        return [
            seccomp,
            _layer(
                "landlock",
                landlocked,
                _landlock.describe(self.landlock_abi)
                if landlocked
                else why_not(SWITCHED_OFF if "landlock" in self.without else "not available"),
            ),
            _layer(
                "no_new_privs", full, "set before Landlock and seccomp" if full else why_not("")
            ),
            _layer("user_namespace", full and ns.user, mapping if ns.user else why_not(entered)),
            _layer(
                "network_namespace",
                full and ns.network,
                "loopback down, no other interface" if ns.network else why_not(entered),
            ),
            _layer(
                "ipc_namespace",
                full and ns.ipc,
                "its own System V IPC and message queues" if ns.ipc else why_not(entered),
            ),
            _layer(
                "pid_namespace",
                full and ns.pid,
                "workers see only their zygote and each other" if ns.pid else why_not(entered),
            ),
            _layer("unprivileged_uid", ns.worker_uid not in (0, ns.host_uid), uid),
            _layer(
                "rlimits",
                True,
                f"CPU and address space per execution, FSIZE 0, NOFILE {MAX_FDS}, NPROC 0, CORE 0",
            ),
            _layer(
                "environment",
                True,
                "scrubbed: workers keep only "
                + ", ".join((*ENVIRONMENT, *KEPT_ENV))
                + " (when set)",
            ),
        ]
