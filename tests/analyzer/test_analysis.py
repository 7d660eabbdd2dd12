"""The Analysis contract: verdicts, sources, trails, diagnostics, options and the effects table."""

from __future__ import annotations

import pytest

from analyzer import MAX_ANALYSED_CHARS, Analysis, EffectsTable, Options, analyze

R = 'r = await tools.read(path="a")\n'


def test_the_issue_examples() -> None:
    examples = {
        't = await tools.read(path="a")\nreturn t.splitlines()[:20]': ("SELECTED", True),
        'r = await mcp.gh.search(q="x")\nreturn [i["title"] for i in r]': ("PROJECTED", False),
        'r = await tools.read(path="a")\nreturn json.dumps(r)': ("ENCODED", False),
        'r = await tools.read(path="a")\nreturn len(r)': ("PROJECTED", True),
        "return 42": ("NONE", True),
    }
    for code, expected in examples.items():
        got = analyze(code)
        assert (got.classification.value, got.bounded) == expected, code


def test_trail_from_source_to_return() -> None:
    got = analyze('t = await tools.read(path="a")\nreturn t.splitlines()[:20]')
    assert got.explain() == "tools.read (line 1) -> splitlines -> [:20] (20 items) -> return"
    assert got.bound is not None and (got.bound.value, got.bound.unit) == (20, "items")


def test_sources_name_every_call_that_reaches_the_return() -> None:
    code = 'a = await tools.read(path="a")\nb = await mcp.git.log()\nc = await tools.ls()\nreturn [a, b]'
    got = analyze(code)
    assert [(s.namespace, s.name, s.line) for s in got.sources] == [
        ("tools", "read", 1),
        ("mcp", "git.log", 2),
    ]
    assert got.sources[0].column == 11


def test_verdicts() -> None:
    assert analyze(R + "return r[:10]").verdict == "PASS"
    assert analyze("return 1").verdict == "PASS"
    unbounded = analyze(R + "return r")
    assert unbounded.verdict == "WARN"
    [problem] = [d for d in unbounded.diagnostics if d.code == "unbounded-return"]
    assert problem.severity == "warning" and problem.line == 1
    assert "[:200]" in (problem.fix or "") and "ctx.summarize" in (problem.fix or "")
    assert analyze(R + "return r", options=Options(strict=True)).verdict == "BLOCK"
    assert analyze(R + "return r", options=Options(block_unbounded_returns=True)).verdict == "BLOCK"


def test_strict_also_blocks_a_large_literal() -> None:
    code = 'return "x" * 100000'
    relaxed = analyze(code)
    assert relaxed.verdict == "PASS" and relaxed.diagnostics[0].code == "large-literal-return"
    assert analyze(code, options=Options(strict=True)).verdict == "BLOCK"
    assert analyze(code, options=Options(block_unbounded_returns=True)).verdict == "PASS"
    assert analyze('return "x" * 10', options=Options(strict=True)).verdict == "PASS"


def test_unknown_callees_are_reported() -> None:
    got = analyze(R + "return mystery(r)")
    assert got.classification.value == "UNKNOWN"
    assert any(d.code == "unknown-callee" and "mystery" in d.message for d in got.diagnostics)


def test_syntax_errors_are_diagnosed_not_raised() -> None:
    got = analyze("x = (\n")
    assert got.classification.value == "UNKNOWN" and got.verdict == "WARN"
    assert got.diagnostics[0].code == "syntax-error"
    assert analyze("x = (\n", options=Options(strict=True)).verdict == "BLOCK"


def test_deep_nesting_fails_closed() -> None:
    code = R + "return " + "[" * 500 + "r" + "]" * 500
    got = analyze(code)
    assert got.verdict in ("WARN", "PASS") and isinstance(got, Analysis)


def _fan_out(calls: int, levels: int) -> str:
    """Helpers that each call the one below ``calls`` times: ``calls ** levels`` walks."""
    lines = ["def f0(x):\n    return x"]
    for i in range(1, levels + 1):
        lines.append(f"def f{i}(x):\n    return " + " + ".join([f"f{i - 1}(x)"] * calls))
    return "\n".join(lines) + f"\nreturn f{levels}(await tools.read(path='a'))"


def test_exponential_walks_stop_at_the_step_budget_and_fail_closed() -> None:
    got = analyze(_fan_out(calls=6, levels=11))
    assert got.classification.value == "UNKNOWN" and not got.bounded
    assert [d.code for d in got.diagnostics] == ["too-complex"] and got.verdict == "WARN"
    strict = analyze(_fan_out(calls=6, levels=11), options=Options(strict=True))
    assert strict.verdict == "BLOCK" and strict.diagnostics[0].severity == "error"
    assert analyze(_fan_out(calls=2, levels=3)).classification.value == "RAW"


def test_snippets_above_the_analysed_size_are_unknown_and_refused_when_strict() -> None:
    code = "x = 1\n" * (MAX_ANALYSED_CHARS // 6 + 1) + "return x"
    got = analyze(code)
    assert got.classification.value == "UNKNOWN" and got.diagnostics[0].code == "too-large"
    assert str(MAX_ANALYSED_CHARS) in got.diagnostics[0].message
    assert analyze(code, options=Options(strict=True)).verdict == "BLOCK"
    just_under = "x = 1\n" * (MAX_ANALYSED_CHARS // 6 - 2) + "return x"
    assert len(just_under) <= MAX_ANALYSED_CHARS and analyze(just_under).diagnostics == []


def test_the_effects_table_is_data_and_extensible() -> None:
    table, warnings = EffectsTable.default().extended(
        [
            {"match": "mcp.*.count", "effect": "scalar"},
            {"match": "tools.head", "effect": "select", "bound_keyword": "lines", "unit": "items"},
            {"match": "mcp.bad", "effect": "explode"},
            {"effect": "scalar"},
        ]
    )
    assert len(warnings) == 2 and "row 2" in warnings[0] and "row 3" in warnings[1]
    counted = analyze("return await mcp.jira.count(q='x')", table)
    assert (counted.classification.value, counted.bounded) == ("PROJECTED", True)
    head = analyze("return await tools.head(path='a', lines=30)", table)
    assert head.bound is not None and (head.bound.value, head.bound.unit) == (30, "items")
    assert analyze("return await tools.head(path='a')", table).bounded is False
    assert analyze("return await mcp.jira.count(q='x')").classification.value == "RAW"


def test_passthrough_rows_keep_the_argument_s_class() -> None:
    table, _ = EffectsTable.default().extended([{"match": "tools.echo", "effect": "passthrough"}])
    got = analyze(R + "return await tools.echo(r[:5])", table)
    assert (got.classification.value, got.bounded) == ("SELECTED", True)


@pytest.mark.parametrize("code", ["", "pass", "x = 1", "# only a comment\n"])
def test_nothing_returned(code: str) -> None:
    got = analyze(code)
    assert (got.classification.value, got.bounded, got.verdict) == ("NONE", True, "PASS")


def test_analysis_is_cached_by_code() -> None:
    code = R + "return r[:7]"
    assert analyze(code) is analyze(code)
