"""The import allowlist: each allowed module reaches the snippet as a facade.

A facade is not a module. It exposes only the vetted public functions, classes and
constants the contract lists (``contract.MODULES``); anything else (``uuid.os``,
``json.codecs``, ``datetime.sys``, a helper imported from elsewhere) is refused with an error
that lists what exists. ``asyncio`` is rebuilt from small wrappers so no task, future or event
loop ever reaches the snippet.
"""

from __future__ import annotations

import abc
import array
import asyncio
import base64
import binascii
import bisect
import collections
import contextlib
import copy
import csv
import dataclasses
import datetime
import decimal
import difflib
import enum
import fractions
import functools
import hashlib
import heapq
import importlib
import io
import itertools
import json
import math
import operator
import random
import re
import statistics
import string
import struct
import sys
import textwrap
import time
import types
import typing
import unicodedata
import uuid
import zoneinfo
from collections.abc import Callable
from typing import Any

from contract import MODULES, NEVER
from runtime.worker import _asyncio, _audit, _values
from runtime.worker._copying import copy_, deepcopy, patch_dataclasses
from runtime.worker._overrides import CACHED_OWN, own_function
from runtime.worker._partial import partial
from runtime.worker._places import patch_asyncio
from runtime.worker._policy import DENIED_ATTRIBUTES
from runtime.worker._vetted import (
    ADOPTION,
    ORDERED_DICT,
    DefaultDict,
    _marking,
    public,
    public_class,
    vetted_makers,
)

VETTED: dict[str, tuple[str, ...]] = {m: names for m, names in MODULES.items() if m != "asyncio"}
"""Modules whose facade exposes their own vetted names (``asyncio``'s is rebuilt below)."""
ALLOWED = tuple(sorted(MODULES))

# The imports above preload every vetted module in the parent that forks workers, so an
# import in a snippet costs nothing.
_PRELOADED = (
    abc,
    array,
    binascii,
    contextlib,
    copy,
    csv,
    dataclasses,
    enum,
    io,
    operator,
    string,
    struct,
    time,
    typing,
    unicodedata,
    zoneinfo,
    base64,
    bisect,
    collections,
    datetime,
    decimal,
    difflib,
    fractions,
    functools,
    hashlib,
    heapq,
    itertools,
    json,
    math,
    random,
    re,
    statistics,
    textwrap,
    uuid,
)


class Facade:
    # A read-only view of a module's vetted names. Its ``__doc__`` is the module's own.

    __slots__ = ("_fabric_doc", "_fabric_members", "_fabric_name")

    def __init__(self, name: str, members: dict[str, Any], doc: str | None = None) -> None:
        object.__setattr__(self, "_fabric_name", name)
        object.__setattr__(self, "_fabric_members", members)
        object.__setattr__(self, "_fabric_doc", doc)

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        doc: str | None = object.__getattribute__(self, "_fabric_doc")
        return doc

    def __getattr__(self, attr: str) -> Any:
        members: dict[str, Any] = object.__getattribute__(self, "_fabric_members")
        if attr in members:
            return members[attr]
        name = object.__getattribute__(self, "_fabric_name")
        raise AttributeError(
            f"{name}.{attr} is not available in snippets; {name} offers: "
            + ", ".join(sorted(members))
        )

    def __setattr__(self, attr: str, value: Any) -> None:
        raise AttributeError("module facades are read-only")

    def __repr__(self) -> str:
        return f"<module {object.__getattribute__(self, '_fabric_name')!r} (sandboxed)>"


_NAMED_TUPLE_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults"}
    | {"_make", "_replace", "_asdict", "_source"}
)
_NAMED_TUPLE_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})


def _lru_cache_members() -> frozenset[types.CodeType]:
    """The code of the functions functools' pure-Python lru_cache gives each cache
    (``cache_info``, ``cache_clear``, the ``cache_parameters`` lambda)."""
    found: set[types.CodeType] = set()
    makers = (functools.lru_cache, functools._lru_cache_wrapper)
    todo = [maker.__code__ for maker in makers if type(maker) is types.FunctionType]
    while todo:
        for const in todo.pop().co_consts:
            if isinstance(const, types.CodeType):
                todo.append(const)
                if const.co_name in ("cache_info", "cache_clear", "<lambda>"):
                    found.add(const)
    return frozenset(found)


def _makers() -> dict[tuple[str, str], Callable[..., Any]]:
    """Facade members that return new classes or functions, wrapped to register them."""
    import collections
    import functools

    def namedtuple(
        typename: str, field_names: Any, *, rename: bool = False, defaults: Any = None
    ) -> type:
        """collections.namedtuple; the class counts as the snippet's own."""
        # namedtuple builds __new__ with exec, so it runs with the audit hook trusting it: every
        # input is made plain data first, so no snippet code can run inside that window.
        if isinstance(field_names, str):
            fields = field_names.replace(",", " ").split()
        else:
            fields = list(field_names)
        plain = [typename, *fields]
        if not all(type(name) is str for name in plain):
            raise TypeError("namedtuple: the type name and the field names must be strings")
        internal = sorted(DENIED_ATTRIBUTES.intersection(fields))
        if internal:  # a class pattern reads fields natively: tb_frame, f_back, gi_frame...
            raise TypeError(f"namedtuple: a field cannot be the internal name {internal[0]!r}")
        given = None if defaults is None else tuple(defaults)
        renamed = bool(rename)  # a snippet's __bool__ runs here, never in the trusted window
        with _audit.trusted():
            make: Any = collections.namedtuple  # mypy types namedtuple's literal forms only
            made = make(str(typename), fields, rename=renamed, defaults=given, module="snippet")
        for member in vars(made).values():  # _make, _asdict, _replace: documented API
            function = getattr(member, "__func__", member)
            if isinstance(function, types.FunctionType):
                ADOPTION.vet(function)
        return ADOPTION.adopt(made)

    class NamedTupleMeta(type):
        """What a snippet's ``class P(NamedTuple)`` is made by: typing's rules (annotated
        fields, defaults after them, methods and docs kept), on the facade's namedtuple. The
        class body was checked as every class statement's is."""

        def __new__(mcls, typename: str, bases: tuple[type, ...], namespace: Any) -> Any:
            if bases != (NamedTupleBase,):
                raise TypeError("can only inherit from a NamedTuple type")
            annotations = namespace.get("__annotations__", {})
            if type(annotations) is not dict:
                raise TypeError("NamedTuple: __annotations__ must be a plain dict")
            defaults: list[str] = []
            for field in annotations:
                if field in namespace:
                    defaults.append(field)
                elif defaults:
                    raise TypeError(
                        f"Non-default namedtuple field {field} cannot follow default "
                        f"field{'s' if len(defaults) > 1 else ''} {', '.join(defaults)}"
                    )
            made = _named(typename, annotations, [namespace[n] for n in defaults])
            for key, value in namespace.items():
                if key in _NAMED_TUPLE_PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _NAMED_TUPLE_SPECIAL and key not in vars(made)["_fields"]:
                    type.__setattr__(made, key, value)
            return made

    NamedTupleBase = type.__new__(NamedTupleMeta, "NamedTuple", (), {})
    _values.admit_metaclass(NamedTupleMeta)

    def _named(typename: Any, annotations: dict[Any, Any], defaults: list[Any]) -> type:
        made = namedtuple(typename, list(annotations), defaults=defaults)
        made.__module__ = "__main__"
        type.__setattr__(made, "__annotations__", dict(annotations))
        return made

    def NamedTuple(typename: str, fields: Any = None, /, **kwargs: Any) -> type:
        """typing.NamedTuple: ``NamedTuple('P', [('x', int)])``, or a base class."""
        if fields is None:
            fields = list(kwargs.items())
        elif kwargs:
            raise TypeError(
                "Either list of fields or keywords can be provided to NamedTuple, not both"
            )
        pairs = [tuple(pair) for pair in fields]
        if not all(len(pair) == 2 for pair in pairs):
            raise TypeError("NamedTuple: each field must be a (name, type) pair")
        return _named(typename, dict(pairs), [])

    NamedTuple.__mro_entries__ = lambda bases: (NamedTupleBase,)  # type: ignore[attr-defined]

    def overload(func: Callable[..., Any]) -> Any:
        """typing.overload, of the snippet's own function (it reads the function's code)."""
        return ADOPTION.vet(_marking("typing", typing.overload)(func))

    own_code = _lru_cache_members()

    def cached(wrapper: Any, user_function: Any) -> Any:
        """A cache functools made, and the functions it gave it: only those (update_wrapper
        copied the cached function's ``__dict__`` over them, which the snippet may have
        filled with anything it names ``cache_info``); a cache of the snippet's own function
        counts as one of its functions (a property's getter)."""
        for name in ("cache_info", "cache_clear", "cache_parameters"):
            member = vars(wrapper).get(name)
            if type(member) is types.FunctionType and member.__code__ in own_code:
                ADOPTION.vet(member)
        if own_function(user_function) and type(wrapper) is types.FunctionType:
            CACHED_OWN.add(wrapper)
        return ADOPTION.vet(wrapper)

    def lru_cache(maxsize: Any = 128, typed: bool = False) -> Any:
        """functools.lru_cache, as a decorator or a decorator factory."""
        if callable(maxsize) and isinstance(typed, bool):  # @lru_cache on a function
            return cached(functools.lru_cache(maxsize, typed), maxsize)
        decorating = functools.lru_cache(maxsize, typed)

        def decorating_function(user_function: Any) -> Any:
            return cached(decorating(user_function), user_function)

        decorating_function.__qualname__ = "lru_cache.<locals>.decorating_function"
        decorating_function.__module__ = "functools"
        return ADOPTION.vet(decorating_function)

    def cache(user_function: Any, /) -> Any:
        """functools.cache."""
        return cached(functools.cache(user_function), user_function)

    def TypedDict(typename: Any, fields: Any = None, /, *, total: bool = True, **kw: Any) -> Any:
        """typing.TypedDict's functional form (``TypedDict('TD', {'a': int})``), made as a
        class statement makes its class; the class form (``class TD(TypedDict)``) is
        typing's own."""
        if fields is None:
            fields = kw
        elif kw:
            raise TypeError("TypedDict takes either a dict or keyword arguments, but not both")
        make = ADOPTION.make_class
        if make is None:
            return typing.TypedDict(typename, fields, total=total)  # type: ignore[operator]
        if type(typename) is not str or type(fields) is not dict:
            raise TypeError("TypedDict(): give a name and a dict of field names to types")
        if any(type(key) is not str for key in fields):
            raise TypeError("TypedDict(): field names must be strings")
        bases = (typing._TypedDict,)
        namespace = make.__prepare__(typename, bases)  # type: ignore[attr-defined]
        namespace["__annotations__"] = dict(fields)
        namespace["__module__"] = "__main__"
        return make(typename, bases, namespace, total=total)

    TypedDict.__mro_entries__ = typing.TypedDict.__mro_entries__  # type: ignore[attr-defined]

    def cmp_to_key(mycmp: Callable[[Any, Any], int]) -> Any:
        """functools.cmp_to_key."""
        return ADOPTION.vet(functools.cmp_to_key(mycmp))

    import itertools

    checked = ADOPTION.checked

    def starmap(function: Any, iterable: Any) -> Any:
        """itertools.starmap; what a function from outside returns is checked."""
        return itertools.starmap(checked(function), iterable)

    patch_dataclasses()
    return {
        **vetted_makers(),
        ("itertools", "starmap"): starmap,
        ("collections", "defaultdict"): DefaultDict,
        ("functools", "partial"): partial,
        ("copy", "copy"): copy_,
        ("copy", "deepcopy"): deepcopy,
        ("collections", "namedtuple"): namedtuple,
        ("functools", "lru_cache"): lru_cache,
        ("functools", "cmp_to_key"): cmp_to_key,
        ("typing", "overload"): overload,
        ("typing", "NamedTuple"): NamedTuple,
        ("typing", "TypedDict"): TypedDict,
        ("functools", "cache"): cache,
    }


def _asyncio_facade() -> Facade:
    made = _asyncio.members()
    return Facade("asyncio", {name: made[name] for name in MODULES["asyncio"]}, asyncio.__doc__)


def build_facades() -> dict[str, Facade]:
    patch_asyncio()
    facades = {"asyncio": _asyncio_facade()}
    makers = _makers()
    for name, members in VETTED.items():
        module = importlib.import_module(name)
        given = {
            m: makers.get((name, m), getattr(module, m)) for m in members if hasattr(module, m)
        }
        for member, value in given.items():
            if isinstance(value, types.ModuleType):  # a contract that names one is wrong
                raise RuntimeError(
                    f"the contract vets {name}.{member}, a module: never hand one out"
                )
        for member, value in given.items():  # the sandbox's own, under the module's names
            if type(value) is types.FunctionType and value.__module__.startswith("runtime."):
                public(value, member, name)
            elif isinstance(value, type):
                public_class(value, name)
        facades[name] = Facade(name, given, module.__doc__)
    return facades


def facade_members(facades: dict[str, Facade]) -> list[object]:
    """Every member of every facade (what snippets may hold because they were given it), and
    the ``__new__`` of the Python ``OrderedDict`` (a subclass calls ``super().__new__(cls)``,
    as it would the C one's)."""
    return [
        *(
            member
            for facade in facades.values()
            for member in object.__getattribute__(facade, "_fabric_members").values()
        ),
        ORDERED_DICT.__new__,
    ]


def make_import(facades: dict[str, Facade]) -> Any:
    allowed = ", ".join(ALLOWED)

    def guarded_import(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Facade:
        if level != 0:
            raise ImportError("relative imports are not available in snippets")
        root = name.split(".")[0]
        if root not in facades:
            message = f"import of {name!r} is not allowed"
            if root in NEVER:
                raise ImportError(f"{message} ({NEVER[root]}); allowed modules: {allowed}")
            if root in sys.stdlib_module_names:
                raise ImportError(f"{message}; allowed modules: {allowed}")
            # a module no stdlib has: CPython's class and words for it, so `except
            # ModuleNotFoundError` (the usual guard around an optional import) works
            raise ModuleNotFoundError(
                f"No module named {name!r} (snippets may import: {allowed})", name=name
            )
        if "." in name:
            raise ImportError(f"import of {name!r} is not allowed; import {root!r} instead")
        facade = facades[root]
        # Checked here, not left to `from x import y`, whose fallback would look the name up
        # in sys.modules and bind a real submodule.
        members = object.__getattribute__(facade, "_fabric_members")
        for wanted in fromlist or ():
            if wanted not in members:
                raise ImportError(
                    f"cannot import {wanted!r} from {root}; {root} offers: "
                    + ", ".join(sorted(members))
                )
        return facade

    return guarded_import
