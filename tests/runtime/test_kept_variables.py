"""The worker's side of persistVariables: which top-level variables a snippet hands on, and
the sandbox seeding the next snippet with them."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime import Limits, NoProviders, Sandbox
from runtime.worker._variables import collect, size_of

PLAIN = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
NOT_PLAIN = st.sampled_from([{1, 2}, object(), float("nan"), {1: "int key"}, [[float("inf")]]])
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: n not in {"tools", "mcp", "ctx", "state", "memory", "agents", "extensions"}
)


@settings(max_examples=200)
@given(
    scope=st.dictionaries(NAMES, st.tuples(st.booleans(), PLAIN, NOT_PLAIN), max_size=8),
    max_bytes=st.integers(1, 400),
)
def test_kept_is_plain_data_within_the_cap_and_every_drop_is_named(
    scope: dict[str, tuple[bool, Any, Any]], max_bytes: int
) -> None:
    """Against the rules as an oracle: what is kept is exactly the plain values that fit, in
    order, the JSON of all of them within the cap; every other name is in the note."""
    values = {name: plain if keep else other for name, (keep, plain, other) in scope.items()}
    kept, used, note = collect(values, max_bytes, ())
    assert used <= max_bytes and size_of(kept) == used
    for name, (keep, _, _) in scope.items():
        if not keep:
            assert name not in kept
    dropped = [name for name in values if name not in kept]
    for name in dropped[:10]:
        assert note is not None and f" {name} (" in note
    assert (note is None) == (not dropped)


def test_underscores_namespaces_and_skipped_types_are_left_out_silently() -> None:
    class Module:
        pass

    kept, _, note = collect({"_x": 1, "tools": 2, "json": Module(), "n": 3}, 100, (Module,))
    assert kept == {"n": 3} and note is None


def test_a_list_that_holds_itself_is_dropped_at_once() -> None:
    """A cycle is named as one, not walked until the budget runs out; shared parts are fine."""
    loop: list[Any] = []
    loop.append(loop)
    shared = [1, 2]
    kept, _, note = collect({"loop": loop, "twice": [shared, shared]}, 64 * 1024 * 1024, ())
    assert kept == {"twice": [[1, 2], [1, 2]]}
    assert note is not None and "loop (a container that holds itself)" in note


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=PLAIN)
async def test_a_kept_value_is_the_same_data_in_the_next_worker(value: Any) -> None:
    """Whatever plain data one snippet leaves, the next (a new worker) starts with it equal
    (tuples aside, which JSON makes lists)."""
    code = f"import json\nv = {value!r}\nreturn 1"
    async with Sandbox(limits=Limits(timeout_s=10), spares=1) as sandbox:
        first = await sandbox.execute(code, providers=NoProviders(), persist=10**6)
        assert first.ok and first.variables == {"v": value}, first.text
        second = await sandbox.execute(
            "return v", providers=NoProviders(), variables=first.variables, persist=10**6
        )
    assert second.ok and second.value == value
    assert json.dumps(second.variables, default=repr) == json.dumps({"v": value}, default=repr)


async def test_a_kept_variable_is_the_data_that_was_checked() -> None:
    """What is kept is a private copy of what was judged plain: code the snippet runs while
    the variables are read (a later variable's ``__getattribute__``) cannot change it, nor
    stop the worker by raising."""
    code = (
        "data = ['checked as plain data', 1]\nclass L(list):\n    pass\n"
        "class Sly:\n    def __getattribute__(self, name):\n        data.append(L([2]))\n"
        "        raise KeyError(name)\nz = Sly()\nreturn 1"
    )
    async with Sandbox(limits=Limits(timeout_s=10), spares=0) as sandbox:
        result = await sandbox.execute(code, providers=NoProviders(), persist=10**6)
    assert result.ok, result.text
    assert result.variables == {"data": ["checked as plain data", 1]}
