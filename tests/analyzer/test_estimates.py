"""A bound counts items, characters, bytes or tokens; its size is estimated (items times the
size of one item that the effects table declares), and a bounded return estimated above
``max_return_tokens`` gets the ``estimated-oversized`` advisory, a block when strict."""

from __future__ import annotations

import pytest

from analyzer import EffectsTable, Options, analyze

READ = 't = await tools.read(path="big.log")\n'


def test_five_thousand_lines_of_a_file_are_estimated_oversized() -> None:
    got = analyze(READ + "return t.splitlines()[:5000]")
    assert (got.classification.value, got.bounded, got.verdict) == ("SELECTED", True, "PASS")
    assert got.estimate is not None
    assert (got.estimate.bytes, got.estimate.basis) == (500_000, "5000 items x 100 bytes")
    first = got.diagnostics[0]
    assert first.code == "estimated-oversized" and first.severity == "warning"
    assert "about 125000 tokens" in first.message and first.line == 1
    strict = analyze(READ + "return t.splitlines()[:5000]", options=Options(strict=True))
    assert strict.verdict == "BLOCK" and strict.diagnostics[0].severity == "error"


def test_a_slice_of_text_counts_characters() -> None:
    got = analyze(READ + "return t.strip()[:200]")
    assert got.bound is not None and (got.bound.value, got.bound.unit) == (200, "bytes")
    assert got.explain() == "tools.read (line 1) -> strip -> [:200] (200 chars) -> return"
    assert got.estimate is not None and got.estimate.tokens == 50
    assert not got.diagnostics


def test_twenty_lines_fit() -> None:
    got = analyze(READ + "return t.splitlines()[:20]")
    assert got.estimate is not None and got.estimate.tokens == 500 and not got.diagnostics


@pytest.mark.parametrize(
    ("limit", "oversized"), [(3999, False), (4000, False), (4001, True)], ids=str
)
def test_the_advisory_starts_above_max_return_tokens(limit: int, oversized: bool) -> None:
    got = analyze(READ + f"return t[:{limit * 4}]", options=Options(max_return_tokens=4000))
    assert got.estimate is not None and got.estimate.tokens == limit
    assert any(d.code == "estimated-oversized" for d in got.diagnostics) is oversized


def test_a_row_declares_the_size_of_its_items() -> None:
    table, warnings = EffectsTable.default().extended(
        [{"match": "mcp.db.rows", "effect": "source", "item_bytes": 2000}]
    )
    assert warnings == []
    got = analyze("r = await mcp.db.rows()\nreturn r[:10]", table)
    assert got.estimate is not None and got.estimate.basis == "10 items x 2000 bytes"
    assert any(d.code == "estimated-oversized" for d in got.diagnostics)


def test_an_unbounded_return_has_no_estimate() -> None:
    assert analyze(READ + "return t").estimate is None


def test_a_fovea_call_with_a_token_budget_is_a_bounded_selection() -> None:
    got = analyze('r = await extensions.fovea_focus(query="auth", maxTokens=500)\nreturn r')
    assert (got.classification.value, got.bounded) == ("SELECTED", True)
    assert got.bound is not None and (got.bound.value, got.bound.unit) == (500, "tokens")
    assert got.estimate is not None and got.estimate.tokens == 500 and not got.diagnostics


def test_limits_reach_through_aliases_and_local_helpers() -> None:
    aliased = analyze("rows = await mcp.db.q()\nn = 20\nm = n\nreturn rows[:m]")
    assert aliased.bound is not None and aliased.bound.value == 20
    helper = analyze(
        "def head(xs, n=5):\n    return xs[:n]\nrows = await mcp.db.q()\nreturn head(rows, 7)"
    )
    assert helper.bound is not None and helper.bound.value == 7
    keyword = analyze('k = 30\nr = await tools.grep(pattern="x", max_results=k)\nreturn r')
    assert keyword.bound is not None and keyword.bound.value == 30
