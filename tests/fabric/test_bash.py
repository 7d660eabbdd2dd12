"""tools.bash: a shell command on the host, contained by default, bounded in time and output."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric import Fabric, ProviderCallError, ProviderRegistry
from fabric.providers import Workspace, register_file_tools

PROBE = Path(__file__).with_name("bash_probe.py")
LET_IT_RUN = {"approvals": {"execute": "allow"}}
"""Where approvals exist, a snippet's execute calls are asked by default; these tests allow them."""
REPOSITORY = Path(__file__).resolve().parents[2]
NOBODY = 65534


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".fabric").mkdir(parents=True)
    (ws / ".fabric" / "secret").write_text("the store")
    (ws / "sub").mkdir()
    return ws


def registry_for(root: Path, *, sandbox: bool = True, network: bool = False) -> ProviderRegistry:
    registry = ProviderRegistry()
    register_file_tools(registry, Workspace(root), sandbox=lambda: sandbox, network=lambda: network)
    return registry


async def bash(root: Path, command: str, *, sandbox: bool = True, **more: Any) -> Any:
    return await registry_for(root, sandbox=sandbox).call(
        "tools", "bash", {"command": command, **more}
    )


@pytest.fixture(params=[True, False], ids=["contained", "plain"])
def sandbox(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


async def test_a_command_returns_its_streams(root: Path, sandbox: bool) -> None:
    """ok, exit code, stdout and stderr, run in the workspace."""
    got = await bash(root, "pwd; echo oops >&2", sandbox=sandbox)
    assert got == {"ok": True, "exit_code": 0, "stdout": f"{root}\n", "stderr": "oops\n"}


async def test_cwd_is_a_workspace_folder(root: Path, sandbox: bool) -> None:
    """cwd is resolved beneath the root: a folder inside works, anything else is refused."""
    assert (await bash(root, "pwd", cwd="sub", sandbox=sandbox))["stdout"] == f"{root}/sub\n"
    os.symlink(root.parent, root / "up")
    for cwd, code in [
        ("..", "outside_workspace"),
        ("/", "outside_workspace"),
        ("up", "outside_workspace"),
        (".fabric", "fabric_private"),
        ("missing", "not_found"),
    ]:
        with pytest.raises(ProviderCallError) as info:
            await bash(root, "pwd", cwd=cwd, sandbox=sandbox)
        assert info.value.code == code


async def test_a_nonzero_exit_raises_unless_settled(root: Path, sandbox: bool) -> None:
    """A failure names the exit status and the end of stderr; settle=True returns it as data."""
    command = "echo partial; echo 'no such thing' >&2; exit 3"
    with pytest.raises(ProviderCallError) as info:
        await bash(root, command, sandbox=sandbox)
    assert info.value.code == "command_failed"
    assert "status 3" in info.value.message and "no such thing" in info.value.message
    assert "settle=True" in info.value.message
    settled = await bash(root, command, settle=True, sandbox=sandbox)
    assert settled == {
        "ok": False,
        "exit_code": 3,
        "stdout": "partial\n",
        "stderr": "no such thing\n",
    }


async def test_a_signal_reads_as_128_plus_its_number(root: Path, sandbox: bool) -> None:
    """A command killed by a signal exits 128 + the signal, as in a shell."""
    got = await bash(root, "kill -9 $$", settle=True, sandbox=sandbox)
    assert got["exit_code"] == 137


async def test_output_is_capped_head_and_tail(root: Path, sandbox: bool) -> None:
    """Each stream keeps its first and last 32 KiB around a note counting the bytes cut."""
    got = await bash(root, "seq 1 100000; seq 1 50000 >&2", sandbox=sandbox)
    total = sum(len(f"{n}\n") for n in range(1, 100_001))
    out = got["stdout"]
    assert out.startswith("1\n2\n3\n") and out.endswith("99999\n100000\n")
    assert f"bytes cut of {total}" in out
    assert len(out.encode()) < 64 * 1024 + 200
    assert "bytes cut of" in got["stderr"] and got["stderr"].endswith("50000\n")


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"command": ""}, "command is empty"),
        ({"command": "a\x00b"}, "NUL"),
        ({"command": "x" * 70_000}, "at most 65536 bytes"),
        ({"command": "true", "timeout_s": 0}, "timeout_s"),
        ({"command": "true", "timeout_s": 601}, "timeout_s"),
    ],
)
async def test_bad_arguments_are_named(root: Path, arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(ProviderCallError) as info:
        await registry_for(root).call("tools", "bash", arguments)
    assert info.value.code == "bad_arguments" and field in info.value.message


async def test_the_environment_holds_no_host_secrets(
    root: Path, sandbox: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only PATH, HOME, LANG, LC_ALL, TERM and TMPDIR reach the command."""
    monkeypatch.setenv("FABRIC_TEST_SECRET", "hunter2")
    got = await bash(root, "env", sandbox=sandbox)
    names = {line.split("=", 1)[0] for line in got["stdout"].splitlines()}
    assert "FABRIC_TEST_SECRET" not in names
    assert names <= {"PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "PWD", "SHLVL", "_"}


async def test_tmpdir_is_a_scratch_folder_removed_after(root: Path, sandbox: bool) -> None:
    """$TMPDIR is writable during the command and gone after it."""
    got = await bash(root, 'echo x > "$TMPDIR/f" && echo "$TMPDIR"', sandbox=sandbox)
    scratch = Path(got["stdout"].strip())
    assert not scratch.exists()


async def test_bash_sandbox_false_runs_plainly(tmp_path: Path) -> None:
    """With "bashSandbox": false a command can write outside the workspace: it is not
    contained. By default it cannot."""
    ws = tmp_path / "ws"
    (ws / ".fabric").mkdir(parents=True)
    config = ws / ".fabric" / "config.json"
    config.write_text(json.dumps(LET_IT_RUN))
    target = tmp_path / "outside.txt"
    snippet = f"return await tools.bash(command='echo x > {target}', settle=True)"
    async with Fabric(workspace=ws) as fab:
        contained = await fab.exec(snippet)
    assert contained.ok and not target.exists(), contained.text
    assert "Read-only file system" in contained.text
    config.write_text(json.dumps({**LET_IT_RUN, "bashSandbox": False}))
    async with Fabric(workspace=ws) as fab:
        assert fab.config.bash_sandbox is False
        plain = await fab.exec(snippet)
    assert plain.ok and target.read_text() == "x\n", plain.text


# -- containment, as root and as a user who is not -----------------------------------------


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on loopback that this test started; its port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.listen(8)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


@pytest.mark.parametrize(
    ("approvals", "reached"),
    [
        ({}, False),  # network: deny by default
        ({"tools.bash": "allow"}, False),  # running commands is not reaching the network
        ({"network": "ask"}, False),  # only allow opens it: nobody is asked here
        ({"tools.bash.network": "allow"}, True),
        ({"network": "allow"}, True),
    ],
)
async def test_a_sessions_approvals_decide_whether_bash_has_the_network(
    tmp_path: Path, listener: int, approvals: dict[str, str], reached: bool
) -> None:
    (tmp_path / ".fabric").mkdir()
    config = {"approvals": {"execute": "allow", **approvals}}
    (tmp_path / ".fabric" / "config.json").write_text(json.dumps(config))
    command = f"(exec 3<>/dev/tcp/127.0.0.1/{listener}) 2>/dev/null && echo reached"
    async with Fabric(workspace=tmp_path) as fab:
        done = await fab.exec(f"return await tools.bash(command={command!r}, settle=True)")
    assert done.ok, done.text
    assert (done.value["stdout"] == "reached\n") is reached, done.value


def _python_for(uid: int) -> list[str] | None:
    """A command running this interpreter's Python as ``uid``, or None if there is none."""
    prefix = (
        []
        if uid == os.getuid()
        else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    )
    site = next(p for p in sys.path if p.endswith("site-packages"))
    for python in dict.fromkeys(
        [sys.executable, f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"]
    ):
        check = subprocess.run(
            [*prefix, python, "-c", "import fabric, os, sys; assert os.access(sys.executable, 1)"],
            env={**os.environ, "PYTHONPATH": f"{REPOSITORY}:{site}"},
            capture_output=True,
            check=False,
        )
        if check.returncode == 0:
            return [*prefix, python]
    return None


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder any user can reach (pytest's own are the user's only)."""
    folder = Path(tempfile.mkdtemp(prefix="fabric-bash-test-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _probe(python: list[str], uid: int, base: Path, port: int) -> dict[str, Any]:
    ws, outside = base / "ws", base / "outside"
    (ws / ".fabric").mkdir(parents=True)
    (ws / ".fabric" / "secret").write_text("the store")
    outside.mkdir()
    for path in (base, ws, ws / ".fabric", ws / ".fabric" / "secret", outside):
        os.chown(path, uid, uid)
    site = next(p for p in sys.path if p.endswith("site-packages"))
    done = subprocess.run(
        [*python, str(PROBE), str(ws), str(outside), str(port)],
        env={"PATH": os.environ["PATH"], "PYTHONPATH": f"{REPOSITORY}:{site}"},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("uid", [0, NOBODY], ids=["root", "nobody"])
def test_a_contained_command_is_confined(uid: int, shared_tmp: Path, listener: int) -> None:
    """Run as root and as nobody: writes outside the workspace fail, .fabric is an empty
    read-only folder (not reachable through /proc either), the workspace is writable, the
    network is unreachable unless allowed, a timeout kills every process the command started,
    and a 50 MB output costs the host a bounded amount of memory."""
    if os.getuid() != 0 and uid != os.getuid():
        pytest.skip("only root can run a test child as another user")
    python = _python_for(uid)
    if python is None:
        pytest.skip(f"no Python that uid {uid} may run can import fabric here")
    report = _probe(python, uid, shared_tmp, listener)
    assert report["uid"] == uid and report["id"] == str(uid)
    assert report["outside_exit"] != 0 and not report["outside_exists"]
    assert "Read-only file system" in report["outside_error"]
    assert report["fabric_stdout"] == "" and not report["fabric_planted"]
    assert report["workspace_stdout"] == "hi\n" and report["workspace_file"] == "hi\n"
    closed = report["network_closed"]
    assert closed["exit_code"] != 0 and "connected" not in closed["stdout"], closed
    assert report["network_open"]["stdout"] == "connected\n", report["network_open"]
    assert report["timeout"]["error"] == "command_timeout"
    assert "killed with every process it started" in report["timeout"]["message"]
    assert report["lock_freed"] is True
    assert report["huge_note"] and report["huge_stdout_chars"] < 70_000
    assert report["huge_peak"] < 8 * 1024 * 1024


def test_without_namespaces_bash_fails_closed(shared_tmp: Path) -> None:
    """Where the kernel refuses a user namespace, the command does not run and the error
    names bashSandbox."""
    python = _python_for(os.getuid())
    assert python is not None
    ws = shared_tmp / "ws"
    ws.mkdir()
    code = (
        "import asyncio, sys\n"
        "from fabric import ProviderCallError, ProviderRegistry\n"
        "from fabric.providers import Workspace, register_file_tools\n"
        "r = ProviderRegistry(); register_file_tools(r, Workspace(sys.argv[1]))\n"
        "async def main():\n"
        "    try:\n"
        "        await r.call('tools', 'bash', {'command': 'touch ran'})\n"
        "    except ProviderCallError as exc:\n"
        "        print(exc.code); print(exc.message)\n"
        "asyncio.run(main())\n"
    )
    script = shared_tmp / "fail_closed.py"
    script.write_text(code)
    site = next(p for p in sys.path if p.endswith("site-packages"))
    done = subprocess.run(
        [
            "unshare",
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"',
            "sh",
            *python,
            str(script),
            str(ws),
        ],
        env={"PATH": os.environ["PATH"], "PYTHONPATH": f"{REPOSITORY}:{site}"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if "max_user_namespaces" in done.stderr:
        pytest.skip(f"cannot limit user namespaces here: {done.stderr.strip()}")
    code_line, message = done.stdout.split("\n", 1)
    assert code_line == "sandbox_unavailable", done.stdout + done.stderr
    assert '"bashSandbox": false' in message and "unshare" in message
    assert not (ws / "ran").exists()


# -- time and concurrency --------------------------------------------------------------------


def _lock_freed(path: Path) -> bool:
    import fcntl

    with open(path, "a") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
    return True


HOLD_LOCK = (
    "flock {lock} -c 'touch started; sleep 1000' & "
    "while [ ! -e started ]; do sleep 0.01; done; sleep 1000"
)


async def test_a_timeout_kills_what_the_command_started(root: Path, sandbox: bool) -> None:
    """At timeout_s the command and its background children are killed, and the error says
    so; the lock a child held is free again (this would block if the child lived on)."""
    lock = root / "held.lock"
    with pytest.raises(ProviderCallError) as info:
        await bash(root, HOLD_LOCK.format(lock=lock), timeout_s=2, sandbox=sandbox)
    assert info.value.code == "command_timeout"
    assert "timeout_s=2" in info.value.message and "killed" in info.value.message
    assert await asyncio.wait_for(asyncio.to_thread(_lock_freed, lock), 30)


async def test_cancelling_the_call_kills_the_command(root: Path, sandbox: bool) -> None:
    """A cancelled call (the snippet's own deadline) leaves nothing of the command running."""
    lock = root / "held.lock"
    call = asyncio.ensure_future(bash(root, HOLD_LOCK.format(lock=lock), sandbox=sandbox))
    while not (root / "started").exists():
        await asyncio.sleep(0.01)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await asyncio.wait_for(asyncio.to_thread(_lock_freed, lock), 30)


async def test_commands_run_side_by_side(root: Path, sandbox: bool) -> None:
    """Two commands at once: the reader waits for the writer, so run one after the other they
    would never finish."""
    os.mkfifo(root / "pipe")
    reader = bash(root, "cat pipe", timeout_s=30, sandbox=sandbox)
    writer = bash(root, "echo through > pipe", timeout_s=30, sandbox=sandbox)
    got, _ = await asyncio.gather(reader, writer)
    assert got["stdout"] == "through\n"


async def test_a_command_cannot_create_the_store(tmp_path: Path) -> None:
    """Without a .fabric folder yet, a contained command still cannot make one to plant
    Fabric's configuration: it is made (empty, private) and hidden first."""
    ws = tmp_path / "fresh"
    ws.mkdir()
    got = await bash(
        ws, "mkdir -p .fabric; echo '{\"bashSandbox\": false}' > .fabric/config.json", settle=True
    )
    assert got["exit_code"] != 0
    assert (ws / ".fabric").is_dir() and list((ws / ".fabric").iterdir()) == []
    assert stat.S_IMODE((ws / ".fabric").stat().st_mode) == 0o700


async def test_the_executions_deadline_ends_the_command(root: Path) -> None:
    """A snippet that outlives its own timeout takes its command down with it."""
    lock = root / "held.lock"
    (root / ".fabric" / "config.json").write_text(json.dumps(LET_IT_RUN))
    async with Fabric(workspace=root) as fab:
        result = await fab.exec(
            f"return await tools.bash(command={HOLD_LOCK.format(lock=lock)!r})", timeout=3
        )
    assert result.error is not None and result.error.kind == "timeout"
    assert await asyncio.wait_for(asyncio.to_thread(_lock_freed, lock), 30)


def _landlock_abi() -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1)))


@pytest.mark.skipif(_landlock_abi() < 6, reason="Landlock scoping needs ABI 6 (Linux 6.12)")
async def test_the_hosts_abstract_sockets_are_out_of_reach(root: Path) -> None:
    """Even with the network allowed (the host's network namespace), Landlock keeps abstract
    Unix sockets to the command's own processes; uncontained, the same connect works."""
    name = f"fabric-bash-test-{os.getpid()}-{id(root)}"
    server = socket.socket(socket.AF_UNIX)
    server.bind("\0" + name)
    server.listen(4)
    connect = (
        'python3 -c "import socket; s = socket.socket(socket.AF_UNIX); '
        f"s.connect('\\\\0{name}'); print('connected')\""
    )
    try:
        contained = await registry_for(root, network=True).call(
            "tools", "bash", {"command": connect, "settle": True}
        )
        plain = await bash(root, connect, sandbox=False, settle=True)
    finally:
        server.close()
    assert contained["exit_code"] != 0 and "Operation not permitted" in contained["stderr"]
    assert plain["stdout"] == "connected\n", plain


@pytest.mark.skipif(_landlock_abi() < 1, reason="this kernel has no Landlock")
async def test_landlock_refuses_writes_the_mounts_leave(root: Path) -> None:
    """The command's own /proc is a writable mount, yet Landlock allows writes only beneath
    the workspace, the scratch folder and /dev; uncontained, the same write works."""
    command = "echo 500 > /proc/self/oom_score_adj && cat /proc/self/oom_score_adj"
    contained = await bash(root, command, settle=True)
    plain = await bash(root, command, sandbox=False, settle=True)
    assert contained["exit_code"] != 0 and "Permission denied" in contained["stderr"]
    assert plain["stdout"] == "500\n"
    assert (await bash(root, "echo ok > /dev/null && echo fine"))["stdout"] == "fine\n"
