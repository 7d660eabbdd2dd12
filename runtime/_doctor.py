"""``fabric doctor``'s probes: set up targets that only the kernel layer protects, let a real
worker (language layer bypassed) try each, and check on the host what really happened.

The host trusts nothing the worker says: a write probe counts as denied only if no file
appeared, a connect probe only if the listener saw no connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from runtime._isolation import Probe
from runtime.worker._confine import ENVIRONMENT, KEPT_ENV

_PROBE_PREFIX = "fabric-doctor-probe-"


def _outside(workspace: Path) -> Path:
    """A fresh folder outside the workspace that any uid may enter."""
    root = workspace.resolve()
    for base in (tempfile.gettempdir(), "/var/tmp", "/dev/shm"):
        base_path = Path(base).resolve()
        if base_path != root and root not in base_path.parents and base_path.is_dir():
            folder = Path(tempfile.mkdtemp(prefix="fabric-doctor-", dir=base_path))
            folder.chmod(0o777)
            return folder
    raise OSError("no temporary folder outside the workspace to probe from")


class Targets:
    """The files, folders, listener and PIDs the probes aim at, and their cleanup."""

    def __init__(self, workspace: Path, store_file: Path | None) -> None:
        self.workspace = workspace
        self.outside = _outside(workspace)
        self.secret = self.outside / "secret.txt"
        self.secret.write_text("a file outside the workspace\n")
        self.secret.chmod(0o644)
        self.inside = Path(tempfile.mkdtemp(prefix=".fabric-doctor-", dir=workspace))
        self.inside.chmod(0o777)
        self.store_file = store_file
        self.connections = {"network_connect": 0, "connect_unix": 0}
        self.server: asyncio.AbstractServer | None = None
        self.unix_server: asyncio.AbstractServer | None = None
        self.unix_path = self.outside / "listener.sock"

    async def listen(self) -> tuple[str, int]:
        def counting(probe: str) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], None]:
            def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                self.connections[probe] += 1
                writer.close()

            return accepted

        self.server = await asyncio.start_server(counting("network_connect"), "127.0.0.1", 0)
        self.unix_server = await asyncio.start_unix_server(
            counting("connect_unix"), path=str(self.unix_path)
        )
        self.unix_path.chmod(0o777)  # only the kernel layer may stand in the way
        host, port = self.server.sockets[0].getsockname()[:2]
        return str(host), int(port)

    def as_request(self, address: tuple[str, int]) -> dict[str, Any]:
        return {
            "read_outside": str(self.secret),
            "write_outside": str(self.outside),
            "write_workspace": str(self.inside),
            "read_store": str(self.store_file) if self.store_file else "/nonexistent/store",
            "network_connect": list(address),
            "connect_unix": str(self.unix_path),
            "fork": None,
            "signal_host": os.getpid(),
            "environment": [*ENVIRONMENT, *KEPT_ENV],
            "list_order": None,
            "bytearray_reads": None,
            "sandbox_classes": None,
            "exec": sys.executable,
        }

    def written(self, folder: Path) -> list[str]:
        return [p.name for p in folder.iterdir() if p.name.startswith(_PROBE_PREFIX)]

    async def close(self) -> None:
        for server in (self.server, self.unix_server):
            if server is not None:
                server.close()
                with contextlib.suppress(Exception):
                    await server.wait_closed()
        shutil.rmtree(self.outside, ignore_errors=True)
        shutil.rmtree(self.inside, ignore_errors=True)


def _verified(found: dict[str, Probe], targets: Targets) -> list[Probe]:
    """The worker's answers, overruled by what the host can see for itself."""
    checks = {
        "write_outside": targets.written(targets.outside),
        "write_workspace": targets.written(targets.inside),
    }
    out = []
    for name, probe in found.items():
        if checks.get(name):
            probe = Probe(name=name, denied=False, detail=f"a file appeared: {checks[name][0]}")
        if targets.connections.get(name):
            probe = Probe(name=name, denied=False, detail="the listener accepted a connection")
        if name == "read_store" and targets.store_file is None:
            probe = Probe(name=name, denied=False, detail="no store blob to probe")
        out.append(probe)
    return out


async def run_probes(
    run: Callable[[dict[str, Any]], Awaitable[list[dict[str, Any]]]],
    workspace: Path,
    store_file: Path | None,
    expected: tuple[str, ...],
    optional: tuple[str, ...] = (),
) -> list[Probe]:
    """Set the targets up, let ``run`` send them to a worker, verify and clean up.

    A probe of ``expected`` the worker does not answer counts as not denied; one of
    ``optional`` is kept only when the worker reports it."""
    targets = Targets(workspace, store_file)
    try:
        address = await targets.listen()
        answers = await run(targets.as_request(address))
        found: dict[str, Probe] = {}
        for answer in answers:
            try:
                probe = Probe.model_validate(answer)
            except ValueError:
                continue
            if probe.name in expected or probe.name in optional:
                found[probe.name] = probe
        for name in expected:
            found.setdefault(
                name, Probe(name=name, denied=False, detail="the worker gave no answer")
            )
        ordered = {name: found[name] for name in (*expected, *optional) if name in found}
        return await asyncio.to_thread(_verified, ordered, targets)
    finally:
        await targets.close()
