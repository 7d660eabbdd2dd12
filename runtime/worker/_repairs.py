"""Repairs of CPython's own memory bugs that a snippet could trigger, made in the zygote.

A use-after-free in the interpreter undoes every layer above it: from freed memory a snippet
forges objects, reads and writes the heap, and reaches the real builtins. The language layer
cannot see these bugs coming, since they are in C code the guards never enter, so the worker's
interpreter is repaired where the bug is, before any snippet runs.

**gh-120298** (CPython before 3.12.5 and 3.13.0b3, so every 3.11): ``list < list`` compares
the first pair of items that differ with references it does not hold. If that comparison runs
code that empties either list and answers ``NotImplemented`` (a snippet's ``__lt__``, or a C
comparison that asked a snippet's ``__class__`` first), CPython calls the reflected comparison
on freed objects. Here the four ordering comparisons of ``list`` are Python functions that hold
both items: the list type's comparison slot becomes the one every class with its own ``__lt__``
has, and its ``__lt__``, ``__le__``, ``__gt__`` and ``__ge__`` become the functions below.
``==`` and ``!=`` stay CPython's (their item loop holds its references). Every list subclass
that already exists is moved to the same slot; classes made later inherit it.

Lists of up to 64 items are compared as tuples of their items (CPython's own loop, over
references the tuples hold), so such a comparison sees the lists as they were when it began;
longer ones item by item. Sorting lists of lists costs about 2.5 times what it costs in
CPython end to end (``bench/latency.py``'s ``sort lists`` workload).

**gh-142557 and kin** (every CPython up to 3.13 at least): ``bytearray``'s ``%``, ``in``,
``find``, ``rfind``, ``index``, ``rindex``, ``count``, ``startswith`` and ``endswith`` hand
CPython a pointer into the buffer and only then run the snippet's ``__index__`` (or an
argument's ``__repr__``), which may empty it: CPython reads freed memory. Here they are Python
functions that convert their arguments first; ``%`` formats a copy of the format.

The repairs write to the ``list`` type with :mod:`ctypes` and checks, before writing, that the
type object is laid out as CPython 3.11 and 3.12 lay it out; where it is not, it refuses to
start rather than run snippets on a known use-after-free.
"""

from __future__ import annotations

import array
import collections
import contextlib
import ctypes
import functools
import gc
import operator
import sys
import types
from collections.abc import Callable
from typing import Any

LIST_ORDER = "gh-120298"
"""CPython's issue number for the list comparison repaired here, as ``fabric doctor`` names it."""

_FIXED_IN = (3, 12, 5)
_RICHCOMPARE = 25 * 8  # offsetof(PyTypeObject, tp_richcompare) on a 64-bit CPython 3.11/3.12
_NAME, _BASICSIZE, _FLAGS = 3 * 8, 4 * 8, 21 * 8
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by Python code, not defined in C
_AS_NUMBER, _AS_SEQUENCE, _AS_MAPPING = 12 * 8, 13 * 8, 14 * 8  # tp_as_number... tp_as_mapping
_MP_ASS_SUBSCRIPT = 2 * 8  # tp_as_mapping->mp_ass_subscript
_NB_REMAINDER, _SQ_CONTAINS = 3 * 8, 7 * 8  # their nb_remainder and sq_contains

_size = list.__len__
_items = list.__iter__
_SHORT = 64
"""Lists up to this long are compared as tuples (CPython's own loop, over references the
tuples hold); longer ones item by item in Python, without copies."""


class RepairError(RuntimeError):
    """The interpreter has a known memory bug and this module could not repair it."""


def _ordering(name: str, op: Callable[[Any, Any], Any], symbol: str) -> Callable[..., Any]:
    """CPython's ``list_richcompare`` for one ordering, on references it holds."""

    def compare(self: Any, value: Any, /) -> Any:
        if type(self) is list and type(value) is list:  # the common case, at tuple speed
            if len(self) <= _SHORT and len(value) <= _SHORT:
                return op(tuple(self), tuple(value))
        elif not issubclass(type(self), list):  # type() and an exact type: no snippet hooks
            raise TypeError(
                f"descriptor '{name}' requires a 'list' object but received a "
                f"'{type(self).__name__}'"
            )
        elif not issubclass(type(value), list):
            return NotImplemented
        elif _size(self) <= _SHORT and _size(value) <= _SHORT:  # a subclass's own __len__
            return op(tuple(_items(self)), tuple(_items(value)))  # and __iter__ stay unused
        for mine, theirs in zip(_items(self), _items(value), strict=False):
            if mine is not theirs and not mine == theirs:  # noqa: SIM201 (== is what C asks)
                return op(mine, theirs)
        return op(_size(self), _size(value))

    compare.__name__ = name
    compare.__qualname__ = f"list.{name}"
    compare.__module__ = "builtins"
    compare.__doc__ = f"Return self{symbol}value."
    return compare


_ORDERINGS = {
    name: _ordering(name, op, symbol)
    for name, op, symbol in (
        ("__lt__", operator.lt, "<"),
        ("__le__", operator.le, "<="),
        ("__gt__", operator.gt, ">"),
        ("__ge__", operator.ge, ">="),
    )
}

REPAIRED: list[object] = []
"""The functions the repairs put in place of CPython's: a snippet may hold them (``list.__lt__``,
``super().__lt__`` in a list subclass), as it held the originals."""
REPAIRED_METHODS: set[object] = set()
"""The same functions, to tell one in a single lookup (``f = items.update; f(it)`` iterates
``it`` through the guard, as CPython's method would)."""


def _slot(cls: type) -> ctypes.c_void_p:
    return ctypes.c_void_p.from_address(id(cls) + _RICHCOMPARE)


def _table_slot(cls: type, table: int, field: int) -> ctypes.c_void_p:
    """A slot of one of the type's tables (``tp_as_number->nb_remainder``...)."""
    base = ctypes.c_void_p.from_address(id(cls) + table).value
    if not base:
        raise RepairError(f"{cls.__name__} has no table at offset {table}")
    return ctypes.c_void_p.from_address(base + field)


def _in_table(table: int, field: int) -> Callable[[type], ctypes.c_void_p]:
    return lambda cls: _table_slot(cls, table, field)


def _check_layout() -> None:
    """The type object's fields where this module reads and writes them, or a refusal."""
    if sys.implementation.name != "cpython" or ctypes.sizeof(ctypes.c_void_p) != 8:
        raise RepairError("the worker needs a 64-bit CPython")
    if (
        ctypes.c_char_p.from_address(id(list) + _NAME).value != b"list"
        or ctypes.c_ssize_t.from_address(id(list) + _BASICSIZE).value != list.__basicsize__
        or ctypes.c_ulong.from_address(id(list) + _FLAGS).value != list.__flags__
    ):
        raise RepairError("the list type is not laid out as in CPython 3.11")


def _generic_slot() -> int:
    """The comparison slot of a class that defines ``__lt__`` in Python."""

    class Ordered:
        def __lt__(self, other: object) -> bool:
            return NotImplemented

    class Plain:
        pass

    generic, inherited = _slot(Ordered).value, _slot(Plain).value
    if not generic or generic == inherited or inherited != _slot(object).value:
        raise RepairError("the comparison slot of a Python class is not where it should be")
    return generic


def subclasses(cls: type) -> list[type]:
    """Every class made from ``cls``, at any depth."""
    found: list[type] = []
    todo = [cls]
    while todo:
        sub: type
        for sub in type.__subclasses__(todo.pop()):
            if sub not in found:
                found.append(sub)
                todo.append(sub)
    return found


def _install(cls: type, members: dict[str, Any]) -> None:
    """``members`` into ``cls``'s own dict (behind its read-only proxy), the type's caches
    told, and each function kept as one a snippet may hold."""
    (namespace,) = gc.get_referents(vars(cls))
    namespace.update(members)
    ctypes.pythonapi.PyType_Modified(ctypes.py_object(cls))
    made = [getattr(member, "__func__", member) for member in members.values()]
    REPAIRED.extend(made)
    REPAIRED_METHODS.update(made)


def _repoint(
    cls: type, slot_of: Callable[[type], ctypes.c_void_p], original: Any, generic: Any
) -> None:
    """``cls``'s slot, and each existing subclass's that still holds CPython's ``original``,
    pointed at the ``generic`` one (classes made later inherit it)."""
    for each in [cls, *subclasses(cls)]:
        slot = slot_of(each)
        if slot.value == original:
            slot.value = generic


def repair() -> dict[str, Any]:
    """Make every repair this interpreter needs; the ``interpreter`` row of ``fabric doctor``."""
    version = ".".join(map(str, sys.version_info[:3]))
    repaired = []
    if repair_list_order():
        repaired.append(
            f"{LIST_ORDER} (a use-after-free in list ordering comparisons): list's <, <=, > "
            "and >= hold the items they compare"
        )
    repair_bytearray()
    repaired.append(
        f"{BYTEARRAY_READS} and kin (bytearray methods that read their buffer after running "
        "the snippet's __index__ or __repr__): bytearray's %, in, find, rfind, index, rindex, "
        "count, startswith and endswith convert their arguments first"
    )
    repair_list_slices()
    repaired.append(
        f"{LIST_SLICES} (an extended slice assignment writes through the list's old item "
        "array after iterating the snippet's value, which emptied it): list's __setitem__ "
        "makes a list of a slice's value first"
    )
    repair_deque_index()
    repaired.append(
        f"{DEQUE_INDEX} (deque.index compares a borrowed item): deque's own index holds it"
    )
    repair_zoneinfo()
    repair_zone_lookups()
    repaired.append(
        f"{ZONEINFO_INDEX} (the C TZif loader takes a transition index one past its local "
        "time types): TZif data is checked before the loader reads it; "
        f"{ZONEINFO_WEAK_CACHE} (ZoneInfo.clear_cache on a subclass drops its cache's only "
        "reference and goes on using it): clear_cache holds it; "
        f"{ZONE_LOOKUPS} (read as a datetime's fold, an object's bytes index the zone's "
        "tables): they take a datetime or None"
    )
    repair_set_changes()
    repaired.append(
        f"{SET_GROWTH} (set.add counts an item twice when the item's __eq__ changes the set, "
        "gh-139071: clear and dealloc then walk past the table): a set refuses to change while "
        "it is being changed"
    )
    repair_stores()
    repaired.append(
        f"{ARRAY_STORES} and gh-91153 (an array's and a bytearray's stores call the value's "
        "__index__ after taking the slot, which it may free): they convert the value first, "
        "however they are reached"
    )
    repair_dict_clear()
    repaired.append(
        f"{DICT_CLEAR} (an insert whose key's __eq__ cleared the dict stored a key in a "
        "table for str keys only): dict.clear leaves a table for any keys"
    )
    repair_sequence_iter()
    repaired.append(
        f"{SEQUENCE_ITER} (the iterator over a class with __getitem__ and no __iter__ drops "
        "its reference to the sequence twice when __getitem__ re-enters it): an iterator that "
        "ended keeps the sequence"
    )
    repair_descriptor_reinit()
    repaired.append(
        f"{DESCRIPTOR_REINIT} (each calls what it holds without a reference of its own, and "
        "__init__ run again from inside that call freed it): they take __init__ once"
    )
    repair_held_callables()
    repaired.append(
        f"{DEFAULTDICT_MISSING}, and {ARRAY_TOFILE}: the factory is held while it runs, and "
        "tofile writes from a copy"
    )
    repair_borrowed_reprs()
    repaired.append(
        f"{BORROWED_REPRS} (an item whose own repr dropped it was read after it was freed): "
        "they hold what they format"
    )
    repair_unicode_errors()
    repaired.append(
        f"{UNICODE_ERROR_STR} (the Unicode errors' str() reads object[start] for a negative "
        "start: memory before the object): their __str__ reads it only inside the object"
    )
    repair_alias_subst()
    repaired.append(
        f"{ALIAS_SUBST} (substituting a builtin generic alias copies pointers out of whatever "
        "an argument's __typing_subst__ returned): only typing's own arguments are substituted"
    )
    repair_group_split()
    repaired.append(
        f"{GROUP_SPLIT} (except* copies two pointers out of whatever a group's split() "
        "returned): no class derives from an exception group, so split() is CPython's own"
    )
    repair_type_writes()
    repaired.append(
        f"{TYPE_CACHE} (a class attribute's old value is released before the type's caches "
        "are told, so a finalizer it runs reads it back from them, freed): type's __setattr__ "
        "and __delattr__ hold it until CPython has invalidated them"
    )
    repair_decimal_compare()
    repair_decimal_signals()
    repaired.append(
        f"{DECIMAL_CONTEXT} (Decimal's comparisons and __format__ borrow the current context "
        "and run the snippet's code before they use it): they hold it; "
        f"{DECIMAL_SIGNALS} (a context's traps and flags point into it without a reference): "
        "a context whose traps or flags were read lives as long as the worker"
    )
    repair_bytearray_init()
    repaired.append(
        f"{BYTEARRAY_INIT} (appending in place, bytearray(iterable) forgets that deleting from "
        "its front moved the data into the block, and writes past its end): the iterable's "
        "bytes are made before CPython copies them"
    )
    check_lru_cache()
    repaired.append(
        f"{LRU_EVICTION} (functools' C lru_cache uses the link it evicts after a key's __eq__ "
        "emptied the cache and freed it): functools caches through its pure-Python wrapper"
    )
    repair_property_copy()
    repaired.append(
        f"{PROPERTY_COPY} (property.getter, setter and deleter release a None they do not "
        "own): they never pass None to CPython's"
    )
    repair_date_ctime()
    repaired.append(
        f"{DATE_CTIME} (a date made from pickle state is not range-checked, and ctime() indexes "
        "its day names with the weekday of year 0, which is negative): ctime() refuses a year "
        "before 1"
    )
    detail = f"CPython {version}; repaired in the worker: " + "; ".join(repaired)
    return {"name": "interpreter", "active": True, "detail": detail}


def repair_list_order() -> bool:
    """Apply the gh-120298 repair where the interpreter needs it; False where it does not."""
    if sys.version_info >= _FIXED_IN:
        return False
    _check_layout()
    generic = _generic_slot()
    original = _slot(list).value
    if original == generic:
        return True  # already repaired (a second call in the same process)
    _install(list, _ORDERINGS)
    _repoint(list, _slot, original, generic)
    missed = [c for c in [list, *subclasses(list)] if _slot(c).value == original]
    if missed or list.__lt__ is not _ORDERINGS["__lt__"]:
        raise RepairError(f"list comparison is still CPython's in {missed or [list]}")
    return True


# -- bytearray -------------------------------------------------------------------------------

BYTEARRAY_READS = "gh-142557"
"""CPython's issue for ``bytearray % args``, whose ``__repr__`` may empty the format."""

_INDEXED = ("find", "rfind", "index", "rindex", "count")
_AFFIXED = ("startswith", "endswith")


def _buffer(value: Any) -> bool:
    """A bytes-like object, which CPython reads through its buffer (no code of the
    snippet's: a class cannot implement the buffer protocol in Python)."""
    return issubclass(type(value), bytes | bytearray | memoryview)


def _byte_or_buffer(value: Any) -> Any:
    if _buffer(value) or type(value) is int or not hasattr(type(value), "__index__"):
        return value
    return operator.index(value)


def _bound(value: Any) -> Any:
    return value if value is None or type(value) is int else operator.index(value)


def _exact_sep(sep: Any) -> Any:
    """A ``hex`` separator as an exact str or bytes (copied by the type's own C method,
    never by the snippet's ``__str__``/``__bytes__``/``__len__``)."""
    if isinstance(sep, str) and type(sep) is not str:
        return str.__str__(sep)
    if isinstance(sep, bytes) and type(sep) is not bytes:
        return bytes.__bytes__(sep)
    return sep


def _own(name: str, self: Any) -> None:
    if not issubclass(type(self), bytearray):
        raise TypeError(
            f"descriptor '{name}' for 'bytearray' objects doesn't apply to a "
            f"'{type(self).__name__}' object"
        )


def _named(function: Any, name: str, original: Any) -> Any:
    function.__name__ = name
    function.__qualname__ = f"bytearray.{name}"
    function.__module__ = "builtins"
    function.__doc__ = original.__doc__
    return function


def _indexed(name: str, original: Any) -> Any:
    def method(self: Any, sub: Any, start: Any = None, end: Any = None, /) -> Any:
        _own(name, self)
        return original(self, _byte_or_buffer(sub), _bound(start), _bound(end))

    return _named(method, name, original)


def _affixed(name: str, original: Any) -> Any:
    def method(self: Any, affix: Any, start: Any = None, end: Any = None, /) -> Any:
        _own(name, self)
        return original(self, affix, _bound(start), _bound(end))

    return _named(method, name, original)


def _bytearray_methods() -> dict[str, Any]:
    methods = vars(bytearray)
    contains = methods["__contains__"]

    def __contains__(self: Any, key: Any, /) -> bool:
        _own("__contains__", self)
        return bool(contains(self, _byte_or_buffer(key)))

    def __mod__(self: Any, value: Any, /) -> Any:
        _own("__mod__", self)
        with memoryview(self) as view:  # the format, copied before any __repr__ runs
            template = view.tobytes()
        return bytearray(template % value)

    def __rmod__(self: Any, value: Any, /) -> Any:
        _own("__rmod__", self)
        return NotImplemented

    made = {name: _indexed(name, methods[name]) for name in _INDEXED}
    made.update({name: _affixed(name, methods[name]) for name in _AFFIXED})
    for function in (__contains__, __mod__, __rmod__):
        made[function.__name__] = _named(function, function.__name__, methods[function.__name__])
    made["hex"] = _hex(bytearray)
    return made


def _hex(cls: type) -> Any:
    """``cls.hex`` (bytearray's, memoryview's) taking its separator exact: CPython takes the
    buffer pointer, then calls ``len(sep)``, and a ``str`` or ``bytes`` subclass's ``__len__``
    may empty the buffer (or release the view and resize its exporter) under it (gh-143195)."""
    native = vars(cls)["hex"]

    def hex(self: Any, *args: Any, **kwargs: Any) -> Any:
        if args:
            args = (_exact_sep(args[0]), *args[1:])
        if "sep" in kwargs:
            kwargs["sep"] = _exact_sep(kwargs["sep"])
        return native(self, *args, **kwargs)  # which checks self's type

    hex.__name__, hex.__qualname__, hex.__module__ = "hex", f"{cls.__name__}.hex", "builtins"
    hex.__doc__ = native.__doc__
    return hex


def _generic_table_slots() -> tuple[int, int]:
    """The ``nb_remainder`` and ``sq_contains`` of a class that defines ``__mod__`` and
    ``__contains__`` in Python."""
    remainder, contains = _python_slots(
        ("__mod__", "__contains__"),
        (_in_table(_AS_NUMBER, _NB_REMAINDER), _in_table(_AS_SEQUENCE, _SQ_CONTAINS)),
    )
    return remainder, contains


def _python_slots(
    methods: tuple[str, ...], slots: tuple[Callable[[type], ctypes.c_void_p], ...]
) -> list[int]:
    """What ``slots`` hold in a class that defines ``methods`` in Python (the generic slots
    that call them), or a refusal where one is empty."""

    def method(self: object, *args: object) -> object:
        return NotImplemented

    probe = type("Probe", (), dict.fromkeys(methods, method))
    found = [slot_of(probe).value or 0 for slot_of in slots]
    if not all(found):
        raise RepairError(f"the slots of a Python class's {methods} are not where expected")
    return found


def repair_bytearray() -> None:
    """bytearray's methods that hand CPython a pointer into the buffer before they run the
    snippet's code take their arguments converted, and ``%`` formats a copy."""
    _check_layout()
    remainder, contains = _generic_table_slots()
    slots = (
        (_AS_NUMBER, _NB_REMAINDER, remainder),
        (_AS_SEQUENCE, _SQ_CONTAINS, contains),
    )
    if all(_table_slot(bytearray, t, f).value == g for t, f, g in slots):
        return  # already repaired (a second call in the same process)
    originals = [_table_slot(bytearray, t, f).value for t, f, _ in slots]
    made = _bytearray_methods()
    _install(bytearray, made)
    for (table, field, generic), original in zip(slots, originals, strict=True):
        _repoint(bytearray, _in_table(table, field), original, generic)
    viewed = _hex(memoryview)
    _install(memoryview, {"hex": viewed})
    if (
        bytearray.find is not made["find"]
        or memoryview.hex is not viewed
        or any(_table_slot(bytearray, t, f).value != g for t, f, g in slots)
    ):
        raise RepairError("bytearray is still CPython's")


# -- list slices ------------------------------------------------------------------------------

LIST_SLICES = "gh-120384"
"""CPython's issue for list_ass_subscript writing through a stale ``ob_item``."""


def _list_setitem() -> Any:
    native = vars(list)["__setitem__"]

    def __setitem__(self: Any, key: Any, value: Any, /) -> None:
        # CPython unpacks an extended slice, takes the list's item array, then iterates the
        # value (PySequence_Fast): a value whose iteration empties the list has it write
        # through the freed array (gh-120384). A list or tuple is not iterated by CPython.
        if type(key) is slice and type(value) is not list and type(value) is not tuple:
            try:
                items = iter(value)
            except TypeError:
                pass  # CPython's own error
            else:
                value = list(items)
        native(self, key, value)

    __setitem__.__qualname__ = "list.__setitem__"
    __setitem__.__module__ = "builtins"
    __setitem__.__doc__ = native.__doc__
    return __setitem__


def _generic_ass_subscript() -> int:
    return _generic_store_slots()[0]


def repair_list_slices() -> None:
    """``lst[a:b:c] = it`` reaches CPython with ``it`` already a list."""
    _check_layout()
    generic = _generic_ass_subscript()
    original = _table_slot(list, _AS_MAPPING, _MP_ASS_SUBSCRIPT).value
    if original == generic:
        return
    made = _list_setitem()
    _install(list, {"__setitem__": made})
    _repoint(list, _in_table(_AS_MAPPING, _MP_ASS_SUBSCRIPT), original, generic)
    if (
        list.__setitem__ is not made
        or _table_slot(list, _AS_MAPPING, _MP_ASS_SUBSCRIPT).value != generic
    ):
        raise RepairError("list slice assignment is still CPython's")


# -- deque.index ------------------------------------------------------------------------------

DEQUE_INDEX = "gh-115243"


def repair_deque_index() -> None:
    """The deque's own ``index`` (so ``super(deque, d).index`` too) holds what it compares."""
    import collections

    from runtime.worker._vetted import Deque

    made = vars(Deque)["index"]
    if vars(collections.deque).get("index") is not made:
        _install(collections.deque, {"index": made})


# -- zoneinfo --------------------------------------------------------------------------------

ZONEINFO_INDEX = "gh-145883"
"""CPython's issue for the C TZif loader's off-by-one transition index check."""


def _checked_load_data(load_data: Callable[..., Any]) -> Callable[..., Any]:
    def checked(fobj: Any) -> Any:
        data = load_data(fobj)
        trans_idx, utcoff = data[0], data[2]
        for index in trans_idx:
            if not 0 <= index < len(utcoff):
                raise ValueError(f"Invalid transition index found while reading TZif: {index}")
        return data

    checked.__name__ = checked.__qualname__ = "load_data"
    checked.__module__ = "zoneinfo._common"
    checked.__wrapped_native__ = load_data  # type: ignore[attr-defined]
    return checked


def repair_zoneinfo() -> None:
    """``_zoneinfo``'s ``load_data`` checks ``index > num_ttinfos`` where it means ``>=``; a
    transition to the index one past the local time types makes it read the ``_ttinfo``
    after its array (snippet bytes from ``ZoneInfo.from_file``) as object pointers. The C
    loader parses through ``zoneinfo._common.load_data`` (looked up on every load, for
    ``from_file``, ``no_cache`` and the constructor alike), which here refuses such data."""
    import zoneinfo._common as common

    if getattr(common.load_data, "__wrapped_native__", None) is None:
        common.load_data = _checked_load_data(common.load_data)
    repair_zoneinfo_clear_cache()


ZONEINFO_WEAK_CACHE = "gh-142783"
"""CPython's issue for ``get_weak_cache`` using a cache it no longer holds."""


def _clear_cache(native: Any) -> Any:
    def clear_cache(cls: Any, *, only_keys: Any = None) -> None:
        import zoneinfo

        if cls is zoneinfo.ZoneInfo:  # its own C caches, found without an attribute lookup
            native.__get__(None, cls)(only_keys=only_keys)
            return
        # a subclass's cache is ``cls._weak_cache``: C takes it, drops its reference and goes
        # on with a borrowed pointer, freed if a descriptor made it; here it is held
        cache = cls._weak_cache
        if only_keys is None:
            cache.clear()
        else:
            for key in list(only_keys):
                cache.pop(key, None)

    clear_cache.__qualname__ = "ZoneInfo.clear_cache"
    clear_cache.__module__ = "zoneinfo"
    clear_cache.__doc__ = native.__doc__
    return classmethod(clear_cache)


def repair_zoneinfo_clear_cache() -> None:
    """``ZoneInfo.clear_cache`` on a subclass (``super(ZoneInfo, Z).clear_cache`` too) holds
    the subclass's cache: CPython 3.11's ``get_weak_cache`` returns ``_weak_cache`` after
    dropping the only reference when a descriptor made it (gh-142783)."""
    import zoneinfo

    native = vars(zoneinfo.ZoneInfo)["clear_cache"]
    if type(native) is classmethod:
        return  # already repaired
    _install(zoneinfo.ZoneInfo, {"clear_cache": _clear_cache(native)})


# -- UnicodeError messages --------------------------------------------------------------------

UNICODE_ERROR_STR = "gh-123378"
"""CPython's issue for the Unicode errors' ``start``, which their ``__str__`` trusts."""

_STR = 17 * 8  # offsetof(PyTypeObject, tp_str) on a 64-bit CPython 3.11/3.12
_UNICODE_ERRORS = (UnicodeDecodeError, UnicodeEncodeError, UnicodeTranslateError)


def _str_slot(cls: type) -> ctypes.c_void_p:
    return ctypes.c_void_p.from_address(id(cls) + _STR)


def _generic_str_slot() -> int:
    """The ``tp_str`` of a class that defines ``__str__`` in Python."""

    class Shown:
        def __str__(self) -> str:
            return ""

    generic = _str_slot(Shown).value
    if not generic or generic == _str_slot(object).value:
        raise RepairError("the str slot of a Python class is not where it should be")
    return generic


def _bad_char(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"'\\x{code:02x}'"
    return f"'\\u{code:04x}'" if code <= 0xFFFF else f"'\\U{code:08x}'"


def _unicode_error_str(kind: type) -> Any:
    """``kind.__str__`` as CPython words it, reading the one bad byte or character only when
    ``start`` is inside the object (CPython 3.11 reads ``object[start]`` for a negative
    ``start`` too: memory before a bytes object's text, or a str's, with an error left set).
    The fields are read through ``kind``'s own descriptors, never a subclass's properties."""
    fields = {name: vars(kind)[name].__get__ for name in ("object", "reason", "start", "end")}
    encoding_of = None if kind is UnicodeTranslateError else vars(kind)["encoding"].__get__
    sequence: Any = bytes if kind is UnicodeDecodeError else str
    verb = {UnicodeDecodeError: "decode", UnicodeEncodeError: "encode"}.get(kind, "translate")

    def __str__(self: Any, /) -> str:
        held = fields["object"](self)
        if held is None:  # not initialised
            return ""
        reason = str(fields["reason"](self))
        codec = "" if encoding_of is None else f"'{encoding_of(self)!s}' codec "
        start, end = fields["start"](self), fields["end"](self)
        size = sequence.__len__(held) if isinstance(held, sequence) else -1
        if 0 <= start < size and end == start + 1:
            item = sequence.__getitem__(held, start)
            bad = f"byte 0x{item:02x}" if sequence is bytes else f"character {_bad_char(item)}"
            return f"{codec}can't {verb} {bad} in position {start}: {reason}"
        many = "bytes" if sequence is bytes else "characters"
        return f"{codec}can't {verb} {many} in position {start}-{end - 1}: {reason}"

    __str__.__qualname__ = f"{kind.__name__}.__str__"
    __str__.__module__ = "builtins"
    __str__.__doc__ = vars(kind)["__str__"].__doc__
    return __str__


def repair_unicode_errors() -> None:
    """The three Unicode errors' ``__str__`` check ``start`` before reading what it points at
    (gh-123378: fixed in CPython 3.14, never backported)."""
    _check_layout()
    generic = _generic_str_slot()
    for kind in _UNICODE_ERRORS:
        original = _str_slot(kind).value
        if original == generic:
            continue  # already repaired
        made = _unicode_error_str(kind)
        _install(kind, {"__str__": made})
        _repoint(kind, _str_slot, original, generic)
        if kind.__str__ is not made or _str_slot(kind).value != generic:
            raise RepairError(f"{kind.__name__}.__str__ is still CPython's")


# -- set changes ------------------------------------------------------------------------------

SET_GROWTH = "gh-141805"
"""CPython's issue for ``set.add`` counting an item twice when the item's ``__eq__`` adds to
the set (gh-139071: the count then walks ``clear`` and ``dealloc`` past the table)."""

_INIT = 37 * 8  # offsetof(PyTypeObject, tp_init) on a 64-bit CPython 3.11/3.12
_NB_INPLACE = {  # the in-place slots of tp_as_number, by the method each stands for
    "__isub__": 20 * 8,
    "__iand__": 26 * 8,
    "__ixor__": 27 * 8,
    "__ior__": 28 * 8,
}
_CHANGERS = (
    *("add", "update", "symmetric_difference_update", "intersection_update"),
    *("difference_update", "discard", "remove", "pop", "clear", "__init__", *_NB_INPLACE),
)
_CHANGING: list[Any] = []
"""The sets being changed right now, innermost last (a change never suspends, so they unwind
in order)."""
_enter, _leave = _CHANGING.append, _CHANGING.pop


def _rechange(name: str) -> RuntimeError:
    return RuntimeError(
        f"set.{name}() on a set that is still being changed (an item's __eq__, or the "
        f"iterable that fills the set, reached it): CPython 3.11 can count an item twice and "
        f"corrupt the set ({SET_GROWTH})"
    )


def _named_for_set(method: Any, name: str, native: Any) -> Any:
    method.__name__, method.__qualname__ = name, f"set.{name}"
    method.__module__, method.__doc__ = "builtins", native.__doc__
    return method


def _changer(name: str, native: Any) -> Any:
    # CPython 3.11's set_add_entry remembers a free slot, compares the item with one of the
    # same hash (running its __eq__), then fills the slot and counts the item: if that __eq__
    # filled the slot (an add, or an intersection_update that rebuilt the small table in
    # place), it was filled and counted already
    def method(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        if _CHANGING:
            for changing in _CHANGING:
                if changing is self:
                    raise _rechange(name)
        _enter(self)
        try:
            return native(self, *args, **kwargs)
        finally:
            _leave()

    return _named_for_set(method, name, native)


def _one_item(name: str, native: Any) -> Any:
    def method(self: Any, item: Any, /) -> Any:  # add, discard, remove: no packed arguments
        if _CHANGING:
            for changing in _CHANGING:
                if changing is self:
                    raise _rechange(name)
        _enter(self)
        try:
            return native(self, item)
        finally:
            _leave()

    return _named_for_set(method, name, native)


def _change_slots() -> tuple[dict[str, Callable[[type], ctypes.c_void_p]], dict[str, int]]:
    """Where a class keeps its ``tp_init`` and in-place number slots, by the method each
    stands for, and what they hold in a class that defines those methods in Python."""
    slots: dict[str, Callable[[type], ctypes.c_void_p]] = {
        "__init__": lambda cls: _slot_at(cls, _INIT),
        **{name: _in_table(_AS_NUMBER, at) for name, at in _NB_INPLACE.items()},
    }
    generic = dict(zip(slots, _python_slots(tuple(slots), tuple(slots.values())), strict=True))
    if generic["__init__"] == _slot_at(object, _INIT).value:
        raise RepairError("the init slot of a Python class is not where expected")
    return slots, generic


def _slot_at(cls: type, offset: int) -> ctypes.c_void_p:
    return ctypes.c_void_p.from_address(id(cls) + offset)


def repair_set_changes() -> None:
    """Every way into a change of an existing set (its methods, ``set(...)``'s init, ``|=``,
    ``&=``, ``^=``, ``-=``) refuses a set that is already being changed; a new set being filled
    natively (a display, a comprehension, ``a | b``) is reachable by nothing until it is made."""
    _check_layout()
    slots, generic = _change_slots()
    if all(slot_of(set).value == generic[name] for name, slot_of in slots.items()):
        return  # already repaired
    originals = {name: slot_of(set).value for name, slot_of in slots.items()}
    made = {name: _changer(name, vars(set)[name]) for name in _CHANGERS}
    made.update({name: _one_item(name, vars(set)[name]) for name in ("add", "discard", "remove")})
    _install(set, made)
    for name, slot_of in slots.items():
        _repoint(set, slot_of, originals[name], generic[name])
    if set.add is not made["add"] or any(s(set).value != generic[n] for n, s in slots.items()):
        raise RepairError("set changes are still CPython's")


# -- array and bytearray stores ---------------------------------------------------------------

ARRAY_STORES = "gh-142555"
"""CPython's issue for an array's stores calling ``__index__`` after taking the slot."""

_SQ_ASS_ITEM = 5 * 8  # tp_as_sequence->sq_ass_item
_TYPECODE: Any = vars(array.array)["typecode"].__get__


def exact_item(holder: Any, value: Any) -> Any:
    """``value`` as the exact int, float or str an array or bytearray would store: converted
    first, since CPython 3.11 stores after calling ``__index__``/``__float__``, into a buffer
    that the call may have resized or freed (gh-142555, gh-91153)."""
    if type(value) is int or type(value) is float:
        return value
    code = "B" if isinstance(holder, bytearray) else _TYPECODE(holder)  # never an override
    if code in "fd":
        if isinstance(value, str | bytes | bytearray):  # float() would parse them
            raise TypeError(f"must be real number, not {type(value).__name__}")
        return float(value)
    if code == "u":
        return value  # a str, read without calling anything
    return operator.index(value)


def _array_stores() -> dict[str, Any]:
    native = {name: vars(array.array)[name] for name in _ARRAY_STORES}

    def append(self: Any, value: Any, /) -> None:
        native["append"](self, exact_item(self, value))

    def insert(self: Any, index: Any, value: Any, /) -> None:
        native["insert"](self, operator.index(index), exact_item(self, value))

    def extend(self: Any, values: Any, /) -> None:
        if not isinstance(values, array.array):  # an array extends from its buffer natively
            values = [exact_item(self, value) for value in values]
        native["extend"](self, values)

    def fromlist(self: Any, values: Any, /) -> None:
        if type(values) is list:  # anything else: CPython's own TypeError
            values = [exact_item(self, value) for value in values]
        native["fromlist"](self, values)

    made = {"append": append, "insert": insert, "extend": extend, "fromlist": fromlist}
    made["__setitem__"] = _item_store(native["__setitem__"])
    for name, method in made.items():
        method.__name__, method.__qualname__ = name, f"array.{name}"
        method.__module__, method.__doc__ = "array", native[name].__doc__
    return made


_ARRAY_STORES = ("append", "insert", "extend", "fromlist", "__setitem__")


_SLICE_FIELDS = tuple(vars(slice)[name].__get__ for name in ("start", "stop", "step"))


def _exact_key(key: Any) -> Any:
    """An index or a slice as exact ints (or None): CPython 3.11's bytearray store and delete
    take the buffer pointer, then unpack the slice, running its bounds' ``__index__``, which
    may resize the buffer. Any other key goes on as given, for CPython's own TypeError."""
    if type(key) is int:
        return key
    if isinstance(key, slice):
        start, stop, step = (_bound(field(key)) for field in _SLICE_FIELDS)
        return slice(start, stop, step)
    return operator.index(key) if hasattr(type(key), "__index__") else key


def _item_store(native: Any) -> Any:
    def __setitem__(self: Any, key: Any, value: Any, /) -> None:
        key = _exact_key(key)
        if isinstance(key, slice):  # a slice takes a buffer, built before the store
            native(self, key, value)
        else:
            native(self, key, exact_item(self, value))

    return __setitem__


def _bytes_extend(native: Any) -> Any:
    def extend(self: Any, values: Any, /) -> None:
        # CPython 3.11 sizes the buffer by the iterator's __length_hint__ and, told 0, keeps
        # a byte of uninitialised memory (and writes one into the shared empty buffer,
        # gh-143003): anything but a buffer is made a list first
        try:
            memoryview(values).release()  # a buffer (an array too): read as CPython reads it
        except TypeError:
            if not hasattr(type(values), "__iter__"):
                raise TypeError(f"can't extend bytearray with {type(values).__name__}") from None
            values = [exact_item(self, value) for value in values]
        native(self, values)

    return extend


def _item_delete(native: Any) -> Any:
    def __delitem__(self: Any, key: Any, /) -> None:
        native(self, _exact_key(key))

    return __delitem__


def _generic_store_slots() -> tuple[int, int]:
    """The ``mp_ass_subscript`` and ``sq_ass_item`` of a class that defines ``__setitem__``."""
    mapping, item = _python_slots(
        ("__setitem__",),
        (_in_table(_AS_MAPPING, _MP_ASS_SUBSCRIPT), _in_table(_AS_SEQUENCE, _SQ_ASS_ITEM)),
    )
    return mapping, item


def repair_stores() -> None:
    """An array's ``append``, ``insert``, ``extend``, ``fromlist`` and item store, and a
    bytearray's item store, take their values as exact numbers, however they are reached
    (``bisect.insort`` calls ``insert`` natively, a class pattern captures the method)."""
    _check_layout()
    mapping, sequence = _generic_store_slots()
    slots = (
        (_in_table(_AS_MAPPING, _MP_ASS_SUBSCRIPT), mapping),
        (_in_table(_AS_SEQUENCE, _SQ_ASS_ITEM), sequence),
    )
    for kind, made in (
        (array.array, _array_stores()),
        (
            bytearray,
            {
                "__setitem__": _named(
                    _item_store(vars(bytearray)["__setitem__"]),
                    "__setitem__",
                    vars(bytearray)["__setitem__"],
                ),
                "__delitem__": _named(
                    _item_delete(vars(bytearray)["__delitem__"]),
                    "__delitem__",
                    vars(bytearray)["__delitem__"],
                ),
                "extend": _named(
                    _bytes_extend(vars(bytearray)["extend"]), "extend", vars(bytearray)["extend"]
                ),
            },
        ),
    ):
        if all(slot_of(kind).value == generic for slot_of, generic in slots):
            continue  # already repaired
        originals = [slot_of(kind).value for slot_of, _ in slots]
        _install(kind, made)
        for (slot_of, generic), original in zip(slots, originals, strict=True):
            _repoint(kind, slot_of, original, generic)
        if kind.__setitem__ is not made["__setitem__"] or any(
            slot_of(kind).value != generic for slot_of, generic in slots
        ):
            raise RepairError(f"{kind.__name__}'s stores are still CPython's")


# -- dict tables ------------------------------------------------------------------------------

DICT_CLEAR = "gh-140551"
"""CPython's issue for a dict whose key kind its insert checked before a lookup that emptied
it (a clear, or a refill that took another dict's table for str keys only)."""

_HELD = object()
"""A key no snippet holds: it keeps an emptied dict's table one for any keys while a merge
into it would otherwise take a copy of the other dict's table."""


def _merging(native: Any) -> Any:
    store, size, pop = vars(dict)["__setitem__"], dict.__len__, vars(dict)["pop"]

    def method(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        if size(self):
            return native(self, *args, **kwargs)
        # merged into an empty dict, CPython copies the other dict's table (for str keys
        # only, often): held non-empty, it inserts into a table for any keys
        store(self, _HELD, None)
        try:
            return native(self, *args, **kwargs)
        finally:
            pop(self, _HELD, None)  # gone already if the merge emptied the dict

    return method


def _dict_tables() -> dict[str, Any]:
    store, delete = vars(dict)["__setitem__"], vars(dict)["__delitem__"]
    native = {name: vars(dict)[name] for name in ("clear", "update", "__init__", "__ior__")}

    def clear(self: Any, /) -> None:
        # CPython 3.11 empties a dict onto the shared empty table, whose keys are all str:
        # an insert whose lookup ran a key's __eq__ that emptied the dict then stored its
        # key in a str-only table, read later as a str (popitem wrote before the table)
        native["clear"](self)
        store(self, 0, None)  # an int key: the table is one for any keys from here on
        delete(self, 0)

    merges = ("update", "__init__", "__ior__")
    made = {"clear": clear, **{name: _merging(native[name]) for name in merges}}
    for name, method in made.items():
        method.__name__, method.__qualname__ = name, f"dict.{name}"
        method.__module__, method.__doc__ = "builtins", native[name].__doc__
    return made


def repair_dict_clear() -> None:
    """``dict.clear`` leaves a table for any keys behind, never the shared empty one, and a
    merge into an empty dict (``update``, ``__init__``, ``|=``) never takes another's."""
    native = vars(dict)["clear"]
    if type(native) is not type(vars(dict)["get"]):
        return  # already repaired
    changes, generic = _change_slots()
    # not tp_init: C subclasses (ctypes' StgDict) call dict's own from theirs, which would
    # find theirs again; an existing dict is re-initialised by calling __init__, found here
    slots = {"__ior__": changes["__ior__"]}
    originals = {name: slot_of(dict).value for name, slot_of in slots.items()}
    made = _dict_tables()
    _install(dict, made)
    for name, slot_of in slots.items():
        _repoint(dict, slot_of, originals[name], generic[name])
    # defaultdict's own __init__ merges through dict's C init, not the method above
    native_init = vars(collections.defaultdict)["__init__"]
    init = _merging(native_init)
    init.__qualname__, init.__module__ = "defaultdict.__init__", "collections"
    init.__doc__ = native_init.__doc__
    _install(collections.defaultdict, {"__init__": init})
    if dict.clear is not made["clear"] or any(
        slot_of(dict).value != generic[name] for name, slot_of in slots.items()
    ):
        raise RepairError("dict's tables are still CPython's")


# -- the sequence iterator --------------------------------------------------------------------

SEQUENCE_ITER = "gh-156310"
"""CPython's issue for the sequence iterator releasing its sequence twice (there from threads;
in 3.11 from a ``__getitem__`` that re-enters the iterator)."""

_ITERNEXT = 28 * 8  # offsetof(PyTypeObject, tp_iternext) on a 64-bit CPython 3.11/3.12


class _Sequence:
    def __getitem__(self, index: int) -> int:
        if index:
            raise IndexError(index)
        return 0


_SEQUENCE_ITER = type(iter(_Sequence()))
_ENDED = sys.maxsize
"""The index of a sequence iterator that ended (it keeps its sequence, as upstream's does)."""


def _sequence_next() -> Any:
    """``__next__`` of CPython's iterator over a class with ``__getitem__`` and no
    ``__iter__``, as upstream's fix has it: an iterator that ended keeps its reference to the
    sequence and marks its index instead. CPython 3.11's takes the sequence from the iterator,
    calls ``__getitem__`` and, on ``IndexError``, drops the iterator's reference; a
    ``__getitem__`` that calls ``next()`` on the same iterator ends it inside, and the outer
    call drops that reference again, leaving the snippet a name for freed memory (an attack
    pass turned it into a read and write of any address)."""
    reduce = vars(_SEQUENCE_ITER)["__reduce__"]  # (iter, (seq,), index), or (iter, ((),))
    set_index = vars(_SEQUENCE_ITER)["__setstate__"]

    def __next__(self: Any, /) -> Any:
        if type(self) is not _SEQUENCE_ITER:
            raise TypeError(
                "descriptor '__next__' requires a 'iterator' object but received a "
                f"'{type(self).__name__}'"
            )
        state = reduce(self)
        if len(state) != 3 or state[2] == _ENDED:  # ended in C before the repair, or here
            raise StopIteration
        (seq,), index = state[1], state[2]
        try:
            item = seq[index]
        except (IndexError, StopIteration):
            set_index(self, _ENDED)
            raise StopIteration from None
        now = reduce(self)[2]  # as CPython's: one past where it is now, unless it ended
        if now != _ENDED:
            set_index(self, now + 1)
        return item

    __next__.__qualname__ = "iterator.__next__"
    __next__.__module__ = "builtins"
    __next__.__doc__ = vars(_SEQUENCE_ITER)["__next__"].__doc__
    return __next__


def _in_python(cls: type, name: str, at: int, make: Callable[[], Any]) -> bool:
    """``cls``'s type slot at offset ``at`` made the one a class with ``name`` in Python has,
    and ``make()`` installed as ``name``, for ``cls`` and every subclass that still holds
    CPython's slot; False if it already was (a second call in the same process)."""

    def slot_of(kind: type) -> ctypes.c_void_p:
        return _slot_at(kind, at)

    (generic,) = _python_slots((name,), (slot_of,))
    original = slot_of(cls).value
    if original == generic:
        return False
    made = make()
    _install(cls, {name: made})
    _repoint(cls, slot_of, original, generic)
    if vars(cls)[name] is not made or slot_of(cls).value != generic:
        raise RepairError(f"{cls.__name__}.{name} is still CPython's")
    return True


def repair_sequence_iter() -> None:
    """The sequence iterator's ``next()`` is :func:`_sequence_next`'s, however it is reached
    (``for``, ``next()``, C code advancing it: ``filterfalse``, ``list()``)."""
    _check_layout()
    probe = iter(_Sequence())
    next(probe)
    if vars(_SEQUENCE_ITER)["__reduce__"](probe)[2] != 1:
        raise RepairError("the sequence iterator does not keep its index where expected")
    _in_python(_SEQUENCE_ITER, "__next__", _ITERNEXT, _sequence_next)
    if list(iter(_Sequence())) != [0]:
        raise RepairError("the sequence iterator is still CPython's")


# -- descriptors made again -------------------------------------------------------------------

DESCRIPTOR_REINIT = "staticmethod, classmethod and property re-initialised"
"""No CPython issue yet: ``sm_call`` and ``property_descr_get``/``_set`` call the callable they
hold on a borrowed reference, and ``__init__`` run again on the same object replaces it."""

_HOLDERS: tuple[tuple[type, tuple[str, ...]], ...] = (
    (staticmethod, ("__func__",)),
    (classmethod, ("__func__",)),
    (property, ("fget", "fset", "fdel")),
)


def _made_once(cls: type, held: tuple[str, ...]) -> Any:
    """``cls.__init__`` that refuses an object already holding a callable. CPython 3.11 calls
    what a staticmethod or property holds without a reference of its own; a builtin method
    held there (``L().extend``) runs on a ``self`` only the method holds, so ``__init__`` run
    again from inside the call (``super().__init__`` of a subclass, ``methodcaller``,
    ``P.v.__init__(...)``) frees that ``self`` while C still writes to it."""
    native = vars(cls)["__init__"]
    readers = [vars(cls)[name].__get__ for name in held]  # the type's own members

    def __init__(self: Any, /, *args: Any, **kwargs: Any) -> None:
        if not issubclass(type(self), cls):
            raise TypeError(
                f"descriptor '__init__' requires a '{cls.__name__}' object but received a "
                f"'{type(self).__name__}'"
            )
        if any(read(self) is not None for read in readers):
            raise RuntimeError(
                f"{cls.__name__}.__init__() on a {cls.__name__} already made: what it holds "
                f"may be running; make a new {cls.__name__} instead"
            )
        native(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__name__}.__init__"
    __init__.__module__ = "builtins"
    __init__.__doc__ = native.__doc__
    return __init__


def repair_descriptor_reinit() -> None:
    """``staticmethod``, ``classmethod`` and ``property`` take ``__init__`` once, however it is
    reached: their init slot is the one a class with a Python ``__init__`` has."""
    _check_layout()
    for cls, held in _HOLDERS:
        _in_python(cls, "__init__", _INIT, functools.partial(_made_once, cls, held))


# -- defaultdict's factory and array.tofile ---------------------------------------------------

DEFAULTDICT_MISSING = "defaultdict.__missing__ calls a factory it does not hold"
ARRAY_TOFILE = "array.tofile reads blocks of a buffer its file's write may shrink"


def _defaultdict_missing() -> Any:
    factory_of = vars(collections.defaultdict)["default_factory"].__get__

    def __missing__(self: Any, key: Any, /) -> Any:
        factory = factory_of(self)  # held: setting default_factory inside it frees nothing
        if factory is None:
            raise KeyError(key)
        value = factory()
        self[key] = value
        return value

    __missing__.__qualname__, __missing__.__module__ = "defaultdict.__missing__", "collections"
    __missing__.__doc__ = vars(collections.defaultdict)["__missing__"].__doc__
    return __missing__


def _array_tofile() -> Any:
    native = vars(array.array)["tofile"]
    to_bytes = vars(array.array)["tobytes"]
    block = 64 * 1024  # as CPython writes it

    def tofile(self: Any, f: Any, /) -> None:
        data = to_bytes(self)  # a copy: the file's write may shrink the array
        for start in range(0, len(data), block):
            f.write(data[start : start + block])

    tofile.__qualname__, tofile.__module__ = "array.tofile", "array"
    tofile.__doc__ = native.__doc__
    return tofile


def repair_held_callables() -> None:
    """``defaultdict.__missing__`` holds the factory it calls (CPython's borrows it, so a
    factory that sets ``default_factory`` frees itself mid-call), and ``array.tofile`` writes
    from a copy (CPython's reads each block from the array's buffer after the file's
    ``write`` may have shrunk it: a read past its end)."""
    missing = vars(collections.defaultdict)["__missing__"]
    if type(missing) is not types.FunctionType:
        _install(collections.defaultdict, {"__missing__": _defaultdict_missing()})
    if type(vars(array.array)["tofile"]) is not types.FunctionType:
        _install(array.array, {"tofile": _array_tofile()})


# -- reprs of what a container lends ----------------------------------------------------------

BORROWED_REPRS = "list and exception reprs format items they do not hold"
"""No CPython issue yet: ``list_repr`` formats each item on a borrowed reference, and the
exceptions' reprs and strs their ``args`` and attributes; an item whose own repr drops it
(``lst.clear()``, ``e.args = ()``) is then freed while a C repr of several parts (a
``slice``'s, a ``timezone``'s) goes on reading it."""

_REPR = 11 * 8  # offsetof(PyTypeObject, tp_repr) on a 64-bit CPython 3.11/3.12


def _members(cls: type, names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    readers = [  # the type's own descriptors, wherever in its bases CPython defines them
        next(vars(k)[name] for k in cls.__mro__ if name in vars(k)).__get__ for name in names
    ]
    return lambda self: tuple(read(self) for read in readers)


def _holding(cls: type, name: str, hold: Callable[[Any], Any]) -> Any:
    """``cls``'s C ``name`` (``__repr__`` or ``__str__``), run while what it formats is held."""
    native = vars(cls)[name]

    def formatted(self: Any, /) -> Any:
        if issubclass(type(self), cls):
            held = hold(self)  # noqa: F841  # alive until CPython's own repr has returned
        return native(self)

    formatted.__name__, formatted.__qualname__ = name, f"{cls.__name__}.{name}"
    formatted.__module__, formatted.__doc__ = "builtins", native.__doc__
    return formatted


_OS_ERROR_PARTS = ("args", "errno", "strerror", "filename", "filename2")
_SYNTAX_ERROR_PARTS = ("args", "msg", "filename", "lineno", "offset", "text")
_HELD_REPRS: tuple[tuple[type, str, Callable[[Any], Any]], ...] = (
    (list, "__repr__", list.copy),
    (BaseException, "__repr__", vars(BaseException)["args"].__get__),
    (BaseException, "__str__", vars(BaseException)["args"].__get__),
    (KeyError, "__str__", vars(BaseException)["args"].__get__),
    (OSError, "__str__", _members(OSError, _OS_ERROR_PARTS)),
    (SyntaxError, "__str__", _members(SyntaxError, _SYNTAX_ERROR_PARTS)),
)


def repair_borrowed_reprs() -> None:
    """``list.__repr__`` and the exceptions' ``__repr__`` and ``__str__`` (BaseException's,
    KeyError's, OSError's, SyntaxError's) hold what they format while CPython's runs: their
    slots are those of a class with the method in Python, for each type and every subclass
    that inherits CPython's."""
    _check_layout()
    offsets = {"__repr__": _REPR, "__str__": _STR}
    for cls, name, hold in _HELD_REPRS:
        _in_python(cls, name, offsets[name], functools.partial(_holding, cls, name, hold))


# -- substitution in a builtin generic alias ------------------------------------------------

ALIAS_SUBST = "gh-138479"
"""CPython's issue for ``_Py_subs_parameters`` taking ``__typing_subst__``'s result as a tuple:
for an argument whose ``__typing_is_unpacked_typevartuple__`` is true it copies as many
pointers as the result's ``ob_size`` from where a tuple keeps its items, whatever the result
is (an ``array`` shrunk in place gives pointers the snippet wrote: a forged object)."""

_MP_SUBSCRIPT = 1 * 8  # tp_as_mapping->mp_subscript


def _substitutable() -> frozenset[type]:
    """The classes whose instances may stand among a builtin alias's arguments when it is
    substituted, told by identity: typing's own (type variables, its aliases and special
    forms), the builtin aliases, and plain values; all exist before any snippet class."""
    import typing

    kinds: set[type] = {type(None), type(...), str, bytes, int, float, bool, complex}
    kinds.update((tuple, list, types.GenericAlias, types.UnionType))
    for base in (typing._Final, types.GenericAlias):
        kinds.update((base, *subclasses(base)))
    kinds.update(value for value in vars(typing).values() if isinstance(value, type))
    return frozenset(kinds)


def _alias_subscript(cls: type, kinds: frozenset[type]) -> Any:
    """``cls.__getitem__`` that lets CPython substitute only arguments of :func:`_substitutable`
    classes, or classes themselves (which CPython never asks for ``__typing_subst__``)."""
    native = vars(cls)["__getitem__"]
    arguments = vars(cls)["__args__"].__get__
    parameters = vars(cls)["__parameters__"].__get__

    def __getitem__(self: Any, item: Any, /) -> Any:
        if issubclass(type(self), cls) and parameters(self):  # else CPython substitutes nothing
            for arg in arguments(self):
                kind = type(arg)
                if kind not in kinds and not issubclass(kind, type):
                    raise TypeError(
                        f"a {kind.__name__} object cannot be substituted in "
                        f"{cls.__name__} arguments: CPython 3.11 trusts what its "
                        f"__typing_subst__ returns ({ALIAS_SUBST}); use typing.TypeVar"
                    )
        return native(self, item)

    __getitem__.__qualname__ = f"{cls.__name__}.__getitem__"
    __getitem__.__module__, __getitem__.__doc__ = "builtins", native.__doc__
    return __getitem__


def repair_alias_subst() -> None:
    """``list[p][x]`` and ``(int | list[p])[x]`` go through :func:`_alias_subscript`, however
    they are reached (an alias nested in another is substituted through the same slot)."""
    _check_layout()
    (generic,) = _python_slots(("__getitem__",), (_in_table(_AS_MAPPING, _MP_SUBSCRIPT),))
    kinds = _substitutable()
    for cls in (types.GenericAlias, types.UnionType):
        original = _table_slot(cls, _AS_MAPPING, _MP_SUBSCRIPT).value
        if original == generic:
            continue  # already repaired (a second call in the same process)
        made = _alias_subscript(cls, kinds)
        _install(cls, {"__getitem__": made})
        _repoint(cls, _in_table(_AS_MAPPING, _MP_SUBSCRIPT), original, generic)
        if vars(cls)["__getitem__"] is not made:
            raise RepairError(f"{cls.__name__} substitution is still CPython's")


# -- except* and a group's split -------------------------------------------------------------

GROUP_SPLIT = "gh-128049"
"""CPython's issue for ``except*`` taking the two items of whatever a group's ``split()``
returned from where a tuple keeps them (3.12.9 and 3.13.2 check it is a tuple)."""

_BASETYPE = 1 << 10  # Py_TPFLAGS_BASETYPE


def repair_group_split() -> None:
    """No class derives from ``BaseExceptionGroup`` or ``ExceptionGroup``, however it is made
    (a class statement, ``type()``, ``make_dataclass``): every group ``except*`` splits is
    CPython's own, whose ``split()`` answers a pair of groups or ``None`` (and the write guard
    keeps a ``split`` out of a group's own ``__dict__``)."""
    _check_layout()
    made = [cls for cls in subclasses(BaseExceptionGroup) if cls is not ExceptionGroup]
    if made:
        raise RepairError(f"classes already derive from BaseExceptionGroup: {made}")
    for cls in (BaseExceptionGroup, ExceptionGroup):
        flags = ctypes.c_ulong.from_address(id(cls) + _FLAGS)
        if flags.value != cls.__flags__:
            raise RepairError(f"{cls.__name__} is not laid out as in CPython 3.11")
        flags.value &= ~_BASETYPE
        if cls.__flags__ & _BASETYPE:
            raise RepairError(f"{cls.__name__} is still an acceptable base")


# -- class attribute writes and the type caches --------------------------------------------

TYPE_CACHE = "gh-118492"
"""CPython's issue for ``type_setattro`` releasing a class attribute's old value before
``PyType_Modified``: the method cache (and the specialized ``LOAD_ATTR``/``LOAD_METHOD``
caches) still hold it, borrowed, while the finalizer its release runs (a generator's
``finally``) reads the attribute back: a name for an object about to be freed."""

_SETATTRO = 19 * 8  # offsetof(PyTypeObject, tp_setattro) on a 64-bit CPython 3.11/3.12


def _type_writes() -> dict[str, Any]:
    """``type.__setattr__`` and ``__delattr__`` that hold the attribute's old value (read from
    the class's own dict, never through a descriptor) while CPython's ``type_setattro``,
    called through its C pointer (its wrapper refuses a type whose slot is not its own),
    replaces it and invalidates the caches; the old value is released only after."""
    native = vars(type)["__setattr__"]
    pointer = _slot_at(type, _SETATTRO).value
    if not pointer:
        raise RepairError("type has no attribute write slot")
    call = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.py_object, ctypes.c_void_p)(
        pointer
    )
    own = vars(type)["__dict__"].__get__  # the class's own namespace, as a read-only proxy

    def exact(cls: Any, name: Any, what: str) -> Any:
        if not issubclass(type(cls), type):  # the real class: no __class__ answers here
            raise TypeError(
                f"descriptor '{what}' requires a 'type' object but received a "
                f"'{type(cls).__name__}'"
            )
        if isinstance(name, str) and type(name) is not str:
            return str.__str__(name)  # CPython copies a str subclass's name too: no __hash__
        return name

    def __setattr__(cls: Any, name: Any, value: Any, /) -> None:
        name = exact(cls, name, "__setattr__")
        held = own(cls).get(name) if type(name) is str else None  # noqa: F841
        call(cls, name, id(value))  # value is held by this frame
        versioned(cls)

    def __delattr__(cls: Any, name: Any, /) -> None:
        name = exact(cls, name, "__delattr__")
        held = own(cls).get(name) if type(name) is str else None  # noqa: F841
        call(cls, name, None)
        versioned(cls)

    made = {"__setattr__": __setattr__, "__delattr__": __delattr__}
    for name, method in made.items():
        method.__qualname__, method.__module__ = f"type.{name}", "builtins"
        method.__doc__ = vars(type)[name].__doc__ if name in vars(type) else native.__doc__
    return made


_LOOKUP = ctypes.pythonapi._PyType_Lookup
_LOOKUP.argtypes, _LOOKUP.restype = (ctypes.py_object, ctypes.py_object), ctypes.c_void_p
_VERSIONING_NAME = sys.intern("__fabric_version__")


def versioned(cls: type) -> None:
    """``cls`` and every class made from it given a type version again, right after a write
    reset theirs: CPython 3.11's specialising interpreter may record version 0 in an
    attribute cache, which then matches any class whose version was just reset (gh-89811; a
    non-str key's ``__eq__`` run inside the specialiser's own dict lookup wrote to the class).
    A method-cache lookup of a short name gives a class its version."""
    for each in (cls, *subclasses(cls)):
        _LOOKUP(each, _VERSIONING_NAME)


_ANNOTATIONS = vars(type)["__annotations__"]


def settled(cls: type) -> type:
    """``cls`` with its ``__annotations__`` made, and a type version. Reading a class's
    annotations the first time makes an empty dict and resets the type version of the class
    and of every class made from it, as a write does (gh-89811's version 0, from a read that a
    snippet can time); made now, no later read changes the class."""
    if cls.__flags__ & _HEAPTYPE:
        with contextlib.suppress(AttributeError, TypeError):
            _ANNOTATIONS.__get__(cls)
    versioned(cls)
    return cls


def repair_type_writes() -> None:
    """Every write or delete of a class attribute (``C.x = v``, ``setattr``, ``del C.x``, a
    metaclass's ``super().__setattr__``) goes through :func:`_type_writes`: type's setattr
    slot, and every metaclass's that still holds CPython's, is the one a class with
    ``__setattr__`` in Python has."""
    _check_layout()
    (generic,) = _python_slots(("__setattr__",), (lambda cls: _slot_at(cls, _SETATTRO),))
    original = _slot_at(type, _SETATTRO).value
    if original == generic:
        return  # already repaired
    made = _type_writes()
    # not _install: these are never values a snippet may hold (type.__setattr__(C, ...) would
    # pass by the checks of ``C.x = v``), as CPython's wrappers were not
    (namespace,) = gc.get_referents(vars(type))
    namespace.update(made)
    ctypes.pythonapi.PyType_Modified(ctypes.py_object(type))
    _repoint(type, lambda cls: _slot_at(cls, _SETATTRO), original, generic)
    if vars(type)["__setattr__"] is not made["__setattr__"]:
        raise RepairError("type's attribute writes are still CPython's")

    class Probe:
        pass

    setattr(Probe, "attr", 1)  # noqa: B010  # through the repaired slot
    delattr(Probe, "attr")
    if hasattr(Probe, "attr") or _slot_at(type, _SETATTRO).value != generic:
        raise RepairError("type's attribute writes are not working after the repair")


# -- dates made from pickle state ------------------------------------------------------------

DATE_CTIME = "date and datetime ctime() of year 0"
"""No CPython issue yet: ``date(b'\\x00\\x00\\x01\\x00')`` (the pickle form: only the month is
checked) makes a date of year 0, whose ``ctime()`` reads ``DayNames[-2]``, a NULL, as a
string (a segfault; other days read other pointers before the table)."""


def _checked_ctime(cls: type) -> Any:
    native = vars(cls)["ctime"]
    year_of = vars(datetime_date())["year"].__get__  # the C member, never a subclass's

    def ctime(self: Any, /) -> Any:
        if isinstance(self, datetime_date()) and year_of(self) < 1:
            raise ValueError(f"year {year_of(self)} is out of range")
        return native(self)  # which checks self's type

    ctime.__qualname__, ctime.__module__ = f"{cls.__name__}.ctime", "datetime"
    ctime.__doc__ = native.__doc__
    return ctime


def datetime_date() -> type:
    import datetime

    return datetime.date


def repair_date_ctime() -> None:
    """``date.ctime`` and ``datetime.ctime`` refuse a year before 1, however they are reached."""
    import datetime

    for cls in (datetime.date, datetime.datetime):
        if type(vars(cls)["ctime"]) is not types.FunctionType:
            _install(cls, {"ctime": _checked_ctime(cls)})


# -- functools' C lru_cache ------------------------------------------------------------------

LRU_EVICTION = "gh-94879"
"""Open in 3.11: the C ``lru_cache`` wrapper, evicting its oldest link when full, runs a key's
``__eq__`` (the dict delete) while it still uses the link, and an ``__eq__`` that emptied the
cache freed it: a snippet's keys forge objects from the freed block."""


def _c_lru_wrapper(value: object) -> bool:
    kind = type(value)
    return kind.__name__ == "_lru_cache_wrapper" and kind.__module__ == "functools"


def check_lru_cache() -> None:
    """Refuse to start where functools caches through its C wrapper. The zygote's boot line
    deletes ``_functools._lru_cache_wrapper`` before anything imports functools, which then
    keeps its pure-Python ``_lru_cache_wrapper``; here that is checked, and that no cache was
    made through the C one before (by a module imported first)."""
    if type(functools._lru_cache_wrapper) is not types.FunctionType:
        raise RepairError(
            f"{LRU_EVICTION}: functools was imported before the zygote removed its C "
            "lru_cache; start the worker with python -I -S and the runtime's boot line"
        )
    made = [value for value in gc.get_objects() if _c_lru_wrapper(value)]
    if made:
        raise RepairError(
            f"{LRU_EVICTION}: {len(made)} caches were made through functools' C lru_cache "
            "before the zygote removed it"
        )


# -- property.getter(None) -------------------------------------------------------------------

PROPERTY_COPY = "gh-115618"
"""Fixed in 3.11.9 and 3.12.3: ``property.getter``, ``setter`` and ``deleter`` given ``None``
release a reference to ``None`` they do not own; repeated, ``None`` is freed (a crash)."""

_ACCESSORS = ("getter", "setter", "deleter")
_ACCESSED = ("fget", "fset", "fdel")
PROPERTY_PARTS: tuple[Callable[[Any], Any], ...] = tuple(
    vars(property)[held].__get__ for held in _ACCESSED
)
"""A property's ``fget``, ``fset`` and ``fdel``, read by the type's own members (never a
subclass's)."""


def _copying(name: str, natives: dict[str, Any]) -> Any:
    """``property.<name>`` that never hands CPython ``None``: ``p.getter(None)`` copies ``p``
    keeping its ``fget``, as the fixed CPython does, by whichever accessor holds a function
    to pass (all three ``None``: the copy is made by calling the property's class)."""
    readers = dict(zip(_ACCESSED, PROPERTY_PARTS, strict=True))
    doc_of = vars(property)["__doc__"].__get__

    def copy(self: Any, function: Any, /) -> Any:
        if not isinstance(self, property):
            raise TypeError(
                f"descriptor '{name}' for 'property' objects doesn't apply to a "
                f"'{type(self).__name__}' object"
            )
        if function is not None:
            return natives[name](self, function)
        for accessor, held in zip(_ACCESSORS, _ACCESSED, strict=True):
            current = readers[held](self)
            if current is not None:  # passing what it holds copies it unchanged
                return natives[accessor](self, current)
        return type(self)(None, None, None, doc_of(self))

    copy.__name__, copy.__qualname__, copy.__module__ = name, f"property.{name}", "builtins"
    copy.__doc__ = natives[name].__doc__
    return copy


def repair_property_copy() -> None:
    """``property``'s ``getter``, ``setter`` and ``deleter`` never pass ``None`` to CPython's
    (on every version: the fixed ones behave the same, at the cost of a Python call)."""
    natives = {name: vars(property)[name] for name in _ACCESSORS}
    if any(type(native) is types.FunctionType for native in natives.values()):
        return  # repaired already
    _install(property, {name: _copying(name, natives) for name in _ACCESSORS})


# -- bytearray(iterable) ---------------------------------------------------------------------

BYTEARRAY_INIT = "bytearray.__init__ appends past its buffer"
"""No CPython issue yet (still in main): ``bytearray(iterable)`` appends each item in place
while ``size + 1 < alloc``, forgetting that ``del b[:k]`` moved the data's start into the
block; an iterable that deletes from the front of the bytearray being made has CPython write
the bytes it yields past the end of the buffer (an attack pass overwrote the next object's
header with them: a read and write of any address)."""


def _byte(value: Any) -> int:
    number = value if type(value) is int else operator.index(value)
    if not 0 <= number < 256:
        raise ValueError("byte must be in range(0, 256)")
    return number


def _bytearray_init() -> Any:
    """``bytearray.__init__`` that hands CPython an iterable's bytes made into ``bytes``
    first: what CPython copies or counts (a buffer, a count, a str with its encoding) is
    CPython's own call; CPython's errors for the rest."""
    native = vars(bytearray)["__init__"]

    def __init__(self: Any, /, *args: Any, **kwargs: Any) -> None:
        if not issubclass(type(self), bytearray):
            raise TypeError(
                "descriptor '__init__' requires a 'bytearray' object but received a "
                f"'{type(self).__name__}'"
            )
        if len(args) == 1 and not kwargs:
            source = args[0]
        elif not args and list(kwargs) == ["source"]:
            source = kwargs["source"]
        else:
            native(self, *args, **kwargs)  # with an encoding: a str, never iterated
            return
        kind = type(source)
        if source is None or isinstance(source, (int, str)):
            native(self, source)  # a count, or CPython's error
            return
        if hasattr(kind, "__index__"):
            try:  # CPython's order: a count, unless __index__ raises TypeError
                count = operator.index(source)
            except TypeError:
                pass  # then a buffer or an iterable, as CPython falls through
            else:
                native(self, count)
                return
        try:
            memoryview(source).release()
        except TypeError:
            pass
        else:
            native(self, source)  # a buffer: copied, no snippet code runs
            return
        if not hasattr(kind, "__iter__") and not hasattr(kind, "__getitem__"):
            native(self, source)  # CPython's TypeError
            return
        native(self)  # emptied first, as CPython does before it iterates
        if kind is list or kind is tuple:  # made by CPython into new bytes, not into self
            try:
                values = bytes(source)
            except ValueError as exc:
                if str(exc) != "bytes must be in range(0, 256)":
                    raise
                raise ValueError("byte must be in range(0, 256)") from None
        else:
            values = bytes([_byte(item) for item in source])
        with memoryview(self) as view:  # what the iterable itself put there, kept first
            kept = view.tobytes()
        native(self, kept + values)

    __init__.__qualname__, __init__.__module__ = "bytearray.__init__", "builtins"
    __init__.__doc__ = native.__doc__
    return __init__


def repair_bytearray_init() -> None:
    """``bytearray(iterable)``, however it is reached (a subclass's ``super().__init__``),
    iterates in Python before CPython copies the bytes."""
    _check_layout()
    _in_python(bytearray, "__init__", _INIT, _bytearray_init)


# -- Decimal comparisons ---------------------------------------------------------------------

DECIMAL_CONTEXT = "gh-148382"
"""Open: ``_decimal``'s comparisons borrow the current context (``CURRENT_CONTEXT`` drops its
reference at once), then ask ``isinstance(other, numbers.Rational)``, which runs the snippet's
``__class__``; a ``localcontext()`` left from there frees the context, and a NaN comparison
then writes its status bits into the freed block (an attack pass changed an immutable
``bytes`` with them, and crashed the worker)."""

_COMPARISONS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")


def _holding_context(name: str) -> Any:
    """Decimal's method ``name`` holding the current context while CPython's runs: CPython
    borrows it, then runs the snippet's code (an operand's ``__class__``, an override dict's
    ``__eq__``), which could free it before CPython uses it (gh-148382)."""
    import decimal

    native = vars(decimal.Decimal)[name]
    current = decimal.getcontext  # a new reference to the thread's current context

    def held(self: Any, /, *args: Any) -> Any:
        context = current()  # alive until CPython's method returns, whatever it ran
        try:
            return native(self, *args)
        finally:
            del context

    held.__name__, held.__qualname__ = name, f"Decimal.{name}"
    held.__module__, held.__doc__ = "decimal", native.__doc__
    return held


def repair_decimal_compare() -> None:
    """Decimal's six comparisons hold the current context while CPython's run: the type's
    comparison slot becomes the one a class with ``__lt__`` in Python has, for ``Decimal``
    and every subclass that exists."""
    import decimal

    _check_layout()
    cls = decimal.Decimal
    generic, original = _generic_slot(), _slot(cls).value
    if original == generic:
        return
    _install(cls, {name: _holding_context(name) for name in _COMPARISONS})
    _repoint(cls, _slot, original, generic)
    if _slot(cls).value != generic:
        raise RepairError("Decimal's comparisons are still CPython's")


DECIMAL_SIGNALS = "gh-146011"
"""Open in 3.11: a context's ``traps`` and ``flags`` are dicts that point into the context
without a reference to it; one kept past its context's end writes and reads the freed block
(an attack pass forged a ``bytearray`` over all memory with them)."""

_GETATTRO = 18 * 8  # offsetof(PyTypeObject, tp_getattro) on a 64-bit CPython 3.11/3.12
_SIGNAL_HOLDERS: dict[int, Any] = {}
"""Every context whose ``traps`` or ``flags`` were read, by id, alive as long as the worker
(which runs one execution): its signal dicts may outlive every other reference to it."""


def _context_getattribute() -> Any:
    import decimal

    native = vars(decimal.Context)["__getattribute__"]  # CPython's, answering traps and flags
    keep = _SIGNAL_HOLDERS.setdefault

    def __getattribute__(self: Any, name: Any, /) -> Any:
        value = native(self, name)
        if isinstance(name, str) and str.__str__(name) in ("traps", "flags"):
            keep(id(self), self)
        return value

    __getattribute__.__qualname__ = "Context.__getattribute__"
    __getattribute__.__module__ = "decimal"
    __getattribute__.__doc__ = native.__doc__
    return __getattribute__


def repair_decimal_signals() -> None:
    """A context whose signal dicts were read stays alive; ``Decimal.__format__`` holds the
    current context as the comparisons do."""
    import decimal

    _check_layout()
    _in_python(decimal.Context, "__getattribute__", _GETATTRO, _context_getattribute)
    if type(vars(decimal.Decimal)["__format__"]) is not types.FunctionType:
        _install(decimal.Decimal, {"__format__": _holding_context("__format__")})


ZONE_LOOKUPS = "ZoneInfo.utcoffset, dst and tzname of any object"
"""No CPython issue yet: the C ``ZoneInfo``'s ``utcoffset``, ``dst`` and ``tzname`` take any
object as the datetime, ask it for ``toordinal()`` and its fields, then read its ``fold`` where
a datetime keeps it: from a ``bytes`` its data, an index into the zone's tables (an attack
pass read any address with it, and crashed the worker)."""


def _zone_lookup(name: str, native: Any) -> Any:
    import datetime

    def lookup(self: Any, dt: Any, /) -> Any:
        if dt is not None and not issubclass(type(dt), datetime.datetime):
            raise TypeError(
                f"{name}() argument 1 must be datetime.datetime or None, not {type(dt).__name__}"
            )
        return native(self, dt)

    lookup.__name__, lookup.__qualname__ = name, f"ZoneInfo.{name}"
    lookup.__module__, lookup.__doc__ = "zoneinfo", native.__doc__
    return lookup


def repair_zone_lookups() -> None:
    """The C ``ZoneInfo``'s ``utcoffset``, ``dst`` and ``tzname`` take a datetime or None."""
    import zoneinfo

    cls = zoneinfo.ZoneInfo
    natives = {name: vars(cls)[name] for name in ("utcoffset", "dst", "tzname")}
    if all(type(native) is types.FunctionType for native in natives.values()):
        return
    _install(cls, {name: _zone_lookup(name, native) for name, native in natives.items()})
