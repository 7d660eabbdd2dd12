from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from runtime import ExecResult
from runtime.boundary import Boundary, BoundaryConfig
from store import Store


def ok(value: Any, logs: str = "", calls: tuple[Any, ...] = ()) -> ExecResult:
    """A successful result as the sandbox hands it to the boundary."""
    return ExecResult(ok=True, text="", value=value, logs=logs, call_log=calls)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path) as opened:
        yield opened


@pytest.fixture
def boundary(store: Store) -> Boundary:
    return Boundary(store, BoundaryConfig())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=500),
    lambda children: (
        st.lists(children, max_size=40)
        | st.dictionaries(st.text(max_size=15), children, max_size=25)
    ),
    max_leaves=400,
)
"""Any JSON value, as a snippet could return it."""
