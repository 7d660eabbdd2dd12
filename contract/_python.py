"""CPython's parser and compiler, one thread at a time.

CPython 3.11 keeps the state of its AST conversions (a recursion depth counter) per
interpreter, not per thread: a parse in one thread and a compile of a tree in another can
interleave when a garbage-collection finalizer switches threads mid-conversion, and one of them
fails with ``SystemError: AST constructor recursion depth mismatch``. The analyzer parses in a
thread beside the sandbox's compilation, and previews parse in host-work threads, so every
conversion between source, tree and code in the host goes through :func:`parse`,
:func:`compile_tree` and :func:`literal_eval`, which hold one lock (libcst's
``evaluated_value`` is ``ast.literal_eval``, a parse: the analyzer reads literals through
:func:`literal_eval`).
"""

from __future__ import annotations

import ast
import threading
from types import CodeType

AST_LOCK = threading.RLock()
"""Held while CPython turns source into a tree or a tree into code."""


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.Module:
    """``ast.parse`` under :data:`AST_LOCK`."""
    with AST_LOCK:
        tree = ast.parse(source, filename, mode)
    assert isinstance(tree, ast.Module)
    return tree


def literal_eval(source: str) -> object:
    """``ast.literal_eval`` of a literal's source text under :data:`AST_LOCK`."""
    with AST_LOCK:
        return ast.literal_eval(source)


def compile_tree(tree: ast.Module, filename: str, *, flags: int = 0) -> CodeType:
    """``compile`` of a tree under :data:`AST_LOCK`."""
    with AST_LOCK:
        code: CodeType = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    return code
