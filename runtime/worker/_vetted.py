"""Facade members that cannot be handed out as they are, rebuilt around the guards.

Each wraps a standard-library function whose real form would give a snippet what the guards
keep from it, or would be refused by them:

- ``dataclasses.dataclass`` and ``make_dataclass`` build methods with ``exec`` from the field
  names: the names are taken only as exact ``str`` identifiers (from a plain ``dict`` of
  annotations, plain field specs, and bases the facade made), the source is checked to name
  nothing else before the ``exec`` alone runs with the audit hook trusting it (never snippet
  code) under fresh globals, and the class and its new methods count as the snippet's own;
- ``contextlib.contextmanager`` and ``asynccontextmanager`` return a helper function of
  their own, which is vetted;
- ``operator.attrgetter``, ``methodcaller`` and ``itemgetter`` resolve through the snippet's
  ``getattr`` and item guard, not in C past them;
- ``zoneinfo.ZoneInfo`` answers from zones loaded before the worker locks its filesystem;
- enum's functional API makes its class through the snippet's ``class`` statement path, and
  ``ContextDecorator.__call__`` vets the wrapper it makes (both patched in the zygote).

The guards they use are those of the running execution, reached through :data:`ADOPTION`.
"""

from __future__ import annotations

import _strptime  # type: ignore[import-not-found]
import abc
import ast
import collections
import contextlib
import csv
import dataclasses
import decimal
import enum
import fractions
import functools
import hashlib
import importlib.util
import inspect
import io
import itertools
import json
import keyword
import operator
import os
import random
import re
import struct
import sys
import textwrap
import types
import typing
import zoneinfo
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from contract import parse
from runtime.worker import _audit, _guards, _values
from runtime.worker._errors import PolicyError
from runtime.worker._exact import exact_copy
from runtime.worker._policy import DENIED_ATTRIBUTES, MAX_NAME, long_name
from runtime.worker._repairs import PROPERTY_PARTS


class Adoption:
    """Where facade members that make something for the snippet register it: a class made
    for it counts as the snippet's own, a closure made for it as vetted; ``getattr`` and
    ``getitem`` are the execution's guards. The worker points them at its own before the
    snippet runs."""

    def __init__(self) -> None:
        self.adopt: Callable[[type], type] = lambda cls: cls
        self.vet: Callable[[Any], Any] = lambda value: value
        self.getattr: Callable[..., Any] = getattr
        self.getitem: Callable[[Any, Any], Any] = lambda obj, key: obj[key]
        self.owns: Callable[[Any], bool] = lambda obj: False
        self.makes_own: Callable[[Any], bool] = lambda func: False
        """Whether what calling ``func`` returns is the snippet's own (see
        ``SnippetClasses.makes_own``)."""
        self.vetted: Callable[[Any], bool] = lambda obj: False
        """Whether a value was handed to the snippet on purpose (a facade member, a checked
        factory :func:`field` made)."""
        self.admit: Callable[[Any], Any] = _refuse_until_set
        """What ``await`` and ``with ... as`` hand the snippet, checked as such a value is."""
        self.result: Callable[[Any, Any], Any] = _refuse_result_until_set
        """What a call of a function from outside returned (``result(value, func)``), checked as
        the call guard checks it (a plain container to its leaves)."""
        self.call: Callable[..., Any] = _refuse_until_set
        """``func(*args, **kwargs)`` as the snippet's own call would run it (the call guard)."""
        self.iter: Callable[[Any], Any] = _refuse_until_set
        """``iter(x)`` as the snippet's ``for`` would take it (the iteration guard)."""
        self.write: Callable[..., Any] = _refuse_until_set
        """What ``obj.name = v`` (``write(obj, name)``) or ``obj[k] = v`` (``write(obj)``) in the
        snippet writes to, or a refusal (the write guard)."""
        self.setattr: Callable[[Any, str, Any], None] = _refuse_setattr_until_set
        """The snippet's ``setattr``."""
        self.make_class: Callable[..., type] | None = None
        """What a snippet's ``class`` statement calls: checks the namespace, adopts the class."""

    def checked(self, func: Any) -> Any:
        """``func``, or for a callable from outside the snippet one whose every result is
        checked: C calls it (a factory, a key, ``starmap``'s function) and keeps what it returns
        where no call guard sees it (``defaultdict(partial(type, tools))``). The wrapper is not
        vetted: a caller that lets the snippet read it back vets it itself."""
        if func is None or not callable(func) or self.makes_own(func):
            return func
        result = self.result

        def checked(*args: Any, **kwargs: Any) -> Any:
            value = func(*args, **kwargs)
            return value if type(value) in _PLAIN_RESULTS else result(value, func)

        return checked

    def result_of(self, func: Any) -> Any:
        """``func()``, checked as :meth:`checked` would (without making a wrapper)."""
        value = func()
        if type(value) in _PLAIN_RESULTS or self.makes_own(func):
            return value
        return self.result(value, func)


_PLAIN_RESULTS = frozenset({str, int, float, bool, type(None), bytes})


def _refuse_until_set(value: Any, *args: Any, **kwargs: Any) -> Any:
    raise PolicyError("no value from outside is admitted before the worker's guards exist")


def _refuse_result_until_set(value: Any, func: Any) -> Any:
    return _refuse_until_set(value)


def _refuse_setattr_until_set(obj: Any, name: str, value: Any) -> None:
    _refuse_until_set(obj)


ADOPTION = Adoption()


def public(func: Any, name: str, module: str) -> Any:
    """``func``, one of the sandbox's own, under the name it stands for, code included: a
    snippet's mistake (a missing argument) is told as CPython tells it (``sleep() missing 1
    required positional argument``), never naming the sandbox's wrapper."""
    return _rename(func, name, name, module)


def _rename(func: Any, name: str, qualname: str, module: str) -> Any:
    func.__code__ = func.__code__.replace(co_name=name, co_qualname=qualname)
    func.__name__, func.__qualname__, func.__module__ = name, qualname, module
    return func


def public_class(cls: type, module: str) -> type:
    """``cls`` (a vetted module's class) and the methods the sandbox gave it, under the names
    they stand for: ``repr(operator.attrgetter)``, a method's repr and a wrong call's message
    name ``operator`` and ``attrgetter.__call__``, never the sandbox's own modules."""
    if cls.__module__.startswith("runtime."):
        cls.__module__ = module
    if "<locals>" in cls.__qualname__:
        cls.__qualname__ = cls.__name__
    for attr, member in vars(cls).items():
        for func in _functions_of(member):
            if func.__module__.startswith("runtime."):
                _rename(func, attr, f"{cls.__qualname__}.{attr}", cls.__module__)
    return cls


def _functions_of(member: Any) -> list[types.FunctionType]:
    """The Python functions a class member runs: itself, or what a static or class method or
    a property wraps."""
    if isinstance(member, (staticmethod, classmethod)):
        member = member.__func__
    if isinstance(member, property):
        return [f for f in (member.fget, member.fset, member.fdel) if type(f) is types.FunctionType]
    return [member] if type(member) is types.FunctionType else []


_real_create_fn = dataclasses._create_fn  # type: ignore[attr-defined]

_MADE = _values.RECORD_VIEWS
"""The dataclasses the facade made, each with the read-only view of its fields it was given:
the only bases whose fields a new dataclass inherits, and a view a snippet may read."""
_BUILDING: list[frozenset[str]] = []
"""The checked field names of the dataclass the facade is building (innermost last)."""

_GENERATED_BUILTINS = {"hash": hash, "super": super, "type": type}
"""The builtins dataclasses' generated methods call (``NotImplemented`` is a constant)."""
_DATACLASS_NAMES = frozenset(
    {
        "FrozenInstanceError",
        "MISSING",
        "NotImplemented",
        "_HAS_DEFAULT_FACTORY",
        "_return_type",
        "__class__",
        "__create_fn__",
        "__dataclass_builtins_object__",
        "__dataclass_self__",
        "__delattr__",
        "__eq__",
        "__ge__",
        "__gt__",
        "__hash__",
        "__init__",
        "__le__",
        "__lt__",
        "__post_init__",
        "__qualname__",
        "__repr__",
        "__setattr__",
        "cls",
        "hash",
        "name",
        "other",
        "self",
        "super",
        "type",
        "value",
    }
)
"""Every name dataclasses itself writes into the methods it generates (Python 3.11)."""
_FIELD_PREFIXES = ("_type_", "_dflt_")
_MESSAGES = frozenset({"cannot assign to field ", "cannot delete field ", "()", "(", ")"})
_REPR_PIECE = re.compile(r"(?:\(|, )([A-Za-z_][A-Za-z0-9_]*)=")


def _refuse_source(why: str) -> TypeError:
    return TypeError(f"dataclass(): refused to generate a method: {why}")


def _known_name(name: object, fields: frozenset[str]) -> bool:
    if type(name) is not str:
        return False
    if name in fields or name in _DATACLASS_NAMES:
        return True
    return any(name.startswith(p) and name[len(p) :] in fields for p in _FIELD_PREFIXES)


def _known_text(text: str, fields: frozenset[str]) -> bool:
    if text in fields or text in _MESSAGES:
        return True
    piece = _REPR_PIECE.fullmatch(text)
    return piece is not None and piece.group(1) in fields


def _check_source(source: str, name: str, inner: list[str], fields: frozenset[str]) -> None:
    """The text dataclasses is about to ``exec``: one factory taking ``inner`` that defines
    ``name`` and returns it, naming only the checked fields and dataclasses' own names, with
    no string but the field names and dataclasses' own words."""
    tree = parse(source)
    outer = tree.body[0] if len(tree.body) == 1 else None
    if not (
        isinstance(outer, ast.FunctionDef)
        and outer.name == "__create_fn__"
        and [a.arg for a in outer.args.args] == inner
        and not (outer.args.defaults or outer.args.posonlyargs or outer.args.kwonlyargs)
        and len(outer.body) == 2
        and isinstance(outer.body[0], ast.FunctionDef)
        and outer.body[0].name == name
    ):
        raise _refuse_source("its text is not a single method definition")
    for node in ast.walk(tree):
        for attribute in ("id", "arg", "attr", "name"):  # ast.keyword's name is its .arg
            found = getattr(node, attribute, None)
            if found is not None and not _known_name(found, fields):
                raise _refuse_source(f"it names {found!r}, which is no checked field")
        if isinstance(node, ast.Constant) and not (
            type(node.value) is str and _known_text(node.value, fields)
        ):
            raise _refuse_source(f"it holds the constant {node.value!r}")


def _trusted_create_fn(
    name: str,
    args: Any,
    body: Any,
    *,
    globals: Any = None,
    locals: Any = None,
    return_type: Any = dataclasses.MISSING,
) -> Any:
    """``dataclasses._create_fn`` for the facade: the text it would ``exec`` is rebuilt from
    the same parts and checked (:func:`_check_source`) before its ``exec`` alone runs with the
    audit hook trusting it; the method's globals are a fresh namespace with the few builtins
    dataclasses' methods call, never a module's. Outside a facade build it is the real one,
    untrusted."""
    if not _BUILDING:
        return _real_create_fn(
            name, args, body, globals=globals, locals=locals, return_type=return_type
        )
    fields = _BUILDING[-1]
    parts = (name, *args, *body)
    given = {} if locals is None else dict(locals)
    if not all(type(part) is str for part in (*parts, *given)):
        raise _refuse_source("its parts are not strings")
    args, body = list(args), list(body)
    returns = ""
    if return_type is not dataclasses.MISSING:
        given["_return_type"] = return_type
        returns = "->_return_type"
    inner = "\n".join(f"  {b}" for b in body)
    text = f" def {name}({','.join(args)}){returns}:\n{inner}"
    source = f"def __create_fn__({', '.join(given)}):\n{text}\n return {name}"
    namespace = {"__builtins__": dict(_GENERATED_BUILTINS), "__name__": "__main__"}
    with _audit.trusted():
        _check_source(source, name, list(given), fields)
        made = _real_create_fn(
            name, args, body, globals=namespace, locals=given, return_type=return_type
        )
    return _on_own_instances(made)


def _on_own_instances(method: Any) -> Any:
    """A method dataclasses generated, which runs only on the snippet's own objects: called
    from its class (``F.__init__(obj, ...)``), it would write fields natively, with the real
    ``object.__setattr__`` when frozen, onto any object it is given."""

    @functools.wraps(method)
    def checked(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        if not ADOPTION.owns(self) or isinstance(self, type):
            raise TypeError(
                f"{method.__name__}() of a dataclass takes one of the snippet's own objects, "
                f"not a {type(self).__name__}"
            )
        return method(self, *args, **kwargs)

    return checked


def _caller(depth: int = 1, default: str = "__main__") -> str:
    """``typing._caller`` without frames: ``TypeVar``, ``NewType`` and ``TypedDict`` read
    their caller's module from its frame (an audited ``sys._getframe`` the hook refuses);
    in a worker, the caller is the snippet, whose module is ``__main__``."""
    return default


_real_enum_create = enum.EnumType._create_  # type: ignore[attr-defined]


def _enum_members(names: Any) -> tuple[list[str], list[tuple[str, Any]]]:
    """The member names of ``Enum('Name', names)`` as plain data: a string of names, a list or
        tuple of names or of (name, value) pairs, or a dict; every name an identifier that is not
        special or one of enum's own (``_missing_``), as a class statement's would be. The names
    come back alone (enum gives them values) or paired with their values."""
    if type(names) is str:
        names = names.replace(",", " ").split()
    if type(names) is dict:
        names = list(names.items())
    if type(names) not in (list, tuple):
        raise TypeError("Enum(): names must be a string, a list, a tuple or a dict")
    if names and all(type(name) is str for name in names):
        return [_member_name(name) for name in names], []
    pairs = []
    for item in names:
        if type(item) not in (list, tuple) or len(item) != 2:
            raise TypeError("Enum(): each member must be a name or a (name, value) pair")
        pairs.append((_member_name(item[0]), item[1]))
    return [], pairs


def _member_name(name: object) -> str:
    member = _identifier(name, "Enum member names")
    if member.startswith("_") and member.endswith("_"):
        raise TypeError(f"Enum member names cannot be enum's own names such as {member!r}")
    return member


def _enum_create(
    cls: Any,
    class_name: Any,
    names: Any,
    *,
    module: Any = None,
    qualname: Any = None,
    type: Any = None,
    start: Any = 1,
    boundary: Any = None,
) -> Any:
    """``EnumType._create_``, the functional API (``Enum('Color', 'RED GREEN')``), for the
    facade: the class is made as the snippet's ``class`` statement would make it (its
    namespace checked, the class the snippet's own), with no frame walk for the caller's
    module (a snippet's module is ``__main__``). Outside a worker it is the real one."""
    make = ADOPTION.make_class
    if make is None:
        return _real_enum_create.__func__(
            cls,
            class_name,
            names,
            module=module,
            qualname=qualname,
            type=type,
            start=start,
            boundary=boundary,
        )
    if builtins_type(class_name) is not str:
        raise TypeError("Enum(): the class name must be a string")
    bases = (cls,) if type is None else (type, cls)
    namespace = make.__prepare__(class_name, bases)  # type: ignore[attr-defined]
    listed, pairs = _enum_members(names)
    last: list[Any] = []
    for count, name in enumerate(listed):
        value = bases[-1]._generate_next_value_(name, start, count, last[:])
        last.append(value)
        namespace[name] = value
    for name, value in pairs:
        namespace[name] = value
    namespace["__module__"] = module if builtins_type(module) is str else "__main__"
    if builtins_type(qualname) is str:
        namespace["__qualname__"] = qualname
    options = {} if boundary is None else {"boundary": boundary}
    return make(class_name, bases, namespace, **options)


builtins_type = type

_real_decorator_call = contextlib.ContextDecorator.__call__


def _decorator_call(self: Any, func: Any) -> Any:
    """``ContextDecorator.__call__`` (``@my_context()`` on a function): the wrapper it makes
    is vetted, and calls a function from outside only through a check of what it returns."""
    return ADOPTION.vet(_real_decorator_call(self, ADOPTION.checked(func)))


_real_fraction_new: Any = fractions.Fraction.__new__
_EXACT_NUMBERS = frozenset({int, float, str, decimal.Decimal, fractions.Fraction, type(None)})


def _exact_ratio(ratio: Any, why: str) -> Any:
    """The exact int or ``Fraction`` a subclass's ``(numerator, denominator)`` stands for."""
    if type(ratio) is not tuple or len(ratio) != 2:
        raise TypeError(why)
    if not all(isinstance(part, int) for part in ratio):
        raise TypeError(why)
    numerator, denominator = (int.__int__(part) for part in ratio)
    if denominator == 1:
        return numerator
    return _real_fraction_new(fractions.Fraction, numerator, denominator)


def _exact_number(value: Any, why: str, alone: bool) -> Any:
    """``value`` as an exact builtin number, string or ``Fraction``: ``Fraction`` reads a
    subclass's ``numerator`` and ``denominator`` or its ``as_integer_ratio()`` and keeps what
    they return as its parts, which its arithmetic then trusts to be ints; here they are
    read as it would, and must be ints."""
    kind = type(value)
    if kind in _EXACT_NUMBERS:
        return value
    if issubclass(kind, int | fractions.Fraction):
        return _exact_ratio((value.numerator, value.denominator), why)
    if issubclass(kind, float):
        return _exact_ratio(value.as_integer_ratio(), why) if alone else float.__float__(value)
    if issubclass(kind, decimal.Decimal):
        if alone:
            return _exact_ratio(value.as_integer_ratio(), why)
        return decimal.Decimal(decimal.Decimal.__str__(value))
    if issubclass(kind, str):
        return str.__str__(value)
    raise TypeError(why)


def _fraction_new(
    cls: Any, numerator: Any = 0, denominator: Any = None, *, _normalize: bool = True
) -> Any:
    """``Fraction.__new__`` whose parts are always ints (see :func:`_exact_number`)."""
    alone = denominator is None
    why = (
        "argument should be a string or a Rational instance"
        if alone
        else "both arguments should be Rational instances"
    )
    return _real_fraction_new(
        cls,
        _exact_number(numerator, why, alone),
        None if alone else _exact_number(denominator, why, alone),
        _normalize=_normalize,
    )


def _pure_ordered_dict() -> type:
    """``collections.OrderedDict`` as collections writes it in Python (the module keeps it
    when ``_collections`` has none): CPython 3.11's C one looks a key's node up in a table
    that the key's own ``__eq__`` may have freed meanwhile (``od.move_to_end(k)``,
    ``od.pop(k)``, ``od[k] = v`` crash the worker); the Python one only asks dicts."""
    real = sys.modules["_collections"]
    stand_in = types.ModuleType("_collections")
    vars(stand_in).update({k: v for k, v in vars(real).items() if k != "OrderedDict"})
    # a module name of its own: its _Link records are not the vetted collections' (a
    # snippet's subclass reading its __map would get links it could rewire)
    spec = importlib.util.spec_from_file_location("collections._ordered", collections.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_collections"] = stand_in
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules["_collections"] = real
    made: type = module.OrderedDict
    _without_helpers(made)
    views = ("_OrderedDictKeysView", "_OrderedDictItemsView", "_OrderedDictValuesView")
    for name in ("OrderedDict", *views):  # records of the vetted collections; _Link is not
        getattr(module, name).__module__ = "collections"
    return made


def _without_helpers(made: type) -> None:
    """``OrderedDict.__setitem__`` and ``__delitem__`` take their helpers as keyword defaults
    (``Link=``, ``proxy=``, ``dict_setitem=``): a snippet's own ``Link`` went into the links,
    which ``del`` then rewired, writing attributes onto whatever they pointed at. Here they
    take a key and a value only."""
    setitem, delitem = vars(made)["__setitem__"], vars(made)["__delitem__"]

    def __setitem__(self: Any, key: Any, value: Any, /) -> None:
        setitem(self, key, value)

    def __delitem__(self: Any, key: Any, /) -> None:
        delitem(self, key)

    for name, method in (("__setitem__", __setitem__), ("__delitem__", __delitem__)):
        method.__qualname__, method.__module__ = f"OrderedDict.{name}", "collections"
        setattr(made, name, method)


ORDERED_DICT = _values.writable_record(_pure_ordered_dict())
"""The ``OrderedDict`` snippets get (``collections.OrderedDict``, ``typing.OrderedDict``)."""
_ORDERED_STATE = frozenset(vars(ORDERED_DICT()))
"""Its own bookkeeping in each instance's ``__dict__``, which its reduce leaves out."""


class Struct(struct.Struct):
    """``struct.Struct``, initialised once, when it is made: CPython 3.11 frees the compiled
    format when ``__init__`` runs again, under an ``iter_unpack`` or a ``pack_into`` still
    using it; and a Struct never initialised (a subclass's ``__init__`` that skips or
    swallows the base one) has ``s_len == -1``, so ``pack_into(buf)`` passes its argument
    count check and reads ``args[1]`` past the arguments, then packs through NULL codes."""

    def __new__(cls, format: Any) -> Struct:
        self = super().__new__(cls)
        _STRUCT_INIT(self, format)  # raises: a half-made Struct never reaches the snippet
        return self

    def __init__(self, format: Any) -> None:
        made = _STRUCT_FORMAT(self)
        given = format.decode("latin-1") if type(format) is bytes else format
        if type(given) is not str or given != made:
            raise TypeError("a Struct is initialised once; make a new one")


_STRUCT_FORMAT: Any = vars(struct.Struct)["format"].__get__
_STRUCT_INIT: Any = vars(struct.Struct)["__init__"]
Struct.__module__ = "struct"


class Deque(collections.deque):  # type: ignore[type-arg]
    """``collections.deque``, whose ``index`` compares items it holds: CPython 3.11's own
    compares a borrowed item, which the comparison may free by clearing the deque, and then
    hands the freed object to the other side's ``__eq__`` (gh-115243)."""

    __slots__ = ()

    def index(self, value: Any, start: Any = 0, stop: Any = sys.maxsize) -> int:
        size = len(self)
        start, stop = operator.index(start), operator.index(stop)
        if start < 0:
            start = max(start + size, 0)
        if stop < 0:
            stop = max(stop + size, 0)
        items = list(self)
        for at in range(start, min(stop, size)):
            item = items[at]
            if item is value or item == value:
                return at
            if len(self) != size:
                raise RuntimeError("deque mutated during iteration")
        raise ValueError(f"{value!r} is not in deque")


Deque.__module__, Deque.__name__, Deque.__qualname__ = "collections", "deque", "deque"


class DefaultDict(collections.defaultdict):  # type: ignore[type-arg]
    """``collections.defaultdict``, whose ``__missing__`` checks what a factory from outside
    makes before it is stored (C keeps it where no call guard sees it)."""

    def __missing__(self, key: Any) -> Any:
        factory = self.default_factory
        if factory is None:
            raise KeyError(key)
        value = ADOPTION.result_of(factory)
        self[key] = value
        return value


DefaultDict.__module__ = "collections"
DefaultDict.__name__ = DefaultDict.__qualname__ = "defaultdict"


_NO_KEY: Any = object()


class groupby:
    """``itertools.groupby``, holding the keys it compares: CPython 3.11's compares the keys
    it stores, and a key's ``__eq__`` that advances the groupby frees them under the
    comparison, then hands the freed key to the other side's ``__eq__`` (gh-143543; its
    groups' iterator, gh-146613). The same steps as CPython's, in Python."""

    __slots__ = ("_currkey", "_currvalue", "_grouper", "_it", "_keyfunc", "_tgtkey")

    def __init__(self, iterable: Any, key: Any = None) -> None:
        self._keyfunc, self._it = ADOPTION.checked(key), iter(iterable)  # a key from outside:
        # what it makes is checked
        self._tgtkey = self._currkey = self._currvalue = _NO_KEY
        self._grouper: Any = None

    def __iter__(self) -> groupby:
        return self

    def _step(self) -> None:
        value = next(self._it)
        key = value if self._keyfunc is None else self._keyfunc(value)
        self._currvalue, self._currkey = value, key

    def __next__(self) -> tuple[Any, Any]:
        self._grouper = None
        while True:
            currkey, tgtkey = self._currkey, self._tgtkey  # held across the comparison
            if currkey is _NO_KEY:
                pass
            elif tgtkey is _NO_KEY or not (tgtkey is currkey or tgtkey == currkey):
                break
            self._step()
        key = self._tgtkey = self._currkey
        grouper = self._grouper = _Grouper(self, key)
        return (key, grouper)


class _Grouper:
    """One group of a :class:`groupby`, valid until the groupby moves on."""

    __slots__ = ("_parent", "_tgtkey")

    def __init__(self, parent: groupby, tgtkey: Any) -> None:
        self._parent, self._tgtkey = parent, tgtkey

    def __iter__(self) -> _Grouper:
        return self

    def __next__(self) -> Any:
        parent = self._parent
        if parent._grouper is not self:
            raise StopIteration
        if parent._currvalue is _NO_KEY:
            parent._step()
        currkey, tgtkey = parent._currkey, self._tgtkey
        if not (tgtkey is currkey or tgtkey == currkey):
            raise StopIteration
        value = parent._currvalue
        parent._currvalue = parent._currkey = _NO_KEY  # as CPython clears both
        return value


groupby.__module__ = _Grouper.__module__ = "itertools"
_Grouper.__name__ = _Grouper.__qualname__ = "_grouper"


class callable_iterator:
    """``iter(callable, sentinel)``, holding the sentinel it compares: CPython 3.11's
    ``calliter_iternext`` compares ``it_sentinel`` by a borrowed pointer, and a sentinel's
    ``__eq__`` that re-enters the iterator (which then ends and clears the sentinel) frees
    it under the comparison; an ``__eq__`` answering ``NotImplemented`` then hands the freed
    sentinel to the value's ``__eq__``. The same steps as CPython's, in Python."""

    __slots__ = ("_callable", "_sentinel")

    def __init__(self, function: Any, sentinel: Any) -> None:
        self._callable, self._sentinel = function, sentinel

    def __iter__(self) -> callable_iterator:
        return self

    def __next__(self) -> Any:
        function = self._callable
        if function is None:
            raise StopIteration
        try:
            value = function()
        except StopIteration:
            self._callable = self._sentinel = None
            raise StopIteration from None
        sentinel = self._sentinel  # held across the comparison
        if self._callable is None:  # the call itself ended the iterator
            raise StopIteration
        if value is sentinel or sentinel == value:
            self._callable = self._sentinel = None
            raise StopIteration
        return value


callable_iterator.__module__ = "builtins"


class Sniffer(csv.Sniffer):
    """``csv.Sniffer``, whose ``sniff`` hands the snippet the dialect class it made: a fresh
    ``csv.Dialect`` subclass per sample, which no list of the vetted could name ahead."""

    def sniff(self, sample: str, delimiters: str | None = None) -> type[csv.Dialect]:
        dialect = super().sniff(sample, delimiters)
        if type(dialect) is not type or vars(type)["__bases__"].__get__(dialect) != (csv.Dialect,):
            raise TypeError("sniff() made something other than a csv.Dialect subclass")
        made: type[csv.Dialect] = ADOPTION.vet(dialect)
        return made


Sniffer.__module__ = "csv"


_C_READER = csv.reader


def _lines(lines: Iterator[Any]) -> Iterator[Any]:
    for line in lines:  # noqa: UP028  # yield from would close the snippet's source with it
        yield line


def _a_number(value: Any) -> Any:
    kind = type(value)
    if not any(
        hasattr(kind, slot) for slot in ("__index__", "__int__", "__float__", "__complex__")
    ):
        raise TypeError("a number is required")
    return value


def _counting(start: Any, step: Any) -> Iterator[Any]:
    n = start
    while True:
        yield n
        n = n + step  # as CPython adds: never in place


def count(start: Any = 0, step: Any = 1) -> Iterator[Any]:
    """``itertools.count``, a generator: CPython 3.11's adds the step to a number it no longer
    holds when the step's ``__radd__`` advances the same count (gh-154670); a generator
    re-entered says it is already running."""
    return _counting(_a_number(start), _a_number(step))


_EMPTY: Any = object()


def _accumulating(it: Iterator[Any], func: Any, total: Any) -> Iterator[Any]:
    if total is _EMPTY:
        total = next(it, _EMPTY)
        if total is _EMPTY:
            return
    yield total
    for element in it:
        total = total + element if func is None else func(total, element)  # the frame holds it
        yield total


def accumulate(iterable: Any, func: Any = None, *, initial: Any = None) -> Iterator[Any]:
    """``itertools.accumulate``, a generator: CPython 3.11's adds to a running total it does
    not hold (``PyNumber_Add(lz->total, val)``): a total whose ``__add__`` advances the same
    accumulate and answers ``NotImplemented`` is freed, and CPython hands it to the element's
    ``__radd__`` (an attack pass read and wrote any address from it); a generator re-entered
    says it is already running. What a function from outside returns is checked."""
    return _accumulating(
        iter(iterable), ADOPTION.checked(func), _EMPTY if initial is None else initial
    )


def _bound_arg(value: Any, what: str) -> int | None:
    if value is None:
        return None
    try:
        bound = operator.index(value)
    except TypeError:
        bound = -1
    if bound < 0 or bound > sys.maxsize:
        raise ValueError(f"{what} for islice() must be None or an integer: 0 <= x <= sys.maxsize.")
    return bound


def _slicing(it: Iterator[Any], start: int, stop: int | None, step: int) -> Iterator[Any]:
    index, wanted = 0, start  # as CPython's: skip to the next wanted index, then stop there
    while True:
        if stop is not None and index >= stop:
            return
        while index < wanted:
            try:
                next(it)
            except StopIteration:
                return
            index += 1
        if stop is not None and index >= stop:
            return
        try:
            item = next(it)
        except StopIteration:
            return
        index += 1
        yield item
        wanted += step
        if stop is not None and wanted > stop:
            wanted = stop


def islice(iterable: Any, *args: Any) -> Iterator[Any]:
    """``itertools.islice``, a generator: CPython 3.11's goes on with a source that the
    source's own ``__next__`` freed by re-entering the islice."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"islice expected at most 4 arguments, got {len(args) + 1}")
    if len(args) == 1:
        start, stop, step = None, args[0], None
    else:
        start, stop, step = (*args, None)[:3]
    stop_at = _bound_arg(stop, "Stop argument" if len(args) == 1 else "Indices")
    start_at = _bound_arg(start, "Indices") or 0
    if step is None:
        every = 1
    else:
        try:
            every = operator.index(step)
        except TypeError:
            every = 0
        if every <= 0 or every > sys.maxsize:
            raise ValueError("Step for islice() must be a positive integer or None.")
    return _slicing(iter(iterable), start_at, stop_at, every)


def _pairing(it: Iterator[Any]) -> Iterator[tuple[Any, Any]]:
    for first in it:
        for second in it:
            yield first, second
            first = second
        return


def pairwise(iterable: Any) -> Iterator[tuple[Any, Any]]:
    """``itertools.pairwise``, a generator: CPython 3.11's re-entered from its source keeps
    a pair it freed (gh-149557)."""
    return _pairing(iter(iterable))


def _zipping(iterators: list[Iterator[Any]], fillvalue: Any) -> Iterator[tuple[Any, ...]]:
    active = len(iterators)
    if not active:
        return
    while True:
        values = []
        for i, it in enumerate(iterators):
            try:
                value = next(it)
            except StopIteration:
                active -= 1
                if not active:
                    return
                iterators[i] = itertools.repeat(fillvalue)
                value = fillvalue
            values.append(value)
        yield tuple(values)


def zip_longest(*iterables: Any, fillvalue: Any = None) -> Iterator[tuple[Any, ...]]:
    """``itertools.zip_longest``, a generator: CPython 3.11's re-entered from a source frees
    the result tuple it goes on filling (gh-142732)."""
    return _zipping([iter(it) for it in iterables], fillvalue)


def _chaining(iterables: Iterator[Any]) -> Iterator[Any]:
    for iterable in iterables:
        for item in iterable:  # noqa: UP028  # yield from would close the snippet's iterators
            yield item


class chain:  # the name itertools gives it
    """``itertools.chain``, a generator: CPython 3.11's frees the iterator it is advancing
    when that iterator's own code drains the chain (a ``filter`` whose predicate calls
    ``next()`` on it), then goes on with it; a generator re-entered says it is running."""

    def __new__(cls, *iterables: Any) -> Any:
        return _chaining(iter(iterables))

    @classmethod
    def from_iterable(cls, iterables: Any) -> Any:
        """One iterable after another, from an iterable of them."""
        return _chaining(iter(iterables))


chain.__module__ = "itertools"


def _cycling(it: Iterator[Any]) -> Iterator[Any]:
    saved = []
    for item in it:
        yield item
        saved.append(item)
    while saved:
        yield from saved


def cycle(iterable: Any) -> Iterator[Any]:
    """``itertools.cycle``, a generator, for the reason :class:`chain` is one."""
    return _cycling(iter(iterable))


def _count_elements(mapping: Any, iterable: Any) -> None:
    """``collections``' own Python counting, in place of the C helper behind
    ``Counter.update``, which reads a count the count's ``__add__`` may free (gh-143004)."""
    mapping_get = mapping.get
    for elem in iterable:
        mapping[elem] = mapping_get(elem, 0) + 1


def csv_reader(csvfile: Any, dialect: Any = "excel", **fmtparams: Any) -> Any:
    """``csv.reader``: CPython's reader, fed through a generator of ours. CPython 3.11's reader
    has no guard against being re-entered from its own input (a line iterator whose
    ``__next__`` calls ``next(reader)`` hands out the field list and leaves NULL in its
    place, which the outer parse then appends to); re-entered, the generator is already
    running, and says so."""
    return _C_READER(_lines(iter(csvfile)), dialect, **fmtparams)


class cached_property:
    """``functools.cached_property`` (as in Python 3.12, without a lock): the method's value,
    computed on the first read and kept in the instance's ``__dict__``."""

    def __init__(self, func: Any) -> None:
        self.func = ADOPTION.checked(func)
        self.attrname: str | None = None
        self.__doc__ = getattr(func, "__doc__", None)

    def __set_name__(self, owner: type, name: str) -> None:
        name = _identifier(name, "cached_property names")
        if self.attrname is None:
            self.attrname = name
        elif name != self.attrname:
            raise TypeError(
                "Cannot assign the same cached_property to two different names "
                f"({self.attrname!r} and {name!r})."
            )

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        if isinstance(instance, type) or not ADOPTION.owns(instance):
            raise TypeError(  # it writes the instance's __dict__: only the snippet's own
                "cached_property caches on instances of the snippet's own classes, not on a "
                f"{type(instance).__name__} from outside"
            )
        if self.attrname is None:
            raise TypeError(
                "Cannot use cached_property instance without calling __set_name__ on it."
            )
        try:
            cache = object.__getattribute__(instance, "__dict__")
        except AttributeError:
            cache = None
        if type(cache) is not dict:
            raise TypeError(
                f"No '__dict__' attribute on {type(instance).__name__!r} instance to cache "
                f"{self.attrname!r} property."
            )
        name = self.attrname  # read once: the function below may rename it
        if type(name) is not str:
            raise TypeError(f"cached_property's attrname must be a str, not {type(name).__name__}")
        _guards.refuse_outside_state(type(instance), [name])  # it sets that name
        if name in cache:
            return cache[name]
        value = self.func(instance)
        cache[name] = value
        return value


cached_property.__module__ = "functools"


def singledispatch(func: Any) -> Any:
    """``functools.singledispatch``. ``register`` reads a function's first annotation as it
    is (CPython evaluates string annotations with ``eval``, outside every guard): it must be
    a class or a union of classes."""
    registry: dict[Any, Any] = {object: func}
    cache: dict[Any, Any] = {}
    token: list[Any] = [abc.get_cache_token()]
    name = getattr(func, "__name__", "singledispatch function")

    def dispatch(cls: Any) -> Any:
        if token[0] != abc.get_cache_token():  # an ABC gained a virtual subclass
            cache.clear()
            token[0] = abc.get_cache_token()
        try:
            return cache[cls]
        except KeyError:
            pass
        impl = registry.get(cls) or functools._find_impl(cls, registry)  # type: ignore[attr-defined]
        cache[cls] = impl
        return impl

    def register(cls: Any, method: Any = None) -> Any:
        if _dispatchable(cls):
            if method is None:
                return ADOPTION.vet(lambda f: register(cls, f))
        else:
            if method is not None:
                raise TypeError(f"Invalid first argument to `register()`. {cls!r} is not a class.")
            method = cls
            annotations = getattr(method, "__annotations__", None)
            if type(annotations) is not dict or not annotations:
                raise TypeError(
                    f"Invalid first argument to `register()`: {cls!r}. Use either "
                    "`@register(some_class)` or plain `@register` on an annotated function."
                )
            argname, cls = next(iter(annotations.items()))
            if not _dispatchable(cls):
                kind = "a string, which the sandbox does not evaluate" if type(cls) is str else ""
                raise TypeError(
                    f"Invalid annotation for {argname!r}. {cls!r} is not a class"
                    + (f": {kind}" if kind else ".")
                )
        for each in typing.get_args(cls) if _is_union(cls) else (cls,):
            registry[each] = method
        cache.clear()
        return method

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not args:
            raise TypeError(f"{name} requires at least 1 positional argument")
        return dispatch(args[0].__class__)(*args, **kwargs)

    wrapper.register = ADOPTION.vet(register)  # type: ignore[attr-defined]
    wrapper.dispatch = ADOPTION.vet(dispatch)  # type: ignore[attr-defined]
    wrapper.registry = types.MappingProxyType(registry)  # type: ignore[attr-defined]
    wrapper._clear_cache = ADOPTION.vet(cache.clear)  # type: ignore[attr-defined]
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        value = getattr(func, attr, None)
        if type(value) is str or (attr == "__doc__" and value is None):
            setattr(wrapper, attr, value)
    wrapper.__wrapped__ = func  # type: ignore[attr-defined]
    return ADOPTION.vet(wrapper)


def _is_union(cls: Any) -> bool:
    return type(cls) is types.UnionType or typing.get_origin(cls) is typing.Union


def _dispatchable(cls: Any) -> bool:
    """A class, or a union of classes, as singledispatch's ``register`` takes them."""
    if _is_union(cls):
        return all(isinstance(arg, type) for arg in typing.get_args(cls))
    return isinstance(cls, type)


class JSONEncoder:  # the name json gives it
    """``json.JSONEncoder``, always json's Python encoder, which holds what it encodes in its
    own variables (the C one borrows them while it calls the snippet's code: see
    :func:`dumps`). It is no subclass of json's class, so no ``super()`` reaches that class's
    ``iterencode`` and its C path; json's own methods do the work, called on this object."""

    item_separator = ", "
    key_separator = ": "

    def __init__(
        self,
        *,
        skipkeys: Any = False,
        ensure_ascii: Any = True,
        check_circular: Any = True,
        allow_nan: Any = True,
        sort_keys: Any = False,
        indent: Any = None,
        separators: Any = None,
        default: Any = None,
    ) -> None:
        _REAL_ENCODER.__init__(
            self,  # type: ignore[arg-type]
            skipkeys=skipkeys,
            ensure_ascii=ensure_ascii,
            check_circular=check_circular,
            allow_nan=allow_nan,
            sort_keys=sort_keys,
            indent=indent,
            separators=separators,
            default=default,
        )

    def default(self, o: Any) -> Any:
        return _REAL_ENCODER.default(self, o)  # type: ignore[arg-type]

    def encode(self, o: Any) -> str:
        return _REAL_ENCODER.encode(self, o)  # type: ignore[arg-type]

    def iterencode(self, o: Any, _one_shot: bool = False) -> Any:
        return _REAL_ENCODER.iterencode(self, o, _one_shot=False)  # type: ignore[arg-type]


JSONEncoder.__module__ = "json.encoder"  # where CPython defines it
_REAL_ENCODER = json.JSONEncoder


def dumps(obj: Any, *, cls: Any = None, default: Any = None, **options: Any) -> str:
    """``json.dumps``. CPython 3.11's C encoder keeps borrowed pointers into the containers it
    walks while it calls the snippet's code (a ``list`` subclass's ``__iter__``, a ``dict``
    subclass's ``items``, the ``default`` function), which can free them. Without ``default``
    it gets a private copy read back through ``marshal`` (which calls nothing of the
    snippet's), when marshal can make one; anything else, and what the copy cannot encode
    (so the error is CPython's, naming the snippet's class), goes to json's Python encoder
    (:class:`JSONEncoder`, or the snippet's subclass of it)."""
    if cls in (None, JSONEncoder) and default is None:
        copied, copy = exact_copy(obj)
        if copied:
            try:
                return json.dumps(copy, **options)
            except TypeError:
                pass
    encoder: Any = JSONEncoder if cls is None else cls  # json types cls as its own class
    return json.dumps(obj, cls=encoder, default=default, **options)


def exact_text(value: Any, what: str) -> Any:
    """``value`` as exact ``str`` or ``bytes``, or a TypeError naming ``what``: the standard
    library keys caches shared by the worker on what it is given (re's compiled patterns,
    struct's formats, strptime's regexes) and hands its own tables to the text's methods
    (``translate``), where a subclass's ``__hash__``, ``__eq__`` and methods, or an object
    answering ``str`` for its ``__class__``, would answer for every later caller."""
    kind = type(value)
    if kind is str or kind is bytes:
        return value
    if issubclass(kind, str):  # never isinstance: a __class__ could answer it
        return str.__str__(value)
    if issubclass(kind, bytes):
        return bytes.__getitem__(value, slice(None))
    raise TypeError(f"{what} must be a str or bytes object, not {kind.__name__}")


def exact_int(value: Any, what: str) -> Any:
    """``value`` as an exact ``int`` (a member of an enum from outside, such as ``re.I | re.M``,
    as it is: enum's own methods hash and compare it), or a TypeError naming ``what``."""
    kind = type(value)
    if kind is int:
        return value
    outside_enum = issubclass(type(kind), enum.EnumType) and not ADOPTION.owns(value)
    if outside_enum and issubclass(kind, int):
        return value
    if issubclass(kind, int):
        return int.__int__(value)
    raise TypeError(f"{what} must be an int, not {kind.__name__}")


_real_escape = re.escape


def _escape(pattern: Any) -> Any:
    """``re.escape`` of exact text: it hands re's own translation table to the pattern's
    ``translate``, which a ``str`` subclass could keep and change for every later caller."""
    return _real_escape(exact_text(pattern, "re.escape()'s pattern"))


_real_compile = re._compile  # type: ignore[attr-defined]
_real_compile_repl = re._compile_repl  # type: ignore[attr-defined]


def _re_compile(pattern: Any, flags: Any) -> Any:
    """What every function of re compiles through, on exact text and flags (its cache)."""
    if type(pattern) is not re.Pattern:
        pattern = exact_text(pattern, "a pattern")
    return _real_compile(pattern, exact_int(flags, "flags"))


def _re_compile_repl(repl: Any, pattern: Any) -> Any:
    """What ``sub`` and ``subn`` parse a replacement template with, on exact text (cached)."""
    return _real_compile_repl(exact_text(repl, "a replacement"), pattern)


_real_strptime = _strptime._strptime


def _exact_strptime(data_string: Any, format: Any = "%a %b %d %H:%M:%S %Y") -> Any:
    """``time.strptime`` and ``datetime.strptime``'s parser, on exact text (its regex cache)."""
    return _real_strptime(
        exact_text(data_string, "strptime() argument 1"),
        exact_text(format, "strptime() argument 2"),
    )


def _struct_functions() -> dict[tuple[str, str], Any]:
    """struct's functions, given an exact format (struct caches what it compiles by it)."""

    def pack(format: Any, /, *values: Any) -> bytes:
        return struct.pack(exact_text(format, "Struct() argument 1"), *values)

    def unpack(format: Any, buffer: Any, /) -> tuple[Any, ...]:
        return struct.unpack(exact_text(format, "Struct() argument 1"), buffer)

    def calcsize(format: Any, /) -> int:
        return struct.calcsize(exact_text(format, "Struct() argument 1"))

    def iter_unpack(format: Any, buffer: Any, /) -> Any:
        return struct.iter_unpack(exact_text(format, "Struct() argument 1"), buffer)

    def pack_into(format: Any, buffer: Any, offset: Any, /, *values: Any) -> None:
        struct.pack_into(exact_text(format, "Struct() argument 1"), buffer, offset, *values)

    def unpack_from(format: Any, /, buffer: Any, offset: Any = 0) -> tuple[Any, ...]:
        return struct.unpack_from(exact_text(format, "Struct() argument 1"), buffer, offset)

    made = (pack, unpack, calcsize, iter_unpack, pack_into, unpack_from)
    for function in made:
        function.__doc__ = getattr(struct, function.__name__).__doc__
    return {("struct", function.__name__): function for function in made}


def _forward_ref_init(
    self: Any, arg: Any, is_argument: bool = True, module: Any = None, *, is_class: bool = False
) -> None:
    """``typing.ForwardRef.__init__`` without the code object: CPython compiles the text for
    ``get_type_hints`` to evaluate later, and the sandbox refuses both ``compile`` and
    ``eval``; the text is still parsed (an ``ast`` tree, never code), so a forward reference
    that is not an expression is refused as CPython words it. ``List["Node"]`` in a
    dataclass field works."""
    if not isinstance(arg, str):
        raise TypeError(f"Forward reference must be a string -- got {arg!r}")
    text = str.__str__(arg)
    try:
        with _audit.trusted():  # parsing runs no code of the snippet's
            body = parse(f"({text},)[0]" if text[0] == "*" else text).body
    except SyntaxError:
        body = []
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        raise SyntaxError(f"Forward reference must be an expression -- got {arg!r}")
    self.__forward_arg__ = text
    self.__forward_code__ = None
    self.__forward_evaluated__ = False
    self.__forward_value__ = None
    self.__forward_is_argument__ = is_argument
    self.__forward_is_class__ = is_class
    self.__forward_module__ = module


_real_munge = textwrap.TextWrapper._munge_whitespace


def _munge_whitespace(self: Any, text: Any) -> Any:
    """``TextWrapper``'s first step, on exact text: it hands the class's translation table,
    shared by every wrapper in the worker, to the text's ``translate``."""
    return _real_munge(self, exact_text(text, "the text to wrap"))


_real_flag_missing = vars(enum.Flag)["_missing_"].__func__


def _flag_missing(cls: Any, value: Any) -> Any:
    """``Flag._missing_`` of an exact int: it keeps the value in the class's member map, and
    ``re.I | n`` hands it whatever an int subclass's ``__ror__`` answered (a snippet's object
    in ``RegexFlag``'s map, shared by the worker)."""
    if isinstance(value, int) and type(value) is not int:
        value = int.__int__(value)
    return _real_flag_missing(cls, value)


def patch_stdlib() -> None:
    """In the process that builds the facades (the zygote, whose workers run snippets; never
    the host): dataclasses' ``exec`` trusted, typing's and enum's frame walks gone, the
    wrapper a context decorator makes vetted, fractions made of exact numbers only,
    ``re.escape``, ``TextWrapper``, re's and strptime's caches of exact text, flags kept as
    exact ints, the Python
    ``OrderedDict`` and the checked ``deque`` in
    ``typing``, forward references never compiled."""
    dataclasses._create_fn = _trusted_create_fn  # type: ignore[attr-defined]
    typing._caller = _caller  # type: ignore[attr-defined]
    typing.ForwardRef.__init__ = _forward_ref_init  # type: ignore[method-assign]
    enum.EnumType._create_ = _enum_create  # type: ignore[attr-defined]
    contextlib.ContextDecorator.__call__ = _decorator_call  # type: ignore[method-assign]
    fractions.Fraction.__new__ = staticmethod(_fraction_new)  # type: ignore[method-assign]
    re.escape = _escape
    re._compile = _re_compile  # type: ignore[attr-defined]
    re._compile_repl = _re_compile_repl  # type: ignore[attr-defined]
    _strptime._strptime = _exact_strptime
    textwrap.TextWrapper._munge_whitespace = _munge_whitespace  # type: ignore[method-assign]
    enum.Flag._missing_ = classmethod(_flag_missing)  # type: ignore[assignment]
    random._accumulate = accumulate  # type: ignore[attr-defined]  # random.choices' own
    csv.reader = csv_reader  # DictReader reads it from the module
    collections._count_elements = _count_elements  # type: ignore[attr-defined]
    typing.OrderedDict = typing._alias(ORDERED_DICT, 2, name="OrderedDict")  # type: ignore[attr-defined]
    setattr(typing, "Deque", typing._alias(Deque, 1, name="Deque"))  # type: ignore[attr-defined]  # noqa: B010


def _identifier(name: object, what: str) -> str:
    if type(name) is not str or not name.isidentifier() or keyword.iskeyword(name):
        raise TypeError(f"{what} must be identifiers, not {name!r}")
    if name.startswith("__") and name.endswith("__"):
        raise TypeError(f"{what} cannot be special names such as {name!r}")
    if name in DENIED_ATTRIBUTES:  # tb_frame, f_back, gi_frame...
        raise TypeError(f"{what} cannot be the interpreter's internal names such as {name!r}")
    if len(name) > MAX_NAME:  # dataclasses' generated methods name each field
        raise TypeError(f"{what}: {long_name(name)}")
    return name


def _adopted_dataclass(cls: type) -> type:
    ADOPTION.adopt(cls)
    fields = types.MappingProxyType(vars(cls)[_FIELDS])  # fields(), asdict() and replace() read
    type.__setattr__(cls, _FIELDS, fields)  # it; a snippet can no longer add to it
    _MADE[cls] = fields
    for value in vars(cls).values():
        chain = [value, getattr(value, "__func__", value)]
        while isinstance(
            vars(chain[-1]).get("__wrapped__") if hasattr(chain[-1], "__dict__") else None,
            types.FunctionType,
        ):
            chain.append(vars(chain[-1])["__wrapped__"])  # __repr__: recursive_repr, checked
        inner = chain[-1]
        if isinstance(inner, types.FunctionType) and inner.__code__.co_filename == "<string>":
            for made in chain:  # dataclasses' exec, and the wrappers around it
                ADOPTION.vet(made)
    return cls


_FIELDS = "__dataclass_fields__"


def _inherited_fields(bases: tuple[type, ...]) -> set[str]:
    """The field names dataclasses will take from ``bases``: each base that has fields has
    them from a dataclass the facade made, and each is a checked, unaltered ``Field``."""
    names: set[str] = set()
    for base in bases:
        for klass in base.__mro__:
            if _FIELDS not in vars(klass):
                continue
            if klass not in _MADE:
                raise TypeError(
                    f"dataclass(): the base {klass.__name__} has dataclass fields that "
                    "dataclasses.dataclass did not make; decorate the base class instead"
                )
            fields = vars(klass)[_FIELDS]
            if fields is not _MADE[klass]:
                raise TypeError(f"dataclass(): the fields of {klass.__name__} were replaced")
            for key, field in fields.items():
                name = _identifier(key, "dataclass field names")
                if type(field) is not dataclasses.Field or field.name != name:
                    raise TypeError(
                        f"dataclass(): the field {name!r} of {klass.__name__} was altered"
                    )
                names.add(name)
    return names


def _own_fields(cls: type) -> set[str]:
    annotations = vars(cls).get("__annotations__", {})
    if type(annotations) is not dict:
        raise TypeError("dataclass(): a class's __annotations__ must be a plain dict")
    names = {_identifier(name, "dataclass field names") for name in annotations}
    for name in names:
        _check_default("dataclass()", name, vars(cls).get(name))
    return names


_PLAIN_DESCRIPTORS = (types.FunctionType, types.BuiltinFunctionType, classmethod, staticmethod)


def _check_default(where: str, name: str, default: Any) -> None:
    """A field's default as dataclasses will read it: a ``Field`` is an exact one whose
    default factory is the snippet's or one :func:`field` checked (dataclasses' generated
    ``__init__`` calls it natively and hands its result on raw); no other descriptor, since
    dataclasses reads the default through its ``__get__``, which could return such a
    ``Field`` past this check."""
    if isinstance(default, dataclasses.Field):
        if type(default) is not dataclasses.Field:
            raise TypeError(f"{where}: the default of {name!r} is not a dataclasses.field()")
        factory = default.default_factory
        if factory is not dataclasses.MISSING and not (
            ADOPTION.makes_own(factory) or ADOPTION.vetted(factory)
        ):
            raise TypeError(
                f"{where}: the default_factory of {name!r} was not given through "
                "dataclasses.field(default_factory=...)"
            )
    elif hasattr(type(default), "__get__") and not isinstance(default, _PLAIN_DESCRIPTORS):
        raise TypeError(
            f"{where}: the default of {name!r} is a descriptor ({type(default).__name__}); "
            "give a plain value or dataclasses.field(default_factory=...)"
        )


def _built(fields: set[str], build: Callable[[], type], placeholder: bool) -> type:
    """The dataclass ``build`` makes with ``fields`` the names its methods may use."""
    _BUILDING.append(frozenset(fields))
    try:
        made = build()
    finally:
        _BUILDING.pop()
    if placeholder:
        made.__doc__ = _signature_doc(made)
    return _adopted_dataclass(made)


def _placeholder_doc(cls: type) -> bool:
    """Give a class without a docstring a placeholder, so dataclasses does not make one: it
    would read the class's signature with ``inspect``, which compiles (refused) when the class
    has no ``__init__`` written in Python. :func:`_signature_doc` makes it afterwards."""
    if getattr(cls, "__doc__", None):
        return False
    cls.__doc__ = cls.__name__
    return True


def _signature_doc(cls: type) -> str:
    """The docstring dataclasses gives a class without one: its name and signature."""
    init = getattr(cls, "__init__", None)
    if not isinstance(init, types.FunctionType):
        return f"{cls.__name__}()"
    try:
        signature = inspect.signature(init)
        params = list(signature.parameters.values())[1:]
        text = str(signature.replace(parameters=params)).replace(" -> None", "")
    except (TypeError, ValueError):
        text = ""
    return cls.__name__ + text


def _dataclass_of(cls: Any, options: dict[str, Any]) -> type:
    if not isinstance(cls, type) or not ADOPTION.owns(cls):
        raise TypeError("dataclass() applies to classes the snippet defines")
    if vars(cls).get("__module__") != "__main__":
        raise TypeError("dataclass(): a snippet's class keeps its __module__ ('__main__')")
    fields = _own_fields(cls) | _inherited_fields(cls.__mro__[1:])
    _guards.refuse_outside_state(cls, fields, f"dataclass {cls.__name__}")  # __init__ sets them
    placeholder = _placeholder_doc(cls)
    return _built(fields, lambda: dataclasses.dataclass(cls, **options), placeholder)


def dataclass(cls: Any = None, /, **options: Any) -> Any:
    """dataclasses.dataclass, as a decorator or a decorator factory."""
    if cls is None:
        return ADOPTION.vet(lambda inner: _dataclass_of(inner, options))
    return _dataclass_of(cls, options)


def _field_spec(spec: Any) -> tuple[Any, ...]:
    """One ``make_dataclass`` field as a plain tuple: a name (an exact ``str``), then its type
    and default as given."""
    if type(spec) is str:
        return (_identifier(spec, "dataclass field names"),)
    parts = tuple(spec) if type(spec) in (tuple, list) else None
    if parts is None or len(parts) not in (2, 3):
        raise TypeError(
            f"make_dataclass(): invalid field {spec!r}: give a name, (name, type) or "
            "(name, type, field) as a str, tuple or list"
        )
    name = _identifier(parts[0], "dataclass field names")
    if len(parts) == 3:
        _check_default("make_dataclass()", name, parts[2])
    return (name, *parts[1:])


def make_dataclass(
    cls_name: str, fields: Any, *, bases: Any = (), namespace: Any = None, **options: Any
) -> type:
    """dataclasses.make_dataclass; the class counts as the snippet's own."""
    _identifier(cls_name, "class names")
    specs = [_field_spec(spec) for spec in list(fields)]
    plain = [spec[0] if len(spec) == 1 else spec for spec in specs]
    base_classes = tuple(bases)
    if not all(isinstance(base, type) for base in base_classes):
        raise TypeError("make_dataclass(): bases must be classes")
    maker = _guards.ClassStatement.winner(cls_name, base_classes)  # a vetted metaclass
    given = {} if namespace is None else dict(namespace)
    if not all(type(key) is str for key in given):
        raise TypeError("make_dataclass(): namespace keys must be strings")
    given["__module__"] = "__main__"
    _guards.check_namespace(cls_name, given)  # as a class statement's body is checked
    placeholder = not given.get("__doc__")
    if placeholder:
        given["__doc__"] = cls_name
    names = {spec[0] for spec in specs} | _inherited_fields(base_classes)
    for base in base_classes:  # __init__ sets the fields, the class holds the namespace
        _guards.refuse_outside_state(base, [*names, *given], f"class {cls_name}")

    def build() -> type:
        made: type = dataclasses.make_dataclass(
            cls_name, plain, bases=base_classes, namespace=given, **options
        )
        fresh = type(made) is maker and made.__bases__ == (base_classes or (object,))
        if not fresh or ADOPTION.owns(made) or made in _MADE:
            raise TypeError("make_dataclass(): the bases' metaclass did not make a new class")
        return made

    return _built(names, build, placeholder)


def contextmanager(func: Callable[..., Any]) -> Any:
    """contextlib.contextmanager."""
    return ADOPTION.vet(contextlib.contextmanager(func))


def asynccontextmanager(func: Callable[..., Any]) -> Any:
    """contextlib.asynccontextmanager."""
    return ADOPTION.vet(contextlib.asynccontextmanager(func))


class attrgetter:  # the name operator gives it
    """operator.attrgetter, resolving each step with the snippet's getattr."""

    __slots__ = ("_paths",)

    def __init__(self, attr: str, /, *attrs: str) -> None:
        paths = []
        for name in (attr, *attrs):
            if type(name) is not str:
                raise TypeError("attribute name must be a string")
            paths.append(tuple(name.split(".")))
        self._paths = tuple(paths)

    def _resolve(self, obj: Any, path: tuple[str, ...]) -> Any:
        for name in path:
            obj = ADOPTION.getattr(obj, name)
        return obj

    def __call__(self, obj: Any, /) -> Any:
        if len(self._paths) == 1:
            return self._resolve(obj, self._paths[0])
        return tuple(self._resolve(obj, path) for path in self._paths)

    def __repr__(self) -> str:
        return f"operator.attrgetter({', '.join(repr('.'.join(p)) for p in self._paths)})"


class itemgetter:
    """operator.itemgetter, through the snippet's item guard."""

    __slots__ = ("_items",)

    def __init__(self, item: Any, /, *items: Any) -> None:
        self._items = (item, *items)

    def __call__(self, obj: Any, /) -> Any:
        if len(self._items) == 1:
            return ADOPTION.getitem(obj, self._items[0])
        return tuple(ADOPTION.getitem(obj, item) for item in self._items)

    def __repr__(self) -> str:
        return f"operator.itemgetter({', '.join(map(repr, self._items))})"


class methodcaller:
    """operator.methodcaller: the method is found with the snippet's getattr and called with
    its call guard (C code, a property's getter or ``sorted``'s key, keeps what it returns
    where no guard of the snippet's sees it)."""

    __slots__ = ("_args", "_kwargs", "_name")

    def __init__(self, name: str, /, *args: Any, **kwargs: Any) -> None:
        if type(name) is not str:
            raise TypeError("method name must be a string")
        self._name, self._args, self._kwargs = name, args, kwargs

    def __call__(self, obj: Any, /) -> Any:  # as the snippet's obj.name(...): its result checked
        return ADOPTION.call(ADOPTION.getattr(obj, self._name), *self._args, **self._kwargs)

    def __repr__(self) -> str:
        return f"operator.methodcaller({self._name!r}, ...)"


GUARDED_MAKERS = (attrgetter, itemgetter, methodcaller)
"""Classes of the sandbox's own whose instances snippets hold."""


def _zone_files() -> dict[str, bytes]:
    """The bytes of every zone the system has, read now: a locked worker opens no files."""
    files = {}
    for key in sorted(zoneinfo.available_timezones()):
        for root in zoneinfo.TZPATH:
            with contextlib.suppress(OSError, ValueError):
                with open(os.path.join(root, key), "rb") as f:
                    files[key] = f.read()
                break
    return files


class ZoneInfo(zoneinfo.ZoneInfo):
    """``zoneinfo.ZoneInfo`` for snippets: ``ZoneInfo(key)`` answers from the zone files read
    when the facades were built (a locked worker opens no files), each parsed on first use and
    kept, so the same key gives the same object; ``isinstance(z, zoneinfo.ZoneInfo)`` holds.
    Its loaders that read files (``no_cache``) meet the audit hook and the kernel."""

    _files: ClassVar[dict[str, bytes]] = {}
    _zones: ClassVar[dict[str, zoneinfo.ZoneInfo]] = {}

    def __new__(cls, key: str) -> ZoneInfo:
        found = ZoneInfo._zones.get(key) if type(key) is str else None
        if found is not None:
            return found  # type: ignore[return-value]
        data = ZoneInfo._files.get(key) if type(key) is str else None
        if data is None:
            raise zoneinfo.ZoneInfoNotFoundError(f"No time zone found with key {key}")
        # always this class's own (a snippet's subclass never fills the shared cache)
        zone = ZoneInfo._zones[key] = ZoneInfo.from_file(io.BytesIO(data), key=key)
        return zone

    def __repr__(self) -> str:
        return f"zoneinfo.ZoneInfo(key={self.key!r})"

    @staticmethod
    def available() -> set[str]:
        return set(ZoneInfo._files)


ZoneInfo.__module__ = "zoneinfo"


def _own_target(value: Any) -> bool:
    """``value`` is the snippet's own function or class, or a classmethod, staticmethod or
    property made of its functions."""
    inner = _values.wrapped(value)
    if inner is not None:
        return _own_target(inner)
    if type(value) is property:
        parts = [read(value) for read in PROPERTY_PARTS]
        return all(part is None or ADOPTION.owns(part) for part in parts)
    return bool(ADOPTION.owns(value))


def _marking(module: str, real: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A decorator that marks what it is given by setting attributes on it (``typing.final``
    sets ``__final__``, ``total_ordering`` the missing comparisons): the snippet's own
    functions and classes only, never an object from outside."""

    def marking(arg: Any, /) -> Any:
        if not _own_target(arg):
            raise TypeError(
                f"{module}.{real.__name__}() marks the function or class it decorates by "
                f"setting attributes on it: give it one the snippet defines, not a "
                f"{type(arg).__name__} from outside"
            )
        return real(arg)

    marking.__name__ = marking.__qualname__ = real.__name__
    marking.__doc__, marking.__module__ = real.__doc__, module
    return marking


def no_type_check(arg: Any, /) -> Any:
    """typing.no_type_check: marks the snippet's function, or its class and the functions
    and classes the class defines (never what it inherits from outside)."""
    if not _own_target(arg):
        raise TypeError(
            "typing.no_type_check() marks the function or class it decorates by setting "
            f"attributes on it: give it one the snippet defines, not a {type(arg).__name__} "
            "from outside"
        )
    pending, seen = [arg], set()
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        inner = _values.wrapped(item)
        if inner is not None:
            item = inner
        if isinstance(item, type):
            pending.extend(v for v in vars(item).values() if _own_target(v))
        if isinstance(item, types.FunctionType | type) and ADOPTION.owns(item):
            with contextlib.suppress(TypeError, AttributeError):
                item.__no_type_check__ = True  # type: ignore[union-attr]
    return arg


def update_wrapper(
    wrapper: Any,
    wrapped: Any,
    assigned: Any = functools.WRAPPER_ASSIGNMENTS,
    updated: Any = functools.WRAPPER_UPDATES,
) -> Any:
    """functools.update_wrapper, onto the snippet's own function: ``wrapped``'s name, doc,
    module, annotations and ``__dict__`` are copied onto it, of a function from outside only
    its name, module and doc (what its ``__dict__`` holds was never checked), and
    ``__wrapped__`` names it. Only the standard attribute lists are taken: another name would
    copy what it names natively (``__code__``)."""
    if not _own_target(wrapper):
        raise TypeError(
            "functools.update_wrapper() sets attributes on the wrapper: give it a function "
            f"the snippet defines, not a {type(wrapper).__name__} from outside"
        )
    if assigned != functools.WRAPPER_ASSIGNMENTS or updated != functools.WRAPPER_UPDATES:
        raise TypeError("functools.update_wrapper(): only the standard assigned and updated")
    own = _own_target(wrapped)
    for attr in functools.WRAPPER_ASSIGNMENTS:
        try:
            value = getattr(wrapped, attr)
        except AttributeError:
            continue
        if own:
            setattr(wrapper, attr, dict(value) if type(value) is dict else value)
        elif type(value) is str or value is None:  # a name and a doc, nothing it holds
            setattr(wrapper, attr, value)
    held = getattr(wrapped, "__dict__", {}) if own else {}
    if type(held) is dict:  # copied by exact names: a str subclass's hash and == could lie
        exact = {str.__str__(k): v for k, v in held.items() if isinstance(k, str)}
        _guards.refuse_outside_state(type(wrapper), exact)  # what it copies, it sets
        vars(wrapper).update(exact)
    wrapper.__wrapped__ = wrapped
    return wrapper


def wraps(
    wrapped: Any,
    assigned: Any = functools.WRAPPER_ASSIGNMENTS,
    updated: Any = functools.WRAPPER_UPDATES,
) -> Any:
    """functools.wraps: a decorator that :func:`update_wrapper` s what it decorates."""

    def decorating(wrapper: Any) -> Any:
        return update_wrapper(wrapper, wrapped, assigned, updated)

    decorating.__qualname__ = "wraps.<locals>.decorating"  # CPython's is a partial
    decorating.__module__ = "functools"
    return ADOPTION.vet(decorating)


def vetted_makers() -> dict[tuple[str, str], Any]:
    """The members above, by module and name (for the facades: patches the stdlib first)."""
    patch_stdlib()
    ZoneInfo._files = _zone_files()

    def available_timezones() -> set[str]:
        """zoneinfo.available_timezones()."""
        return ZoneInfo.available()

    def field(*, default_factory: Any = dataclasses.MISSING, **options: Any) -> Any:
        """dataclasses.field; what a default factory from outside makes is checked."""
        if default_factory is not dataclasses.MISSING:
            options["default_factory"] = ADOPTION.vet(ADOPTION.checked(default_factory))
        return dataclasses.field(**options)

    def replace(obj: Any, /, **changes: Any) -> Any:
        """dataclasses.replace, of a dataclass the facade made (its fields read natively)."""
        if type(obj) not in _MADE:
            raise TypeError("replace() should be called on dataclass instances")
        return dataclasses.replace(obj, **changes)

    def asdict(obj: Any, *, dict_factory: Any = dict) -> Any:
        """dataclasses.asdict; what a factory from outside makes is checked."""
        return dataclasses.asdict(obj, dict_factory=ADOPTION.checked(dict_factory))

    def astuple(obj: Any, *, tuple_factory: Any = tuple) -> Any:
        """dataclasses.astuple; what a factory from outside makes is checked."""
        return dataclasses.astuple(obj, tuple_factory=ADOPTION.checked(tuple_factory))

    return {
        ("dataclasses", "replace"): replace,
        ("dataclasses", "asdict"): asdict,
        ("dataclasses", "astuple"): astuple,
        ("dataclasses", "field"): field,
        ("dataclasses", "dataclass"): dataclass,
        ("dataclasses", "make_dataclass"): make_dataclass,
        ("contextlib", "contextmanager"): contextmanager,
        ("contextlib", "asynccontextmanager"): asynccontextmanager,
        ("operator", "attrgetter"): attrgetter,
        ("operator", "itemgetter"): itemgetter,
        ("operator", "methodcaller"): methodcaller,
        ("zoneinfo", "ZoneInfo"): ZoneInfo,
        ("zoneinfo", "available_timezones"): available_timezones,
        ("hashlib", "algorithms_available"): frozenset(hashlib.algorithms_available),
        ("collections", "OrderedDict"): ORDERED_DICT,
        ("collections", "deque"): Deque,
        ("functools", "wraps"): wraps,
        ("struct", "Struct"): Struct,
        **_struct_functions(),
        ("csv", "Sniffer"): Sniffer,
        ("csv", "reader"): csv_reader,
        ("functools", "update_wrapper"): update_wrapper,
        ("functools", "cached_property"): cached_property,
        ("itertools", "groupby"): groupby,
        ("itertools", "count"): count,
        ("itertools", "accumulate"): accumulate,
        ("itertools", "chain"): chain,
        ("itertools", "cycle"): cycle,
        ("itertools", "islice"): islice,
        ("itertools", "pairwise"): pairwise,
        ("itertools", "zip_longest"): zip_longest,
        ("json", "dumps"): dumps,
        ("json", "JSONEncoder"): JSONEncoder,
        ("functools", "singledispatch"): singledispatch,
        ("typing", "final"): _marking("typing", typing.final),
        ("typing", "runtime_checkable"): _marking("typing", typing.runtime_checkable),
        ("typing", "no_type_check"): no_type_check,
        ("abc", "abstractmethod"): _marking("abc", abc.abstractmethod),
        ("functools", "total_ordering"): _marking("functools", functools.total_ordering),
    }
