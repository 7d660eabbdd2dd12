"""Deterministic summaries within a token budget: ``structural`` and ``code``.

- structural: JSON as a schema-like outline with counts and sample values; logs as counts by
  level, the first and last errors with line numbers and repeated lines folded with counts;
  Markdown and YAML as a section outline with sizes; other text as head, tail and salient lines.
- code: Python through the standard ``ast`` (imports, classes, functions with signatures and the
  first docstring line, TODO/FIXME with line numbers); other languages by line heuristics;
  diffs as the files touched with +/- counts and hunk headers.

The same input always gives the same summary, and it always fits ``max_tokens``.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

from runtime.boundary._diffs import diff_stats
from runtime.boundary._fit import fit
from runtime.boundary._preview import preview
from runtime.boundary._preview_text import MARKERS

SummaryMode = Literal["structural", "code", "model"]
MODES: tuple[SummaryMode, ...] = get_args(SummaryMode)
_LEVEL = re.compile(r"\b(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)\b")
_DIGITS = re.compile(r"\d+")
_DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:pub\s+)?(?:async\s+)?(?:function|def|class|fn|func|interface|type|"
    r"struct|enum|impl|trait|module|package)\b[^{;]*"
)
_IMPORT = re.compile(r"^\s*(?:import|from|#include|use|require|using)\b.*")
_TODO = re.compile(r"\b(TODO|FIXME|XXX|HACK)\b.*")


@dataclass(frozen=True)
class Summary:
    text: str
    mode: str
    tokens: int
    coverage: float
    """Share of the input the summary read (1.0: all of it)."""


def summarize(
    text: str, mode: str, max_tokens: int, count: Callable[[str], int], content_type: str = "text"
) -> Summary:
    """A summary of ``text`` of at most ``max_tokens`` tokens."""
    if mode == "code":
        body = _code(text)
    elif looks_like_log(text) and content_type != "json":
        body = _log(text)
    else:
        body = None
    budget = max(64, max_tokens * 4)
    while True:
        shown = fit(body, budget) if body is not None else preview(text, budget, content_type).text
        tokens = count(shown)
        if tokens <= max_tokens or budget <= 64:
            break
        budget = int(budget * max_tokens / max(tokens, 1) * 0.95)
    if tokens > max_tokens:  # tiny budgets: cut by characters until it fits
        while shown and count(shown) > max_tokens:
            shown = shown[: len(shown) * 3 // 4]
        tokens = count(shown)
    return Summary(shown, mode, tokens, 1.0)


def looks_like_log(text: str) -> bool:
    sample = text[:20_000].splitlines()[:200]
    if len(sample) < 5:
        return False
    return sum(1 for line in sample if _LEVEL.search(line)) >= len(sample) // 3


def _log(text: str) -> str:
    lines = text.splitlines()
    levels: Counter[str] = Counter()
    errors: list[tuple[int, str]] = []
    shapes: Counter[str] = Counter()
    example: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        level = _LEVEL.search(line)
        name = level.group(1).upper() if level else "OTHER"
        levels["WARNING" if name == "WARN" else name] += 1
        if name in ("ERROR", "CRITICAL", "FATAL") or (not level and MARKERS.search(line)):
            errors.append((number, line))
        shape = _DIGITS.sub("#", line.strip())[:160]
        shapes[shape] += 1
        example.setdefault(shape, line.strip())
    out = [
        f"log, {len(lines)} lines; by level: "
        + ", ".join(f"{k} {v}" for k, v in levels.most_common())
    ]
    if errors:
        out.append(f"{len(errors)} error lines; first and last:")
        shown = errors[:5] + [e for e in errors[-5:] if e not in errors[:5]]
        out += [f"  {n:>6} | {_cut(line)}" for n, line in shown]
    repeated = [(shape, n) for shape, n in shapes.most_common(8) if n > 1]
    if repeated:
        out.append("most repeated lines (numbers folded):")
        out += [f"  x{n} {_cut(example[shape])}" for shape, n in repeated]
    return "\n".join(out)


PARSED_CODE_BYTES = 256 * 1024
"""Code larger than this is outlined by its lines, not parsed: CPython's parser holds the
interpreter for its whole run, and costs hundreds of bytes of memory per byte of source."""


def _code(text: str) -> str:
    if text.lstrip().startswith(("diff --git", "--- ", "Index: ")) or "\n@@ " in text[:5000]:
        return _diff(text)
    if len(text) > PARSED_CODE_BYTES:
        return _heuristic(text)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _heuristic(text)
    return _python(tree, text)


def _python(tree: ast.Module, text: str) -> str:
    out: list[str] = [f"python, {text.count(chr(10)) + 1} lines"]
    imports = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            imports += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            imports.append(f"{node.module or '.'}: {', '.join(a.name for a in node.names)}")
    if imports:
        out.append("imports: " + "; ".join(imports))
    for node in tree.body:
        out += _definition(node, "")
    todos = [
        (n, m.group(0)) for n, line in enumerate(text.splitlines(), 1) if (m := _TODO.search(line))
    ]
    if todos:
        out.append("notes:")
        out += [f"  L{n}: {_cut(note)}" for n, note in todos[:20]]
    return "\n".join(out)


def _definition(node: ast.stmt, indent: str) -> list[str]:
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        lines = [f"{indent}L{node.lineno} class {node.name}({bases}){_doc(node)}"]
        for child in node.body:
            lines += _definition(child, indent + "  ")
        return lines
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
        returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
        signature = f"{node.name}({ast.unparse(node.args)}){returns}"
        return [f"{indent}L{node.lineno} {prefix} {signature}{_doc(node)}"]
    return []


def _doc(node: ast.AST) -> str:
    doc = (
        ast.get_docstring(node)
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        else None
    )
    return f"  # {doc.strip().splitlines()[0][:100]}" if doc else ""


def _heuristic(text: str) -> str:
    lines = text.splitlines()
    out = [f"code, {len(lines)} lines"]
    imports = [line.strip() for line in lines if _IMPORT.match(line)][:30]
    if imports:
        out.append("imports: " + "; ".join(imports))
    for number, line in enumerate(lines, 1):
        if _DEFINITION.match(line):
            out.append(f"L{number} {_cut(line.strip())}")
        elif match := _TODO.search(line):
            out.append(f"L{number} note: {_cut(match.group(0))}")
    return "\n".join(out)


def _diff(text: str) -> str:
    stats = diff_stats(text)
    out = [f"diff: {len(stats.files)} files, +{stats.added} -{stats.removed}"]
    out += [f"  {name} (+{a} -{r})" for name, (a, r) in stats.files.items()]
    if stats.hunks:
        out.append("hunks:")
        out += [f"  {name}: {_cut(header)}" for name, header in stats.hunks[:40]]
    return "\n".join(out)


def _cut(line: str, limit: int = 200) -> str:
    return line if len(line) <= limit else line[:limit] + "…"
