"""Python outlines by the standard ``ast``.

At most ``PARSED_CHARS`` characters are parsed: CPython's parser holds the interpreter for
its whole run and takes about 170 bytes of memory per byte of source. A longer file is parsed
up to a top-level ``def``, ``class`` or decorator line before that limit, and the rest is
outlined by its definition-looking lines; the outline says where one stops and the other
begins. For a file that does not parse, the reason is handed back (to outline it by its
lines, saying why).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections import Counter

from contract import parse
from runtime.boundary._cut import cut_line
from runtime.boundary._outline import (
    MAX_DEFINITIONS,
    Definition,
    LineTable,
    Outline,
    counted,
    group_of,
    with_bytes,
)
from runtime.boundary._outline_heuristic import LIST_QUERIES, looked_at, scan

PARSED_CHARS = 256 * 1024
"""Characters of Python parsed by ``ast`` at most."""
_CUT_TRIES = 3
_SIGNATURE = 80
_DOC = 100
_TOP_LEVEL = re.compile(r"^(?:@|(?:async[ \t]+)?def[ \t]|class[ \t])", re.MULTILINE)
_DEFINES = re.compile(r"^[ \t]*(?:async[ \t]+def|def|class)[ \t]+[^\W\d]\w*", re.MULTILINE)
_LONE_CR = re.compile(r"\r(?!\n)")
_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def looks_defined(text: str) -> bool:
    """Whether a line in the part that would be parsed starts a ``def`` or ``class``: the
    cheap test before trying to parse text that came with no name."""
    return _DEFINES.search(text, 0, PARSED_CHARS) is not None


def python_outline(text: str) -> Outline | str:
    """The outline of ``text`` as Python, or why it could not be parsed."""
    if "\r" in text and _LONE_CR.search(text, 0, PARSED_CHARS):
        # Python ends a line there, ctx_read (and every offset given) does not: an outline
        # would name lines and ranges no read finds
        return "it ends lines with lone carriage returns, which ctx_read does not count"
    if len(text) <= PARSED_CHARS:
        tree, problem = _parse(text)
        if tree is None:
            return problem
        return _outline(tree, text, cut=len(text), how="outline by ast")
    for cut in _cuts(text):
        tree, _ = _parse(text[:cut])
        if tree is not None:
            last = text.count("\n", 0, cut)
            how = (
                f"outline by ast of lines 1-{last} (the first {cut} characters), "
                f"by line heuristics after"
            )
            return _outline(tree, text, cut=cut, how=how)
    return f"the first {PARSED_CHARS} characters parse up to no top-level definition"


def _parse(source: str) -> tuple[ast.Module | None, str]:
    try:
        with warnings.catch_warnings():  # invalid escapes and the like are the file's business
            warnings.simplefilter("ignore")
            return parse(source), ""
    except SyntaxError as exc:
        line = exc.lineno or "?"
        return None, f"syntax error at line {line}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def _cuts(text: str) -> list[int]:
    """Where a prefix to parse may end: the last few top-level definition lines before the
    limit (a prefix cut inside a string or a bracket does not parse, and the next is tried)."""
    starts = [m.start() for m in _TOP_LEVEL.finditer(text, 0, PARSED_CHARS) if m.start()]
    return starts[-_CUT_TRIES:][::-1]


def _outline(tree: ast.Module, text: str, *, cut: int, how: str) -> Outline:
    table = LineTable(text)
    collector = _Collector()
    collector.visit(tree)
    found, more = collector.found, collector.more
    if cut < len(text):
        rest = scan(text, table, "python", start=cut, room=MAX_DEFINITIONS - len(found))
        found += rest.found
        more += rest.more
        if rest.last_line < table.lines:
            how += f"; {looked_at(rest)}"
    doc = ast.get_docstring(tree)
    return Outline(
        language="python",
        how=how,
        lines=table.lines,
        size=table.size,
        definitions=with_bytes(table, found),
        more=dict(more),
        imports=counted(collector.imports, "statement"),
        doc=_first_line(doc) if doc else "",
        list_query=LIST_QUERIES["python"],
    )


class _Collector(ast.NodeVisitor):
    """Classes, functions and methods, and module-level imports; the bodies of functions are
    not looked into, the blocks of other compound statements (``if``, ``try``, ``with``,
    ``for``, ``match``) are."""

    def __init__(self) -> None:
        self.found: list[Definition] = []
        self.more: Counter[str] = Counter()
        self.imports: list[int] = []
        self._classes: list[str] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._add(node, "class", _bases(node))
        self._classes.append(node.name)
        self.generic_visit(node)
        self._classes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._add(node, "def", _signature(node))

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._add(node, "async def", _signature(node))

    def visit_Import(self, node: ast.Import) -> None:
        self.imports.append(node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.imports.append(node.lineno)

    def generic_visit(self, node: ast.AST) -> None:
        for name in _STATEMENT_LISTS:
            for child in getattr(node, name, ()):
                self.visit(child)

    def _add(
        self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef, kind: str, sig: str
    ) -> None:
        parent = self._classes[-1] if self._classes else None
        if len(self.found) >= MAX_DEFINITIONS:
            self.more[group_of(kind, parent)] += 1
            return
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        doc = ast.get_docstring(node)
        self.found.append(
            Definition(
                kind=kind,
                name=node.name,
                line=node.lineno,
                end=node.end_lineno or node.lineno,
                first=first,
                depth=len(self._classes),
                parent=parent,
                signature=sig,
                doc=_first_line(doc) if doc else "",
                private=node.name.startswith("_") and not node.name.endswith("__"),
            )
        )


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    try:
        text = f"({ast.unparse(node.args)})"
        if node.returns is not None:
            text += f" -> {ast.unparse(node.returns)}"
    except RecursionError:
        return "(…)"
    return _short(text, _SIGNATURE)


def _bases(node: ast.ClassDef) -> str:
    parts: list[ast.AST] = [*node.bases, *node.keywords]
    if not parts:
        return ""
    try:
        return _short("(" + ", ".join(ast.unparse(part) for part in parts) + ")", _SIGNATURE)
    except RecursionError:
        return "(…)"


def _first_line(doc: str) -> str:
    lines = doc.strip().splitlines()
    return cut_line(lines[0].strip(), _DOC) if lines else ""


def _short(text: str, limit: int) -> str:
    """A signature (text made from the tree, no line of the file) within ``limit``
    characters, '…' where it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
