"""The analyzer reads only what CPython parses and what nests shallowly: libcst's native
parser is quadratic in nesting depth, holds the GIL while it runs and overflows its stack
(killing the host) a few thousand levels down, so such snippets are UNKNOWN with a reason,
never a crash, a stall or an exception."""

from __future__ import annotations

import pytest

from analyzer import Options, analyze

DEEP = {
    "a chain of subscripts": "return x" + "[0]" * 3000,
    "a chain of attributes": "return x" + ".a" * 8000,
    "a chain of unary minus": "return " + "-" * 10000 + "1",
    "nested conditional expressions": "return " + "1 if x else " * 5000 + "2",
    "nested lists": "return " + "[" * 150 + "]" * 150,
    "nested lambdas": "f = " + "lambda: " * 3000 + "1",
    "many moderately deep expressions": ("x = " + "[" * 60 + "]" * 60 + "\n") * 40,
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_snippets_are_unknown_and_never_reach_the_native_parser(name: str) -> None:
    analysis = analyze(DEEP[name])
    assert analysis.classification == "UNKNOWN"
    assert [d.code for d in analysis.diagnostics] == ["too-deep"]
    assert analysis.verdict == "WARN"
    assert analyze(DEEP[name], options=Options(strict=True)).verdict == "BLOCK"


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ('return b"\u00e9"', "bytes can only contain ASCII literal characters"),
        ("x = '\ud800'\nreturn x", "surrogates not allowed"),
        ("return '\\N{no such name}'", "unknown Unicode character name"),
        ("return 1\x00", "null bytes"),
        ("return (", "was never closed"),
    ],
)
def test_what_cpython_cannot_parse_is_a_syntax_error_as_cpython_words_it(
    code: str, says: str
) -> None:
    analysis = analyze(code)
    assert analysis.classification == "UNKNOWN"
    (problem,) = analysis.diagnostics
    assert problem.code == "syntax-error"
    assert says in problem.message


def test_ordinary_nesting_is_still_analysed() -> None:
    code = "rows = await tools.read_json(path='a.json')\n" + "x = " + "[" * 30 + "]" * 30 + "\n"
    code += "return len(rows)"
    analysis = analyze(code)
    assert analysis.classification == "PROJECTED"
    assert analysis.verdict == "PASS"
