"""Sources and diagnostics name the line of the call itself, whatever order the analysis meets
calls in: a helper's body is analysed where it is called, a lambda where it runs."""

from __future__ import annotations

from analyzer import analyze


def _lines(code: str) -> list[int | None]:
    return sorted(s.line or 0 for s in analyze(code).sources)


def test_a_helper_called_after_a_direct_call_names_its_own_line() -> None:
    code = (
        "def helper():\n"
        '    t = await tools.read(path="a")\n'
        "    return t\n"
        "\n"
        'x = await tools.read(path="b")\n'
        "y = await helper()\n"
        "return y\n"
    )
    assert _lines(code) == [2]
    assert _lines(code.replace("return y", "return x")) == [5]


def test_two_helpers_called_in_the_other_order() -> None:
    code = (
        "def first():\n"
        '    return await tools.read(path="a")\n'
        "def second():\n"
        '    return await tools.read(path="b")\n'
        "b = await second()\n"
        "return b\n"
    )
    assert _lines(code) == [4]


def test_a_lambda_is_placed_where_it_is_written() -> None:
    code = (
        'pick = lambda: tools.read(path="a")\n'
        "def run():\n"
        '    own = await tools.read(path="b")\n'
        "    return own\n"
        "r = await run()\n"
        "p = await pick()\n"
        "return p\n"
    )
    assert _lines(code) == [1]


def test_nested_functions_and_blocks_keep_their_calls_apart() -> None:
    code = (
        "def outer():\n"
        "    def inner():\n"
        '        return await tools.read(path="a")\n'
        '    mine = await tools.read(path="b")\n'
        "    return await inner()\n"
        "try:\n"
        '    top = await tools.read(path="c")\n'
        "except Exception:\n"
        "    top = None\n"
        "return [await outer(), top]\n"
    )
    assert _lines(code) == [3, 7]
