"""What JSON cannot carry, and large values, come back as clean results."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric import Fabric


async def test_a_lone_surrogate_in_print_is_a_clean_error(fab: Fabric) -> None:
    """print() of invalid Unicode fails where it is printed, with the line; the host and the
    next execution are fine."""
    result = await fab.exec("x = 1\nprint('a\\ud800b')\nreturn x")
    assert result.error is not None
    assert result.error.type == "ValueError" and result.error.line == 2
    assert "lone surrogate '\\ud800' at character 1" in result.error.message
    assert (await fab.exec("return 2")).value == 2


async def test_a_lone_surrogate_in_the_value_names_where_it_is(fab: Fabric) -> None:
    """The error says which field holds it."""
    result = await fab.exec("return {'rows': ['ok', 'bad \\udcff']}")
    assert result.error is not None and result.error.type == "UnicodeEncodeError"
    assert "at $['rows'][1] (character 4" in result.error.message


async def test_a_lone_surrogate_in_an_error_message_is_spelled_out(fab: Fabric) -> None:
    """An exception whose message is invalid Unicode still reaches the host."""
    result = await fab.exec("raise ValueError('bad \\ud800')")
    assert result.error is not None and result.error.type == "ValueError"
    assert result.error.message == "bad \\ud800"


async def test_a_dict_that_looks_like_the_bytes_tag_is_the_snippets_data(fab: Fabric) -> None:
    """Bytes cross as a tagged dict; a snippet's own dict of that shape, not base64, comes back
    as the dict it is (not a broken frame and a killed worker)."""
    result = await fab.exec("return {'\\x00bytes': 'not base64!'}")
    assert result.ok and result.value == {"\x00bytes": "not base64!"}


async def test_a_tool_error_with_odd_fields_is_still_a_tool_error(fab: Fabric) -> None:
    """`ToolError(tool=5)`, surrogates in its fields, numbers for text: the worker reports a
    tool error, never dies."""
    numbered = await fab.exec("raise ToolError('boom', tool=5)")
    assert numbered.error is not None and numbered.error.kind == "tool"
    assert numbered.error.tool == "5" and numbered.error.message == "5: boom"
    spelled = await fab.exec("raise ToolError('boom', tool='\\ud800', code='\\udfff')")
    assert spelled.error is not None and spelled.error.tool == "\\ud800"
    of_a_number = await fab.exec("raise ToolError(404, tool='http', code=7)")
    assert of_a_number.error is not None and of_a_number.error.message == "http: 404"


finite_or_not = st.floats(allow_nan=True, allow_infinity=True)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | finite_or_not | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=12,
)


def _non_finite(value: Any) -> int:
    if isinstance(value, float):
        return 0 if math.isfinite(value) else 1
    if isinstance(value, dict):
        return sum(_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return sum(_non_finite(v) for v in value)
    return 0


def _expected(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _expected(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_expected(v) for v in value]
    return value


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=values)
async def test_nan_and_infinity_never_reach_the_value(fab: Fabric, value: Any) -> None:
    """NaN and Infinity become "NaN", "Infinity" and "-Infinity", with a warning that counts
    them; every other value comes back unchanged."""
    code = f"import json\nreturn json.loads({json.dumps(json.dumps(value))})"
    result = await fab.exec(code)
    assert result.ok, result.text
    assert _non_finite(result.value) == 0
    assert result.value == _expected(value)
    found = _non_finite(value)
    warned = [w for w in result.warnings if "NaN or Infinity" in w]
    assert (len(warned) == 1 and f"held {found} NaN" in warned[0]) if found else not warned
    assert (f"[note: {warned[0]}]" in result.text) if found else "[note:" not in result.text


async def test_nan_as_a_dict_key_is_converted_too(fab: Fabric) -> None:
    result = await fab.exec("return {float('nan'): 1, 'x': float('inf')}")
    assert result.ok, result.text
    assert result.value == {"NaN": 1, "x": "Infinity"}
    assert any("held 2 NaN" in w for w in result.warnings)


async def test_a_large_value_under_a_number_key_crosses_whole(fab: Fabric) -> None:
    """JSON turns the key 1 into "1": the value still arrives, sliced or not."""
    result = await fab.exec("return {1: ['x' * 100] * 20_000}", policy="offload")
    assert result.ok, result.text
    assert result.value == {"1": ["x" * 100] * 20_000}


async def test_nan_in_provider_arguments_is_a_tool_error(fab: Fabric) -> None:
    """A provider call cannot carry NaN either; the snippet sees a ToolError it can catch."""
    result = await fab.exec(
        "try:\n    await tools.read(path=float('nan'))\nexcept ToolError as e:\n    return e.code"
    )
    assert result.ok and result.value == "bad_args", result.text


LARGE: dict[str, str] = {
    "a long list of records": "[{'id': i, 'name': 'n' + str(i)} for i in range(120_000)]",
    "a dict of many keys": "{str(i): [i, i * 2] for i in range(150_000)}",
    "the bulk one level down": "{'count': 3, 'rows': [[i, 'x' * 20] for i in range(100_000)], 'ok': True}",
    "the bulk two levels down": "{'data': {'items': {str(i): i for i in range(200_000)}, 'n': 1}}",
    "one huge string": "'y' * 3_000_000",
    "a list of a few huge strings": "['z' * 1_500_000, 'w' * 1_500_000]",
}


async def test_large_values_cross_whole_and_exact(fab: Fabric) -> None:
    """Values of megabytes, whatever their shape, arrive exactly as the snippet built them
    (large containers cross in slices; see runtime/worker/_results.py)."""
    for name, expression in LARGE.items():
        result = await fab.exec(f"return {expression}", policy="offload")
        assert result.ok, (name, result.text)
        assert result.value == eval(expression), name


async def test_a_result_of_millions_of_tiny_containers_is_a_limit_error(fab: Fabric) -> None:
    """A few bytes of JSON per empty list would cost the host tens of bytes each: refused,
    with what to return instead, before the host decodes it."""
    result = await fab.exec("return [[]] * 2_000_000")
    assert result.error is not None
    assert result.error.kind == "limit" and result.error.type == "ResultTooComplex"
    assert "lists and dicts" in result.error.message


async def test_brackets_inside_text_do_not_count_as_containers(fab: Fabric) -> None:
    """Only structure counts: a long text full of brackets comes back whole."""
    result = await fab.exec("return '[' * 3_000_000 + '{,}' * 500_000", policy="offload")
    assert result.ok, result.text
    assert result.value == "[" * 3_000_000 + "{,}" * 500_000


async def test_concurrent_large_provider_calls_do_not_interleave(fab: Fabric) -> None:
    """Two calls whose arguments go out in several slices each arrive whole."""
    code = (
        "import asyncio\n"
        "t = 'x' * (1536 * 1024)\n"
        "rs = await asyncio.gather(ctx.offload(t), ctx.offload(t + 'y'))\n"
        "return [r['bytes'] for r in rs]"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == [1536 * 1024, 1536 * 1024 + 1]


_RAISED = ["SystemExit(3)", "KeyboardInterrupt()", "GeneratorExit()", "BaseException('x')"]


@pytest.mark.parametrize("raised", _RAISED)
async def test_a_returned_subclass_is_read_as_its_base_type(fab: Fabric, raised: str) -> None:
    """The value leaves as the data it holds: a ``dict``, ``list``, ``str`` or ``int``
    subclass's own methods (which could raise anything, SystemExit included) are never called
    on the way out."""
    code = (
        f"class D(dict):\n    def items(self):\n        raise {raised}\n"
        f"    keys = values = __iter__ = items\n"
        f"class L(list):\n    def __iter__(self):\n        raise {raised}\n"
        f"class S(str):\n    def __str__(self):\n        raise {raised}\n"
        f"class I(int):\n    def __repr__(self):\n        raise {raised}\n"
        f"class T(tuple):\n    def __iter__(self):\n        raise {raised}\n"
        "return D(a=L([S('s'), I(7), T((1, 2)), {3}, bytearray(b'z')]), **{S('k'): 1.5})"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == {"a": ["s", 7, [1, 2], [3], b"z"], "k": 1.5}


@pytest.mark.parametrize("raised", _RAISED)
async def test_an_exception_whose_message_cannot_be_read_still_reports(
    fab: Fabric, raised: str
) -> None:
    """A snippet's exception whose ``__str__`` raises is reported under its own name, with
    CPython's placeholder for the message; the worker carries on."""
    result = await fab.exec(
        f"class E(Exception):\n    def __str__(self):\n        raise {raised}\nraise E('x')"
    )
    assert result.error is not None and result.error.kind == "runtime", result.text
    assert (result.error.type, result.error.message) == ("E", "<exception str() failed>")
    assert result.error.line == 4
    assert (await fab.exec("return 2")).value == 2


async def test_a_value_that_holds_itself_is_named_as_such(fab: Fabric) -> None:
    result = await fab.exec("loop = []\nloop.append(loop)\nreturn loop")
    assert result.error is not None and result.error.type == "ValueError"
    assert "cannot leave the sandbox: ValueError: Circular reference" in result.error.message


async def test_print_takes_a_str_subclass_as_its_text(fab: Fabric) -> None:
    """A ``str`` subclass's own ``join``, ``__add__``, ``isascii`` and ``__len__`` never decide
    what was printed: the output cap holds and the result leaves."""
    code = (
        "class S(str):\n    def __str__(self):\n        return self\n"
        "    def join(self, parts):\n        return T('x' * 1000000)\n"
        "class T(str):\n    def isascii(self):\n        return True\n"
        "    def __len__(self):\n        return 0\n    def __add__(self, other):\n        return self\n"
        "for i in range(3):\n    print('a', 'b', sep=S('-'), end=S('!'))\nprint(T('t'))\n1"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.logs == "a-b!a-b!a-b!t\n"


async def test_a_value_nested_past_what_crosses_is_a_clean_error(fab: Fabric) -> None:
    """A result or a call's arguments nested deeper than 100 levels of lists and dicts would
    break the serializers and MCP clients after it: refused where it would cross, saying so;
    100 levels cross."""
    deep = "x = 1\nfor i in range({n}):\n    x = [x]\n"
    refused = await fab.exec(deep.format(n=101) + "return x")
    assert refused.error is not None and refused.error.type == "ValueError"
    assert "nests deeper than 100 levels of lists and dicts" in refused.error.message
    passed = await fab.exec(deep.format(n=100) + "return x")
    assert passed.ok, passed.text
    call = await fab.exec(
        deep.format(n=101) + "try:\n    await ctx.offload(x)\nexcept ToolError as e:\n"
        "    return [e.code, str(e)]"
    )
    assert call.value[0] == "bad_args" and "nest deeper than 100 levels" in call.value[1]
