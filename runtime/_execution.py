"""Drive one execution on one worker: send the snippet, serve its provider calls, collect
the result, and turn every way a worker can fail into an ``ExecError``.

The host trusts nothing the worker sends: frames are size-capped before they are read,
only JSON is parsed, every message is validated, and a worker that breaks the protocol is
killed. The worker is always killed at the end; it served its one execution.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import os
import signal
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from types import CodeType
from typing import Any, Protocol

from pydantic import BaseModel

from contract import AST_LOCK, NAMESPACES
from runtime._errors import ProviderCallError
from runtime._labels import CURRENT, CallLabels
from runtime._models import (
    CallRecord,
    CallTotals,
    CompileIssue,
    ErrorKind,
    ExecError,
    ExecResult,
    Limits,
    Timings,
)
from runtime._pool import ZYGOTE_GONE, Worker
from runtime._render import render_error, render_notes, render_output
from runtime._transfer import (
    OFF_LOOP_BYTES,
    Budget,
    MessageCheck,
    ProtocolViolation,
    TooComplex,
    assemble,
    kept_variables,
    read_frame,
    validated,
    validated_off_loop,
)
from runtime.worker import _wire, compile_snippet
from store import json_default

_MAX_FRAME_SLACK = 64 * 1024
MAX_NAME_CHARS = 256
"""The longest provider name a call may carry; a longer one is answered ``unknown_tool``
without a lookup (near-name suggestions compare names, and would take seconds)."""
MAX_PENDING_BYTES = 256 * 1024 * 1024
"""The most argument bytes an execution's calls may hold while they wait to be answered."""
MAX_HELD_BYTES = 256 * 1024 * 1024
"""The most answer bytes the host holds for a worker that has not read them yet; further
calls wait to start until it reads."""
_CALLS_LOGGED = 20
_HOST_COMPILE_CHARS = 4096
"""Snippets up to this size are compiled (and cached) on the host, in a few milliseconds at
most, so never a stall of the event loop; larger ones compile in their own worker."""


class ProviderHost(Protocol):
    """What the runtime needs from whoever serves provider calls."""

    def catalog(self) -> Mapping[str, Sequence[str]]:
        """Namespace -> names of the callable providers in it (``git.status`` nests)."""
        ...

    async def call(
        self,
        namespace: str,
        name: str,
        arguments: dict[str, Any],
        positional: Sequence[Any] = (),
    ) -> Any:
        """Run one call; raise ProviderCallError for a failure the snippet should see.

        ``positional`` holds the arguments passed by position, in order."""
        ...

    def parameters(self, namespace: str, name: str) -> Sequence[str]:
        """The names positional arguments fill, in order (empty when unknown), so a call is
        recorded, and shown in recovery hints, as code that runs as written."""
        ...

    def help(self) -> Mapping[str, str]:
        """What ``help()`` shows in a snippet: ``""`` the overview, a namespace
        (``tools``) its calls, a call (``tools.read``) its signature and description."""
        ...


_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "fabric_call_deadline", default=None
)


def call_deadline() -> float | None:
    """When the execution whose provider call is running ends (``loop.time()``), or None
    outside an execution: a provider that waits on something slow stops in time to report."""
    return _DEADLINE.get()


class WorkerLost(Exception):
    """The worker died with its zygote before the snippet made any call: it is safe to run
    the snippet again on a fresh worker."""


_check_call = MessageCheck(_wire.CallMessage)


def _named(providers: ProviderHost, call: _wire.CallMessage) -> dict[str, Any]:
    """The call's arguments by parameter name (``argN`` only past the names known)."""
    try:
        args = call.get("args") or []
        known = args and len(call["name"]) <= MAX_NAME_CHARS
        names = list(providers.parameters(call["ns"], call["name"])) if known else []
    except Exception:  # a host without the method, or a name it does not know
        names = []
    by_position = {names[n] if n < len(names) else f"arg{n}": value for n, value in enumerate(args)}
    return by_position | call["kwargs"]


def _plain(value: Any) -> Any:
    """Provider results must be plain data; anything else is converted through JSON, a
    pydantic model (an MCP SDK's content block, say) wherever it stands as its JSON dump."""
    return json.loads(json.dumps(value, default=_dumped))


def _dumped(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return json_default(value)


_UNKNOWN_CODES = frozenset({"unknown_namespace", "unknown_tool"})


class _Calls:
    """Serves the worker's provider calls concurrently, within the execution's limits, and
    records each: the first ones whole (``CallRecord``), every one in its tool's totals."""

    def __init__(self, providers: ProviderHost, writer: asyncio.StreamWriter, limits: Limits):
        self._providers = providers
        self._writer = writer
        self._limits = limits
        self._gate = asyncio.Semaphore(limits.max_concurrent_calls)
        self._tasks: set[asyncio.Task[None]] = set()
        self._write_lock = asyncio.Lock()
        self._pending = 0  # argument bytes of calls not yet answered
        self._held = 0  # bytes of answers made and not yet written to the worker
        self._room = asyncio.Condition()
        self.count = 0
        self._records: list[dict[str, Any]] = []
        self._tallies: dict[str, dict[str, Any]] = {}

    def dispatch(self, raw: Any, size: int = 0) -> None:
        call = _check_call(raw)
        self.count += 1
        if self.count > self._limits.max_calls:
            raise ProtocolViolation(f"more than {self._limits.max_calls} provider calls")
        self._pending += size
        if self._pending > MAX_PENDING_BYTES:  # each waiting call holds its decoded arguments
            raise ProtocolViolation(
                f"the provider calls waiting for an answer hold more than {MAX_PENDING_BYTES} "
                "bytes of arguments; send large data in fewer calls at a time"
            )
        record: dict[str, Any] | None = None
        if len(self._records) < _CALLS_LOGGED:
            named = _named(self._providers, call)
            tool = f"{call['ns']}.{call['name']}"
            record = {"tool": tool, "args": _brief(named), "bytes_in": size}
            self._records.append(record)
        task = asyncio.get_running_loop().create_task(self._serve(call, size, record))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(
        self, call: _wire.CallMessage, size: int, record: dict[str, Any] | None
    ) -> None:
        labels = CallLabels()
        CURRENT.set(labels)  # this task's own context: the host labels this call
        try:
            async with self._gate:  # held until the answer is written: a worker that does
                async with self._room:  # not read its answers holds back more calls
                    await self._room.wait_for(lambda: self._held < MAX_HELD_BYTES)
                started = time.perf_counter()
                frame, code = await self._answer(call)
                ms = (time.perf_counter() - started) * 1000
                self._pending -= size
                size_out, self._held = len(frame), self._held + len(frame)
                self._account(f"{call['ns']}.{call['name']}", size, size_out, ms, code, labels)
                if record is not None:
                    record.update(ms=round(ms, 3), bytes_out=size_out, code=code)
                    record.update(risk=labels.risk, approval=labels.approval)
                try:
                    await self._write(frame)
                finally:
                    del frame
                    async with self._room:
                        self._held -= size_out
                        self._room.notify_all()
        except (ConnectionError, OSError):
            return  # the worker is gone: its result says why

    async def _write(self, frame: bytes) -> None:
        async with self._write_lock:  # frames must not interleave
            if not self._writer.is_closing():
                await _wire.write_frame(self._writer, frame)

    def _account(
        self, tool: str, size: int, out: int, ms: float, code: str | None, labels: CallLabels
    ) -> None:
        if code in _UNKNOWN_CODES:
            tool = "(unknown)"
        tally = self._tallies.get(tool)
        if tally is None:
            tally = self._tallies[tool] = {"tool": tool, "approvals": Counter()}
        tally["risk"] = labels.risk or tally.get("risk")
        for name, value in (
            ("calls", 1),
            ("failed", code is not None),
            ("ms", ms),
            ("bytes_in", size),
            ("bytes_out", out),
        ):
            tally[name] = tally.get(name, 0) + value
        if labels.approval is not None:
            tally["approvals"][labels.approval] += 1

    def recorded(self) -> dict[str, Any]:
        """The result's fields about calls: their count, the first ones, every tool's totals."""
        totals = tuple(
            CallTotals(
                **tally | {"ms": round(tally["ms"], 3), "approvals": dict(tally["approvals"])}
            )
            for tally in self._tallies.values()
        )
        log = tuple(CallRecord(**record) for record in self._records)
        return {"calls": self.count, "call_log": log, "call_totals": totals}

    async def _answer(self, call: _wire.CallMessage) -> tuple[bytes, str | None]:
        """The reply frame (the value, or an error the snippet sees as ToolError) and the
        error's code."""
        call_id, ns, name = call["id"], call["ns"], call["name"]
        if ns not in NAMESPACES:
            return _failure(call_id, "unknown_namespace", f"{ns[:80]} is not a namespace")
        if len(name) > MAX_NAME_CHARS:  # no provider has such a name: never looked up
            shown = f"{ns}.{name[:80]}..."
            message = f"{shown} is not a tool: names are at most {MAX_NAME_CHARS} characters"
            return _failure(call_id, "unknown_tool", message)
        qualified = f"{ns}.{name}"
        try:
            args = call.get("args") or []
            value = await self._providers.call(ns, name, call["kwargs"], args)
        except ProviderCallError as exc:
            return _failure(call_id, exc.code, exc.message)
        except Exception as exc:  # a provider's bug must not take the host down
            message = f"{qualified} failed: {type(exc).__name__}: {exc}"
            return _failure(call_id, "provider_failed", message)
        try:
            return _wire.encode_marshal(_wire.call_reply(call_id, value)), None
        except ValueError:
            pass
        try:
            value = _plain(value)
        except (TypeError, ValueError, RecursionError) as exc:
            return _failure(call_id, "bad_result", f"{qualified} returned non-plain data: {exc}")
        return _wire.encode_marshal(_wire.call_reply(call_id, value)), None

    async def cancel(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


@functools.lru_cache(maxsize=256)
def _compiled(code: str, seeded: tuple[str, ...] = ()) -> CodeType | None:
    """The snippet compiled under the sandbox policy, cached by its text.

    Host and worker run the same interpreter, so the code object crosses in the (trusted)
    host-to-worker marshal frame, and a repeated snippet is compiled once. A snippet that does
    not compile gets None: the worker compiles it and reports every problem, as before.
    """
    try:
        compiled, problems = compile_snippet(code, seeded)
    except (RecursionError, MemoryError, ValueError):
        return None
    return compiled if not problems else None


def _host_compiled(code: str, seeded: tuple[str, ...]) -> CodeType | None:
    """:func:`_compiled`, on the event loop, only when no other thread holds CPython's parser
    (the analyzer or a preview parsing a long text): waiting for it would stall the loop, and
    the worker compiles the snippet itself when it is not sent compiled."""
    if not AST_LOCK.acquire(blocking=False):
        return None
    try:
        return _compiled(code, seeded)
    finally:
        AST_LOCK.release()


def _wire_catalog(catalog: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Each namespace's names as one string, a name per line.

    A fresh string is not interned, so the worker does not add every provider name to its
    interned-string table, a table it shares with its parent until it writes to it."""
    return {
        ns: "".join(f"{name}\n" for name in names if "\n" not in name)
        for ns in NAMESPACES
        if (names := catalog.get(ns))
    }


def _help(providers: ProviderHost) -> dict[str, str]:
    """The host's help text; a host that cannot give it costs the snippet its help, not the
    execution."""
    try:
        return dict(providers.help())
    except Exception as exc:
        return {"": f"help is not available here ({type(exc).__name__}: {exc})"[:300]}


def _brief(kwargs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in list(kwargs.items())[:20]:
        if isinstance(value, str | int | float | bool) or value is None:
            out[name] = value[:200] if isinstance(value, str) else value
        else:
            out[name] = f"<{type(value).__name__}>"
    return out


def _failure(call_id: int, code: str, message: str) -> tuple[bytes, str]:
    if len(message) > MAX_FAILURE_CHARS:  # an error may echo what it was given: a 32 MB path
        cut = len(message) - MAX_FAILURE_CHARS
        message = f"{message[:MAX_FAILURE_CHARS]}... ({cut} more characters)"
    return _wire.encode_marshal(_wire.call_failure(call_id, code, message)), code


MAX_FAILURE_CHARS = 4096
"""The most characters of a provider error's message that reach the snippet."""


_SIGNAL_REASONS: dict[int, tuple[ErrorKind, str]] = {
    signal.SIGXCPU: ("timeout", "the snippet used up its CPU time limit"),
    signal.SIGALRM: ("timeout", "the snippet outlived its wall-clock limit"),
    signal.SIGSEGV: (
        "crash",
        "the worker crashed (segmentation fault), often from very deep recursion",
    ),
    signal.SIGKILL: ("crash", "the worker was killed (out of memory?)"),
    signal.SIGXFSZ: ("policy", "the snippet tried to write a file"),
}


def _crash_error(status: int, limits: Limits) -> ExecError:
    if status >= 0 and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        kind, reason = _SIGNAL_REASONS.get(sig, ("crash", "the worker died"))
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        limit = limits.timeout_s if kind == "timeout" else None
        return ExecError(
            kind=kind,
            type="WorkerDied",
            message=f"{reason} (signal {name})",
            limit=limit,
            hint="the next execution gets a fresh worker",
        )
    code = os.WEXITSTATUS(status) if status >= 0 and os.WIFEXITED(status) else None
    return ExecError(
        kind="crash",
        type="WorkerDied",
        message=f"the worker exited without a result (exit status {code})",
        hint="the next execution gets a fresh worker",
    )


def _finish(code: str, error: ExecError) -> ExecError:
    if error.line is not None and error.source_line is None:
        lines = code.splitlines()
        if 0 < error.line <= len(lines):
            error = error.model_copy(update={"source_line": lines[error.line - 1]})
    if error.hint is None:
        error = error.model_copy(update={"hint": _HINTS.get(error.kind)})
    return error


_HINTS: dict[str, str] = {
    "syntax": "fix the syntax; snippets are Python 3.11 run as the body of an async function",
    "policy": "snippets cannot reach private names, interpreter internals, files or modules "
    "outside the allowlist",
    "memory": "process the data in smaller pieces or return less",
    "timeout": "do less per execution, or raise the timeout",
}


def failed_result(
    code: str,
    error: ExecError,
    timings: Timings,
    *,
    logs: str = "",
    dropped: int = 0,
    calls: int = 0,
    call_log: tuple[CallRecord, ...] = (),
    call_totals: tuple[CallTotals, ...] = (),
) -> ExecResult:
    error = _finish(code, error)
    text = render_error(error)
    if logs:
        text += f"\n\n[printed output]\n{logs}"
    return ExecResult(
        ok=False,
        text=text,
        error=error,
        timings=timings,
        logs=logs,
        logs_dropped=dropped,
        calls=calls,
        call_log=call_log,
        call_totals=call_totals,
    )


_PROBE_LIMITS = Limits(timeout_s=10, memory_mb=64)


async def probe(worker: Worker, targets: dict[str, Any]) -> list[dict[str, Any]]:
    """Send the doctor's probe request to ``worker`` and collect its raw answers.

    The worker answers in two frames, the second after its ``exec`` attempt; when the
    connection ends between them, a program replaced the worker, so ``exec`` was not denied."""
    request = _wire.probe_request(targets, _PROBE_LIMITS.wire())
    answers: list[dict[str, Any]] = []
    frames = 0
    try:
        worker.writer.write(_wire.encode_marshal(request))
        async with asyncio.timeout(_PROBE_LIMITS.timeout_s + 5):
            while frames < 2:
                message, _ = await read_frame(worker.reader, 1024 * 1024)
                if not isinstance(message, dict) or message.get("op") != "probed":
                    break
                frames += 1
                answers.extend(a for a in message.get("probes") or [] if isinstance(a, dict))
    except (asyncio.IncompleteReadError, ConnectionError):
        if frames == 1:
            answers.append(
                {
                    "name": "exec",
                    "denied": False,
                    "detail": "the worker's connection ended after its exec attempt: "
                    "a program replaced it",
                }
            )
    except (TimeoutError, ProtocolViolation):
        pass
    finally:
        worker.kill()
    return answers


def _exec_error(wire: _wire.ResultError | None) -> ExecError:
    """The worker's account of a failure, as the host reports it."""
    if wire is None:
        return ExecError(kind="protocol", message="the worker failed without an error")
    problems = tuple(CompileIssue(**p) for p in wire.get("problems", ()))
    fields = {k: v for k, v in wire.items() if k != "problems"}
    return ExecError(**fields, problems=problems)


async def execute(
    worker: Worker,
    code: str,
    providers: ProviderHost,
    limits: Limits,
    *,
    render: bool = True,
    variables: Mapping[str, Any] | None = None,
    persist: int | None = None,
) -> ExecResult:
    """Run ``code`` on ``worker`` and return what happened. Never raises for snippet faults.

    With ``render=False`` a successful result's ``text`` is left empty, for a caller that
    renders the value itself (the boundary). The snippet starts with ``variables`` as its
    own top-level names; with ``persist`` (a byte cap) a successful result carries the
    plain-data variables it left, checked against that cap."""
    started = time.perf_counter()
    reader, writer = worker.reader, worker.writer
    deadline = _DEADLINE.set(asyncio.get_running_loop().time() + limits.timeout_s)
    calls = _Calls(providers, writer, limits)  # its calls' tasks see the deadline
    catalog = _wire_catalog(providers.catalog())
    max_frame = limits.max_result_bytes + limits.output_bytes * 4 + _MAX_FRAME_SLACK
    max_frame += persist or 0
    seeded = dict(variables or {})

    def timings(compile_ms: float = 0.0, run_ms: float = 0.0) -> Timings:
        total = (time.perf_counter() - started) * 1000
        return Timings(compile_ms=compile_ms, run_ms=run_ms, total_ms=total)

    try:
        # compiled here, the worker skips compiling (and reports errors when it is not)
        names = tuple(seeded)
        compiled = _host_compiled(code, names) if len(code) <= _HOST_COMPILE_CHARS else None
        request = _wire.exec_request(
            code, limits.wire(), catalog, compiled, variables=seeded, persist=persist
        )
        if "help" in code:  # the only way to the builtin is by its name: others skip the text
            request["help"] = _help(providers)
        writer.write(_wire.encode_marshal(request))
        budget = Budget()
        async with asyncio.timeout(limits.timeout_s):
            while True:
                message, size = await read_frame(reader, max_frame, budget)
                op = message.get("op") if isinstance(message, dict) else None
                if op == "call":
                    calls.dispatch(message, size)
                    continue
                if op != "result":
                    raise ProtocolViolation(f"unexpected message {str(op)[:40]!r}")
                if size >= OFF_LOOP_BYTES:
                    result = await validated_off_loop(message)
                else:
                    result = validated(message)
                if "parts" in result:
                    result = await assemble(
                        reader, result, max_frame, limits.max_result_bytes, budget
                    )
                measured = result["timings"]
                spent = timings(measured.get("compile_ms", 0.0), measured.get("run_ms", 0.0))
                logs, dropped = result["logs"], result.get("logs_dropped", 0)
                warnings = tuple(result.get("warnings", ()))
                if "error" in result or not result["ok"]:
                    error = _exec_error(result.get("error"))
                    return failed_result(
                        code,
                        error,
                        spent,
                        logs=logs,
                        dropped=dropped,
                        **calls.recorded(),
                    ).model_copy(update={"warnings": warnings})
                value = result.get("value")
                kept: tuple[dict[str, Any] | None, int] = (None, 0)
                if persist is not None:
                    kept = await kept_variables(result.get("variables"), persist, size)
                elif "variables" in result:
                    raise ProtocolViolation("the worker sent variables it was not asked for")
                text = (
                    render_output(value, logs, dropped) + render_notes(warnings) if render else ""
                )
                return ExecResult(
                    ok=True,
                    text=text,
                    value=value,
                    logs=logs,
                    logs_dropped=dropped,
                    timings=spent,
                    warnings=warnings,
                    **calls.recorded(),
                    variables=kept[0],
                    variables_bytes=kept[1],
                )
    except TimeoutError:
        worker.kill()
        error = ExecError(
            kind="timeout",
            type="TimeoutError",
            message=f"the snippet ran longer than its {limits.timeout_s:g} s "
            "wall-clock limit and was stopped",
            limit=limits.timeout_s,
        )
        return failed_result(code, error, timings(), **calls.recorded())
    except TooComplex as exc:
        worker.kill()
        error = ExecError(kind="limit", type="ResultTooComplex", message=str(exc))
        return failed_result(code, error, timings(), **calls.recorded())
    except MemoryError:  # the host could not hold what the worker sent: the host goes on
        worker.kill()
        error = ExecError(
            kind="limit",
            type="ResultTooLarge",
            message="the host ran out of memory taking the result",
            hint="return less, or store it from the snippet: `await ctx.offload(value)`",
        )
        return failed_result(code, error, timings(), **calls.recorded())
    except ProtocolViolation as exc:
        worker.kill()
        error = ExecError(
            kind="protocol",
            type="ProtocolError",
            message=str(exc),
            hint="the worker was stopped; the next execution gets a fresh one",
        )
        return failed_result(code, error, timings(), **calls.recorded())
    except (asyncio.IncompleteReadError, ConnectionError):
        try:
            status = await asyncio.wait_for(asyncio.shield(worker.exit_status), 2)
        except TimeoutError:
            worker.kill()
            status = -1
        if status == ZYGOTE_GONE and calls.count == 0:
            raise WorkerLost("the worker died with its zygote before it ran anything") from None
        return failed_result(code, _crash_error(status, limits), timings(), **calls.recorded())
    finally:
        await calls.cancel()
        _DEADLINE.reset(deadline)
