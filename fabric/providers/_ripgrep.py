"""ripgrep as ``tools.grep``'s fast first pass: which files may hold a match.

When ``rg`` is on ``PATH`` it scans the folder (every file, hidden ones and ignored ones too,
raw bytes, no symlink followed, ``.fabric`` and the skipped folders left out) and names the files
with a match; the Python search then reads only those, in its own order, with its own pattern
engine, so both ways give the same lines. ripgrep's engine is linear, so this pass cannot hang;
a pattern it does not accept (look-arounds, back references) returns None and the Python search
does the whole job.

ripgrep runs in the folder through its descriptor (``/proc/self/fd/N``), so a symlink swapped in
for the folder after it was opened beneath the root is not followed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

from fabric.providers._paths import OpenedPath
from runtime import ProviderCallError, stop_if_requested

MAX_LISTING_BYTES = 64 * 1024 * 1024
"""ripgrep's list of files beyond which the Python search does the whole job instead."""
_SLICE_S = 0.1


def ripgrep() -> str | None:
    """The ``rg`` executable on ``PATH``, or None."""
    return shutil.which("rg")


def candidates(
    rg: str,
    base: OpenedPath,
    source: str,
    ignore_case: bool,
    skipped: frozenset[str],
    deadline: float,
) -> set[str] | None:
    """Root-relative names of the files under the folder ``base`` in which ripgrep finds
    ``source`` (a regular expression), or None when ripgrep cannot answer."""
    command = [
        rg,
        "--files-with-matches",
        "--null",
        "--no-config",
        "--no-ignore",
        "--hidden",
        "--text",
        "--crlf",
        "--no-messages",
        "--encoding=none",
        "--glob=!.fabric",
        *(f"--glob=!{name}/" for name in sorted(skipped)),
        *(["--ignore-case"] if ignore_case else []),
        "--regexp",
        source,
        "--",
        "./",
    ]
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=f"/proc/self/fd/{base.fd}",
            pass_fds=(base.fd,),
            env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"},
        )
    except OSError:
        return None
    try:
        output = _collect(process, deadline)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    if output is None or process.returncode not in (0, 1):  # 2: an error, e.g. the pattern
        return None
    prefix = "" if base.name == "." else f"{base.name}/"
    return {
        prefix + name.removeprefix("./")
        for name in output.decode(errors="surrogateescape").split("\0")
        if name
    }


def _collect(process: subprocess.Popen[bytes], deadline: float) -> bytes | None:
    """ripgrep's output, read in slices so that a cancelled call stops it; None when it is
    too large. Past the deadline the call fails as the Python search would."""
    while True:
        stop_if_requested()
        left = deadline - time.monotonic()
        if left <= 0:
            raise ProviderCallError(
                "ripgrep ran past tools.grep's time limit; narrow path or glob",
                code="regex_timeout",
            )
        try:
            out, _ = process.communicate(timeout=min(_SLICE_S, left))
        except subprocess.TimeoutExpired as exc:  # what came so far is kept for the next call
            if len(exc.output or b"") > MAX_LISTING_BYTES:
                return None
            continue
        return None if len(out or b"") > MAX_LISTING_BYTES else out or b""
