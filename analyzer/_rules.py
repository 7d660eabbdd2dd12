"""The rules of ARCHITECTURE.md and the analyzer issue: what each expression, builtin, module
function and method does to the class and boundedness of the data that flows through it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import libcst as cst

from analyzer._effects import EffectRow, EffectsTable
from analyzer._models import Options
from analyzer._positions import Positions
from analyzer._steps import (
    bound_from,
    const_int,
    fold,
    fold_min,
    parse_int,
    repeat,
    select,
    show,
    slice_call,
    slice_length,
    stringy,
)
from analyzer._syntax import dotted, string_value
from analyzer._tables import (
    AGGREGATING_BUILTINS,
    AGGREGATING_MODULES,
    ENCODING_BUILTINS,
    ENVELOPE_FIELDS,
    MODULE_FUNCTIONS,
    MUTATORS,
    PRESERVING_BUILTINS,
    PRESERVING_METHODS,
    SCALAR,
    SCALAR_BUILTINS,
    SCALAR_METHODS,
    SPLITTING_METHODS,
    STATUS_FIELDS,
)
from analyzer._values import (
    CLEAN,
    LINES,
    NO_CONST,
    SEVERAL_FUNCTIONS,
    Cls,
    Func,
    Src,
    V,
    combine,
    constant,
    element,
    encode,
    gave_up,
    join,
)
from analyzer._values import unknown as fail_closed

if TYPE_CHECKING:
    from analyzer._flow import Flow


class Rules:
    def __init__(
        self, flow: Flow, effects: EffectsTable, options: Options, positions: Positions
    ) -> None:
        self.flow = flow
        self.effects = effects
        self.options = options
        self.positions = positions
        self.expressions: dict[type, Callable[[Any], V]] = {
            cst.Name: self.name,
            cst.Integer: lambda n: constant(parse_int(n.value)),
            cst.Float: lambda n: constant(0.0),
            cst.Imaginary: lambda n: constant(0),
            cst.SimpleString: lambda n: constant(string_value(n)),
            cst.ConcatenatedString: self.concatenated,
            cst.FormattedString: self.fstring,
            cst.Ellipsis: lambda n: CLEAN,
            cst.Await: lambda n: self.flow.expr(n.expression),
            cst.Call: self.call,
            cst.Attribute: self.attribute,
            cst.Subscript: self.subscript,
            cst.BinaryOperation: lambda n: self.binary(
                self.flow.expr(n.left), n.operator, self.flow.expr(n.right)
            ),
            cst.UnaryOperation: self.unary,
            cst.BooleanOperation: lambda n: join(self.flow.expr(n.left), self.flow.expr(n.right)),
            cst.Comparison: self.comparison,
            cst.IfExp: lambda n: (
                self.flow.expr(n.test),
                join(self.flow.expr(n.body), self.flow.expr(n.orelse)),
            )[1],
            cst.Lambda: lambda n: V(func=Func(n, dict(self.flow.env), self.flow.scope)),
            cst.List: self.sequence,
            cst.Tuple: self.sequence,
            cst.Set: self.sequence,
            cst.Dict: self.dictionary,
            cst.ListComp: lambda n: self.flow.comprehension(n, lambda: [self.flow.expr(n.elt)]),
            cst.SetComp: lambda n: self.flow.comprehension(n, lambda: [self.flow.expr(n.elt)]),
            cst.GeneratorExp: lambda n: self.flow.comprehension(n, lambda: [self.flow.expr(n.elt)]),
            cst.DictComp: lambda n: self.flow.comprehension(
                n, lambda: [self.flow.expr(n.key), self.flow.expr(n.value)]
            ),
            cst.NamedExpr: self.walrus,
            cst.StarredElement: lambda n: self.flow.expr(n.value),
        }

    # -- atoms ---------------------------------------------------------------------------

    def name(self, node: cst.Name) -> V:
        if node.value in ("True", "False", "None"):
            return constant(node.value == "True") if node.value != "None" else CLEAN
        return self.flow.lookup(node.value)

    def concatenated(self, node: cst.ConcatenatedString) -> V:
        value = string_value(node)
        return constant(value) if isinstance(value, str) else CLEAN

    def fstring(self, node: cst.FormattedString) -> V:
        parts: list[V] = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                parts.append(self.flow.expr(part.expression))
            elif isinstance(part, cst.FormattedStringText):
                parts.append(constant(part.value))
        return encode(combine(parts), "f-string")

    def walrus(self, node: cst.NamedExpr) -> V:
        value = self.flow.expr(node.value)
        self.flow.bind(node.target, value)
        return value

    def sequence(self, node: cst.List | cst.Tuple | cst.Set) -> V:
        values: list[V] = []
        starred = False
        for item in node.elements:
            value = self.flow.expr(item.value)
            if isinstance(item, cst.StarredElement):
                starred = True
                value = replace(value, parts=None)
            values.append(value)
        return combine(values, keep_parts=not starred and not isinstance(node, cst.Set))

    def dictionary(self, node: cst.Dict) -> V:
        values: list[V] = []
        fields: list[tuple[str, V]] = []
        exact = True
        for item in node.elements:
            if isinstance(item, cst.DictElement):
                key = self.flow.expr(item.key)
                value = self.flow.expr(item.value)
                values += [key, value]
                if isinstance(key.const, str):
                    fields.append((key.const, value))
                else:
                    exact = False
            else:
                values.append(self.flow.expr(item.value))
                exact = False
        result = combine(values)
        return replace(result, fields=tuple(fields) if exact else None)

    def unary(self, node: cst.UnaryOperation) -> V:
        value = self.flow.expr(node.expression)
        if isinstance(node.operator, cst.Not):
            return value.retag(Cls.PROJECTED, True, SCALAR).step("not")
        if isinstance(node.operator, cst.Minus) and isinstance(value.const, int | float):
            return constant(-value.const)
        return value

    def comparison(self, node: cst.Comparison) -> V:
        values = [self.flow.expr(node.left)] + [
            self.flow.expr(c.comparator) for c in node.comparisons
        ]
        return combine(values).retag(Cls.PROJECTED, True, SCALAR).step("comparison")

    def binary(self, left: V, operator: cst.BaseBinaryOp | cst.BaseAugOp, right: V) -> V:
        kind = type(operator).__name__.replace("Assign", "")
        if isinstance(left.const, int) and isinstance(right.const, int):
            folded = fold(kind, left.const, right.const)
            if folded is not None:
                return constant(folded)
        if isinstance(left.const, str) and isinstance(right.const, str) and kind == "Add":
            return constant(left.const + right.const)
        if kind == "Add" and (stringy(left) or stringy(right)):
            return encode(combine([left, right]), "+")
        if kind == "Modulo" and isinstance(left.const, str):
            return encode(combine([left, right]), "%")
        if kind == "Multiply":
            return repeat(left, right)
        return combine([left, right])

    # -- calls ---------------------------------------------------------------------------

    def call(self, node: cst.Call) -> V:
        args: list[V] = []
        kwargs: dict[str, V] = {}
        for arg in node.args:
            value = self.flow.expr(arg.value)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            elif arg.star == "*":
                args.append(element(value) if value.parts is None else combine(list(value.parts)))
            elif arg.star == "**":
                kwargs["**"] = value
            else:
                args.append(value)
        func = node.func
        if isinstance(func, cst.Attribute):
            receiver = self.flow.expr(func.value)
            if receiver.module is not None:
                return self._qualified(f"{receiver.module}.{func.attr.value}", node, args, kwargs)
            return self.method(receiver, func, args, kwargs)
        callee = self.flow.expr(func)
        if callee.tag == SEVERAL_FUNCTIONS:
            return gave_up("a call of one of several functions", callee, *args, *kwargs.values())
        if callee.func is not None:
            return self.flow.call_local(callee.func, args, dict(kwargs)).step(
                f"{dotted(func) or 'helper'}()"
            )
        if callee.module is not None:
            return self._qualified(callee.module, node, args, kwargs)
        name = dotted(func)
        if name is not None and name not in self.flow.env:
            return self.builtin(name, args, kwargs)
        return self._unknown(f"{name or 'a computed callee'}(...) is not modelled", args, kwargs)

    def _qualified(self, name: str, node: cst.Call, args: list[V], kwargs: dict[str, V]) -> V:
        if name.startswith("<namespace>"):
            return self.provider(name.removeprefix("<namespace>"), node, args, kwargs)
        if name == "<class>" or name.endswith(".<class>"):
            return self._unknown("instances of snippet classes are not followed", args, kwargs)
        return self.module_function(name, args, kwargs)

    def provider(self, name: str, node: cst.Call, args: list[V], kwargs: dict[str, V]) -> V:
        namespace, _, rest = name.partition(".")
        spot = self.positions.locate(name, node, self.flow.scope)
        line, column = spot if spot else (None, None)
        source = Src(namespace, rest, line, column)
        label = f"{name} (line {line})" if line else name
        row = self.effects.lookup(name)
        base = V(
            cls=Cls.RAW,
            bounded=False,
            sources=frozenset({source}),
            trail=(label,),
            item_bytes=row.item_bytes if row is not None else None,
            text=row is not None and row.result == "text",
        )
        if row is None or row.effect == "source":
            return base
        return self._effect(row, base, args, kwargs)

    def _effect(self, row: EffectRow, base: V, args: list[V], kwargs: dict[str, V]) -> V:
        if row.effect == "passthrough":
            first = args[0] if args else CLEAN
            return replace(first, sources=first.sources | base.sources, trail=base.trail)
        if row.effect == "scalar":
            return base.retag(Cls.PROJECTED, True, SCALAR)
        if row.effect == "offload":
            return base.retag(Cls.OFFLOADED, True, (200, "bytes"))
        if row.effect == "unknown":
            return replace(
                base.retag(Cls.UNKNOWN, False), reason="the effects table marks it unknown"
            )
        cls = Cls.COMPRESSED if row.effect == "compress" else Cls.SELECTED
        cap = bound_from(row, kwargs, self.options)
        if cap is None:
            return base.retag(cls, False)
        return base.retag(cls, True, (cap, row.unit)).step(
            f"bounded by {row.bound_keyword or 'its arguments'}"
        )

    def builtin(self, name: str, args: list[V], kwargs: dict[str, V]) -> V:
        first = args[0] if args else CLEAN
        everything = combine([*args, *kwargs.values()])
        if name in SCALAR_BUILTINS:
            return everything.retag(Cls.PROJECTED, True, SCALAR).step(name)
        if name in ENCODING_BUILTINS:
            return encode(everything, name)
        if name in PRESERVING_BUILTINS:
            for callback in kwargs.values():
                if callback.func is not None:
                    self.flow.call_local(callback.func, [element(first)], {})
            return replace(combine(args), parts=None).step(name) if args else CLEAN
        if name in AGGREGATING_BUILTINS:
            if name == "min" and len(args) == 2:
                cap = const_int(args[0]) or const_int(args[1])
                if cap is not None and not everything.tainted:
                    return V(at_most=cap, const=fold_min(args))
                if cap is not None:
                    return replace(everything.retag(Cls.AGGREGATED, True, SCALAR), at_most=cap)
            return everything.retag(Cls.AGGREGATED, True, SCALAR).step(name)
        if name == "map" and len(args) >= 2:
            mapped = self._apply(args[0], [element(a) for a in args[1:]])
            container = combine(args[1:])
            return mapped.retag(mapped.cls, mapped.bounded and container.bounded).step("map")
        if name == "filter" and len(args) == 2:
            self._apply(args[0], [element(args[1])])
            return args[1].retag(select(args[1].cls), args[1].bounded).step("filter")
        if name == "zip":
            return replace(combine(args), parts=None).step("zip")
        if name == "next":
            return first.retag(select(first.cls), True, (1, "items")).step("next")
        if name in ("range", "print"):
            return CLEAN
        return self._unknown(f"{name}(...) is not modelled", args, kwargs)

    def module_function(self, name: str, args: list[V], kwargs: dict[str, V]) -> V:
        first = args[0] if args else CLEAN
        everything = combine([*args, *kwargs.values()])
        kind = MODULE_FUNCTIONS.get(name)
        if kind is None and name.partition(".")[0] in AGGREGATING_MODULES:
            kind = "aggregate"
        if kind == "encode":
            return encode(first, name)
        if kind == "preserve":
            return everything.step(name)
        if kind == "preserve-second":  # re.split: the pieces of a text, a list
            pieces = args[1] if len(args) > 1 else everything
            return replace(pieces, text=False).step(name)
        if kind == "match":  # matches of a text: a list, or a match object
            text = args[1] if len(args) > 1 else kwargs.get("string", CLEAN)
            return replace(text.retag(select(text.cls), text.bounded), text=False).step(name)
        if kind == "islice":
            return slice_call(args, name)
        if kind == "top-n":
            cap = const_int(first)
            data = args[1] if len(args) > 1 else CLEAN
            if cap is None:
                return data.retag(select(data.cls), data.bounded).step(name)
            return data.retag(select(data.cls), True, (cap, "items")).step(f"{name}({cap})")
        if kind == "counter":
            return replace(first.retag(Cls.AGGREGATED, False), tag="Counter").step("Counter")
        if kind == "reduce":
            return everything.retag(Cls.AGGREGATED, False).step("reduce")
        if kind == "aggregate":
            return everything.retag(Cls.AGGREGATED, True, SCALAR).step(name)
        if kind == "shorten":
            width = const_int(kwargs.get("width", args[1] if len(args) > 1 else CLEAN))
            if width is not None:
                return first.retag(select(first.cls), True, (width, "bytes")).step(name)
            return first.retag(select(first.cls), first.bounded).step(name)
        if kind == "gather":
            return combine(args, keep_parts=True)
        if kind == "first":
            return first
        if kind == "clean":
            return CLEAN
        if kind == "chain":
            return replace(combine(args), parts=None).step(name)
        return self._unknown(f"{name}(...) is not modelled", args, kwargs)

    def method(self, receiver: V, func: cst.Attribute, args: list[V], kwargs: dict[str, V]) -> V:
        attr = func.attr.value
        everything = combine([receiver, *args, *kwargs.values()])
        if attr in MUTATORS:
            owner = func.value
            if isinstance(owner, cst.Name) and owner.value in self.flow.env:
                grown = combine([receiver, *args, *kwargs.values()])
                self.flow.env[owner.value] = self.flow.accumulated(
                    replace(grown, fields=None, parts=None), attr
                )
            return CLEAN
        if attr == "join" and not receiver.tainted:
            return encode(combine(args), "join")
        if attr in ("format", "format_map") and not receiver.tainted:
            return encode(combine([receiver, *args, *kwargs.values()]), ".format")
        if not everything.tainted:
            return CLEAN
        if attr == "most_common" and receiver.tag == "Counter":
            cap = const_int(args[0]) if args else None
            if cap is not None:
                return receiver.retag(Cls.SELECTED, True, (cap, "items")).step(
                    f"most_common({cap})"
                )
            return receiver.retag(Cls.SELECTED, False).step("most_common()")
        if not receiver.tainted:
            return self._unknown(f".{attr}() on untainted data with source arguments", args, kwargs)
        if attr in PRESERVING_METHODS:
            text = receiver.text and attr not in SPLITTING_METHODS
            tag = LINES if receiver.text and attr in ("split", "rsplit", "splitlines") else None
            return replace(
                receiver, parts=None, fields=None, const=NO_CONST, text=text, tag=tag
            ).step(attr)
        if attr in SCALAR_METHODS:
            return everything.retag(Cls.PROJECTED, True, SCALAR).step(attr)
        if attr == "keys":
            return receiver.retag(Cls.PROJECTED, receiver.bounded).step("keys")
        if attr == "get":
            key = args[0].const if args else NO_CONST
            got = self.project(receiver, key if isinstance(key, str) else None)
            return join(got, args[1]) if len(args) > 1 else got
        if attr in ("pop", "popitem"):
            return element(receiver).step(attr)
        if attr in ("sort", "reverse", "clear", "remove", "discard"):
            return CLEAN
        return self._unknown(f".{attr}() is not modelled", [receiver, *args], kwargs)

    def _apply(self, callback: V, args: list[V]) -> V:
        if callback.func is not None:
            return self.flow.call_local(callback.func, args, {})
        if callback.module is None and not callback.tainted:
            return combine(args)
        return fail_closed("a callback that is not followed", *args)

    def _unknown(self, reason: str, args: list[V], kwargs: dict[str, V]) -> V:
        values = [*args, *kwargs.values()]
        if any(v.tainted for v in values):
            self.flow.notes.append(("unknown-callee", reason))
        return fail_closed(reason, *values)

    # -- projections and selections ------------------------------------------------------

    def attribute(self, node: cst.Attribute) -> V:
        receiver = self.flow.expr(node.value)
        if receiver.module is not None:
            return V(module=f"{receiver.module}.{node.attr.value}")
        return self.project(receiver, node.attr.value)

    def project(self, receiver: V, key: str | None) -> V:
        """A field of ``receiver``: status-like fields are bounded scalars, envelope fields keep
        the receiver's class, other fields are PROJECTED and bounded only with the receiver."""
        if key is not None and receiver.fields is not None:
            known = receiver.field(key)
            if known is not None:
                return known
        if not receiver.tainted:
            return CLEAN
        label = f".{key}" if key is not None else "[key]"
        if key in STATUS_FIELDS:
            return receiver.retag(Cls.PROJECTED, True, SCALAR).step(label)
        if key in ENVELOPE_FIELDS:
            return replace(receiver, parts=None, fields=None).step(label)
        if key is None:
            return receiver.retag(select(receiver.cls), True, (1, "items")).step("[index]")
        return receiver.retag(Cls.PROJECTED, receiver.bounded).step(label)

    def subscript(self, node: cst.Subscript) -> V:
        receiver = self.flow.expr(node.value)
        if len(node.slice) != 1:
            return fail_closed("a multi-dimensional subscript", receiver)
        index = node.slice[0].slice
        if isinstance(index, cst.Slice):
            return self.slice(receiver, index)
        assert isinstance(index, cst.Index)
        key = self.flow.expr(index.value)
        if isinstance(key.const, str):
            return self.project(receiver, key.const)
        parts = receiver.parts
        if (
            isinstance(key.const, int)
            and parts is not None
            and -len(parts) <= key.const < len(parts)
        ):
            return parts[key.const]
        if not receiver.tainted:
            return CLEAN if not key.tainted else key
        label = f"[{key.const}]" if isinstance(key.const, int) else "[index]"
        one = element(receiver)  # a character of a string, a line of a list of lines
        if receiver.text:
            return receiver.retag(select(receiver.cls), True, (4, "bytes")).step(label)
        return replace(
            receiver.retag(select(receiver.cls), True, (1, "items")), text=one.text
        ).step(label)

    def slice(self, receiver: V, index: cst.Slice) -> V:
        lower = self.flow.expr(index.lower) if index.lower is not None else None
        upper = self.flow.expr(index.upper) if index.upper is not None else None
        if index.step is not None:
            self.flow.expr(index.step)
        count = slice_length(lower, upper)
        if not receiver.tainted:
            return CLEAN
        text = f"[{show(lower)}:{show(upper)}]"
        cls = select(receiver.cls)
        if count is None:
            return receiver.retag(cls, receiver.bounded).step(text)
        unit = "bytes" if receiver.text else "items"  # characters of a string, or items
        held = receiver.bound if receiver.bounded else None
        if held is not None and held[1] == unit and held[0] < count:
            count = held[0]  # a slice takes no more than there is
        said = "chars" if receiver.text else "items"
        return receiver.retag(cls, True, (count, unit)).step(f"{text} ({count} {said})")
