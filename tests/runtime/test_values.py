"""The language layer checks values, not names: what a snippet may hold, and what it may not,
whatever route an object takes (attribute, item, call result, iteration step, exception)."""

from __future__ import annotations

import asyncio
import builtins
import collections
import datetime
import decimal
import os
import re
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from runtime.worker import (
    Admission,
    PolicyError,
    SnippetClasses,
    _repairs,
    compile_snippet,
    make_guards,
)


def _frame() -> types.FrameType:
    return sys._getframe()


def _traceback() -> types.TracebackType:
    try:
        raise ValueError
    except ValueError as exc:
        assert exc.__traceback__ is not None
        return exc.__traceback__


def _cell() -> types.CellType:
    x = 1

    def inner() -> int:
        return x

    assert inner.__closure__ is not None
    return inner.__closure__[0]


def _loop_and_future() -> tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]:
    loop = asyncio.new_event_loop()
    future = loop.create_future()
    loop.close()
    return loop, future


_LOOP, _FUTURE = _loop_and_future()

# what -> (a factory of the object, the words of the refusal)
REFUSED: dict[str, tuple[Callable[[], Any], str]] = {
    "a module": (lambda: os, "is a module"),
    "a module reached through a vetted one": (lambda: datetime.sys, "is a module"),  # type: ignore[attr-defined]
    "a frame": (_frame, "is a frame"),
    "a code object": (lambda: _frame.__code__, "is a code object"),
    "a traceback": (_traceback, "is a traceback"),
    "a closure cell": (_cell, "is a closure cell"),
    "a class namespace": (lambda: str.__dict__, "is a class namespace"),
    "a getset descriptor": (lambda: type.__dict__["__name__"], "is a descriptor"),
    "a member descriptor": (
        lambda: types.SimpleNamespace.__dict__.get("__dict__") or type.__dict__["__dictoffset__"],
        "descriptor",
    ),
    "a slot wrapper of a class not plain": (lambda: type.__call__, "is the slot wrapper"),
    "a bound slot wrapper of a module": (lambda: os.__repr__, "is a module"),
    "a classmethod descriptor": (lambda: dict.__dict__["fromkeys"], "is a descriptor"),
    "the real getattr": (lambda: builtins.getattr, "is the builtin getattr"),
    "the real __import__": (lambda: builtins.__import__, "is the builtin __import__"),
    "the real open": (lambda: builtins.open, "is the builtin open"),
    "a foreign function": (lambda: os.path.join, "is the function join"),
    "a foreign builtin function": (lambda: os.system, "is the builtin system"),
    "a foreign function bound to plain data": (
        lambda: types.MethodType(os.path.join, "a"),
        "the function join bound to a str",
    ),
    "a foreign builtin bound to plain data": (
        lambda: types.MethodType(os.system, "id"),
        "from outside the snippet",
    ),
    "the real str.format": (lambda: "{0.__class__}".format, "the real str.format"),
    "an unbound str.format without guards": (lambda: str.format, "unbound method"),
    "a foreign class": (lambda: subprocess.Popen, "is the class subprocess.Popen"),
    "the type of types": (lambda: type, "is the class builtins.type"),
    "the function class": (lambda: types.FunctionType, "is the class builtins.function"),
    "an event loop": (lambda: _LOOP, "is an event loop"),
    "a future": (lambda: _FUTURE, "is a future"),
    "a foreign object": (
        lambda: sys.stdout or object.__new__(subprocess.Popen),
        "from outside the snippet",
    ),
    "a special method": (lambda: int.__subclasses__, "the special method"),
    "a private method of an admitted object": (
        lambda: collections.Counter()._keep_positive,
        "the private method Counter._keep_positive",
    ),
}


def _admission(*vetted: object) -> tuple[Admission, SnippetClasses]:
    classes = SnippetClasses()
    return Admission(vetted, (), classes.defined), classes


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_what_a_snippet_may_never_hold(what: str) -> None:
    """Each is refused with a message that says what it is."""
    factory, words = REFUSED[what]
    admission, _ = _admission()
    with pytest.raises(PolicyError, match=re.escape(words)):
        admission.admit(factory(), "it")


ALLOWED: dict[str, Callable[[], Any]] = {
    "plain data": lambda: {"a": [1, 2.5, "x", b"y", None, (True, frozenset())]},
    "an unbound method of a plain type": lambda: str.lower,
    "a classmethod of a plain type": lambda: dict.fromkeys,
    "a bound method of plain data": lambda: [].append,
    "an iterator over plain data": lambda: iter([1, 2]),
    "a dict view": lambda: {}.items(),
    "a Counter": lambda: collections.Counter("aab"),
    "a Counter's method": lambda: collections.Counter().most_common,
    "a datetime": lambda: datetime.datetime(2024, 1, 1),
    "a Decimal": lambda: decimal.Decimal("1.5"),
    "a decimal signal class": lambda: decimal.ConversionSyntax,
    "a compiled pattern and its match": lambda: re.compile("a").match("a"),
    "an exception": lambda: KeyError("k"),
    "a builtin exception class": lambda: ValueError,
}


@pytest.mark.parametrize("what", sorted(ALLOWED))
def test_what_a_snippet_may_hold(what: str) -> None:
    """Plain data, what the vetted modules make of it, exceptions: admitted as they are."""
    admission, _ = _admission()
    value = ALLOWED[what]()
    assert admission.admit(value, "it") is value


def test_adopting_object_never_makes_every_class_the_snippets() -> None:
    """``object`` is in every class's mro; counting it would make any class the snippet's."""
    classes = SnippetClasses()
    classes.adopt(object)
    assert not classes.defined(type(os)) and not classes.defined(object)


def test_vetted_objects_and_the_snippets_own_classes_are_admitted() -> None:
    """What was handed to the snippet on purpose, and what it defined itself."""
    admission, classes = _admission(os.path.join)
    assert admission.admit(os.path.join, "it") is os.path.join
    Mine = classes.metaclass("Mine", (), {})
    assert admission.admit(Mine, "it") is Mine
    assert isinstance(admission.admit(Mine(), "it"), Mine)
    code, problems = compile_snippet("def f():\n    return 1\nreturn f")
    assert code is not None and not problems
    snippet_function = types.FunctionType(code.co_consts[0].co_consts[1], {})
    assert admission.admit(snippet_function, "it") is snippet_function


# -- the routes a value takes into a snippet -------------------------------------------------


class Holder:
    """An object of the runtime holding internals, as a host-side object would."""

    module = os
    name = "plain"

    def give_module(self) -> Any:
        return os

    def rows(self) -> list[Any]:
        return [{"name": "plain"}, ("deep", [os])]

    def give_frame(self) -> Any:
        return sys._getframe()


def _guards() -> Any:
    classes = SnippetClasses()
    admission = Admission((), (Holder,), classes.defined)
    return make_guards(admission, classes)


def test_an_attribute_holding_a_module_is_refused() -> None:
    """`holder.module` never hands out the module."""
    with pytest.raises(PolicyError, match="attribute 'module' is a module"):
        _guards().getattr(Holder(), "module")
    assert _guards().getattr(Holder(), "name") == "plain"


def test_a_method_call_returning_internals_is_refused() -> None:
    """`holder.give_frame()`: the method is admitted, its result is not."""
    guards = _guards()
    with pytest.raises(PolicyError, match=r"the result of \.give_frame\(\) is a frame"):
        guards.callattr[0](Holder(), "give_frame")
    with pytest.raises(PolicyError, match=r"the result of \.give_module\(\) is a module"):
        guards.callattr[1](Holder(), "give_module")


def test_a_call_returning_internals_is_refused() -> None:
    """`f()` where f hands back a module."""
    holder = Holder()
    with pytest.raises(PolicyError, match="the result of this call is a module"):
        _guards().call[0](holder.give_module)


def test_an_item_holding_a_module_is_refused() -> None:
    """`d["x"]` where the value is a module."""
    with pytest.raises(PolicyError, match="this item is a module"):
        _guards().getitem({"x": os}, "x")


def _foreign_items() -> Iterator[Any]:
    yield 1
    yield os


def test_iterating_a_foreign_iterator_checks_each_item() -> None:
    """Plain items pass, the module that follows them is refused."""
    iterator = _guards().iter(_foreign_items())
    assert next(iterator) == 1
    with pytest.raises(PolicyError, match="an item is a module"):
        next(iterator)


@pytest.mark.parametrize(
    "call",
    ["list(src)", "tuple(src)", "set(src)", "sorted(src, key=str)", "max(src, key=str)",
     "list(zip(src))", "list(enumerate(src))", "list(filter(None, src))", "all(src)"],
)  # fmt: skip
def test_builtins_that_iterate_in_c_check_what_they_are_given(call: str) -> None:
    """`list(foreign)` would fill a plain list natively, past every check: the builtins that
    iterate an argument take it through the iteration guard, as a loop does."""
    code, problems = compile_snippet(f"return {call}")
    assert code is not None, problems
    table = {n: getattr(builtins, n) for n in ("list", "tuple", "set", "sorted", "max", "zip")}
    table |= {n: getattr(builtins, n) for n in ("enumerate", "filter", "all", "str")}
    namespace = {"__builtins__": table, **_guards().as_globals(), "src": _foreign_items()}
    exec(code, namespace)
    with pytest.raises(PolicyError, match="an item is a module"):
        namespace["__fabric_main__"]().send(None)


def test_tuples_from_a_foreign_iterator_are_looked_into() -> None:
    """`for k, v in foreign.items()`: the pair's parts are checked too."""
    pairs = iter([("os", os)].__iter__().__next__, None)
    with pytest.raises(PolicyError, match="an item is a module"):
        list(_guards().iter(pairs))


def test_augmented_assignment_iterates_an_iterator_through_the_guard() -> None:
    """`items += foreign` and `d |= foreign` would iterate natively: what a list, a deque or a
    dict target would iterate goes through the iteration guard first, an iterator for any
    target; plain data, and what other targets take as it is (a Counter added to a Counter),
    pass unchanged."""
    guards = _guards()
    with pytest.raises(PolicyError, match="an item is a module"):
        guards.inplace([], _foreign_items(), "+")
    with pytest.raises(PolicyError, match="an item is a module"):
        guards.inplace([], collections.deque([1, os]), "+")  # no iterator, still iterated
    with pytest.raises(PolicyError, match="an item is a module"):
        guards.inplace(collections.deque(), collections.deque([os]), "+")
    with pytest.raises(PolicyError, match="is a module"):
        guards.inplace({}, collections.OrderedDict(m=os), "|")
    assert guards.inplace(None, iter([1, 2]), "+") == [1, 2]
    counter = collections.Counter("ab")
    assert guards.inplace(collections.Counter(), counter, "+") is counter
    assert guards.inplace(1, 3, "+") == 3


def test_an_async_generator_step_method_held_as_a_value_gives_coroutines() -> None:
    """`f = agen.asend` (or `map(agen.asend, ...)`, called natively) never returns the raw
    step, whose iteration yields the loop's futures: calling it gives a coroutine."""

    async def agen() -> Any:
        yield 1

    gen = agen()
    guards = _guards()
    for name, args in (("asend", (None,)), ("athrow", (GeneratorExit,)), ("aclose", ())):
        step = guards.getattr(gen, name)(*args)
        assert isinstance(step, types.CoroutineType)
        step.close()


def test_what_an_exception_carries_is_checked_deeply() -> None:
    """An exception raised inside the runtime may carry anything: its attributes, and the
    containers among them, are checked item by item."""
    guards = _guards()
    carrier = AttributeError("no such attribute")
    carrier.obj = os  # CPython sets obj to what a failed attribute walk reached
    with pytest.raises(PolicyError, match="attribute 'obj' of AttributeError is a module"):
        guards.getattr(carrier, "obj")
    nested = ValueError("boom", [{"found": os}])
    with pytest.raises(PolicyError, match="attribute 'args' of ValueError is a module"):
        guards.getattr(nested, "args")
    assert guards.getattr(ValueError("plain", [1]), "args") == ("plain", [1])


def test_no_route_hands_out_the_real_str_format() -> None:
    """`"...".format`, `str.format` and `super().format` all become the guarded formatter,
    whose field walks are the guards' own."""
    guards = _guards()
    bound = guards.getattr("{0.real}", "format")
    assert bound(3) == "3"
    unbound = guards.getattr(str, "format")
    assert unbound("{0.imag}", 2) == "0"

    class S(str):
        pass

    through_super = guards.getattr(super(S, S("{0.__class__}")), "format")
    with pytest.raises(PolicyError, match="names starting with '_' are private"):
        through_super(1)


def test_names_are_still_refused_before_values() -> None:
    """Private names and interpreter internals are refused by name, whatever the value."""
    guards = _guards()
    with pytest.raises(PolicyError, match="names starting with '_' are private"):
        guards.getattr(1, "__class__")
    with pytest.raises(PolicyError, match="it exposes interpreter internals"):
        guards.getattr((x for x in []), "gi_frame")


def _outside_rows() -> list[Any]:
    return [{"name": "plain", "tags": ("a", 1)}, [os]]


def test_lists_from_a_foreign_iterator_are_looked_into_to_their_leaves() -> None:
    """`for row in map(f, xs)`: a list (or a tuple of lists) an iterator from outside yields is
    checked to the bottom as it arrives, since its items are never looked at again (a `for`
    over a list is native); plain rows pass as they are."""
    rows = [[1, "a"], ({"k": [2.0]},)]
    assert list(_guards().iter(iter(rows.__iter__().__next__, None))) == rows
    for deep in ([[os]], ({"k": [os]},)):
        with pytest.raises(PolicyError, match="an item is a module"):
            list(_guards().iter(iter([deep].__iter__().__next__, None)))


def test_a_class_made_after_the_first_admission_is_not_admitted_by_its_module_name() -> None:
    """A class made natively while snippets run (``type(...)`` called by C code, a class
    statement inside a vetted module's code) takes its ``__module__`` from whatever code was
    running: an instance of one is refused, however its module is named."""
    guards = _guards()  # the process's first admission noted every class that existed
    made = type("Record", (), {"__module__": "collections"})
    with pytest.raises(PolicyError, match=r"a collections\.Record object"):
        guards.admit(made())
    assert guards.admit(collections.Counter("ab")) == {"a": 1, "b": 1}


def test_a_plain_container_an_outside_call_returns_is_checked_to_its_leaves() -> None:
    """A plain list, dict or tuple is never checked again once a snippet holds it (its loops
    and unpackings read it natively), so what an outside call returns is checked to the
    bottom when it arrives: plain data passes, a module deep inside is refused."""
    guarded_call, call0, _ = _guards().call
    with pytest.raises(PolicyError, match="the result of this call is a module"):
        call0(_outside_rows)
    with pytest.raises(PolicyError, match="the result of this call is a module"):
        guarded_call(lambda: ({"deep": [[os]]},))
    assert call0(lambda: [{"a": (1, "x")}, None]) == [{"a": [1, "x"][0:1] and (1, "x")}, None]
    looped: list[Any] = []
    looped.append(looped)
    assert call0(lambda: looped) is looped  # a cycle ends the walk


def test_a_method_from_outside_returning_a_plain_container_is_checked() -> None:
    """`obj.method()` on an object from outside: the same check, by its result."""
    callattr = _guards().callattr[0]
    with pytest.raises(PolicyError, match=r"the result of .rows\(\) is a module"):
        callattr(Holder(), "rows")


def test_a_plain_container_method_called_as_a_function_iterates_through_the_guard() -> None:
    """`list.extend(items, it)`, `f = items.extend; f(it)`, `list.__init__(l, it)` fill a
    plain list natively: what they iterate goes through the iteration guard, as
    `items.extend(it)` does."""
    guarded_call, _, call1 = _guards().call
    for call in (
        lambda: guarded_call(list.extend, [], _foreign_items()),
        lambda: call1([].extend, _foreign_items()),
        lambda: guarded_call(list.__init__, [], _foreign_items()),
        lambda: guarded_call(set.update, set(), _foreign_items()),
    ):
        with pytest.raises(PolicyError, match="an item is a module"):
            call()
    items: list[Any] = []
    guarded_call(list.extend, items, iter([1, 2]))
    assert items == [1, 2]


def test_a_repaired_container_method_called_as_a_function_iterates_through_the_guard() -> None:
    """The worker's repaired methods are Python functions (``set.update`` holds the set while
    it grows): called as functions, bound or not, they iterate through the guard too."""
    made = _repairs._changer("update", vars(set)["update"])
    _repairs.REPAIRED_METHODS.add(made)  # as the repair installs it
    guarded_call, _, call1 = _guards().call
    held = set()
    for call in (
        lambda: guarded_call(made, held, _foreign_items()),
        lambda: call1(types.MethodType(made, held), _foreign_items()),
    ):
        with pytest.raises(PolicyError, match="an item is a module"):
            call()
    guarded_call(made, held, iter([1, 2]))
    assert held == {1, 2}


def test_a_list_slice_assignment_takes_guarded_items() -> None:
    """`items[i:j] = it` iterates `it` natively: the write guard's slice store checks it."""
    write = _guards().write
    items = [0, 1]
    with pytest.raises(PolicyError, match="an item is a module"):
        write(items, None, True)[0:1] = _foreign_items()
    write(items, None, True)[0:1] = collections.deque([7, 8])
    assert items == [7, 8, 1]
    guarded_call = _guards().call[0]
    with pytest.raises(PolicyError, match="an item is a module"):
        guarded_call(items.__setitem__, slice(0, 0), _foreign_items())
    with pytest.raises(PolicyError, match="an item is a module"):
        guarded_call(list.__setitem__, items, slice(0, 0), _foreign_items())
    guarded_call(items.__setitem__, slice(0, 1), collections.deque([5]))
    assert items == [5, 8, 1]


def test_a_pure_result_given_hooks_is_checked_to_its_leaves() -> None:
    """`json.loads(s)` is plain data made from text and is not walked; given a hook, it holds
    whatever the hook returned, and is."""
    import json

    guarded_call = _guards().call[0]
    assert guarded_call(json.loads, '[{"a": [1]}]') == [{"a": [1]}]
    with pytest.raises(PolicyError, match="is a module"):
        guarded_call(json.loads, "[{}]", object_hook=lambda d: os)
