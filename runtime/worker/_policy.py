"""Compile a snippet: RestrictedPython's policy, extended to async, wrapped as an async body.

``compile_snippet(code)`` parses the snippet, turns a trailing expression into the return
value, applies :class:`SnippetPolicy` (RestrictedPython's transformer plus async syntax and a
plain ``print``), and wraps the statements into ``async def <main>()`` so that top-level
``await`` and ``return`` work. The snippet keeps a module's semantics: the wrapper declares
``global`` every top-level name that another scope may see (what its functions, classes and
comprehensions name, what it defines, what shadows a builtin), so functions read and update
them as module globals; the others stay fast locals, which nothing can tell apart. Qualified
names lose the wrapper's ``__fabric_main__.<locals>.`` prefix, so messages read as CPython's.

Problems are returned together as :class:`CompileProblem` rows, never raised.
"""

from __future__ import annotations

import ast
import builtins
import copy
from dataclasses import dataclass
from types import CodeType
from typing import Any, cast

from RestrictedPython.transformer import INSPECT_ATTRIBUTES, RestrictingNodeTransformer

from contract import compile_tree, parse

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

REFUSED_DUNDERS: frozenset[str] = frozenset(
    {
        "__globals__",
        "__builtins__",
        "__code__",
        "__closure__",
        "__subclasses__",
        "__reduce__",
        "__reduce_ex__",
        "__getstate__",
        "__setstate__",
        "__self__",
        "__objclass__",
        "__traceback__",
        "__await__",
        "__weakref__",
        "__dir__",
        "__sizeof__",
        "__getnewargs__",
        "__getnewargs_ex__",
        "__loader__",
        "__spec__",
        "__import__",
        "__build_class__",
        "__text_signature__",
    }
)
"""Underscore attribute names refused on every object, at compile time and again at run time:
each hands out interpreter internals (globals, code, frames, the reduce machinery) or the
means to drive what the snippet must only await."""

CLASS_HOOKS: frozenset[str] = frozenset(
    {"__subclasshook__", "__instancecheck__", "__subclasscheck__"}
    | {"_is_protocol", "_is_runtime_protocol", "_abc_impl"}
)
"""What would make ``isinstance`` (and so a ``case`` class pattern, which then reads attributes
natively) say yes of any object: a snippet's class never defines them (nor the flags that make
a class a typing protocol, checked by structure, without ``typing.Protocol`` as its base)."""

WRITE_REFUSED: frozenset[str] = (
    REFUSED_DUNDERS
    | CLASS_HOOKS
    | {"__bases__", "__class__", "__dict__", "__mro__", "__match_args__"}
)
"""Attribute names a snippet never assigns or deletes: each would change what an object is
(``__match_args__`` is declared in the class body, where it is checked)."""

RESERVED_NAMES: frozenset[str] = frozenset(
    {
        "__builtins__",
        "__metaclass__",
        "__fabric_main__",
        "__import__",
        "__build_class__",
        "breakpoint",
        "builtins",
        "_getattr_",
        "_getattr_private_",
        "_callattr_",
        "_callattr0_",
        "_callattr1_",
        "_callattr2_",
        "_call_",
        "_call0_",
        "_call1_",
        "_apply_",
        "_getitem_",
        "_getiter_",
        "_getaiter_",
        "_admit_",
        "_admitted_",
        "_arg_",
        "_args_",
        "_type_",
        "_free_",
        "_match_class_",
        "_write_",
        "_inplace_",
        "_unpack_sequence_",
        "_iter_unpack_sequence_",
        "_async_iter_unpack_sequence_",
        "_star_",
        "_kwargs_",
    }
)
"""Names a snippet may not bind: the guards the rewritten code calls, and the globals that
decide how its functions and classes are made."""

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

ITERATING: dict[str, tuple[int, ...]] = {
    "list": (0,), "tuple": (0,), "set": (0,), "frozenset": (0,), "sorted": (0,),
    "sum": (0,), "any": (0,), "all": (0,), "enumerate": (0,), "filter": (1,),
    "min": (0,), "max": (0,), "zip": (),
}  # fmt: skip
"""Builtins that fill a container (or pick an item) by iterating an argument in C: those
arguments (by position; ``()`` for all of them) go through ``_getiter_``, so what an iterable
from outside yields is checked as a loop's items are, not handed over inside a plain list.
``min`` and ``max`` only in their one-iterable form."""


METACLASS_KEYWORD = " metaclass"
"""What a class statement's ``metaclass=`` is passed to the sandbox's own metaclass as (every
class statement is made by it): a keyword no snippet can spell."""


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


def _parameters(args: ast.arguments) -> list[str]:
    """The parameters that take one value each."""
    return [arg.arg for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


def _collected(args: ast.arguments) -> list[str]:
    """``*args`` and ``**kwargs``: a tuple and a dict that C code built from what it passed,
    so their items are admitted too (a ``for`` over a plain tuple reads it natively)."""
    return [arg.arg for arg in (args.vararg, args.kwarg) if arg is not None]


def _admitting_all(name: str, where: str, like: ast.AST, alone: bool) -> ast.Call:
    what = ast.Constant(f"argument {name!r} of {where}")
    given = [ast.Name(name, ast.Load()), what, *([ast.Constant(True)] if alone else [])]
    return _call("_args_", given, like, [])


def _seen(name: str, like: ast.AST, op: ast.cmpop) -> ast.Compare:
    """``_type_(name) in _free_`` (or ``not in``): the admission lets its type pass as it is."""
    return ast.Compare(
        left=_call("_type_", [ast.Name(name, ast.Load())], like, []),
        ops=[op],
        comparators=[ast.Name("_free_", ast.Load())],
    )


def _admitting(name: str, where: str, like: ast.AST) -> ast.Call:
    what = ast.Constant(f"argument {name!r} of {where}")
    return _call("_arg_", [ast.Name(name, ast.Load()), what], like, [])


def _parameter_check(name: str, where: str, like: ast.AST) -> ast.expr:
    """``_type_(name) in _free_ or _arg_(name, what, True)``: true once ``name`` is admitted
    as it is (a lambda cannot rebind it: an assignment expression is a syntax error in a
    comprehension's iterable, where lambdas go as keys)."""
    checked = _admitting(name, where, like)
    checked.args.append(ast.Constant(True))
    check = ast.BoolOp(ast.Or(), [_seen(name, like, ast.In()), checked])
    return ast.copy_location(check, like)


def _admit_parameters(node: Any) -> Any:
    """A function's parameters are admitted as its body begins (after its docstring): C code
    calls a snippet's functions with whatever it has (``bisect`` hands a ``key`` function's
    result to the snippet's ``__lt__``, a container compares its items with the snippet's
    ``__eq__``), and a value from outside must pass the same check there as anywhere else.
    A parameter whose type the admission lets pass as it is costs one set lookup:
    ``if _type_(x) not in _free_: x = _arg_(x, what)``."""
    checks: list[ast.stmt] = []
    for name in _parameters(node.args):
        store = ast.Assign([ast.Name(name, ast.Store())], _admitting(name, f"{node.name}()", node))
        check = ast.If(test=_seen(name, node, ast.NotIn()), body=[store], orelse=[])
        checks.append(ast.fix_missing_locations(ast.copy_location(check, node)))
    for name in _collected(node.args):
        store = ast.Assign(
            [ast.Name(name, ast.Store())], _admitting_all(name, f"{node.name}()", node, False)
        )
        checks.append(ast.fix_missing_locations(ast.copy_location(store, node)))
    body = node.body
    first = body[0] if body else None
    documented = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    at = 1 if documented else 0
    node.body = [*body[:at], *checks, *body[at:]]
    return node


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


def call_sites(tree: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    """From one walk of the snippet's bindings: the names whose calls need no result check
    (unbound builtins of ``DIRECT_CALLEES`` and functions and classes the snippet defines
    with plain, undecorated statements), and the names of :data:`ITERATING` it never rebinds
    (so they are the builtins)."""
    bindings = _Bindings()
    bindings.visit(tree)
    bound = bindings.definitions | bindings.other
    builtin = DIRECT_CALLEES - bound
    direct = frozenset(builtin | (bindings.definitions - bindings.other))
    return direct, frozenset(ITERATING) - bound


class SnippetPolicy(RestrictingNodeTransformer):
    """RestrictedPython's policy, admitting async syntax and leaving ``print`` to builtins.

    On top of RestrictedPython's rewriting, every value that enters the snippet from outside
    its own code passes a guard: ``a.b(x)`` becomes ``_callattr_(a, "b", x)`` and ``f(x)``
    becomes ``_call_(f, x)`` (the result is checked) unless ``f`` is in ``direct``;
    ``await x`` becomes ``_admit_(await x)``; ``*x`` iterates through ``_getiter_``; what
    ``with ... as`` binds and what a decorator returns is checked.
    """

    direct: frozenset[str] = frozenset()
    iterating: frozenset[str] = frozenset()

    def check_name(self, node: Any, name: str | None, allow_magic_methods: bool = False) -> None:
        """Any name the snippet likes (``_cache``, ``__repr__``), but not the guards' own."""
        if name in RESERVED_NAMES:
            self.error(node, f'"{name}" is a reserved name: the sandbox uses it.')

    def gen_tmp_name(self) -> str:
        """A temporary of the rewriting (``with f() as (a, b)``, a chained unpacking) that no
        snippet can spell: a dot is not in identifiers, so a snippet's own ``_tmp0`` is never
        overwritten or deleted by it."""
        name = f"_tmp.{self._tmp_idx}"
        self._tmp_idx += 1
        return name

    def visit_Assign(self, node: ast.Assign) -> Any:
        """``a, b = c, d = f()`` evaluates ``f()`` once, as CPython does (RestrictedPython
        would call it once per target, right to left): the value goes to a temporary, then to
        each target from the left."""
        if len(node.targets) < 2 or not any(
            isinstance(t, ast.Tuple | ast.List) for t in node.targets
        ):
            return super().visit_Assign(node)
        held = self.gen_tmp_name()
        first = ast.Assign(targets=[ast.Name(held, ast.Store())], value=node.value)
        steps: list[ast.stmt] = [ast.copy_location(first, node)]
        for target in node.targets:
            each = ast.Assign(targets=[target], value=ast.Name(held, ast.Load()))
            steps.append(ast.copy_location(each, node))
        steps.append(ast.copy_location(ast.Delete(targets=[ast.Name(held, ast.Del())]), node))
        out: list[Any] = []
        for step in steps:
            visited = self.visit(step)
            out.extend(visited if isinstance(visited, list) else [visited])
        return out

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        """``a.b`` becomes ``_getattr_(a, "b")``, ``a._b`` ``_getattr_private_(a, "_b")``
        (checked against what ``a`` is), ``a.b = c`` ``_write_(a, "b").b = c``."""
        name = node.attr
        if name in DENIED_ATTRIBUTES or name in REFUSED_DUNDERS:
            self.error(node, f'"{name}" is a restricted name: it exposes interpreter internals.')
        elif name in WRITE_REFUSED and not isinstance(node.ctx, ast.Load):
            self.error(
                node, f'"{name}" cannot be assigned or deleted: it changes what an object is.'
            )
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            guard = "_getattr_private_" if name.startswith("_") else "_getattr_"
            return _call(guard, [node.value, ast.Constant(name)], node, [])
        node.value = _call("_write_", [node.value, ast.Constant(name)], node.value, [])
        return node

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        """``a[i:j] = v`` becomes ``_write_(a, None, True)[i:j] = v``: a list takes a slice's
        value by iterating it natively, so the write guard gives it one whose items passed
        the iteration guard."""
        sliced = isinstance(node.ctx, ast.Store) and isinstance(node.slice, ast.Slice)
        visited = super().visit_Subscript(node)
        if (
            sliced
            and isinstance(visited, ast.Subscript)
            and _is_guard_call(visited.value, "_write_")
        ):
            assert isinstance(visited.value, ast.Call)
            visited.value.args.extend([ast.Constant(None), ast.Constant(True)])
        return visited

    def visit_Call(self, node: ast.Call) -> Any:
        node = cast(ast.Call, super().visit_Call(node))
        func = node.func
        if isinstance(func, ast.Name) and func.id == "_apply_":
            # f(*a, **k): what does not unpack is named as CPython names it, by f.
            for arg in node.args:
                if isinstance(arg, ast.Starred) and _is_guard_call(arg.value, "_getiter_"):
                    assert isinstance(arg.value, ast.Call)
                    arg.value.func = ast.Name("_star_", ast.Load())
            if any(keyword.arg is None for keyword in node.keywords):
                # every keyword in one mapping, merged by the guard: a name given twice is
                # named by f, as CPython names it, not by the guard that is called
                parts: list[ast.expr] = []
                for keyword in node.keywords:
                    if keyword.arg is None:
                        parts.append(keyword.value)
                    elif parts and isinstance(parts[-1], ast.Dict):
                        parts[-1].keys.append(ast.Constant(keyword.arg))
                        parts[-1].values.append(keyword.value)
                    else:
                        parts.append(ast.Dict([ast.Constant(keyword.arg)], [keyword.value]))
                merged = _call("_kwargs_", parts, node, [])
                node.keywords = [ast.copy_location(ast.keyword(arg=None, value=merged), node)]
            return node
        if isinstance(func, ast.Name) and func.id in self.iterating:
            self._iterate_through_guard(func.id, node)
        if isinstance(func, ast.Name) and func.id in self.direct:
            return node
        arity = len(node.args) if not node.keywords else None  # no starred args: _apply_ has them
        if _is_guard_call(func, "_getattr_"):
            assert isinstance(func, ast.Call)
            guard = f"_callattr{arity}_" if arity is not None and arity <= 2 else "_callattr_"
            return _call(guard, [*func.args, *node.args], node, node.keywords)
        guard = f"_call{arity}_" if arity is not None and arity <= 1 else "_call_"
        return _call(guard, [func, *node.args], node, node.keywords)

    @staticmethod
    def _iterate_through_guard(name: str, node: ast.Call) -> None:
        """``list(x)`` becomes ``list(_getiter_(x))`` (see :data:`ITERATING`)."""
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            return
        if name in ("min", "max") and len(node.args) != 1:
            return
        positions = ITERATING[name] or range(len(node.args))
        for n in positions:
            if n < len(node.args) and not _is_guard_call(node.args[n], "_getiter_"):
                node.args[n] = _call("_getiter_", [node.args[n]], node.args[n], [])

    def visit_Nonlocal(self, node: ast.Nonlocal) -> Any:
        return node

    def visit_TryStar(self, node: ast.AST) -> Any:
        return self.node_contents_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        return self.node_contents_visit(node)

    def gen_unpack_spec(self, tpl: ast.Tuple) -> ast.Dict:
        """RestrictedPython's spec, plus whether the target has a starred name (without one,
        unpacking takes one item more than it binds, as CPython does, and no more)."""
        spec = super().gen_unpack_spec(tpl)
        spec.keys.append(ast.Constant("star"))
        spec.values.append(ast.Constant(any(isinstance(e, ast.Starred) for e in tpl.elts)))
        return spec

    # -- match: every pattern kind; what a pattern captures is admitted before use ----------

    def visit_Match(self, node: ast.Match) -> Any:
        """Before the ``match``, the class of each class pattern with positional
        sub-patterns is looked up once, through the guards, and the names in its
        ``__match_args__`` are checked (``_match_class_``): CPython reads them natively from
        whatever the pattern's ``isinstance`` accepts. The pattern then uses that class, held
        in a name no snippet can spell."""
        held: list[str] = []
        checks: list[ast.stmt] = []
        for case in node.cases:
            for pattern in ast.walk(case.pattern):
                if not (isinstance(pattern, ast.MatchClass) and pattern.patterns):
                    continue
                self._dotted(pattern.cls)
                name = f"_match.{self._tmp_idx}"
                self._tmp_idx += 1
                looked_up = self.visit(copy.deepcopy(pattern.cls))
                count = ast.Constant(len(pattern.patterns))
                value = _call("_match_class_", [looked_up, count], pattern, [])
                assign = ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)
                checks.append(ast.copy_location(assign, pattern))
                pattern.cls = ast.copy_location(ast.Name(name, ast.Load()), pattern.cls)
                held.append(name)
        node = self.node_contents_visit(node)
        if not held:
            return node
        forget = ast.Delete(targets=[ast.Name(name, ast.Del()) for name in held])
        return [*checks, node, ast.copy_location(forget, node)]

    def visit_match_case(self, node: ast.match_case) -> Any:
        node = self.node_contents_visit(node)
        captured = _captures(node.pattern)
        if captured:
            # A class pattern reads attributes natively (its keywords and the names in
            # __match_args__): what it captures is checked to the bottom, the rest at the top.
            # CPython binds captures before the guard runs, so the pattern binds names no
            # snippet can spell, and the guard copies them to the snippet's once admitted:
            # a refusal the snippet catches leaves its names unbound.
            deep = sorted(_class_captures(node.pattern))
            order = [*deep, *sorted(captured - set(deep))]
            held = {name: f"_cap.{self._tmp_idx + n}" for n, name in enumerate(order)}
            self._tmp_idx += len(order)
            _rename_captures(node.pattern, held)
            names: list[ast.expr] = [
                ast.Constant(len(deep)),
                *(ast.Name(held[n], ast.Load()) for n in order),
            ]
            check = _call("_admitted_", names, node.pattern, [])
            bind = ast.Tuple(
                [
                    ast.NamedExpr(ast.Name(n, ast.Store()), ast.Name(held[n], ast.Load()))
                    for n in order
                ],
                ast.Load(),
            )
            parts = [check, bind] if node.guard is None else [check, bind, node.guard]
            node.guard = ast.copy_location(ast.BoolOp(ast.And(), parts), node.pattern)
        return node

    def _pattern(self, node: ast.AST) -> Any:
        return self.node_contents_visit(node)

    visit_MatchSingleton = visit_MatchSequence = visit_MatchOr = _pattern

    def visit_MatchMapping(self, node: ast.MatchMapping) -> Any:
        self.check_name(node, node.rest)
        return self.node_contents_visit(node)

    def _pattern_name(self, node: ast.AST, name: str) -> None:
        if name.startswith("_") or name in DENIED_ATTRIBUTES:
            self.error(node, f'"{name}" cannot be matched as an attribute: it is private.')

    def _dotted(self, node: ast.expr) -> None:
        """A pattern's ``Color.RED`` or ``module.Class``, which CPython looks up itself (a
        pattern admits no call): every name in it passes the compile-time checks."""
        while isinstance(node, ast.Attribute):
            self._pattern_name(node, node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            self.check_name(node, node.id)

    def visit_MatchValue(self, node: ast.MatchValue) -> Any:
        if isinstance(node.value, ast.Attribute):
            self._dotted(node.value)
            return node
        return self.node_contents_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> Any:
        for name in node.kwd_attrs:
            self._pattern_name(node, name)
        self._dotted(node.cls)
        node.patterns = [self.visit(p) for p in node.patterns]
        node.kwd_patterns = [self.visit(p) for p in node.kwd_patterns]
        return node

    def visit_MatchStar(self, node: ast.MatchStar) -> Any:
        self.check_name(node, node.name)
        return node

    def visit_MatchAs(self, node: ast.MatchAs) -> Any:
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

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
        """``with x as y``: the value goes to a name no snippet can spell, and ``y =
        _admit_(that)`` is the body's first statement (so is ``self.f = ...`` or ``d[k] =
        ...`` for an attribute or item target)."""
        for item in node.items:
            target = item.optional_vars
            if isinstance(target, ast.Attribute | ast.Subscript):
                held = f"_with.{self._tmp_idx}"  # no snippet can spell it
                self._tmp_idx += 1
                item.optional_vars = ast.copy_location(ast.Name(held, ast.Store()), target)
                check = ast.Assign(
                    targets=[target],
                    value=_call("_admit_", [ast.Name(held, ast.Load())], target, []),
                )
                node.body.insert(0, ast.copy_location(check, target))
            elif isinstance(target, ast.Name):
                # bound only once admitted: a refusal a snippet's __exit__ swallows leaves
                # the name unbound, not holding what was refused
                held = f"_with.{self._tmp_idx}"
                self._tmp_idx += 1
                item.optional_vars = ast.copy_location(ast.Name(held, ast.Store()), target)
                check = ast.Assign(
                    targets=[ast.Name(target.id, ast.Store())],
                    value=_call("_admit_", [ast.Name(held, ast.Load())], target, []),
                )
                node.body.insert(0, ast.copy_location(check, target))
        return node

    def _admit_decorated(self, node: Any) -> Any:
        """What the decorators made is admitted before the name is bound to it: ``_admit_``
        becomes the outermost decorator, so a refusal leaves the name unbound."""
        if node.decorator_list:
            admit = ast.copy_location(ast.Name("_admit_", ast.Load()), node.decorator_list[0])
            node.decorator_list.insert(0, admit)
        return node

    def _no_finalizer(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name == "__del__":
            self.error(
                node,
                '"__del__" cannot be defined: a finalizer runs whenever the collector decides, '
                "inside the runtime's own work; use a with block (__enter__/__exit__) instead.",
            )

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        self._no_finalizer(node)
        return self._admit_decorated(_admit_parameters(super().visit_FunctionDef(node)))

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        made = cast(ast.Lambda, super().visit_Lambda(node))
        checks = [_parameter_check(name, "a lambda", made) for name in _parameters(made.args)]
        checks += [_admitting_all(name, "a lambda", made, True) for name in _collected(made.args)]
        if checks:  # each check is true once its parameter is admitted: then the body
            made.body = ast.copy_location(ast.BoolOp(ast.And(), [*checks, made.body]), made)
            ast.fix_missing_locations(made)
        return made

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        for keyword in node.keywords:
            if keyword.arg == "metaclass":  # the sandbox's metaclass checks which it is
                keyword.arg = METACLASS_KEYWORD
        made = cast(ast.ClassDef, super().visit_ClassDef(node))
        for keyword in node.keywords:
            if keyword.arg is None:
                self.error(node, "class keywords cannot be unpacked with **: name each one.")
        made.keywords.extend(node.keywords)  # class C(Base, tag=1): for __init_subclass__
        for keyword in made.keywords:  # RestrictedPython parses its own class at line 1
            ast.copy_location(keyword, node)
            ast.copy_location(keyword.value, node)
        return self._admit_decorated(ast.copy_location(made, node))

    def visit_Name(self, node: ast.Name) -> Any:
        # RestrictedPython rewrites print into a collector; ours is a capped builtin.
        if isinstance(node.ctx, ast.Load) and node.id == "print":
            return node
        return super().visit_Name(node)

    def inject_print_collector(self, node: Any, position: int = 0) -> None:
        return None

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        """``x += 1``, ``d[k] += 1`` and ``obj.n += 1`` run natively after the usual checks.

        ``+=`` and ``|=`` iterate their value natively when the target is a list, a deque or
        a dict, so unless the value cannot be an iterable from outside (constants,
        arithmetic, displays), it goes through ``_inplace_(target, value, op)``, which runs
        it through the iteration guard for those targets. A name is read twice for that (no
        one can tell); an attribute or an item is read once, through the guards, into a
        temporary that takes the operation and is written back, as CPython reads and writes
        it once. A slice target keeps the value-only check (an iterator goes through the
        guard)."""
        if not isinstance(node.op, ast.Add | ast.BitOr) or isinstance(node.value, _NOT_ITERATORS):
            return self.node_contents_visit(node)
        target, op = node.target, ast.Constant("+" if isinstance(node.op, ast.Add) else "|")
        if isinstance(target, ast.Name):
            node = self.node_contents_visit(node)
            read = ast.Name(target.id, ast.Load())
            node.value = _call("_inplace_", [read, node.value, op], node.value, [])
            return node
        if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Slice):
            node = self.node_contents_visit(node)
            node.value = _call("_inplace_", [ast.Constant(None), node.value, op], node.value, [])
            return node
        if not isinstance(target, ast.Attribute | ast.Subscript):
            return self.node_contents_visit(node)
        return self._augmented_part(node, target)

    def _augmented_part(self, node: ast.AugAssign, target: ast.Attribute | ast.Subscript) -> Any:
        """``obj.a += v`` as ``t = obj; held = t.a; held += v; t.a = held`` (``obj[k]`` with
        its key in a temporary too), every temporary deleted after."""
        names = [self.gen_tmp_name()]
        steps: list[ast.stmt] = [
            ast.Assign(targets=[ast.Name(names[0], ast.Store())], value=target.value)
        ]
        held = self.gen_tmp_name()
        if isinstance(target, ast.Attribute):
            part: ast.expr = ast.Attribute(ast.Name(names[0], ast.Load()), target.attr, ast.Load())
            store: ast.expr = ast.Attribute(
                ast.Name(names[0], ast.Load()), target.attr, ast.Store()
            )
        else:
            names.append(self.gen_tmp_name())
            steps.append(ast.Assign(targets=[ast.Name(names[1], ast.Store())], value=target.slice))
            key = ast.Name(names[1], ast.Load())
            part = ast.Subscript(ast.Name(names[0], ast.Load()), key, ast.Load())
            store = ast.Subscript(ast.Name(names[0], ast.Load()), key, ast.Store())
        steps.append(ast.Assign(targets=[ast.Name(held, ast.Store())], value=part))
        steps.append(ast.AugAssign(ast.Name(held, ast.Store()), node.op, node.value))
        steps.append(ast.Assign(targets=[store], value=ast.Name(held, ast.Load())))
        gone: list[ast.expr] = [ast.Name(name, ast.Del()) for name in (*names, held)]
        steps.append(ast.Delete(targets=gone))
        out: list[Any] = []
        for step in steps:
            ast.copy_location(step, node)
            ast.fix_missing_locations(step)
            visited = self.visit(step)
            out.extend(visited if isinstance(visited, list) else [visited])
        return out

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        self._no_finalizer(node)
        self.check_name(node, node.name, allow_magic_methods=True)
        self.check_function_argument_names(node)
        return self._admit_decorated(_admit_parameters(self.node_contents_visit(node)))

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


def _class_captures(pattern: ast.AST) -> set[str]:
    """The names bound inside the class patterns of ``pattern``."""
    names: set[str] = set()
    for node in ast.walk(pattern):
        if isinstance(node, ast.MatchClass):
            names |= _captures(node)
    return names


def _rename_captures(pattern: ast.AST, held: dict[str, str]) -> None:
    """Each name ``pattern`` binds, bound to ``held[name]`` instead."""
    for node in ast.walk(pattern):
        if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            node.name = held[node.name]
        elif isinstance(node, ast.MatchMapping) and node.rest:
            node.rest = held[node.rest]


def _captures(pattern: ast.AST) -> set[str]:
    """The names a match pattern binds."""
    names: set[str] = set()
    for node in ast.walk(pattern):
        if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


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

    def visit_match_case(self, node: ast.match_case) -> None:
        self.names.update(_captures(node.pattern))
        self.generic_visit(node)


_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.GeneratorExp,
    ast.DictComp,
)


def _nested_names(body: list[ast.stmt]) -> set[str]:
    """Every name used inside a function, lambda, class body or comprehension of ``body``
    (more than those scopes take from the top level: a superset is enough), and every name
    declared ``global``."""
    names: set[str] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Global):
                names.update(node.names)
            elif isinstance(node, _SCOPES):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Name):
                        names.add(inner.id)
                    elif isinstance(inner, ast.Global | ast.Nonlocal):
                        names.update(inner.names)
    return names


def module_globals(body: list[ast.stmt]) -> list[str]:
    """The top-level names that must be module globals for the snippet to behave as a module:
    those its functions, classes and comprehensions may read or declare ``global``, those it
    defines with ``def`` or ``class``, and those that shadow a builtin. The rest stay fast
    locals of the wrapper, which no other scope can tell apart from globals."""
    collector = _TopLevelNames()
    for stmt in body:
        collector.visit(stmt)
    defined = {
        stmt.name
        for stmt in body
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    wanted = _nested_names(body) | defined | set(dir(builtins))
    return sorted(collector.names & wanted)


def _module_annotation(stmt: ast.AnnAssign) -> list[ast.stmt]:
    """``x: T = v`` at the top level, as a module runs it: ``x = v``, then ``T`` evaluated and
    kept in ``__annotations__`` (for a simple name; evaluated only, for other targets)."""
    out: list[ast.stmt] = []
    if stmt.value is not None:
        out.append(ast.Assign(targets=[stmt.target], value=stmt.value))
    if isinstance(stmt.target, ast.Name) and stmt.simple:
        holder = _call("_write_", [ast.Name("__annotations__", ast.Load())], stmt, [])
        key = ast.Subscript(holder, ast.Constant(stmt.target.id), ast.Store())
        out.append(ast.Assign(targets=[key], value=stmt.annotation))
    else:
        out.append(ast.Expr(stmt.annotation))
    return [ast.copy_location(o, stmt) for o in out]


_LOCALS_PREFIX = f"{MAIN}.<locals>."


def _module_qualnames(code: CodeType) -> CodeType:
    """``code`` with ``__fabric_main__.<locals>.`` dropped from every qualified name inside it,
    so messages name ``f()``, ``C.m()`` and ``<lambda>()`` as CPython names a module's."""
    consts = tuple(_plain_qualname(c) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_consts=consts)


def _plain_qualname(code: CodeType) -> CodeType:
    old = code.co_qualname
    new = old.removeprefix(_LOCALS_PREFIX)
    consts = tuple(
        _plain_qualname(c)
        if isinstance(c, CodeType)
        else (new if c == old and type(c) is str and new != old else c)
        for c in code.co_consts
    )
    return code.replace(co_consts=consts, co_qualname=new)


class _Mangler(ast.NodeTransformer):
    """``self.__x`` inside ``class C`` is ``self._C__x``, as CPython's compiler mangles it;
    done here because the guards receive attribute names as strings, which it leaves alone."""

    def __init__(self) -> None:
        self._classes: list[str] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        for part in [*node.bases, *node.keywords, *node.decorator_list]:
            self.visit(part)
        self._classes.append(node.name)
        try:
            node.body = [self.visit(stmt) for stmt in node.body]
        finally:
            self._classes.pop()
        return node

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        self.generic_visit(node)
        name = node.attr
        if self._classes and name.startswith("__") and not name.endswith("__"):
            owner = self._classes[-1].lstrip("_")
            if owner:
                node.attr = f"_{owner}{name}"
        return node


class _YieldFinder(ast.NodeVisitor):
    """Finds a ``yield`` at the snippet's top level, which would make the body a generator."""

    def __init__(self) -> None:
        self.found: ast.AST | None = None
        self.nonlocal_: ast.AST | None = None

    def visit_Yield(self, node: ast.Yield) -> None:
        self.found = self.found or node

    def visit_YieldFrom(self, node: ast.YieldFrom) -> None:
        self.found = self.found or node

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.nonlocal_ = self.nonlocal_ or node

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


MAX_NAME = 100
"""CPython 3.11's ``MCACHE_MAX_ATTR_SIZE``: a longer name is never cached by a type's method
cache, so looking it up gives the class no type version, and the specialising interpreter
then records version 0 in its attribute caches, which match any class just written to
(gh-89811, fixed in 3.11.8: an attack pass had a dataclass's generated ``__init__`` store a
slot into a bytearray). No name the worker compiles for a snippet, nor any name a snippet
hands a facade or ``getattr``, is longer."""


def _uncacheable_name(code: CodeType) -> str | None:
    """A name longer than :data:`MAX_NAME` that ``code`` or a code object in it uses, after
    private-name mangling (``self.__x`` in class ``C`` is ``_C__x``)."""
    todo = [code]
    while todo:
        each = todo.pop()
        for name in (*each.co_names, *each.co_varnames, *each.co_cellvars, *each.co_freevars):
            if len(name) > MAX_NAME:
                return name
        todo.extend(c for c in each.co_consts if isinstance(c, CodeType))
    return None


def long_name(name: str) -> str:
    """Why ``name`` (over :data:`MAX_NAME` characters) is refused."""
    return (
        f"the name {name[:24]}... is {len(name)} characters long; names are at most "
        f"{MAX_NAME} characters (CPython 3.11's attribute caches mishandle longer ones)"
    )


_TOO_DEEP = (
    "the snippet is nested too deeply to compile (an expression hundreds of levels deep): "
    "name intermediate values"
)


def compile_snippet(
    code: str, seeded: tuple[str, ...] = ()
) -> tuple[CodeType | None, list[CompileProblem]]:
    """Compile ``code`` into a module whose execution defines ``MAIN`` (an async function).

    ``seeded`` are names the snippet starts with (variables an earlier execution kept): they
    are module globals, which the worker sets before ``MAIN`` runs, so the snippet reads and
    rebinds them as its own top-level names."""
    try:
        tree = parse(code, FILENAME)
    except SyntaxError as exc:
        return None, [_syntax_problem(exc)]
    except (RecursionError, MemoryError):
        return None, [CompileProblem("syntax", _TOO_DEEP, None, None)]
    except ValueError as exc:  # a NUL byte
        return None, [CompileProblem("syntax", f"{type(exc).__name__}: {exc}", None, None)]

    body = tree.body
    if body and isinstance(body[-1], ast.Expr):
        body[-1] = ast.copy_location(ast.Return(value=body[-1].value), body[-1])

    finder = _YieldFinder()
    try:
        for stmt in body:
            finder.visit(stmt)
    except RecursionError:
        return None, [CompileProblem("syntax", _TOO_DEEP, None, None)]
    if finder.found is not None:
        line = getattr(finder.found, "lineno", None)
        return None, [CompileProblem("syntax", "'yield' outside function", line, None)]
    if finder.nonlocal_ is not None:
        line = getattr(finder.nonlocal_, "lineno", None)
        problem = CompileProblem(
            "syntax", "nonlocal declaration not allowed at module level", line, None
        )
        return None, [problem]

    errors: list[str] = []
    policy = SnippetPolicy(errors, [], {})
    try:
        tree = _Mangler().visit(tree)
        policy.direct, policy.iterating = call_sites(tree)
        policy.visit(tree)
    except RecursionError:
        return None, [CompileProblem("syntax", _TOO_DEEP, None, None)]
    if errors:
        return None, [_policy_problem(e) for e in dict.fromkeys(errors)]

    body = [stmt for stmt in tree.body if not isinstance(stmt, ast.Global)]  # no-ops here
    shared = sorted(set(module_globals(body)) | set(seeded))  # seeded: set in its globals
    wrapper_body: list[ast.stmt] = [ast.Global(names=shared)] if shared else []
    for stmt in body:
        if isinstance(stmt, ast.AnnAssign):
            wrapper_body.extend(_module_annotation(stmt))
        else:
            wrapper_body.append(stmt)
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
        compiled = compile_tree(module, FILENAME)
        too_long = _uncacheable_name(compiled)
        if too_long is not None:
            return None, [CompileProblem("policy", long_name(too_long), None, None)]
        return _module_qualnames(compiled), []
    except SyntaxError as exc:
        return None, [_syntax_problem(exc)]
    except (RecursionError, MemoryError):
        return None, [CompileProblem("syntax", _TOO_DEEP, None, None)]
    except ValueError as exc:
        return None, [CompileProblem("syntax", f"{type(exc).__name__}: {exc}", None, None)]
