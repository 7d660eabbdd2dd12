"""Reading what a worker sends: frames capped in size, strict JSON, results validated, and
large values taken in slices without holding the event loop or the host's memory hostage.

The host trusts nothing here. A frame's size is checked against its header before it is read;
frames of :data:`OFF_LOOP_BYTES` or more are decoded on the host's own threads
(``run_host_work``: provider work cannot starve them); every frame of a result is charged to a
:class:`Budget` of JSON containers and values before it is decoded, since a few bytes of JSON
(``[[], [], ...]``) can stand for tens of bytes of host objects each; and the slices of a large
value must fit the shape the result frame announced.
"""

from __future__ import annotations

import asyncio
import keyword
import time
import types
import typing
from typing import Any, Generic, Literal, NotRequired, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from contract import MAX_DEPTH, NAMESPACES, json_nests_within
from runtime._threads import run_host_work
from runtime.worker import _variables, _wire

_M = TypeVar("_M")


class ProtocolViolation(Exception):
    """The worker sent something the protocol does not allow."""


class MessageCheck(Generic[_M]):
    """Validates one message type of the protocol against its declaration in the worker's
    wire module (a ``TypedDict``): a strict ``TypeAdapter`` is made from the declaration
    itself (and from the ``TypedDict``s it holds), so the check and the declaration cannot
    drift."""

    def __init__(self, message: type[_M]) -> None:
        self.name = message.__name__
        self._adapter: TypeAdapter[_M] = TypeAdapter(_strict(message))

    def __call__(self, raw: object) -> _M:
        """``raw`` as the message it must be; raises ProtocolViolation naming the problem."""
        try:
            return self._adapter.validate_python(raw)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "the message"
            raise ProtocolViolation(f"malformed {self.name}: {where}: {first['msg']}") from None


def _strict(hint: Any) -> Any:
    """``hint`` with every ``TypedDict`` in it strict (no other keys, no coercion) and of
    ``typing_extensions``, the kind pydantic reads on Python 3.11 (the worker's own module
    stays standard library only)."""
    if typing.is_typeddict(hint):
        hints = typing.get_type_hints(hint)
        required = hint.__required_keys__
        fields = {
            key: _strict(h) if key in required else NotRequired[_strict(h)]
            for key, h in hints.items()
        }
        make: Any = TypedDict
        strict = make(hint.__name__, fields)
        strict.__pydantic_config__ = ConfigDict(extra="forbid", strict=True)
        return strict
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is None or origin is Literal or not args:
        return hint
    inner = tuple(_strict(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[inner]  # noqa: UP007 (a union built from a tuple)
    return origin[inner]


MAX_PARTS = 1_000_000
"""The most slices one result may announce."""


OFF_LOOP_BYTES = 256 * 1024
"""Frames at least this large are decoded (and results validated) in a thread, so a worker
returning megabytes never stalls the host's event loop and the other sessions on it."""


MAX_CONTAINERS = 1_000_000
MAX_VALUES = 4_000_000
"""What one result may hold: a few bytes of JSON (``[[], [], ...]``) can stand for tens of
bytes each of host objects, so the host counts before it decodes."""


class TooComplex(Exception):
    """A result holding more JSON containers or values than the host decodes."""


def _structure(body: bytes) -> tuple[int, int]:
    """Containers and values of a JSON text, not counting brackets and commas inside strings.

    Python code, not one long call into C, so a thread running it lets the event loop in."""
    containers = values = 0
    inside = False
    parts = body.split(b'"')
    for index, part in enumerate(parts):
        if not inside:
            containers += part.count(b"[") + part.count(b"{")
            values += part.count(b",")
        if index % 4096 == 0:
            time.sleep(0)
        if index == len(parts) - 1:
            break
        if inside and (len(part) - len(part.rstrip(b"\\"))) % 2:
            continue  # an escaped quote: still inside the string
        inside = not inside
    return containers, values


class Budget:
    """The containers and values one result may still bring (its slices share it)."""

    def __init__(self) -> None:
        self.containers = MAX_CONTAINERS
        self.values = MAX_VALUES

    def spend(self, body: bytes) -> None:
        containers, values = body.count(b"[") + body.count(b"{"), body.count(b",")
        if containers > self.containers or values > self.values:
            containers, values = _structure(body)  # brackets in text do not count
        self.containers -= containers
        self.values -= values
        if self.containers < 0 or self.values < 0:
            raise TooComplex(
                f"the return value holds more than {MAX_CONTAINERS:,} lists and dicts or "
                f"{MAX_VALUES:,} values; return fewer, larger items (a string per row, say), "
                "or offload the data and return its handle"
            )


def _decode(codec: int, body: bytes, budget: Budget | None) -> Any:
    if budget is not None:
        budget.spend(body)
    deep = codec == _wire.JSON and not json_nests_within(body, MAX_DEPTH + _ENVELOPE)
    if deep:  # the worker refuses deeper values itself
        raise ProtocolViolation(f"a frame nests deeper than {MAX_DEPTH} levels of values")
    try:
        return _wire.decode(codec, body, trust_marshal=False)
    except _wire.WireError as exc:
        raise ProtocolViolation(str(exc)) from None


_ENVELOPE = 3
"""The levels a message puts around a value (``{"kwargs": {"k": value}}``, ``[args]``)."""


async def read_frame(
    reader: asyncio.StreamReader, max_bytes: int, budget: Budget | None = None
) -> tuple[Any, int]:
    """One decoded frame from the worker, and its size in bytes. Large frames are decoded in
    a thread, after ``budget`` has been charged for what they hold."""
    length, codec = _wire.HEADER.unpack(await reader.readexactly(_wire.HEADER.size))
    if length > max_bytes:
        raise ProtocolViolation(f"frame of {length} bytes exceeds the {max_bytes}-byte cap")
    body = await reader.readexactly(length)
    if length < OFF_LOOP_BYTES:
        return _decode(codec, body, budget), length
    return await run_host_work(_decode, codec, body, budget), length


async def assemble(
    reader: asyncio.StreamReader,
    result: _wire.ResultMessage,
    max_frame: int,
    max_total: int,
    budget: Budget,
) -> _wire.ResultMessage:
    """Read the slices of a large value and put them in place; anything that does not fit
    the announced shape is a protocol violation."""
    parts = result.get("parts")
    assert parts is not None
    if not 1 <= parts["count"] <= MAX_PARTS:
        raise ProtocolViolation(
            f"malformed ResultMessage: parts.count: {parts['count']} slices, not 1 to {MAX_PARTS}"
        )
    target: Any = result.get("value")
    for key in parts["path"]:
        if not isinstance(target, dict) or key not in target:
            raise ProtocolViolation(f"the sliced value has no entry {key!r} on its path")
        target = target[key]
    want = dict if parts["kind"] == "dict" else list
    if type(target) is not want or target:
        raise ProtocolViolation("the sliced value's placeholder is not an empty container")
    total = 0
    for _ in range(parts["count"]):
        message, size = await read_frame(reader, max_frame, budget)
        if type(message) is not want:
            raise ProtocolViolation(f"a slice of a {parts['kind']} is a {type(message).__name__}")
        total += size
        if total > max_total:
            raise ProtocolViolation("the slices exceed the result limit")
        if isinstance(target, dict):
            target.update(message)
        else:
            target.extend(message)
    whole: _wire.ResultMessage = {**result}
    del whole["parts"]
    return whole


validated = MessageCheck(_wire.ResultMessage)
"""A result message as the worker must send it; ProtocolViolation otherwise."""


async def validated_off_loop(message: Any) -> _wire.ResultMessage:
    """``validated`` for a large message, on the decoding threads."""
    return await run_host_work(validated, message)


MAX_VARIABLES = 10_000
"""The most variables one execution may hand on to the next."""
_NAME_CHARS = 256


def _bindable(name: str) -> bool:
    """A name a snippet binds at its top level and the worker keeps."""
    return (
        len(name) <= _NAME_CHARS
        and name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("_")
        and name not in NAMESPACES
    )


async def kept_variables(
    raw: dict[str, Any] | None, max_bytes: int, frame_bytes: int
) -> tuple[dict[str, Any], int]:
    """The variables a worker handed on, and their bytes, checked as the worker must have
    made them: names a snippet binds, at most :data:`MAX_VARIABLES`, within ``max_bytes`` of
    JSON. Anything else is a ProtocolViolation (only a worker that broke out of its snippet
    sends it). The values are decoded JSON, plain data by construction."""
    if raw is None:
        return {}, 0
    if len(raw) > MAX_VARIABLES:
        raise ProtocolViolation(f"the worker kept {len(raw)} variables, more than {MAX_VARIABLES}")
    for name in raw:
        if not _bindable(name):
            raise ProtocolViolation(f"the worker kept a variable named {name[:40]!r}")
    if frame_bytes < OFF_LOOP_BYTES:
        used = _variables.size_of(raw)
    else:
        used = await run_host_work(_variables.size_of, raw)
    if used > max_bytes:
        raise ProtocolViolation(
            f"the worker kept {used} bytes of variables, above the {max_bytes}-byte cap"
        )
    return raw, used
