"""Lines and columns of calls, for sources and diagnostics.

libcst computes positions with a metadata pass that costs more than parsing; the standard
library's ``ast`` gives them for a tenth of a libcst parse. Calls are matched to the text by
scope and dotted name: the calls of each function body (and of the module outside any
function) are kept apart, so a helper analysed when it is called, after calls the snippet
makes directly, still gets its own lines. Within one scope the n-th ``tools.read`` call met
is the n-th in that scope's text. The functions of the two trees are matched by their order
(a walk of statements only, cheap beside the parse).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from typing import Any

import libcst as cst

from contract import parse

MODULE = 0
"""The scope of code outside any function."""
_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")


class Positions:
    def __init__(self, code: str, module: cst.Module | None = None) -> None:
        self._calls: dict[tuple[int, str], list[tuple[int, int]]] = defaultdict(list)
        self._given: dict[int, tuple[int, int] | None] = {}
        self._next: dict[tuple[int, str], int] = defaultdict(int)
        self._scopes: dict[int, int] = {}
        try:
            tree = parse(code)
            functions: list[ast.AST] = []
            self._gather(tree, functions)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            self._calls.clear()
            return
        for spots in self._calls.values():
            spots.sort()
        ours: list[cst.FunctionDef] = []
        if module is not None:
            _functions(module.body, ours)
        if len(ours) == len(functions):
            self._scopes = {id(node): n + 1 for n, node in enumerate(ours)}
        else:  # the trees disagree: one scope for everything, matched in order
            merged: dict[tuple[int, str], list[tuple[int, int]]] = defaultdict(list)
            for (_, name), spots in self._calls.items():
                merged[(MODULE, name)].extend(spots)
            for spots in merged.values():
                spots.sort()
            self._calls = merged

    def _gather(self, tree: ast.Module, functions: list[ast.AST]) -> None:
        """Each call's spot, under the scope it is in; functions numbered in source order
        (a function's decorators, defaults and annotations are in the scope around it)."""
        stack: list[tuple[ast.AST, int]] = [(n, MODULE) for n in reversed(tree.body)]
        calls = self._calls
        while stack:
            node, scope = stack.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions.append(node)
                inner = len(functions)
                stack.extend((n, inner) for n in reversed(node.body))
                outside: list[ast.AST] = [*node.decorator_list, node.args]
                if node.returns is not None:
                    outside.append(node.returns)
                stack.extend((n, scope) for n in outside)
                continue
            if isinstance(node, ast.Call):
                name = _dotted(node.func)
                if name is not None:
                    calls[(scope, name)].append((node.lineno, node.col_offset + 1))
            stack.extend((n, scope) for n in reversed(list(ast.iter_child_nodes(node))))

    def scope(self, function: Any) -> int:
        """The scope of the calls in ``function``'s body (a libcst FunctionDef)."""
        return self._scopes.get(id(function), MODULE)

    def locate(self, name: str, node: Any, scope: int = MODULE) -> tuple[int, int] | None:
        """Where the call ``node`` to ``name`` is, in ``scope``; the same node always gets the
        same answer."""
        key = id(node)
        if key not in self._given:
            slot = (scope, name)
            spots = self._calls.get(slot, [])
            n = self._next[slot]
            self._given[key] = spots[n] if n < len(spots) else None
            self._next[slot] = n + 1
        return self._given[key]


def _functions(body: Any, out: list[cst.FunctionDef]) -> None:
    """The functions among ``body``'s statements and the blocks in them, in source order
    (the order ``ast`` meets them in)."""
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            continue
        if isinstance(statement, cst.FunctionDef):
            out.append(statement)
        for block in _blocks(statement):
            _functions(block, out)


def _blocks(statement: Any) -> list[Any]:
    """The statement lists inside a compound statement: its body, handlers, ``else``,
    ``finally`` and cases, an ``elif`` as a list of one."""
    found: list[list[Any]] = []
    for name in _BLOCKS:
        value = getattr(statement, name, None)
        for part in value if isinstance(value, list | tuple) else [value]:
            if isinstance(part, cst.If):
                found.append([part])
            elif isinstance(part, cst.IndentedBlock):
                found.append(list(part.body))
            else:
                inner = getattr(part, "body", None)
                if isinstance(inner, cst.IndentedBlock):
                    found.append(list(inner.body))
    return found


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None
