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
import re
import threading
from types import CodeType

AST_LOCK = threading.RLock()
"""Held while CPython turns source into a tree or a tree into code."""


MAX_FSTRING_FIELDS = 4_000
"""The most replacement fields one f-string may hold for :func:`parse`: CPython 3.11 parses
an f-string in time quadratic in its fields (4,000 take 50 ms, 80,000 take 14 s), holding
the GIL and :data:`AST_LOCK` all along."""

_FSTRING = re.compile(r"(?<![\w])(?:[rR]?[fF]|[fF][rR])(\"\"\"|'''|\"|')")


def fstring_fields(source: str) -> int:
    """The most ``{`` one f-string literal of ``source`` holds (a quick over-count: ``{{``
    and the braces of a nested string count too)."""
    most, at = 0, 0
    while True:
        found = _FSTRING.search(source, at)
        if found is None:
            return most
        quote, start = found.group(1), found.end()
        if len(quote) == 1:
            line_end = source.find("\n", start)
            end = source.find(quote, start, line_end if line_end >= 0 else len(source))
        else:
            end = source.find(quote, start)
        end = len(source) if end < 0 else end
        most = max(most, source.count("{", start, end))
        at = end + len(quote)


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.Module:
    """``ast.parse`` under :data:`AST_LOCK`; ValueError for an f-string of more than
    :data:`MAX_FSTRING_FIELDS` fields, which CPython would take seconds over."""
    fields = fstring_fields(source)
    if fields > MAX_FSTRING_FIELDS:
        raise ValueError(
            f"an f-string holds {fields} replacement fields, past the {MAX_FSTRING_FIELDS} "
            "Python 3.11 parses in reasonable time; build the text with join"
        )
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
