"""``functools.partial`` for snippets: a partial whose call checks what it returns.

C code calls a partial where no call guard sees it and keeps what it returns: copy calls the
constructor a reduce recipe names, ``defaultdict`` its factory, ``sorted`` its key, a dataclass
field its default factory. CPython's partial calls the function it holds natively, so
``partial(type, obj)`` handed to any of them made a class from outside that the snippet was
never given. This one, written in Python, checks the result of every call, however it is made:
what a function from outside returns passes the same checks as the result of the snippet's own
call of that function (the snippet's own functions' results are its own).
"""

from __future__ import annotations

from typing import Any

from runtime.worker._vetted import ADOPTION

_PLAIN_RESULTS = frozenset({str, int, float, bool, type(None), bytes})


class partial:  # the name CPython gives it
    """New function with partial application of the given arguments and keywords."""

    __slots__ = ("__dict__", "__weakref__", "_args", "_func", "_keywords")
    _func: Any
    _args: tuple[Any, ...]
    _keywords: dict[str, Any]

    def __new__(cls, /, *args: Any, **keywords: Any) -> partial:
        if not args:
            raise TypeError("type 'partial' takes at least one argument")
        func, args = args[0], args[1:]
        if not callable(func):
            raise TypeError("the first argument must be callable")
        if _flattens(func):  # a partial of a partial holds the inner one's parts, as in CPython
            args = func._args + args
            keywords = {**func._keywords, **keywords}
            func = func._func
        self = super().__new__(cls)
        self._func, self._args, self._keywords = func, args, keywords
        return self

    def __call__(self, /, *args: Any, **keywords: Any) -> Any:
        func = self._func
        value = func(*self._args, *args, **{**self._keywords, **keywords})
        if type(value) in _PLAIN_RESULTS or ADOPTION.makes_own(func):
            return value
        return ADOPTION.result(value, func)

    @property
    def func(self) -> Any:
        """function object to use in future partial calls"""
        return self._func

    @property
    def args(self) -> tuple[Any, ...]:
        """tuple of arguments to future partial calls"""
        return self._args

    @property
    def keywords(self) -> dict[str, Any]:
        """dictionary of keyword arguments to future partial calls"""
        return self._keywords

    def __repr__(self) -> str:
        shown = [repr(self._func), *map(repr, self._args)]
        shown.extend(f"{key}={value!r}" for key, value in self._keywords.items())
        kind = type(self)
        name = "functools.partial" if kind is partial else kind.__name__
        return f"{name}({', '.join(shown)})"


partial.__module__ = "functools"
_CALL = vars(partial)["__call__"]
_OWN_DICT = vars(partial)["__dict__"].__get__


def _flattens(func: Any) -> bool:
    """CPython's test: ``func`` is a partial (a subclass too) called as a partial, with no
    attributes of its own."""
    kind = type(func)
    if not issubclass(kind, partial):
        return False
    called = next(vars(k)["__call__"] for k in kind.__mro__ if "__call__" in vars(k))
    return called is _CALL and not _OWN_DICT(func)
