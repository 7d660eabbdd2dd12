"""``tools.bash``: one shell command on the host, contained, bounded in time and output.

The command runs as an asyncio subprocess of the host (never in the snippet's worker, never
blocking the event loop), in its own process group with standard input closed and a small
environment (``PATH``, ``HOME``, ``LANG``, ``LC_ALL``, ``TERM=dumb``, ``TMPDIR``: the host's
secrets stay out). By default ``_contain.py`` first builds it an environment of its own from
kernel namespaces: the workspace writable, everything else read-only, ``.fabric/`` an empty
folder, its own ``/proc`` and PID space, no network unless allowed. When the kernel refuses any
of that the call fails closed, naming the ``bashSandbox`` setting.

Each stream keeps its first and last ``STREAM_BYTES // 2`` bytes around a note of what was cut
(the rest is read and counted, never held), so any amount of output costs the host the same.
When the command ends, every process it left behind in its group ends too; at the deadline,
or when the call is cancelled, the whole group is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabric.providers import _contain
from fabric.providers._paths import PRIVATE_DIR, open_beneath
from runtime import ProviderCallError, run_sync

STREAM_BYTES = 64 * 1024
"""Bytes of stdout (and, apart, of stderr) returned: the first half and the last half."""
MAX_COMMAND_BYTES = 64 * 1024
DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 600.0
ERROR_TAIL_CHARS = 2000
"""Characters of stderr (or stdout) quoted in the error of a failed or timed-out command."""
_READ_CHUNK = 64 * 1024
_DRAIN_S = 1.0
"""How long, once the command has ended, its streams may stay open (held by a process that
left its group) before they are read no more."""
_LAUNCHER = Path(_contain.__file__)
_STATUS_BYTES = 4096


@dataclass
class _Capped:
    """The head and tail of a stream, and how many bytes it had in all."""

    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        half = STREAM_BYTES // 2
        room = half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > half:
                del self.tail[: len(self.tail) - half]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", errors="replace")
        if cut <= 0:
            return head + self.tail.decode("utf-8", errors="replace")
        kept = len(self.head)
        note = f"\n[... {cut} bytes cut of {self.total}: the first and last {kept} kept ...]\n"
        return head + note + self.tail.decode("utf-8", errors="replace")


async def run_bash(
    root: Path,
    command: str,
    timeout_s: float,
    cwd: str,
    settle: bool,
    *,
    contained: bool,
    network: bool,
) -> dict[str, Any]:
    """Run ``command`` with ``bash -c`` in the workspace folder ``cwd``."""
    _check_arguments(command, timeout_s)
    folder = await run_sync(_folder, root, cwd)
    scratch = await run_sync(tempfile.mkdtemp, None, "fabric-bash-")
    try:
        return await _run(root, folder, scratch, command, timeout_s, settle, contained, network)
    finally:
        await run_sync(shutil.rmtree, scratch, True)


def _check_arguments(command: str, timeout_s: float) -> None:
    if not command.strip():
        raise ProviderCallError(
            "command is empty; pass the shell command to run", code="bad_arguments"
        )
    if "\x00" in command or len(command.encode("utf-8", errors="replace")) > MAX_COMMAND_BYTES:
        raise ProviderCallError(
            f"command must be text without NUL bytes, at most {MAX_COMMAND_BYTES} bytes; put a "
            "long script in a file with tools.write and run that",
            code="bad_arguments",
        )
    if not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise ProviderCallError(
            f"timeout_s must be above 0 and at most {MAX_TIMEOUT_S:g}, not {timeout_s!r}",
            code="bad_arguments",
        )


def _folder(root: Path, cwd: str) -> Path:
    """The real path of the workspace folder ``cwd`` (beneath the root, not in ``.fabric``)."""
    with open_beneath(root, cwd) as opened:
        if not stat.S_ISDIR(os.fstat(opened.fd).st_mode):
            raise ProviderCallError(
                f"cwd {cwd!r} is not a folder of the workspace", code="not_found"
            )
        return root if opened.name == "." else root / opened.name


def _private_folder(root: Path) -> Path:
    """The workspace's ``.fabric``, made if missing so that it can be hidden (a command must
    not create Fabric's configuration either)."""
    private = root / PRIVATE_DIR
    with contextlib.suppress(FileExistsError):
        private.mkdir(mode=0o700)
    info = private.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise ProviderCallError(
            f"{private} is not a folder, so tools.bash cannot hide it; remove it or set "
            '"bashSandbox": false in .fabric/config.json',
            code="sandbox_unavailable",
        )
    return private


def _environment(scratch: str) -> dict[str, str]:
    keep = {
        name: os.environ[name] for name in ("PATH", "HOME", "LANG", "LC_ALL") if name in os.environ
    }
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", **keep, "TERM": "dumb", "TMPDIR": scratch}


async def _run(
    root: Path,
    folder: Path,
    scratch: str,
    command: str,
    timeout_s: float,
    settle: bool,
    contained: bool,
    network: bool,
) -> dict[str, Any]:
    status_r, status_w = os.pipe()
    try:
        if contained:
            hide = [str(await run_sync(_private_folder, root))]
            launcher = _contain.arguments(
                status_w, network, str(root), str(folder), scratch, command, hide
            )
            argv = [_interpreter(), "-I", "-S", str(_LAUNCHER), *launcher]
            start_in = None
        else:
            argv = ["/bin/bash", "-c", command]
            start_in = str(folder)
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=start_in,
            env=_environment(scratch),
            start_new_session=True,
            pass_fds=(status_w,) if contained else (),
        )
    except OSError as exc:
        os.close(status_r)
        raise ProviderCallError(
            f"tools.bash could not start bash: {exc.strerror}", code="unavailable"
        ) from None
    finally:
        os.close(status_w)
    out, err = _Capped(), _Capped()
    assert process.stdout is not None and process.stderr is not None
    readers = [
        asyncio.create_task(_drain(process.stdout, out)),
        asyncio.create_task(_drain(process.stderr, err)),
    ]
    refused: str | None = None

    async def completed() -> None:
        nonlocal refused
        if contained:
            refused = await _status(status_r)
        else:
            os.close(status_r)
        await process.wait()

    try:
        try:
            await asyncio.wait_for(completed(), timeout_s)
        except TimeoutError:
            _kill(process)
            await process.wait()
            await _finish(readers)
            raise ProviderCallError(
                f"the command ran past timeout_s={timeout_s:g} and was killed with every process "
                f"it started{_tails(out, err)}; give it more time (at most {MAX_TIMEOUT_S:g} s) or "
                "make it do less",
                code="command_timeout",
            ) from None
        _kill(process)  # what it left running in its group ends with it
        await _finish(readers)
    finally:
        if process.returncode is None:  # cancelled: nothing it started outlives the call
            _kill(process)
            with contextlib.suppress(ProcessLookupError):
                await asyncio.shield(process.wait())
        for reader in readers:
            reader.cancel()
    if refused is not None:
        raise ProviderCallError(
            f"tools.bash cannot contain the command: {refused}"
            f"{_tails(_Capped(), err) if err.total else ''}. Commands run "
            "contained by default (user, mount, PID and network namespaces); where the kernel "
            'allows none, set "bashSandbox": false in .fabric/config.json to run them uncontained',
            code="sandbox_unavailable",
        )
    code = process.returncode
    assert code is not None  # waited for above
    exit_code = code if code >= 0 else 128 - code
    if exit_code != 0 and not settle:
        raise ProviderCallError(
            f"the command exited with status {exit_code}{_tails(out, err)}; pass settle=True to "
            "get a nonzero exit as data",
            code="command_failed",
        )
    return {
        "ok": exit_code == 0,
        "exit_code": exit_code,
        "stdout": out.text(),
        "stderr": err.text(),
    }


def _interpreter() -> str:
    """A Python this process may execute, for the launcher (standard library only)."""
    if os.access(sys.executable, os.X_OK):
        return sys.executable
    return shutil.which("python3") or sys.executable


async def _status(fd: int) -> str | None:
    """What the launcher reported before the command started: None when the command started
    contained, else what stopped it."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    try:
        message = await reader.read(_STATUS_BYTES)
        while chunk := await reader.read(_STATUS_BYTES):
            message = (message + chunk)[:_STATUS_BYTES]
    finally:
        transport.close()
    started = message.startswith(_contain.READY)
    refusal = message.removeprefix(_contain.READY)
    if refusal.startswith(b"E"):
        return f"the kernel refused {refusal[1:].decode(errors='replace') or 'a step'}"
    return None if started else "its launcher ended before the command started"


async def _drain(stream: asyncio.StreamReader, into: _Capped) -> None:
    while chunk := await stream.read(_READ_CHUNK):
        into.add(chunk)


async def _finish(readers: list[asyncio.Task[None]]) -> None:
    """Let the readers reach the end of their streams, for a short while at most."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), _DRAIN_S)


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _tails(out: _Capped, err: _Capped) -> str:
    stream, name = (err, "stderr") if err.total else (out, "stdout")
    if not stream.total:
        return " with no output"
    text = stream.text()
    shown = text[-ERROR_TAIL_CHARS:]
    return f"; {name} ends:\n{shown}" if len(shown) == len(text) else f"; {name} ends:\n...{shown}"
