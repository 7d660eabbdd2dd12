"""Deterministic summaries within a token budget: ``structural`` and ``code``.

- structural: JSON as a schema-like outline with counts and sample values; logs as counts by
  level, the first and last errors with line numbers and repeated lines folded with counts;
  code as its outline (see below); Markdown and YAML as a section outline with sizes; other
  text as head, tail and salient lines.
- code: an outline of classes, functions and methods with line and byte ranges, signatures
  and docstrings' first lines, imports folded to a count, then TODO/FIXME lines: Python
  through the standard ``ast``, other languages by definition-looking lines (see ``_code``);
  diffs as the files touched with +/- counts and hunk headers.

The same input always gives the same summary, and it always fits ``max_tokens``. Its
``coverage`` says how much of the input it shows (see ``Summary.coverage``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

from runtime.boundary._code import outline_of
from runtime.boundary._cut import cut_line
from runtime.boundary._diffs import diff_stats
from runtime.boundary._fit import size as _size
from runtime.boundary._outline import Outline
from runtime.boundary._preview import text_preview
from runtime.boundary._preview_code import code_view
from runtime.boundary._preview_text import MARKERS, fit_parts

SummaryMode = Literal["structural", "code", "model"]
MODES: tuple[SummaryMode, ...] = get_args(SummaryMode)
_LEVEL = re.compile(r"\b(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)\b")
_DIGITS = re.compile(r"\d+")
_TODO = re.compile(r"\b(?:TODO|FIXME|XXX|HACK)\b.*")
_NOTES_CHARS = 16 * 1024 * 1024
_LINE = 200

Render = Callable[[int], tuple[str, float]]
"""A summary within a byte budget, and its coverage."""


@dataclass(frozen=True)
class Summary:
    text: str
    mode: str
    tokens: int
    coverage: float
    """Share of the input the summary shows: of its definitions for code (the outline's
    "not shown" line counts the rest), of its lines for logs (a line counts when it is shown
    or folded into a repeat count shown) and other text, of its files for diffs; 1.0 for
    JSON, whose outline is made from all of it but not measured by what it shows."""


def summarize(
    text: str,
    mode: str,
    max_tokens: int,
    count: Callable[[str], int],
    content_type: str = "text",
    name: str | None = None,
) -> Summary:
    """A summary of ``text`` of at most ``max_tokens`` tokens; ``name`` is the file name it
    came from, when known (it says which language code is in)."""
    render = _renderer(text, mode, content_type, name)
    budget = max_tokens * 4
    while True:
        shown, coverage = render(budget)
        tokens = count(shown)
        if tokens <= max_tokens or budget <= 0:
            break
        budget = max(0, min(budget - 1, int(budget * max_tokens / max(tokens, 1) * 0.95)))
    return Summary(shown, mode, tokens, coverage)


def looks_like_log(text: str) -> bool:
    sample = text[:20_000].splitlines()[:200]
    if len(sample) < 5:
        return False
    return sum(1 for line in sample if _LEVEL.search(line)) >= len(sample) // 3


def _renderer(text: str, mode: str, content_type: str, name: str | None) -> Render:
    if mode == "code":
        if text.lstrip().startswith(("diff --git", "--- ", "Index: ")) or "\n@@ " in text[:5000]:
            return _weighted(*_diff(text))
        outline = outline_of(text, name, guess=True)
        if outline is not None:
            return _outlined(outline, _notes(text))
        return _previewed(text, content_type, None)
    if looks_like_log(text) and content_type != "json":
        return _weighted(*_log(text))
    return _previewed(text, content_type, name)


def _outlined(outline: Outline, notes: list[str]) -> Render:
    def render(budget: int) -> tuple[str, float]:
        view = code_view(outline, budget, summary=True, notes=notes)
        return view.text, view.coverage

    return render


def _previewed(text: str, content_type: str, name: str | None) -> Render:
    """The structural preview, the text looked at for code once."""
    looked: list[Outline | None] = []

    def render(budget: int) -> tuple[str, float]:
        if not looked and content_type == "text" and _size(text) > budget:
            looked.append(outline_of(text, name))
        shown = text_preview(text, budget, content_type, outline=looked[0] if looked else None)
        return shown.text, 1.0 if shown.coverage is None else shown.coverage

    return render


def _weighted(lines: list[tuple[str, int]], total: int) -> Render:
    """Lines that each show some units of the input (lines of a log, files of a diff)."""

    def render(budget: int) -> tuple[str, float]:
        shown, kept = fit_parts(lines, budget, "lines of this summary")
        return shown, kept / total if total else 1.0

    return render


def _log(text: str) -> tuple[list[tuple[str, int]], int]:
    """A log's summary lines, each weighed by the log lines it shows: an error line shown is
    one, a repeat count the lines it folds (less those shown as errors)."""
    lines = text.splitlines()
    levels: Counter[str] = Counter()
    errors: list[tuple[int, str]] = []
    shapes: Counter[str] = Counter()
    shape_of: dict[int, str] = {}
    example: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        level = _LEVEL.search(line)
        name = level.group(1).upper() if level else "OTHER"
        levels["WARNING" if name == "WARN" else name] += 1
        shape = _DIGITS.sub("#", line.strip())[:160]
        if name in ("ERROR", "CRITICAL", "FATAL") or (not level and MARKERS.search(line)):
            errors.append((number, line))
            shape_of[number] = shape
        shapes[shape] += 1
        example.setdefault(shape, line.strip())
    out = [
        (
            f"log, {len(lines)} lines; by level: "
            + ", ".join(f"{k} {v}" for k, v in levels.most_common()),
            0,
        )
    ]
    shown = errors[:5] + [e for e in errors[-5:] if e not in errors[:5]]
    if errors:
        out.append((f"{len(errors)} error lines; first and last:", 0))
        out += [(f"  {n:>6} | {cut_line(line, _LINE)}", 1) for n, line in shown]
    as_errors = Counter(shape_of[n] for n, _ in shown)
    repeated = [(shape, n) for shape, n in shapes.most_common(8) if n > 1]
    if repeated:
        out.append(("most repeated lines (numbers folded):", 0))
        out += [
            (f"  x{n} {cut_line(example[shape], _LINE)}", n - as_errors[shape])
            for shape, n in repeated
        ]
    return out, len(lines)


def _notes(text: str) -> list[str]:
    """TODO, FIXME, XXX and HACK lines, numbered."""
    found = []
    line, at = 1, 0
    for match in _TODO.finditer(text, 0, _NOTES_CHARS):
        line += text.count("\n", at, match.start())
        at = match.start()
        found.append(f"  L{line}: {cut_line(match.group(0).strip(), _LINE)}")
    return found


def _diff(text: str) -> tuple[list[tuple[str, int]], int]:
    stats = diff_stats(text)
    out = [(f"diff: {len(stats.files)} files, +{stats.added} -{stats.removed}", 0)]
    out += [(f"  {name} (+{a} -{r})", 1) for name, (a, r) in stats.files.items()]
    if stats.hunks:
        out.append(("hunks:", 0))
        out += [(f"  {name}: {cut_line(header, _LINE)}", 0) for name, header in stats.hunks[:40]]
    return out, len(stats.files)
