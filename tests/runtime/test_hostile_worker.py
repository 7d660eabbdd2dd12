"""The host trusts nothing a worker sends. The test plays a compromised worker over a socket
pair and sends what such a worker might; every case ends as an error result, never an
exception, and the worker is killed."""

from __future__ import annotations

import asyncio
import json
import keyword
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract import NAMESPACES
from runtime import ExecResult, Limits, NoProviders, ProviderCallError, _execution
from runtime._execution import ProviderHost, execute
from runtime._pool import Worker
from runtime.worker import _wire
from runtime.worker._variables import size_of


def frame(body: bytes, codec: int = _wire.JSON) -> bytes:
    return _wire.HEADER.pack(len(body), codec) + body


def result(**fields: Any) -> bytes:
    return frame(
        json.dumps({"op": "result", "ok": True, "timings": {}, "logs": "", **fields}).encode()
    )


async def run_against(
    act: Callable[[socket.socket], Awaitable[None]],
    limits: Limits | None = None,
    persist: int | None = None,
    providers: ProviderHost | None = None,
) -> tuple[ExecResult, list[int]]:
    """Run one execution whose worker is ``act``; returns the result and the kills.
    ``persist`` asks the worker to hand its variables back within that many bytes."""
    host, hostile = socket.socketpair()
    hostile.setblocking(False)
    reader, writer = await asyncio.open_unix_connection(sock=host)
    loop = asyncio.get_running_loop()
    exit_status: asyncio.Future[int] = loop.create_future()
    kills: list[int] = []

    def kill(worker_id: int) -> None:
        kills.append(worker_id)
        if not exit_status.done():
            exit_status.set_result(9)
        hostile.close()

    worker = Worker(7, reader, writer, exit_status, kill)

    async def behave() -> None:
        await loop.sock_recv(hostile, 1 << 20)  # the exec request
        await act(hostile)

    actor = asyncio.ensure_future(behave())
    try:
        done = await execute(
            worker,
            "return 1",
            providers or NoProviders(),
            limits or Limits(timeout_s=5),
            persist=persist,
        )
    finally:
        actor.cancel()
        writer.close()
    return done, kills


def sends(*frames: bytes) -> Callable[[socket.socket], Awaitable[None]]:
    async def act(sock: socket.socket) -> None:
        for data in frames:
            await asyncio.get_running_loop().sock_sendall(sock, data)

    return act


async def test_nan_from_a_worker_is_a_protocol_error() -> None:
    """The host parses strict JSON: a NaN token is refused, not turned into a float."""
    done, kills = await run_against(sends(frame(b'{"op": "result", "ok": true, "value": NaN}')))
    assert done.error is not None and done.error.kind == "protocol"
    assert "NaN is not JSON" in done.error.message
    assert kills == [7]


async def test_marshal_from_a_worker_is_refused() -> None:
    """Only the host may send marshal; a worker's marshal frame is a protocol error."""
    done, kills = await run_against(sends(frame(b"\xe9\x01\x00\x00\x00", _wire.MARSHAL)))
    assert done.error is not None and done.error.kind == "protocol"
    assert "not accepted" in done.error.message and kills == [7]


async def test_an_oversized_frame_is_refused_before_it_is_read() -> None:
    """The size cap is checked against the header."""
    limits = Limits(timeout_s=5, max_result_bytes=1024, output_bytes=0)
    huge = _wire.HEADER.pack(50_000_000, _wire.JSON)
    done, kills = await run_against(sends(huge), limits)
    assert done.error is not None and "exceeds" in done.error.message and kills == [7]


async def test_slices_that_do_not_fit_their_announcement_are_refused() -> None:
    """A sliced value whose parts are of the wrong kind, or whose path leads nowhere, is a
    protocol error."""
    wrong_kind = sends(
        result(value=[], parts={"path": [], "kind": "list", "count": 1}),
        frame(b'{"a": 1}'),
    )
    done, kills = await run_against(wrong_kind)
    assert done.error is not None and "a slice of a list is a dict" in done.error.message
    assert kills == [7]
    nowhere = sends(result(value={"a": []}, parts={"path": ["b"], "kind": "list", "count": 1}))
    done, _ = await run_against(nowhere)
    assert done.error is not None and "no entry 'b'" in done.error.message
    not_empty = sends(result(value=[1], parts={"path": [], "kind": "list", "count": 1}))
    done, _ = await run_against(not_empty)
    assert done.error is not None and "not an empty container" in done.error.message


async def test_slices_beyond_the_result_limit_are_refused() -> None:
    """Slices cannot add up to more than the result limit."""
    limits = Limits(timeout_s=5, max_result_bytes=1024)
    parts = [frame(json.dumps(list(range(60))).encode()) for _ in range(5)]  # 5 x 230 bytes
    done, _ = await run_against(
        sends(result(value=[], parts={"path": [], "kind": "list", "count": 5}), *parts), limits
    )
    assert done.error is not None and "exceed the result limit" in done.error.message


async def test_many_small_slices_are_charged_to_the_budget() -> None:
    """Slices too small to decode off the loop still count: 14 of 240 KB make 1.1M lists."""
    piece = frame(b"[" + b"[]," * 80_000 + b"[]]")
    done, kills = await run_against(
        sends(result(value=[], parts={"path": [], "kind": "list", "count": 14}), *[piece] * 14),
        Limits(timeout_s=120),  # the budget, not the clock, must stop it on a loaded machine
    )
    assert done.error is not None and done.error.type == "ResultTooComplex", done.text
    assert kills == [7]


async def test_well_formed_slices_assemble() -> None:
    """The same protocol, honestly used, gives back the whole value."""
    done, _ = await run_against(
        sends(
            result(
                value={"n": 2, "rows": []}, parts={"path": ["rows"], "kind": "list", "count": 2}
            ),
            frame(b"[1, 2]"),
            frame(b"[3]"),
        )
    )
    assert done.ok and done.value == {"n": 2, "rows": [1, 2, 3]}


async def test_a_worker_that_says_nothing_times_out_and_is_killed() -> None:
    """Silence is a timeout, not a hang."""

    async def silent(sock: socket.socket) -> None:
        await asyncio.Event().wait()

    done, kills = await run_against(silent, Limits(timeout_s=0.5))
    assert done.error is not None and done.error.kind == "timeout" and kills == [7]


async def test_a_call_the_protocol_does_not_declare_is_refused_naming_the_field() -> None:
    """Calls are checked against the protocol's own declaration (CallMessage): a wrong type,
    an extra key or a missing one stops the worker, and the error names the field."""
    good = {"op": "call", "id": 1, "ns": "tools", "name": "read", "kwargs": {}}
    for bad, field in [
        ({**good, "id": "1"}, "id"),
        ({**good, "extra": 1}, "extra"),
        ({k: v for k, v in good.items() if k != "kwargs"}, "kwargs"),
    ]:
        done, kills = await run_against(sends(frame(json.dumps(bad).encode())))
        assert done.error is not None and done.error.kind == "protocol", done.text
        assert f"malformed CallMessage: {field}:" in done.error.message
        assert kills == [7]


async def test_a_key_the_protocol_lets_a_call_omit_may_not_be_null() -> None:
    call = {"op": "call", "id": 1, "ns": "tools", "name": "read", "kwargs": {}, "args": None}
    done, kills = await run_against(sends(frame(json.dumps(call).encode())))
    assert done.error is not None and done.error.kind == "protocol"
    assert "malformed CallMessage: args:" in done.error.message and kills == [7]


async def test_a_result_the_protocol_does_not_declare_is_refused_naming_the_field() -> None:
    """The result message is checked against its declaration (``_wire.ResultMessage``): a
    key it does not have, a value of the wrong type, a nested error with a key of its own or
    a kind it does not know, and an announcement of no slices are protocol errors."""
    cases = {
        "handle": result(value=1, handle="h-1"),
        "ok": frame(b'{"op": "result", "ok": "yes", "timings": {}, "logs": ""}'),
        "error.kind": result(
            ok=False,
            error={"kind": "mystery", "type": "", "message": "m", "line": None, "column": None},
        ),
        "error.secret": result(
            ok=False,
            error={
                "kind": "runtime",
                "type": "",
                "message": "m",
                "line": None,
                "column": None,
                "secret": 1,
            },
        ),
        "parts.count": result(value=[], parts={"path": [], "kind": "list", "count": 0}),
    }
    for field, sent in cases.items():
        done, kills = await run_against(sends(sent))
        assert done.error is not None and done.error.kind == "protocol", field
        assert kills == [7], field
        assert done.error.message.startswith(f"malformed ResultMessage: {field}"), (
            field,
            done.error.message,
        )


async def test_kept_variables_are_checked_like_every_other_message() -> None:
    """Variables a worker hands on are checked as the worker must have made them: too many
    bytes, names a snippet cannot bind, a value that is not a dict, or variables nobody asked
    for, each end as a protocol error with the worker killed; well-made ones are kept."""
    good, kills = await run_against(sends(result(value=1, variables={"n": [1, 2]})), persist=100)
    assert (
        good.ok and good.variables == {"n": [1, 2]} and good.variables_bytes == len('{"n": [1, 2]}')
    )
    assert kills == []
    hostile = {
        "above the 100-byte cap": {"big": "x" * 200},
        "a variable named '__class__'": {"__class__": 1},
        "a variable named 'not a name'": {"not a name": 1},
        "a variable named 'tools'": {"tools": 1},
        "a variable named 'class'": {"class": 1},
        "variables: Input should be a valid dictionary": ["a", "list"],
    }
    for problem, variables in hostile.items():
        done, kills = await run_against(sends(result(value=1, variables=variables)), persist=100)
        assert done.error is not None and done.error.kind == "protocol", problem
        assert problem in done.error.message, done.error.message
        assert kills == [7]
    unasked, kills = await run_against(sends(result(value=1, variables={"n": 1})))
    assert unasked.error is not None and "not asked for" in unasked.error.message
    assert kills == [7]


async def test_a_flood_of_kept_variables_is_refused() -> None:
    """More variables than any snippet keeps is refused before their sizes are measured."""
    many = {f"v{i}": 0 for i in range(10_001)}
    done, kills = await run_against(sends(result(value=1, variables=many)), persist=10**6)
    assert done.error is not None and "more than 10000" in done.error.message
    assert kills == [7]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(variables=st.dictionaries(st.text(max_size=12), _JSON, max_size=6))
async def test_any_variables_a_worker_sends_are_kept_whole_or_refused(
    variables: dict[str, Any],
) -> None:
    """Whatever variables a worker sends, the host either keeps exactly them (names a
    snippet binds, within the cap) or stops the worker with a protocol error; never more,
    never a crash."""
    cap = 200
    done, kills = await run_against(sends(result(value=1, variables=variables)), persist=cap)
    bindable = all(
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("_")
        and name not in NAMESPACES
        for name in variables
    )
    if bindable and size_of(variables) <= cap:
        assert done.ok and done.variables == variables and kills == []
    else:
        assert done.error is not None and done.error.kind == "protocol" and kills == [7]


def call(call_id: int, name: str = "read", **kwargs: Any) -> bytes:
    message = {"op": "call", "id": call_id, "ns": "tools", "name": name, "kwargs": kwargs}
    return frame(json.dumps(message).encode())


class Counting(NoProviders):
    """Answers every ``tools.*`` call with ``answer`` and counts the calls it was asked; any
    lookup of a name longer than the protocol's limit is a failure of the test."""

    def __init__(self, answer: Any = "ok") -> None:
        self.answer, self.asked = answer, 0

    def parameters(self, namespace: str, name: str) -> Sequence[str]:
        assert len(name) <= _execution.MAX_NAME_CHARS, "a long name was looked up"
        return ()

    async def call(
        self, namespace: str, name: str, arguments: dict[str, Any], positional: Sequence[Any] = ()
    ) -> Any:
        assert len(name) <= _execution.MAX_NAME_CHARS, "a long name was looked up"
        self.asked += 1
        return self.answer


async def test_a_call_with_a_very_long_name_is_answered_without_a_lookup() -> None:
    """A 5 MB provider name (``getattr(mcp.time, "x" * 5_000_000)``) would have the host
    compare it with every name it knows, for seconds, on its event loop: it is answered
    ``unknown_tool`` at once, its name cut in the message."""
    providers = Counting()
    got: list[bytes] = []

    async def act(sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        await loop.sock_sendall(sock, call(1, "x" * 5_000_000, path="a"))
        got.append(await loop.sock_recv(sock, 1 << 16))
        await loop.sock_sendall(sock, result(value=1))

    done, _ = await run_against(act, providers=providers)
    assert done.ok, done.text
    reply = _wire.decode(got[0][4], got[0][_wire.HEADER.size :], trust_marshal=True)
    assert reply["error"]["code"] == "unknown_tool"
    assert "names are at most 256 characters" in reply["error"]["message"]
    assert len(reply["error"]["message"]) < 300 and providers.asked == 0


async def test_calls_waiting_with_too_many_argument_bytes_stop_the_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each waiting call holds its decoded arguments: past the budget of argument bytes in
    flight, the worker is stopped (a compromised one sent 200 frames of 32 MB)."""
    monkeypatch.setattr(_execution, "MAX_PENDING_BYTES", 10_000)
    frames = [call(n, path="p" * 4_000) for n in range(1, 4)]
    done, kills = await run_against(sends(*frames), Limits(timeout_s=5, max_concurrent_calls=1))
    assert done.error is not None and done.error.kind == "protocol", done.text
    assert "hold more than 10000 bytes of arguments" in done.error.message
    assert kills == [7]


async def test_a_worker_that_never_reads_its_answers_gets_no_more_of_them_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Answers the worker has not read are held by the host: once they pass the budget, no
    further call is started until the worker reads (one that never does held gigabytes of
    answers in the host before). Twenty calls, each answered with 4 MB: one is made."""
    monkeypatch.setattr(_execution, "MAX_HELD_BYTES", 1_000_000)
    providers = Counting("a" * 4_000_000)
    frames = [call(n, path="a") for n in range(1, 21)]
    done, _ = await run_against(sends(*frames), Limits(timeout_s=1), providers=providers)
    assert done.error is not None and done.error.kind == "timeout", done.text
    assert providers.asked == 1


async def test_a_frame_nested_past_what_crosses_is_a_protocol_error() -> None:
    """The worker refuses values deeper than 100 levels itself; one that sends one anyway
    (a compromised worker) is stopped before the value reaches a serializer."""
    done, kills = await run_against(
        sends(
            frame(
                b'{"op": "result", "ok": true, "timings": {}, '
                b'"logs": "", "value": ' + b"[" * 200 + b"]" * 200 + b"}"
            )
        )
    )
    assert done.error is not None and done.error.kind == "protocol", done.text
    assert "a frame nests deeper than 100 levels" in done.error.message and kills == [7]


class Echoing(NoProviders):
    """Fails every call with an error that echoes its (huge) argument, as a path error does."""

    async def call(
        self, namespace: str, name: str, arguments: dict[str, Any], positional: Sequence[Any] = ()
    ) -> Any:
        raise ProviderCallError(f"no such file: {arguments['path']}", code="not_found")


async def test_a_provider_error_echoing_a_huge_argument_reaches_the_snippet_cut() -> None:
    got: list[bytes] = []

    async def act(sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        await loop.sock_sendall(sock, call(1, path="p" * 1_000_000))
        got.append(await loop.sock_recv(sock, 1 << 16))
        await loop.sock_sendall(sock, result(value=1))

    done, _ = await run_against(act, providers=Echoing())
    assert done.ok, done.text
    reply = _wire.decode(got[0][4], got[0][_wire.HEADER.size :], trust_marshal=True)
    message = reply["error"]["message"]
    assert len(message) < 4200 and message.endswith(f"... ({1_000_014 - 4096} more characters)")
