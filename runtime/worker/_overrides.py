"""What a snippet's class may hold in place of what a class from outside defines.

Code from outside calls its own methods and the methods of objects it keeps as class
attributes (``string.Template``'s ``self.pattern.sub(convert, text)``, ``ExitStack``'s
``self._push_cm_exit(cm, exit)``), with its own objects as arguments. In a snippet's subclass,
whatever answers those names runs natively: a function the snippet defined checks what it is
given, but a container's bound method (``d.__setitem__``), or an object whose attribute is one,
would store the runtime's own closure where the snippet reads it unchecked. So a class name an
outside base defines may be overridden only by the snippet's own functions (plain, static or
class methods), by plain data with no methods of the snippet's (numbers, strings, ``None``,
compiled patterns, tuples of them) and by the builtin classes of plain data (``default =
str``). Never by a property (but of a builtin's attribute, which its C code never reads through
the class), nor answered by a ``__getattribute__``: what those return, the outside code uses
natively.

A property anywhere in a snippet's class runs its accessors natively on every read, so its
accessors are the snippet's own functions too.
"""

from __future__ import annotations

import re
import types
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from runtime.worker._errors import PolicyError
from runtime.worker._policy import FILENAME
from runtime.worker._repairs import PROPERTY_PARTS, REPAIRED_METHODS
from runtime.worker._values import STANDS_FOR_SNIPPET, wrapped

MRO: Callable[[type], tuple[type, ...]] = vars(type)["__mro__"].__get__
"""A class's real method resolution order (``issubclass`` would ask an ABC's registry)."""
NAMESPACE: Callable[[type], Any] = vars(type)["__dict__"].__get__
"""A class's own namespace, read past any ``__dict__`` a metaclass could answer with."""
LEAVES = frozenset({str, int, float, bool, type(None), bytes, complex})
"""Values without attributes of their own worth calling."""

_SCALARS = (int, float, complex, str, bytes)
"""Data an outside attribute may be overridden with (an outside subclass too: ``re.I``)."""
_DATA_CLASSES = frozenset({str, int, float, complex, bool, bytes, list, tuple, dict, set})
"""Builtin classes an outside attribute may be overridden with: calling one makes plain data
(``class Enc(json.JSONEncoder): default = str``)."""
_WRITTEN: weakref.WeakKeyDictionary[type, set[str]] = weakref.WeakKeyDictionary()
"""The names the snippet itself gave each of its classes, in the body or written later."""
_SHADOWING: weakref.WeakKeyDictionary[type, bool] = weakref.WeakKeyDictionary()


CACHED_OWN: weakref.WeakSet[Any] = weakref.WeakSet()
"""functools' cache wrappers of the snippet's own functions (``@property`` over
``@functools.cache``): they only call the snippet's function, or answer what it returned."""


def own_function(value: Any) -> bool:
    """``value`` is a function the snippet defined (or a class's checked ``__new__``, or a
    cache of one of its functions)."""
    if type(value) is not types.FunctionType:
        return False
    return (
        value.__code__.co_filename == FILENAME or value in STANDS_FOR_SNIPPET or value in CACHED_OWN
    )


def own_accessors(value: Any) -> bool:
    """Every accessor of the property ``value`` is ``None`` or the snippet's own function."""
    parts = [read(value) for read in PROPERTY_PARTS]
    return all(part is None or own_function(part) for part in parts)


def _override(value: Any, defined: Callable[[type], bool], depth: int = 0) -> bool:
    if value is None or own_function(value) or any(value is c for c in _DATA_CLASSES):
        return True  # by identity: a snippet object's __eq__ could claim to be str
    kind = type(value)
    inner = wrapped(value)  # an exact staticmethod or classmethod
    if inner is not None:
        return own_function(inner)
    if issubclass(kind, _SCALARS) or kind is re.Pattern:
        return not defined(kind)  # a snippet subclass has methods of the snippet's
    if kind in (tuple, frozenset) and depth < 8:
        return all(_override(item, defined, depth + 1) for item in value)
    return False


def _inherited(value: Any, owners: Iterable[type], name: str) -> bool:
    """``value`` is what a class from outside holds under ``name`` (enum's ``__prepare__``
    puts its base's ``_generate_next_value_`` in each enum's body; ``C.f = Base.f``)."""
    for owner in owners:
        held = NAMESPACE(owner).get(name)
        if held is not None and (held is value or wrapped(held) is value):
            return True
    return False


def _shown(value: Any) -> str:
    if isinstance(value, type) or callable(value):
        name = getattr(value, "__qualname__", None)
        if type(name) is str:
            return name
    return f"a {type(value).__name__}"


def _deny(holder: str, name: str, owner: type, value: Any) -> PolicyError:
    return PolicyError(
        f"{holder}.{name} = {_shown(value)} is not allowed: it answers in place of "
        f"{owner.__name__}.{name}, which the code of {owner.__name__}, a class from outside "
        "the snippet, calls or reads; override it with a function the snippet defines "
        "(def, staticmethod or classmethod), or with plain data: None, a number, a string, "
        "a compiled pattern, a tuple of them, or a builtin class such as str"
    )


def _outside_owners(mro: Iterable[type], name: str, defined: Callable[[type], bool]) -> list[type]:
    """The classes from outside in ``mro`` (not ``object``) that define ``name``."""
    return [
        klass
        for klass in mro
        if klass is not object and not defined(klass) and name in NAMESPACE(klass)
    ]


def _overridable(name: Any) -> bool:
    return type(name) is str and not (name.startswith("__") and name.endswith("__"))


def _check(
    holder: str, name: str, value: Any, mro: Iterable[type], defined: Callable[[type], bool]
) -> None:
    owners = _outside_owners(mro, name, defined)
    if not owners or _override(value, defined) or _inherited(value, owners, name):
        return
    if _own_property(value, defined) and not any(map(_in_python, owners)):
        return  # C code reads its own fields, never the property (int.numerator)
    raise _deny(holder, name, owners[0], value)


def _in_python(klass: type) -> bool:
    """``klass`` has code written in Python (C code reads no instance dict or property; the
    functions the worker's repairs put in a builtin's place do not count)."""
    return any(
        type(v) is types.FunctionType and v not in REPAIRED_METHODS
        for v in NAMESPACE(klass).values()
    )


def _own_property(value: Any, defined: Callable[[type], bool]) -> bool:
    kind = type(value)
    return property in MRO(kind) and not defined(kind) and own_accessors(value)


def _check_reader(holder: str, mro: Iterable[type], defined: Callable[[type], bool]) -> None:
    outside = next((k for k in mro if _answers_for(k, defined)), None)
    if outside is not None:
        raise PolicyError(
            f"class {holder} with __getattribute__ is not allowed: it would answer for the "
            f"methods and attributes of {outside.__name__}, a class from outside the snippet, "
            "whose code uses what it reads natively; define __getattr__ for missing names, "
            "or keep the class apart from it"
        )


def check_statement_overrides(
    name: str, bases: tuple[type, ...], namespace: Any, defined: Callable[[type], bool]
) -> None:
    """Class ``name`` about to be made: what its body holds under a name a base from outside
    defines is an override :func:`_override` allows, and so is what each of the snippet's
    classes it inherits from was given by the snippet (not what an outside class's code wrote
    there: ABCMeta's ``_abc_impl``); no ``__getattribute__`` answers for a base from outside.
    Before the class exists its order is not known: a snippet base's attribute is checked
    against every outside class among the bases, wherever it falls."""
    mro = list(dict.fromkeys(klass for base in bases for klass in MRO(base)))
    for key in [key for key in namespace if _overridable(key)]:
        _check(name, key, namespace[key], mro, defined)
    readers = ["__getattribute__"] if "__getattribute__" in namespace else []
    for klass in mro:
        if defined(klass):
            own = NAMESPACE(klass)
            for key in [key for key in _WRITTEN.get(klass, ()) if key in own]:
                if key == "__getattribute__":
                    readers.append(klass.__name__)
                elif _overridable(key):
                    _check(klass.__name__, key, own[key], mro, defined)
    if readers:
        _check_reader(name, mro, defined)


def written(cls: type, names: Iterable[Any]) -> None:
    """The snippet gave ``cls`` these names (its class body, a later write)."""
    _WRITTEN.setdefault(cls, set()).update(n for n in names if type(n) is str)


def check_override_write(
    cls: type, name: str, value: Any, kinds: Iterable[type], defined: Callable[[type], bool]
) -> None:
    """``cls.name = value`` on a snippet's class: for ``cls`` and each of ``kinds`` (the
    classes made from it), ``value`` may stand in for what a class from outside after it
    defines, and no ``__getattribute__`` comes to answer for one."""
    for kind in (cls, *kinds):
        mro = MRO(kind)
        after = mro[mro.index(cls) + 1 :]
        if name == "__getattribute__":
            _check_reader(cls.__name__, after, defined)
        elif _overridable(name):
            _check(cls.__name__, name, value, after, defined)


def shadowing_names(kind: type, defined: Callable[[type], bool]) -> bool:
    """Whether a class from outside among ``kind``'s (with code in Python: C code reads no
    instance dict) defines a name an instance's own dict could answer for with an
    object whose methods that class's code calls: a function or method, a class, or an object
    with public methods (``Template.pattern``; not ABCMeta's ``_abc_impl``)."""
    known = _SHADOWING.get(kind)
    if known is None:
        known = _SHADOWING[kind] = any(_answers_for(k, defined) for k in MRO(kind))
    return known


def _answers_for(klass: type, defined: Callable[[type], bool]) -> bool:
    """``klass`` is a class from outside, written in Python, with a name an object in an
    instance's dict could answer for."""
    if klass is object or defined(klass) or not _in_python(klass):
        return False
    return any(_shadowable(key, value) for key, value in NAMESPACE(klass).items())


def _shadowable(key: Any, value: Any) -> bool:
    if not _overridable(key):
        return False
    kind = type(value)
    if kind in LEAVES or hasattr(kind, "__set__"):
        return False
    return callable(value) or any(not n.startswith("_") for n in dir(kind))
