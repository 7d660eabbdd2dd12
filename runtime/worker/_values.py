"""The language layer's invariant, checked on values rather than names.

A snippet only ever holds:

- plain data (``str``, ``bytes``, numbers, ``None``, lists, tuples, dicts, sets...) and the
  iterators, views and records the standard library builds from it;
- functions, lambdas, generators and classes the snippet defined, and their instances;
- vetted facades and their vetted members, provider namespaces and provider functions;
- the allowed builtins;
- instances of the classes of the vetted modules (``Counter``, ``datetime``, ``Pattern``...);
- exceptions (their attributes are checked again when read).

Anything else is refused where it would enter: a module, frame, code object, traceback or
cell; a function, builtin or method from outside the snippet; a descriptor or an unbound method
of a builtin type (beyond a vetted few such as ``str.lower``); an event loop, future or task; a
class the snippet did not define and was not given. :class:`Admission` makes that decision for
every value that comes out of an attribute, an item, a call, an iteration step or an exception,
and caches it per type where the type alone decides.
"""

from __future__ import annotations

import abc
import asyncio
import collections
import collections.abc
import enum
import gc
import re
import struct
import types
import typing
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from contract import MODULES
from runtime.worker._channel import ReadOnly
from runtime.worker._errors import PolicyError
from runtime.worker._formatting import Formats
from runtime.worker._policy import FILENAME
from runtime.worker._repairs import REPAIRED

PLAIN: frozenset[type] = frozenset(
    {str, int, float, bool, type(None), bytes, list, dict, tuple, set, frozenset, complex}
)
"""Types whose values need no further look (their items were admitted on the way in)."""

FORMAT_METHODS = frozenset({"format", "format_map"})

_PLAIN_CLASSES: frozenset[type] = frozenset(
    {str, bytes, bytearray, int, float, complex, bool, list, tuple, dict, set, frozenset}
)
"""Builtin types whose public unbound methods (``str.lower``, ``dict.get``) snippets may hold."""
_READABLE_CLASSES: frozenset[type] = frozenset(
    {type(None), type(Ellipsis), type(NotImplemented)}
    | {getattr(collections.abc, name) for name in collections.abc.__all__}
)
"""Classes a snippet may hold besides the facades' own: the singletons' types, and the
abstract collections ``typing``'s aliases stand for (what ``typing.get_origin`` gives)."""

_REFUSED: dict[type, str] = {
    types.ModuleType: "a module",
    types.FrameType: "a frame",
    types.CodeType: "a code object",
    types.TracebackType: "a traceback",
    types.CellType: "a closure cell",
    types.MappingProxyType: "a class namespace",
    types.GetSetDescriptorType: "a descriptor",
    types.MemberDescriptorType: "a descriptor",
    types.ClassMethodDescriptorType: "a descriptor",
    asyncio.Future: "a future",
    asyncio.Task: "a task",
    asyncio.Handle: "an event loop callback",
    asyncio.TimerHandle: "an event loop callback",
}
for _loop_type in (asyncio.AbstractEventLoop, asyncio.BaseEventLoop):
    _REFUSED[_loop_type] = "an event loop"

RECORD_VIEWS: weakref.WeakKeyDictionary[type, types.MappingProxyType[str, Any]] = (
    weakref.WeakKeyDictionary()
)
"""Read-only views the sandbox gave a snippet's classes (a dataclass's
``__dataclass_fields__``): their items are the snippet's, unlike a class namespace's."""


def record_view(obj: Any, value: Any) -> bool:
    """Whether ``value``, read from ``obj``, is one of :data:`RECORD_VIEWS` of ``obj`` or of a
    class it derives from."""
    kind = obj if isinstance(obj, type) else type(obj)
    return any(RECORD_VIEWS.get(klass) is value for klass in type.__dict__["__mro__"].__get__(kind))


_BUILTIN_INSTANCES = frozenset(
    {
        "bytearray",
        "range",
        "slice",
        "ellipsis",
        "NotImplementedType",
        "object",
        "super",
        "property",
        "staticmethod",
        "classmethod",
        "enumerate",
        "zip",
        "map",
        "filter",
        "reversed",
        "generator",
        "coroutine",
        "async_generator",
        "callable_iterator",
        "list_iterator",
        "list_reverseiterator",
        "tuple_iterator",
        "set_iterator",
        "str_ascii_iterator",
        "str_iterator",
        "bytes_iterator",
        "bytearray_iterator",
        "range_iterator",
        "longrange_iterator",
        "iterator",
        "dict_keys",
        "dict_values",
        "dict_items",
        "dict_keyiterator",
        "dict_valueiterator",
        "dict_itemiterator",
        "dict_reversekeyiterator",
        "dict_reversevalueiterator",
        "dict_reverseitemiterator",
        "odict_keys",
        "odict_values",
        "odict_items",
        "odict_iterator",
        "memoryview",
    }
)
VETTED_METACLASSES: list[type] = [
    type,
    abc.ABCMeta,
    enum.EnumType,
    typing._ProtocolMeta,
    typing._TypedDictMeta,  # type: ignore[attr-defined]
]
"""The metaclasses a snippet's class may get from its bases: ``type``, and those of ``abc``,
``enum`` and typing's protocols and typed dicts, and the sandbox's own (see
:func:`admit_metaclass`), and the only ones a ``metaclass=`` keyword may name."""


def vetted_metaclass(meta: object) -> bool:
    """Whether ``meta`` is one of :data:`VETTED_METACLASSES`, told by identity: a class made
    natively by a metaclass of the snippet's (``functools.partial(type, "M", (type,))`` as a
    ``key``) answers ``hash`` and ``==`` however that metaclass says, so a table keyed by
    classes (this module's per-type decisions) would take it for another."""
    return any(meta is vetted for vetted in VETTED_METACLASSES)


def _vetted_make(kind: type) -> bool:
    """Whether ``kind`` was made by ``type`` or a vetted metaclass (told by identity)."""
    meta = type(kind)
    return meta is type or vetted_metaclass(meta)


def admit_metaclass(meta: type) -> None:
    """Let a class statement's bases give it ``meta``, a metaclass the sandbox defines (the
    facade's ``typing.NamedTuple``)."""
    if not vetted_metaclass(meta):
        VETTED_METACLASSES.append(meta)


_TYPE_FORMS = (types.GenericAlias, types.UnionType)
_TYPING_ALIAS: type = typing._BaseGenericAlias  # type: ignore[attr-defined]
_ALIAS_ORIGINS = (
    type,
    typing.TypeVar,
    typing.ParamSpec,
    typing.TypeVarTuple,
    typing._SpecialForm,
    _TYPING_ALIAS,
    types.GenericAlias,
    types.UnionType,
)
"""What a typing alias may stand for: a class, a type variable, a typing form (``NewType``
is none: calling an alias of one calls it, which hands its argument back)."""
"""``list[int]`` and ``int | None``: annotations a snippet writes."""
"""Builtin types (besides the plain ones) whose instances a snippet makes in ordinary code."""

_VETTED_MODULES = frozenset(
    {
        *(name for name in MODULES if name != "asyncio"),  # its facade is rebuilt: no loop types
        "json.decoder",
        "json.encoder",
        "_json",
        "_sre",
        "re._parser",
        "_functools",
        "_collections",
        "_datetime",
        "_decimal",
        "_random",
        "_hashlib",
        "_blake2",
        "_sha1",
        "_sha256",
        "_sha512",
        "_sha3",
        "_md5",
        "numbers",
        "collections.abc",  # the views a mapping's keys(), items() and values() give
        "time",
        "_io",
        "_csv",
        "_struct",
        "_operator",
        "_contextvars",
    }
)
"""The contract's modules and the C modules behind them, whose classes' instances snippets
may hold
(``time`` for the ``struct_time`` that ``datetime.timetuple()`` returns)."""

SAFE_SLOTS: frozenset[str] = frozenset(
    {
        *(
            f"__{op}__"
            for op in [
                "init",
                "new",
                "repr",
                "str",
                "format",
                "hash",
                "bool",
                "len",
                "iter",
                "next",
                "reversed",
                "contains",
                "getitem",
                "setitem",
                "delitem",
                "missing",
                "eq",
                "ne",
                "lt",
                "le",
                "gt",
                "ge",
                "neg",
                "pos",
                "abs",
                "invert",
                "round",
                "trunc",
                "floor",
                "ceil",
                "int",
                "float",
                "complex",
                "index",
                "enter",
                "exit",
                "aenter",
                "aexit",
                "aiter",
                "anext",
                "call",
                "setattr",
                "delattr",
                "getattribute",
                "getattr",
                "init_subclass",
                "class_getitem",
                "set_name",
                "copy",
                "deepcopy",
                "post_init",
                "get",
                "set",
                "delete",
                "divmod",
                "rdivmod",
                "length_hint",
                "bytes",
            ]
        ),
        *(
            f"__{prefix}{op}__"
            for op in [
                "add",
                "sub",
                "mul",
                "matmul",
                "truediv",
                "floordiv",
                "mod",
                "pow",
                "lshift",
                "rshift",
                "and",
                "or",
                "xor",
            ]
            for prefix in ("", "r", "i")
        ),
    }
)
"""Special methods a snippet may read on any admitted object (``super().__init__``,
``object.__setattr__``, ``dict.__getitem__``...) and define on its own classes. Those that
write or read attributes are handed out guarded (see :class:`Admission`)."""

_BUILTIN_METHOD: type = type(re.compile("").search)
"""``builtin_method``: a C method defined with its class (``Pattern.search``,
``array.extend``), a subclass of ``builtin_function_or_method``."""
_MAKERS = frozenset({"__new__", "__call__", "__init__", "__prepare__"})
_NEEDS_INIT = (staticmethod, classmethod)
"""Builtin types whose objects CPython uses without checking ``__init__`` ran."""

STANDS_FOR_SNIPPET: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""Functions of the sandbox that a snippet's class holds in place of the snippet's own (its
checked ``__new__``), each with the snippet's function: they count as the snippet's."""

SAFE_DUNDERS: frozenset[str] = SAFE_SLOTS | {
    "__name__",
    "__qualname__",
    "__module__",
    "__doc__",
    "__class__",
    "__mro__",
    "__bases__",
    "__base__",
    "__dict__",
    "__annotations__",
    "__match_args__",
    "__slots__",
    "__members__",
    "__wrapped__",
    "__args__",
    "__origin__",
    "__parameters__",
    "__defaults__",
    "__kwdefaults__",
    "__cause__",
    "__context__",
    "__suppress_context__",
    "__notes__",
    "__func__",
    "__dataclass_fields__",
    "__dataclass_params__",
}
"""Dunder attributes readable on any admitted object; what they give is checked deeply."""

SLOT_GUARDED = frozenset({"__setattr__", "__delattr__", "__getattribute__", "__getattr__"})
"""Special methods that read or write any attribute by a name given at run time: a snippet
holds one of a class from outside only behind the checks of ``obj.name`` (typing's aliases
answer ``__getattr__`` with any attribute of what they stand for, private ones too)."""


def function_str(func: Any) -> str:
    """How CPython names a callable in its call errors: ``f()``, ``__main__.f()``."""
    try:
        qualname = func.__qualname__
    except Exception:
        return str(func)
    module = getattr(func, "__module__", None)
    if isinstance(module, str) and module != "builtins":
        return f"{module}.{qualname}()"
    return f"{qualname}()"


STATIC_METHODS = (str.maketrans, bytes.maketrans, bytearray.maketrans)
"""Static methods of the plain types: builtins with no object bound, admitted by identity."""


def _async_generator_awaitables() -> tuple[type, ...]:
    async def agen() -> Any:
        yield None

    gen = agen()
    asend, athrow = gen.asend(None), gen.athrow(GeneratorExit)
    kinds = (type(asend), type(athrow))
    asend.close()
    athrow.close()
    return kinds


ASYNC_STEPS = _async_generator_awaitables()
"""What ``agen.asend()``, ``athrow()`` and ``aclose()`` return: iterating one steps the
generator and yields whatever it waits on (the event loop's futures)."""


def _step_coroutine(kind: type) -> Callable[[Any], Any]:
    async def awaiting(step: Any) -> Any:
        """An async generator's step, as a coroutine: awaitable, and nothing more."""
        return await step

    name = kind.__name__  # what the coroutine's repr shows: async_generator_asend
    awaiting.__code__ = awaiting.__code__.replace(co_name=name, co_qualname=name)
    awaiting.__name__ = awaiting.__qualname__ = name
    return awaiting


_STEP_COROUTINES = {kind: _step_coroutine(kind) for kind in ASYNC_STEPS}


def _awaiting(step: Any) -> Any:
    return _STEP_COROUTINES[type(step)](step)


class AsyncStepMethod:
    """``agen.asend``, ``athrow`` or ``aclose`` held as a value (``f = agen.asend``, or passed
    to ``map``): calling it gives the step as a coroutine, whoever makes the call."""

    __slots__ = ("_method",)

    def __init__(self, method: Callable[..., Any]) -> None:
        self._method = method

    def __call__(self, *args: Any) -> Any:
        return _awaiting(self._method(*args))

    def __repr__(self) -> str:
        return repr(self._method)  # <built-in method asend of async_generator object at ...>


AsyncStepMethod.__module__ = "builtins"  # as the bound method it stands for


_ASYNC_STEP_METHODS = frozenset({"asend", "athrow", "aclose"})


class GuardedSlot(ReadOnly):
    """``object.__setattr__``, ``x.__delattr__``, ``Namespace.__setattr__``... as a snippet
    holds them: calling one runs the guard first; the real one stays out of reach (a
    ``functools.partial`` would hand it out as ``.args[0]``)."""

    __slots__ = ("_guard", "_original")
    _guard: Callable[..., Any]
    _original: Any

    def __init__(self, guard: Callable[..., Any], original: Any) -> None:
        object.__setattr__(self, "_guard", guard)
        object.__setattr__(self, "_original", original)

    def __call__(self, *args: Any) -> Any:
        return self._guard(self._original, *args)

    def __repr__(self) -> str:
        return f"<slot wrapper {self._original.__name__!r} (guarded)>"


def _writable_records() -> frozenset[type]:
    import array
    import csv
    import decimal
    import difflib
    import io
    import random
    import statistics
    import textwrap

    signals: type = type(decimal.Context().traps)  # ctx.traps[decimal.Inexact] = True
    return frozenset(
        {decimal.Context, signals, textwrap.TextWrapper, difflib.SequenceMatcher}
        | {difflib.Differ, random.Random, io.StringIO, io.BytesIO, statistics.NormalDist}
        | {csv.DictReader, csv.DictWriter, csv.Sniffer, collections.Counter}
        | {collections.OrderedDict, collections.defaultdict, collections.deque}
        | {collections.ChainMap, array.array}
    )


WRITABLE_RECORDS = _writable_records()
"""The classes of the vetted modules whose instances a snippet writes (``ctx.prec = 3``,
``wrapper.width = 40``, ``counter['a'] += 1``): public attributes and items only. Every other
object from outside is read-only: shared singletons (an enum member, a typing alias that
forwards writes to whatever it wraps, a cached zone) and records whose module trusts their
state (a dataclass ``Field``, whose name becomes source text; an ``ExitStack``, whose
callbacks run on exit; a generator context manager)."""


def writable_record(cls: type) -> type:
    """Add ``cls``, a record class the sandbox makes for snippets (the Python
    ``OrderedDict``), to :data:`WRITABLE_RECORDS`."""
    global WRITABLE_RECORDS
    WRITABLE_RECORDS = WRITABLE_RECORDS | {cls}
    return cls


def is_writable_record(obj: Any) -> bool:
    """An instance of :data:`WRITABLE_RECORDS`, or of the facade's own subclass of one
    (``collections.defaultdict``)."""
    kind = type(obj)
    if kind in WRITABLE_RECORDS:
        return True
    return (
        kind.__module__ in _VETTED_MODULES
        and born(kind)
        and not isinstance(obj, type)
        and any(base in WRITABLE_RECORDS for base in kind.__mro__)
    )


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not in C
_BORN: dict[int, type] = {}


def note_born() -> None:
    """Remember every class made by Python code that this process holds now, before any
    snippet has run (the vetted modules', the sandbox's): the first admission of a process
    does, once. A class made later, natively (``type(...)`` run by C code for the snippet, a
    class statement inside the standard library's code), takes its ``__module__`` from
    whichever module's code was running, so that name proves nothing."""
    if not _BORN:
        made = (obj for obj in gc.get_objects() if issubclass(type(obj), type))
        _BORN.update({id(cls): cls for cls in made if cls.__flags__ & _HEAPTYPE})


def born(kind: type) -> bool:
    """``kind`` is defined in C, or existed before any snippet ran (see :func:`note_born`)."""
    return not kind.__flags__ & _HEAPTYPE or _BORN.get(id(kind)) is kind


_STATIC_FUNC: Callable[[Any], Any] = vars(staticmethod)["__func__"].__get__
_CLASS_FUNC: Callable[[Any], Any] = vars(classmethod)["__func__"].__get__


def wrapped(value: Any) -> Any:
    """What ``value``, a ``staticmethod`` or ``classmethod`` (exactly), wraps, read through the
    type's own member; None for anything else. Never ``value.__func__``: an object's own
    ``__getattribute__`` could answer that with a snippet function while CPython calls the
    callable it holds (a subclass's did, and operators ran ``type`` natively)."""
    kind = type(value)
    if kind is staticmethod:
        return _STATIC_FUNC(value)
    if kind is classmethod:
        return _CLASS_FUNC(value)
    return None


def instance_dict(obj: Any) -> dict[str, Any]:
    """``obj``'s own ``__dict__`` as CPython keeps it (through the descriptor CPython gives
    the first class of its MRO that has one), never what a class attribute named ``__dict__``
    answers; empty where there is none."""
    for klass in type(obj).__mro__:
        descriptor = vars(klass).get("__dict__")
        if descriptor is None:
            continue
        if type(descriptor) is types.GetSetDescriptorType and descriptor.__name__ == "__dict__":
            held = descriptor.__get__(obj)
            if type(held) is dict:
                return held
        break
    return {}


def _refuse(what: str, found: str, hint: str = "") -> PolicyError:
    tail = f"; {hint}" if hint else ""
    return PolicyError(
        f"{what} is {found} from outside the snippet, and values from outside stay there{tail}"
    )


def _name(value: Any) -> str:
    for attribute in ("__qualname__", "__name__"):
        try:
            found = object.__getattribute__(value, attribute)
        except AttributeError:
            continue
        if isinstance(found, str):
            return found
    return type(value).__name__


class Admission:
    """Decides whether a value may enter a snippet; one per worker.

    ``vetted`` are the objects handed to the snippet on purpose (its builtins, every facade
    member); ``own_types`` the runtime's own classes a snippet may hold instances of (facades,
    provider proxies); ``defined`` tells whether a class is one of the snippet's own."""

    def __init__(
        self,
        vetted: Iterable[object],
        own_types: Iterable[type],
        defined: Callable[[type], bool],
    ) -> None:
        note_born()  # before any snippet of this process has made a class
        self._keep = [*vetted, *STATIC_METHODS, *REPAIRED]  # keeps ids stable for the worker's life
        self._vetted = {id(v) for v in self._keep}
        self._own_types = frozenset(own_types)
        self._defined = defined
        self.slot_guard: Callable[..., Any] | None = None
        """Calls ``object.__setattr__``, ``__delattr__`` or ``__getattribute__`` (given first)
        through the guards: a snippet holds them only as ``partial(slot_guard, original)``,
        since the real ones skip the guards."""
        self.formats: Formats | None = None
        """Where the guarded ``str.format`` comes from; a real one is never admitted."""
        self._by_type: dict[type, Callable[[Any, str], Any] | None] = {}
        self.free: set[type] = {*PLAIN, types.TracebackType}
        """The types whose values a snippet's parameters take as they are (the rewritten code
        looks a parameter's type up here before it asks :meth:`admit`)."""

    def vet(self, value: object) -> object:
        """Add ``value`` to what the snippet may hold (results of vetted factories)."""
        if id(value) not in self._vetted:
            self._keep.append(value)
            self._vetted.add(id(value))
        return value

    def is_vetted(self, value: object) -> bool:
        return id(value) in self._vetted

    def vetted_classes(self) -> list[type]:
        """The classes among what the snippet may hold."""
        return [value for value in self._keep if isinstance(value, type)]

    def admit(self, value: Any, what: str) -> Any:
        """``value`` if a snippet may hold it; else raise PolicyError naming ``what``."""
        kind = type(value)
        if not _vetted_make(kind):  # before any lookup by class
            raise _refuse(what, "an object of a class made by a metaclass")
        if kind in PLAIN:
            return value
        check = self._check_of(kind)
        return value if check is None else check(value, what)

    def by_type_alone(self, kind: type) -> bool:
        """Whether ``admit`` passes every value of ``kind`` as it is, by its type alone."""
        return _vetted_make(kind) and (kind in PLAIN or self._check_of(kind) is None)

    def _check_of(self, kind: type) -> Callable[[Any, str], Any] | None:
        """The check ``kind``'s values take (None: none), decided once per class."""
        try:
            return self._by_type[kind]
        except KeyError:
            pass
        check = self._by_type[kind] = self._classify(kind)
        if check is None:
            self.free.add(kind)
        return check

    def admit_deep(self, value: Any, what: str, budget: int = 100_000) -> Any:
        """Like ``admit``, and the items of containers too (for what exceptions carry)."""
        first = self.admit(value, what)  # the value itself may be handed out as a stand-in
        pending = [value]
        while pending:
            item = pending.pop()
            if item is not value and self.admit(item, what) is not item:
                raise PolicyError(f"{what} holds {_name(item)}, which a snippet gets only alone")
            pending.extend(_contents(item))
            budget -= 1
            if budget < 0:
                raise PolicyError(f"{what} holds too many objects to check; use str() of it")
        return first

    # -- per-type decisions --------------------------------------------------------------

    def _classify(self, kind: type) -> Callable[[Any, str], Any] | None:
        """None when the type alone admits its values, else the check to run per value."""
        for refused, found in _REFUSED.items():
            if issubclass(kind, refused):
                return self._refuser(found)
        specials: dict[type, Callable[[Any, str], Any]] = {
            types.FunctionType: self._function,
            types.BuiltinFunctionType: self._builtin,
            _BUILTIN_METHOD: self._builtin,  # a C method that takes its class (Pattern.search)
            types.MethodType: self._method,
            types.MethodDescriptorType: self._unbound,
            types.WrapperDescriptorType: self._slot_wrapper,
            types.MethodWrapperType: self._bound_slot,
            **dict.fromkeys(ASYNC_STEPS, self._async_step),
        }
        special = specials.get(kind)
        if special is not None:
            return special
        if issubclass(kind, type):
            return self._class
        if kind in _TYPE_FORMS:
            return None
        if issubclass(kind, _TYPING_ALIAS):
            return self._alias
        if (
            kind is AsyncStepMethod
            or kind is GuardedSlot
            or kind in self._own_types
            or issubclass(kind, BaseException)
        ):
            return None
        if self._defined(kind):
            return None
        if not born(kind) and not self.is_vetted(kind):
            return self._foreign  # made natively while snippets ran: its module's name says nothing
        module = getattr(kind, "__module__", "")
        if module == "builtins":
            return None if kind.__name__ in _BUILTIN_INSTANCES else self._foreign
        if module in _VETTED_MODULES:
            return None  # the vetted modules' records: Counter, datetime, Match...
        return self._foreign

    def _alias(self, value: Any, what: str) -> Any:
        """A typing alias stands for a class, a type variable or another typing form: it
        answers attribute reads with its origin's, and calling it calls the origin and writes
        ``__orig_class__`` onto what it made, so one that stood for a function or an object
        from outside (``Annotated[json.loads, 0]``) would read and write them natively."""
        origin = instance_dict(value).get("__origin__")
        if isinstance(origin, _ALIAS_ORIGINS):
            return value
        raise PolicyError(
            f"{what} is a typing alias of {_name(origin)}: an alias stands for a class or a "
            "typing form (annotate with classes)"
        )

    def _async_step(self, value: Any, what: str) -> Any:
        return _awaiting(value)

    def _refuser(self, found: str) -> Callable[[Any, str], Any]:
        def refuse(value: Any, what: str) -> Any:
            raise _refuse(what, found)

        return refuse

    def _foreign(self, value: Any, what: str) -> Any:
        if self.is_vetted(value):
            return value
        kind = type(value)
        raise _refuse(what, f"a {kind.__module__}.{kind.__qualname__} object")

    def _function(self, value: types.FunctionType, what: str) -> Any:
        if value.__code__.co_filename == FILENAME or self.is_vetted(value):
            return value
        if value in STANDS_FOR_SNIPPET:
            return value
        raise _refuse(what, f"the function {_name(value)}")

    def _builtin(self, value: types.BuiltinFunctionType, what: str) -> Any:
        if self.is_vetted(value):
            return value
        bound = value.__self__
        if bound is None or isinstance(bound, types.ModuleType):
            raise _refuse(what, f"the builtin {_name(value)}")
        if value.__name__ == "__new__" and any(bound is kind for kind in _NEEDS_INIT):
            # staticmethod.__new__(staticmethod)() calls the NULL it holds: a crash
            raise _refuse(what, f"{_name(value)}, which makes one never initialised")
        if isinstance(bound, type) and issubclass(bound, type) and value.__name__ in _MAKERS:
            # type.__new__(type, name, bases, ns) makes a class past the class statement
            raise _refuse(what, f"{_name(value)}, which makes classes natively")
        if isinstance(bound, str) and value.__name__ in FORMAT_METHODS:
            if self.formats is None:
                raise _refuse(what, f"the real str.{value.__name__}")
            return self.formats.bound(bound, value.__name__)
        if value.__name__.startswith("_") and value.__name__ in SLOT_GUARDED:
            raise _refuse(what, f"the special method {_name(value)}")
        if value.__name__.startswith("_") and value.__name__ not in SAFE_SLOTS:
            raise _refuse(what, f"the special method {_name(value)}")
        if type(bound) is types.AsyncGeneratorType and value.__name__ in _ASYNC_STEP_METHODS:
            return AsyncStepMethod(value)
        self.admit(bound, what)
        return value

    def _slot_wrapper(self, value: Any, what: str) -> Any:
        """An unbound special method of a builtin class (``object.__init__``,
        ``Exception.__init__``, ``dict.__setitem__``)."""
        owner, name = value.__objclass__, value.__name__
        plain = owner in _PLAIN_CLASSES or owner is object or issubclass(owner, BaseException)
        if not plain or name not in SAFE_SLOTS:
            raise _refuse(what, f"the slot wrapper {_name(value)}")
        return self._slot_guarded(value, what)

    def _bound_slot(self, value: Any, what: str) -> Any:
        """A special method bound to an object (``super().__init__``, ``x.__eq__``)."""
        name = value.__name__
        if name == "__init__" and isinstance(value.__self__, struct.Struct):
            # the real Struct.__init__ again (super(Facade, s).__init__): a use after free
            raise _refuse(what, "the real struct.Struct.__init__, which runs only once")
        if name not in SAFE_SLOTS:
            raise _refuse(what, f"the special method {_name(value)}")
        bound = value.__self__
        self.admit(bound, what)
        return self._slot_guarded(value, what)

    def _slot_guarded(self, value: Any, what: str) -> Any:
        if value.__name__ not in SLOT_GUARDED:
            return value
        if self.slot_guard is None:
            raise _refuse(what, f"the special method {_name(value)}")
        return GuardedSlot(self.slot_guard, value)

    def _method(self, value: types.MethodType, what: str) -> Any:
        """A bound method: its object must be admissible, and the function must be the
        snippet's, vetted, or a real method of that object's class (not one bound to it)."""
        if self.is_vetted(value):
            return value
        bound, function = value.__self__, value.__func__
        self.admit(bound, what)
        code = getattr(function, "__code__", None)
        if (code is not None and code.co_filename == FILENAME) or self.is_vetted(function):
            return value
        if type(function) is types.FunctionType and function in STANDS_FOR_SNIPPET:
            return value
        owner = bound if isinstance(bound, type) else type(bound)
        name = getattr(function, "__name__", "")
        if type(name) is not str or (name.startswith("_") and name not in SAFE_SLOTS):
            # a private method of a class from outside (ForwardRef._evaluate is an eval)
            raise _refuse(what, f"the private method {_name(function)} of a {owner.__name__}")
        if name in ("__init__", "__new__") and not self._defined(owner):
            # json.__init__(...) would re-make a facade, tools.__init__(...) a namespace
            raise _refuse(what, f"{_name(function)} bound to a {owner.__name__}")
        for klass in owner.__mro__:
            found = klass.__dict__.get(name)
            if found is function or getattr(found, "__func__", None) is function:
                # a class of the runtime's own writing its slots (Namespace.__setattr__)
                return self._slot_guarded(value, what)
        raise _refuse(what, f"the function {_name(function)} bound to a {owner.__name__}")

    def _unbound(self, value: Any, what: str) -> Any:
        if self.is_vetted(value):
            return value
        owner = getattr(value, "__objclass__", None)
        name = getattr(value, "__name__", "")
        if owner is str and name in FORMAT_METHODS and self.formats is not None:
            return self.formats.unbound[name]
        if owner in _PLAIN_CLASSES and not name.startswith("_") and name not in FORMAT_METHODS:
            return value
        if owner in _PLAIN_CLASSES and name in SAFE_SLOTS:
            return value
        raise _refuse(
            what,
            f"the unbound method {_name(value)} of a builtin type",
            "call it on a value instead, e.g. lambda s: s.lower()",
        )

    def _class(self, value: type, what: str) -> Any:
        if value in _PLAIN_CLASSES or value is object or self.is_vetted(value):
            return value
        if value in _READABLE_CLASSES:  # type(None), typing.get_origin(typing.Mapping[k, v])
            return value
        if self._defined(value):
            return value
        if issubclass(value, BaseException) and value.__module__ in {"builtins", *_VETTED_MODULES}:
            return value
        if value.__module__.startswith("runtime."):  # never name the sandbox's modules
            raise _refuse(what, f"the class {value.__qualname__}")
        raise _refuse(what, f"the class {value.__module__}.{value.__qualname__}")


_SEQUENCES = (list, tuple, set, frozenset, collections.deque)


def _contents(item: Any) -> list[Any]:
    """The items of a container (its subclasses too: a deque, an OrderedDict, a snippet's
    list), read with the base type's own C iteration, so no override hides one."""
    if isinstance(item, dict):
        return [*dict.keys(item), *dict.values(item)]
    for base in _SEQUENCES:
        if isinstance(item, base):
            iterate: Callable[[Any], Iterable[Any]] = base.__iter__
            return list(iterate(item))
    return []
