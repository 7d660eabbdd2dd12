"""Lines and columns of calls, for sources and diagnostics.

libcst computes positions with a metadata pass that costs more than parsing; the standard
library's ``ast`` gives them for a tenth of a libcst parse. Calls are matched by dotted name
in source order (the n-th ``tools.read`` call met is the n-th in the text).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from typing import Any


class Positions:
    def __init__(self, code: str) -> None:
        self._calls: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._given: dict[int, tuple[int, int] | None] = {}
        self._next: dict[str, int] = defaultdict(int)
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = _dotted(node.func)
                if name is not None:
                    self._calls[name].append((node.lineno, node.col_offset + 1))
        for spots in self._calls.values():
            spots.sort()

    def locate(self, name: str, node: Any) -> tuple[int, int] | None:
        """Where the call ``node`` to ``name`` is; the same node always gets the same answer."""
        key = id(node)
        if key not in self._given:
            spots = self._calls.get(name, [])
            n = self._next[name]
            self._given[key] = spots[n] if n < len(spots) else None
            self._next[name] = n + 1
        return self._given[key]


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None
