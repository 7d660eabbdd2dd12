"""The sandbox's own classes, and those the facades hand out, sealed before any snippet runs.

The write guard refuses ``C.name = value`` on any class the snippet did not define, but the
standard library writes with the real ``setattr`` (copy's reduce once wrote ``__setstate__``
onto one of the sandbox's classes, through a recipe whose constructor made it). CPython keeps
the classes it defines in C immutable (``Py_TPFLAGS_IMMUTABLETYPE``): setting or deleting an
attribute, ``__bases__`` or ``__name__`` is refused, and so is assigning ``__class__`` to or
from one. The zygote sets the same flag on the sandbox's own classes and on the classes the
facades hand out (the vetted modules' Python classes included), once every facade is built;
each worker inherits them sealed. A snippet's subclass of a sealed class is its own and stays
writable; the sandbox's classes that no facade hands out (``GuardedSlot``, ``Facade``, a
provider namespace's class...) are final to snippets besides.
"""

from __future__ import annotations

import ctypes
import gc
import os
import types
from collections.abc import Iterable
from typing import Any

from runtime.worker._guards import FINAL_CLASSES
from runtime.worker._repairs import settled

_IMMUTABLETYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not in C
_FLAGS = 21 * 8  # offsetof(PyTypeObject, tp_flags) on a 64-bit CPython 3.11/3.12
_RUNTIME = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

SEALED: list[type] = []
"""Every class sealed in this process (``fabric doctor``'s ``sandbox_classes`` probe tries to
write to each)."""


def _defined_here(cls: type) -> bool:
    """``cls`` is the sandbox's own: its module is one of ``runtime``'s, or a function in its
    namespace was written there (the sandbox names some of its classes after the module they
    stand in for)."""
    module = vars(cls).get("__module__")
    if type(module) is str and module.startswith("runtime."):
        return True
    for value in vars(cls).values():
        func = getattr(value, "__func__", value)
        code = getattr(func, "__code__", None)
        if code is not None and code.co_filename.startswith(_RUNTIME):
            return True
    return False


def _handed_out(members: Iterable[Any]) -> set[type]:
    """The classes among ``members`` (what the facades hand out), and those a member stands
    for as a base, with their bases."""
    found: set[type] = set()
    for member in members:
        if isinstance(member, type):
            found.update(member.__mro__)
            continue
        entries = getattr(member, "__mro_entries__", None)  # typing.NamedTuple stands for one
        if type(entries) is types.FunctionType:
            for base in entries(()):
                found.update(base.__mro__)
    return found


def seal(members: Iterable[Any]) -> list[type]:
    """Seal the sandbox's own classes (every class this process holds that it defined) and
    the classes in ``members`` with their bases; the classes sealed, in no order."""
    heap = [
        obj for obj in gc.get_objects() if issubclass(type(obj), type) and obj.__flags__ & _HEAPTYPE
    ]
    for cls in heap:  # every class's annotations made now: a first read resets type versions
        settled(cls)
    own = {cls for cls in heap if _defined_here(cls)}
    handed = _handed_out(members)
    FINAL_CLASSES.update(own - handed)  # no class statement derives from the sandbox's own
    made = [cls for cls in own | handed if cls.__flags__ & _HEAPTYPE]
    for cls in made:
        if not cls.__flags__ & _IMMUTABLETYPE:
            flags = ctypes.c_ulong.from_address(id(cls) + _FLAGS)
            if flags.value != cls.__flags__:
                raise RuntimeError(f"the class {cls.__name__} is not laid out as in CPython 3.11")
            flags.value |= _IMMUTABLETYPE
            ctypes.pythonapi.PyType_Modified(ctypes.py_object(cls))
    SEALED[:] = made
    return made


def unsealed() -> list[str]:
    """The sealed classes that still take a new attribute (none, where sealing held)."""
    opened = []
    for cls in SEALED:
        try:
            type.__setattr__(cls, "_fabric_probe", True)
        except TypeError:
            continue
        type.__delattr__(cls, "_fabric_probe")
        opened.append(f"{getattr(cls, '__module__', '?')}.{cls.__qualname__}")
    return opened
