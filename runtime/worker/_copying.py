"""``copy.copy`` and ``copy.deepcopy`` for snippets, carried out step by step through the guards.

CPython's copy runs an object's reduce recipe natively: it calls the constructor the recipe
names, writes the state with the real ``setattr``, and builds the recipe from methods a
snippet's subclass may override (``getstate``, ``items``, ``__iter__``). A walk of the value
before the copy cannot know what those will answer during it (an attack pass had a recipe
make a class of the sandbox's and write into it). Here the copy is the check: each object is
looked at when the copy meets it, and every step a recipe asks for is taken as the snippet's
own code would take it:

- plain data (exact ``list``, ``dict``, ``tuple``, ``set``, ``frozenset``, ``bytearray``,
  ``slice``) and the vetted containers (``deque``, ``OrderedDict``, ``Counter``,
  ``defaultdict``, exact types) are rebuilt here, item by item;
- the vetted values that hold nothing of the snippet's (dates without a tzinfo of the
  snippet's, decimals, fractions, UUIDs, arrays, exact types) are copied by CPython;
- what CPython's copy hands back as it is (classes, functions, patterns, zones, partials, enum
  members) is handed back once the admission passes it, so the copy never returns what the
  snippet could not hold;
- the snippet's own objects and the builtin exceptions: their ``__copy__`` or
  ``__deepcopy__``, else their reduce recipe (the snippet's ``__reduce_ex__`` or
  ``__reduce__``, a base's, or CPython's default, which asks the object's own
  ``__getnewargs__`` and ``__getstate__``). The recipe's constructor is called through the call
  guard (its result checked), ``__setstate__`` called the same way, a state dict written past
  the checks of ``obj.name = value``, list and dict items iterated through the iteration guard
  and stored as ``y.append(item)`` and ``y[key] = value`` would be;
- anything else from outside is refused: its recipe would rebuild it past the checks.
"""

from __future__ import annotations

import array
import builtins
import collections
import copy
import copyreg
import dataclasses
import datetime
import decimal
import enum
import fractions
import re
import types
import uuid
import zoneinfo
from typing import Any

from runtime.worker._partial import partial
from runtime.worker._vetted import ADOPTION, ORDERED_DICT, DefaultDict, Deque, ZoneInfo

_ATOMS: frozenset[type] = frozenset(
    {str, int, float, bool, complex, bytes, range, type(None), type(...), type(NotImplemented)}
)
"""What both copies hand back as it is, with no check: immutable plain values."""
_HANDED_BACK: frozenset[type] = frozenset(
    {types.FunctionType, types.BuiltinFunctionType, types.BuiltinMethodType, partial}
    | {zoneinfo.ZoneInfo, ZoneInfo, re.Pattern, datetime.timezone}
)
"""What both copies hand back as it is once the admission passes it (a function, a shared
zone, a pattern, a partial, whose fields are read-only)."""
_BY_CPYTHON: frozenset[type] = frozenset(
    {datetime.date, datetime.timedelta, decimal.Decimal, fractions.Fraction, uuid.UUID}
    | {array.array}
)
"""Exact vetted types CPython copies without running anything of the snippet's."""
_ZONED = (datetime.datetime, datetime.time)
_SAFE_ZONES = frozenset({type(None), datetime.timezone, zoneinfo.ZoneInfo, ZoneInfo})
_ORDERED = frozenset({collections.OrderedDict, ORDERED_DICT, collections.Counter})
_DEQUES = frozenset({collections.deque, Deque})
_DEFAULT_DICTS = frozenset({collections.defaultdict, DefaultDict})
_HOOKS_RETURNING_SELF = tuple(
    hook for name in ("__copy__", "__deepcopy__") if (hook := vars(enum.Enum).get(name))
)
"""Enum's own copy hooks, which answer the member itself (not every 3.11 has ``__copy__``)."""
_BUILTIN_ERRORS: frozenset[type] = frozenset(
    value
    for value in vars(builtins).values()
    if isinstance(value, type) and issubclass(value, BaseException)
)
_NIL: Any = object()


def _found(kind: type, name: str) -> tuple[type | None, Any]:
    """The class of ``kind``'s MRO whose own namespace holds ``name``, and what it holds
    there (a type's MRO and namespaces are read as the type keeps them: no snippet code)."""
    for klass in kind.__mro__:
        namespace = vars(klass)
        if name in namespace:
            return klass, namespace[name]
    return None, None


def _instance_dict(obj: Any) -> dict[str, Any]:
    """``obj``'s own ``__dict__``, through the descriptor CPython gives a class whose
    instances have one (a class of the snippet's that defines ``__dict__`` as anything else
    would answer with anything; CPython's descriptor checks ``obj`` is its class's)."""
    descriptor = _found(type(obj), "__dict__")[1]
    held = None
    if type(descriptor) is types.GetSetDescriptorType and descriptor.__name__ == "__dict__":
        held = descriptor.__get__(obj)
    if type(held) is not dict:
        raise TypeError(
            f"cannot copy a {type(obj).__name__}: its class defines __dict__, where copy "
            "writes the state"
        )
    return held


def _called(x: Any, hook: Any, name: str, *args: Any) -> Any:
    """``x.name(*args)`` for the copy hook ``hook`` that ``type(x)``'s MRO holds: a function
    is called on ``x`` through the call guard (so a name such as ``__reduce_ex__``, which no
    snippet may read, still has its method called), anything else read from ``x`` and called
    through the guards."""
    if type(hook) is types.FunctionType:
        return ADOPTION.call(hook, x, *args)
    return ADOPTION.call(ADOPTION.getattr(x, name), *args)


_EXCEPTION_STATE = BaseException.__setstate__


def _exception_state(y: BaseException, state: Any) -> None:
    """``BaseException.__setstate__``: each item set as an attribute. On the snippet's own
    exception through its ``setattr``; on one from outside (which a snippet may not write)
    natively, where every name is public or the exception's ``__notes__``."""
    if state is None:
        return
    if type(state) is not dict:
        raise TypeError("state is not a dictionary")
    items = list(state.items())
    if ADOPTION.owns(y):
        for name, value in items:
            ADOPTION.setattr(y, name, value)
        return
    for name, _ in items:
        if type(name) is not str or (name.startswith("_") and name != "__notes__"):
            raise TypeError(
                f"cannot copy a {type(y).__name__}: its state names {name!r}, which is private; "
                "keep the exception's own data in public attributes"
            )
    _EXCEPTION_STATE(y, dict(items))


def _checked(recipe: Any, hook: Any) -> Any:
    """A recipe C code made, its arguments and state checked as a call's result from outside
    is (its constructor is checked where it is called, its items where they are iterated)."""
    if type(recipe) is not tuple or len(recipe) < 2:
        return recipe
    parts = list(recipe)
    parts[1] = ADOPTION.result(parts[1], hook)
    if len(parts) > 2:
        parts[2] = ADOPTION.result(parts[2], hook)
    return tuple(parts)


class _Copy:
    """One ``copy.copy`` or ``copy.deepcopy`` call."""

    def __init__(self, deep: bool, memo: dict[int, Any] | None) -> None:
        self.deep = deep
        self.memo: dict[int, Any] = {} if memo is None else memo

    # -- what each object becomes ---------------------------------------------------------

    def one(self, x: Any) -> Any:
        """The copy of ``x``: memoised for a deep copy, as CPython's is. Plain data is
        dispatched here, so a nested list costs two frames a level, as in CPython."""
        kind = type(x)
        if kind in _ATOMS:
            return x
        if not self.deep:
            rebuild = _REBUILT.get(kind)
            return self.other(x, kind) if rebuild is None else rebuild(self, x)
        d = id(x)
        y = self.memo.get(d, _NIL)
        if y is not _NIL:
            return y
        rebuild = _REBUILT.get(kind)
        y = self.other(x, kind) if rebuild is None else rebuild(self, x)
        if y is not x:
            self.memo[d] = y
            self.keep(x)
        return y

    def other(self, x: Any, kind: type) -> Any:
        """The copy of what is not plain data."""
        if kind in _HANDED_BACK or issubclass(kind, type):
            return self.handed_back(x)
        if kind in _BY_CPYTHON:
            return copy.deepcopy(x) if self.deep else copy.copy(x)
        if kind in _ZONED:
            return self.zoned(x)
        if kind is types.MethodType:
            return self.method(x)
        if ADOPTION.owns(x) or kind in _BUILTIN_ERRORS:
            return self.by_recipe(x, kind)
        module = kind.__module__
        if type(module) is str and module.startswith("runtime."):
            raise TypeError(f"cannot copy a {kind.__name__} object: it belongs to the sandbox")
        if enum.Enum in kind.__mro__:
            return self.handed_back(x)  # a member of a vetted module's enum (re.IGNORECASE)
        raise TypeError(
            f"cannot copy a {kind.__name__} object: copy would rebuild it past the sandbox's "
            "checks (plain data, dates, decimals, deques and the snippet's own objects copy)"
        )

    def handed_back(self, x: Any) -> Any:
        if ADOPTION.admit(x) is not x:
            raise TypeError(f"cannot copy a {type(x).__name__} object: it is not the snippet's")
        return x

    def zoned(self, x: Any) -> Any:
        """A datetime or time: CPython's copy, unless its tzinfo is the snippet's (copied
        here, then put in place)."""
        zone = x.tzinfo
        if type(zone) in _SAFE_ZONES:
            return copy.deepcopy(x) if self.deep else copy.copy(x)
        return x.replace(tzinfo=self.one(zone) if self.deep else zone)

    def method(self, x: types.MethodType) -> Any:
        """A bound method of the snippet's own function: bound again to the copy of its
        object (deep) or to the same object (shallow), as CPython's copy does."""
        if not ADOPTION.owns(x.__func__):
            raise TypeError("cannot copy a method from outside the snippet")
        bound = self.one(x.__self__) if self.deep else x.__self__
        return types.MethodType(x.__func__, bound)

    # -- plain data and the vetted containers ----------------------------------------------

    def a_list(self, x: list[Any]) -> list[Any]:
        if not self.deep:
            return x.copy()
        y: list[Any] = []
        self.memo[id(x)] = y
        append, one = y.append, self.one
        for item in x:
            append(one(item))
        return y

    def a_tuple(self, x: tuple[Any, ...]) -> tuple[Any, ...]:
        if not self.deep:
            return x
        items, one = [], self.one
        for item in x:
            items.append(one(item))
        made = self.memo.get(id(x), _NIL)  # a tuple reached again through its own items
        if made is not _NIL:
            return made  # type: ignore[no-any-return]
        if all(a is b for a, b in zip(x, items, strict=True)):
            return x
        return tuple(items)

    def a_dict(self, x: dict[Any, Any]) -> dict[Any, Any]:
        if not self.deep:
            return x.copy()
        y: dict[Any, Any] = {}
        self.memo[id(x)] = y
        for key, value in x.items():
            y[self.one(key)] = self.one(value)
        return y

    def a_set(self, x: set[Any] | frozenset[Any]) -> Any:
        if not self.deep:
            return x.copy() if type(x) is set else x
        return type(x)([self.one(item) for item in x])

    def a_bytearray(self, x: bytearray) -> bytearray:
        return bytearray(x)

    def a_slice(self, x: slice) -> slice:
        if not self.deep:
            return x
        return slice(self.one(x.start), self.one(x.stop), self.one(x.step))

    def a_deque(self, x: Any) -> Any:
        y = type(x)((), x.maxlen)
        if self.deep:
            self.memo[id(x)] = y
        y.extend([self.one(item) for item in list(x)])
        return y

    def a_mapping(self, x: Any) -> Any:
        """An ``OrderedDict`` or ``Counter``; a ``defaultdict`` keeps its factory (copied as
        any value is)."""
        made = (self.one(x.default_factory),) if type(x) in _DEFAULT_DICTS else ()
        y = type(x)(*made)
        if self.deep:
            self.memo[id(x)] = y
        for key, value in list(x.items()):
            y[self.one(key)] = self.one(value)
        return y

    # -- the snippet's own objects ---------------------------------------------------------

    def by_recipe(self, x: Any, kind: type) -> Any:
        hook_name = "__deepcopy__" if self.deep else "__copy__"
        hook = _found(kind, hook_name)[1]
        if hook is not None:
            if any(hook is own for own in _HOOKS_RETURNING_SELF):
                return x  # an enum member is its own copy
            return _called(x, hook, hook_name, *((self.memo,) if self.deep else ()))
        return self.rebuilt(x, self.recipe(x, kind))

    def recipe(self, x: Any, kind: type) -> Any:
        """What ``x.__reduce_ex__(4)`` answers: the snippet's own hook, a base's called on
        ``x``, or CPython's default. What C code put in a recipe (the arguments and the state
        it read from the object, natively: a base's ``__reduce__`` and CPython's default read
        every slot name) is checked as a result from outside is, to its leaves, before the
        snippet's own ``__setstate__`` or constructor is handed any of it."""
        for name, args in (("__reduce_ex__", (4,)), ("__reduce__", ())):
            owner, hook = _found(kind, name)
            if owner is object:
                continue  # object's __reduce_ex__ asks for __reduce__ when a class has its own
            if ADOPTION.owns(owner):
                return _called(x, hook, name, *args)
            return _checked(hook(x, *args), hook)  # the base's own (an exception's, a set's)
        return _checked(object.__reduce_ex__(x, 4), object.__reduce_ex__)

    def rebuilt(self, x: Any, recipe: Any) -> Any:
        """``x`` rebuilt from ``recipe`` (CPython's ``copy._reconstruct``), each step through
        the guards."""
        if type(recipe) is str:
            return x  # a global's name: the object is its own copy
        if type(recipe) is not tuple or not 2 <= len(recipe) <= 6:
            raise TypeError(
                f"cannot copy a {type(x).__name__}: its reduce recipe is not a tuple of 2 to 6 "
                "items"
            )
        func, args, state, listitems, dictitems, setter = (*recipe, None, None, None, None)[:6]
        if self.deep and args:
            args = self.one(args)
        if type(args) is not tuple:
            raise TypeError(
                f"cannot copy a {type(x).__name__}: its recipe's arguments are not a tuple"
            )
        y = self.constructed(func, args, type(x))
        if self.deep:
            self.memo[id(x)] = y
        if state is not None:
            if self.deep:
                state = self.one(state)
            if setter is not None:
                ADOPTION.call(setter, y, state)
            else:
                self.state_set(y, state, fresh=func is type(x))
        if listitems is not None:
            append = ADOPTION.getattr(y, "append")
            for item in ADOPTION.iter(listitems):
                ADOPTION.call(append, self.one(item) if self.deep else item)
        if dictitems is not None:
            for key, value in ADOPTION.iter(dictitems):
                if self.deep:
                    key, value = self.one(key), self.one(value)
                ADOPTION.write(y)[key] = value
        return y

    def constructed(self, func: Any, args: tuple[Any, ...], kind: type) -> Any:
        """What the recipe's constructor makes: for CPython's own ``copyreg.__newobj__``
        (only CPython's default recipe names it), ``kind.__new__(kind, ...)``; else the
        constructor called as the snippet would call it."""
        if func is copyreg.__newobj__ or func is copyreg.__newobj_ex__:  # type: ignore[attr-defined]
            if func is copyreg.__newobj__:  # type: ignore[attr-defined]
                cls, given, keywords = args[0], args[1:], {}
            else:
                cls, given, keywords = args
            if cls is not kind:
                raise TypeError(f"cannot copy a {kind.__name__}: its recipe makes another class")
            new = kind.__new__
            return ADOPTION.result(new(kind, *given, **keywords), new)
        return ADOPTION.call(ADOPTION.admit(func), *args)

    def state_set(self, y: Any, state: Any, fresh: bool = False) -> None:
        """``y.__setstate__(state)`` when its class has one, else a dict written into its
        ``__dict__`` (bypassing ``__setattr__``, as CPython does: a frozen dataclass copies)
        and slots set with ``setattr``, each name first passing the checks of
        ``y.name = value``. A ``__setstate__`` changes only the snippet's own objects, or an
        exception the recipe made ``fresh`` by calling its class: a recipe's constructor can
        answer any object (``uuid.NAMESPACE_DNS``, shared by the whole worker)."""
        hook = _found(type(y), "__setstate__")[1]
        if hook is _EXCEPTION_STATE and (fresh or ADOPTION.owns(y)):
            _exception_state(y, state)
            return
        if hook is not None:
            if not ADOPTION.owns(y):
                raise TypeError(
                    f"cannot copy: the recipe made a {type(y).__name__}, an object from outside "
                    "the snippet that it may share, and would change it with its __setstate__; "
                    "have __reduce__ call the class itself (with the state as its arguments)"
                )
            _called(y, hook, "__setstate__", state)
            return
        slots = None
        if type(state) is tuple and len(state) == 2:
            state, slots = state
        if state is not None:
            if type(state) is not dict:
                raise TypeError(f"cannot copy a {type(y).__name__}: its state is not a dict")
            items = list(state.items())
            for name, _ in items:
                if type(name) is not str:
                    raise TypeError("attribute name must be string")
                ADOPTION.write(y, name)
            held = _instance_dict(y)
            for name, value in items:
                held[name] = value
        if slots is not None:
            if type(slots) is not dict:
                raise TypeError(f"cannot copy a {type(y).__name__}: its slot state is not a dict")
            for name, value in list(slots.items()):
                ADOPTION.setattr(y, name, value)

    def keep(self, x: Any) -> None:
        """``x`` alive while the memo is (its id must not be reused), as CPython's copy does."""
        kept = self.memo.get(id(self.memo), _NIL)
        if kept is _NIL:
            self.memo[id(self.memo)] = [x]
        elif type(kept) is list:
            kept.append(x)


_REBUILT: dict[type, Any] = {
    list: _Copy.a_list,
    tuple: _Copy.a_tuple,
    dict: _Copy.a_dict,
    set: _Copy.a_set,
    frozenset: _Copy.a_set,
    bytearray: _Copy.a_bytearray,
    slice: _Copy.a_slice,
    **dict.fromkeys(_DEQUES, _Copy.a_deque),
    **dict.fromkeys(_ORDERED | _DEFAULT_DICTS, _Copy.a_mapping),
}


def copy_(x: Any) -> Any:
    """Shallow copy operation on arbitrary Python objects."""
    return _Copy(deep=False, memo=None).one(x)


def deepcopy(x: Any, memo: Any = None) -> Any:
    """Deep copy operation on arbitrary Python objects."""
    if memo is not None and type(memo) is not dict:
        raise TypeError(f"copy.deepcopy: memo must be a dict, not {type(memo).__name__}")
    return _Copy(deep=True, memo=memo).one(x)


def patch_dataclasses() -> None:
    """``dataclasses.asdict`` and ``astuple`` deep-copy each leaf with the module's own
    ``copy``: in the zygote, that is this one."""
    dataclasses.copy = types.SimpleNamespace(  # type: ignore[attr-defined]
        copy=copy_, deepcopy=deepcopy
    )
