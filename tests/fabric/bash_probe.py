"""Run as a script (as root, or as another user under ``setpriv``): tools.bash's containment,
tried from inside, printed as one JSON object for tests/fabric/test_bash.py to judge.

``python bash_probe.py WORKSPACE OUTSIDE PORT``: WORKSPACE is the workspace (with
``.fabric/secret`` in it), OUTSIDE a folder this user may write on the host, PORT a TCP
listener on 127.0.0.1 that the test started.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from fabric import ProviderCallError, ProviderRegistry
from fabric.providers import Workspace, register_file_tools

LOCK_WAIT_S = 30.0


def tools(root: Path, network: bool) -> ProviderRegistry:
    registry = ProviderRegistry()
    register_file_tools(registry, Workspace(root), network=lambda: network)
    return registry


async def bash(registry: ProviderRegistry, command: str, **more: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = await registry.call(
            "tools", "bash", {"command": command, "settle": True, **more}
        )
        return result
    except ProviderCallError as exc:
        return {"error": exc.code, "message": exc.message}


def _lock(path: Path) -> bool:
    with open(path, "a") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
    return True


async def probe(root: Path, outside: Path, port: int) -> dict[str, Any]:
    closed, open_ = tools(root, network=False), tools(root, network=True)
    report: dict[str, Any] = {"uid": os.getuid()}
    report["id"] = (await bash(closed, "id -u"))["stdout"].strip()
    wrote_outside = await bash(closed, f"echo x > {outside}/escape.txt")
    report["outside_exit"] = wrote_outside["exit_code"]
    report["outside_error"] = wrote_outside["stderr"]
    report["outside_exists"] = (outside / "escape.txt").exists()
    peek = await bash(
        closed,
        f"ls -A .fabric; cat .fabric/secret; cat /proc/{os.getpid()}/root{root}/.fabric/secret; "
        "echo x > .fabric/planted",
    )
    report["fabric_stdout"] = peek["stdout"]
    report["fabric_planted"] = (root / ".fabric" / "planted").exists()
    made = await bash(closed, "mkdir -p made && echo hi > made/file.txt && cat made/file.txt")
    report["workspace_stdout"] = made["stdout"]
    report["workspace_file"] = (root / "made" / "file.txt").read_text()
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    report["network_closed"] = await bash(closed, connect, timeout_s=10)
    report["network_open"] = await bash(open_, connect, timeout_s=10)
    lock = root / "held.lock"
    report["timeout"] = await bash(
        closed,
        f"flock {lock} -c 'touch started; sleep 1000' & "
        "while [ ! -e started ]; do sleep 0.01; done; sleep 1000",
        timeout_s=3,
    )
    try:  # blocks for as long as anything the command started is still alive
        report["lock_freed"] = await asyncio.wait_for(asyncio.to_thread(_lock, lock), LOCK_WAIT_S)
    except TimeoutError:
        report["lock_freed"] = False
    tracemalloc.start()
    huge = await bash(closed, "head -c 50000000 /dev/zero | tr '\\0' a; echo tail-end")
    report["huge_peak"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    report["huge_stdout_chars"] = len(huge["stdout"])
    report["huge_note"] = "50000009" in huge["stdout"] and huge["stdout"].endswith("tail-end\n")
    return report


def main() -> None:
    root, outside, port = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    report = asyncio.run(probe(root, outside, port))
    sys.stdout.write(json.dumps(report))
    sys.stdout.flush()
    os._exit(0)  # a lock still held would keep a thread blocked


if __name__ == "__main__":
    main()
