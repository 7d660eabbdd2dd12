"""Data flow through a snippet: statements in order, one method per node type.

The walk is our own, not libcst's visitor framework: it dispatches on node types from a dict
and descends only into the children that carry values, which keeps the analysis cheaper than
parsing. Anything without a handler fails closed: a tainted value through it is UNKNOWN.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import libcst as cst

import contract
from analyzer._effects import EffectsTable
from analyzer._models import Options
from analyzer._positions import Positions
from analyzer._rules import Rules
from analyzer._syntax import capture_names, constant_key, dotted, root_name
from analyzer._values import BOTTOM, CLEAN, Cls, Func, V, combine, element, gave_up, join
from analyzer._values import unknown as fail_closed

NAMESPACES = frozenset(contract.NAMESPACES)
MODULES = frozenset(contract.MODULES)
_MAX_CALL_DEPTH = 8
MAX_STEPS = 100_000
"""Statements and expressions one analysis evaluates at most. Local calls are re-walked at each
call site and loop bodies until they settle, so a short snippet can ask for exponentially many
steps; past the budget the analysis stops and the snippet is UNKNOWN."""
MAX_LOOP_ROUNDS = 12
"""Walks of one loop body before a loop that has not settled fails closed."""
MAX_RECURSION_ROUNDS = 8
"""Walks of a recursive function's body before a recursion that has not settled fails
closed."""


@dataclass
class _Summary:
    """What a function being analysed is assumed to return, and the arguments its recursive
    calls passed, while its body is walked to a fixpoint."""

    result: V = BOTTOM
    params: dict[str, V] = field(default_factory=dict)
    used: bool = False


class OutOfSteps(Exception):
    """The analysis spent its ``MAX_STEPS``."""


class Env(dict[str, V]):
    """Names to values, remembering which names were written since it was made, so a merge
    after a branch looks only at those (merging every name made long snippets quadratic)."""

    __slots__ = ("written",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.written: set[str] = set()

    def __setitem__(self, key: str, value: V) -> None:
        super().__setitem__(key, value)
        self.written.add(key)


class Flow:
    """Evaluates a module (the snippet) and collects what its returns carry."""

    def __init__(self, effects: EffectsTable, options: Options, positions: Positions) -> None:
        self.rules = Rules(self, effects, options, positions)
        self.positions = positions
        self.scope = 0
        """The scope of the code being walked (``Positions``): the module, or a function."""
        self.env = Env()
        self.returns: list[V] = []
        self.notes: list[tuple[str, str]] = []
        """(code, message) findings along the way (unknown callees...)."""
        self.unbounded_loops = 0
        self.depth = 0
        self.active: set[int] = set()
        self.recursion: dict[int, _Summary] = {}
        self._read_names: dict[int, set[str]] = {}
        self._stmt: dict[type, Callable[[Any], None]] = {
            cst.SimpleStatementLine: self._simple_line,
            cst.If: self._if,
            cst.For: self._for,
            cst.While: self._while,
            cst.Try: self._try,
            cst.TryStar: self._try,
            cst.With: self._with,
            cst.FunctionDef: self._def,
            cst.ClassDef: self._class,
            cst.Match: self._match,
        }
        self._small: dict[type, Callable[[Any], None]] = {
            cst.Assign: self._assign,
            cst.AnnAssign: self._ann_assign,
            cst.AugAssign: self._aug_assign,
            cst.Expr: self._expr_stmt,
            cst.Return: self._return,
            cst.Import: self._import,
            cst.ImportFrom: self._import_from,
            cst.Global: self._global,
            cst.Nonlocal: lambda node: None,
            cst.Pass: lambda node: None,
            cst.Break: lambda node: None,
            cst.Continue: lambda node: None,
            cst.Del: lambda node: None,
            cst.Raise: lambda node: None,
            cst.Assert: lambda node: None,
        }
        self.globals_declared: set[str] = set()
        self.steps_left = MAX_STEPS

    def _spend(self) -> None:
        self.steps_left -= 1
        if self.steps_left < 0:
            raise OutOfSteps

    # -- entry ---------------------------------------------------------------------------

    def run(self, module: cst.Module) -> V:
        body = list(module.body)
        last = _trailing_expression(body)
        for statement in body:
            if last is not None and statement is last[0]:
                self.returns.append(self.expr(last[1]).step("last expression"))
            else:
                self.stmt(statement)
        return join(*self.returns) if self.returns else CLEAN

    # -- statements ----------------------------------------------------------------------

    def stmt(self, node: cst.CSTNode) -> None:
        self._spend()
        handler = self._stmt.get(type(node))
        if handler is None:
            self.notes.append(("unsupported-syntax", f"{type(node).__name__} is not analysed"))
            self._taint_all(f"{type(node).__name__} is not analysed")
            return
        handler(node)

    def block(self, body: cst.BaseSuite | Any) -> None:
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementSuite):
                for small in statement.body:
                    self._small_stmt(small)
            else:
                self.stmt(statement)

    def _simple_line(self, node: cst.SimpleStatementLine) -> None:
        for small in node.body:
            self._small_stmt(small)

    def _reads(self, node: cst.CSTNode) -> set[str]:
        """The names ``node`` reads (found once per node: loop bodies are walked again)."""
        found = self._read_names.get(id(node))
        if found is None:
            found = self._read_names[id(node)] = _names(node)
        return found

    def _small_stmt(self, node: cst.CSTNode) -> None:
        self._spend()
        handler = self._small.get(type(node))
        if handler is None:
            self.notes.append(("unsupported-syntax", f"{type(node).__name__} is not analysed"))
            return
        handler(node)

    def _assign(self, node: cst.Assign) -> None:
        value = self.expr(node.value)
        if self.unbounded_loops and value.tainted:
            named = {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
            if named and named & self._reads(node.value):  # acc = acc + [...]: grown as +=
                value = self.accumulated(value, "reassigned")
        for target in node.targets:
            self.bind(target.target, value)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.bind(node.target, self.expr(node.value))

    def _aug_assign(self, node: cst.AugAssign) -> None:
        current = self.expr(node.target)
        value = self.rules.binary(current, node.operator, self.expr(node.value))
        self.bind(node.target, self.accumulated(value, "+="))

    def _expr_stmt(self, node: cst.Expr) -> None:
        self.expr(node.value)

    def _return(self, node: cst.Return) -> None:
        self.returns.append(self.expr(node.value) if node.value is not None else CLEAN)

    def _import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name) or ""
            if alias.asname is not None:
                self.env[dotted(alias.asname.name) or ""] = V(module=full)
            else:
                root = full.split(".")[0]
                self.env[root] = V(module=root)

    def _import_from(self, node: cst.ImportFrom) -> None:
        base = dotted(node.module) if node.module is not None else ""
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = dotted(alias.name) or ""
            local = (dotted(alias.asname.name) or "") if alias.asname is not None else name
            self.env[local] = V(module=f"{base}.{name}")

    def _global(self, node: cst.Global) -> None:
        self.globals_declared.update(n.name.value for n in node.names)

    def _if(self, node: cst.If) -> None:
        self.expr(node.test)
        before = self.env
        self.env = Env(before)
        self.block(node.body)
        after_body = self.env
        self.env = Env(before)
        if node.orelse is not None:
            if isinstance(node.orelse, cst.If):
                self._if(node.orelse)
            else:
                self.block(node.orelse.body)
        self.env = _merge(before, after_body, self.env)

    def _loop(self, run_body: Callable[[], None], bounded: bool) -> None:
        """A loop to its fixpoint: the body is walked again from the join of every state it
        can start in until no name it writes changes (a value carried from one iteration to
        the next, however long the chain). A loop that has not settled after
        ``MAX_LOOP_ROUNDS`` walks fails closed: what it writes is UNKNOWN and unbounded."""
        before = self.env
        if not bounded:
            self.unbounded_loops += 1
        try:
            entry = Env(before)
            written: set[str] = set()
            for _ in range(MAX_LOOP_ROUNDS):
                self.env = Env(entry)
                run_body()
                written |= self.env.written
                after = _widened(entry, _joined(entry, self.env), self.env.written)
                if _settled(entry, after, self.env.written):
                    break
                entry = after
            else:
                tainted = [v for v in entry.values() if v.tainted]
                for name in written:
                    dict.__setitem__(entry, name, gave_up("a loop that does not settle", *tainted))
            entry.written = written
            self.env = _merge(before, entry)
        finally:
            if not bounded:
                self.unbounded_loops -= 1

    def _for(self, node: cst.For) -> None:
        iterable = self.expr(node.iter)

        def body() -> None:
            self.bind(node.target, element(iterable).step("for"))
            self.block(node.body)

        self._loop(body, iterable.bounded or iterable.parts is not None)
        if node.orelse is not None:
            self.block(node.orelse.body)

    def _while(self, node: cst.While) -> None:
        def body() -> None:
            self.expr(node.test)
            self.block(node.body)

        self._loop(body, bounded=False)
        if node.orelse is not None:
            self.block(node.orelse.body)

    def _try(self, node: cst.Try | cst.TryStar) -> None:
        before = self.env
        self.env = Env(before)
        self.block(node.body)
        ends = [self.env]
        for handler in node.handlers:
            self.env = Env(_merge(before, ends[0]))
            self.env.written |= ends[0].written
            if handler.name is not None:
                self.bind(handler.name.name, CLEAN)
            self.block(handler.body)
            ends.append(self.env)
        if node.orelse is not None:
            body_end = ends[0]
            self.env = Env(body_end)
            self.env.written |= body_end.written
            self.block(node.orelse.body)
            ends[0] = self.env
        self.env = _merge(before, *ends)
        if node.finalbody is not None:
            self.block(node.finalbody.body)

    def _with(self, node: cst.With) -> None:
        for item in node.items:
            value = self.expr(item.item)
            if item.asname is not None:
                self.bind(item.asname.name, value)
        self.block(node.body)

    def _def(self, node: cst.FunctionDef) -> None:
        self.env[node.name.value] = V(func=Func(node, None, self.positions.scope(node)))

    def _class(self, node: cst.ClassDef) -> None:
        self.env[node.name.value] = V(module="<class>")

    def _match(self, node: cst.Match) -> None:
        subject = self.expr(node.subject)
        before = self.env
        ends = []
        for case in node.cases:
            self.env = Env(before)
            for name in capture_names(case.pattern):
                self.env[name] = element(subject)
            self.block(case.body)
            ends.append(self.env)
        self.env = _merge(before, *ends)

    def _taint_all(self, reason: str) -> None:
        for name, value in self.env.items():
            if value.tainted:
                self.env[name] = fail_closed(reason, value)

    # -- binding -------------------------------------------------------------------------

    def bind(self, target: cst.BaseExpression, value: V) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = value
        elif isinstance(target, cst.Tuple | cst.List):
            self._destructure(target.elements, value)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, element(value) if value.tainted else value)
        elif isinstance(target, cst.Subscript | cst.Attribute):
            owner = root_name(target)
            if owner is not None and owner in self.env:
                key = constant_key(target)
                current = self.env[owner]
                parts = [current, value]
                if isinstance(target, cst.Subscript) and key is None:
                    parts += [
                        self.expr(e.slice.value)
                        for e in target.slice
                        if isinstance(e.slice, cst.Index)
                    ]
                grown = self.accumulated(combine(parts), "item assignment")
                if key is not None and current.fields is not None and not self.unbounded_loops:
                    fields = (*((k, v) for k, v in current.fields if k != key), (key, value))
                    grown = replace(grown, fields=fields)
                self.env[owner] = grown
        else:
            self.notes.append(
                ("unsupported-target", f"cannot follow assignment to {type(target).__name__}")
            )

    def _destructure(self, targets: Any, value: V) -> None:
        targets = list(targets)
        starred = any(isinstance(t, cst.StarredElement) for t in targets)
        if value.parts is not None and len(value.parts) == len(targets) and not starred:
            for target, part in zip(targets, value.parts, strict=True):
                self.bind(target.value, part)
            return
        for target in targets:
            if isinstance(target, cst.StarredElement):
                self.bind(target.value, replace(value, parts=None) if value.tainted else value)
            else:
                self.bind(target.value, element(value))

    def accumulated(self, value: V, label: str) -> V:
        """A container grown in a loop that may run any number of times is unbounded."""
        if self.unbounded_loops and value.tainted:
            return replace(value, bounded=False, bound=None).step(f"{label} in a loop")
        return value

    # -- expressions ---------------------------------------------------------------------

    def expr(self, node: cst.BaseExpression | None) -> V:
        if node is None:
            return CLEAN
        self._spend()
        handler = self.rules.expressions.get(type(node))
        if handler is None:
            self.notes.append(("unsupported-syntax", f"{type(node).__name__} is not analysed"))
            return fail_closed(f"{type(node).__name__} is not analysed", *self._children(node))
        return handler(node)

    def _children(self, node: cst.CSTNode) -> Iterator[V]:
        for child in node.children:
            if isinstance(child, cst.BaseExpression):
                yield self.expr(child)

    def lookup(self, name: str) -> V:
        value = self.env.get(name)
        if value is not None:
            return value
        if name in NAMESPACES:
            return V(module=f"<namespace>{name}")
        if name in MODULES:  # used without an import: still the module
            return V(module=name)
        return CLEAN

    # -- local functions -----------------------------------------------------------------

    def call_local(self, func: Func, args: list[V], kwargs: dict[str, V]) -> V:
        """A call of a function the snippet defines, its body analysed for these arguments.

        A recursive call inside it answers what the function is assumed to return so far and
        adds its arguments to the parameters'; the body is walked again until the assumption
        and the parameters settle (``MAX_RECURSION_ROUNDS``), else the call fails closed."""
        key = id(func.node)
        summary = self.recursion.get(key)
        if key in self.active and summary is not None:
            summary.used = True
            for name, value in self._bindings(func.node.params, args, dict(kwargs)).items():
                held = summary.params.get(name)
                summary.params[name] = value if held is None else _widen(held, join(held, value))
            return summary.result
        if key in self.active or self.depth >= _MAX_CALL_DEPTH:
            return gave_up("calls nest too deep to follow", *args, *kwargs.values())
        summary = self.recursion[key] = _Summary()
        try:
            for _ in range(MAX_RECURSION_ROUNDS):
                summary.used = False
                params = dict(summary.params)
                result = self._walk(func, args, dict(kwargs), params)
                if not summary.used:
                    return result
                lattice = Lattice()
                settled = lattice.of(result) == lattice.of(summary.result) and all(
                    lattice.of(v) == lattice.of(params.get(k)) for k, v in summary.params.items()
                )
                seen = [*args, *kwargs.values(), *summary.params.values(), result]
                if settled and not result.tainted and any(v.tainted for v in seen):
                    # only its recursive calls return: it never reaches a base case
                    return gave_up("a recursion without a base case", *seen)
                if settled:
                    if result.tainted and result.bounded and result.bound is None:
                        # what it returns may gather data at each of any number of levels
                        return replace(result, bounded=False).step("recursion")
                    return result
                summary.result = _widen(summary.result, join(summary.result, result))
            seen = [*args, *kwargs.values(), *summary.params.values(), summary.result]
            return gave_up("a recursion that does not settle", *seen)
        finally:
            del self.recursion[key]

    def _walk(self, func: Func, args: list[V], kwargs: dict[str, V], widened: dict[str, V]) -> V:
        """One walk of ``func``'s body with these arguments, each parameter joined with what
        ``widened`` holds for it (the arguments of its recursive calls)."""
        key = id(func.node)
        saved = (self.env, self.returns, self.globals_declared, self.unbounded_loops, self.scope)
        self.scope = func.scope
        outer = self.env
        self.env = Env(outer if func.closure is None else {**outer, **func.closure})
        self.returns, self.globals_declared = [], set()
        self.active.add(key)
        self.depth += 1
        try:
            for name, value in self._bindings(func.node.params, args, kwargs).items():
                more = widened.get(name)
                self.env[name] = value if more is None else join(value, more)
            if isinstance(func.node, cst.Lambda):
                result = self.expr(func.node.body)
            else:
                self.block(func.node.body)
                result = join(*self.returns) if self.returns else CLEAN
            written = {name: self.env[name] for name in self.globals_declared if name in self.env}
        finally:
            self.depth -= 1
            self.active.discard(key)
            self.env, self.returns, self.globals_declared, self.unbounded_loops, self.scope = saved
        summary = self.recursion.get(key)
        recursive = summary is not None and summary.used
        for name, value in written.items():
            if recursive and value.tainted:  # written again at each of any number of levels
                value = replace(value, bounded=False, bound=None).step("recursion")
            self.env[name] = join(self.env.get(name, CLEAN), value)
        return result

    def _bindings(
        self, params: cst.Parameters, args: list[V], kwargs: dict[str, V]
    ) -> dict[str, V]:
        """Each parameter's value for a call with ``args`` and ``kwargs`` (which it uses up)."""
        bound: dict[str, V] = {}
        positional = [*params.posonly_params, *params.params]
        for n, param in enumerate(positional):
            name = param.name.value
            if n < len(args):
                value = args[n]
            elif name in kwargs:
                value = kwargs.pop(name)
            else:
                value = self.expr(param.default) if param.default is not None else CLEAN
            bound[name] = value
        extra = args[len(positional) :]
        if isinstance(params.star_arg, cst.Param):
            bound[params.star_arg.name.value] = combine(extra) if extra else CLEAN
        for param in params.kwonly_params:
            name = param.name.value
            default = self.expr(param.default) if param.default is not None else CLEAN
            bound[name] = kwargs.pop(name, default)
        if params.star_kwarg is not None:
            bound[params.star_kwarg.name.value] = combine(list(kwargs.values()))
        return bound

    def comprehension(self, node: Any, elements: Callable[[], list[V]]) -> V:
        """``[elt for target in iter if cond]`` and its set, dict and generator forms."""
        saved = self.env
        self.env = Env(saved)
        selected = False
        bounded = True
        sources: list[V] = []
        clause = node.for_in
        while clause is not None:
            iterable = self.expr(clause.iter)
            bounded = bounded and (iterable.bounded or iterable.parts is not None)
            sources.append(iterable)
            self.bind(clause.target, element(iterable))
            for condition in clause.ifs:
                self.expr(condition.test)
                selected = True
            clause = clause.inner_for_in
        try:
            items = elements()
        finally:
            self.env = saved
        value = combine(items)
        if not value.tainted:
            return CLEAN
        cls = max(value.cls, Cls.SELECTED) if selected and value.cls <= Cls.SELECTED else value.cls
        if selected and value.cls in (Cls.RAW, Cls.ENCODED):
            cls = Cls.SELECTED
        result = value.retag(cls, bounded and value.bounded)
        return result.step("filter" if selected else "comprehension")


def _names(node: cst.CSTNode) -> set[str]:
    """The names an expression reads."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, cst.Name):
            found.add(item.value)
        stack.extend(item.children)
    return found


def _joined(entry: Env, end: Env) -> Env:
    """The state at a loop's head: ``entry`` joined with where one walk of the body ended,
    for every name the walk wrote (a name the loop makes takes the body's value)."""
    joined = Env(entry)
    joined.written = set(entry.written)
    for name in end.written:
        old, new = entry.get(name), end[name]
        joined[name] = new if old is None or old is new else join(old, new)
    return joined


def _widened(entry: Env, after: Env, names: set[str]) -> Env:
    """``after``, each name written widened against ``entry`` (``_widen``)."""
    for name in names:
        old, new = entry.get(name), after.get(name)
        if old is not None and new is not None:
            dict.__setitem__(after, name, _widen(old, new))
    return after


def _widen(old: V, new: V) -> V:
    """``new``, unbounded if its bound grew since ``old``: a loop or a recursion that adds to
    a value each round may add any number of times (how many rounds there are is not known),
    and the value settles instead of counting up."""
    if old is BOTTOM or old.bound is None or new.bound is None or new.bound == old.bound:
        return new
    if new.bound[1] == old.bound[1] and new.bound[0] <= old.bound[0]:
        return new
    return replace(new, bounded=False, bound=None).step("grows each round")


def _settled(entry: Env, after: Env, names: set[str]) -> bool:
    """Whether one more walk of a loop body left every name it wrote as it found it."""
    lattice = Lattice()
    return all(lattice.of(entry.get(name)) == lattice.of(after.get(name)) for name in names)


class Lattice:
    """What of a value the verdict depends on (not its trail or wording), as a number: equal
    values get equal numbers. Each distinct shape is numbered once (``_shapes``) and each
    value looked at once (``_seen``), so values whose parts are shared (``b = (b, b)``)
    cost their size, not two to the power of their depth."""

    def __init__(self) -> None:
        self._shapes: dict[tuple[object, ...], int] = {}
        self._seen: dict[int, int] = {}

    def of(self, value: V | None) -> int:
        if value is None:
            return -1
        known = self._seen.get(id(value))
        if known is not None:
            return known
        parts, fields = value.parts, value.fields
        shape = (
            value.cls,
            value.bounded,
            value.bound,
            value.sources,
            None if parts is None else tuple(self.of(p) for p in parts),
            None if fields is None else tuple((k, self.of(v)) for k, v in fields),
            value.func,
            value.module,
            repr(value.const),
            value.at_most,
            value.tag,
        )
        number = self._shapes.setdefault(shape, len(self._shapes))
        self._seen[id(value)] = number
        return number


def _merge(before: Env, *ends: Env) -> Env:
    """``before`` with every name written in any of ``ends`` joined across them."""
    names = set().union(*(end.written for end in ends))
    merged = Env(before)
    merged.written = before.written | names
    for name in names:
        values = [end.get(name, before.get(name, CLEAN)) for end in ends]
        first = values[0]
        dict.__setitem__(merged, name, first if all(v is first for v in values) else join(*values))
    return merged


def _trailing_expression(body: list[Any]) -> tuple[Any, cst.BaseExpression] | None:
    """The last statement when it is a bare expression (its value is the snippet's value)."""
    if body and isinstance(body[-1], cst.SimpleStatementLine):
        line = body[-1]
        if len(line.body) == 1 and isinstance(line.body[0], cst.Expr):
            return line, line.body[0].value
    return None
