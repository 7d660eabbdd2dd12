"""Telemetry: ``<workspace>/.fabric/events.jsonl``, one line per execution, offload, read,
search, summary or block, with sizes, tokens, strategy, timings and the analyzer's verdict
beside the actual size. Never payloads, prompts or code. Rotated at a size cap; writing never
fails a call.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MAX_BYTES = 5 * 1024 * 1024
"""The log is rotated (to ``events.jsonl.1``) when it grows past this."""
HOST_SESSION_ENV = "FABRIC_HOST_SESSION"
"""A host that starts several Fabric runtimes in one of its sessions (restarting ``fabric
mcp``, say) names the session here, and ``ctx_status(scope="session")`` adds them up."""


def host_session() -> str:
    """The host session's name: ``FABRIC_HOST_SESSION``, or one of this runtime's own."""
    named = os.environ.get(HOST_SESSION_ENV, "").strip()
    return named[:200] if named else f"runtime-{os.getpid()}-{os.urandom(4).hex()}"


@dataclass
class Counters:
    """This session's totals (``ctx_status`` reports them)."""

    executions: int = 0
    failures: int = 0
    blocks: int = 0
    bytes_produced: int = 0
    tokens_produced: int = 0
    bytes_returned: int = 0
    tokens_returned: int = 0
    media_bytes_returned: int = 0
    """Bytes of images, audio and blobs sent beside the text (content blocks)."""
    offloads: int = 0
    reads: int = 0
    searches: int = 0
    summaries: int = 0
    analyzer_warnings: int = 0
    verdicts_checked: int = 0
    """Executions whose result put the analyzer's verdict to the test."""
    verdict_mismatches: int = 0
    """Of those, the ones whose result disagreed with the verdict (``fabric._verdicts``)."""
    provider_calls: int = 0
    """Provider calls snippets made, to any tool."""
    provider_failures: int = 0
    """Of those, the ones that failed (denied ones included)."""
    provider_ms: int = 0
    """Milliseconds the host spent serving them (concurrent calls overlap)."""
    provider_bytes_in: int = 0
    """Bytes of the calls' frames from the workers (their arguments)."""
    provider_bytes_out: int = 0
    """Bytes of the replies sent back (values and errors)."""
    calls_stopped: int = 0
    """Calls the approvals stopped: denied by the config, refused, or with nobody to ask."""
    approvals_asked: int = 0
    """Questions an approver answered (or failed to)."""
    approvals_refused: int = 0
    """Of those, the ones that ended in a refusal."""

    def count(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "exec":
            self._count_calls(event.get("providers"))
            self.executions += 1
            self.failures += 0 if event.get("ok") else 1
            self.bytes_produced += int(event.get("bytes", 0))
            self.tokens_produced += int(event.get("tokens", 0))
            self.bytes_returned += int(event.get("text_bytes", 0))
            self.tokens_returned += int(event.get("text_tokens", 0))
            self.media_bytes_returned += int(event.get("media_bytes", 0))
            self.offloads += 1 if event.get("policy") in ("offload", "summarize", "edit") else 0
            self.analyzer_warnings += 1 if event.get("verdict") == "WARN" else 0
            self.verdicts_checked += 1 if event.get("checked") else 0
        elif kind == "verdict_mismatch":
            self.verdict_mismatches += 1
        elif kind == "block":
            self.blocks += 1
        elif kind == "offload":
            self.offloads += 1
        elif kind == "read":
            self.reads += 1
        elif kind == "search":
            self.searches += 1
        elif kind == "summarize":
            self.summaries += 1
        elif kind == "approval" and event.get("outcome") in ("approved", "refused"):
            self.approvals_asked += 1
            self.approvals_refused += event.get("outcome") == "refused"

    def _count_calls(self, rows: Any) -> None:
        for row in rows if isinstance(rows, list) else ():
            if not isinstance(row, dict):
                continue
            self.provider_calls += _int(row.get("calls"))
            self.provider_failures += _int(row.get("failed"))
            self.provider_ms += round(_number(row.get("ms")))
            self.provider_bytes_in += _int(row.get("bytes_in"))
            self.provider_bytes_out += _int(row.get("bytes_out"))
            approvals = row.get("approvals")
            if isinstance(approvals, dict):
                self.calls_stopped += sum(_int(approvals.get(label)) for label in STOPPED)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


STOPPED = ("deny", "refused", "unasked", "session_deny")
"""The approval labels of calls that did not run."""
_TOOLS_KEPT = 500
"""Tools a ledger keeps apart; calls to any more are added up under ``(others)``."""


def _int(value: Any) -> int:
    return value if type(value) is int else 0


def _number(value: Any) -> float:
    return float(value) if type(value) in (int, float) else 0.0


class ToolTotals:
    """Provider calls added up per tool, from the ``providers`` rows of ``exec`` events."""

    def __init__(self) -> None:
        self._rows: dict[str, dict[str, Any]] = {}

    def add(self, event: dict[str, Any]) -> None:
        rows = event.get("providers") if event.get("kind") == "exec" else None
        for row in rows if isinstance(rows, list) else ():
            tool = row.get("tool") if isinstance(row, dict) else None
            if not isinstance(tool, str):
                continue
            if tool not in self._rows and len(self._rows) >= _TOOLS_KEPT:
                tool = "(others)"
            into = self._rows.setdefault(
                tool, {"tool": tool, "risk": None, "calls": 0, "failed": 0, "ms": 0.0}
            )
            if isinstance(row.get("risk"), str):
                into["risk"] = row["risk"]
            for name in ("calls", "failed", "bytes_in", "bytes_out"):
                into[name] = into.get(name, 0) + _int(row.get(name))
            into["ms"] = round(into["ms"] + _number(row.get("ms")), 3)
            approvals = row.get("approvals")
            if isinstance(approvals, dict):
                mine = into.setdefault("approvals", {})
                for label, n in approvals.items():
                    mine[str(label)] = mine.get(str(label), 0) + _int(n)

    def rows(self) -> list[dict[str, Any]]:
        """Each tool's totals, the most called first."""
        return sorted(self._rows.values(), key=lambda row: -int(row["calls"]))


class Events:
    """Appends events to the log; reads recent ones back."""

    def __init__(self, path: Path, max_bytes: int = MAX_BYTES, session: str = "") -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.session = session or host_session()
        """Every event this runtime writes carries it."""
        self.failure: str | None = None
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._size = 0
        self._scan_lock = threading.Lock()
        self._scanned: dict[tuple[int, int], _Scanned] = {}

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"ts": round(time.time(), 3), "kind": kind, "session": self.session, **fields}
        line = (json.dumps(event, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            try:
                fd = self._open()
                os.write(fd, line)
                self._size += len(line)
            except OSError as exc:
                self.failure = f"events cannot be written to {self.path}: {exc.strerror}"
                self.close()
        return event

    def _open(self) -> int:
        """The log, kept open between events; rotated once it passes its cap (checked against
        the file itself then, since other processes append to it too)."""
        if self._fd is not None and self._size < self.max_bytes:
            return self._fd
        self.close()
        with contextlib.suppress(FileNotFoundError):
            if os.stat(self.path).st_size >= self.max_bytes:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        self._fd = os.open(self.path, flags, 0o600)
        self._size = os.fstat(self._fd).st_size
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)

    def recent(self, n: int = 20) -> list[dict[str, Any]]:
        """The last ``n`` events, oldest first (reaching into the rotated file if needed)."""
        lines: list[str] = []
        for path in (self.path, self.path.with_name(self.path.name + ".1")):
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.read().splitlines()[-(n - len(lines)) :] + lines
            except OSError:
                continue
            if len(lines) >= n:
                break
        events = []
        for line in lines:
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return events

    def lifetime(self, *, session_only: bool = False) -> dict[str, Any]:
        """Totals over every event still in the log (and its rotated file), or with
        ``session_only`` over those of this host session.

        Each file is read once and then only from where the last call stopped (files are
        known by device and inode, so rotation is followed; a file that shrank is read again),
        so asking again costs what was appended."""
        totals = Counters()
        kinds: Counter[str] = Counter()
        first = None
        with self._scan_lock:
            files = [
                self._scan(path) for path in (self.path.with_name(self.path.name + ".1"), self.path)
            ]
            seen = {scanned.file for scanned in files if scanned is not None}
            for file in list(self._scanned):
                if file not in seen:  # rotated away: its inode may be reused
                    del self._scanned[file]
            for scanned in files:
                if scanned is None:
                    continue
                part = scanned.mine if session_only else scanned.all
                first = first or part.first
                kinds.update(part.kinds)
                for name, value in part.totals.as_dict().items():
                    setattr(totals, name, getattr(totals, name) + value)
        return {"since": first, "events": dict(kinds), **totals.as_dict()}

    def tools(self, *, session_only: bool = False) -> list[dict[str, Any]]:
        """Provider calls per tool over the log (``lifetime``), or this host session's."""
        self.lifetime(session_only=session_only)  # reads what was appended since
        merged = ToolTotals()
        with self._scan_lock:
            for scanned in self._scanned.values():
                part = scanned.mine if session_only else scanned.all
                for row in part.tools.rows():
                    merged.add({"kind": "exec", "providers": [row]})
        return merged.rows()

    def _scan(self, path: Path) -> _Scanned | None:
        try:
            with open(path, "rb") as f:
                info = os.fstat(f.fileno())
                file = (info.st_dev, info.st_ino)
                scanned = self._scanned.get(file)
                if scanned is None or info.st_size < scanned.offset:  # new, or truncated
                    scanned = self._scanned[file] = _Scanned(file, self.session)
                f.seek(scanned.offset)
                for line in f:
                    if not line.endswith(b"\n"):
                        break  # being written: counted next time
                    scanned.offset += len(line)
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(event, dict):
                        scanned.add(event)
        except OSError:
            return None
        return scanned


@dataclass
class _Part:
    """Totals of some of a file's events."""

    first: Any = None
    kinds: Counter[str] = field(default_factory=Counter)
    totals: Counters = field(default_factory=Counters)
    tools: ToolTotals = field(default_factory=ToolTotals)

    def add(self, event: dict[str, Any]) -> None:
        self.first = self.first or event.get("ts")
        self.kinds[str(event.get("kind", "?"))] += 1
        self.totals.count(event)
        self.tools.add(event)


@dataclass
class _Scanned:
    """What one log file (device, inode) held up to ``offset``: all of it, and the events of
    the host session ``session``."""

    file: tuple[int, int]
    session: str
    offset: int = 0
    all: _Part = field(default_factory=_Part)
    mine: _Part = field(default_factory=_Part)

    def add(self, event: dict[str, Any]) -> None:
        self.all.add(event)
        if event.get("session") == self.session:
            self.mine.add(event)


class Telemetry:
    """Where one session's events go: the workspace's log, which every session shares, and
    this session's own counters (``ctx.status``)."""

    def __init__(self, path: Path) -> None:
        self.events = Events(path)
        self.counters = Counters()
        self.tools = ToolTotals()
        """This session's provider calls per tool."""

    def record(self, kind: str, **fields: Any) -> None:
        event = self.events.record(kind, **fields)
        self.counters.count(event)
        self.tools.add(event)

    def close(self) -> None:
        self.events.close()
