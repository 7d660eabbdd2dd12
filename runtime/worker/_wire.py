"""Framing and codecs of the host <-> worker protocol.

A frame is a 5-byte header (big-endian body length, one codec byte) and a body.
Two codecs exist and each direction uses exactly one:

* ``J`` (JSON, worker -> host): the host trusts nothing the worker sends, so it only
  ever parses JSON, with a size cap checked against the header before reading.
  ``bytes`` travel as ``{"\\u0000bytes": "<base64>"}``.
* ``M`` (marshal, host -> worker): the worker trusts the host, and marshal moves large
  tool results into the sandbox at memory speed.

This module imports only the standard library: the worker side must fork cheaply. (No
``from __future__ import annotations`` here: the message ``TypedDict``s need their
``NotRequired`` keys evaluated, which string annotations hide on Python 3.11.)
"""

import asyncio
import base64
import binascii
import json
import marshal
import select
import socket
import struct
from typing import Any, Literal, NotRequired, Protocol, TypedDict

HEADER = struct.Struct(">IB")
JSON = ord("J")
MARSHAL = ord("M")
BYTES_TAG = "\x00bytes"


class WireError(Exception):
    """A frame that breaks the protocol: oversized, unknown codec, or undecodable."""


# -- the messages, declared once: the host validates what the worker sends against these, and
# both sides (the rehearsal too) build what they send with the builders below.


class WireLimits(TypedDict):
    """``runtime.Limits`` as the worker receives it."""

    timeout_s: float
    memory_mb: int
    output_bytes: int
    max_result_bytes: int
    max_calls: int
    max_concurrent_calls: int


class ExecRequest(TypedDict):
    """Host -> worker: run this snippet."""

    op: Literal["exec"]
    code: str
    limits: WireLimits
    namespaces: dict[str, str]
    """Namespace -> its provider names, one per line."""
    compiled: NotRequired[Any]
    """The snippet compiled by the host under the same policy (a code object)."""
    variables: NotRequired[dict[str, Any]]
    """Variables an earlier execution kept, which the snippet starts with (persistVariables)."""
    persist: NotRequired[int]
    """Send the snippet's top-level plain-data variables back, within this many bytes."""
    help: NotRequired[dict[str, str]]
    """What ``help()`` shows: ``""`` the overview, a namespace or a call its text."""


class ProbeRequest(TypedDict):
    """Host -> worker: run the doctor's probes instead of a snippet."""

    op: Literal["probe"]
    targets: dict[str, Any]
    limits: WireLimits


class CallMessage(TypedDict):
    """Worker -> host: a provider call."""

    op: Literal["call"]
    id: int
    ns: str
    name: str
    kwargs: dict[str, Any]
    args: NotRequired[list[Any]]


class ReplyError(TypedDict):
    code: str
    message: str


class CallReply(TypedDict):
    """Host -> worker: the answer to call ``id``."""

    id: int
    ok: bool
    value: NotRequired[Any]
    error: NotRequired[ReplyError]


ErrorKind = Literal[
    "syntax", "policy", "runtime", "tool", "timeout", "memory", "limit", "crash", "protocol"
]


class ResultProblem(TypedDict):
    """One reason a snippet could not be compiled."""

    kind: str
    message: str
    line: int | None
    column: int | None


class ResultError(TypedDict):
    """Why a snippet failed, as the worker saw it."""

    kind: ErrorKind
    type: str
    """The exception's type name, e.g. ``ZeroDivisionError``."""
    message: str
    line: int | None
    column: int | None
    limit: NotRequired[float]
    """The limit that was reached (``kind == "limit"``)."""
    tool: NotRequired[str]
    """The provider whose ToolError went uncaught (``kind == "tool"``)."""
    code: NotRequired[str]
    problems: NotRequired[list[ResultProblem]]


class ResultParts(TypedDict):
    """A large value sent in slices: the container at ``path`` (dict keys) arrives in
    ``count`` frames after the result frame."""

    path: list[str]
    kind: Literal["list", "dict"]
    count: int


class ResultMessage(TypedDict):
    """Worker -> host: how the snippet ended."""

    op: Literal["result"]
    ok: bool
    timings: dict[str, float]
    logs: str
    logs_dropped: NotRequired[int]
    calls: NotRequired[int]
    value: NotRequired[Any]
    error: NotRequired[ResultError]
    warnings: NotRequired[list[str]]
    parts: NotRequired[ResultParts]
    variables: NotRequired[dict[str, Any]]
    """The top-level variables kept for the next execution, when the request asked."""


class ForkRequest(TypedDict):
    """Host -> zygote: fork a worker on the socket sent with this message."""

    op: Literal["fork"]
    id: int
    spare: bool
    """A spare rehearses and fills its heap while it waits; one forked for a waiting call
    does neither."""


class KillRequest(TypedDict):
    """Host -> zygote: kill worker ``id`` (the host cannot see into the PID namespace)."""

    op: Literal["kill"]
    id: int


class ZygoteReady(TypedDict):
    op: Literal["ready"]
    pid: int
    layers: list[dict[str, Any]]


class ZygoteForked(TypedDict):
    op: Literal["forked"]
    id: int


class ZygoteExited(TypedDict):
    op: Literal["exited"]
    id: int
    status: int


class ZygoteError(TypedDict):
    op: Literal["error"]
    id: int
    message: str


ZygoteReport = ZygoteReady | ZygoteForked | ZygoteExited | ZygoteError
"""What the zygote tells the host."""


def exec_request(
    code: str,
    limits: WireLimits,
    namespaces: dict[str, str],
    compiled: Any = None,
    *,
    variables: dict[str, Any] | None = None,
    persist: int | None = None,
) -> ExecRequest:
    request: ExecRequest = {"op": "exec", "code": code, "limits": limits, "namespaces": namespaces}
    if compiled is not None:
        request["compiled"] = compiled
    if variables:
        request["variables"] = variables
    if persist is not None:
        request["persist"] = persist
    return request


def probe_request(targets: dict[str, Any], limits: WireLimits) -> ProbeRequest:
    return {"op": "probe", "targets": targets, "limits": limits}


def call_message(
    call_id: int, namespace: str, name: str, kwargs: dict[str, Any], args: list[Any]
) -> CallMessage:
    message: CallMessage = {
        "op": "call",
        "id": call_id,
        "ns": namespace,
        "name": name,
        "kwargs": kwargs,
    }
    if args:
        message["args"] = args
    return message


def call_reply(call_id: int, value: Any) -> CallReply:
    return {"id": call_id, "ok": True, "value": value}


def call_failure(call_id: int, code: str, message: str) -> CallReply:
    return {"id": call_id, "ok": False, "error": {"code": code, "message": message}}


def _json_default(value: Any) -> object:
    """Bytes and sets as JSON; ``type()`` and exact types, never a ``__class__`` of the
    value's own (the C encoder is mid-walk when it calls this)."""
    if issubclass(type(value), bytes | bytearray | memoryview):
        with memoryview(value) as view:  # never a subclass's __bytes__
            return {BYTES_TAG: base64.b64encode(view.tobytes()).decode("ascii")}
    if type(value) in (set, frozenset):
        return list(value)
    raise TypeError(f"a {type(value).__name__} object is not plain data")


def _json_object_hook(obj: dict[str, Any]) -> Any:
    """Tagged bytes back to bytes. A snippet's own dict may look like the tag: if its value is
    not base64 it stays the dict it was (it is the snippet's data, not a broken frame)."""
    if len(obj) == 1 and BYTES_TAG in obj and isinstance(obj[BYTES_TAG], str):
        try:
            return base64.b64decode(obj[BYTES_TAG], validate=True)
        except binascii.Error:
            return obj
    return obj


def encode_json(message: object) -> bytes:
    """Frame ``message`` as JSON. Raises TypeError (not plain data), ValueError (NaN or
    Infinity, which JSON lacks), UnicodeEncodeError (a lone surrogate) or RecursionError."""
    body = json.dumps(message, default=_json_default, ensure_ascii=False, allow_nan=False).encode(
        "utf-8"
    )
    return HEADER.pack(len(body), JSON) + body


def encode_marshal(message: Any) -> bytes:
    """Frame ``message`` with marshal. Raises ValueError on unmarshallable data."""
    body = marshal.dumps(message)
    return HEADER.pack(len(body), MARSHAL) + body


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    """A JSON number with a fraction or exponent, refused where it overflows (``1e400``
    would be ``inf``, which strict JSON cannot say)."""
    value = float(text)
    if value in (_INF, -_INF):
        raise ValueError(f"the number {text[:40]} is out of range for a float")
    return value


_INF = float("inf")


def decode_json(body: bytes | bytearray | memoryview) -> Any:
    """Parse a JSON body from an untrusted peer (strict JSON: no NaN or Infinity); every
    failure becomes WireError."""
    try:
        return json.loads(
            bytes(body),
            object_hook=_json_object_hook,
            parse_constant=_no_constants,
            parse_float=_finite,
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        raise WireError(f"undecodable JSON frame: {type(exc).__name__}: {exc}"[:300]) from None


def decode(codec: int, body: bytes | bytearray | memoryview, *, trust_marshal: bool) -> Any:
    """Decode a frame body. Only a peer that trusts the sender accepts marshal."""
    if codec == JSON:
        return decode_json(body)
    if codec == MARSHAL and trust_marshal:
        return marshal.loads(body)
    raise WireError(f"frame codec {codec!r} is not accepted here")


SLICE = 1024 * 1024


class FrameWriter(Protocol):
    """Where frames are written: an ``asyncio.StreamWriter`` or the worker's host link."""

    def write(self, data: bytes | memoryview) -> None: ...

    async def drain(self) -> None: ...


async def write_frame(writer: FrameWriter, frame: bytes) -> None:
    """Write a frame in 1 MiB slices, draining between them.

    Handing asyncio one large buffer costs quadratic time on Python 3.11: the transport
    shifts the unsent remainder down after every partial send.
    """
    if len(frame) <= SLICE:
        writer.write(frame)
        await writer.drain()
        return
    view = memoryview(frame)
    for start in range(0, len(frame), SLICE):
        writer.write(view[start : start + SLICE])
        await writer.drain()


async def read_frame(reader: asyncio.StreamReader, *, max_bytes: int, trust_marshal: bool) -> Any:
    """Read and decode one frame; the size cap is checked against the header, before the body."""
    length, codec = HEADER.unpack(await reader.readexactly(HEADER.size))
    if length > max_bytes:
        raise WireError(f"frame of {length} bytes exceeds the {max_bytes}-byte cap")
    return decode(codec, await reader.readexactly(length), trust_marshal=trust_marshal)


def receive_frame(
    sock: socket.socket, buffer: bytearray, *, max_bytes: int, trust_marshal: bool
) -> Any:
    """Read and decode one frame straight from ``sock``, waiting in ``poll`` (no event loop).

    A spare worker waits for its request here: a blocking read wakes in one system call, and
    ``buffer`` (allocated and touched before the wait) takes the body, so the first moments of
    an execution neither run the event loop nor fault in fresh memory. Larger bodies get a
    buffer of their own. Raises ConnectionError on EOF and WireError on a bad frame.
    """
    header = _receive_exactly(sock, memoryview(buffer)[: HEADER.size])
    length, codec = HEADER.unpack(header)
    if length > max_bytes:
        raise WireError(f"frame of {length} bytes exceeds the {max_bytes}-byte cap")
    target = buffer if length <= len(buffer) else bytearray(length)
    return decode(
        codec, _receive_exactly(sock, memoryview(target)[:length]), trust_marshal=trust_marshal
    )


def _receive_exactly(sock: socket.socket, view: memoryview) -> memoryview:
    got = 0
    waiter: select.poll | None = None
    while got < len(view):
        try:
            count = sock.recv_into(view[got:])
        except BlockingIOError:
            if waiter is None:
                waiter = select.poll()
                waiter.register(sock, select.POLLIN)
            waiter.poll()
            continue
        if count == 0:
            raise ConnectionError("the peer closed the connection in the middle of a frame")
        got += count
    return view
