"""The snippet's builtins, as the contract lists them: guarded iteration, a capped ``print``.

Builtins that iterate their argument (``sorted``, ``min``, ``enumerate``, ``zip``...) do it
through the iteration guard, so what they hand back holds only admitted items; ``getattr``,
``hasattr``, ``setattr``, ``delattr`` and ``vars`` go through the checks of ``.`` access and
assignment; ``type`` is the real class, whose results the call guard checks (three arguments
make a class as a ``class`` statement does). ``open``, ``eval``, ``exec``, ``globals``,
``dir``, ``__import__`` and the like are not there at all.
"""

from __future__ import annotations

import builtins
import types
from collections.abc import Callable, Iterator
from typing import Any

from contract import BUILTINS
from runtime.worker._errors import PolicyError, ToolError
from runtime.worker._guards import Guards
from runtime.worker._vetted import ADOPTION, callable_iterator, public


def _named(wrapper: Callable[..., Any], original: Callable[..., Any]) -> Callable[..., Any]:
    wrapper.__name__ = wrapper.__qualname__ = original.__name__
    wrapper.__doc__ = original.__doc__
    return wrapper


def guarded_builtins(guards: Guards) -> dict[str, Callable[..., Any]]:
    """``sorted``, ``min``, ``enumerate``... iterating through ``guards.iter``."""
    guarded_iter = guards.iter

    # Each wrapper hands a wrong call on to the real builtin, so the error is CPython's own.
    def first(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if args:
                args = (guarded_iter(args[0]), *args[1:])
            elif "iterable" in kwargs:  # enumerate(iterable=...)
                kwargs["iterable"] = guarded_iter(kwargs["iterable"])
            return fn(*args, **kwargs)

        return _named(wrapper, fn)

    def every(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*iterables: Any, **kwargs: Any) -> Any:
            return fn(*(guarded_iter(i) for i in iterables), **kwargs)

        return _named(wrapper, fn)

    def minmax(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if len(args) == 1:
                return fn(guarded_iter(args[0]), **kwargs)
            return fn(*args, **kwargs)

        return _named(wrapper, fn)

    def map_(*args: Any, **kwargs: Any) -> Iterator[Any]:
        if args:  # map calls a function from outside from C: its results are checked
            args = (ADOPTION.checked(args[0]), *args[1:])
        return map(*args[:1], *(guarded_iter(i) for i in args[1:]), **kwargs)

    def iter_(*args: Any) -> Iterator[Any]:
        if len(args) == 2:  # iter(callable, sentinel): its results are checked
            if not callable(args[0]):
                raise TypeError("iter(v, w): v must be callable")
            # in Python, holding the sentinel it compares (CPython 3.11 borrows it)
            return callable_iterator(ADOPTION.checked(args[0]), args[1])
        made: Iterator[Any] = iter(*args)
        return made

    def filter_(*args: Any, **kwargs: Any) -> Iterator[Any]:
        if len(args) == 2:
            args = (args[0], guarded_iter(args[1]))
        return filter(*args, **kwargs)

    def reversed_(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for seq in args:
            guards.admit(seq)
        backwards: Iterator[Any] = reversed(*args, **kwargs)
        return backwards

    return {
        "sorted": first(sorted),
        "enumerate": first(enumerate),
        "sum": first(sum),
        "any": first(any),
        "all": first(all),
        "zip": every(zip),
        "min": minmax(min),
        "max": minmax(max),
        "map": _named(map_, map),
        "iter": _named(iter_, iter),
        "filter": _named(filter_, filter),
        "reversed": _named(reversed_, reversed),
    }


def _printing(write: Callable[..., None]) -> Callable[..., None]:
    """``print`` as a function of that name (the capture's bound method would show as
    ``Output.print`` in a repr or an error)."""

    def print(
        *args: Any, sep: Any = " ", end: Any = "\n", file: Any = None, flush: bool = False
    ) -> None:
        write(*args, sep=sep, end=end, file=file, flush=flush)

    print.__doc__ = builtins.print.__doc__
    public(print, "print", "builtins")
    return print


def build_builtins(
    print_fn: Callable[..., None],
    import_fn: Callable[..., Any],
    guards: Guards,
    help_fn: Callable[..., str],
) -> dict[str, Any]:
    """The snippet's builtins table: exactly the contract's ``BUILTINS``, the iterating ones
    guarded, ``help`` Fabric's (never pydoc's), plus what compiled code calls behind the
    scenes."""
    own: dict[str, Any] = {
        **guarded_builtins(guards),
        **guards.builtins,
        "print": _printing(print_fn),
        "help": help_fn,
        "ToolError": ToolError,
        "PolicyError": PolicyError,
    }
    table = {name: own[name] if name in own else getattr(builtins, name) for name in BUILTINS}
    for name, value in table.items():  # the sandbox's own stand-ins, named as the builtins
        if type(value) is types.FunctionType and value.__module__.startswith("runtime."):
            public(value, name, "builtins")
    table.update(__build_class__=builtins.__build_class__, __import__=import_fn)
    return table
