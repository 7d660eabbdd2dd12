"""Run-time guards that the rewritten snippet calls (see :mod:`runtime.worker._policy`).

The transformer turns ``a.b`` into ``_getattr_(a, "b")``, ``a.b(x)`` into
``_callattr_(a, "b", x)``, ``f(x)`` into ``_call_(f, x)`` (unless ``f`` is a builtin or a
function of the snippet, whose results are the snippet's own), ``a[k]`` into
``_getitem_(a, k)``, ``a.b = v`` into ``_write_(a).b = v``, iteration into ``_getiter_(x)``,
and ``await x`` into ``_admit_(await x)``. Each hook refuses private names and interpreter
internals by name, then passes whatever comes back through :class:`Admission`: the value
decides, whatever route produced it. Attributes of exceptions are checked deeply, since an
exception raised inside the runtime may carry what it was working on.

Writes are allowed on plain containers, on instances of classes the snippet defined and on
instances of the vetted modules' classes (``decimal.Context().prec = 3``), never on classes,
facades or provider proxies.
"""

from __future__ import annotations

import _io
import array
import collections
import dis
import enum
import functools
import itertools
import json
import operator
import re
import types
import weakref
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from runtime.worker._channel import ReadOnly
from runtime.worker._errors import PolicyError
from runtime.worker._formatting import Formats
from runtime.worker._overrides import LEAVES as _LEAVES
from runtime.worker._overrides import MRO as _MRO
from runtime.worker._overrides import NAMESPACE as _NAMESPACE
from runtime.worker._overrides import (
    check_override_write,
    check_statement_overrides,
    own_accessors,
    own_function,
    shadowing_names,
    written,
)
from runtime.worker._policy import (
    CLASS_HOOKS,
    DENIED_ATTRIBUTES,
    FILENAME,
    MAX_NAME,
    METACLASS_KEYWORD,
    REFUSED_DUNDERS,
    WRITE_REFUSED,
    long_name,
)
from runtime.worker._repairs import REPAIRED_METHODS, exact_item, settled, subclasses
from runtime.worker._values import (
    ASYNC_STEPS,
    PLAIN,
    SAFE_DUNDERS,
    STANDS_FOR_SNIPPET,
    Admission,
    born,
    function_str,
    instance_dict,
    is_writable_record,
    record_view,
    vetted_metaclass,
    wrapped,
)

# Driving a coroutine by hand would surface the futures it waits on.
_COROUTINE_DRIVERS = frozenset({"send", "throw"})


_DRIVABLE = (types.CoroutineType, *ASYNC_STEPS)

FAST_ITERABLES: frozenset[type] = frozenset(
    {
        list,
        tuple,
        str,
        bytes,
        bytearray,
        dict,
        set,
        frozenset,
        range,
        enumerate,
        zip,
        filter,
        reversed,
        type(iter([])),
        type(iter(())),
        type(iter("")),
        type(iter(b"")),
        type(iter(range(1))),
        type(iter({})),
        type(iter(set())),
        type(reversed([])),
        type({}.keys()),
        type({}.values()),
        type({}.items()),
    }
)
"""Iterables whose items need no check: plain containers (their items were admitted when they
went in) and the iterators the guarded builtins make over guarded iterators."""

_CONTAINERS: frozenset[type] = frozenset({list, tuple, set, frozenset, dict, bytes, bytearray})
_FLAT = (tuple, list)
_NEVER_HOLDERS: frozenset[type] = frozenset(
    {types.ModuleType, types.FrameType, types.CodeType, types.TracebackType}
)
"""Objects no attribute is ever read from, should one get in despite the value checks."""


def _deny(what: str, why: str) -> PolicyError:
    return PolicyError(f"{what} is not allowed: {why}")


def check_name(name: object) -> str:
    """The attribute name, if a snippet may use it."""
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if name.startswith("_"):
        raise _deny(f"attribute {name!r}", "names starting with '_' are private")
    if name in DENIED_ATTRIBUTES:
        raise _deny(f"attribute {name!r}", "it exposes interpreter internals")
    return name


_RUNNING: list[SnippetClasses] = []
"""The running execution's classes (a worker runs one execution at a time)."""


class SnippetClasses:
    """Remembers the classes a snippet defines; only their instances accept attribute writes."""

    def __init__(self) -> None:
        self._ids: set[int] = set()
        self._keep: list[type] = []
        self.vetted: Callable[[Any], bool] = lambda value: False
        """Whether a value was handed to the snippet on purpose (the admission's)."""
        self.metaclass = ClassStatement(self)
        """What every ``class`` statement of the snippet calls (as its ``metaclass``)."""
        _RUNNING[:] = [self]

    def adopt(self, cls: type) -> type:
        """Count ``cls`` as the snippet's own (for classes a vetted factory made for it), its
        annotations made and a type version given (see :func:`_repairs.settled`)."""
        if id(cls) not in self._ids:
            self._ids.add(id(cls))
            self._keep.append(cls)
            settled(cls)
        return cls

    def defined(self, cls: type) -> bool:
        """``cls`` itself went through a ``class`` statement's checks (or a vetted factory):
        a subclass of the snippet's class made natively (``type.__new__``, a metaclass called
        in C) is not the snippet's, whatever its bases."""
        return cls is not object and id(cls) in self._ids

    def owns_instance(self, obj: Any) -> bool:
        return self.defined(type(obj))

    def known(self, cls: type) -> bool:
        """``cls`` may be a base of the snippet's class: it is the snippet's, it existed before
        any snippet ran, or a facade made it for the snippet (csv's sniffed dialect); never a
        class made natively while the snippet ran, whose ``__module__`` says nothing."""
        return self.defined(cls) or born(cls) or self.vetted(cls)

    def owns(self, obj: Any) -> bool:
        """``obj`` is the snippet's own: an instance of one of its classes, one of its classes,
        or one of its functions (or a method of one bound to its object)."""
        kind = type(obj)
        if kind is types.FunctionType:
            return bool(obj.__code__.co_filename == FILENAME) or obj in STANDS_FOR_SNIPPET
        if kind is types.MethodType:
            return self.owns(obj.__func__)
        if isinstance(obj, type):
            return self.defined(obj)
        return self.defined(kind)

    def makes_own(self, func: Any) -> bool:
        """What calling ``func`` returns is the snippet's own: ``func`` is one of its functions
        (or a method of one), one of its classes, or an instance of one of its classes whose
        ``__call__`` is the snippet's function. An instance of the snippet's class deriving
        from a callable from outside (a ``staticmethod``, a class setting ``__call__ =
        type``) is the snippet's, but calling it runs code from outside natively: what that
        returns is checked like any result from outside."""
        kind = type(func)
        if kind is types.FunctionType or kind is types.MethodType or isinstance(func, type):
            return self.owns(func)
        if not self.defined(kind):
            return False
        call = next((vars(k)["__call__"] for k in kind.__mro__ if "__call__" in vars(k)), None)
        return type(call) is types.FunctionType and self.owns(call)


FINAL_CLASSES: set[type] = {super, staticmethod, classmethod, types.GenericAlias}
"""The sandbox's classes a snippet's class may not derive from (see :func:`final_class`), and:
``super`` (a subclass's ``super().__init__(...)`` runs CPython's again on a ``super`` in use,
which frees the object it lends a descriptor while the descriptor runs); ``staticmethod``
and ``classmethod`` (a subclass answered ``__func__`` with a snippet function while CPython
called the callable it held: ``type``, natively, for an operator); ``types.GenericAlias``
(its instances forward every attribute read to their origin, any object)."""


def final_class(cls: type) -> type:
    """Make ``cls`` final to snippets, as CPython's ``bool`` is to everyone: a class statement,
    ``type()`` or a maker with it among its bases' classes gets CPython's TypeError."""
    FINAL_CLASSES.add(cls)
    return cls


_ADOPT_KEY = " adopt"
"""Where a class statement's namespace holds its :class:`_AdoptOnCreation` (no name can
spell it, so the class body never reads it)."""


class _AdoptOnCreation:
    """The first entry of a class statement's namespace: Python calls its ``__set_name__``
    as soon as the class object exists, before anything else in the body (enum makes its
    members there, with ``object.__new__(cls)`` in the snippet's ``__new__``), so the class
    counts as the snippet's own from then on; it then leaves the class."""

    __slots__ = ("_classes",)

    def __init__(self, classes: SnippetClasses) -> None:
        self._classes: SnippetClasses | None = classes

    def __get__(self, obj: Any, owner: Any = None) -> Any:  # a descriptor: no enum member
        raise AttributeError(_ADOPT_KEY)

    def __set_name__(self, owner: type, name: str) -> None:
        classes = self._classes
        if classes is not None and name == _ADOPT_KEY and vars(owner).get(name) is self:
            self.close(owner)
            classes.adopt(owner)

    def close(self, made: Any) -> None:
        """Never adopt again, and leave ``made`` (a class that copied its namespace without
        calling ``__set_name__``, as namedtuple's does, keeps the entry otherwise)."""
        self._classes = None
        if isinstance(made, type) and vars(made).get(_ADOPT_KEY) is self:
            type.__delattr__(made, _ADOPT_KEY)


class ClassStatement:
    """The ``metaclass`` of every class statement in a snippet: the class is made by its
    bases' own metaclass (prepared namespace included, as ``enum`` needs), if that is one of
    the vetted metaclasses, and counts as the snippet's own."""

    def __init__(self, classes: SnippetClasses) -> None:
        self._classes = classes

    @staticmethod
    def winner(name: str, bases: tuple[Any, ...], winner: type = type) -> type:
        """The metaclass that makes class ``name`` from ``bases`` (and ``winner``, a
        metaclass called directly), if it is one of the vetted metaclasses."""
        for base in bases:
            if not isinstance(base, type):
                raise _deny(f"class {name} with base {base!r}", "bases must be classes")
            final = next((k for k in _MRO(base) if k in FINAL_CLASSES), None)
            if final is not None:
                raise TypeError(
                    f"type '{final.__module__}.{final.__name__}' is not an acceptable base type"
                )
            known = _RUNNING[-1].known if _RUNNING else born
            native = next((k for k in _MRO(base) if not known(k)), None)
            if native is not None:
                raise _deny(
                    f"class {name} deriving from {native.__name__}",
                    "that class was made natively, not by a class statement of the snippet's",
                )
            if issubclass(base, type):
                raise _deny(f"class {name} deriving from type", "metaclasses are refused")
            meta = type(base)
            if issubclass(meta, winner):
                winner = meta
            elif not issubclass(winner, meta):
                raise TypeError(
                    "metaclass conflict: the metaclass of a derived class must be a (non-strict) "
                    "subclass of the metaclasses of all its bases"
                )
        if not vetted_metaclass(winner):
            raise _deny(f"class {name} made by {winner.__name__}", "metaclasses are refused")
        return winner

    def __prepare__(self, name: str, bases: tuple[Any, ...], **kwargs: Any) -> Any:
        winner = self.winner(name, bases, _named(name, kwargs.pop(METACLASS_KEYWORD, type)))
        _public_keywords(name, kwargs)
        namespace = {} if winner is type else winner.__prepare__(name, bases, **kwargs)
        namespace[_ADOPT_KEY] = _AdoptOnCreation(self._classes)
        return namespace

    def __call__(
        self, name: str, bases: tuple[Any, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> type:
        meta = _named(name, kwargs.pop(METACLASS_KEYWORD, type))
        return self.made_by(meta, name, bases, namespace, **kwargs)

    def made_by(
        self, meta: type, name: str, bases: tuple[Any, ...], namespace: Any, **kwargs: Any
    ) -> type:
        """The class ``meta(name, bases, namespace)`` makes (``type(...)``, ``abc.ABCMeta(...)``
        called by the snippet), made as a class statement makes it."""
        if type(bases) is not tuple or not isinstance(namespace, dict):
            raise TypeError(f"{meta.__name__}() takes a name, a tuple of bases and a dict")
        _public_keywords(name, kwargs)
        winner = self.winner(name, bases, meta)
        adopter = namespace.get(_ADOPT_KEY)
        if type(adopter) is not _AdoptOnCreation:  # type(...): not prepared by __prepare__
            adopter = _AdoptOnCreation(self._classes)
            namespace = {_ADOPT_KEY: adopter, **namespace}
        check_namespace(name, namespace)
        check_finalized(name, bases, namespace)
        check_class_state(name, bases, namespace, self._classes.defined)
        check_statement_overrides(name, bases, namespace, self._classes.defined)
        try:
            made: type = winner(name, bases, namespace, **kwargs)
        finally:
            adopter.close(None)
        written(made, namespace)
        adopter.close(made)
        return self._classes.adopt(made)


def _public_keywords(name: str, keywords: dict[str, Any]) -> None:
    """A class statement's keywords (those ``__init_subclass__`` takes) are public names: one
    starting with ``_`` is a private switch of a class from outside (enum's ``_simple`` skips
    making the class's own member maps, so it writes into its base's; typing's ``_root``)."""
    private = sorted(key for key in keywords if key.startswith("_"))
    if private:
        raise _deny(
            f"class {name}'s keyword {private[0]}=",
            "class keywords starting with _ switch the internals of a class from outside",
        )


def _named(name: str, meta: Any) -> type:
    """The ``metaclass=`` of class statement ``name``: one of the vetted metaclasses
    (``type``, ``abc.ABCMeta``, ``enum.EnumType``, or one a vetted base has), told by identity:
    a snippet's object could answer ``==`` and ``hash`` as one."""
    if vetted_metaclass(meta):
        return meta  # type: ignore[no-any-return]
    shown = getattr(meta, "__name__", None) if isinstance(meta, type) else None
    raise _deny(
        f"class {name} with metaclass={shown or type(meta).__name__}",
        "a class statement's metaclass is type, abc.ABCMeta or enum.EnumType",
    )


_DATA_DUNDERS = frozenset(
    {"__doc__", "__module__", "__qualname__", "__slots__", "__match_args__", "__annotations__"}
)
_CPYTHONS_OWN = {
    "__dict__": "CPython gives each instance its own __dict__, which the sandbox reads as such",
    "__slotnames__": "copy reads the names it lists from each object natively",
}
"""Class attributes CPython or the standard library set and trust: a snippet's value would
answer in their place (``__dict__ = {...}`` in a class body hid an instance's real dict from
the admission; ``__slotnames__`` had copy read any attribute natively)."""


_CHECKED_NEW = STANDS_FOR_SNIPPET
"""The ``__new__`` of each snippet class as the class holds it, with the snippet's own
function it checks."""
_NEW_ATOMS = frozenset({int, float, complex, str, bytes, bool, type(None)})
"""What a ``__new__`` may return besides an instance of its class: values without attributes."""


def snippet_new(value: Any) -> bool:
    """``value`` is a snippet class's ``__new__`` (as the class holds it, checked)."""
    inner = wrapped(value)
    if inner is not None:
        value = inner
    return type(value) is types.FunctionType and value in _CHECKED_NEW


def _checked_new(new: Any) -> Any:
    """The snippet's ``__new__`` as its class holds it: what it returns is an instance of the
    class it was asked for, or a value without attributes. Python hands a ``__new__``'s result
    on natively (enum names its members by setting attributes on them, copy writes state into
    it), so a result from outside (``return json``) is refused here."""

    def __new__(cls: Any, /, *args: Any, **kwargs: Any) -> Any:
        made = new(cls, *args, **kwargs)
        kind = type(made)
        if any(base is cls for base in _MRO(kind)):
            return made
        if kind in _NEW_ATOMS:
            # an atom only where it is laid out as the C type the class derives from: C code
            # that calls type(self)(...) writes that type's fields into what it got (a
            # datetime subclass answering bytes had astimezone() Py_DECREF a pointer it read
            # from the bytes' text: a decrement of any address, gh-145166's kin)
            native = _native_base(cls)
            if native is object or any(base is native for base in _MRO(kind)):
                return made
            raise TypeError(
                f"{new.__qualname__}() returned a {kind.__name__}, not a {cls.__name__}: a "
                f"class deriving from {native.__name__} makes objects laid out as one (C code "
                "writes its fields into what __new__ returns)"
            )
        if _RUNNING and _RUNNING[-1].owns_instance(made):
            if _native_base(kind) is _native_base(cls) and not _outside_python_base(cls):
                return made
            raise TypeError(
                f"{new.__qualname__}() returned a {kind.__name__}, not a {cls.__name__}: a "
                f"class deriving from {_native_base(cls).__name__} makes objects laid out as "
                "one (C code writes its fields into what __new__ returns)"
            )
        raise TypeError(
            f"{new.__qualname__}() returned a {kind.__name__} from outside the snippet: a "
            "snippet's __new__ returns an instance of its own classes (or a number, string or "
            "None)"
        )

    return _standing_for(__new__, new)


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not in C


def _outside_python_base(cls: type) -> type | None:
    """A class from outside, written in Python, that ``cls`` derives from (``ExitStack``):
    its code writes its own state into what ``type(self)()`` makes (``pop_all``), so a
    ``__new__`` of such a class returns an instance of the class itself."""
    defined = _RUNNING[-1].defined if _RUNNING else (lambda k: False)
    return next((k for k in _MRO(cls)[1:] if k.__flags__ & _HEAPTYPE and not defined(k)), None)


def _native_base(cls: type) -> type:
    """The C type whose layout ``cls``'s instances have (``object`` for a plain class): C code
    that asks a class deriving from a builtin type for an instance (``datetime.astimezone``
    calls ``type(self)(...)``) writes that type's fields at its offsets into whatever
    ``__new__`` returned, so there it must return an object of the same layout, not another
    of the snippet's (a bytearray subclass's buffer pointer sits where a datetime keeps its
    tzinfo)."""
    return next(k for k in _MRO(cls) if not k.__flags__ & _HEAPTYPE)


def _owner_checked(hook: Any, key: str, static: bool = False) -> Any:
    """The snippet's ``__set_name__(self, owner, name)`` or ``__init_subclass__(cls)`` (the
    class attribute ``key``, whatever the function is named) as its class holds it: Python
    calls them with a class while it is being made, before anything checks it, so they run
    only for a class of the snippet's own (a ``class`` statement adopts its class before
    either runs); a class made natively (``type.__new__(...)``, a metaclass called from C)
    never reaches snippet code through them."""
    # where the class is among the arguments (a staticmethod is not given the first one)
    at = (0 if key == "__init_subclass__" else 1) - static

    def checked(*args: Any, **kwargs: Any) -> Any:
        if 0 <= at < len(args):  # too few: the hook's own TypeError says so
            _owned_class(args[at])
        return hook(*args, **kwargs)

    return _standing_for(checked, hook)


def _checked_await(method: Any) -> Any:
    """The snippet's ``__await__`` as its class holds it: what its steps yield passes on only
    if it is ``None`` (a turn of the event loop). The task awaiting it would ask anything else
    whether it is a future (``_asyncio_future_blocking``, ``get_loop()``) inside the loop's own
    callback, where what the snippet raised stops the loop and its errors name the runtime;
    no future of the loop's ever reaches a snippet, so nothing else it yields is one, and
    CPython's task refuses it too ("bad yield")."""

    def __await__(*args: Any, **kwargs: Any) -> Any:
        steps = method(*args, **kwargs)
        if type(steps) is types.CoroutineType:
            steps.close()
            raise TypeError("__await__() returned a coroutine")
        if not hasattr(type(steps), "__next__"):
            raise TypeError(f"__await__() returned non-iterator of type '{type(steps).__name__}'")
        return _turns(steps)

    return _standing_for(__await__, method)


def _turns(steps: Any) -> Generator[None, None, Any]:
    """``yield from steps``, yielding only ``None``: anything else is thrown back in."""
    thrown: BaseException | None = None
    while True:
        throw = None if thrown is None else getattr(steps, "throw", None)
        if thrown is not None and throw is None:
            raise thrown  # as yield from: an iterator without throw() is left
        try:
            yielded = next(steps) if throw is None else throw(thrown)
        except StopIteration as stop:
            return stop.value
        thrown = None
        if yielded is not None:
            thrown = RuntimeError(f"Task got bad yield: {yielded!r}")
            continue
        try:
            yield None
        except GeneratorExit:
            close = getattr(steps, "close", None)
            if close is not None:
                close()
            raise
        except BaseException as exc:  # a cancellation, thrown into the snippet's steps
            thrown = exc


def _standing_for(wrapper: Any, function: Any) -> Any:
    """``wrapper``, named as the snippet's ``function`` and counted as the snippet's own."""
    wrapper.__name__, wrapper.__qualname__ = function.__name__, function.__qualname__
    wrapper.__doc__, wrapper.__module__ = function.__doc__, function.__module__
    _CHECKED_NEW[wrapper] = function
    return wrapper


def _owned_class(cls: Any) -> None:
    if not (_RUNNING and isinstance(cls, type) and _RUNNING[-1].defined(cls)):
        raise _deny(
            "a class made outside a class statement (type.__new__, a metaclass called "
            "directly or from C)",
            "define classes with class statements or type(name, bases, namespace)",
        )


_OWNER_HOOKS = frozenset({"__set_name__", "__init_subclass__"})


def _checking_hook(key: str, value: Any) -> Any:
    """What a class holds for ``key``: the checked ``__new__``, ``__await__``, ``__set_name__``
    or ``__init_subclass__`` for the snippet's own function (or a classmethod or staticmethod
    of one), else ``value``."""
    if key == "__new__":
        wrap: Callable[[Any], Any] = _checked_new
    elif key == "__await__":
        wrap = _checked_await
    elif key in _OWNER_HOOKS:
        wrap = functools.partial(_owner_checked, key=key)
    else:
        return value
    if type(value) is types.FunctionType:
        return value if value in _CHECKED_NEW else wrap(value)
    inner = wrapped(value)
    if type(inner) is types.FunctionType:
        if inner in _CHECKED_NEW:
            return value
        if key in _OWNER_HOOKS:
            wrap = functools.partial(_owner_checked, key=key, static=type(value) is staticmethod)
        return type(value)(wrap(inner))
    return value


def check_class_value(name: str, key: str, value: Any) -> Any:
    """A special method of a snippet's class is a function the snippet defined (or a
    classmethod or staticmethod of one), ``None``, or data: Python calls it natively, so a
    builtin or a function from outside there (``__add__ = type``) would run unchecked, and so
    would whatever a property's getter returns (``__add__ = property(lambda self: type)``).
    Returns what the class holds: the value, or for ``__new__``, ``__set_name__`` and
    ``__init_subclass__`` the checked function."""
    if key == "__del__":  # however it is given: def, an assignment, setattr, type()
        raise _deny(
            f"class {name}'s __del__",
            "a finalizer runs whenever the collector decides, inside the runtime's own work; "
            "use a with block (__enter__/__exit__) instead",
        )
    if key in _CPYTHONS_OWN:
        raise _deny(f"class {name}'s {key}", _CPYTHONS_OWN[key])
    if property in _MRO(type(value)) and not own_accessors(value):
        raise _deny(
            f"class {name}'s property {key}",
            "every read of it calls its getter natively: its getter, setter and deleter must "
            "be functions the snippet defines",
        )
    if not (key.startswith("__") and key.endswith("__")) or key in _DATA_DUNDERS:
        return value
    if value is None or own_function(value):
        return _checking_hook(key, value)
    inner = wrapped(value)  # an exact staticmethod or classmethod: a subclass is final anyway
    if inner is not None:
        if own_function(inner):
            return _checking_hook(key, value)
    elif not callable(value) and not hasattr(type(value), "__get__"):
        return value  # data: a number, a string, a tuple
    raise _deny(
        f"class {name}'s {key} = {type(value).__name__}",
        "a special method must be a function the snippet defines",
    )


class _ClassWrites:
    """``C.attr = value`` on a snippet's own class: the value of a special method is checked
    (:func:`check_class_value`) before it is set."""

    __slots__ = ("_cls",)

    def __init__(self, cls: type) -> None:
        object.__setattr__(self, "_cls", cls)

    def __getattr__(self, name: str) -> Any:  # the read of ``C.count += 1``
        return getattr(object.__getattribute__(self, "_cls"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        cls = object.__getattribute__(self, "_cls")
        check_finalized(cls.__name__, (cls,), (name,))
        if _RUNNING:
            check_class_write(cls, name, _RUNNING[-1].defined)
            check_override_write(cls, name, value, subclasses(cls), _RUNNING[-1].defined)
        setattr(cls, name, check_class_value(cls.__name__, name, value))
        written(cls, [name])

    def __delattr__(self, name: str) -> None:
        cls = object.__getattribute__(self, "_cls")
        if _RUNNING:
            check_class_write(cls, name, _RUNNING[-1].defined)
        delattr(cls, name)


class _PatternClass(type):
    """The metaclass of the stand-in a positional class pattern matches with."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _ORIGINALS[cls])


_ORIGINALS: weakref.WeakKeyDictionary[type, type] = weakref.WeakKeyDictionary()
_STAND_INS: weakref.WeakKeyDictionary[type, tuple[Any, type]] = weakref.WeakKeyDictionary()
_MATCH_SELF = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)
"""The builtins a class pattern matches as the subject itself (``case int(x)``)."""


def match_class(cls: Any, count: int) -> Any:
    """What a ``case cls(p1, p2...)`` pattern matches with, once the first ``count`` names of
    ``cls.__match_args__`` pass :func:`check_name`: the pattern reads them natively from
    whatever its ``isinstance`` accepts. It is a stand-in whose ``isinstance`` is ``cls``'s
    and whose ``__match_args__`` are those checked, so nothing the subject expression or an
    earlier case's guard does (``dataclass(cls)`` in place) changes them under the pattern.
    A typing protocol is refused: its ``isinstance`` can accept any object. What is not a
    class CPython refuses itself."""
    if not isinstance(cls, type):
        return cls
    if getattr(cls, "_is_protocol", False) is True:
        raise _deny(
            f"the class pattern {cls.__name__}(...) with positional sub-patterns",
            "it is a typing protocol, which can match any object; match by attribute names",
        )
    names = getattr(cls, "__match_args__", None)
    if type(names) is tuple:
        for name in names[:count]:
            if type(name) is str and (name.startswith("_") or name in DENIED_ATTRIBUTES):
                raise _deny(
                    f"the class pattern {cls.__name__}(...) reading {name!r}",
                    "a pattern reads it natively, and it is private or internal; "
                    "match the attribute by name in the case's guard instead",
                )
    elif names is not None:
        return cls  # CPython refuses a __match_args__ that is not a tuple
    known = _STAND_INS.get(cls)
    if known is not None and known[0] is names:
        return known[1]
    if names is None:  # the subject itself, for a builtin and its subclasses; else refused
        base = next((b for b in cls.__mro__ if b in _MATCH_SELF), None)
        bases: tuple[type, ...] = () if base is None else (int if base is bool else base,)
        stand_in = _PatternClass(cls.__name__, bases, {"__slots__": ()})
    else:
        stand_in = _PatternClass(cls.__name__, (), {"__match_args__": names})
    _ORIGINALS[stand_in] = cls
    _STAND_INS[cls] = (names, stand_in)
    return stand_in


def check_namespace(name: str, namespace: Any) -> None:
    """A class body defines no ``isinstance`` hook, and its ``__match_args__`` names only
    attributes a snippet may read of any object (a class pattern reads them natively).
    Every name in it, its own and its ``__slots__``, is an exact ``str``: a subclass could
    answer the checks here one way and the interpreter's lookups another."""
    if type(name) is not str:
        raise _deny("a class named by a str subclass", "a class name must be a plain str")
    odd = next((key for key in namespace if type(key) is not str), None)
    if odd is not None:
        raise _deny(
            f"class {name}'s attribute named by a {type(odd).__name__}",
            "attribute names must be plain str",
        )
    if "__slots__" in namespace:
        _check_slots(name, namespace["__slots__"])
    hooks = sorted(CLASS_HOOKS.intersection(namespace.keys()))
    if hooks:
        raise _deny(f"class {name} defining {hooks[0]}", "isinstance hooks are refused")
    held = {key: check_class_value(name, key, value) for key, value in namespace.items()}
    for key, value in held.items():
        if value is not namespace[key]:
            namespace[key] = value
    if "__match_args__" in namespace:
        names = namespace["__match_args__"]
        if type(names) is not tuple or any(type(n) is not str for n in names):
            raise _deny(f"class {name}'s __match_args__", "it must be a tuple of str")
        for attribute in names:
            check_name(attribute)


@final_class
class InstanceDict(dict):  # type: ignore[type-arg]
    """``vars(obj)`` and ``obj.__dict__`` of the snippet's object whose class derives from a
    Python class from outside: a copy whose writes reach the object through the checks of
    ``obj.name = value`` (a key written straight into the real dict could answer for the
    base's own methods, ``Template.pattern``), so ``self.__dict__.update(kw)`` still sets
    what it may and refuses the rest by name."""

    __slots__ = ("_delete", "_set")

    def __init__(
        self, items: Any, set_: Callable[[str, Any], None], delete: Callable[[str], None]
    ) -> None:
        dict.__init__(self, items)
        self._set, self._delete = set_, delete

    def __setitem__(self, key: Any, value: Any) -> None:
        self._set(key, value)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        dict.__getitem__(self, key)  # the KeyError, before anything changes
        self._delete(key)
        dict.__delitem__(self, key)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return dict.__getitem__(self, key)

    def pop(self, key: Any, *default: Any) -> Any:
        if key not in self:
            return dict.pop(self, key, *default)
        value = dict.__getitem__(self, key)
        del self[key]
        return value

    def popitem(self) -> tuple[Any, Any]:
        if not self:
            raise KeyError("popitem(): dictionary is empty")
        key, value = next(reversed(dict.items(self)))
        del self[key]
        return key, value

    def clear(self) -> None:
        for key in list(self):
            del self[key]

    def __ior__(self, other: Any) -> InstanceDict:  # type: ignore[misc]
        self.update(other)
        return self


class NumericStore(ReadOnly):
    """An array's or a bytearray's item writes (``a[i] = v``, ``del a[i]``, ``a.append(v)``,
    ``a.insert(i, v)``, ``a.extend(xs)``, ``a.fromlist(xs)``) with every index and value
    already an exact number when the native method runs (see
    :func:`runtime.worker._repairs.exact_item`; the worker's repaired methods convert them
    too, which covers what reaches them natively)."""

    __slots__ = ("_holder", "_method", "_native")
    _holder: Any
    _method: str
    _native: Any

    def __init__(self, holder: Any, method: str = "", native: Any = None) -> None:
        object.__setattr__(self, "_holder", holder)
        object.__setattr__(self, "_method", method)
        object.__setattr__(self, "_native", native)  # the bound method (super().append too)

    def __getitem__(self, key: Any) -> Any:
        return self._holder[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, slice):
            self._holder[key] = value  # a slice takes a buffer, built before the store
        else:
            self._holder[operator.index(key)] = exact_item(self._holder, value)

    def __delitem__(self, key: Any) -> None:
        del self._holder[key if isinstance(key, slice) else operator.index(key)]

    def __call__(self, *args: Any) -> Any:
        holder, method = self._holder, self._method
        if method in ("extend", "fromlist") and len(args) == 1:
            given = args[0]
            if type(given) is not type(holder):  # an array extends from an array natively
                args = ([exact_item(holder, value) for value in given],)
        elif method in ("insert", "__setitem__") and len(args) == 2:
            if not isinstance(args[0], slice):  # a slice takes a buffer, built first
                args = (operator.index(args[0]), exact_item(holder, args[1]))
        elif method == "append" and len(args) == 1:
            args = (exact_item(holder, args[0]),)
        return self._native(*args)

    def __repr__(self) -> str:
        return repr(self._native)


class SliceStore(ReadOnly):
    """A list's slice assignment (``a[i:j] = v``), whose value the list iterates natively:
    what is not plain data goes through the iteration guard first."""

    __slots__ = ("_items", "_iter")
    _items: list[Any]
    _iter: Callable[[Any], Iterator[Any]]

    def __init__(self, items: list[Any], guarded_iter: Callable[[Any], Iterator[Any]]) -> None:
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "_iter", guarded_iter)

    def __getitem__(self, key: Any) -> Any:  # the read of ``a[i:j] += v``
        return self._items[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._items[key] = value if type(value) in PLAIN else list(self._iter(value))

    def __delitem__(self, key: Any) -> None:
        del self._items[key]


_NUMERIC_STORES = frozenset({"append", "insert", "extend", "fromlist", "__setitem__"})
"""The methods of an array (a bytearray's convert their value before resizing) that store
an item after converting it."""


def _numeric_store(value: Any, name: str) -> bool:
    """``value``, read as ``name``, is a storing method bound to an array or bytearray."""
    kinds = (types.BuiltinMethodType, types.MethodWrapperType)  # a.__setitem__ is a wrapper
    if not isinstance(value, kinds) or not isinstance(value.__self__, _ARRAY):
        return False
    if isinstance(value.__self__, bytearray):
        return name == "__setitem__"
    return name in _NUMERIC_STORES


_FINALIZED_NAMES = frozenset({"close", "closed", "__getattr__", "__getattribute__"})
"""What an io object reads and calls when it is collected (``IOBase``'s finalizer)."""


def check_finalized(name: str, bases: tuple[Any, ...], names: Iterable[str]) -> None:
    """A class deriving from an io class defines none of :data:`_FINALIZED_NAMES`: the io
    object calls them when it is collected, whenever that is, as a ``__del__`` would run."""
    if not any(isinstance(base, type) and issubclass(base, _io._IOBase) for base in bases):
        return
    found = sorted(_FINALIZED_NAMES.intersection(names))
    if found:
        raise _deny(
            f"class {name}'s {found[0]} on an io base",
            "an io object reads and calls it when it is collected, as a finalizer would "
            "run; wrap the io object in a class of your own instead",
        )


def _check_slots(name: str, slots: Any) -> None:
    """``__slots__`` is a str, or a tuple, list or dict of them, each an exact ``str``."""
    if type(slots) is str:
        return
    if type(slots) not in (tuple, list, dict) or any(type(slot) is not str for slot in slots):
        raise _deny(
            f"class {name}'s __slots__ of a {type(slots).__name__}",
            "__slots__ must be a str, or a tuple, list or dict of plain str",
        )


_MUTABLE = frozenset({dict, list, set})
"""Plain data without parts."""
_SHAREABLE = frozenset({dict, list, set, tuple})
"""Plain containers that are, or may hold, what a class shares with every instance."""


def _detached(value: Any) -> Any:
    """``value``, read from an object from outside, as a copy wherever it is a mutable
    container, at its top and one level in (``json.dumps.__kwdefaults__`` is the dict the
    worker's own ``json.dumps`` calls read their defaults from)."""
    kind = type(value)
    if kind is dict:
        return {k: type(v)(v) if type(v) in _MUTABLE else v for k, v in value.items()}
    if kind in _MUTABLE or kind is tuple:
        return kind(type(v)(v) if type(v) in _MUTABLE else v for v in value)
    return value


_STATE_OF: weakref.WeakKeyDictionary[type, dict[str, str]] = weakref.WeakKeyDictionary()


def outside_state(kind: type, defined: Callable[[type], bool]) -> dict[str, str]:
    """The private names (not dunders, nor ``_sunder_`` names) that the code of ``kind``'s
    classes from outside sets or deletes on their instances, each with the class whose code it
    is: the
    facade ``OrderedDict``'s links, ``ExitStack``'s callbacks, ``ZoneInfo``'s caches. That
    code trusts what it finds there (it writes attributes onto a link's neighbours), so a
    snippet's subclass never sets them."""
    known = _STATE_OF.get(kind)
    if known is None:
        known = {}
        for klass in _MRO(kind):
            if klass.__module__ != "builtins" and not defined(klass):
                for name in _names_used(klass):
                    known.setdefault(name, klass.__name__)
        _STATE_OF[kind] = known
    return known


def _names_used(klass: type) -> set[str]:
    """The private names ``klass``'s own code sets or deletes, and its private ``__slots__``
    (a slot is state its code trusts, even when the code that sets it is elsewhere: the facade
    replaced ``Fraction.__new__``)."""
    slots = _NAMESPACE(klass).get("__slots__", ())
    found = {slots} if type(slots) is str else set(slots) if type(slots) is tuple else set()
    found = {name for name in found if type(name) is str and _private_state(name)}
    codes = [
        func.__code__
        for member in _NAMESPACE(klass).values()
        for func in (
            getattr(member, "__func__", member),
            *(getattr(member, part, None) for part in ("fget", "fset", "fdel", "func")),
        )
        if type(func) is types.FunctionType
    ]
    while codes:
        code = codes.pop()
        found.update(
            op.argval
            for op in dis.get_instructions(code)
            if op.opname in _STATE_WRITES and _private_state(op.argval)
        )
        codes.extend(c for c in code.co_consts if type(c) is types.CodeType)
    return found


_STATE_WRITES = frozenset({"STORE_ATTR", "DELETE_ATTR"})
_FUNCTION_WRITES = frozenset({"__doc__", "__name__", "__qualname__"})
"""The special attributes a snippet may set on its own functions (``functools.wraps``'s)."""


def _private_state(name: str) -> bool:
    """``_x`` or ``_C__x``, not a dunder, nor an enum-style ``_sunder_`` name (``_value_``,
    ``_missing_``: what enum asks a subclass to set or define)."""
    return name[:1] == "_" and not name.endswith("_")


def _check_state(
    kind: type, name: str, defined: Callable[[type], bool], holder: str | None = None
) -> None:
    owner = outside_state(kind, defined).get(name) if name[:1] == "_" else None
    if owner is not None:
        raise _deny(
            f"writing attribute {name!r} of {holder or kind.__name__}",
            f"it is private state of {owner}, a class from outside the snippet, whose code "
            "trusts it",
        )


def _sunder(name: str) -> bool:
    return len(name) > 2 and name[0] == name[-1] == "_" and name[1] != "_" and name[-2] != "_"


def _check_shadowing(obj: Any, name: str, defined: Callable[[type], bool]) -> None:
    """``obj.name = value`` on an object whose class derives from one from outside: the name
    must not hide, in the object's own dict, anything but a number or a string that class
    defines: a method its code calls through ``self`` (``ChainMap``'s ``self.__missing__(key)``,
    ``Counter``'s ``self._keep_positive()``: an object the snippet put there ran natively, its
    result handed on unchecked) or an object whose methods it calls (``Template``'s
    ``self.pattern.sub(convert, ...)`` handed its own closure to the snippet's object); and an
    enum member's ``_sunder_`` attributes are set once, by enum and the class's own
    ``__new__`` (``_value_`` swapped afterwards made ``|`` of two flags call anything)."""
    kind = type(obj)
    if _sunder(name) and issubclass(kind, enum.Enum) and name in instance_dict(obj):
        raise _deny(
            f"writing attribute {name!r} of a {kind.__name__} member",
            "enum sets a member's _sunder_ attributes once, when it is made",
        )
    _check_shadowed(kind, name, defined, f"a {kind.__name__} object")


def _shadowed(kind: type, name: str, defined: Callable[[type], bool]) -> type | None:
    """The class from outside whose ``name`` an instance of ``kind`` holding ``name`` in its
    own dict would answer for: not a data descriptor (it takes the write), a number or a
    string (only read), nor anything ``object`` defines."""
    for klass in _MRO(kind):
        namespace = _NAMESPACE(klass)
        if name not in namespace:
            continue
        if klass is object:
            return None
        if defined(klass):
            continue  # the snippet's own class may hold it; what an outside base holds counts
        held = namespace[name]
        if hasattr(type(held), "__set__") or type(held) in _LEAVES:
            return None
        return klass
    return None


def _check_shadowed(kind: type, name: str, defined: Callable[[type], bool], holder: str) -> None:
    klass = _shadowed(kind, name, defined)
    if klass is not None:
        raise _deny(
            f"writing attribute {name!r} of {holder}",
            f"it would answer in place of {klass.__name__}.{name}, which the code of "
            f"{klass.__name__}, a class from outside the snippet, calls or reads",
        )


_STATE_READERS = ("__getattribute__", "__getattr__", "__setattr__", "__delattr__")
"""What would answer an outside base's reads of its own state instead of the instance, or be
handed that state by the base's own writes (``ExitStack.pop_all`` sets a new stack's
``_exit_callbacks`` to its deque of the runtime's own exit functions)."""


def check_class_state(
    name: str, bases: tuple[type, ...], namespace: Any, defined: Callable[[type], bool]
) -> None:
    """Class ``name`` about to be made from ``bases`` and ``namespace``: neither its namespace
    nor any of the snippet's classes it inherits from defines the private state of a base
    from outside (a property of that name would answer the base's reads), nor, when there is
    such state, ``__getattribute__`` or ``__getattr__``."""
    state: dict[str, str] = {}
    for base in bases:
        state.update(outside_state(base, defined))
    if not state:
        return
    # the class body, and the snippet's classes it inherits from, save what a base from
    # outside of theirs set there itself (Protocol's _is_protocol on each protocol class)
    own: list[tuple[Any, dict[str, str]]] = [(namespace, {})]
    for base in bases:
        own += [(_NAMESPACE(k), outside_state(k, defined)) for k in _MRO(base) if defined(k)]
    for keys, theirs in own:
        for key in keys:
            text = str.__str__(key) if isinstance(key, str) else None
            if text in theirs:
                continue
            if text in state or text in _STATE_READERS:
                raise _deny(
                    f"class {name} with {text}",
                    f"{state.get(text) or min(state.values())} from outside the snippet keeps "
                    "private state on the instance and trusts what it finds there (a class "
                    "made from it defines none of its names, nor __getattribute__, __getattr__, "
                    "__setattr__ or __delattr__)",
                )


def check_class_write(cls: type, name: str, defined: Callable[[type], bool]) -> None:
    """``cls.name = value`` on a snippet's class: neither ``cls`` nor a class made from it
    gets the private state of a base from outside, nor a reader of it; nor an enum class its
    ``_sunder_`` tables (``_value2member_map_``, which ``E(value)`` reads), once made."""
    if _sunder(name) and issubclass(cls, enum.Enum):
        raise _deny(
            f"writing attribute {name!r} of {cls.__name__}",
            "enum's _sunder_ attributes of a class are set when the class is made",
        )
    for kind in [cls, *subclasses(cls)]:
        state = outside_state(kind, defined)
        if name in state or (state and name in _STATE_READERS):
            raise _deny(
                f"writing attribute {name!r} of {cls.__name__}",
                f"{kind.__name__} derives from {state.get(name, 'a class')} from outside the "
                "snippet, which reads its private state from the instance and trusts it",
            )


def refuse_outside_state(kind: type, names: Iterable[Any], holder: str | None = None) -> None:
    """What the sandbox's own code is about to set on ``kind``'s instances or class for the
    snippet (a dataclass's fields, a cached property, a wrapper's ``__dict__``) passes the
    check of the snippet's own writes: never the private state of a base from outside, nor a
    name whose class attribute from outside it would answer for."""
    if _RUNNING:
        defined = _RUNNING[-1].defined
        for name in names:
            if isinstance(name, str):  # a str subclass stores as its exact text would
                text = str.__str__(name)
                _check_state(kind, text, defined, holder)
                _check_shadowed(kind, text, defined, holder or f"a {kind.__name__} object")


def _plain_parts(item: Any) -> list[Any]:
    if type(item) is dict:
        return [*item.keys(), *item.values()]
    return list(item)


def _pure_results() -> tuple[frozenset[int], frozenset[str]]:
    functions = (json.loads, re.findall, re.split, re.sub, re.subn)
    return frozenset(map(id, functions)), frozenset({"findall", "split", "sub", "subn"})


_PURE_RESULTS, _PURE_PATTERN_METHODS = _pure_results()
"""Functions (by id: they live as long as the worker) whose results are plain data made from
text, so big results (a 5 MB ``json.loads``) are not walked; and the methods of a compiled
pattern that are."""


def _pure_result(func: Any) -> bool:
    if id(func) in _PURE_RESULTS:
        return True
    return (
        type(func) is types.BuiltinMethodType
        and type(func.__self__) is _PATTERN
        and func.__name__ in _PURE_PATTERN_METHODS
    )


_WRITABLE_CONTAINERS = (list, dict, set, bytearray, InstanceDict)
_EXTENDED = frozenset({list, collections.deque})
"""Targets whose ``+=`` iterates the value natively."""
_ARRAY = (array.array, bytearray)
_PATTERN = re.Pattern
_NATIVE_STORES = (array.array.__setitem__, bytearray.__setitem__)
"""A snippet's subclass that defines its own ``__setitem__`` gets its items as given (its
``super().__setitem__`` converts them)."""
_CALLABLE_KINDS = frozenset(
    {
        types.FunctionType,
        types.MethodType,
        types.BuiltinFunctionType,
        types.MethodWrapperType,
        types.WrapperDescriptorType,
        types.MethodDescriptorType,
        types.ClassMethodDescriptorType,
    }
)


@dataclass(frozen=True)
class Guards:
    """One worker's guard functions, as the rewritten snippet finds them in its globals."""

    getattr: Callable[..., Any]
    """The checking ``getattr``, for names known only at run time."""
    compiled_getattr: Callable[[Any, str], Any]
    callattr: tuple[Callable[..., Any], ...]
    """The generic method-call hook, then those for 0, 1 and 2 positional arguments."""
    call: tuple[Callable[..., Any], ...]
    """The generic call hook, then those for 0 and 1 positional arguments."""
    getitem: Callable[[Any, Any], Any]
    iter: Callable[[Any], Iterator[Any]]
    aiter: Callable[[Any], Any]
    admit: Callable[[Any], Any]
    result: Callable[[Any, Any], Any]
    """What a call of a function from outside returned (``result(value, func)``), checked as
    the call guard checks it: a plain container to its leaves, anything else admitted."""
    argument: Callable[..., Any]
    """Admits a parameter of the snippet's function as its body begins (``_arg_``)."""
    arguments: Callable[..., Any]
    """Admits the items of its ``*args`` and ``**kwargs`` (``_args_``)."""
    write: Callable[..., Any]
    inplace: Callable[[Any, Any, str], Any]
    private: Callable[[Any, str], Any]
    """``obj._name`` and ``obj.__name__`` written in the snippet."""
    admitted: Callable[..., bool]
    star: Callable[[Any], Any]
    kwargs: Callable[[Any], Any]
    apply: Callable[..., Any]
    builtins: dict[str, Callable[..., Any]]
    """``getattr``, ``hasattr``, ``setattr``, ``delattr`` and ``vars``, through the same checks
    as ``.`` access and assignment."""
    unpack_sequence: Callable[..., list[Any]]
    iter_unpack_sequence: Callable[..., Iterator[Any]]
    async_iter_unpack_sequence: Callable[..., AsyncIterator[Any]]
    formats: Formats

    def as_globals(self) -> dict[str, Any]:
        return {
            "_getattr_": self.compiled_getattr,
            "_callattr_": self.callattr[0],
            "_callattr0_": self.callattr[1],
            "_callattr1_": self.callattr[2],
            "_callattr2_": self.callattr[3],
            "_call_": self.call[0],
            "_call0_": self.call[1],
            "_call1_": self.call[2],
            "_apply_": self.apply,
            "_getattr_private_": self.private,
            "_admitted_": self.admitted,
            "_match_class_": match_class,
            "_star_": self.star,
            "_kwargs_": self.kwargs,
            "_getitem_": self.getitem,
            "_getiter_": self.iter,
            "_getaiter_": self.aiter,
            "_admit_": self.admit,
            "_arg_": self.argument,
            "_args_": self.arguments,
            "_write_": self.write,
            "_inplace_": self.inplace,
            "_unpack_sequence_": self.unpack_sequence,
            "_iter_unpack_sequence_": self.iter_unpack_sequence,
            "_async_iter_unpack_sequence_": self.async_iter_unpack_sequence,
        }

    def functions(self) -> list[object]:
        """Every callable here, for the admission's list of what the snippet may hold."""
        return [
            *self.as_globals().values(),
            self.getattr,
            *self.builtins.values(),
            *self.formats.unbound.values(),
        ]


def make_guards(admission: Admission, classes: SnippetClasses) -> Guards:
    """The guards of one worker, all deciding through ``admission``."""
    classes.vetted = admission.is_vetted
    admit = admission.admit
    admit_deep = admission.admit_deep

    own_kinds: dict[type, tuple[type, bool]] = {}
    own_functions: set[types.FunctionType] = set()

    def own_kind(kind: type) -> bool:
        """Whether ``kind`` is a class the snippet defined whose instances the admission passes
        by their type alone, neither an exception (whose attributes are checked deeply) nor
        anything :func:`compiled_getattr` refuses before it reads: decided once per class (a
        class stays the snippet's, and no snippet writes ``__bases__``). The entry holds the
        class itself, so a metaclass's ``__eq__`` cannot answer for another's."""
        entry = own_kinds.get(kind)
        if entry is None:
            own = (
                classes.defined(kind)
                and kind not in _NEVER_HOLDERS
                and not issubclass(kind, (BaseException, *_DRIVABLE))
                and admission.by_type_alone(kind)
            )
            entry = own_kinds[kind] = (kind, own)
        return entry[0] is kind and entry[1]

    def own_method(obj: Any, method: Any) -> bool:
        """Whether ``method``, read from ``obj`` (an instance of an :func:`own_kind`), is a
        function the snippet defined bound to ``obj`` itself: what ``compiled_getattr`` hands
        out as it is, and whose plain result ``outside_result`` takes as the snippet's own.
        Each function is checked once, as ``classes.owns`` checks it (its code's file, or the
        sandbox's stand-in for a snippet's function): no snippet can rebind ``__code__``.
        ``own_functions`` holds exact functions only, hashed and compared by identity."""
        if type(method) is not types.MethodType or method.__self__ is not obj:
            return False
        func = method.__func__
        if type(func) is not types.FunctionType:
            return False
        if func in own_functions:
            return True
        if classes.owns(func):
            own_functions.add(func)
            return True
        return False

    def method_of(obj: Any, name: str) -> tuple[Any, bool]:
        """``obj.name`` for a method call, checked as ``compiled_getattr`` checks it, and
        whether it is the snippet's own method bound to its own object (:func:`own_method`),
        whose call takes the fast path."""
        if not own_kind(type(obj)):
            return compiled_getattr(obj, name), False
        method = getattr(obj, name)
        if own_method(obj, method):
            return method, True
        return checked_read(obj, name, method), False

    def own_result(result: Any, name: str) -> Any:
        """What the snippet's own method returned: ``outside_result`` with ``classes.owns``
        already known true (a plain container is the snippet's own)."""
        if type(result) in PLAIN:
            return result
        return admit(result, f"the result of .{name}()")

    def compiled_getattr(obj: Any, name: str) -> Any:
        """``obj.name`` written in the snippet: the name is a constant the compiler checked."""
        readable(obj, name)
        return checked_read(obj, name, getattr(obj, name))

    def readable(obj: Any, name: str) -> None:
        if type(obj) in _NEVER_HOLDERS:
            raise _deny(f"attribute access on a {type(obj).__name__}", "interpreter internals")
        if name in _COROUTINE_DRIVERS and isinstance(obj, _DRIVABLE):
            raise _deny(f"coroutine.{name}()", "await coroutines instead of driving them by hand")

    def checked_read(obj: Any, name: str, value: Any) -> Any:
        """``value``, just read as ``obj.name`` past the checks before the read."""
        if isinstance(obj, BaseException):  # what an exception carries came from anywhere
            return admit_deep(value, f"attribute {name!r} of {type(obj).__name__}")
        if type(value) in PLAIN:
            if type(value) in _LEAVES:
                return value
            if own_kind(type(obj)) and not outside_based(obj):
                return value  # the snippet's own object's own container (shared() is False)
            owned = classes.owns(obj)
            if (owned or is_writable_record(obj)) and shared(obj, name, value):
                # a class attribute of a base from outside (TextWrapper's translation table):
                # every instance in the worker shares it, so the snippet reads a copy
                return plain_deep(_detached(value), f"attribute {name!r}")
            if owned:
                return value
            if type(value) in _MUTABLE and not is_writable_record(obj):
                value = type(value)(value)  # a copy: the object's own table stays its own
            return plain_deep(value, f"attribute {name!r}")  # a record's list, a partial's args
        if _numeric_store(value, name):
            return NumericStore(value.__self__, name, value)
        if type(value) is types.MappingProxyType and not isinstance(obj, type):
            # a record's read-only mapping (a pattern's groupindex), not a class namespace
            return admit_deep(dict(value), f"attribute {name!r}")
        return admit(value, f"attribute {name!r}")

    def shared(obj: Any, name: str, value: Any) -> bool:
        """Whether ``value``, read as ``obj.name`` from the snippet's own object or class or a
        record, is a container a class from outside holds as a class attribute."""
        if type(value) not in _SHAREABLE or (classes.owns(obj) and not outside_based(obj)):
            return False
        kind = obj if isinstance(obj, type) else type(obj)
        return any(
            not classes.defined(klass) and _NAMESPACE(klass).get(name) is value
            for klass in _MRO(kind)
        )

    based: dict[type, bool] = {}

    def outside_based(obj: Any) -> bool:
        """Whether ``obj`` (a snippet's object or class) derives from a class from outside
        the snippet other than a builtin."""
        kind = obj if isinstance(obj, type) else type(obj)
        known = based.get(kind)
        if known is None:
            known = based[kind] = any(
                klass.__module__ != "builtins" and not classes.defined(klass)
                for klass in kind.__mro__[:-1]
            )
        return known

    def private_getattr(obj: Any, name: str, read: Callable[[Any, str], Any] = getattr) -> Any:
        """``obj._name`` or ``obj.__name__``: any such name of the snippet's own objects, the
        harmless dunders (``__name__``, ``__class__``, ``__init__``, operators...) of anything,
        never those of :data:`REFUSED_DUNDERS`; what comes back is checked, deeply when it
        may hold what the runtime put there."""
        if name in REFUSED_DUNDERS or name in DENIED_ATTRIBUTES:
            raise _deny(f"attribute {name!r}", "it exposes interpreter internals")
        if type(obj) in _NEVER_HOLDERS:
            raise _deny(f"attribute access on a {type(obj).__name__}", "interpreter internals")
        if name == "__setitem__":  # a.__setitem__(i, v), super().__setitem__(i, v)
            value = read(obj, name)
            if _numeric_store(value, name):
                return NumericStore(value.__self__, name, value)
        if classes.owns(obj):
            value = read(obj, name)
            if name not in SAFE_DUNDERS and _from_outside(value):
                # a private name of the snippet's class may still resolve to the runtime's
                # code: enum's _convert_, abc's registry helpers, a base class's internals
                raise _deny(
                    f"attribute {name!r}",
                    "it is a private method of a class from outside the snippet",
                )
            if type(value) is types.MappingProxyType and (
                name == "__members__" or record_view(obj, value)
            ):  # an enum's members, a dataclass's fields: a copy, not a class namespace
                return admit_deep(dict(value), f"attribute {name!r}")
            state = None if isinstance(obj, type) else outside_state(type(obj), classes.defined)
            if (
                name == "__dict__"
                and not state
                and not isinstance(obj, type)
                and shadowing_names(type(obj), classes.defined)
            ):  # a copy: a write there natively would answer for the base's own methods
                held = admit_deep(dict(value), "attribute '__dict__'")
                return InstanceDict(held, *instance_writes(obj))
            if name == "__dict__" and state:
                # a copy without what a base from outside keeps there (ExitStack's callbacks):
                # neither the names nor the containers they hold are the snippet's
                kept = {key: item for key, item in value.items() if key not in state}
                return InstanceDict(admit_deep(kept, "attribute '__dict__'"), *instance_writes(obj))
            if name == "__dict__" or outside_based(obj):
                # a base from outside (ExitStack, Enum) sets private state of its own there,
                # and its class attributes (ZoneInfo's caches) are shared: those are copies
                held = _detached(value) if shared(obj, name, value) else value
                return admit_deep(held, f"attribute {name!r}")
            return value if type(value) in PLAIN else admit(value, f"attribute {name!r}")
        if name not in SAFE_DUNDERS:
            if type(obj) is super:  # super()._helper(): the snippet's own parent method
                value = read(obj, name)
                if classes.owns(value):
                    return value
            raise _deny(
                f"attribute {name!r} of a {type(obj).__name__} object",
                "private names are readable on the snippet's own objects only",
            )
        value = _detached(read(obj, name))  # __dict__, __kwdefaults__, __defaults__
        return admit_deep(value, f"attribute {name!r}")

    def instance_writes(obj: Any) -> tuple[Callable[[str, Any], None], Callable[[str], None]]:
        """Writing and deleting ``obj``'s attributes in its own dict, each name first passing
        the checks of ``obj.name = value`` (an :class:`InstanceDict`'s writes)."""

        def checked(name: Any) -> str:
            if type(name) is not str:
                raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")
            attribute_name(name, "vars()")
            if name in WRITE_REFUSED:
                raise _deny(f"writing attribute {name!r}", "it changes what an object is")
            guarded_write(obj, name)
            return name

        def set_(name: str, value: Any) -> None:
            instance_dict(obj)[checked(name)] = value

        def delete(name: str) -> None:
            instance_dict(obj).pop(checked(name), None)

        return set_, delete

    def slot_guard(original: Any, /, *args: Any) -> Any:
        """``object.__setattr__(obj, name, value)``, ``obj.__delattr__(name)``,
        ``object.__getattribute__(obj, name)``: the name and the object pass the checks of
        ``obj.name = value`` and ``obj.name`` first."""
        bound = type(original) in (types.MethodWrapperType, types.MethodType)
        obj, rest = (original.__self__, args) if bound else ((args or (None,))[0], args[1:])
        if rest and type(rest[0]) is not str and isinstance(rest[0], str):
            # CPython takes a str subclass as the name: the checks and the slot both get its
            # exact text, never the subclass (whose __eq__, __hash__, startswith would lie)
            at = 0 if bound else 1
            args = (*args[:at], str.__str__(rest[0]), *args[at + 1 :])
            rest = args[at:]
        if not rest or type(rest[0]) is not str:
            return original(*args)  # CPython's own error for the wrong arguments
        name = rest[0]
        if name in DENIED_ATTRIBUTES or name in REFUSED_DUNDERS:
            raise _deny(f"attribute {name!r}", "it exposes interpreter internals")
        if original.__name__ in ("__getattribute__", "__getattr__"):
            # read by the slot itself: getattr would ask the class's own __getattribute__,
            # which called this, again (and isinstance asks it for __class__)
            if name == "__class__" and getattr(original, "__objclass__", None) is object:
                kind = type(obj)  # what object's slot answers, read without asking obj
                return kind if classes.defined(kind) else admit(kind, "attribute '__class__'")
            if name.startswith("_"):
                return private_getattr(obj, name, lambda o, n: original(*args))
            readable(obj, name)
            return checked_read(obj, name, original(*args))
        if name in WRITE_REFUSED:
            raise _deny(f"writing attribute {name!r}", "it changes what an object is")
        if isinstance(obj, type) and getattr(original, "__objclass__", None) is object:
            # CPython's own refusal, which the repaired type writes would let past: object's
            # slot writes a class's dict without telling the type's caches (a freed value
            # read back) and past the checks of a class write
            raise TypeError(f"can't apply this {original.__name__} to type object")
        guarded_write(obj, name)
        return original(*args)

    def _from_outside(value: Any) -> bool:
        kind = type(value)
        if kind not in _CALLABLE_KINDS:
            return False
        if kind is types.MethodType and admission.is_vetted(value.__func__):
            return False
        return not classes.owns(value) and not admission.is_vetted(value)

    def admitted(deep: int, *values: Any) -> bool:
        """What a ``case`` pattern captured, checked before its guard and body see it: the
        first ``deep`` values (bound inside class patterns, read as attributes natively) to
        the bottom of their containers, the others at the top."""
        for n, value in enumerate(values):
            if n < deep:
                natively_read(value)
                given = admit_deep(value, "what this pattern captured")
            elif type(value) not in PLAIN:
                given = admit(value, "what this pattern captured")
            else:
                continue
            if given is not value:  # admitted only as a stand-in, which a pattern cannot bind
                raise _deny(
                    f"capturing {type(value).__name__} in a pattern",
                    "it is handed to snippets only through a guard; use it by name instead",
                )
        return True

    def natively_read(value: Any) -> None:
        """A value a class pattern read as an attribute, natively: what ``obj.name`` would
        hand out only as a copy or not at all is refused (a class's shared table, a
        coroutine's ``send``)."""
        kind = type(value)
        if kind in _SHAREABLE and id(value) in shared_tables():
            raise _deny(
                f"capturing a {kind.__name__} a class from outside holds in a pattern",
                "every instance in the worker shares it; read it by name for a copy",
            )
        if (
            kind is types.BuiltinMethodType
            and value.__name__ in _COROUTINE_DRIVERS
            and isinstance(value.__self__, _DRIVABLE)
        ):
            raise _deny(f"coroutine.{value.__name__}()", "await coroutines instead")

    tables: list[frozenset[int]] = []

    def shared_tables() -> frozenset[int]:
        """The ids of the containers the vetted classes (and their bases from outside) hold as
        class attributes, found once."""
        if not tables:
            found: set[int] = set()
            for member in admission.vetted_classes():
                for klass in _MRO(member):
                    if klass.__module__ != "builtins" and not classes.defined(klass):
                        found.update(
                            id(v) for v in _NAMESPACE(klass).values() if type(v) in _SHAREABLE
                        )
            tables.append(frozenset(found))
        return tables[0]

    def star(value: Any) -> Any:
        """``f(*value)``: iterated through the guard; a value that does not iterate becomes a
        marker, so ``apply`` names ``f`` in the error as CPython does."""
        kind = type(value)
        if kind in FAST_ITERABLES or hasattr(kind, "__iter__") or hasattr(kind, "__getitem__"):
            return guarded_iter(value)
        return (_NotUnpacked(value, "*"),)

    def kwargs(*parts: Any) -> Any:
        """The keywords of ``f(k=v, **value)`` merged: a dict as it is, another mapping's
        items through the guards; what cannot be merged becomes a marker for ``apply``."""
        if len(parts) == 1 and type(parts[0]) is dict and all(type(k) is str for k in parts[0]):
            return parts[0]
        merged: dict[str, Any] = {}
        for part in parts:
            if type(part) is not dict:
                if not hasattr(type(part), "keys"):
                    return {_NOT_UNPACKED: _NotUnpacked(part, "**")}
                part = {key: guarded_getitem(part, key) for key in guarded_iter(part.keys())}
            for key, value in part.items():
                if type(key) is not str:
                    if not issubclass(type(key), str):
                        return {_NOT_UNPACKED: _NotUnpacked(key, "keywords")}
                    key = str.__str__(key)  # a str subclass's own text, none of its hooks
                if key in merged:
                    return {_NOT_UNPACKED: _NotUnpacked(key, "twice")}
                merged[key] = value
        return merged

    def apply(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        """A call with ``*`` or ``**``; the checks of ``_call_``."""
        bad = kwargs.pop(_NOT_UNPACKED, None)
        for arg in (bad, *args):
            if type(arg) is _NotUnpacked:
                raise arg.error(func)
        return guarded_call(func, *args, **kwargs)

    def attribute_name(name: object, builtin: str) -> str:
        if type(name) is not str:
            raise TypeError(
                f"{builtin}(): attribute name must be string, not '{type(name).__name__}'"
            )
        if name in DENIED_ATTRIBUTES or name in REFUSED_DUNDERS:
            raise _deny(f"attribute {name!r}", "it exposes interpreter internals")
        if len(name) > MAX_NAME:
            raise _deny(f"attribute {name[:24]!r}...", long_name(name))
        return name

    def getattr_(obj: Any, name: str, *default: Any) -> Any:
        """``getattr``: ``obj.name`` for a name known at run time."""
        if len(default) > 1:
            raise TypeError(f"getattr expected at most 3 arguments, got {2 + len(default)}")
        attribute_name(name, "getattr")
        read = private_getattr if name.startswith("_") else compiled_getattr
        if not default:
            return read(obj, name)
        try:
            return read(obj, name)
        except AttributeError:
            return default[0]

    def hasattr_(obj: Any, name: str) -> bool:
        """``hasattr``: whether ``getattr`` finds it. An internal name is refused, not False; a
        private name of an object from outside is False (``hasattr(row, '_fields')``, the
        namedtuple test, on a plain tuple)."""
        attribute_name(name, "hasattr")
        try:
            getattr_(obj, name)
        except AttributeError:
            return False
        except PolicyError:
            if name.startswith("_") and not classes.owns(obj):
                return False
            raise
        return True

    def setattr_(obj: Any, name: str, value: Any) -> None:
        """``setattr``: ``obj.name = value`` for a name known at run time."""
        attribute_name(name, "setattr")
        if name in WRITE_REFUSED:
            raise _deny(f"writing attribute {name!r}", "it changes what an object is")
        setattr(guarded_write(obj, name), name, value)

    def delattr_(obj: Any, name: str) -> None:
        """``delattr``: ``del obj.name`` for a name known at run time."""
        attribute_name(name, "delattr")
        if name in WRITE_REFUSED:
            raise _deny(f"deleting attribute {name!r}", "it changes what an object is")
        delattr(guarded_write(obj, name), name)

    def vars_(*obj: Any) -> Any:
        """``vars(obj)``: its ``__dict__``, under the rules of ``obj.__dict__``."""
        if len(obj) != 1:
            if not obj:
                raise _deny("vars() without an argument", "a snippet's scopes are not values")
            raise TypeError(f"vars expected at most 1 argument, got {len(obj)}")
        try:
            return private_getattr(obj[0], "__dict__")
        except AttributeError:
            raise TypeError("vars() argument must have __dict__ attribute") from None

    def guarded_getattr(obj: Any, name: str, *default: Any) -> Any:
        """``obj.name`` for a name known only at run time (a format field walk)."""
        check_name(name)
        if default:
            try:
                return compiled_getattr(obj, name)
            except AttributeError:
                return default[0]
        return compiled_getattr(obj, name)

    def plain_deep(value: Any, what: str) -> Any:
        """``value``, a plain container an outside call made: every item that is not plain
        data, at any depth, passes the value check as it is (a stand-in cannot take its
        place), since a plain container's items are never checked again."""
        pending, seen = [value], set()
        while pending:
            item = pending.pop()
            kind = type(item)
            if kind in _LEAVES:
                continue
            if kind in PLAIN:
                if id(item) not in seen:
                    seen.add(id(item))
                    pending.extend(_plain_parts(item))
            elif admit(item, what) is not item:
                raise _deny(f"{what} holding a {kind.__name__}", "a snippet gets it only alone")
        return value

    def outside_result(result: Any, func: Any, what: str, keywords: bool = False) -> Any:
        """What a call returns: a plain container from outside checked to its leaves (unless
        the snippet's own function made it, or one of :data:`_PURE_RESULTS` given no keyword:
        ``json.loads(s, object_hook=f)`` holds whatever ``f`` returns), anything else
        admitted."""
        kind = type(result)
        if kind in _LEAVES:
            return result
        if kind in PLAIN:
            if (not keywords and _pure_result(func)) or classes.makes_own(func):
                return result
            return plain_deep(result, what)
        return admit(result, what)

    def result_of(result: Any, name: str, method: Any = None, keywords: bool = False) -> Any:
        return outside_result(result, method, f"the result of .{name}()", keywords)

    def consumed(name: str, arg: Any) -> Any:
        """What a plain-data method that iterates its argument may iterate."""
        if name not in _CONSUMERS or type(arg) in PLAIN or issubclass(type(arg), dict):
            return arg
        return list(guarded_iter(arg))

    def inplace(target: Any, value: Any, op: str) -> Any:
        """The value of ``target += value`` or ``target |= value``: what a list, a deque (``+=``)
        or a dict (``|=``) would iterate natively goes through the iteration guard first, as
        does an iterator for any other target (``target`` is None for a slice)."""
        if type(value) in PLAIN:
            return value
        kind = type(target)
        if op == "+" and kind in _EXTENDED:
            return list(guarded_iter(value))
        if op == "|" and kind is dict:
            return dict(built_from(dict, value))
        if hasattr(type(value), "__next__"):
            return list(guarded_iter(value))
        return value

    def guarded_callattr(obj: Any, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """``obj.name(...)``: the method is checked like an attribute, its result like a value.
        Methods of plain data return plain data or its items, so they skip both checks; what
        they iterate goes through the iteration guard."""
        if type(obj) in PLAIN and name not in _PLAIN_SLOW:
            return getattr(obj, name)(*(consumed(name, a) for a in args), **kwargs)
        method, own = method_of(obj, name)
        if own:
            result = method(*args, **kwargs)
            return result if type(result) in PLAIN else own_result(result, name)
        if len(args) == 3 and type(method) is type and vetted_metaclass(method):
            return classes.metaclass.made_by(method, *args, **kwargs)  # abc.ABCMeta(n, b, ns)
        return result_of(method(*args, **kwargs), name, method, bool(kwargs))

    def callattr0(obj: Any, name: str, /) -> Any:
        if type(obj) in PLAIN and name not in _PLAIN_SLOW:
            return getattr(obj, name)()
        method, own = method_of(obj, name)
        if own:
            result = method()
            return result if type(result) in PLAIN else own_result(result, name)
        return result_of(method(), name, method)

    def callattr1(obj: Any, name: str, a: Any, /) -> Any:
        if type(obj) in PLAIN and name not in _PLAIN_SLOW:
            return getattr(obj, name)(consumed(name, a))
        method, own = method_of(obj, name)
        if own:
            result = method(a)
            return result if type(result) in PLAIN else own_result(result, name)
        return result_of(method(a), name, method)

    def callattr2(obj: Any, name: str, a: Any, b: Any, /) -> Any:
        if type(obj) in PLAIN and name not in _PLAIN_SLOW:
            return getattr(obj, name)(consumed(name, a), b)
        method, own = method_of(obj, name)
        if own:
            result = method(a, b)
            return result if type(result) in PLAIN else own_result(result, name)
        return result_of(method(a, b), name, method)

    def call_result(result: Any, func: Any = None, keywords: bool = False) -> Any:
        return outside_result(result, func, "the result of this call", keywords)

    def checked_result(value: Any, func: Any) -> Any:
        return outside_result(value, func, "the result of this call", True)

    def built_from(container: type, source: Any) -> Any:
        """What ``list(x)``, ``dict(x)``... iterate: ``x`` through the iteration guard; for a
        dict built from a mapping (a ``Counter``, an ``OrderedDict``), its items."""
        if container is dict and hasattr(type(source), "keys"):
            return guarded_iter(source.items())
        return guarded_iter(source)

    def consuming(func: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """``args`` for a plain container's method that iterates them, called as a function
        (``list.extend(items, it)``, ``f = items.extend; f(it)``, ``list.__init__(l, it)``):
        what they iterate goes through the iteration guard, as ``items.extend(it)`` does."""
        kind = type(func)
        if kind in _UNBOUND_KINDS:
            if func.__objclass__ in _CONTAINERS and args:
                return (args[0], *consuming_args(args[0], func.__name__, args[1:]))
        elif kind in _BOUND_KINDS and type(func.__self__) in _CONTAINERS:
            return consuming_args(func.__self__, func.__name__, args)
        elif kind is types.FunctionType:
            if func in REPAIRED_METHODS and args and type(args[0]) in _CONTAINERS:
                return (args[0], *consuming_args(args[0], func.__name__, args[1:]))
        elif (  # a bound repaired method: f = items.update
            kind is types.MethodType
            and func.__func__ in REPAIRED_METHODS
            and type(func.__self__) in _CONTAINERS
        ):
            return consuming_args(func.__self__, func.__name__, args)
        return args

    def consuming_args(holder: Any, name: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
        if name == "__setitem__":  # items.__setitem__(slice(i, j), it) iterates it
            if type(holder) is list and len(args) == 2 and type(args[0]) is slice:
                value = args[1] if type(args[1]) in PLAIN else list(guarded_iter(args[1]))
                return (args[0], value)
            return args
        if name not in _CONSUMERS:
            return args
        return tuple(consumed(name, a) for a in args)

    def guarded_call(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``func(...)``: the result is checked; container builders iterate through the guard;
        ``type(name, bases, namespace)`` makes a class as a ``class`` statement does."""
        if type(func) in _CALLABLE_KINDS:
            args = consuming(func, args)
        if type(func) is type and func in _CONTAINERS and args and type(args[0]) not in PLAIN:
            args = (built_from(func, args[0]), *args[1:])
        elif len(args) == 3 and type(func) is type and vetted_metaclass(func):  # ABCMeta(...)
            return classes.metaclass.made_by(func, *args, **kwargs)
        return call_result(func(*args, **kwargs), func, bool(kwargs))

    def call0(func: Any, /) -> Any:
        return call_result(func(), func)

    def call1(func: Any, a: Any, /) -> Any:
        if type(func) is type and func in _CONTAINERS and type(a) not in PLAIN:
            a = built_from(func, a)
        elif type(func) in _CALLABLE_KINDS and type(a) not in PLAIN:
            (a,) = consuming(func, (a,))
        return call_result(func(a), func)

    def guarded_getitem(obj: Any, key: Any) -> Any:
        """``obj[key]`` for snippet code."""
        value = obj[key]
        if type(value) in PLAIN:
            return value
        return admit(value, "this item")

    def checked(iterator: Iterator[Any]) -> Iterator[Any]:
        """The items of an iterable from outside: a plain container checked to its leaves, as
        a call's result is (C code fills them: ``map(f, xs)`` yields what ``f`` returned, and a
        list's items are never looked at again), anything else admitted."""
        for item in iterator:
            kind = type(item)
            if kind in _LEAVES:
                yield item
            elif kind in PLAIN:
                yield plain_deep(item, "an item")
            else:
                yield admit(item, "an item")

    def guarded_iter(obj: Any) -> Iterator[Any]:
        """``iter(obj)`` for loops, comprehensions, unpacking and the builtins that iterate."""
        kind = type(obj)
        if kind in FAST_ITERABLES:
            return iter(obj)
        if kind is types.GeneratorType and obj.gi_code.co_filename == FILENAME:
            own: Iterator[Any] = obj  # the snippet's own generator yields its own values
            return own
        admit(obj, "this iterable")
        return checked(iter(obj))

    async def achecked(iterable: Any) -> AsyncIterator[Any]:
        async for item in iterable:
            yield admit(item, "an item")

    def guarded_aiter(obj: Any) -> Any:
        """The iterable of ``async for``; the same checks as ``guarded_iter``."""
        admit(obj, "this iterable")
        if type(obj) is types.AsyncGeneratorType and obj.ag_code.co_filename == FILENAME:
            return obj
        return achecked(obj)

    def argument(value: Any, what: str, alone: bool = False) -> Any:
        """A parameter of the snippet's function, of a type not yet seen to pass as it is:
        C code calls the snippet's functions with values the snippet never held (a ``key``
        function's result, a container's items). A traceback passes: it is what ``__exit__``
        is given, and no attribute of one is ever read. A lambda's parameter (``alone``)
        cannot be rebound to a stand-in, so there one is refused; true when admitted."""
        if type(value) is types.TracebackType:
            return True if alone else value
        given = admit(value, what)
        if not alone:
            return given
        if given is not value:
            raise _deny(f"{what}, a {type(value).__name__}", "a lambda takes it only as a guard")
        return True

    def arguments(given: Any, what: str, alone: bool = False) -> Any:
        """``*args`` (a tuple) or ``**kwargs`` (a dict) of the snippet's function, each item
        admitted as a parameter is (:func:`argument`): the same container when all pass as
        they are, else one holding their stand-ins (for a lambda, ``alone``: a refusal)."""
        free = admission.free
        items = given.values() if type(given) is dict else given
        if all(type(item) in free for item in items):
            return True if alone else given
        if type(given) is dict:
            made = {key: argument(item, what, alone) for key, item in given.items()}
            return True if alone else made
        checked = tuple(argument(item, what, alone) for item in given)
        return True if alone else checked

    def guarded_admit(value: Any) -> Any:
        """What ``await``, ``with ... as`` and decorators hand the snippet."""
        if type(value) in PLAIN:
            return value
        return admit(value, "this value")

    def guarded_write(obj: Any, name: str | None = None, sliced: bool = False) -> Any:
        """What ``obj.name = v``, ``obj[k] = v`` (``name`` None) and ``setattr`` write to:
        containers, the snippet's own objects, and the public attributes of the records
        in :data:`WRITABLE_RECORDS`; a list's slice (``sliced``) takes guarded items."""
        if sliced and type(obj) is list:
            return SliceStore(obj, guarded_iter)
        if isinstance(obj, _ARRAY) and name is None and type(obj).__setitem__ in _NATIVE_STORES:
            return NumericStore(obj)  # an array or bytearray (a snippet's subclass too)
        if type(obj) in _WRITABLE_CONTAINERS:
            return obj
        if isinstance(obj, type) and classes.defined(obj):
            return _ClassWrites(obj)  # class attributes of its own classes (C.count += 1)
        if isinstance(obj, type):
            raise _deny(f"writing to {getattr(obj, '__name__', type(obj).__name__)}", "read-only")
        if type(obj) is types.FunctionType and classes.owns(obj):
            if name is not None and name.startswith("__") and name not in _FUNCTION_WRITES:
                raise _deny(
                    f"writing attribute {name!r} of a function",
                    "a function's own attributes are writable, not what makes it a function",
                )
            return obj  # f.cache = {}: the snippet's function keeps what it is given
        if classes.owns_instance(obj):
            if name is not None and outside_based(obj):
                _check_state(type(obj), name, classes.defined)
                _check_shadowing(obj, name, classes.defined)
            return obj
        if is_writable_record(obj):  # decimal.Context, TextWrapper...: the worker's own copies
            if name is not None and name.startswith("_"):
                raise _deny(
                    f"writing attribute {name!r} of a {type(obj).__name__} object",
                    "private attributes are writable on the snippet's own objects only",
                )
            if name is not None:
                _check_shadowing(obj, name, classes.defined)
            return obj
        raise _deny(
            f"writing to a {type(obj).__name__} object",
            "only containers, the snippet's own objects and the vetted modules' records "
            "(decimal.Context, TextWrapper, Counter...) can be modified",
        )

    def unpack_sequence(it: Any, spec: Any, _getiter_: Any) -> Any:
        """``a, (b, c) = value``: unpack through the iteration guard, nested levels included.
        A flat target over a tuple or list of plain items needs no guard: Python unpacks it
        as it is (other items are checked, as iteration would). Without
        a starred name, an iterator gives up one item more than the target binds, no more
        (what is left stays for the next reader, as in CPython)."""
        if not spec["childs"] and type(it) in _FLAT:
            for item in it:  # a tuple an outside call made may hold anything
                if type(item) not in PLAIN:
                    return [x if type(x) in PLAIN else admit(x, "an item") for x in it]
            return it
        if spec.get("star", True) or type(it) in _FLAT:
            items = list(guarded_iter(it))
        else:
            wanted = spec["min_len"]
            source = guarded_iter(it)
            items = list(itertools.islice(source, wanted))
            if len(items) < wanted:
                raise ValueError(
                    f"not enough values to unpack (expected {wanted}, got {len(items)})"
                )
            for _ in source:
                raise ValueError(f"too many values to unpack (expected {wanted})")
        if len(items) >= spec["min_len"]:
            for index, child in spec["childs"]:
                items[index] = unpack_sequence(items[index], child, guarded_iter)
        return items

    def iter_unpack_sequence(it: Any, spec: Any, _getiter_: Any) -> Iterator[Any]:
        flat = not spec["childs"]
        for item in guarded_iter(it):
            yield (
                item if flat and type(item) in _FLAT else unpack_sequence(item, spec, guarded_iter)
            )

    async def async_iter_unpack_sequence(it: Any, spec: Any, _getiter_: Any) -> AsyncIterator[Any]:
        async for item in guarded_aiter(it):
            yield unpack_sequence(item, spec, guarded_iter)

    admission.slot_guard = slot_guard
    formats = Formats(guarded_getattr, guarded_getitem)
    admission.formats = formats
    guards = Guards(
        getattr=guarded_getattr,
        builtins={
            "getattr": getattr_,
            "hasattr": hasattr_,
            "setattr": setattr_,
            "delattr": delattr_,
            "vars": vars_,
        },
        private=private_getattr,
        admitted=admitted,
        star=star,
        kwargs=kwargs,
        apply=apply,
        compiled_getattr=compiled_getattr,
        callattr=(guarded_callattr, callattr0, callattr1, callattr2),
        call=(guarded_call, call0, call1),
        getitem=guarded_getitem,
        iter=guarded_iter,
        aiter=guarded_aiter,
        admit=guarded_admit,
        result=checked_result,
        argument=argument,
        arguments=arguments,
        write=guarded_write,
        inplace=inplace,
        unpack_sequence=unpack_sequence,
        iter_unpack_sequence=iter_unpack_sequence,
        async_iter_unpack_sequence=async_iter_unpack_sequence,
        formats=formats,
    )
    admission.vet(slot_guard)
    for function in guards.functions():
        admission.vet(function)
    return guards


_NOT_UNPACKED = "\x00not unpacked"


class _NotUnpacked:
    """What ``f(*x)`` or ``f(**x)`` got that does not unpack; ``apply`` raises CPython's error."""

    __slots__ = ("how", "value")

    def __init__(self, value: Any, how: str) -> None:
        self.value, self.how = value, how

    def error(self, func: Any) -> TypeError:
        named = function_str(func)
        if self.how == "keywords":
            return TypeError("keywords must be strings")
        if self.how == "twice":
            return TypeError(f"{named} got multiple values for keyword argument '{self.value}'")
        kind = "an iterable" if self.how == "*" else "a mapping"
        return TypeError(
            f"{named} argument after {self.how} must be {kind}, not {type(self.value).__name__}"
        )


_PLAIN_SLOW = frozenset({"format", "format_map"})
"""Methods of plain data that take the checked path (``str.format`` walks attributes)."""

_CONSUMERS = frozenset(
    {
        "extend",
        "join",
        "update",
        "union",
        "intersection",
        "difference",
        "symmetric_difference",
        "intersection_update",
        "difference_update",
        "symmetric_difference_update",
        "issubset",
        "issuperset",
        "isdisjoint",
        "fromkeys",
        "__init__",
        "__iadd__",
        "__ior__",
        "__or__",
        "__ror__",
    }
)
"""Methods of plain data that iterate their argument: it goes through the iteration guard."""
_UNBOUND_KINDS = frozenset({types.MethodDescriptorType, types.WrapperDescriptorType})
_BOUND_KINDS = frozenset({types.BuiltinFunctionType, types.MethodWrapperType})
