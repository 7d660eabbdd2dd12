"""The launcher that contains one ``tools.bash`` command; standard library only.

Run as ``python -I -S _contain.py STATUS_FD NETWORK ROOT CWD SCRATCH COMMAND HIDE...`` (see
``arguments``; it imports ``ctypes`` and nothing else that is not built in), it builds the
command's own environment from kernel namespaces, then executes ``/bin/bash -c command`` in it:

1. new user, mount, PID and IPC namespaces (and a network namespace unless the network is
   allowed, in which only a down loopback exists); the caller's own uid and gid are mapped, so
   files the command makes are the caller's;
2. every mount becomes private and read-only (``mount_setattr`` on the whole tree); the workspace
   and a scratch folder (``$TMPDIR``) are bind-mounted over themselves and made writable again;
3. each ``hide`` folder (the workspace's ``.fabric``) is covered by an empty read-only tmpfs;
4. a fork becomes PID 1 of the new PID namespace and mounts its own ``/proc`` (no process outside
   is visible or reachable by signal); it starts the command, reaps orphans, and ends with the
   command's status, whereupon the kernel ends every process left in the namespace;
5. where the kernel has Landlock, writes are allowed beneath the workspace, the scratch folder
   and ``/dev`` only, and abstract Unix sockets and signals kept to the command (ABI 6+);
6. before that, every capability is dropped (bounding, ambient, effective, permitted;
   securebits locked so uid 0 regains none on exec) and ``no_new_privs`` set, so the command
   can neither undo a mount nor gain rights through a set-uid program.

Mounts made here belong to a namespace the command cannot reconfigure: without capabilities it
cannot unmount or remount, and a user namespace it makes itself gets the mounts locked together.
Any failure is written to ``status_fd`` (prefixed ``E``) before anything runs, and the launcher
exits 126: the caller fails closed. Just before ``exec`` it writes ``R``; the descriptor closes
at ``exec``.
"""

# no "from __future__ import annotations": its import is a file read at every launch

import ctypes
import os
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
SYS_MOUNT_SETATTR = 442
"""The same on every architecture (system calls added since 5.1 share their numbers)."""
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECUREBITS_LOCKED_NOROOT = 0b11101111
"""NOROOT, NO_SETUID_FIXUP and NO_CAP_AMBIENT_RAISE, each locked, and KEEP_CAPS locked off."""
FAILED = 126
READY = b"R"
"""Written to the status descriptor just before the command starts."""
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_WRITES = (
    (1, 0b111_1111_1111_0010),  # write, remove and make anything (ABI 1)
    (2, 1 << 13),  # refer: move or link across folders (ABI 2)
    (3, 1 << 14),  # truncate (ABI 3)
)
LANDLOCK_DEVICE_WRITES = (1 << 1) | (1 << 14)
"""Writing and truncating, granted beneath /dev (/dev/null, the terminal)."""
LANDLOCK_SCOPES = 0b11
"""Abstract Unix sockets and signals scoped to the command's own domain (ABI 6)."""

_libc = ctypes.CDLL(None, use_errno=True)
SIGKILL = 9


class Spec:
    """What to contain: read from the command line (json would cost its import each time)."""

    def __init__(self, argv: list[str]) -> None:
        self.status_fd = int(argv[0])
        self.network = argv[1] == "network"
        self.root, self.cwd, self.scratch, self.command = argv[2:6]
        self.hide = argv[6:]
        """Folders covered by an empty tmpfs."""

    @property
    def writable(self) -> list[str]:
        return [self.root, self.scratch]


class Refused(Exception):
    """The kernel refused a step; the message says which and why."""


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _check(result: int, what: str) -> None:
    if result < 0:
        err = ctypes.get_errno()
        raise Refused(f"{what}: {os.strerror(err)}")


def _encode(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str = "") -> None:
    result = _libc.mount(
        _encode(source),
        _encode(target),
        _encode(kind),
        ctypes.c_ulong(flags),
        _encode(data or None),
    )
    _check(result, f"mount {target}")


def _set_attributes(path: str, set_: int, clear: int, recursive: bool) -> None:
    attr = _MountAttr(set_, clear, 0, 0)
    result = _libc.syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_int(AT_FDCWD),
        os.fsencode(path),
        ctypes.c_uint(AT_RECURSIVE if recursive else 0),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    _check(result, f"mount_setattr {path}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _enter(network: bool) -> None:
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC
    if not network:
        flags |= CLONE_NEWNET
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare (user, mount, PID, IPC, network)")
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    except OSError as exc:
        raise Refused(f"mapping uid {uid} in the user namespace: {exc.strerror}") from None


def _writable(path: str) -> None:
    """``path`` bind-mounted over itself and writable, under a read-only tree."""
    try:
        _set_attributes(path, 0, MOUNT_ATTR_RDONLY, recursive=True)
    except Refused:  # a mount inside it that was read-only on the host stays so
        _set_attributes(path, 0, MOUNT_ATTR_RDONLY, recursive=False)


def _confine_files(spec: Spec) -> None:
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    kept = spec.writable
    for path in kept:
        _mount(path, path, None, MS_BIND | MS_REC)
    _set_attributes("/", MOUNT_ATTR_RDONLY, 0, recursive=True)
    for path in kept:
        _writable(path)
    for path in spec.hide:
        if os.path.islink(path):
            raise Refused(f"hiding {path}: it is a symlink")
        _mount(
            "tmpfs",
            path,
            "tmpfs",
            MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
            "size=4k,nr_inodes=1,mode=555",
        )


def _own_proc() -> None:
    """A ``/proc`` of the new PID namespace; failing that, none at all."""
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    for extra in (0, MS_RDONLY):
        try:
            _mount("proc", "/proc", "proc", flags | extra)
            return
        except Refused:
            continue
    _mount("tmpfs", "/proc", "tmpfs", flags | MS_RDONLY, "size=4k,nr_inodes=1,mode=555")


def _drop_capabilities() -> None:
    _check(_libc.prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED_NOROOT, 0, 0, 0), "securebits")
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient capabilities")
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0:
            break  # EINVAL past the last capability this kernel knows
    header = _CapHeader(0x20080522, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _landlock(writable: list[str]) -> None:
    """Writes allowed beneath ``writable`` (and to devices) only, abstract Unix sockets and
    signals kept to the command's own processes: a second layer under the read-only mounts,
    as far as this kernel's Landlock goes (none at all without Landlock)."""
    abi = _syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return
    writes = 0
    for since, rights in LANDLOCK_WRITES:
        writes |= rights if abi >= since else 0
    attr = _RulesetAttr(writes, 0, LANDLOCK_SCOPES if abi >= 6 else 0)
    size = ctypes.sizeof(attr) if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _syscall(
        SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
    )
    _check(ruleset, "landlock_create_ruleset")
    try:
        for path, rights in [*((p, writes) for p in writable), ("/dev", LANDLOCK_DEVICE_WRITES)]:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneath(rights & writes, fd)
                added = _syscall(
                    SYS_LANDLOCK_ADD_RULE,
                    ctypes.c_int(ruleset),
                    ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                    ctypes.byref(rule),
                    ctypes.c_uint32(0),
                )
                _check(added, f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        restricted = _syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
        _check(restricted, "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _syscall(number: int, *args: object) -> int:
    return int(_libc.syscall(ctypes.c_long(number), *args))


def _init(spec: Spec, status: int) -> None:
    """PID 1 of the new namespace: finish the environment, start the command, reap orphans,
    and end (ending every process left) when the command ends, with its status."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), "parent-death signal")
    _own_proc()
    _drop_capabilities()
    _landlock(spec.writable)
    command = os.fork()
    if command == 0:
        _become_command(spec, status)
    os.close(status)
    while True:
        pid, code = os.waitpid(-1, 0)
        if pid == command:
            os._exit(_exit_code(code))


def _become_command(spec: Spec, status: int) -> None:
    try:
        try:
            os.chdir(spec.cwd)
        except OSError as exc:
            raise Refused(f"entering {spec.cwd}: {exc.strerror}") from None
        os.write(status, READY)
        try:
            os.execve("/bin/bash", ["bash", "-c", spec.command], dict(os.environ))
        except OSError as exc:
            raise Refused(f"running /bin/bash: {exc.strerror}") from None
    except BaseException as exc:  # never run the command half-contained
        _fail(status, str(exc) if isinstance(exc, Refused) else f"{type(exc).__name__}: {exc}")


def _exit_code(code: int) -> int:
    return os.WEXITSTATUS(code) if os.WIFEXITED(code) else 128 + os.WTERMSIG(code)


def _fail(status: int, message: str) -> None:
    try:
        os.write(status, b"E" + message.encode(errors="replace")[:2000])
    finally:
        os._exit(FAILED)


def arguments(
    status_fd: int, network: bool, root: str, cwd: str, scratch: str, command: str, hide: list[str]
) -> list[str]:
    """The command line of the launcher (what ``Spec`` reads back)."""
    return [str(status_fd), "network" if network else "closed", root, cwd, scratch, command, *hide]


def main() -> None:
    spec = Spec(sys.argv[1:])
    status = spec.status_fd
    os.set_inheritable(status, False)  # closes when the command starts: "contained"
    try:
        _enter(spec.network)
        _confine_files(spec)
    except Refused as exc:
        _fail(status, str(exc))
    child = os.fork()
    if child == 0:
        try:
            _init(spec, status)
        except BaseException as exc:  # never run the command half-contained
            _fail(status, str(exc) if isinstance(exc, Refused) else f"{type(exc).__name__}: {exc}")
    os.close(status)
    _, code = os.waitpid(child, 0)
    os._exit(_exit_code(code))


if __name__ == "__main__":
    main()
