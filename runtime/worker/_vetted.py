"""Facade members that cannot be handed out as they are, rebuilt around the guards.

Each wraps a standard-library function whose real form would give a snippet what the guards
keep from it, or would be refused by them:

- ``dataclasses.dataclass`` and ``make_dataclass`` build methods with ``exec`` from the field
  names: the names are checked to be identifiers first, the ``exec`` alone runs with the audit
  hook trusting it (never snippet code), and the class and its new methods count as the
  snippet's own;
- ``contextlib.contextmanager`` and ``asynccontextmanager`` return a helper function of
  their own, which is vetted;
- ``operator.attrgetter``, ``methodcaller`` and ``itemgetter`` resolve through the snippet's
  ``getattr`` and item guard, not in C past them;
- ``copy.copy`` and ``deepcopy`` refuse a class of the snippet's with its own reduce hook (it
  could name any constructor to rebuild with, and state to write past the write guard) and the
  runtime's own objects (facades, provider proxies);
- ``zoneinfo.ZoneInfo`` answers from zones loaded before the worker locks its filesystem.

The guards they use are those of the running execution, reached through :data:`ADOPTION`.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import keyword
import os
import types
import typing
import zoneinfo
from collections.abc import Callable
from typing import Any

from runtime.worker import _audit


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


ADOPTION = Adoption()

_real_create_fn = dataclasses._create_fn  # type: ignore[attr-defined]


def _trusted_create_fn(*args: Any, **kwargs: Any) -> Any:
    """``dataclasses._create_fn`` with its ``exec`` trusted: it runs only on names checked to
    be identifiers, and defines functions without calling snippet code."""
    with _audit.trusted():
        return _real_create_fn(*args, **kwargs)


def _caller(depth: int = 1, default: str = "__main__") -> str:
    """``typing._caller`` without frames: ``TypeVar``, ``NewType`` and ``TypedDict`` read
    their caller's module from its frame (an audited ``sys._getframe`` the hook refuses);
    in a worker, the caller is the snippet, whose module is ``__main__``."""
    return default


def patch_stdlib() -> None:
    """In the process that builds the facades (the zygote, whose workers run snippets; never
    the host): dataclasses' ``exec`` trusted, typing's frame walk gone."""
    dataclasses._create_fn = _trusted_create_fn  # type: ignore[attr-defined]
    typing._caller = _caller  # type: ignore[attr-defined]


def _identifier(name: object, what: str) -> str:
    if type(name) is not str or not name.isidentifier() or keyword.iskeyword(name):
        raise TypeError(f"{what} must be identifiers, not {name!r}")
    if name.startswith("__") and name.endswith("__"):
        raise TypeError(f"{what} cannot be special names such as {name!r}")
    return name


def _adopted_dataclass(cls: type) -> type:
    ADOPTION.adopt(cls)
    for value in vars(cls).values():
        function = getattr(value, "__func__", value)
        inner = getattr(function, "__wrapped__", function)  # __repr__ is wrapped once more
        made_here = isinstance(inner, types.FunctionType)
        if made_here and inner.__code__.co_filename == "<string>":  # dataclasses' exec
            for made in (inner, function, value):
                ADOPTION.vet(made)
    return cls


def _dataclass_of(cls: Any, options: dict[str, Any]) -> type:
    if not isinstance(cls, type) or not ADOPTION.owns(cls):
        raise TypeError("dataclass() applies to classes the snippet defines")
    for name in vars(cls).get("__annotations__", {}):
        _identifier(name, "dataclass field names")
    made: type = dataclasses.dataclass(cls, **options)
    return _adopted_dataclass(made)


def dataclass(cls: Any = None, /, **options: Any) -> Any:
    """dataclasses.dataclass, as a decorator or a decorator factory."""
    if cls is None:
        return ADOPTION.vet(lambda inner: _dataclass_of(inner, options))
    return _dataclass_of(cls, options)


def make_dataclass(cls_name: str, fields: Any, **options: Any) -> type:
    """dataclasses.make_dataclass; the class counts as the snippet's own."""
    _identifier(cls_name, "class names")
    fields = list(fields)
    for spec in fields:
        _identifier(spec if isinstance(spec, str) else spec[0], "dataclass field names")
    made = dataclasses.make_dataclass(cls_name, fields, **options)
    return _adopted_dataclass(made)


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
    """operator.methodcaller: the method is found with the snippet's getattr."""

    __slots__ = ("_args", "_kwargs", "_name")

    def __init__(self, name: str, /, *args: Any, **kwargs: Any) -> None:
        if type(name) is not str:
            raise TypeError("method name must be a string")
        self._name, self._args, self._kwargs = name, args, kwargs

    def __call__(self, obj: Any, /) -> Any:
        return ADOPTION.getattr(obj, self._name)(*self._args, **self._kwargs)

    def __repr__(self) -> str:
        return f"operator.methodcaller({self._name!r}, ...)"


GUARDED_MAKERS = (attrgetter, itemgetter, methodcaller)
"""Classes of the sandbox's own whose instances snippets hold."""

_REDUCE_HOOKS = ("__reduce__", "__reduce_ex__")
_COPY_BUDGET = 100_000


def _copyable(value: Any, deep: bool) -> None:
    """Refuse what copy would rebuild past the guards, anywhere in ``value``."""
    pending, seen, budget = [value], set(), _COPY_BUDGET
    while pending:
        item = pending.pop()
        budget -= 1
        if budget < 0:
            raise TypeError(f"cannot copy more than {_COPY_BUDGET} objects in one call")
        if id(item) in seen:
            continue
        seen.add(id(item))
        kind = type(item)
        if kind.__module__.startswith("runtime."):
            raise TypeError(f"cannot copy a {kind.__name__} object: it belongs to the sandbox")
        if ADOPTION.owns(item) and not isinstance(item, type):
            for klass in kind.__mro__:
                if ADOPTION.owns(klass) and any(h in vars(klass) for h in _REDUCE_HOOKS):
                    raise TypeError(
                        f"cannot copy a {kind.__name__}: its class defines its own reduce hook; "
                        "define __copy__ or __deepcopy__ instead"
                    )
            if deep and isinstance(getattr(item, "__dict__", None), dict):
                pending.extend(vars(item).values())
        if not deep:
            continue
        if kind in (list, tuple, set, frozenset):
            pending.extend(item)
        elif kind is dict:
            pending.extend(item.keys())
            pending.extend(item.values())


def copy_(value: Any) -> Any:
    """copy.copy."""
    _copyable(value, deep=False)
    return copy.copy(value)


def deepcopy(value: Any, memo: Any = None) -> Any:
    """copy.deepcopy."""
    _copyable(value, deep=True)
    return copy.deepcopy(value, memo)


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


class Zones:
    """``zoneinfo.ZoneInfo(key)`` from the zone files read when the facades were built; each
    zone is parsed on first use and kept, so the same key gives the same object."""

    def __init__(self) -> None:
        self._files = _zone_files()
        self._zones: dict[str, zoneinfo.ZoneInfo] = {}

    def __call__(self, key: str) -> zoneinfo.ZoneInfo:
        found = self._zones.get(key) if type(key) is str else None
        if found is not None:
            return found
        data = self._files.get(key) if type(key) is str else None
        if data is None:
            raise zoneinfo.ZoneInfoNotFoundError(f"No time zone found with key {key}")
        zone = self._zones[key] = zoneinfo.ZoneInfo.from_file(io.BytesIO(data), key=key)
        return zone

    def available(self) -> set[str]:
        return set(self._files)


def vetted_makers() -> dict[tuple[str, str], Any]:
    """The members above, by module and name (for the facades: patches the stdlib first)."""
    patch_stdlib()
    zones = Zones()

    def ZoneInfo(key: str) -> zoneinfo.ZoneInfo:  # the name zoneinfo gives it
        """zoneinfo.ZoneInfo(key), from the zones loaded before the worker was locked."""
        return zones(key)

    def available_timezones() -> set[str]:
        """zoneinfo.available_timezones()."""
        return zones.available()

    return {
        ("dataclasses", "dataclass"): dataclass,
        ("dataclasses", "make_dataclass"): make_dataclass,
        ("contextlib", "contextmanager"): contextmanager,
        ("contextlib", "asynccontextmanager"): asynccontextmanager,
        ("operator", "attrgetter"): attrgetter,
        ("operator", "itemgetter"): itemgetter,
        ("operator", "methodcaller"): methodcaller,
        ("copy", "copy"): copy_,
        ("copy", "deepcopy"): deepcopy,
        ("zoneinfo", "ZoneInfo"): ZoneInfo,
        ("zoneinfo", "available_timezones"): available_timezones,
    }
