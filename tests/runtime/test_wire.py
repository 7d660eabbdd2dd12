"""The host <-> worker framing, property-tested."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runtime import Limits
from runtime.worker import WireError, WireLimits
from runtime.worker import _wire as wire

plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.binary(),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5)
    ),
    max_leaves=30,
)


@given(plain)
def test_json_frames_round_trip_plain_data(value: object) -> None:
    """Plain data, bytes included, survives the worker -> host codec."""
    frame = wire.encode_json({"v": value})
    length, codec = wire.HEADER.unpack(frame[: wire.HEADER.size])
    assert length == len(frame) - wire.HEADER.size
    assert wire.decode(codec, frame[wire.HEADER.size :], trust_marshal=False) == {"v": value}


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_json_frames_have_no_nan_or_infinity(number: float) -> None:
    """Strict JSON both ways: the encoder refuses what the host's decoder would refuse."""
    with pytest.raises(ValueError, match="Out of range float"):
        wire.encode_json({"v": [number]})
    with pytest.raises(WireError, match="is not JSON"):
        wire.decode_json(
            b'{"v": %s}' % repr(number).replace("nan", "NaN").replace("inf", "Infinity").encode()
        )


@pytest.mark.parametrize("text", ["1e400", "-1e400", "1.5e309"])
def test_a_json_number_past_a_float_is_a_wire_error(text: str) -> None:
    """A number spelled finite that overflows to infinity is refused like ``Infinity``: a
    worker cannot slip a non-finite float past strict JSON; large finite ones pass."""
    with pytest.raises(WireError, match="out of range for a float"):
        wire.decode_json(b'{"v": %s}' % text.encode())
    assert wire.decode_json(b'{"v": [1e300, -2.5e-300]}') == {"v": [1e300, -2.5e-300]}


@given(plain)
def test_marshal_frames_round_trip(value: object) -> None:
    """The host -> worker codec carries the same data."""
    frame = wire.encode_marshal(value)
    assert wire.decode(frame[4], frame[wire.HEADER.size :], trust_marshal=True) == value


def test_host_refuses_marshal_from_the_worker() -> None:
    """Marshal is only accepted by the side that trusts its peer."""
    frame = wire.encode_marshal({"op": "result"})
    with pytest.raises(WireError, match="not accepted"):
        wire.decode(frame[4], frame[wire.HEADER.size :], trust_marshal=False)


@given(st.binary(max_size=200))
def test_garbage_json_is_a_wire_error(body: bytes) -> None:
    """Undecodable bodies raise WireError, never anything else."""
    with contextlib.suppress(WireError):
        wire.decode_json(body)


def test_deeply_nested_json_is_a_wire_error() -> None:
    """A nesting bomb is refused cleanly."""
    with pytest.raises(WireError):
        wire.decode_json(b"[" * 100_000 + b"]" * 100_000)


async def test_oversized_frame_is_refused_before_reading() -> None:
    """The size cap is checked against the header, before the body is read."""
    reader = asyncio.StreamReader()
    reader.feed_data(wire.HEADER.pack(10**9, wire.JSON))
    with pytest.raises(WireError, match="exceeds"):
        await wire.read_frame(reader, max_bytes=1024, trust_marshal=False)


async def test_frames_read_back_from_a_stream() -> None:
    """A JSON frame written by the worker side reads back whole on the host side."""
    reader = asyncio.StreamReader()
    reader.feed_data(wire.encode_json({"op": "result", "value": b"\x00"}))
    assert await wire.read_frame(reader, max_bytes=1024, trust_marshal=False) == {
        "op": "result",
        "value": b"\x00",
    }


def test_the_limits_cross_as_the_protocol_declares_them() -> None:
    """Every field of Limits reaches the worker, under the same name, and nothing else."""
    assert set(Limits.model_fields) == set(WireLimits.__annotations__)
    assert set(Limits().wire()) == set(WireLimits.__required_keys__)
