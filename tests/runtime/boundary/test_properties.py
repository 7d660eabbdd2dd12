"""The boundary's promises over arbitrary values: the text stays bounded, the stored original
is byte-identical, ranges reassemble it, and a planted marker is always reachable."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.boundary import HEADER_BYTES, Boundary, BoundaryConfig, StoredReadable, read, to_json
from store import Store

from .conftest import json_values, ok

_FIXTURE = [HealthCheck.function_scoped_fixture]
THRESHOLD = 2048


@pytest.fixture
def tight(store: Store) -> Boundary:
    return Boundary(store, BoundaryConfig(read_offload_threshold=THRESHOLD))


def reassemble(store: Store, handle: str) -> bytes:
    parts, offset = [], 0
    while offset is not None:
        chunk = store.read_range(handle, offset, 3000)
        parts.append(chunk.data)
        offset = chunk.next_offset
    return b"".join(parts)


@settings(max_examples=150, deadline=None, suppress_health_check=_FIXTURE)
@given(value=json_values)
def test_any_json_value(tight: Boundary, store: Store, value: object) -> None:
    done = tight.finish(ok(value))
    assert len(done.text.encode("utf-8", "surrogatepass")) <= THRESHOLD + HEADER_BYTES
    if done.handle is not None:
        original = to_json(value).encode("utf-8", "surrogatepass")
        assert store.get(done.handle) == original
        assert reassemble(store, done.handle) == original


@settings(max_examples=150, deadline=None, suppress_health_check=_FIXTURE)
@given(text=st.text(max_size=30_000), logs=st.text(max_size=5_000))
def test_any_text_and_output(tight: Boundary, store: Store, text: str, logs: str) -> None:
    done = tight.finish(ok(text, logs=logs))
    assert len(done.text.encode("utf-8", "surrogatepass")) <= THRESHOLD + HEADER_BYTES
    if done.handle is not None:
        assert store.get(done.handle) == text.encode("utf-8", "surrogatepass")
    if done.logs_handle is not None:
        assert store.get(done.logs_handle) == logs.encode("utf-8", "surrogatepass")


MARKER = "ZEBRA-4471"


def big_log(where: str) -> str:
    lines = [f"INFO step {i} done" for i in range(20_000)]
    if where == "long line":
        lines[9000] = "x" * 50_000 + MARKER + "y" * 50_000
    else:
        index = {"start": 0, "middle": 10_000, "end": 19_999}[where]
        lines[index] = f"INFO found {MARKER} here"
    return "\n".join(lines)


def big_json(where: str) -> object:
    doc: dict[str, object] = {
        "status": "ok",
        "items": [{"id": i, "label": f"item {i}"} for i in range(5000)],
    }
    items = doc["items"]
    assert isinstance(items, list)
    if where == "start":
        items[0]["label"] = MARKER
    elif where == "middle":
        items[2500]["label"] = MARKER
    elif where == "end":
        doc["trailer"] = MARKER
    elif where == "deep field":
        items[3000]["extra"] = {"a": {"b": {"c": [1, 2, {"d": MARKER}]}}}
    else:
        items[100]["label"] = "q" * 80_000 + MARKER
    return doc


def reachable(boundary: Boundary, store: Store, value: object) -> bool:
    """Visible in the model's text, or found by the query the offload text suggests."""
    done = boundary.finish(ok(value))
    if MARKER in done.text:
        return True
    assert done.handle is not None and "query=" in done.text
    found = read(StoredReadable(store, store.stat(done.handle)), budget=16_384, query=MARKER)
    return any(MARKER in window.text for window in found.windows)


@pytest.mark.parametrize("where", ["start", "middle", "end", "long line"])
def test_a_marker_planted_in_a_log_is_reachable(
    boundary: Boundary, store: Store, where: str
) -> None:
    assert reachable(boundary, store, big_log(where))


@pytest.mark.parametrize("where", ["start", "middle", "end", "deep field", "long line"])
def test_a_marker_planted_in_json_is_reachable(
    boundary: Boundary, store: Store, where: str
) -> None:
    assert reachable(boundary, store, big_json(where))
    assert reachable(boundary, store, json.dumps(big_json(where)))


def test_lone_surrogates_pass_through(tight: Boundary, store: Store) -> None:
    """Strings with unpaired surrogates (which JSON can carry) are stored and previewed."""
    value = {"k\ud800": "x\udc00" * 5000}
    done = tight.finish(ok(value))
    assert done.handle is not None
    assert store.get(done.handle) == to_json(value).encode("utf-8", "surrogatepass")
