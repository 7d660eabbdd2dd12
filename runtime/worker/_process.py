"""The worker process: confine itself, wait for one snippet, run it, report, exit.

``serve(sock, prepared, kernel)`` runs in a freshly forked child. Before the snippet arrives it
isolates itself (its own session, no descriptors but the protocol socket, no capabilities or
``nobody``, no new processes, file writes or core dumps); a spare then rehearses an execution;
then the worker locks itself down (``no_new_privs``, Landlock, seccomp: see
:mod:`runtime.worker._confine`) and a spare fills its heap. When the ``exec`` message arrives
it applies the execution's CPU, memory and wall-clock limits, runs the snippet (compiled by the
host, or here) on an asyncio loop with provider calls going to the host, and sends back exactly
one ``result`` message. A ``probe`` message (``fabric doctor``) runs the fixed probes of
:mod:`runtime.worker._probes` instead. Each worker serves one request only.
"""

from __future__ import annotations

import asyncio
import gc
import math
import os
import resource
import signal
import socket
import sys
import time
from types import CodeType, CoroutineType
from typing import Any, NoReturn

from contract import NAMESPACES
from runtime.worker import _audit, _probes, _results, _variables, _wire
from runtime.worker._asyncio import HANDLES, settle
from runtime.worker._builtins import build_builtins
from runtime.worker._channel import Channel, HostLink, Namespace, ProviderFunction
from runtime.worker._confine import Kernel
from runtime.worker._exact import exact
from runtime.worker._formatting import BoundFormat
from runtime.worker._guards import (
    InstanceDict,
    NumericStore,
    SliceStore,
    SnippetClasses,
    make_guards,
)
from runtime.worker._heap import HEAP_MB, Heap
from runtime.worker._help import Help
from runtime.worker._modules import (
    Facade,
    build_facades,
    facade_members,
    make_import,
)
from runtime.worker._output import Output
from runtime.worker._policy import MAIN, CompileProblem, compile_snippet
from runtime.worker._results import encode_result, exception_error
from runtime.worker._values import Admission
from runtime.worker._vetted import ADOPTION, GUARDED_MAKERS
from runtime.worker._wire import WireLimits

MAX_EXEC_MESSAGE = 64 * 1024 * 1024
_REQUEST_BUFFER = 64 * 1024


def _address_space() -> int:
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def limit_values(limits: WireLimits, address_space: int) -> tuple[int, int, int]:
    """CPU seconds, address-space bytes and alarm seconds for an execution's limits."""
    timeout = math.ceil(float(limits["timeout_s"]))
    budget = address_space + int(limits["memory_mb"]) * 1024 * 1024
    return timeout + 1, budget, timeout + 2


def apply_limits(limits: WireLimits, address_space: int) -> None:
    cpu, budget, alarm = limit_values(limits, address_space)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (budget, budget))
    signal.alarm(alarm)  # default action kills: a last resort after the host


_REHEARSAL = (
    "import json\n"
    "rows = [{'id': i, 'name': str(i)} for i in range(3)]\n"
    "text = await tools.read(path='notes.txt')\n"
    "print(len(rows), text)\n"
    "return {'n': len(rows), 'text': text, 'first': json.dumps(rows[0])}\n"
)
_REHEARSAL_LIMITS: WireLimits = {
    "timeout_s": 1,
    "memory_mb": 64,
    "output_bytes": 4096,
    "max_calls": 1,
    "max_result_bytes": 65536,
    "max_concurrent_calls": 1,
}


class Prepared:
    """Everything a worker needs before its snippet arrives, so the snippet waits for none of it.

    The zygote builds one (facades, the compiled rehearsal, an emergency memory reserve, the
    request buffer) and every forked worker inherits a pristine copy for free. The worker then
    adds what is its own: fresh builtins and guards, a rehearsed execution path, and a heap
    faulted in while it waits.
    """

    def __init__(self) -> None:
        self.facades = build_facades()
        self.rehearsal, _ = compile_snippet(_REHEARSAL)
        self.reserve: bytearray | None = bytearray(1 << 20)
        self.buffer = bytearray(_REQUEST_BUFFER)
        self.heap = Heap()
        self.reset()

    def reset(self) -> None:
        """Fresh per-execution state: output, help and globals."""
        self.output = Output()
        self.help = Help()
        self.globals = self._globals()

    async def rehearse(self) -> None:
        """Run one execution end to end over a private socket pair, host replies included.

        A forked worker shares its parent's memory until it writes to it, and every first
        write faults. Rehearsing walks the request read, compile result, provider call, print,
        result encoding and write once, so the real execution finds those pages its own.
        """
        ours, host = socket.socketpair()
        with ours, host:
            request = _wire.exec_request(
                _REHEARSAL, _REHEARSAL_LIMITS, {"tools": "read\n"}, self.rehearsal
            )
            host.sendall(_wire.encode_marshal(request))
            link = await _connect(ours)
            received = _wire.receive_frame(
                ours, self.buffer, max_bytes=MAX_EXEC_MESSAGE, trust_marshal=True
            )
            host.sendall(_wire.encode_marshal(_wire.call_reply(1, "hello")))
            limit_values(received["limits"], _address_space())
            result = await _run(link, received, self)
            for frame in encode_result(result, _REHEARSAL_LIMITS):
                await _wire.write_frame(link, frame)
            host.shutdown(socket.SHUT_WR)
            await link.closed
            link.close()
        self.reset()

    def _globals(self) -> dict[str, Any]:
        classes = SnippetClasses()
        admission = Admission(
            facade_members(self.facades),
            (
                *(Facade, Namespace, ProviderFunction, BoundFormat, *HANDLES),
                *(InstanceDict, NumericStore, SliceStore, *GUARDED_MAKERS),
            ),
            classes.defined,
        )
        guards = make_guards(admission, classes)
        table = build_builtins(self.output.print, make_import(self.facades), guards, self.help)
        for value in table.values():
            admission.vet(value)
        ADOPTION.adopt, ADOPTION.vet = classes.adopt, admission.vet
        ADOPTION.getattr, ADOPTION.getitem = guards.builtins["getattr"], guards.getitem
        ADOPTION.owns, ADOPTION.makes_own = classes.owns, classes.makes_own
        ADOPTION.vetted = admission.is_vetted
        ADOPTION.admit, ADOPTION.result = guards.admit, guards.result
        ADOPTION.call, ADOPTION.iter, ADOPTION.write = guards.call[0], guards.iter, guards.write
        ADOPTION.setattr = guards.builtins["setattr"]
        ADOPTION.make_class = classes.metaclass
        return {
            "__builtins__": table,
            "__name__": "__main__",
            "__annotations__": {},
            "__metaclass__": classes.metaclass,
            **guards.as_globals(),
            "_type_": type,  # the parameter checks' (see _policy._admit_parameters)
            "_free_": admission.free,
        }


async def _run(
    link: HostLink,
    request: _wire.ExecRequest,
    prepared: Prepared,
) -> _wire.ResultMessage:
    limits = request["limits"]
    output = prepared.output
    output.cap = int(limits["output_bytes"])
    started = time.perf_counter()
    given = request.get("compiled")
    code: CodeType | None
    problems: list[CompileProblem]
    if isinstance(given, CodeType):  # compiled by the host under the same policy
        code, problems = given, []
    else:
        with _audit.trusted():
            code, problems = compile_snippet(request["code"], tuple(request.get("variables", ())))
    compiled = time.perf_counter()
    timings = {"compile_ms": (compiled - started) * 1000, "run_ms": 0.0}
    if code is None:
        first = problems[0]
        listed: list[_wire.ResultProblem] = [
            {"kind": p.kind, "message": p.message, "line": p.line, "column": p.column}
            for p in problems
        ]
        refused: _wire.ResultMessage = {
            "op": "result",
            "ok": False,
            "timings": timings,
            "logs": "",
            "error": _results.error(
                "syntax" if first.kind == "syntax" else "policy",
                first.message,
                line=first.line,
                column=first.column,
                problems=listed,
            ),
        }
        return refused

    prepared.help._load(request.get("help"))
    channel = Channel(link, max_calls=int(limits["max_calls"]))
    glb = prepared.globals
    for ns in NAMESPACES:
        glb[ns] = Namespace(channel, ns, sorted(request["namespaces"].get(ns, "").splitlines()))
    value: Any = None
    error: _wire.ResultError | None = None
    scope: Any = None
    try:
        with _audit.trusted():
            exec(code, glb)  # defines the snippet's main; none of its statements run yet
        glb.update(request.get("variables", {}))  # kept by the last execution: its globals
        main = glb.pop(MAIN)()
        if "persist" in request:
            scope = main.cr_frame  # it keeps the top-level names once main has returned
        try:
            value = await main
        finally:
            settle()  # a timeout or task group it left entered never cancels the runtime
        if isinstance(value, CoroutineType):  # snippets cannot define other awaitables
            value.close()
            value = None
            error = _results.error(
                "runtime",
                "the snippet returned a coroutine: add await, "
                "e.g. `return await tools.read(path=...)`",
                type_name="TypeError",
            )
    except BaseException as exc:  # snippet code may raise anything, SystemExit included
        prepared.reserve = None  # room to report a MemoryError
        glb.clear()
        error = exception_error(exc, limits)
        del exc
        gc.collect()
    if error is None:
        try:  # what the encoder reads is then exact types: it runs no snippet code
            value = exact(value)
        except BaseException as exc:
            value = None
            error = _results.unreturnable(exc, limits)
    timings["run_ms"] = (time.perf_counter() - compiled) * 1000
    result: _wire.ResultMessage = {
        "op": "result",
        "ok": error is None,
        "timings": timings,
        "logs": output.text(),
        "logs_dropped": output.dropped,
        "calls": channel.calls,
    }
    if error is not None:
        result["error"] = error
    else:
        result["value"] = value
        if scope is not None:
            _keep_variables(result, scope, glb, request["persist"])
    return result


def _keep_variables(
    result: _wire.ResultMessage, frame: Any, glb: dict[str, Any], max_bytes: int
) -> None:
    """``result`` with the snippet's top-level plain-data variables (its main's locals, and
    the globals its functions bound), and a note naming those dropped (persistVariables)."""
    try:
        with _audit.trusted():  # the frame's read alone: no snippet code runs in the window
            frame_locals = frame.f_locals
        scope = {k: v for k, v in glb.items() if type(k) is str and not k.startswith("_")}
        scope.update(frame_locals)
        kept, _, note = _variables.collect(scope, max_bytes, (Facade, Namespace))
    except MemoryError:  # the result must still leave
        kept, note = {}, "persistVariables: nothing kept: measuring the variables ran out of memory"
    except BaseException as exc:  # a snippet's code run while they were read
        kept = {}
        note = f"persistVariables: nothing kept: reading the variables raised {type(exc).__name__}"
    result["variables"] = kept
    if note is not None:
        result["warnings"] = [*result.get("warnings", []), note]


async def _connect(sock: socket.socket) -> HostLink:
    _, link = await asyncio.get_running_loop().create_unix_connection(HostLink, sock=sock)
    return link


async def _serve(sock: socket.socket, prepared: Prepared, kernel: Kernel, *, spare: bool) -> None:
    if spare:  # time to spare: make the real run find its pages its own
        await prepared.rehearse()
    link = await _connect(sock)
    # Measured before the heap is filled: the heap is part of the snippet's memory.
    address_space = _address_space()
    prepared.heap.watch_load()  # opened now: once locked, the worker opens nothing
    kernel.lock()
    if spare and not kernel.failure:
        prepared.heap.fill(sock)
    request = _wire.receive_frame(
        sock, prepared.buffer, max_bytes=MAX_EXEC_MESSAGE, trust_marshal=True
    )
    if request.get("op") == "probe":
        apply_limits(request["limits"], address_space)
        await _probe(link, request, kernel)
    else:
        if int(request["limits"]["memory_mb"]) < 4 * HEAP_MB:
            prepared.heap.release()  # its free blocks would take the snippet past a small limit
        apply_limits(request["limits"], address_space)
        if kernel.failure:
            result = _unconfined(kernel.failure)
        else:
            _audit.install()
            result = await _run(link, request, prepared)
        link.answered = True  # a task the snippet left running calls nothing more
        async with link.writing:  # and a call frame it began goes out whole, before these
            for frame in encode_result(result, request["limits"]):
                await _wire.write_frame(link, frame)
    # Stay until the host hangs up: closing with replies still unread would reset the
    # connection and could cost the host the result it has not read yet.
    await link.closed


def _unreported(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's report of a task whose exception nobody read, or of a callback that
    raised: nobody reads the worker's stderr, and asyncio's default report formats the
    exception, which runs the snippet's ``__str__`` or ``__repr__`` from a task's finalizer,
    whenever the collector decides, inside the runtime's own work."""


def _unconfined(failure: str) -> _wire.ResultMessage:
    """The answer of a worker that must not run its snippet: it could not confine itself."""
    return {
        "op": "result",
        "ok": False,
        "timings": {"compile_ms": 0.0, "run_ms": 0.0},
        "logs": "",
        "error": _results.error(
            "policy", f"{failure}; the snippet was not run", type_name="Isolation"
        ),
    }


async def _probe(link: HostLink, request: _wire.ProbeRequest, kernel: Kernel) -> None:
    """Run the doctor's probes with the language layer bypassed, then try ``exec`` last.

    The first frame carries every probe but ``exec``; the second, ``exec``'s own result. A host
    that gets the first and then loses the connection knows ``exec`` replaced the worker."""
    targets: dict[str, Any] = request["targets"]
    found = [_probes.run(name, targets.get(name)) for name in _probes.PROBES if name != "exec"]
    note = kernel.failure
    await _wire.write_frame(
        link, _wire.encode_json({"op": "probed", "probes": found, "note": note})
    )
    last = _probes.try_exec(str(targets["exec"]))
    await _wire.write_frame(link, _wire.encode_json({"op": "probed", "probes": [last]}))


def serve(
    sock: socket.socket, prepared: Prepared, kernel: Kernel, *, spare: bool = True
) -> NoReturn:
    """Main of a forked worker, given the zygote's ``Prepared`` and ``Kernel``. Never returns.

    A ``spare`` rehearses and fills its heap while it waits; a worker forked for a request
    that is already on its way skips both, since nothing would be gained by them."""
    status = 0
    try:
        kernel.isolate(sock.fileno())
        sys.stdin = sys.stdout = sys.stderr = None
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(_unreported)
        work = loop.create_task(_serve(sock, prepared, kernel, spare=spare))
        while True:
            try:
                loop.run_until_complete(work)
                break
            except (SystemExit, KeyboardInterrupt):
                # raised in a callback of the loop's own (an abandoned async generator's
                # finally, which asyncio closes in a task of its own): the loop stopped,
                # the work goes on
                if work.done():
                    raise
    except BaseException:
        status = 70
    finally:
        os._exit(status)
