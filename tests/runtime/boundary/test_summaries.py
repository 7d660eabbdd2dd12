"""Summaries spend their budget on what matters and say how much they show: a code summary
is an outline that reaches the main class, imports are a count, and ``coverage`` is the
share of definitions (or lines, or files) shown, below 1.0 whenever something is left out."""

from __future__ import annotations

import re

from hypothesis import event, given, settings
from hypothesis import strategies as st

from runtime.boundary import TokenCounter, summarize

from .sources import Writer, engine_module, entries, not_shown, python_modules

COUNT = TokenCounter().count
NUMBERED = re.compile(r"^ *\d+ \| ", re.MULTILINE)


def test_a_code_summary_reaches_the_main_class_and_says_what_it_left_out() -> None:
    """The issue's case: 30 imports first, then the main class. The imports are one line,
    the main class and its methods follow, and what did not fit is counted."""
    module = engine_module(methods=60)
    done = summarize(module.source(), "code", 500, COUNT)
    assert done.tokens <= 500
    assert "imports: 30 statements (L2-31)" in done.text and "from package" not in done.text
    engine = next(d for d in module.defined if d.name == "Engine")
    assert f"L36-{engine.end} class Engine(Base) [" in done.text
    shown = entries(done.text)
    assert 0 < len(shown) < len(module.defined) == 63
    assert len(shown) + not_shown(done.text) == 63
    assert done.coverage == len(shown) / 63
    assert re.search(r"… not shown: \d+ methods \(Engine \d+\)", done.text)


def test_a_whole_outline_covers_everything() -> None:
    module = engine_module(methods=4)
    done = summarize(module.source(), "code", 2000, COUNT)
    assert len(entries(done.text)) == len(module.defined) and done.coverage == 1.0
    assert "not shown" not in done.text
    assert "  L39-81 def step_0(self, job: Job, *, retries: int=3) -> Result [" in done.text
    assert "# Step 0 of a job." in done.text


def test_a_structural_summary_of_code_is_its_outline_too() -> None:
    done = summarize(engine_module().source(), "structural", 300, COUNT, name="engine.py")
    assert done.text.startswith("python, ") and "class Engine(Base)" in done.text
    assert done.coverage == len(entries(done.text)) / 33


def test_code_that_does_not_parse_is_outlined_by_its_lines() -> None:
    module = engine_module()
    module.lines[40] = "        job.counter = ((("
    done = summarize(module.source(), "code", 400, COUNT)
    assert "outline by line heuristics, not parsed: syntax error at line" in done.text
    truth = {d.line: d.end for d in module.defined}
    assert all(truth[e.line] == e.end for e in entries(done.text))
    assert done.coverage == len(entries(done.text)) / len(module.defined) < 1.0


def test_text_shown_by_its_first_and_last_lines_covers_those_lines() -> None:
    text = "\n".join(f"row {i}: " + "value " * (i % 7) for i in range(10_000))
    done = summarize(text, "structural", 300, COUNT)
    assert done.coverage == len(NUMBERED.findall(done.text)) / 10_000 < 0.01


def test_a_log_covers_the_lines_its_counts_fold() -> None:
    """Every line of a log that repeats one shape is folded into one count: all covered.
    A log of lines all different is not."""
    same = "\n".join(f"2026-11-30 12:00:00 INFO served request {i}" for i in range(5000))
    assert summarize(same, "structural", 200, COUNT).coverage == 1.0
    words = ["alpha", "beta", "gamma", "delta", "kappa", "omega", "sigma", "theta"]
    mixed = "\n".join(
        f"INFO {words[i % 8]} {words[i // 8 % 8]} {words[i // 64 % 8]}" for i in range(5000)
    )
    done = summarize(mixed, "structural", 200, COUNT)
    assert done.text.startswith("log, 5000 lines") and done.coverage < 0.1


def test_a_diff_covers_the_files_it_lists() -> None:
    diff = "".join(
        f"diff --git a/f{n}.py b/f{n}.py\n--- a/f{n}.py\n+++ b/f{n}.py\n@@ -1 +1 @@\n-a\n+b\n"
        for n in range(400)
    )
    done = summarize(diff, "code", 200, COUNT)
    assert done.text.startswith("diff: 400 files")
    assert done.coverage == len(re.findall(r"^  f\d+\.py \(", done.text, re.M)) / 400 < 1.0


@settings(max_examples=80, deadline=None)
@given(module=python_modules(items=30), max_tokens=st.integers(40, 500))
def test_coverage_is_what_the_summary_shows(module: Writer, max_tokens: int) -> None:
    """Whatever the module and the budget: the summary fits, each definition it shows is
    where it says, and its coverage is the share shown, below 1.0 when any is left out."""
    done = summarize(module.source(), "code", max_tokens, COUNT)
    assert done.tokens <= max_tokens and COUNT(done.text) == done.tokens
    if not module.defined:
        return
    truth = {d.line: d for d in module.defined}
    shown = entries(done.text)
    for entry in shown:
        assert truth[entry.line].end == entry.end
    assert done.coverage == len(shown) / len(module.defined)
    if shown:  # with room for one definition, there is room to count the others
        assert len(shown) + not_shown(done.text) == len(module.defined)
    event("none shown" if not shown else "some left out" if done.coverage < 1 else "all shown")
