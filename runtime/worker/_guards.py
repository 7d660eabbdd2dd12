"""Run-time guards that RestrictedPython's rewritten code calls, and the snippet's builtins.

The transformer turns ``a.b`` into ``_getattr_(a, "b")``, ``a[k]`` into ``_getitem_(a, k)``,
``a.b = v`` into ``_write_(a).b = v``, iteration into ``_getiter_(x)`` and so on. Here those
hooks refuse private names, interpreter internals (frames, code, tracebacks, generator and
coroutine internals), modules, and ``str.format`` attribute walks; writes are allowed only on
plain containers and on instances of classes the snippet itself defined.

Everything the snippet can reach is plain data, its own objects, provider proxies, or a
vetted module facade: no host object ever enters the sandbox.
"""

from __future__ import annotations

import asyncio
import builtins
import operator
import string
import types
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from RestrictedPython.Guards import guarded_unpack_sequence as _rp_unpack_sequence
from RestrictedPython.Guards import safe_builtins
from RestrictedPython.transformer import INSPECT_ATTRIBUTES

_INTERNAL_TYPES = (
    types.ModuleType,
    types.FrameType,
    types.CodeType,
    types.TracebackType,
    asyncio.Future,  # and Task: get_loop() would hand out the event loop
    asyncio.AbstractEventLoop,
    asyncio.Handle,
)
# Driving a coroutine by hand would surface the futures it waits on.
_COROUTINE_DRIVERS = frozenset({"send", "throw"})


def _async_generator_awaitables() -> tuple[type, ...]:
    async def agen() -> Any:
        yield None

    gen = agen()
    asend, athrow = gen.asend(None), gen.athrow(GeneratorExit)
    kinds = (type(asend), type(athrow))
    asend.close()
    athrow.close()
    return kinds


_DRIVABLE = (types.CoroutineType, *_async_generator_awaitables())
DENIED_ATTRIBUTES = INSPECT_ATTRIBUTES | {
    "f_code",
    "f_lineno",
    "f_lasti",
    "tb_lasti",
    "tb_lineno",
    "gi_running",
    "cr_running",
    "mro",
    "format_field",
    "get_field",
    "get_value",
    "vformat",
}


class PolicyError(Exception):
    """A snippet reached for something the sandbox refuses (a private name, a module...)."""


class ToolError(Exception):
    """A provider call failed. ``tool`` names the call, ``code`` classifies the failure."""

    def __init__(self, message: str, *, tool: str = "", code: str = "tool_error") -> None:
        super().__init__(message)
        self.message = message
        self.tool = tool
        self.code = code


def _deny(what: str, why: str) -> PolicyError:
    return PolicyError(f"{what} is not allowed: {why}")


def _check_value(value: Any, what: str) -> Any:
    if isinstance(value, _INTERNAL_TYPES):
        raise _deny(what, f"it is a {type(value).__name__} (interpreter internals stay outside)")
    return value


class _SafeFormatter(string.Formatter):
    """str.format whose field walks go through the same guards as snippet code."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        import _string  # type: ignore[import-not-found]  # C helper behind string.Formatter

        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = guarded_getattr(obj, key) if is_attr else guarded_getitem(obj, key)
        return obj, first


_FORMATTER = _SafeFormatter()


def _safe_format(template: str) -> Callable[..., str]:
    def format(*args: Any, **kwargs: Any) -> str:
        return _FORMATTER.vformat(template, args, kwargs)

    return format


def _safe_format_map(template: str) -> Callable[[Any], str]:
    def format_map(mapping: Any) -> str:
        return _FORMATTER.vformat(template, (), mapping)

    return format_map


def _str_format(template: str, *args: Any, **kwargs: Any) -> str:
    return _FORMATTER.vformat(template, args, kwargs)


def _str_format_map(template: str, mapping: Any) -> str:
    return _FORMATTER.vformat(template, (), mapping)


def guarded_getattr(obj: Any, name: str, *default: Any) -> Any:
    """``obj.name`` for snippet code."""
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if name.startswith("_"):
        raise _deny(f"attribute {name!r}", "names starting with '_' are private")
    if name in DENIED_ATTRIBUTES:
        raise _deny(f"attribute {name!r}", "it exposes interpreter internals")
    if isinstance(obj, _INTERNAL_TYPES):
        raise _deny(f"attribute access on a {type(obj).__name__}", "interpreter internals")
    if name in _COROUTINE_DRIVERS and isinstance(obj, _DRIVABLE):
        raise _deny(f"coroutine.{name}()", "await coroutines instead of driving them by hand")
    if isinstance(obj, str) and name in ("format", "format_map"):
        return _safe_format(obj) if name == "format" else _safe_format_map(obj)
    if isinstance(obj, type) and issubclass(obj, str) and name in ("format", "format_map"):
        return _str_format if name == "format" else _str_format_map
    if isinstance(obj, string.Formatter):
        raise _deny("string.Formatter", "it resolves attribute paths unguarded")
    value = getattr(obj, name, *default)
    return _check_value(value, f"attribute {name!r}")


_PLAIN_TYPES = frozenset({str, int, float, bool, type(None), list, dict, tuple, bytes, set})


def guarded_getitem(obj: Any, key: Any) -> Any:
    """``obj[key]`` for snippet code."""
    value = obj[key]  # modules, frames and the like are not subscriptable
    if type(value) in _PLAIN_TYPES:
        return value
    return _check_value(value, "this item")


def guarded_iter(obj: Any) -> Iterator[Any]:
    """``iter(obj)`` for ``for`` loops, comprehensions and the builtins that iterate."""
    if isinstance(obj, _INTERNAL_TYPES):
        raise _deny(f"iterating a {type(obj).__name__}", "interpreter internals")
    return iter(obj)


def guarded_aiter(obj: Any) -> Any:
    """The iterable of ``async for``; the same refusals as ``guarded_iter``."""
    if isinstance(obj, _INTERNAL_TYPES):
        raise _deny(f"iterating a {type(obj).__name__}", "interpreter internals")
    return obj


def guarded_unpack_sequence(it: Any, spec: Any, _getiter_: Any) -> list[Any]:
    """``a, (b, c) = value``: unpack through the iteration guard, nested levels included."""
    result: list[Any] = _rp_unpack_sequence(it, spec, _getiter_)  # type: ignore[no-untyped-call]
    return result


def guarded_iter_unpack_sequence(it: Any, spec: Any, _getiter_: Any) -> Iterator[Any]:
    for item in guarded_iter(it):
        yield guarded_unpack_sequence(item, spec, _getiter_)


async def guarded_async_iter_unpack_sequence(
    it: Any, spec: Any, _getiter_: Any
) -> AsyncIterator[Any]:
    async for item in guarded_aiter(it):
        yield guarded_unpack_sequence(item, spec, _getiter_)


class SnippetClasses:
    """Remembers the classes a snippet defines; only their instances accept attribute writes."""

    def __init__(self) -> None:
        self._ids: set[int] = set()
        self._keep: list[type] = []

    def metaclass(self, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> type:
        for base in bases:
            if not isinstance(base, type):
                raise _deny(f"class {name} with base {base!r}", "bases must be classes")
            if issubclass(base, type):
                raise _deny(f"class {name} deriving from type", "metaclasses are refused")
        cls = type(name, bases, namespace)
        self._ids.add(id(cls))
        self._keep.append(cls)
        return cls

    def owns_instance(self, obj: Any) -> bool:
        return any(id(klass) in self._ids for klass in type(obj).__mro__)


_WRITABLE_CONTAINERS = (list, dict, set, bytearray)


def make_write_guard(classes: SnippetClasses) -> Callable[[Any], Any]:
    def guarded_write(obj: Any) -> Any:
        if isinstance(obj, (type, *_INTERNAL_TYPES)):
            raise _deny(f"writing to {getattr(obj, '__name__', type(obj).__name__)}", "read-only")
        if classes.owns_instance(obj) or type(obj) in _WRITABLE_CONTAINERS:
            return obj
        if isinstance(obj, _WRITABLE_CONTAINERS) and type(obj).__module__ == "collections":
            return obj  # Counter, OrderedDict, defaultdict, deque-free mappings
        raise _deny(
            f"writing to a {type(obj).__name__} object",
            "only containers and instances of classes the snippet defines can be modified",
        )

    return guarded_write


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "|=": operator.ior,
    "^=": operator.ixor,
    "&=": operator.iand,
    "@=": operator.imatmul,
}


def inplacevar(op: str, target: Any, value: Any) -> Any:
    return _INPLACE[op](target, value)


def apply(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return func(*args, **kwargs)


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a builtin that iterates its first argument so the iteration is guarded."""

    def wrapper(iterable: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(guarded_iter(iterable), *args, **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _guarded_all_args(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*iterables: Any, **kwargs: Any) -> Any:
        return fn(*(guarded_iter(i) for i in iterables), **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__name__
    return wrapper


def _guarded_map(func: Callable[..., Any], *iterables: Any) -> Iterator[Any]:
    return map(func, *(guarded_iter(i) for i in iterables))


def _guarded_filter(func: Callable[[Any], Any] | None, iterable: Iterable[Any]) -> Iterator[Any]:
    return filter(func, guarded_iter(iterable))


def _guarded_minmax(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1:
            return fn(guarded_iter(args[0]), **kwargs)
        return fn(*args, **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__name__
    return wrapper


def _reversed(seq: Any) -> Iterator[Any]:
    if isinstance(seq, _INTERNAL_TYPES):
        raise _deny(f"iterating a {type(seq).__name__}", "interpreter internals")
    backwards: Iterator[Any] = reversed(seq)
    return backwards


_PLAIN_BUILTINS = (
    "bytes",
    "bytearray",
    "dict",
    "frozenset",
    "list",
    "set",
    "tuple",
    "str",
    "int",
    "float",
    "bool",
    "next",
    "iter",
    "super",
    "property",
    "staticmethod",
    "classmethod",
    "object",
    "format",
    "ascii",
    "bin",
    "NotImplemented",
    "StopAsyncIteration",
    "RecursionError",
    "TimeoutError",
    "ConnectionError",
    "PermissionError",
    "FileNotFoundError",
    "ExceptionGroup",
    "BaseExceptionGroup",
)
_REFUSED = frozenset(
    {
        "type",
        "getattr",
        "setattr",
        "delattr",
        "hasattr",
        "open",
        "eval",
        "exec",
        "compile",
        "globals",
        "locals",
        "vars",
        "dir",
        "__import__",
        "breakpoint",
        "input",
        "memoryview",
        "help",
        "exit",
        "quit",
    }
)


def build_builtins(print_fn: Callable[..., None], import_fn: Callable[..., Any]) -> dict[str, Any]:
    """The snippet's builtins: RestrictedPython's safe set, guarded iterators, a capped print."""
    table: dict[str, Any] = {
        k: v for k, v in safe_builtins.items() if k not in _REFUSED and not k.startswith("_")
    }
    table["__build_class__"] = builtins.__build_class__
    for name in _PLAIN_BUILTINS:
        table[name] = getattr(builtins, name)
    table.update(
        sorted=_guarded(sorted),
        enumerate=_guarded(enumerate),
        zip=_guarded_all_args(zip),
        map=_guarded_map,
        filter=_guarded_filter,
        min=_guarded_minmax(min),
        max=_guarded_minmax(max),
        sum=_guarded(sum),
        any=_guarded(any),
        all=_guarded(all),
        reversed=_reversed,
        print=print_fn,
        __import__=import_fn,
        ToolError=ToolError,
        PolicyError=PolicyError,
    )
    return table
