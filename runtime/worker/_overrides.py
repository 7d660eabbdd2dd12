"""What a snippet's class may hold in place of what a class from outside defines.

Code from outside calls its own methods and the methods of objects it keeps as class
attributes (``string.Template``'s ``self.pattern.sub(convert, text)``, ``ExitStack``'s
``self._push_cm_exit(cm, exit)``), with its own objects as arguments. In a snippet's subclass,
whatever answers those names runs natively: a function the snippet defined checks what it is
given, but a container's bound method (``d.__setitem__``), or an object whose attribute is one,
would store the runtime's own closure where the snippet reads it unchecked. So a class name an
outside base defines may be overridden only by the snippet's own functions (plain, static,
class methods, or properties of them) and by data with no methods of the snippet's: numbers,
strings, ``None``, tuples of them, compiled patterns.

A property anywhere in a snippet's class runs its accessors natively on every read, so its
accessors are the snippet's own functions too.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Iterable
from typing import Any

from runtime.worker._errors import PolicyError
from runtime.worker._policy import FILENAME
from runtime.worker._values import STANDS_FOR_SNIPPET, wrapped

_MRO: Callable[[type], tuple[type, ...]] = vars(type)["__mro__"].__get__
_NAMESPACE: Callable[[type], Any] = vars(type)["__dict__"].__get__
_ACCESSORS = tuple(vars(property)[name].__get__ for name in ("fget", "fset", "fdel"))
_SCALARS = (int, float, complex, str, bytes)
"""Data an outside attribute may be overridden with (an outside subclass too: ``re.I``)."""


def own_function(value: Any) -> bool:
    """``value`` is a function the snippet defined (or a class's checked ``__new__``)."""
    if type(value) is not types.FunctionType:
        return False
    return value.__code__.co_filename == FILENAME or value in STANDS_FOR_SNIPPET


def own_accessors(value: Any) -> bool:
    """Every accessor of the property ``value`` is ``None`` or the snippet's own function."""
    return all(
        accessor is None or own_function(accessor) for accessor in (a(value) for a in _ACCESSORS)
    )


def _override(value: Any, defined: Callable[[type], bool], depth: int = 0) -> bool:
    if value is None or own_function(value):
        return True
    kind = type(value)
    if property in _MRO(kind):  # never isinstance: a __class__ could answer it
        return own_accessors(value) and not defined(kind)
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
        held = _NAMESPACE(owner).get(name)
        if held is not None and (held is value or wrapped(held) is value):
            return True
    return False


def _deny(holder: str, name: str, owner: type, value: Any) -> PolicyError:
    return PolicyError(
        f"{holder}.{name} = {type(value).__name__} is not allowed: it answers in place of "
        f"{owner.__name__}.{name}, which the code of {owner.__name__}, a class from outside "
        "the snippet, calls or reads; override it with a function the snippet defines (or a "
        "property of one), or with a number, a string or a tuple of them"
    )


def _outside_owners(mro: Iterable[type], name: str, defined: Callable[[type], bool]) -> list[type]:
    """The classes from outside in ``mro`` (not ``object``) that define ``name``."""
    return [
        klass
        for klass in mro
        if klass is not object and not defined(klass) and name in _NAMESPACE(klass)
    ]


def _checked(name: Any) -> bool:
    return type(name) is str and not (name.startswith("__") and name.endswith("__"))


def _check(
    holder: str, name: str, value: Any, mro: Iterable[type], defined: Callable[[type], bool]
) -> None:
    owners = _outside_owners(mro, name, defined)
    if owners and not _override(value, defined) and not _inherited(value, owners, name):
        raise _deny(holder, name, owners[0], value)


def check_class_overrides(
    name: str, bases: tuple[type, ...], namespace: Any, defined: Callable[[type], bool]
) -> None:
    """Class ``name`` about to be made: what its body holds under a name a base from outside
    defines is an override :func:`_override` allows, and so is what each of the snippet's
    classes it inherits from holds where no outside class of its own defined the name (there
    it was checked when written, or an outside class's code wrote it: ABCMeta's
    ``_abc_impl``). Before the class exists its order is not known: a snippet base's
    attribute is checked against every outside class among the bases, wherever it falls."""
    mro = list(dict.fromkeys(klass for base in bases for klass in _MRO(base)))
    for key in [key for key in namespace if _checked(key)]:
        _check(name, key, namespace[key], mro, defined)
    for klass in mro:
        if defined(klass):
            own = _NAMESPACE(klass)
            for key in [key for key in own if _checked(key)]:
                if not _outside_owners(_MRO(klass), key, defined):
                    _check(klass.__name__, key, own[key], mro, defined)


def check_class_override(
    cls: type, name: str, value: Any, kinds: Iterable[type], defined: Callable[[type], bool]
) -> None:
    """``cls.name = value`` on a snippet's class: for ``cls`` and each of ``kinds`` (the
    classes made from it), ``value`` may stand in for what a class from outside after it
    defines."""
    if not _checked(name):
        return
    for kind in (cls, *kinds):
        mro = _MRO(kind)
        _check(cls.__name__, name, value, mro[mro.index(cls) + 1 :], defined)
