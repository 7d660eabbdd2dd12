"""Compile a snippet: RestrictedPython's policy, extended to async, wrapped as an async body.

``compile_snippet(code)`` parses the snippet, turns a trailing expression into the return
value, applies :class:`SnippetPolicy` (RestrictedPython's transformer plus async syntax and a
plain ``print``), and wraps the statements into ``async def <main>()`` so that top-level
``await`` works. Names bound at the top level stay fast locals of the wrapper; a snippet
function that declares one of them ``global`` gets ``nonlocal`` instead, so the snippet keeps
module semantics (its functions see and update its top-level names) at local-variable speed.

Problems are returned together as :class:`CompileProblem` rows, never raised.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from types import CodeType
from typing import Any, cast

from contract import compile_tree, parse
from RestrictedPython.transformer import INSPECT_ATTRIBUTES, RestrictingNodeTransformer

FILENAME = "<snippet>"
MAIN = "__fabric_main__"

DENIED_ATTRIBUTES: frozenset[str] = INSPECT_ATTRIBUTES | {
    "f_code",
    "f_lineno",
    "f_lasti",
    "tb_lasti",
    "tb_lineno",
    "gi_running",
    "cr_running",
    "cr_origin",
    "mro",
    "format_field",
    "get_field",
    "get_value",
    "vformat",
}
"""Attribute names refused besides RestrictedPython's own (names starting with ``_`` and its
``INSPECT_ATTRIBUTES``): checked when the snippet is compiled, and again by the guard that
resolves names known only at run time (format field walks)."""

_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
DIRECT_CALLEES = _EXCEPTIONS | {
    "len", "str", "repr", "int", "float", "bool", "complex", "abs", "round", "isinstance",
    "issubclass", "print", "range", "hash", "ord", "chr", "hex", "oct", "bin", "ascii",
    "format", "divmod", "pow", "super", "sorted", "min", "max", "sum", "any", "all",
    "enumerate", "zip", "reversed", "filter", "map", "callable", "slice", "object",
    "property", "staticmethod", "classmethod", "ToolError", "PolicyError",
}  # fmt: skip
"""Builtins whose results are plain data or the snippet's own values: called directly, not
through ``_call_``, as long as the snippet never rebinds the name. ``list``, ``dict``, ``next``
and ``iter`` are not among them: their results come from iterating what they are given."""


@dataclass(frozen=True)
class CompileProblem:
    """One reason a snippet cannot run: a syntax error or a policy denial."""

    kind: str  # "syntax" or "policy"
    message: str
    line: int | None
    column: int | None


_NOT_ITERATORS = (
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.JoinedStr,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.DictComp,
    ast.SetComp,
)
"""Expressions whose value is never an iterator, so ``x += <it>`` needs no guard."""


def _call(name: str, args: list[ast.expr], like: ast.AST, keywords: list[ast.keyword]) -> ast.Call:
    return ast.copy_location(
        ast.Call(func=ast.Name(name, ast.Load()), args=args, keywords=keywords), like
    )


def _is_guard_call(node: ast.expr, guard: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == guard


class _Bindings(ast.NodeVisitor):
    """Every name the snippet binds, split into names bound only by plain ``def``/``class``
    statements and names bound any other way (assignments, parameters, imports, targets)."""

    def __init__(self) -> None:
        self.definitions: set[str] = set()
        self.other: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.other.add(node.id)

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        (self.other if node.decorator_list else self.definitions).add(node.name)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _definition

    def visit_arg(self, node: ast.arg) -> None:
        self.other.add(node.arg)

    def visit_alias(self, node: ast.alias) -> None:
        self.other.add(node.asname or node.name.split(".")[0])

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.other.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.other.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.other.update(node.names)


def direct_callees(tree: ast.AST) -> frozenset[str]:
    """Names whose calls need no result check: unbound builtins of ``DIRECT_CALLEES`` and
    functions and classes the snippet defines with plain, undecorated statements."""
    bindings = _Bindings()
    bindings.visit(tree)
    builtin = DIRECT_CALLEES - bindings.definitions - bindings.other
    return frozenset(builtin | (bindings.definitions - bindings.other))


class SnippetPolicy(RestrictingNodeTransformer):
    """RestrictedPython's policy, admitting async syntax and leaving ``print`` to builtins.

    On top of RestrictedPython's rewriting, every value that enters the snippet from outside
    its own code passes a guard: ``a.b(x)`` becomes ``_callattr_(a, "b", x)`` and ``f(x)``
    becomes ``_call_(f, x)`` (the result is checked) unless ``f`` is in ``direct``;
    ``await x`` becomes ``_admit_(await x)``; ``*x`` iterates through ``_getiter_``; what
    ``with ... as`` binds and what a decorator returns is checked.
    """

    direct: frozenset[str] = frozenset()

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr in DENIED_ATTRIBUTES and not node.attr.startswith("_"):
            self.error(
                node, f'"{node.attr}" is a restricted name: it exposes interpreter internals.'
            )
        return super().visit_Attribute(node)

    def visit_Call(self, node: ast.Call) -> Any:
        node = cast(ast.Call, super().visit_Call(node))
        func = node.func
        if isinstance(func, ast.Name) and (func.id == "_apply_" or func.id in self.direct):
            return node
        arity = len(node.args) if not node.keywords else None  # no starred args: _apply_ has them
        if _is_guard_call(func, "_getattr_"):
            assert isinstance(func, ast.Call)
            guard = f"_callattr{arity}_" if arity is not None and arity <= 2 else "_callattr_"
            return _call(guard, [*func.args, *node.args], node, node.keywords)
        guard = f"_call{arity}_" if arity is not None and arity <= 1 else "_call_"
        return _call(guard, [func, *node.args], node, node.keywords)

    def visit_YieldFrom(self, node: ast.YieldFrom) -> Any:
        """``yield from x`` delegates to ``x`` natively: it iterates through the guard."""
        node = self.node_contents_visit(node)
        node.value = _call("_getiter_", [node.value], node.value, [])
        return node

    def visit_Starred(self, node: ast.Starred) -> Any:
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            node.value = _call("_getiter_", [node.value], node.value, [])
        return node

    def visit_With(self, node: ast.With) -> Any:
        return self._admit_targets(cast(ast.With, super().visit_With(node)))

    def _admit_targets(self, node: ast.With | ast.AsyncWith) -> ast.With | ast.AsyncWith:
        """``with x as y``: ``y = _admit_(y)`` first thing in the body. An attribute or item
        target (``as self.f``, ``as d[k]``) takes the value through a name of its own first."""
        for n, item in enumerate(node.items):
            target = item.optional_vars
            if isinstance(target, ast.Attribute | ast.Subscript):
                held = f"_with_value_{n}_"
                item.optional_vars = ast.copy_location(ast.Name(held, ast.Store()), target)
                check = ast.Assign(
                    targets=[target],
                    value=_call("_admit_", [ast.Name(held, ast.Load())], target, []),
                )
                node.body.insert(0, ast.copy_location(check, target))
            elif isinstance(target, ast.Name):
                check = ast.Assign(
                    targets=[ast.Name(target.id, ast.Store())],
                    value=_call("_admit_", [ast.Name(target.id, ast.Load())], target, []),
                )
                node.body.insert(0, ast.copy_location(check, target))
        return node

    def _admit_decorated(self, node: Any) -> Any:
        if not node.decorator_list:
            return node
        check = ast.Assign(
            targets=[ast.Name(node.name, ast.Store())],
            value=_call("_admit_", [ast.Name(node.name, ast.Load())], node, []),
        )
        return [node, ast.copy_location(check, node)]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        return self._admit_decorated(super().visit_FunctionDef(node))

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        return self._admit_decorated(super().visit_ClassDef(node))

    def visit_Name(self, node: ast.Name) -> Any:
        # RestrictedPython rewrites print into a collector; ours is a capped builtin.
        if isinstance(node.ctx, ast.Load) and node.id == "print":
            return node
        return super().visit_Name(node)

    def inject_print_collector(self, node: Any, position: int = 0) -> None:
        return None

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        """``x += 1``, ``d[k] += 1`` and ``obj.n += 1`` run natively after the usual checks.

        Visiting the target applies the write guard (``_write_(d)[k] += 1``) and the name
        checks. ``+=`` and ``|=`` iterate their value natively when the target is a list, a
        dict or a deque, so a value that may be an iterator goes through ``_inplace_``, which
        runs it through the iteration guard. Values that cannot be one (constants, arithmetic,
        displays) skip the call, which keeps counting loops fast.
        """
        node = self.node_contents_visit(node)
        if isinstance(node.op, ast.Add | ast.BitOr) and not isinstance(node.value, _NOT_ITERATORS):
            node.value = _call("_inplace_", [node.value], node.value, [])
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        self.check_name(node, node.name, allow_magic_methods=True)
        self.check_function_argument_names(node)
        return self._admit_decorated(self.node_contents_visit(node))

    def visit_Await(self, node: ast.Await) -> Any:
        node = self.node_contents_visit(node)
        return _call("_admit_", [node], node, [])

    def visit_AsyncWith(self, node: ast.AsyncWith) -> Any:
        node = self.node_contents_visit(node)
        for item in reversed(node.items):
            if isinstance(item.optional_vars, ast.Tuple):
                tmp_target, unpack = self.gen_unpack_wrapper(node, item.optional_vars)
                item.optional_vars = tmp_target
                node.body.insert(0, unpack)
        return self._admit_targets(node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> Any:
        node = self.node_contents_visit(node)
        node.iter = self._guard_async_iter(node.target, node.iter)
        return node

    def visit_comprehension(self, node: ast.comprehension) -> Any:
        if not node.is_async:
            return super().visit_comprehension(node)
        node = self.node_contents_visit(node)
        node.iter = self._guard_async_iter(node.target, node.iter)
        return node

    def _guard_async_iter(self, target: ast.expr, iterable: ast.expr) -> ast.expr:
        if isinstance(target, ast.Tuple):
            call = ast.Call(
                func=ast.Name("_async_iter_unpack_sequence_", ast.Load()),
                args=[iterable, self.gen_unpack_spec(target), ast.Name("_getiter_", ast.Load())],
                keywords=[],
            )
        else:
            call = ast.Call(func=ast.Name("_getaiter_", ast.Load()), args=[iterable], keywords=[])
        return ast.copy_location(call, iterable)


class _TopLevelNames(ast.NodeVisitor):
    """Names bound by the snippet's top level (not inside its functions or classes)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.names.add(node.id)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.names.add(node.name)
        for expr in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if expr is not None:
                self.visit(expr)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.visit_FunctionDef(node)  # type: ignore[arg-type]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.names.add(node.name)
        for expr in [*node.decorator_list, *node.bases]:
            self.visit(expr)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return None

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        # Loop variables are the comprehension's own; only walrus targets bind outside it.
        for inner in ast.walk(node):
            if isinstance(inner, ast.NamedExpr) and isinstance(inner.target, ast.Name):
                self.names.add(inner.target.id)
        for generator in node.generators:
            self.visit(generator.iter)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_alias(self, node: ast.alias) -> None:
        self.names.add(node.asname or node.name.split(".")[0])

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.names.update(node.names)


class _GlobalToNonlocal(ast.NodeTransformer):
    """In nested functions, ``global x`` for a top-level name of the snippet becomes
    ``nonlocal x``: top-level names are locals of the wrapper function."""

    def __init__(self, top_level: set[str]) -> None:
        self.top_level = top_level
        self._depth = 0

    def _function(self, node: ast.AST) -> Any:
        self._depth += 1
        try:
            return self.generic_visit(node)
        finally:
            self._depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Global(self, node: ast.Global) -> Any:
        if not self._depth:
            return node  # outside any function: left as it is
        local = [n for n in node.names if n in self.top_level]
        other = [n for n in node.names if n not in self.top_level]
        out: list[ast.stmt] = []
        if local:
            out.append(ast.copy_location(ast.Nonlocal(names=local), node))
        if other:
            out.append(ast.copy_location(ast.Global(names=other), node))
        return out


class _YieldFinder(ast.NodeVisitor):
    """Finds a ``yield`` at the snippet's top level, which would make the body a generator."""

    def __init__(self) -> None:
        self.found: ast.AST | None = None

    def visit_Yield(self, node: ast.Yield) -> None:
        self.found = self.found or node

    def visit_YieldFrom(self, node: ast.YieldFrom) -> None:
        self.found = self.found or node

    def _skip(self, node: ast.AST) -> None:
        return None

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _skip


def _syntax_problem(exc: SyntaxError) -> CompileProblem:
    return CompileProblem("syntax", exc.msg or "invalid syntax", exc.lineno, exc.offset)


_LINE_PREFIX = "Line "


def _policy_problem(text: str) -> CompileProblem:
    """RestrictedPython reports 'Line N: message'; keep the number as data."""
    line: int | None = None
    message = text
    if text.startswith(_LINE_PREFIX) and ": " in text:
        head, message = text.split(": ", 1)
        digits = head[len(_LINE_PREFIX) :]
        line = int(digits) if digits.isdigit() else None
    return CompileProblem("policy", message, line, None)


def compile_snippet(code: str) -> tuple[CodeType | None, list[CompileProblem]]:
    """Compile ``code`` into a module whose execution defines ``MAIN`` (an async function)."""
    try:
        tree = parse(code, FILENAME)
    except SyntaxError as exc:
        return None, [_syntax_problem(exc)]
    except (ValueError, RecursionError, MemoryError) as exc:
        return None, [CompileProblem("syntax", f"{type(exc).__name__}: {exc}", None, None)]

    body = tree.body
    if body and isinstance(body[-1], ast.Expr):
        body[-1] = ast.copy_location(ast.Return(value=body[-1].value), body[-1])

    finder = _YieldFinder()
    for stmt in body:
        finder.visit(stmt)
    if finder.found is not None:
        line = getattr(finder.found, "lineno", None)
        return None, [CompileProblem("syntax", "'yield' outside function", line, None)]

    errors: list[str] = []
    policy = SnippetPolicy(errors, [], {})
    try:
        policy.direct = direct_callees(tree)
        policy.visit(tree)
    except RecursionError:
        return None, [CompileProblem("syntax", "the snippet is nested too deeply", None, None)]
    if errors:
        return None, [_policy_problem(e) for e in dict.fromkeys(errors)]

    collector = _TopLevelNames()
    for stmt in tree.body:
        if not isinstance(stmt, ast.Global):
            collector.visit(stmt)
    renamer = _GlobalToNonlocal(collector.names)
    wrapper_body: list[ast.stmt] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Global):
            continue  # a no-op at module level; invalid beside locals of the same name
        # The renamer only rewrites `global` statements, which appear only inside functions:
        # one visit of each top-level statement reaches them all.
        wrapper_body.append(renamer.visit(stmt))
    wrapper_body = wrapper_body or [ast.Pass()]
    main = ast.AsyncFunctionDef(
        name=MAIN,
        args=ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], defaults=[]
        ),
        body=wrapper_body,
        decorator_list=[],
        returns=None,
        type_comment=None,
        lineno=1,
        col_offset=0,
    )
    module = ast.Module(body=[main], type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        return compile_tree(module, FILENAME), []
    except SyntaxError as exc:
        return None, [_syntax_problem(exc)]
    except (ValueError, RecursionError, MemoryError) as exc:
        return None, [CompileProblem("syntax", f"{type(exc).__name__}: {exc}", None, None)]
