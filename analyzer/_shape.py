"""What the analyzer asks of a snippet before libcst reads it: that CPython can parse it, and
that it nests shallowly enough for libcst to read it in a bounded time.

libcst's native parser is quadratic in how deeply an expression nests (a chain of 800
subscripts takes half a second, 800 nested lists two seconds), holds the GIL while it runs,
and overflows its stack past a few thousand levels, which kills the process it runs in: the
host. CPython's own parser answers the same questions in microseconds and fails cleanly
(``RecursionError``, ``too many nested parentheses``), so it goes first, and the tree's shape
decides whether libcst is asked at all.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from contract import parse

MAX_DEPTH = 100
"""The deepest nesting of a snippet's syntax tree the analyzer reads (model-written code
rarely goes past 20)."""
DEEP_FROM = 20
"""Nesting up to this depth costs nothing in :data:`MAX_DEEP_COST`."""
MAX_DEEP_COST = 20_000
"""The most nesting past :data:`DEEP_FROM` a snippet may hold in all (each node counts the
levels it sits below it): about 50 ms of libcst's time, however the nesting is spread."""


@dataclass(frozen=True)
class Unreadable:
    """Why the analyzer does not read a snippet: ``code`` is a diagnostic code."""

    code: str
    message: str
    line: int | None = None
    column: int | None = None


def unreadable(code: str) -> Unreadable | None:
    """None when libcst may read ``code``; else why not (a syntax error, as CPython words it,
    or nesting too deep)."""
    try:
        tree = parse(code)
    except SyntaxError as exc:
        column = exc.offset if exc.offset and exc.offset > 0 else None
        return Unreadable(
            "syntax-error", f"the snippet does not parse: {exc.msg}", exc.lineno, column
        )
    except (RecursionError, MemoryError):
        return Unreadable("too-deep", "the snippet nests too deeply to analyse")
    except (ValueError, UnicodeError) as exc:  # a NUL byte, a lone surrogate
        return Unreadable("syntax-error", f"the snippet does not parse: {exc}")
    return _too_deep(tree)


def _too_deep(tree: ast.AST) -> Unreadable | None:
    pending: list[tuple[ast.AST, int]] = [(tree, 0)]
    cost = 0
    while pending:
        node, depth = pending.pop()
        if depth > MAX_DEPTH:
            return Unreadable(
                "too-deep",
                f"the snippet nests {MAX_DEPTH}+ levels deep (line "
                f"{getattr(node, 'lineno', '?')}), past what the analyzer reads",
            )
        cost += max(0, depth - DEEP_FROM)
        if cost > MAX_DEEP_COST:
            return Unreadable(
                "too-deep",
                "the snippet holds too much deeply nested code for the analyzer to read",
            )
        pending.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return None
