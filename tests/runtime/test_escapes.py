"""Escape payloads, by technique family, each with the refusal it must meet.

Every payload is valid Python that, if it escaped, would reach ``os``, ``open``, the real
builtins, the host's files or its objects. Each must fail with the specific refusal written
beside it (not just "some error"), and the canary file must never appear. The value layer
itself is specified in ``test_values.py``; the kernel layer, with the language layer bypassed,
in ``test_isolation.py``.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import runtime
from fabric import Fabric

ESCAPE = 'open("{canary}", "w").write("escaped")'
PRIVATE = "names starting with '_' are private"
INTERNALS = "it exposes interpreter internals"
RESTRICTED = "is a restricted name: it exposes interpreter internals"
OWN_ONLY = "private names are readable on the snippet's own objects only"
RESERVED = "is a reserved name"


@dataclass(frozen=True)
class Refusal:
    code: str
    kind: str
    says: str
    """Words the error message must contain."""


CHAIN = """
class S(str):
    pass

def grab(path):
    s = S("{0." + path + ".no_such_attr}")
    try:
        super(S, s).format(print)
    except AttributeError as e:
        return e.obj

imp = grab("__func__.__globals__[__builtins__][__import__]")
os = imp("os")
"""
SUBST = (
    "import array\narr = array.array('Q', [1 << 20, id(bytearray), 2**63 - 1, 2**63 - 1, 0, 0])\n"
    "del arr[1:]\nclass P:\n    __typing_is_unpacked_typevartuple__ = True\n"
    "    def __typing_subst__(self, arg):\n        return arr\n"
)
"""An argument whose ``__typing_subst__`` answers an array shrunk in place: CPython 3.11 copies
the pointers the snippet wrote out of it as the substituted alias's arguments (gh-138479)."""

INJECTED = '"+str(' + ESCAPE + ')+"'
"""A field name that, pasted into the source dataclasses executes, would run ESCAPE there."""
MADE = "import dataclasses\n@dataclasses.dataclass\nclass D:\n    z: int = 1\n"
"""A dataclass the facade made, whose records the payloads below tamper with."""
FIELD = "f = dataclasses.fields(D)[0]\n"
FORGED_BASE = (
    "class B:\n    __dataclass_fields__ = {'z': f}\n"
    "    __dataclass_params__ = D.__dataclass_params__\n"
)
PLANTED = (
    "import string\nclass Holder:\n    pass\nbox = {}\nh = Holder()\nh.sub = box.__setitem__\n"
)
"""An object whose ``sub`` is a container's method: ``Template.substitute`` would hand it the
closure it converts matches with, stored where the snippet iterates it natively."""
STR_CLAIMING = "class S(str):\n    def isidentifier(self):\n        return True\n"


FAMILIES: dict[str, dict[str, Refusal]] = {
    "format walks": {
        "the issue's chain through super().format": Refusal(
            CHAIN, "policy", "'__func__' " + "is not allowed"
        ),
        "str.format attribute walk": Refusal("'{0.__class__}'.format(1)", "policy", PRIVATE),
        "format_map walk": Refusal("'{x.__class__}'.format_map({'x': 1})", "policy", PRIVATE),
        "unbound str.format": Refusal("str.format('{0.__class__}', 1)", "policy", PRIVATE),
        "unbound str.format_map": Refusal(
            "str.format_map('{x.__class__}', {'x': 1})", "policy", PRIVATE
        ),
        "super over the class": Refusal(
            "class S(str):\n    pass\nsuper(S, S).format('{0.__class__}', 1)", "policy", PRIVATE
        ),
        "str subclass instance": Refusal(
            "class S(str):\n    pass\nS('{0.__class__}').format(1)", "policy", PRIVATE
        ),
        "partial of str.format": Refusal(
            "import functools\nfunctools.partial(str.format, '{0.__class__}')(1)", "policy", PRIVATE
        ),
        "map over str.format": Refusal(
            "list(map(str.format, ['{0.__class__}'], [1]))", "policy", PRIVATE
        ),
        "str.format kept on a class": Refusal(
            "class D:\n    f = str.format\nD.f('{0.__class__}', 1)", "policy", PRIVATE
        ),
        "a max key that formats": Refusal(
            "max(['{0.__class__}'], key=lambda t: str.format(t, 1))", "policy", PRIVATE
        ),
        "nested format spec": Refusal("'{0:{1.__class__}}'.format(1, 2)", "policy", PRIVATE),
        "item then attribute": Refusal("'{0[a].__class__}'.format({'a': 1})", "policy", PRIVATE),
        "generator frame by format": Refusal(
            "'{0.gi_frame}'.format((x for x in []))", "policy", INTERNALS
        ),
        "globals of a function by format": Refusal(
            "def f():\n    pass\n'{0.__globals__}'.format(f)", "policy", PRIVATE
        ),
        "f-string attribute": Refusal("f'{().__class__.__subclasses__()}'", "policy", RESTRICTED),
    },
    "exception carriers": {
        "traceback of a caught error": Refusal(
            "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__", "policy", RESTRICTED
        ),
        "the context chain": Refusal(
            "try:\n    try:\n        1 / 0\n    except Exception:\n        raise ValueError()\nexcept ValueError as e:\n    e.__context__.__traceback__",
            "policy",
            RESTRICTED,
        ),
        "the cause chain": Refusal(
            "try:\n    raise ValueError() from KeyError()\nexcept ValueError as e:\n    e.__cause__.__traceback__",
            "policy",
            RESTRICTED,
        ),
        "traceback frame": Refusal(
            "try:\n    1 / 0\nexcept Exception as e:\n    tb = e.__traceback__\ntb.tb_frame.f_globals",
            "policy",
            RESTRICTED,
        ),
        "traceback next": Refusal(
            "try:\n    1 / 0\nexcept Exception as e:\n    tb = e.__traceback__\ntb.tb_next",
            "policy",
            RESTRICTED,
        ),
        "an exception leaving the sandbox": Refusal(
            "try:\n    1 / 0\nexcept Exception as e:\n    return e",
            "runtime",
            "cannot leave the sandbox",
        ),
    },
    "generator and coroutine frames": {
        "generator frame walk": Refusal(
            "g = (x for x in [1])\ng.gi_frame.f_back.f_back.f_globals", "policy", "restricted name"
        ),
        "generator code": Refusal(
            "g = (x for x in [1])\ng.gi_code.co_consts", "policy", "restricted name"
        ),
        "generator function frame": Refusal(
            "def gen():\n    yield 1\ngen().gi_frame.f_globals", "policy", "restricted name"
        ),
        "coroutine frame": Refusal(
            "async def c():\n    pass\nco = c()\nco.cr_frame.f_globals", "policy", "restricted name"
        ),
        "coroutine await": Refusal(
            "co = tools.read(path='notes.txt')\nco.cr_await", "policy", "restricted name"
        ),
        "async generator frame": Refusal(
            "async def ag():\n    yield 1\nag().ag_frame.f_globals", "policy", "restricted name"
        ),
        "driving a provider coroutine": Refusal(
            "c = tools.read(path='notes.txt')\nf = c.send(None)\nf.get_loop()",
            "policy",
            "await coroutines instead",
        ),
        "driving asyncio.sleep": Refusal(
            "import asyncio\nc = asyncio.sleep(0)\nc.send(None)",
            "policy",
            "await coroutines instead",
        ),
        "driving an async generator": Refusal(
            "async def g():\n    yield await tools.read(path='notes.txt')\na = g().asend(None)\nf = a.send(None)",
            "policy",
            "await coroutines instead",
        ),
        "an async generator step made natively by map, collected by +=": Refusal(
            "async def g():\n    yield await tools.read(path='notes.txt')\nsteps = []\n"
            "steps += map(g().asend, [None])\nfutures = []\nfutures += steps[0]",
            "runtime",
            "'coroutine' object is not iterable",
        ),
        "an async generator step collected by dict |=": Refusal(
            "import itertools\nasync def g():\n    yield await tools.read(path='notes.txt')\n"
            "step = list(map(g().asend, [None]))[0]\nd = {}\n"
            "d |= itertools.zip_longest(['k'], step)",
            "runtime",
            "'coroutine' object is not iterable",
        ),
        "throw into a coroutine": Refusal(
            "c = tools.read(path='notes.txt')\nc.throw(ValueError)",
            "policy",
            "await coroutines instead",
        ),
        "a gather future's loop": Refusal(
            "import asyncio\nasyncio.gather().get_loop()", "runtime", "has no attribute 'get_loop'"
        ),
    },
    "module attributes of allowed modules": {
        "uuid.os": Refusal(
            "import uuid\nuuid.os.system('touch {canary}')", "runtime", "uuid.os is not available"
        ),
        "json.codecs": Refusal(
            "import json\njson.codecs.open('{canary}', 'w')",
            "runtime",
            "json.codecs is not available",
        ),
        "datetime.sys": Refusal(
            "import datetime\ndatetime.sys.modules['os']",
            "runtime",
            "datetime.sys is not available",
        ),
        "asyncio.events": Refusal(
            "import asyncio\nasyncio.events.os", "runtime", "asyncio.events is not available"
        ),
        "collections.abc": Refusal(
            "import collections\ncollections.abc", "runtime", "collections.abc is not available"
        ),
        "random._os": Refusal("import random\nrandom._os", "policy", OWN_ONLY),
        "re internals": Refusal(
            "import re\nre.sre_compile", "runtime", "re.sre_compile is not available"
        ),
        "from-import of a submodule": Refusal(
            "from json import decoder",
            "runtime",
            "cannot import 'decoder' from json; json offers: JSONDecodeError",
        ),
        "from-import of a module attribute": Refusal(
            "from uuid import os", "runtime", "cannot import 'os' from uuid"
        ),
        "dotted import": Refusal("import json.decoder", "runtime", "import 'json' instead"),
        "import os": Refusal(
            "import os\nos.system('touch {canary}')", "runtime", "import of 'os' is not allowed"
        ),
        "import subprocess": Refusal(
            "import subprocess", "runtime", "import of 'subprocess' is not allowed"
        ),
        "string.Formatter": Refusal(
            "import string\nstring.Formatter()", "runtime", "string.Formatter is not available"
        ),
        "operator.attrgetter of a refused name": Refusal(
            "import operator\noperator.attrgetter('__class__.__subclasses__')(1)",
            "policy",
            "it exposes interpreter internals",
        ),
        "operator.attrgetter of a private name": Refusal(
            "import operator, json\noperator.attrgetter('_default_decoder')(json)",
            "policy",
            OWN_ONLY,
        ),
        "operator.methodcaller of a refused name": Refusal(
            "import operator\noperator.methodcaller('__reduce_ex__', 2)(1)",
            "policy",
            "it exposes interpreter internals",
        ),
        "typing.get_type_hints": Refusal(
            "import typing\ntyping.get_type_hints", "runtime", "get_type_hints is not available"
        ),
        "a forward reference's evaluation": Refusal(
            "import typing\ntyping.List['int'].__args__[0]._evaluate({}, {}, frozenset())",
            "policy",
            "attribute '_evaluate' of a ForwardRef object is not allowed",
        ),
        "time.sleep": Refusal(
            "import time\ntime.sleep(1)", "runtime", "time.sleep is not available"
        ),
        "io's files": Refusal(
            "import io\nio.open('/etc/passwd')", "runtime", "io.open is not available"
        ),
        "io.FileIO": Refusal(
            "import io\nio.FileIO('/etc/passwd')", "runtime", "io.FileIO is not available"
        ),
        "a dataclass field named to inject code": Refusal(
            "import dataclasses\nclass C:\n    __annotations__ = {'x=__import__(\"os\")': int}\n"
            "dataclasses.dataclass(C)",
            "runtime",
            "dataclass field names must be identifiers",
        ),
        "dataclass of a class from outside": Refusal(
            "import dataclasses, collections\ndataclasses.dataclass(collections.Counter)",
            "runtime",
            "dataclass() applies to classes the snippet defines",
        ),
        "a dataclass method's globals": Refusal(
            "import dataclasses\n@dataclasses.dataclass\nclass C:\n    x: int\nC.__init__.__globals__",
            "policy",
            RESTRICTED,
        ),
        "copy with a reduce hook naming a constructor that makes a class from outside": Refusal(
            "import copy, functools\nclass C:\n    def __reduce__(self):\n"
            "        return (functools.partial(type, tools), ())\ncopy.copy(C())",
            "policy",
            "is the class Namespace from outside the snippet",
        ),
        "copy of a module facade": Refusal(
            "import copy, json\ncopy.copy(json)", "runtime", "it belongs to the sandbox"
        ),
        "deepcopy of a provider namespace inside a list": Refusal(
            "import copy\ncopy.deepcopy([{'t': tools}])", "runtime", "it belongs to the sandbox"
        ),
        "a zoneinfo file outside the zones": Refusal(
            "import zoneinfo\nzoneinfo.ZoneInfo('../../../etc/passwd')",
            "runtime",
            "No time zone found",
        ),
        "contextlib's redirect of stdout": Refusal(
            "import contextlib\ncontextlib.redirect_stdout",
            "runtime",
            "redirect_stdout is not available",
        ),
        "an enum's class namespace": Refusal(
            "import enum\nclass E(enum.Enum):\n    A = 1\nE.__dict__", "policy", "a class namespace"
        ),
        "abc's registry": Refusal(
            "import abc\nclass A(abc.ABC):\n    pass\nA._abc_impl", "policy", "_abc_data"
        ),
        "a metaclass keyword naming a subclass of ABCMeta made natively": Refusal(
            "import abc\nclass A(metaclass=type.__new__(type, 'M', (abc.ABCMeta,), {})):\n    pass",
            "policy",
            "from outside the snippet",
        ),
        "a subclass of ABCMeta": Refusal(
            "import abc\nclass M(abc.ABCMeta):\n    pass", "policy", "metaclasses are refused"
        ),
        "csv reading a file name": Refusal(
            "import csv\nlist(csv.reader(open('/etc/passwd')))",
            "runtime",
            "name 'open' is not defined",
        ),
        "struct reaching memory": Refusal(
            "import struct\nstruct.unpack_from('P', b'')",
            "runtime",
            "unpack_from requires a buffer",
        ),
        "namedtuple with a dunder field": Refusal(
            "import collections\ncollections.namedtuple('A', ['__class__'])",
            "runtime",
            "Field names cannot start with an underscore",
        ),
    },
    "descriptors and class machinery": {
        "a subclass of super, whose __init__ would run again on a super in use": Refusal(
            "class MS(super):\n    def __init__(self, *a):\n        super().__init__(*a)",
            "runtime",
            "type 'builtins.super' is not an acceptable base type",
        ),
        "a staticmethod never initialised, then called": Refusal(
            "sm = staticmethod.__new__(staticmethod)\nsm()",
            "policy",
            "staticmethod.__new__, which makes one never initialised",
        ),
        "a datetime subclass's __new__ handing C another of the snippet's objects": Refusal(
            "import datetime\nclass B(bytearray):\n    pass\nba = B(b'A' * 1000)\narmed = []\n"
            "class D(datetime.datetime):\n    def __new__(cls, *a, **k):\n        if armed:\n"
            "            return ba\n        return super().__new__(cls, *a, **k)\n"
            "d = D(2000, 1, 1, tzinfo=datetime.timezone.utc)\narmed.append(1)\n"
            "d.astimezone(datetime.timezone(datetime.timedelta(hours=2)))",
            "runtime",
            "D.__new__() returned a B, not a D: a class deriving from datetime",
        ),
        "subclasses from a tuple": Refusal(
            "().__class__.__bases__[0].__subclasses__()", "policy", RESTRICTED
        ),
        "object.__subclasses__": Refusal("object.__subclasses__()", "policy", RESTRICTED),
        "int.mro": Refusal("int.mro()[-1]", "policy", INTERNALS),
        "type.__subclasses__": Refusal("type.__subclasses__(object)", "policy", RESTRICTED),
        "a class namespace": Refusal(
            "str.__dict__", "policy", "a class namespace from outside the snippet"
        ),
        "a metaclass keyword naming a function": Refusal(
            "class A(metaclass=print):\n    pass",
            "policy",
            "a class statement's metaclass is type, abc.ABCMeta or enum.EnumType",
        ),
        "a metaclass keyword naming an object that compares equal to ABCMeta": Refusal(
            "import abc\nclass Liar:\n    def __eq__(self, other):\n        return True\n"
            "    def __hash__(self):\n        return hash(abc.ABCMeta)\n"
            "    def __call__(self, *a, **k):\n        return 1\n"
            "class A(metaclass=Liar()):\n    pass",
            "policy",
            "a class statement's metaclass is type, abc.ABCMeta or enum.EnumType",
        ),
        "a metaclass keyword naming a class that is not a metaclass": Refusal(
            "class A(metaclass=dict):\n    pass",
            "policy",
            "class A with metaclass=dict",
        ),
        "a metaclass keyword spelt by the rewriting's hidden name": Refusal(
            "class A(**{' metaclass': print}):\n    pass", "policy", "cannot be unpacked with **"
        ),
        "a subclass of type": Refusal(
            "class M(type):\n    pass", "policy", "metaclasses are refused"
        ),
        "an unbound method leaving": Refusal(
            "return list.append", "runtime", "cannot leave the sandbox"
        ),
        "decorator taking the code": Refusal(
            "def deco(f):\n    return f.__code__\n@deco\ndef g():\n    pass\ng",
            "policy",
            RESTRICTED,
        ),
        "init_subclass": Refusal(
            "class X:\n    def __init_subclass__(cls):\n        cls.seen = cls.__dict__\n"
            "class Y(X):\n    pass",
            "policy",
            "a class namespace from outside the snippet",
        ),
        "a descriptor's __get__": Refusal(
            "class D:\n    def __get__(self, obj, owner):\n        return owner\n"
            "class H:\n    d = D()\nH.d.__dict__",
            "policy",
            "a class namespace from outside the snippet",
        ),
        "__del__ running in the host": Refusal(
            "class X:\n    def __del__(self):\n        " + ESCAPE + "\nreturn X()",
            "policy",
            '"__del__" cannot be defined',
        ),
        "an isinstance hook in a NamedTuple's body": Refusal(
            "from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n"
            "    __subclasshook__ = classmethod(lambda c, o: True)",
            "policy",
            "class P defining __subclasshook__ is not allowed",
        ),
        "a builtin as a NamedTuple's special method": Refusal(
            "from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n    __add__ = type\n"
            "P(1) + tools",
            "policy",
            "class P's __add__ = type is not allowed",
        ),
        "a special name as a functional enum's member": Refusal(
            "import enum\nenum.Enum('C', [('__subclasshook__', classmethod(lambda c, o: True))])",
            "runtime",
            "Enum member names cannot be special names such as '__subclasshook__'",
        ),
        "enum's own hook as a functional enum's member": Refusal(
            "import enum\nC = enum.Enum('C', [('_missing_', type)])\nC(tools)",
            "runtime",
            "Enum member names cannot be enum's own names such as '_missing_'",
        ),
        "a context decorator around a builtin": Refusal(
            "import contextlib\nclass T(contextlib.ContextDecorator):\n"
            "    def __enter__(self):\n        return self\n"
            "    def __exit__(self, *exc):\n        return False\n"
            "h = T()(type)\nh(tools)",
            "policy",
            "the class Namespace from outside the snippet",
        ),
        "a finalizer given by assignment": Refusal(
            "def fin(self):\n    pass\nclass Fin:\n    __del__ = fin",
            "policy",
            "class Fin's __del__ is not allowed",
        ),
        "a finalizer set on the class later": Refusal(
            "def fin(self):\n    pass\nclass Fin:\n    pass\nFin.__del__ = fin",
            "policy",
            "class Fin's __del__ is not allowed",
        ),
        "a finalizer set with setattr": Refusal(
            "def fin(self):\n    pass\nclass Fin:\n    pass\nsetattr(Fin, '__del__', fin)",
            "policy",
            "class Fin's __del__ is not allowed",
        ),
        "a finalizer in a three-argument type()": Refusal(
            "def fin(self):\n    pass\nFin = type('Fin', (), {'__del__': fin})",
            "policy",
            "class Fin's __del__ is not allowed",
        ),
        "deepcopy with a memo of the snippet's own dict subclass": Refusal(
            "import copy\nclass M(dict):\n    pass\ncopy.deepcopy([tools], M())",
            "runtime",
            "copy.deepcopy: memo must be a dict, not M",
        ),
        "copy of an object holding its own reduce hook, whose state names a function": Refusal(
            "import copy, asyncio\nclass O:\n    def __reduce_ex__(self, p):\n"
            "        return (lambda: asyncio.sleep, (), {'__qualname__': 'pwned'})\n"
            "copy.copy(O())",
            "policy",
            "writing to a function object is not allowed",
        ),
        "deepcopy of a provider namespace inside a deque": Refusal(
            "import copy, collections\ncopy.deepcopy(collections.deque([tools]))",
            "runtime",
            "cannot copy a Namespace object: it belongs to the sandbox",
        ),
        "deepcopy of a record from outside": Refusal(
            "import copy, contextlib\ncopy.deepcopy([contextlib.ExitStack()])",
            "runtime",
            "cannot copy a ExitStack object: copy would rebuild it past the sandbox's checks",
        ),
        "a base class's private state read through a snippet's subclass": Refusal(
            "import contextlib\nclass S(contextlib.ExitStack):\n    pass\ns = S()\n"
            "def cb():\n    pass\ns.callback(cb)\ns._exit_callbacks",
            "policy",
            "attribute '_exit_callbacks' is the function _BaseExitStack._create_cb_wrapper",
        ),
        "asdict deep-copying a leaf with its own reduce hook": Refusal(
            "import dataclasses, asyncio\n@dataclasses.dataclass\nclass D:\n    x: object\n"
            "class O:\n    def __reduce_ex__(self, p):\n"
            "        return (lambda: asyncio.sleep, (), (None, {'__qualname__': 'pwned'}))\n"
            "dataclasses.asdict(D(O()))",
            "policy",
            "writing to a function object is not allowed",
        ),
        "copy of an object whose __new__ returns another": Refusal(
            "import copy, asyncio\nclass O:\n    arm = False\n    def __new__(cls, *a):\n"
            "        return asyncio.sleep if O.arm else object.__new__(cls)\n"
            "    def __getstate__(self):\n        return (None, {'__qualname__': 'pwned'})\n"
            "o = O()\nO.arm = True\ncopy.copy(o)",
            "runtime",
            "O.__new__() returned a function from outside the snippet",
        ),
        "copy of a dict subclass whose __new__ returns another": Refusal(
            "import copy, asyncio, collections\nA = []\nclass OD(collections.OrderedDict):\n"
            "    def __new__(cls, *a):\n        return asyncio.sleep if A else super().__new__(cls)\n"
            "o = OD()\no.marker = 'planted'\nA.append(1)\ncopy.deepcopy([o])",
            "runtime",
            "OD.__new__() returned a function from outside the snippet",
        ),
        "replace of an object that is no made dataclass": Refusal(
            "import dataclasses\ndataclasses.replace(tools.ls)",
            "runtime",
            "replace() should be called on dataclass instances",
        ),
        "a facade re-made by its __init__": Refusal(
            "import json\njson.__init__('json', {'loads': lambda s: 'POISONED'})",
            "policy",
            "attribute '__init__' is Facade.__init__ bound to a Facade",
        ),
        "a provider namespace re-made by its __init__": Refusal(
            "tools.__init__(None, 'tools', ['x'])",
            "policy",
            "attribute '__init__' is Namespace.__init__ bound to a Namespace",
        ),
        "a refused decorator result kept after its refusal is caught": Refusal(
            "try:\n    @type\n    def f():\n        pass\nexcept PolicyError:\n    pass\nf",
            "runtime",
            "name 'f' is not defined",
        ),
        "__repr__ running in the host": Refusal(
            "class X:\n    def __repr__(self):\n        " + ESCAPE + "\nreturn X()",
            "runtime",
            "X object is not plain data",
        ),
        "an enum member made by a __new__ returning an object from outside": Refusal(
            "import enum, json\nclass E(enum.Enum):\n    def __new__(cls, v):\n"
            "        return json.dumps\n    A = 1\nE.A",
            "runtime",
            "E.__new__() returned a function from outside the snippet",
        ),
        "an enum member made by a mixin's __new__": Refusal(
            "import enum, json\nclass M:\n    def __new__(cls, v):\n        return json.dumps\n"
            "class E(M, enum.Enum):\n    A = 1\nE.A",
            "runtime",
            "M.__new__() returned a function from outside the snippet",
        ),
        "a __new__ set on the class later": Refusal(
            "import json\nclass C:\n    pass\ndef new(cls):\n    return json.dumps\n"
            "C.__new__ = new\nC()",
            "runtime",
            "new() returned a function from outside the snippet",
        ),
        "a __new__ given to type()": Refusal(
            "import json\ndef new(cls):\n    return json\nC = type('C', (), {'__new__': new})\nC()",
            "runtime",
            "new() returned a Facade from outside the snippet",
        ),
        "a protocol's __new__ returning what its structural issubclass accepts": Refusal(
            "import typing, json\n@typing.runtime_checkable\nclass P(typing.Protocol):\n"
            "    def __call__(self): ...\n    def __new__(cls, *a):\n        return json.dumps\n"
            "P.__new__(P)",
            "runtime",
            "P.__new__() returned a function from outside the snippet",
        ),
        "typing.final marking a function from outside": Refusal(
            "import typing, json\ntyping.final(json.dumps)",
            "runtime",
            "typing.final() marks the function or class it decorates by setting attributes",
        ),
        "abc.abstractmethod marking a function from outside": Refusal(
            "import abc, json\nabc.abstractmethod(json.loads)",
            "runtime",
            "abc.abstractmethod() marks the function or class it decorates",
        ),
        "no_type_check marking a class from outside": Refusal(
            "import typing, collections\ntyping.no_type_check(collections.Counter)",
            "runtime",
            "typing.no_type_check() marks the function or class it decorates",
        ),
        "total_ordering filling in a class from outside": Refusal(
            "import functools, collections\nfunctools.total_ordering(collections.OrderedDict)",
            "runtime",
            "functools.total_ordering() marks the function or class it decorates",
        ),
        "a Fraction made of what a subclass's as_integer_ratio returns": Refusal(
            "import fractions\nclass F(float):\n    def as_integer_ratio(self):\n"
            "        return (print, 1)\nfractions.Fraction(F(1.5))",
            "runtime",
            "argument should be a string or a Rational instance",
        ),
        "a Fraction made of what an int subclass calls its numerator": Refusal(
            "import fractions\nclass I(int):\n    @property\n    def numerator(self):\n"
            "        return [print]\nfractions.Fraction(1, I(2))",
            "runtime",
            "both arguments should be Rational instances",
        ),
    },
    "builtins": {
        "lambda globals": Refusal(
            "(lambda: 0).__globals__['__builtins__']['open']", "policy", RESTRICTED
        ),
        "function globals": Refusal("def f():\n    pass\nf.__globals__", "policy", RESTRICTED),
        "__builtins__": Refusal("__builtins__['open']", "policy", RESERVED),
        "__import__": Refusal("__import__('os').system('touch {canary}')", "policy", RESERVED),
        "print.__self__": Refusal("print.__self__", "policy", RESTRICTED),
        "ToolError.__init__.__globals__": Refusal(
            "ToolError.__init__.__globals__", "policy", RESTRICTED
        ),
        "class body builtins": Refusal("class A:\n    x = __builtins__\nA.x", "policy", RESERVED),
        "getattr of a refused name": Refusal(
            "getattr(print, '__self__')", "policy", "it exposes interpreter internals"
        ),
        "getattr of a private name of the runtime's": Refusal(
            "import json\ngetattr(json, '_default_decoder')", "policy", OWN_ONLY
        ),
        "type of a runtime object": Refusal("type(print)", "policy", "the class builtins.function"),
        "type with three arguments deriving from type": Refusal(
            "type('M', (type,), {})", "policy", "metaclasses are refused"
        ),
        "setattr on a builtin": Refusal(
            "setattr(len, '__doc__', 'x')", "policy", "writing to a builtin_function_or_method"
        ),
        "setattr of __class__": Refusal(
            "class C:\n    pass\nsetattr(C(), '__class__', int)",
            "policy",
            "changes what an object is",
        ),
        "vars of a class": Refusal("vars(int)", "policy", "a class namespace"),
        "eval": Refusal("eval('1')", "policy", "Eval calls are not allowed"),
        "exec": Refusal("exec('import os')", "policy", "Exec calls are not allowed"),
        "compile": Refusal("compile('1', 'x', 'eval')", "runtime", "name 'compile' is not defined"),
        "globals": Refusal("globals()['__builtins__']", "runtime", "name 'globals' is not defined"),
        "vars": Refusal("vars()", "policy", "a snippet's scopes are not values"),
        "open": Refusal(ESCAPE, "runtime", "name 'open' is not defined"),
        "breakpoint": Refusal("breakpoint()", "policy", '"breakpoint" is a reserved name'),
    },
    "dataclasses' generated source": {
        "annotations whose items differ from their keys": Refusal(
            "import dataclasses\nclass A(dict):\n    def __iter__(self):\n        return iter(['a'])\n"
            f"    def items(self):\n        return [({INJECTED!r}, int)]\n"
            "class C:\n    'doc'\n    __annotations__ = A(a=int)\n"
            "C = dataclasses.dataclass(C, init=False, eq=False)\nrepr(C())",
            "runtime",
            "a class's __annotations__ must be a plain dict",
        ),
        "a base with forged fields": Refusal(
            MADE + FIELD + FORGED_BASE + "class E(B):\n    'doc'\n    y: int = 2\n"
            "E = dataclasses.dataclass(E, init=False, eq=False)\nrepr(E())",
            "runtime",
            "the base B has dataclass fields that dataclasses.dataclass did not make",
        ),
        "a forged key in a made dataclass's fields (the snippet reads a copy)": Refusal(
            MADE + f"D.__dataclass_fields__[{INJECTED!r}] = dataclasses.fields(D)[0]\n"
            "@dataclasses.dataclass\nclass E(D):\n    y: int = 2\n"
            "raise ValueError(repr(E()), [f.name for f in dataclasses.fields(E)])",
            "runtime",
            "('E(z=1, y=2)', ['z', 'y'])",
        ),
        "a made dataclass's fields replaced by a copy": Refusal(
            MADE + "fs = {f.name: f for f in dataclasses.fields(D)}\n"
            f"fs[{INJECTED!r}] = dataclasses.fields(D)[0]\n"
            "D.__dataclass_fields__ = fs\n"
            "@dataclasses.dataclass\nclass E(D):\n    y: int = 2\nrepr(E())",
            "runtime",
            "the fields of D were replaced",
        ),
        "a made field renamed": Refusal(
            MADE + FIELD + f"f.name = {INJECTED!r}",
            "policy",
            "writing to a Field object is not allowed",
        ),
        "a made field renamed through object.__setattr__": Refusal(
            MADE + FIELD + f"object.__setattr__(f, 'name', {INJECTED!r})",
            "policy",
            "writing to a Field object is not allowed",
        ),
        "a field's kind rewritten": Refusal(
            MADE + FIELD + "setattr(f, '_field_type', None)",
            "policy",
            "writing to a Field object is not allowed",
        ),
        "make_dataclass with a tuple that answers one name and holds another": Refusal(
            "import dataclasses\n"
            + STR_CLAIMING
            + "class T(tuple):\n    def __getitem__(self, i):\n        return 'a'\n"
            f"dataclasses.make_dataclass('C', [T((S({INJECTED!r}), int))], init=False, eq=False, "
            "namespace={'__doc__': 'doc'})",
            "runtime",
            "make_dataclass(): invalid field",
        ),
        "make_dataclass with a str that claims to be an identifier": Refusal(
            "import dataclasses\n"
            + STR_CLAIMING
            + f"dataclasses.make_dataclass('C', [(S({INJECTED!r}), int)], init=False, eq=False)",
            "runtime",
            "dataclass field names must be identifiers",
        ),
        "make_dataclass over a base with forged fields": Refusal(
            MADE + FIELD + FORGED_BASE + "dataclasses.make_dataclass('C', ['a'], bases=(B,))",
            "runtime",
            "the base B has dataclass fields that dataclasses.dataclass did not make",
        ),
        "a class claiming a runtime module as its own": Refusal(
            "import dataclasses\nclass C:\n    __module__ = 'runtime.worker._audit'\n    x: int = 1\n"
            "dataclasses.dataclass(C)",
            "runtime",
            "a snippet's class keeps its __module__",
        ),
        "an exit stack's callbacks rewritten": Refusal(
            "import contextlib\ns = contextlib.ExitStack()\ns._exit_callbacks = []",
            "policy",
            "writing to a ExitStack object is not allowed",
        ),
    },
    "relaxed names, dunders and class machinery": {
        "enum's _convert_ writing into a runtime module": Refusal(
            "import enum\nclass E(enum.Enum):\n    A = 1\n"
            "E._convert_('PLAIN', 'runtime.worker._guards', lambda n: False, source={})",
            "policy",
            "a private method of a class from outside the snippet",
        ),
        "abc's private helpers on the snippet's class": Refusal(
            "import abc\nclass A(abc.ABC):\n    pass\nA._dump_registry()",
            "policy",
            "a private method of a class from outside the snippet",
        ),
        "a traceback handed to __exit__": Refusal(
            "class CM:\n    def __enter__(self):\n        return self\n"
            "    def __exit__(self, t, e, tb):\n        self.tb = tb\n        return True\n"
            "with CM() as cm:\n    1 / 0\ncm.tb.__class__",
            "policy",
            "is a traceback from outside the snippet",
        ),
        "a traceback's frame through object.__getattribute__": Refusal(
            "class CM:\n    def __enter__(self):\n        return self\n"
            "    def __exit__(self, t, e, tb):\n        self.tb = tb\n        return True\n"
            "with CM() as cm:\n    1 / 0\nobject.__getattribute__(cm.tb, 'tb_frame')",
            "policy",
            "is a traceback from outside the snippet",
        ),
        "a match pattern reading a frame": Refusal(
            "def g():\n    yield 1\nmatch g():\n    case object(gi_frame=f):\n        pass",
            "policy",
            "cannot be matched as an attribute",
        ),
        "a match value reading a private name": Refusal(
            "import json\nmatch 1:\n    case json._default_decoder:\n        pass",
            "policy",
            "cannot be matched as an attribute",
        ),
        "class keywords unpacked to name a metaclass": Refusal(
            "class X(**{'metaclass': print}):\n    pass", "policy", "cannot be unpacked with **"
        ),
        "__mro_entries__ naming type as a base": Refusal(
            "class M:\n    def __mro_entries__(self, bases):\n        return (type,)\n"
            "class X(M()):\n    pass",
            "policy",
            "metaclasses are refused",
        ),
        "type.__new__ making a class past the class statement": Refusal(
            "type.__new__(type, 'X', (), {})", "policy", "from outside the snippet"
        ),
        "ABCMeta called directly, with a finalizer": Refusal(
            "import abc\nabc.ABCMeta('X', (), {'__del__': lambda s: None})",
            "policy",
            "class X's __del__ is not allowed",
        ),
        "object.__setattr__ on a facade": Refusal(
            "import json\nobject.__setattr__(json, 'loads', print)",
            "policy",
            "writing to a Facade object is not allowed",
        ),
        "object.__setattr__ on a host function": Refusal(
            "import json\nobject.__setattr__(json.loads, '__kwdefaults__', {})",
            "policy",
            "writing to a function object is not allowed",
        ),
        "object.__getattribute__ of globals": Refusal(
            "def f():\n    pass\nobject.__getattribute__(f, '__globals__')", "policy", "internals"
        ),
        "type.__setattr__ on a builtin class": Refusal(
            "type.__setattr__(int, 'x', 1)", "policy", "the function type.__setattr__ from outside"
        ),
        "super() over a host object's __setattr__": Refusal(
            "import json\nsuper(object, json).__setattr__('x', 1)",
            "policy",
            "writing to a super object is not allowed",
        ),
        "super() reaching a vetted base's private method": Refusal(
            "import textwrap\nclass W(textwrap.TextWrapper):\n    def go(self):\n"
            "        return super()._split('a b')\nW().go()",
            "policy",
            OWN_ONLY,
        ),
        "getattr of __reduce_ex__": Refusal(
            "getattr(1, '__reduce_ex__')(2)", "policy", "it exposes interpreter internals"
        ),
        "getattr of __subclasses__": Refusal(
            "getattr(object, '__subclasses__')()", "policy", "it exposes interpreter internals"
        ),
        "a generic alias forwarding to its class namespace": Refusal(
            "list[int].__dict__", "policy", "a class namespace"
        ),
        "a typing alias's private method": Refusal(
            "import typing\ntyping.List._getitem", "policy", OWN_ONLY
        ),
        "a dataclass Field's internals": Refusal(
            "import dataclasses\n@dataclasses.dataclass\nclass C:\n    x: int = 1\n"
            "dataclasses.fields(C)[0]._field_type",
            "policy",
            OWN_ONLY,
        ),
        "a dataclass field named __class__": Refusal(
            "import dataclasses\ndataclasses.make_dataclass('X', ['__class__'])",
            "runtime",
            "cannot be special names",
        ),
        "a dataclass's repr wrapper's globals": Refusal(
            "import dataclasses\n@dataclasses.dataclass\nclass C:\n    x: int\n"
            "C.__repr__.__wrapped__.__globals__",
            "policy",
            RESTRICTED,
        ),
        "deepcopy of a class whose own __reduce_ex__ names a class from outside": Refusal(
            "import copy\nclass C:\n    def __reduce_ex__(self, p):\n"
            "        return (type, (tools,))\ncopy.copy(C())",
            "policy",
            "is the class Namespace from outside the snippet",
        ),
        "operator.iadd iterating past the guard": Refusal(
            "import operator\noperator.iadd", "runtime", "operator.iadd is not available"
        ),
        "operator.attrgetter of a generator's frame": Refusal(
            "import operator\ndef g():\n    yield 1\noperator.attrgetter('gi_frame')(g())",
            "policy",
            "it exposes interpreter internals",
        ),
        "a format spec walking a private name": Refusal(
            "class C:\n    _x = 1\n'{0._x}'.format(C())", "policy", PRIVATE
        ),
        "a format field walking to globals": Refusal(
            "def f():\n    pass\n'{0.__globals__}'.format(f)", "policy", PRIVATE
        ),
        "zoneinfo's real class, as the base of the facade's": Refusal(
            "import zoneinfo\nzoneinfo.ZoneInfo('UTC').__class__.__bases__[0]('UTC')",
            "policy",
            "attribute '__bases__' is the class zoneinfo.ZoneInfo from outside",
        ),
        "zoneinfo's real class, in a subclass's mro": Refusal(
            "import zoneinfo\nclass Z(zoneinfo.ZoneInfo):\n    pass\nZ.__mro__[2]('UTC')",
            "policy",
            "attribute '__mro__' is the class datetime.tzinfo from outside",
        ),
        "assigning __class__ to a vetted class": Refusal(
            "import textwrap\nclass C:\n    pass\nc = C()\nc.__class__ = textwrap.TextWrapper",
            "policy",
            "it changes what an object is",
        ),
        "setattr of __class__": Refusal(
            "import textwrap\nclass C:\n    pass\nsetattr(C(), '__class__', textwrap.TextWrapper)",
            "policy",
            "it changes what an object is",
        ),
        "an enum member's __objclass__": Refusal(
            "import enum\nclass E(enum.Enum):\n    A = 1\nE.A.__objclass__", "policy", RESTRICTED
        ),
        "vars of a class": Refusal("class C:\n    pass\nvars(C)", "policy", "a class namespace"),
        "a guard's name rebound": Refusal(
            "_getattr_ = lambda o, n: 1", "policy", '"_getattr_" is a reserved name'
        ),
        "__metaclass__ rebound": Refusal(
            "__metaclass__ = type\nclass X:\n    pass", "policy", RESERVED
        ),
        "a provider namespace's own __setattr__": Refusal(
            "tools.__setattr__('_names', [])",
            "policy",
            "writing to a Namespace object is not allowed",
        ),
        "a provider namespace's own __delattr__": Refusal(
            "tools.__delattr__('_channel')",
            "policy",
            "writing to a Namespace object is not allowed",
        ),
        "a guard's name bound by a mapping pattern": Refusal(
            "match {}:\n    case {**_write_}:\n        pass",
            "policy",
            '"_write_" is a reserved name',
        ),
        "the real slot wrapper behind the guarded one": Refusal(
            "import json\ns = object.__setattr__\nfor f in s.args:\n    f(json, 'x', 1)",
            "runtime",
            "'GuardedSlot' object has no attribute 'args'",
        ),
        "the guarded slot's own fields": Refusal(
            "s = object.__setattr__\ns._original", "policy", OWN_ONLY
        ),
        "a finalizer": Refusal(
            "class X:\n    def __del__(self):\n        pass", "policy", "cannot be defined"
        ),
    },
    "the host's objects": {
        "provider internals": Refusal("tools._channel", "policy", OWN_ONLY),
        "a provider's call method": Refusal("tools.read.__call__.__self__", "policy", RESTRICTED),
        "overwrite a provider": Refusal(
            "tools.read = print", "policy", "writing to a Namespace object is not allowed"
        ),
        "overwrite a facade member": Refusal(
            "import json\njson.loads = print", "policy", "writing to a Facade object is not allowed"
        ),
        "overwrite a builtin type": Refusal(
            "list.append = print", "policy", "writing to list is not allowed"
        ),
        "namespace internals": Refusal(
            "tools._names = []", "policy", "writing to a Namespace object is not allowed"
        ),
        "print to a file": Refusal(
            "print('x', file='{canary}')", "policy", "print(file=...) is not allowed"
        ),
        "a match pattern reading a private attribute": Refusal(
            "match print:\n    case object(__self__=s):\n        pass", "policy", "it is private"
        ),
        "a match pattern reading __class__": Refusal(
            "import json\nmatch json.loads:\n    case object(__class__=k):\n        pass",
            "policy",
            "it is private",
        ),
        "an exception group's traceback": Refusal(
            "try:\n    raise ExceptionGroup('g', [ValueError()])\n"
            "except* ValueError as eg:\n    eg.__traceback__.tb_frame",
            "policy",
            RESTRICTED,
        ),
    },
    "builtins calling from C": {
        "map of type smuggling runtime classes into a Counter": Refusal(
            "import collections\nc = collections.Counter(map(type, [tools, help]))\n"
            "[repr(k) for k in c]",
            "policy",
            "from outside the snippet",
        ),
        "a builtin as a special method, called by an operator": Refusal(
            "class X:\n    __add__ = type\nX() + tools",
            "policy",
            "a special method must be a function the snippet defines",
        ),
        "a builtin set as a special method after the class was made": Refusal(
            "class X:\n    pass\nX.__eq__ = type\nX() == tools",
            "policy",
            "a special method must be a function the snippet defines",
        ),
        "a builtin as a special method of a made dataclass": Refusal(
            "import dataclasses\n"
            "A = dataclasses.make_dataclass('A', ['q'], namespace={'__add__': type})",
            "policy",
            "a special method must be a function the snippet defines",
        ),
        "a defaultdict whose factory hands out a runtime class": Refusal(
            "import collections, functools\n"
            "d = collections.defaultdict(functools.partial(type, tools))\nd[1]",
            "policy",
            "from outside the snippet",
        ),
        "a Field made directly, its factory never checked": Refusal(
            "import dataclasses, functools\nF = dataclasses.Field(dataclasses.MISSING, "
            "functools.partial(type, tools), True, True, None, True, None, False)\n"
            "@dataclasses.dataclass\nclass D:\n    x: object = F\n"
            "    def __setattr__(self, name, value):\n        print(value)\nD()",
            "runtime",
            "the default_factory of 'x' was not given through dataclasses.field",
        ),
        "a descriptor default whose __get__ hands dataclasses a forged Field": Refusal(
            "import dataclasses, functools\nclass F(dataclasses.Field):\n    __slots__ = ()\n"
            "fld = F(dataclasses.MISSING, functools.partial(type, tools), True, True, None, "
            "True, None, False)\nclass Desc:\n    def __get__(self, obj, owner=None):\n"
            "        return fld\n@dataclasses.dataclass\nclass D:\n    x: object = Desc()\n"
            "    def __setattr__(self, name, value):\n        print(value)\nD()",
            "runtime",
            "the default of 'x' is a descriptor (Desc)",
        ),
        "make_dataclass given a Field made directly": Refusal(
            "import dataclasses, functools\nF = dataclasses.Field(dataclasses.MISSING, "
            "functools.partial(type, tools), True, True, None, True, None, False)\n"
            "dataclasses.make_dataclass('D', [('x', object, F)])",
            "runtime",
            "make_dataclass(): the default_factory of 'x'",
        ),
        "a dataclass default factory handing out a runtime class": Refusal(
            "import dataclasses, functools\n@dataclasses.dataclass\nclass E:\n"
            "    x: object = dataclasses.field(default_factory=functools.partial(type, tools))\n"
            "dataclasses.astuple(E())",
            "policy",
            "from outside the snippet",
        ),
        "starmap of type consumed by a slice assignment": Refusal(
            "import itertools\nx = [0]\nx[0:1] = itertools.starmap(type, [(tools,)])\nx",
            "policy",
            "from outside the snippet",
        ),
        "starmap of type consumed by dict.fromkeys": Refusal(
            "import itertools\ndict.fromkeys(itertools.starmap(type, [(tools,)]))",
            "policy",
            "from outside the snippet",
        ),
        "iter(callable, sentinel) consumed by a slice assignment": Refusal(
            "import functools, itertools\nx = [0]\n"
            "x[0:1] = itertools.islice(iter(functools.partial(type, tools), 5), 1)\nx",
            "policy",
            "from outside the snippet",
        ),
        "map of type into heapq": Refusal(
            "import heapq\nheapq.nsmallest(2, map(type, [tools, help]), key=id)",
            "policy",
            "from outside the snippet",
        ),
        "map of getattr reading a namespace's class": Refusal(
            "list(map(getattr, [tools], ['__class__']))", "policy", "from outside the snippet"
        ),
        "map of type over help": Refusal(
            "list(map(type, [help]))", "policy", "from outside the snippet"
        ),
        "map of type over a provider function": Refusal(
            "set(map(type, [tools.read]))", "policy", "from outside the snippet"
        ),
    },
    "str subclasses as names": {
        "a guarded slot read by a str subclass name": Refusal(
            "class S(str):\n    pass\nimport dataclasses\n"
            "object.__getattribute__(dataclasses.dataclass, S('__globals__'))",
            "policy",
            "attribute '__globals__' is not allowed: it exposes interpreter internals",
        ),
        "a guarded slot write by a str subclass name": Refusal(
            "class S(str):\n    pass\nobject.__setattr__(tools, S('_names'), ['*'])",
            "policy",
            "writing to a Namespace object is not allowed",
        ),
        "a class namespace key that lies about what it is": Refusal(
            "class S(str):\n    def startswith(self, *a):\n        return False\n"
            "class Base:\n    pass\ntype('X', (Base,), {S('__add__'): staticmethod(type)})",
            "policy",
            "class X's attribute named by a S is not allowed: attribute names must be plain str",
        ),
        "a class named by a str subclass": Refusal(
            "class S(str):\n    pass\ntype(S('X'), (), {})",
            "policy",
            "a class name must be a plain str",
        ),
        "a slot named by a str subclass, hidden from copy": Refusal(
            "class S(str):\n    pass\nclass C:\n    __slots__ = (S('hidden'),)",
            "policy",
            "__slots__ must be a str, or a tuple, list or dict of plain str",
        ),
        "a single-string __slots__ holding a provider namespace, deep-copied": Refusal(
            "import copy\nclass C:\n    __slots__ = 'ab'\nc = C()\nc.ab = tools\ncopy.deepcopy(c)",
            "runtime",
            "cannot copy a Namespace object: it belongs to the sandbox",
        ),
    },
    "tenth pass": {
        "a special method given as a property": Refusal(
            "class C:\n    __add__ = property(lambda self: type)\nC() + tools",
            "policy",
            "class C's __add__ = property is not allowed",
        ),
        "__set_name__ given as a property": Refusal(
            "class D:\n    __set_name__ = property(lambda self: print)",
            "policy",
            "class D's __set_name__ = property is not allowed",
        ),
        "a dataclass __init__ run on an object from outside": Refusal(
            "import dataclasses, contextlib\n@dataclasses.dataclass\nclass P:\n    _x: int = 0\n"
            "P.__init__(contextlib.ExitStack(), 5)",
            "runtime",
            "__init__() of a dataclass takes one of the snippet's own objects, not a ExitStack",
        ),
        "a frozen dataclass __init__ run on a guarded slot": Refusal(
            "import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass F:\n"
            "    _guard: object = None\nF.__init__(object.__getattribute__, print)",
            "runtime",
            "__init__() of a dataclass takes one of the snippet's own objects, not a GuardedSlot",
        ),
        "a Struct initialised again under its own iter_unpack": Refusal(
            "import struct\ns = struct.Struct('<b')\ns.__init__('<q')",
            "policy",
            "attribute '__init__' is Struct.__init__ bound to a Struct from outside",
        ),
        "a Struct subclass initialised again through super()": Refusal(
            "import struct\nclass S(struct.Struct):\n    def again(self, fmt):\n"
            "        super().__init__(fmt)\ns = S('<b')\ns.again('<q')",
            "runtime",
            "a Struct is initialised once; make a new one",
        ),
        "the links of a snippet's OrderedDict subclass": Refusal(
            "import collections\nclass O(collections.OrderedDict):\n    def links(self):\n"
            "        return self._OrderedDict__map\no = O(a=1)\no.links()",
            "policy",
            "is a collections._ordered._Link object from outside the snippet",
        ),
    },
    "wrappers": {
        "update_wrapper writing onto a function from outside": Refusal(
            "import functools, json\ndef f():\n    pass\nfunctools.update_wrapper(json.loads, f)",
            "runtime",
            "functools.update_wrapper() sets attributes on the wrapper",
        ),
        "wraps copying the code of a function from outside": Refusal(
            "import functools, json\nfunctools.wraps(json.dumps, assigned=('__code__',))"
            "(lambda: 1)",
            "runtime",
            "only the standard assigned and updated",
        ),
        "update_wrapper copying the private state of an object from outside": Refusal(
            "import functools, contextlib\ndef w():\n    pass\n"
            "functools.update_wrapper(w, contextlib.ExitStack())\nw._exit_callbacks",
            "runtime",
            "'function' object has no attribute '_exit_callbacks'",
        ),
        "wraps onto a facade": Refusal(
            "import functools, json\ndef f():\n    pass\nfunctools.wraps(f)(json)",
            "runtime",
            "give it a function the snippet defines, not a Facade from outside",
        ),
        "a timeout rescheduled to an object of the snippet's": Refusal(
            "import asyncio\nclass T:\n    def __lt__(self, o):\n        return True\n"
            "async with asyncio.timeout(1) as s:\n    s.reschedule(T())",
            "runtime",
            "reschedule() takes a loop time",
        ),
        "a timeout rescheduled past what the loop's float clock holds": Refusal(
            "import asyncio\nasync with asyncio.timeout(5) as s:\n    s.reschedule(10**400)\n"
            "    await asyncio.Event().wait()",
            "runtime",
            "int too large to convert to float",
        ),
        "a collection ABC's register, from typing's origin": Refusal(
            "import typing, json\ntyping.get_origin(typing.Mapping[int, int])"
            ".register(json.JSONDecodeError)",
            "policy",
            "the function ABCMeta.register bound to a Mapping",
        ),
    },
    "finalizers by another name": {
        "an io subclass's close, run when it is collected": Refusal(
            "import io\nclass S(io.StringIO):\n    def close(self):\n        " + ESCAPE + "\n"
            "s = S()\ns = None",
            "policy",
            "class S's close on an io base is not allowed",
        ),
        "an io subclass's closed, read when it is collected": Refusal(
            "import io\nclass G(io.BytesIO):\n    @property\n    def closed(self):\n"
            "        return False\nG()",
            "policy",
            "class G's closed on an io base is not allowed",
        ),
        "an io subclass's __getattr__, asked for close": Refusal(
            "import io\nclass G(io.StringIO):\n    def __getattr__(self, name):\n"
            "        return print\nG()",
            "policy",
            "class G's __getattr__ on an io base is not allowed",
        ),
        "close set on an io subclass later": Refusal(
            "import io\nclass S(io.StringIO):\n    pass\nS.close = lambda self: None",
            "policy",
            "class S's close on an io base is not allowed",
        ),
        "close given to type() with an io base": Refusal(
            "import io\nS = type('S', (io.StringIO,), {'close': lambda self: None})",
            "policy",
            "class S's close on an io base is not allowed",
        ),
        "a ZoneInfo subclass's reduce recipe making a class of the sandbox's": Refusal(
            "import copy, functools, io, zoneinfo\ngs = object.__getattribute__\n"
            "class Z(zoneinfo.ZoneInfo):\n    def __reduce_ex__(self, proto):\n"
            "        return (functools.partial(type, gs), ())\n"
            "copy.deepcopy(Z.from_file(io.BytesIO(Z._files['UTC']), key='UTC'))",
            "policy",
            "is the class GuardedSlot from outside the snippet",
        ),
        "a Random subclass's getstate handing copy a leaf with its own recipe": Refusal(
            "import copy, functools, random\ngs = object.__getattribute__\nclass Evil:\n"
            "    def __reduce_ex__(self, proto):\n        return (functools.partial(type, gs), ())\n"
            "class R(random.Random):\n    def getstate(self):\n        return [Evil()]\n"
            "    def setstate(self, state):\n        pass\ncopy.deepcopy(R())",
            "policy",
            "is the class GuardedSlot from outside the snippet",
        ),
        "an OrderedDict subclass's items handing copy a leaf with its own recipe": Refusal(
            "import collections, copy, functools, json\nclass Evil:\n"
            "    def __reduce_ex__(self, proto):\n        return (functools.partial(type, json), ())\n"
            "class O(collections.OrderedDict):\n    def items(self):\n"
            "        return [('k', Evil())]\ncopy.deepcopy(O(a=1))",
            "policy",
            "is the class Facade from outside the snippet",
        ),
        "a deque subclass iterating one way for a check and another for the copy": Refusal(
            "import collections, copy, functools, json\nclass Evil:\n"
            "    def __reduce_ex__(self, proto):\n        return (functools.partial(type, json), ())\n"
            "class Q(collections.deque):\n    calls = [0]\n    def __iter__(self):\n"
            "        Q.calls[0] += 1\n        yield Evil() if Q.calls[0] == 1 else 1\n"
            "copy.deepcopy(Q([1]))",
            "policy",
            "is the class Facade from outside the snippet",
        ),
        "asdict's dict_factory handed what a leaf's recipe made": Refusal(
            "import dataclasses, functools\ngs = object.__getattribute__\nclass Evil:\n"
            "    def __reduce_ex__(self, proto):\n        return (functools.partial(type, gs), ())\n"
            "@dataclasses.dataclass\nclass D:\n    f: object\nseen = []\n"
            "def collect(pairs):\n    for name, value in pairs:\n        seen.append(value)\n"
            "    return {}\ndataclasses.asdict(D(Evil()), dict_factory=collect)",
            "policy",
            "is the class GuardedSlot from outside the snippet",
        ),
        "a staticmethod subclass, whose calls ran type natively (the 26th pass)": Refusal(
            "class S(staticmethod):\n    pass",
            "runtime",
            "type 'builtins.staticmethod' is not an acceptable base type",
        ),
        "a staticmethod subclass answering __func__ for a special method (the 30th pass)": Refusal(
            "def f(*a):\n    return None\nclass SM(classmethod):\n"
            "    def __getattribute__(self, name):\n        return f\n",
            "runtime",
            "type 'builtins.classmethod' is not an acceptable base type",
        ),
        "a partial subclass called natively by map, its results kept in a list": Refusal(
            "import functools\nclass P(functools.partial):\n    pass\n"
            "for lst in map(P(list), [map(P(type), [tools])]):\n    for k in lst:\n"
            "        pass\nstr(k)",
            "policy",
            "is the class Namespace from outside the snippet",
        ),
        "a partial subclass called by a defaultdict": Refusal(
            "import collections, functools\nclass P(functools.partial):\n    pass\n"
            "d = collections.defaultdict(P(type, tools))\nd['k']",
            "policy",
            "is the class Namespace from outside the snippet",
        ),
        "the GenericAlias class, whose instances forward every read (final besides)": Refusal(
            "class Fwd(type(list[int])):\n    pass",
            "policy",
            "the class types.GenericAlias from outside the snippet",
        ),
        "a Template's pattern answered by an instance (the 30th pass)": Refusal(
            "import string\nclass T(string.Template):\n    pass\nt = T('$x')\n"
            "class H:\n    pass\nt.pattern = H()",
            "policy",
            "it would answer in place of Template.pattern",
        ),
        "a __new__ of an ExitStack subclass returning another class (the 30th pass)": Refusal(
            "import contextlib\nclass H:\n    pass\nclass S(contextlib.ExitStack):\n"
            "    def __new__(cls, *a, **k):\n        return H()\nS()",
            "runtime",
            "S.__new__() returned a H, not a S",
        ),
        "a class's own __slotnames__ having copy read any attribute natively": Refusal(
            "import copy\nclass X(set):\n    __slotnames__ = ['__setattr__']\n"
            "    def __setstate__(self, state):\n        pass\ncopy.copy(X())",
            "policy",
            "class X's __slotnames__ is not allowed: copy reads the names it lists",
        ),
        "a class-level __dict__ standing in for its instances' dicts": Refusal(
            "class A:\n    __dict__ = {'__origin__': int}",
            "policy",
            "class A's __dict__ is not allowed",
        ),
        "a ChainMap subclass's __missing__ answered by its instance (the 28th pass)": Refusal(
            "import collections\nclass CM(collections.ChainMap):\n    pass\n"
            "cm = CM({})\ncm.__missing__ = type",
            "policy",
            "it would answer in place of ChainMap.__missing__, which the code of ChainMap",
        ),
        "a Counter's _keep_positive answered by its instance": Refusal(
            "import collections\nclass C(collections.Counter):\n    pass\n"
            "c = C()\nc._keep_positive = len",
            "policy",
            "it would answer in place of Counter._keep_positive",
        ),
        "an exact Counter's items answered by its instance": Refusal(
            "import collections\nc = collections.Counter()\nc.items = len",
            "policy",
            "it would answer in place of dict.items, which the code of dict",
        ),
        "an enum member's _value_ swapped once made": Refusal(
            "import enum\nclass E(enum.Flag):\n    A = 1\n    B = 2\nE.A._value_ = 5",
            "policy",
            "enum sets a member's _sunder_ attributes once, when it is made",
        ),
        "an enum class's member table swapped once made": Refusal(
            "import enum\nclass E(enum.Flag):\n    A = 1\nE._value2member_map_ = {}",
            "policy",
            "enum's _sunder_ attributes of a class are set when the class is made",
        ),
        "a recipe's state written into a class of the sandbox's": Refusal(
            "import copy, functools\ngs = object.__getattribute__\nclass C:\n"
            "    def __reduce_ex__(self, p):\n"
            "        return (functools.partial(type, gs), (), {'__setstate__': print})\n"
            "copy.copy(C())",
            "policy",
            "is the class GuardedSlot from outside the snippet",
        ),
        "cached_property writing into an object from outside": Refusal(
            "import functools, string\ncp = functools.cached_property(lambda o: 1)\n"
            "cp.__set_name__(None, 'pattern')\ncp.__get__(string.Template('$x'))",
            "runtime",
            "cached_property caches on instances of the snippet's own classes, not on a Template "
            "from outside",
        ),
        "a TZif whose transition index is one past its types (gh-145883)": Refusal(
            "import io, struct\nfrom zoneinfo import ZoneInfo\n"
            "hdr = b'TZif' + b'\\0' * 16 + struct.pack('>6l', 0, 0, 0, 3, 1, 4)\n"
            "body = struct.pack('>3l', 0, 1000, 100000) + bytes([0, 1, 0])"
            " + struct.pack('>lbb', 0, 0, 0) + b'UTC\\0'\n"
            "ZoneInfo.from_file(io.BytesIO(hdr + body), key='x')",
            "runtime",
            "Invalid transition index found while reading TZif: 1",
        ),
        "astimezone writing into what a datetime subclass's __new__ made (gh-145166's kin)": Refusal(
            "import datetime\narm = []\nclass D(datetime.datetime):\n"
            "    def __new__(cls, *a, **k):\n        if arm:\n"
            "            return bytes(8) + (2**40).to_bytes(8, 'little') + bytes(8)\n"
            "        return super().__new__(cls, *a, **k)\n"
            "dt = D(2020, 1, 1, tzinfo=datetime.timezone.utc)\narm.append(1)\n"
            "dt.astimezone(datetime.timezone(datetime.timedelta(hours=1)))",
            "runtime",
            "D.__new__() returned a bytes, not a D: a class deriving from datetime makes objects "
            "laid out as one",
        ),
        "ctime of a date made from pickle state of year 0": Refusal(
            "import datetime\ndatetime.date(b'\\x00\\x00\\x01\\x00').ctime()",
            "runtime",
            "year 0 is out of range",
        ),
        "a name past the method cache's 100 characters, in the snippet (gh-89811)": Refusal(
            "class Box:\n    pass\nb = Box()\nb." + "x" * 110 + " = 1",
            "policy",
            "is 110 characters long; names are at most 100 characters",
        ),
        "a dataclass field past 100 characters, made at run time (gh-89811)": Refusal(
            "import dataclasses\nL = 'x' * 110\ndataclasses.make_dataclass('DC', [(L, int)])",
            "runtime",
            "is 110 characters long; names are at most 100 characters",
        ),
        "getattr of a name past 100 characters (gh-89811)": Refusal(
            "class C:\n    pass\ngetattr(C(), 'y' * 101, None)",
            "policy",
            "is 101 characters long; names are at most 100 characters",
        ),
        "except* splitting with a group subclass's split (gh-128049)": Refusal(
            "class EG(ExceptionGroup):\n    def split(self, t):\n        return 12345\n"
            "try:\n    raise EG('x', [TypeError(1)])\nexcept* KeyError as e:\n    pass",
            "runtime",
            "type 'ExceptionGroup' is not an acceptable base type",
        ),
        "a group subclass made by type() (gh-128049)": Refusal(
            "type('EG', (BaseExceptionGroup,), {'split': lambda self, t: 1})",
            "runtime",
            "type 'BaseExceptionGroup' is not an acceptable base type",
        ),
        "a group subclass made by make_dataclass (gh-128049)": Refusal(
            "import dataclasses\ndataclasses.make_dataclass('X', [], bases=(ExceptionGroup,))",
            "runtime",
            "type 'ExceptionGroup' is not an acceptable base type",
        ),
        "a group subclass behind a base whose __init_subclass__ says nothing (gh-128049)": Refusal(
            "class S:\n    def __init_subclass__(cls, **kw):\n        pass\n"
            "class X(S, ExceptionGroup):\n    pass",
            "runtime",
            "type 'ExceptionGroup' is not an acceptable base type",
        ),
        "a generic alias substituting a snippet's __typing_subst__ (gh-138479)": Refusal(
            SUBST + "list[P()][int].__args__[0]",
            "runtime",
            "a P object cannot be substituted in GenericAlias arguments",
        ),
        "a union substituting a snippet's __typing_subst__ (gh-138479)": Refusal(
            SUBST + "(int | list[P()])[int]",
            "runtime",
            "a P object cannot be substituted in GenericAlias arguments",
        ),
        "a nested alias substituting a snippet's __typing_subst__ (gh-138479)": Refusal(
            SUBST + "import typing\ntyping.Optional[list[P()]][int]",
            "runtime",
            "a P object cannot be substituted in GenericAlias arguments",
        ),
        "singledispatch registering a string annotation, which CPython would eval": Refusal(
            "import functools\n@functools.singledispatch\ndef f(x):\n    return 0\n"
            "@f.register\ndef _(x: '().__class__.__base__.__subclasses__()'):\n    return 1",
            "runtime",
            "Invalid annotation for 'x'. '().__class__.__base__.__subclasses__()' is not a class: "
            "a string, which the sandbox does not evaluate",
        ),
        "asyncio.gather given an object that looks like a future": Refusal(
            "import asyncio\nclass Fake:\n    _asyncio_future_blocking = False\n"
            "    def get_loop(self):\n        return None\nawait asyncio.gather(Fake())",
            "runtime",
            "asyncio.gather() takes coroutines and awaitables, not Fake",
        ),
    },
    "classes made natively": {
        "type.__new__ called directly": Refusal(
            "class Base:\n    pass\n"
            "type.__new__(type, 'X', (Base,), {'__add__': staticmethod(type)})",
            "policy",
            "type.__new__, which makes classes natively",
        ),
        "a class made natively, handed over by a descriptor's __set_name__": Refusal(
            "import functools\nclass Hook:\n    def __set_name__(self, owner, name):\n"
            "        owner()\nclass Base:\n    pass\n"
            "functools.partial(type, 'X', (Base,))({'__add__': type, 'h': Hook()})",
            "runtime",
            "Error calling __set_name__ on 'Hook' instance 'h' in 'X'",
        ),
        "a class made natively, handed over by its base's __init_subclass__": Refusal(
            "import functools\nleak = []\nclass Base:\n    def __init_subclass__(cls):\n"
            "        leak.append(cls)\nfunctools.partial(type, 'X', (Base,))({'__add__': type})",
            "policy",
            "a class made outside a class statement (type.__new__, a metaclass called directly "
            "or from C) is not allowed",
        ),
        "a class made natively by a key function": Refusal(
            "import functools\nclass Hook:\n    def __set_name__(self, owner, name):\n"
            "        owner()\nsorted([{'h': Hook()}], key=functools.partial(type, 'S', ()))",
            "runtime",
            "Error calling __set_name__ on 'Hook' instance 'h' in 'S'",
        ),
        "type called by functools.partial": Refusal(
            "import functools\nclass Base:\n    pass\n"
            "functools.partial(type, 'X', (Base,))({'__add__': type})",
            "policy",
            "the class X from outside the snippet",
        ),
        "type called by map": Refusal(
            "class Base:\n    pass\nlist(map(type, ['X'], [(Base,)], [{'__add__': type}]))",
            "policy",
            "the class X from outside the snippet",
        ),
        "a vetted metaclass called directly": Refusal(
            "import abc\nclass Base:\n    pass\nabc.ABCMeta('X', (Base,), {'__add__': type})",
            "policy",
            "a special method must be a function the snippet defines",
        ),
        "type() with a class keyword": Refusal(
            "class Base:\n    def __init_subclass__(cls, **kw):\n        pass\n"
            "type('Z', (Base,), {'__add__': staticmethod(type)}, k=1)",
            "policy",
            "a special method must be a function the snippet defines",
        ),
        "an exception whose __traceback__ is a property": Refusal(
            "class FakeTB:\n    tb_next = None\n    @property\n    def tb_lineno(self):\n"
            "        " + ESCAPE + "\n        return 'x'\nclass E(Exception):\n    @property\n"
            "    def __traceback__(self):\n        return FakeTB()\nraise E('boom')",
            "policy",
            "class E's __traceback__ = property is not allowed",
        ),
    },
    "writes forwarded or on shared objects": {
        "a typing alias forwarding writes to what it wraps": Refusal(
            "import typing\nsetattr(typing.Annotated[tools, 0], '_names', ['*'])",
            "policy",
            "a typing alias of Namespace: an alias stands for a class",
        ),
        "a typing alias of a stdlib class": Refusal(
            "import typing\ntyping.Counter.most_common = 5",
            "policy",
            "writing to a _SpecialGenericAlias object is not allowed",
        ),
        "a private attribute of a record from outside": Refusal(
            "import decimal\nc = decimal.Context()\nc._x = 1",
            "policy",
            "private attributes are writable on the snippet's own objects only",
        ),
        "a private attribute of a record by setattr": Refusal(
            "import textwrap\nsetattr(textwrap.TextWrapper(), '_x', 1)",
            "policy",
            "private attributes are writable on the snippet's own objects only",
        ),
        "the shared zone every datetime uses": Refusal(
            "import zoneinfo\nzoneinfo.ZoneInfo('UTC').utcoffset = print",
            "policy",
            "writing to a ZoneInfo object is not allowed",
        ),
        "an enum member of a module": Refusal(
            "import re\nre.I.extra = 1", "policy", "writing to a RegexFlag object is not allowed"
        ),
        "a guarded slot re-made in place": Refusal(
            "og = object.__getattribute__\nog.__init__(print, print)",
            "policy",
            "attribute '__init__' is GuardedSlot.__init__ bound to a GuardedSlot",
        ),
    },
    "values C hands to the snippet's functions": {
        "a bisect key's result handed to the snippet's __lt__": Refusal(
            "import bisect\nclass Sink:\n    def __lt__(self, other):\n        return False\n"
            "bisect.bisect([help], Sink(), key=type)",
            "policy",
            "argument 'other' of __lt__() is the class",
        ),
        "a bisect_left key's result handed to the snippet's reflected __gt__": Refusal(
            "import bisect\nclass Sink:\n    def __gt__(self, other):\n        return False\n"
            "import json\nbisect.bisect_left([json], Sink(), key=type)",
            "policy",
            "argument 'other' of __gt__() is the class",
        ),
        "a bisect key's result handed to the snippet's __lt__ through *args": Refusal(
            "import bisect\nclass Sink:\n    def __lt__(*a):\n        for x in a:\n"
            "            pass\n        return False\nbisect.bisect([help], Sink(), key=type)",
            "policy",
            "argument 'a' of __lt__() is the class",
        ),
        "a typing alias standing for a NewType, called on a shared class": Refusal(
            "import typing, collections\n"
            "typing.Annotated[typing.NewType('N', int), 0](collections.Counter)",
            "policy",
            "a typing alias of N: an alias stands for a class or a typing form",
        ),
        "a bisect key's result handed to a lambda": Refusal(
            "import bisect\nclass Sink:\n    __gt__ = lambda self, other: False\n"
            "bisect.bisect_left([tools], Sink(), key=type)",
            "policy",
            "argument 'other' of a lambda is the class",
        ),
        "a typing alias's __getattr__ asked for a private name of what it stands for": Refusal(
            "import typing\ntyping.List[int].__getattr__('_inst')",
            "policy",
            "private names are readable on the snippet's own objects only",
        ),
        "a typing alias standing for an object from outside": Refusal(
            "import typing\ntyping.Annotated[help, 0].__getattr__('_entries')",
            "policy",
            "a typing alias of Help: an alias stands for a class or a typing form",
        ),
    },
    "match patterns": {
        "__match_args__ written in place by the subject expression, after the check": Refusal(
            "import dataclasses\nclass TB:\n    pass\n"
            "def arm(x):\n    dataclasses.dataclass(TB)\n    return x\n"
            "match arm(TB()):\n    case TB(fr):\n        pass",
            "runtime",
            "TB() accepts 0 positional sub-patterns (1 given)",
        ),
        "a positional pattern on a typing protocol": Refusal(
            "import typing\nclass Generic(typing.Protocol):\n    __match_args__ = ('real',)\n"
            "@typing.runtime_checkable\nclass P(Generic, typing.Protocol):\n    pass\n"
            "match 5:\n    case P(r):\n        pass",
            "policy",
            "the class pattern P(...) with positional sub-patterns is not allowed",
        ),
        "a dataclass field named as a frame's attribute": Refusal(
            "import dataclasses\n@dataclasses.dataclass\nclass TB:\n    tb_frame: int = 0",
            "runtime",
            "cannot be the interpreter's internal names such as 'tb_frame'",
        ),
        "a namedtuple field named as a frame's attribute": Refusal(
            "import collections\ncollections.namedtuple('TB', ['tb_frame'])",
            "runtime",
            "a field cannot be the internal name 'tb_frame'",
        ),
        "a refused capture kept after its refusal is caught": Refusal(
            "class S(str):\n    __match_args__ = ('format',)\n"
            "try:\n    match S('{0}'):\n        case S(fmt):\n            pass\n"
            "except PolicyError:\n    pass\nfmt",
            "runtime",
            "name 'fmt' is not defined",
        ),
        "a protocol made of a class named Generic": Refusal(
            "import dataclasses, typing\nT = typing.TypeVar('T')\n@dataclasses.dataclass\n"
            "class Generic(typing.Generic[T]):\n    _is_protocol = True\n    tb_frame: int = 0\n"
            "@typing.runtime_checkable\nclass Any_(Generic, typing.Protocol):\n    pass",
            "policy",
            "class Generic defining _is_protocol is not allowed",
        ),
        "a protocol flag written after the class is made": Refusal(
            "class C:\n    pass\nC._is_runtime_protocol = True",
            "policy",
            '"_is_runtime_protocol" cannot be assigned or deleted',
        ),
        "a dataclass field naming a frame's attribute, matched positionally": Refusal(
            "import dataclasses\n@dataclasses.dataclass\nclass TB:\n    tb_frame: int = 0\n"
            "class CM:\n    def __enter__(self):\n        return self\n"
            "    def __exit__(self, t, v, tb):\n        match tb:\n            case TB(fr):\n"
            "                return fr\n        return True\nwith CM():\n    1/0",
            "runtime",
            "cannot be the interpreter's internal names such as 'tb_frame'",
        ),
        "a namedtuple's private field, matched positionally, in a class body": Refusal(
            "import dataclasses\n@dataclasses.dataclass\nclass SC:\n    _ids: int = 0\n"
            "class K:\n    match SC():\n        case SC(ids):\n            got = ids",
            "policy",
            "the class pattern SC(...) reading '_ids'",
        ),
        "an isinstance hook in a made dataclass's namespace": Refusal(
            "import abc, dataclasses\nA = dataclasses.make_dataclass('A', [('q', int)], "
            "bases=(abc.ABC,), namespace={'__subclasshook__': classmethod(lambda c, s: True), "
            "'__match_args__': ('__getattribute__',)})",
            "policy",
            "isinstance hooks are refused",
        ),
        "a capture of what is handed out only as a guarded stand-in": Refusal(
            "class S(str):\n    __match_args__ = ('format',)\n"
            "match S('{0.__class__}'):\n    case S(f):\n        f(1)",
            "policy",
            "it is handed to snippets only through a guard",
        ),
        "an isinstance hook that makes a class pattern match anything": Refusal(
            "import abc\nclass M(abc.ABC):\n    __match_args__ = ('tb_frame',)\n"
            "    @classmethod\n    def __subclasshook__(cls, C):\n        return True",
            "policy",
            "isinstance hooks are refused",
        ),
        "__instancecheck__ in a class body": Refusal(
            "class M:\n    def __instancecheck__(cls, x):\n        return True",
            "policy",
            "isinstance hooks are refused",
        ),
        "an isinstance hook added after the class was made": Refusal(
            "import abc\nclass M(abc.ABC):\n    pass\n"
            "M.__subclasshook__ = classmethod(lambda cls, C: True)",
            "policy",
            "__subclasshook__",
        ),
        "__match_args__ naming a private attribute": Refusal(
            "class M:\n    __match_args__ = ('__traceback__',)", "policy", PRIVATE
        ),
        "__match_args__ naming a frame's attribute": Refusal(
            "class M:\n    __match_args__ = ('f_back',)", "policy", INTERNALS
        ),
        "a subclass's write of an outside base's private state (OrderedDict's links)": Refusal(
            "import collections, json\nclass O(collections.OrderedDict):\n    pass\n"
            "class L:\n    pass\no = O(k=0)\nlk = L()\nlk.prev, lk.next = PolicyError, json.dumps\n"
            "o._OrderedDict__map = {'k': lk}\ndel o['k']",
            "policy",
            "'_OrderedDict__map' of O is not allowed: it is private state of OrderedDict",
        ),
        "an outside base's private state set on the subclass itself": Refusal(
            "import collections\nclass O(collections.OrderedDict):\n    pass\n"
            "O._OrderedDict__root = 1",
            "policy",
            "O derives from OrderedDict from outside the snippet, which reads its private state",
        ),
        "an outside base's private state in a class body": Refusal(
            "import collections\nclass O(collections.OrderedDict):\n    _OrderedDict__root = 1",
            "policy",
            "class O with _OrderedDict__root is not allowed: OrderedDict from outside",
        ),
        "ExitStack's callbacks replaced by a list the snippet reads": Refusal(
            "import contextlib\nclass X(contextlib.ExitStack):\n    pass\nx = X()\n"
            "x._exit_callbacks = []",
            "policy",
            "it is private state of _BaseExitStack",
        ),
        "ExitStack's callbacks replaced through setattr": Refusal(
            "import contextlib\nclass X(contextlib.ExitStack):\n    pass\n"
            "object.__setattr__(X(), '_exit_callbacks', [])",
            "policy",
            "it is private state of _BaseExitStack",
        ),
        "ExitStack's callbacks replaced through vars (a copy that writes through checks)": (
            Refusal(
                "import contextlib\nclass X(contextlib.ExitStack):\n    pass\nx = X()\nlst = []\n"
                "vars(x)['_exit_callbacks'] = lst",
                "policy",
                "writing attribute '_exit_callbacks' of X is not allowed: it is private state of "
                "_BaseExitStack",
            )
        ),
        "enum's _simple keyword, sharing Enum's member maps": Refusal(
            "import enum\nclass E(enum.Enum, _simple=True):\n    pass",
            "policy",
            "class E's keyword _simple= is not allowed",
        ),
        "enum's _simple keyword through type()": Refusal(
            "import enum\ntype('F', (enum.Flag,), {'_member_map_': {}}, _simple=True)",
            "policy",
            "class F's keyword _simple= is not allowed",
        ),
        "typing's _root keyword": Refusal(
            "import typing\nclass T(typing.TypeVar, _root=True):\n    pass",
            "policy",
            "class T's keyword _root= is not allowed",
        ),
        "a subclass of asyncio's semaphore, to reach the real one": Refusal(
            "import asyncio\nclass S(asyncio.Semaphore):\n    pass",
            "runtime",
            "type 'asyncio.locks.Semaphore' is not an acceptable base type",
        ),
        "a subclass of a snippet class and asyncio's queue": Refusal(
            "import asyncio\nclass A:\n    pass\ntype('Q', (A, asyncio.PriorityQueue), {})",
            "runtime",
            "type 'asyncio.queues.PriorityQueue' is not an acceptable base type",
        ),
        "the real primitive behind asyncio's semaphore": Refusal(
            "import asyncio\nasyncio.Semaphore(2)._inner",
            "policy",
            "attribute '_inner' of a Semaphore object is not allowed",
        ),
        "the real task behind a created task": Refusal(
            "import asyncio\nt = asyncio.create_task(asyncio.sleep(0))\nt._inner",
            "policy",
            "attribute '_inner' of a Task object is not allowed",
        ),
        "a created task's class, to make one": Refusal(
            "import asyncio\ntype(asyncio.create_task(asyncio.sleep(0)))",
            "policy",
            "the class asyncio.Task from outside the snippet",
        ),
        "a snippet function's code swapped": Refusal(
            "def f():\n    pass\ndef g():\n    pass\nf.__code__ = g.__code__",
            "policy",
            '"__code__" is a restricted name',
        ),
        "a snippet function's module rewritten": Refusal(
            "def f():\n    pass\nsetattr(f, '__module__', 'runtime.worker')",
            "policy",
            "writing attribute '__module__' of a function is not allowed",
        ),
        "a class pattern capturing a class's shared table": Refusal(
            "import textwrap\nmatch textwrap.TextWrapper():\n"
            "    case textwrap.TextWrapper(unicode_whitespace_trans=x):\n"
            "        x[32] = 35",
            "policy",
            "capturing a dict a class from outside holds in a pattern is not allowed",
        ),
        "a class pattern capturing a coroutine's send": Refusal(
            "async def f():\n    pass\nc = f()\nmatch c:\n    case object(send=s):\n"
            "        pass\nc.close()",
            "policy",
            "coroutine.send() is not allowed",
        ),
        "OrderedDict's link factory given to __setitem__": Refusal(
            "import collections\nclass L:\n    pass\no = collections.OrderedDict()\n"
            "o.__setitem__('k', 1, Link=L)",
            "runtime",
            "OrderedDict.__setitem__() got an unexpected keyword argument 'Link'",
        ),
        "a dataclass field named after an outside base's private state": Refusal(
            "import dataclasses, contextlib\n@dataclasses.dataclass\n"
            "class X(contextlib.ExitStack):\n    _exit_callbacks: list",
            "policy",
            "'_exit_callbacks' of dataclass X is not allowed: it is private state of",
        ),
        "make_dataclass with an outside base's private state": Refusal(
            "import dataclasses, collections\n"
            "dataclasses.make_dataclass('D', [('_OrderedDict__map', dict)], "
            "bases=(collections.OrderedDict,))",
            "policy",
            "'_OrderedDict__map' of class D is not allowed",
        ),
        "a cached_property renamed to an outside base's private state": Refusal(
            "import functools, contextlib\nclass CP(functools.cached_property):\n    pass\n"
            "cp = CP(lambda self: [])\nclass X(contextlib.ExitStack):\n    cb = cp\n"
            "cp.attrname = '_exit_callbacks'\nX().cb",
            "policy",
            "'_exit_callbacks' of X is not allowed",
        ),
        "update_wrapper copying an outside base's private state": Refusal(
            "import functools, contextlib\nclass W:\n    pass\nw = W()\nw._exit_callbacks = []\n"
            "class X(contextlib.ExitStack):\n    pass\nfunctools.update_wrapper(X(), w)",
            "policy",
            "'_exit_callbacks' of X is not allowed",
        ),
        "vars() of an outside-based instance, to edit its base's state in place": Refusal(
            "import contextlib\nclass X(contextlib.ExitStack):\n    pass\n"
            "vars(X())['_exit_callbacks'].append((True, print))",
            "runtime",
            "'_exit_callbacks'",
        ),
        "a Fraction subclass's parts rewritten (slots whose setter is elsewhere)": Refusal(
            "import fractions\nclass F(fractions.Fraction):\n    pass\nF(1, 2)._numerator = [1]",
            "policy",
            "'_numerator' of F is not allowed: it is private state of Fraction",
        ),
        "an outside base's state answered by __getattribute__": Refusal(
            "import collections\nclass O(collections.OrderedDict):\n"
            "    def __getattribute__(self, name):\n        return object.__getattribute__(self, name)",
            "policy",
            "class O with __getattribute__ is not allowed",
        ),
        "an outside base's state given by a mixin's property": Refusal(
            "import collections\nclass M:\n    @property\n    def _OrderedDict__root(self):\n"
            "        return None\nclass O(M, collections.OrderedDict):\n    pass",
            "policy",
            "class O with _OrderedDict__root is not allowed",
        ),
        "an outside base's state added to a mixin afterwards": Refusal(
            "import collections\nclass M:\n    pass\nclass O(M, collections.OrderedDict):\n"
            "    pass\nM._OrderedDict__map = {}",
            "policy",
            "O derives from OrderedDict from outside the snippet",
        ),
        "a cached_property named by a str subclass": Refusal(
            "import functools, collections\nclass S(str):\n    pass\n"
            "class CP(functools.cached_property):\n    pass\ncp = CP(lambda self: {})\n"
            "cp.attrname = S('_OrderedDict__map')\nclass O(collections.OrderedDict):\n    pass\n"
            "cp.__get__(O(), O)",
            "runtime",
            "cached_property's attrname must be a str, not S",
        ),
        "a cached_property whose name is a str subclass that hashes as another": Refusal(
            "import functools\nclass S(str):\n    pass\nclass CP(functools.cached_property):\n"
            "    pass\ncp = CP(lambda self: 1)\ncp.attrname = S('x')\nclass C:\n    pass\n"
            "cp.__get__(C(), C)",
            "runtime",
            "cached_property's attrname must be a str, not S",
        ),
        "__match_args__ rewritten after the class was made": Refusal(
            "class M:\n    __match_args__ = ('x',)\nM.__match_args__ = ('__dict__',)",
            "policy",
            "__match_args__",
        ),
    },
    "what a class from outside calls on its own attributes": {
        "Template's pattern planted after the class was made": Refusal(
            PLANTED + "class T(string.Template):\n    pass\nT.pattern = h\nT('x').substitute()",
            "policy",
            "T.pattern = a Holder is not allowed: it answers in place of Template.pattern",
        ),
        "Template's pattern planted with setattr": Refusal(
            PLANTED + "class T(string.Template):\n    pass\nsetattr(T, 'pattern', h)",
            "policy",
            "T.pattern = a Holder is not allowed",
        ),
        "Template's pattern inherited from a base of the snippet's": Refusal(
            PLANTED + "class B:\n    pattern = h\nclass T(B, string.Template):\n    pass",
            "policy",
            "B.pattern = a Holder is not allowed",
        ),
        "Template's pattern written to a base after the subclass was made": Refusal(
            PLANTED + "class B:\n    pass\nclass T(B, string.Template):\n    pass\nB.pattern = h",
            "policy",
            "B.pattern = a Holder is not allowed",
        ),
        "ExitStack's exit pusher as a container's method in the class body": Refusal(
            "import contextlib, io\nd = {}\nclass S(contextlib.ExitStack):\n"
            "    _push_cm_exit = d.__setitem__\nS().enter_context(io.StringIO())\nlist(d)",
            "policy",
            "S._push_cm_exit = dict.__setitem__ is not allowed: it answers in place of "
            "_BaseExitStack._push_cm_exit",
        ),
        "a class made by type() with a planted attribute": Refusal(
            PLANTED + "T = type('T', (string.Template,), {'pattern': h})",
            "policy",
            "T.pattern = a Holder is not allowed",
        ),
        "a property whose accessors are a methodcaller and a container's method": Refusal(
            "import dataclasses, operator\n@dataclasses.dataclass(eq=False)\nclass D:\n"
            "    x: int = 0\nbox = {}\nD.x = property(operator.methodcaller('f', tools), "
            "box.__setitem__)\nd = object.__new__(D)\nd.f = type\ndataclasses.replace(d)\n"
            "list(box.values())",
            "policy",
            "class D's property x is not allowed: every read of it calls its getter natively",
        ),
        "a property of a builtin in a class body": Refusal(
            "class C:\n    kind = property(type)\nC().kind",
            "policy",
            "class C's property kind is not allowed",
        ),
        "a dataclass field named as Template's pattern": Refusal(
            PLANTED + "import dataclasses\n@dataclasses.dataclass\nclass T(string.Template):\n"
            "    template: str\n    pattern: object\nT('$a', h).substitute(a=1)",
            "policy",
            "writing attribute 'pattern' of dataclass T is not allowed: it would answer in "
            "place of Template.pattern",
        ),
        "make_dataclass with a field named as Template's pattern": Refusal(
            PLANTED + "import dataclasses\nT = dataclasses.make_dataclass('T', [('template', str), "
            "('pattern', object)], bases=(string.Template,), frozen=True)",
            "policy",
            "writing attribute 'pattern' of class T is not allowed",
        ),
        "update_wrapper copying a planted pattern onto a Template": Refusal(
            PLANTED + "import functools\nclass T(string.Template):\n    pass\nt = T('$a')\n"
            "def src():\n    pass\nsrc.pattern = h\nfunctools.update_wrapper(t, src)",
            "policy",
            "writing attribute 'pattern' of a T object is not allowed",
        ),
        "a cached_property renamed to Template's pattern": Refusal(
            PLANTED + "import functools\nclass CP(functools.cached_property):\n    pass\n"
            "cp = CP(lambda self: h)\nclass T(string.Template):\n    other = cp\n"
            "cp.attrname = 'pattern'\nT('$a').other",
            "policy",
            "writing attribute 'pattern' of a T object is not allowed",
        ),
        "a dataclass field named as ExitStack's exit pusher": Refusal(
            "import contextlib, dataclasses\nbox = {}\n@dataclasses.dataclass\n"
            "class S(contextlib.ExitStack):\n    _push_cm_exit: object\n"
            "S(box.__setitem__).enter_context(contextlib.nullcontext())",
            "policy",
            "writing attribute '_push_cm_exit' of dataclass S is not allowed",
        ),
        "Template's pattern written through vars(), whose writes are checked": Refusal(
            PLANTED + "class T(string.Template):\n    pass\nt = T('$a')\nvars(t).update(pattern=h)",
            "policy",
            "writing attribute 'pattern' of a T object is not allowed: it would answer in place "
            "of Template.pattern",
        ),
        "object.__setattr__ on a class (past the type's caches and the class write checks)": (
            Refusal(
                PLANTED + "class T(string.Template):\n    pass\n"
                "object.__setattr__(T, 'pattern', h)",
                "runtime",
                "can't apply this __setattr__ to type object",
            )
        ),
        "object's __setattr__ reached through super() over the metaclass": Refusal(
            PLANTED + "class T(string.Template):\n    pass\n"
            "super(type, T).__setattr__('pattern', h)",
            "runtime",
            "can't apply this __setattr__ to type object",
        ),
        "object.__delattr__ on a class, then the freed value read back": Refusal(
            "class C:\n    x = ['a' * 40]\nobject.__delattr__(C, 'x')\n"
            "junk = [[1 << 40, 2, 3] for _ in range(3000)]\nC.x",
            "runtime",
            "can't apply this __delattr__ to type object",
        ),
        "a property of the snippet's own getter answering ExitStack's exit pusher": Refusal(
            "import contextlib, io\nd = {}\nclass S(contextlib.ExitStack):\n"
            "    _push_cm_exit = property(lambda self: d.__setitem__)\n"
            "S().enter_context(io.StringIO())",
            "policy",
            "S._push_cm_exit = a property is not allowed: it answers in place of "
            "_BaseExitStack._push_cm_exit",
        ),
        "a property of the snippet's own getter written as Template's pattern": Refusal(
            PLANTED + "class T(string.Template):\n    pass\nT.pattern = property(lambda self: h)",
            "policy",
            "T.pattern = a property is not allowed",
        ),
        "a __getattribute__ answering Template's pattern": Refusal(
            PLANTED + "class T(string.Template):\n    def __getattribute__(self, name):\n"
            "        return h if name == 'pattern' else 'text'\nsuper(T, T('x')).substitute()",
            "policy",
            "class T with __getattribute__ is not allowed: it would answer for the methods and "
            "attributes of Template",
        ),
        "a __getattribute__ written onto a base of a Template subclass": Refusal(
            "import string\nclass B:\n    pass\nclass T(B, string.Template):\n    pass\n"
            "def read(self, name):\n    return 'text'\nB.__getattribute__ = read",
            "policy",
            "class B with __getattribute__ is not allowed",
        ),
        "a __setattr__ handed ExitStack's deque of exit functions by pop_all": Refusal(
            "import contextlib\nmode = [0]\nclass S(contextlib.ExitStack):\n"
            "    def __new__(cls):\n        return super().__new__(S2 if mode[0] else cls)\n"
            "class S2(S):\n    def __setattr__(self, name, value):\n        pass",
            "policy",
            "class S2 with __setattr__ is not allowed: _BaseExitStack from outside the snippet keeps "
            "private state on the instance",
        ),
        "TextWrapper handing its shared translation table to a str subclass": Refusal(
            "import textwrap\nseen = []\nclass S(str):\n    def expandtabs(self, tabsize=8):\n"
            "        return self\n    def translate(self, table):\n        seen.append(table)\n"
            "        return str(self)\ntextwrap.wrap(S('a b c'), width=10)\nseen[0]",
            "runtime",
            "list index out of range",
        ),
        "an int subclass's __ror__ planting itself in RegexFlag's member map": Refusal(
            "import re\nclass Y(int):\n    def __ror__(self, other):\n"
            "        return Y(int.__or__(int(self), other))\n    def __hash__(self):\n"
            "        return int(self)\n    def __eq__(self, other):\n"
            "        return int(self) == other\nre.I | Y(1 << 20)\n"
            "raise ValueError('value of type ' + type((re.I | (1 << 20)).value).__name__)",
            "runtime",
            "value of type int",
        ),
        "TextWrapper handing its shared table to an object that is not text": Refusal(
            "import textwrap\nclass P:\n    def expandtabs(self, tabsize=8):\n        return self\n"
            "    def translate(self, table):\n        return 'x'\ntextwrap.wrap(P())",
            "runtime",
            "the text to wrap must be a str or bytes object, not P",
        ),
        "re.escape handing its table to an object answering str for its __class__": Refusal(
            "import re\nclass P:\n    def __getattribute__(self, name):\n"
            "        return str if name == '__class__' else object.__getattribute__(self, name)\n"
            "    def translate(self, table):\n        return 'x'\nre.escape(P())",
            "runtime",
            "re.escape()'s pattern must be a str or bytes object, not P",
        ),
        "re's cache keyed on flags that compare equal to anything": Refusal(
            "import re\nclass P:\n    def __hash__(self):\n        return 0\n"
            "    def __eq__(self, other):\n        return True\n    def __and__(self, other):\n"
            "        return 0\n    __rand__ = __and__\nre.compile('secret.x', P())",
            "runtime",
            "flags must be an int, not P",
        ),
        "an object equal to str posing as a builtin data class override": Refusal(
            PLANTED + "h.__class__\nclass Q:\n    def __hash__(self):\n        return hash(str)\n"
            "    def __eq__(self, other):\n        return True\nq = Q()\nq.sub = box.__setitem__\n"
            "class T(string.Template):\n    pass\nT.pattern = q",
            "policy",
            "T.pattern = a Q is not allowed",
        ),
        "copy's recipe answering a shared object to set its state": Refusal(
            "import copy, uuid\nclass R:\n    def __reduce_ex__(self, proto):\n"
            "        return (lambda: uuid.NAMESPACE_DNS, (), {'int': 7, 'is_safe': None})\n"
            "copy.copy(R())",
            "runtime",
            "cannot copy: the recipe made a UUID, an object from outside the snippet",
        ),
    },
}

CASES = [(family, name) for family, payloads in FAMILIES.items() for name in payloads]


def test_every_family_has_payloads() -> None:
    """The corpus covers each technique family, with 80+ payloads in all."""
    assert all(len(payloads) >= 5 for payloads in FAMILIES.values())
    assert len(CASES) >= 80


@pytest.mark.parametrize(("family", "name"), CASES, ids=[f"{f}: {n}" for f, n in CASES])
async def test_payload_meets_its_refusal(
    fab: Fabric, tmp_path: Path, family: str, name: str
) -> None:
    """The payload fails with its own refusal and leaves no trace on the host."""
    payload = FAMILIES[family][name]
    canary = tmp_path / "canary"
    code = payload.code.replace("{canary}", str(canary))
    result = await fab.exec(code)
    assert not result.ok, f"{name} ran: {result.text}"
    assert result.error is not None
    assert result.error.kind == payload.kind, result.text
    assert payload.says in result.error.message, result.text
    assert not canary.exists()


IDIOMS: dict[str, tuple[str, object]] = {
    "a sort key from an unbound str method": ("sorted(['B', 'a'], key=str.lower)", ["a", "B"]),
    "dict.fromkeys": ("dict.fromkeys('ab', 0)", {"a": 0, "b": 0}),
    "format of fields": ("'{0[a]} {1.real}'.format({'a': 1}, 2)", "1 2"),
    "super() in a subclass": (
        "class E(ValueError):\n    def text(self):\n        return str(super().with_traceback(None))\nE('x').text()",
        "x",
    ),
    "namedtuple records": (
        "import collections\nP = collections.namedtuple('P', 'x y')\np = P(1, 2)\n[p.x + p.y, list(P(3, 4))]",
        [3, [3, 4]],
    ),
    "lru_cache as a factory": (
        "import functools\n@functools.lru_cache(maxsize=None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nfib(30)",
        832040,
    ),
    "cmp_to_key": (
        "import functools\nsorted([3, 1, 2], key=functools.cmp_to_key(lambda a, b: b - a))",
        [3, 2, 1],
    ),
    "groupby": (
        "import itertools\n[(k, len(list(g))) for k, g in itertools.groupby('aabbb')]",
        [["a", 2], ["b", 3]],
    ),
    "finditer": ("import re\n[m.group(0) for m in re.finditer(r'\\d+', 'a1b22')]", ["1", "22"]),
    "Counter.most_common": (
        "import collections\ncollections.Counter('aab').most_common(1)",
        [["a", 2]],
    ),
    "decimal contexts": (
        "import decimal\nwith decimal.localcontext() as c:\n    c.prec = 3\n    x = str(decimal.Decimal(1) / 3)\nx",
        "0.333",
    ),
    "decimal errors carry their signal": (
        "import decimal\ntry:\n    decimal.Decimal('x')\nexcept decimal.InvalidOperation as e:\n    a = str(e.args)\na",
        "([<class 'decimal.ConversionSyntax'>],)",
    ),
    "a generator driven with send": (
        "def g():\n    x = yield 1\n    yield x\nit = g()\nnext(it)\nit.send(5)",
        5,
    ),
    "unified_diff": ("import difflib\nlen(list(difflib.unified_diff(['a\\n'], ['b\\n'])))", 5),
    "heapq.merge": ("import heapq\nlist(heapq.merge([1, 3], [2]))", [1, 2, 3]),
    "statistics regression": (
        "import statistics\nround(statistics.linear_regression([1, 2, 3], [2, 4, 6]).slope, 6)",
        2.0,
    ),
    "starred iteration of a map": ("[*map(str, range(3))]", ["0", "1", "2"]),
    "with ... as an item and as an attribute": (
        "import decimal\nclass Box:\n    pass\nbox, d = Box(), {}\n"
        "with decimal.localcontext() as d['c'], decimal.localcontext() as box.c:\n"
        "    p = d['c'].prec + box.c.prec\np",
        56,
    ),
    "dict of a Counter": (
        "import collections\ndict(collections.Counter('abca'))",
        {"a": 2, "b": 1, "c": 1},
    ),
    "dict of an OrderedDict": (
        "import collections\ndict(collections.OrderedDict(b=1, a=2))",
        {"b": 1, "a": 2},
    ),
    "+= of a map and |= of a zip": (
        "rows = [0]\nrows += map(len, ['ab', 'c'])\nd = {}\nd |= zip('xy', rows)\n[rows, d]",
        [[0, 2, 1], {"x": 0, "y": 2}],
    ),
    "an attribute error's object": (
        "try:\n    (1).nosuch\nexcept AttributeError as e:\n    o = e.obj\no",
        1,
    ),
}


@pytest.mark.parametrize("name", sorted(IDIOMS))
async def test_ordinary_code_still_runs(fab: Fabric, name: str) -> None:
    """The value checks refuse internals, not the code a model writes."""
    code, expected = IDIOMS[name]
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == expected


async def test_no_snippet_code_runs_while_a_facade_is_trusted(fab: Fabric) -> None:
    """namedtuple runs with the audit hook trusting it (it builds code with exec); it takes
    its inputs as plain data first, so a generator of field names cannot run in that window."""
    code = (
        "import collections\n"
        "out = []\n"
        "def probe(tag):\n"
        "    try:\n"
        "        'x'.encode('mac_roman')\n"
        "        out.append(tag + ': ran')\n"
        "    except Exception as e:\n"
        "        out.append(tag + ': ' + str(e)[:40])\n"
        "def fields():\n"
        "    probe('inside')\n"
        "    yield 'a'\n"
        "probe('outside')\n"
        "collections.namedtuple('T', fields())\n"
        "out"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    assert [line.split(": ", 1)[0] for line in result.value] == ["outside", "inside"]
    assert all("the sandbox refuses 'import'" in line for line in result.value), result.value


async def test_no_finalizer_runs_while_the_worker_is_trusted(fab: Fabric) -> None:
    """Decoding a large provider reply allocates, inside the worker's trusted window: the
    collector does not run there, so a snippet generator's ``finally`` (its finalizer) never
    runs while the audit hook trusts (where a codec's import would pass)."""
    code = (
        "log = []\n"
        "def gen(box):\n    try:\n        yield 1\n    finally:\n        try:\n"
        "            log.append(repr('x'.encode('mac_roman')))\n"
        "        except Exception:\n            log.append('untrusted')\n"
        "await state.set('big', [[i] for i in range(20000)])\n"
        "for i in range(200):\n    box = []\n    g = gen(box)\n    box.append(g)\n    next(g)\n"
        "    g = box = None\n"
        "got = await state.get('big')\n[log.count('untrusted'), len(log)]"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    untrusted, ran = result.value
    assert ran > 0 and untrusted == ran, result.value


async def test_no_snippet_code_runs_while_namedtuple_is_trusted(fab: Fabric) -> None:
    """namedtuple's rename flag is made a plain bool before its trusted window: the snippet's
    __bool__ runs outside it, where an import is refused."""
    code = (
        "import collections\nout = []\n"
        "class Flag:\n    def __bool__(self):\n        try:\n"
        "            'x'.encode('mac_roman')\n            out.append('ran')\n"
        "        except Exception as e:\n            out.append(str(e))\n        return True\n"
        "T = collections.namedtuple('T', ['a', 'def'], rename=Flag())\n[out, T._fields]"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    [refusal], fields = result.value
    assert "the sandbox refuses 'import'" in refusal
    assert fields == ["a", "_1"]


def test_dataclass_source_naming_an_unchecked_name_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The backstop behind the field checks: whatever route a name took into dataclasses, the
    text it would exec is parsed and refused when it names anything but the checked fields and
    dataclasses' own names; the checked fields build as usual."""
    import dataclasses as real

    from runtime.worker import _vetted

    monkeypatch.setattr(real, "_create_fn", _vetted._trusted_create_fn)
    monkeypatch.setattr(_vetted.ADOPTION, "owns", lambda obj: True)  # as in a worker
    made = _vetted._built({"a"}, lambda: real.make_dataclass("C", ["a"]), placeholder=False)
    assert repr(made(1)) == "C(a=1)"
    with pytest.raises(TypeError, match="refused to generate a method: it names '_type_b'"):
        _vetted._built({"a"}, lambda: real.make_dataclass("C", ["b"]), placeholder=False)


SHRINKING = (
    "import array\na = array.array('b', [0] * 100)\nclass I:\n    def __index__(self):\n"
    "        del a[:]\n        return 1\n"
)
CLEARING = (
    "import collections\nod = collections.OrderedDict((i, i) for i in range(10))\n"
    "class H:\n    def __hash__(self):\n        return hash(3)\n    def __eq__(self, other):\n"
    "        od.clear()\n        return False\n"
)
EMPTYING = (
    "class A:\n    def __lt__(self, other):\n        w.clear()\n        return NotImplemented\n"
    "    __le__ = __lt__\nclass B:\n    pass\n"
)
EMPTIED_BYTES = (
    "data = bytearray()\ndef fill():\n    data[:] = b'x' * 4096\nfill()\nclass I:\n"
    "    def __index__(self):\n        data.clear()\n        return 0\n"
)
GROWING = (
    "tasks = set()\nout = []\nclass Dummy:\n    def __hash__(self):\n        return 0\n"
    "grow = tasks.update\nclass T:\n    counter = 0\n    def __init__(self, how):\n"
    "        self.how = how\n    def __hash__(self):\n        return 0\n"
    "    def __eq__(self, other):\n        if T.counter < 1:\n            T.counter += 1\n"
    "            if self.how == 'held':\n                grow([self])\n"
    "            elif self.how == 'mapped':\n                list(map(grow, [[self]]))\n"
    "            elif self.how in ('ixor', 'update'):\n                tasks.update([self])\n"
    "            else:\n                tasks.add(self)\n        return False\n"
    "tasks.add(Dummy())\ntasks.add(Dummy())\ntasks.pop()\n"
)
"""A set holding a dummy slot before an item of the same hash: adding an item whose
``__eq__`` adds to the set filled the slot twice in CPython 3.11 (gh-141805)."""
REENTRANT: dict[str, tuple[str, object]] = {
    "an array item whose __index__ empties the array": (
        SHRINKING + "try:\n    a[50] = I()\nexcept IndexError as e:\n    m = str(e)\nm",
        "array assignment index out of range",
    ),
    "an array's __setitem__ called by name": (
        SHRINKING + "try:\n    a.__setitem__(50, I())\nexcept IndexError as e:\n    m = str(e)\nm",
        "array assignment index out of range",
    ),
    "an array append whose item empties the array": (SHRINKING + "a.append(I())\nlen(a)", 1),
    "an array insert": (SHRINKING + "a.insert(5, I())\nlen(a)", 1),
    "an array extend": (SHRINKING + "a.extend([I(), I()])\nlen(a)", 2),
    "an array fromlist": (SHRINKING + "a.fromlist([I()])\nlen(a)", 1),
    "a snippet's array subclass": (
        "import array\nclass A(array.array):\n    pass\na = A('b', [0] * 100)\n"
        "class I:\n    def __index__(self):\n        del a[:]\n        return 1\n"
        "a.append(I())\nlen(a)",
        1,
    ),
    "a snippet's array subclass storing through super()": (
        "import array\nclass A(array.array):\n    def __setitem__(self, k, v):\n"
        "        super().__setitem__(k, v)\n    def append(self, v):\n        super().append(v)\n"
        "a = A('b', [0] * 100)\nclass I:\n    def __index__(self):\n        del a[:]\n"
        "        return 1\ntry:\n    a[50] = I()\nexcept IndexError:\n    pass\n"
        "a.extend([0] * 10)\na.append(I())\nlen(a)",
        1,
    ),
    "an array subclass whose typecode lies": (
        "import array\nclass T(array.array):\n    @property\n    def typecode(self):\n"
        "        return 'u'\nt = T('b', [0] * 100)\nclass I:\n    def __index__(self):\n"
        "        del t[:]\n        return 1\ntry:\n    t[5] = I()\nexcept IndexError as e:\n"
        "    m = str(e)\nm",
        "array assignment index out of range",
    ),
    "a bytearray item whose __index__ empties it": (
        "b = bytearray(100)\nclass J:\n    def __index__(self):\n        b.clear()\n"
        "        return 1\ntry:\n    b[50] = J()\nexcept IndexError as e:\n    m = str(e)\nm",
        "bytearray index out of range",
    ),
    "OrderedDict.move_to_end with a key that empties it": (
        CLEARING
        + "try:\n    od.move_to_end(H())\nexcept KeyError:\n    m = 'KeyError'\n[m, len(od)]",
        ["KeyError", 0],
    ),
    "OrderedDict.pop with a key that empties it": (
        CLEARING + "[od.pop(H(), 'gone'), len(od)]",
        ["gone", 0],
    ),
    "an OrderedDict item set with a key that empties it": (
        CLEARING + "od[H()] = 1\nlen(od)",
        1,
    ),
    "bytearray.find with a start whose __index__ empties it": (
        EMPTIED_BYTES + "[data.find(b'x', I()), fill(), data.count(b'x', I()), fill(),"
        " data.endswith(b'x', I()), fill(), data.find(I()), fill(), I() in data]",
        [-1, None, 0, None, False, None, -1, None, False],
    ),
    "bytearray % whose argument's __repr__ empties the format": (
        "fmt = bytearray(b'%r' + b'A' * 2000)\nclass E:\n    def __repr__(self):\n"
        "        fmt.clear()\n        junk.extend(bytes([66]) * 1999 for i in range(20))\n"
        "        return 'x'\njunk = []\nout = fmt % (E(),)\n"
        "[len(out), out.count(b'A'), out.count(b'B'), len(fmt)]",
        [2001, 2000, 0, 0],
    ),
    "a task's unread exception shown from its finalizer": (
        "import asyncio\ncalls = []\nclass E(Exception):\n    def __str__(self):\n"
        "        calls.append('str')\n        return 'e'\n    def __repr__(self):\n"
        "        calls.append('repr')\n        return 'E()'\n"
        "async def bad():\n    raise E()\nasync def ok():\n    await asyncio.sleep(0)\n"
        "for c in asyncio.as_completed([ok(), bad()]):\n    break\n"
        "for _ in range(5):\n    await asyncio.sleep(0)\ncalls",
        [],
    ),
    "a set item whose __eq__ adds to the set it is being added to (gh-141805)": (
        GROWING + "for how in ['add', 'ior', 'ixor', 'init', 'update', 'held', 'mapped']:\n"
        "    T.counter = 0\n    t = T(how)\n    try:\n"
        "        if how == 'add':\n            tasks.add(t)\n"
        "        elif how == 'ior':\n            tasks |= {t}\n"
        "        elif how == 'ixor':\n            tasks ^= {t}\n"
        "        elif how == 'init':\n            set.__init__(tasks, [Dummy(), t])\n"
        "        else:\n            tasks.symmetric_difference_update({t})\n"
        "    except RuntimeError as e:\n        out.append(str(e).split()[0])\n"
        "[out, len(tasks) == len(list(tasks))]",
        [
            [*("set.add()", "set.add()", "set.update()", "set.add()"), *["set.update()"] * 3],
            True,
        ],
    ),
    "a set item whose __eq__ rebuilds the set it is being added to in place": (
        "class D:\n    def __init__(self, h):\n        self.h = h\n    def __hash__(self):\n"
        "        return self.h\nclass E(D):\n    n = 0\n    __hash__ = D.__hash__\n"
        "    def __eq__(self, o):\n        self.n += 1\n        return self.n == 1\nout = []\n"
        "def rebuild(how):\n    global s\n    if how == 'method':\n"
        "        s.intersection_update([E(3), d2])\n    else:\n        s &= {E(3), d2}\n"
        "class T(D):\n    __hash__ = D.__hash__\n    def __init__(self, h, how):\n"
        "        super().__init__(h)\n"
        "        self.how = how\n    def __eq__(self, o):\n        if self.how:\n"
        "            how, self.how = self.how, ''\n            rebuild(how)\n        return False\n"
        "for how in ['method', 'operator']:\n    s = set()\n    d1, d2 = D(3), D(3)\n"
        "    s.add(D(5))\n    s.add(d1)\n    s.add(d2)\n    s.discard(d1)\n    try:\n"
        "        s.add(T(3, how))\n    except RuntimeError as e:\n"
        "        out.append(str(e).split()[0])\n    out.append(len(s) == len(list(s)))\nout",
        ["set.intersection_update()", True, "set.__iand__()", True],
    ),
    "an array's insert captured by a class pattern (gh-142555)": (
        SHRINKING + "match a:\n    case array.array(insert=ins):\n        pass\n"
        "ins(50, I())\nlen(a)",
        1,
    ),
    "bisect.insort calling an array's insert natively (gh-142555)": (
        SHRINKING.replace(
            "class I:",
            "class I:\n    def __lt__(self, other):\n"
            "        return False\n    def __gt__(self, other):\n"
            "        return True",
        )
        + "import bisect\nbisect.insort(a, I())\nlen(a)",
        1,
    ),
    "a bytearray slice whose bound's __index__ grows it (a delete and a store)": (
        "ba = bytearray(64)\nclass Ev:\n    def __index__(self):\n"
        "        ba.extend(bytes(1 << 16))\n        return 0\n"
        "del ba[Ev():64:2]\nn = len(ba)\nba[Ev():8:2] = bytes(4)\n[n, len(ba)]",
        [65568, 131104],
    ),
    "a dict key whose __eq__ clears the dict it is being stored in (gh-140551)": (
        "out = []\nfor r in range(200):\n    d = {}\n    class A:\n        def __hash__(s):\n"
        "            return 1\n    class B:\n        def __hash__(s):\n            return 1\n"
        "        def __eq__(s, o):\n            d.clear()\n            return False\n"
        "    d[A()] = 1\n    b = B()\n    d[b] = 2\n    out.append(d.get(A(), 'x'))\n"
        "    try:\n        d.popitem()\n    except KeyError as e:\n        out.append(str(e))\n"
        "    d['k%d' % r] = r\n    d[b] = 3\n    out.append(len(d))\nout[-3:]",
        ["x", "'popitem(): dictionary is empty'", 2],
    ),
    "an awaitable of the snippet's yielding what says it is a future": (
        "import asyncio\nasked = []\nclass F:\n    _asyncio_future_blocking = True\n"
        "    def get_loop(self):\n        asked.append('get_loop')\n"
        "    def add_done_callback(self, cb, context=None):\n        asked.append(cb)\n"
        "    def __repr__(self):\n        return 'F'\n"
        "class A:\n    def __await__(self):\n        try:\n            yield F()\n"
        "        except RuntimeError as e:\n            asked.append(str(e))\n        return 5\n"
        "class Early:\n    async def __await__(self):\n        return 1\ntry:\n"
        "    await Early()\nexcept TypeError as e:\n    asked.append(str(e))\n"
        "[await A(), await asyncio.gather(A()), asked]",
        [5, [5], ["__await__() returned a coroutine", *["Task got bad yield: F"] * 2]],
    ),
    "a staticmethod, classmethod or property made again while what it holds runs": (
        "import operator\nout = []\nSM = staticmethod\nclass L(list):\n    __slots__ = ()\n"
        "box = [None]\n"
        "class X:\n    def __init__(self, how):\n        self.how = how\n"
        "    def __iter__(self):\n        try:\n            if self.how == 'super':\n"
        "                box[0].__init__(len)\n            elif self.how == 'methodcaller':\n"
        "                operator.methodcaller('__init__', len)(box[0])\n"
        "            else:\n                box[0].__init__(len)\n"
        "        except RuntimeError as e:\n            out.append(str(e).split(' on ')[0])\n"
        "        return iter([1, 2])\n"
        "for how, make in [('super', SM), ('methodcaller', staticmethod), "
        "('property', property)]:\n    l = L()\n    box[0] = make(l.extend)\n"
        "    if how == 'property':\n        box[0].fget(X(how))\n"
        "    else:\n        box[0](X(how))\n    l = None\n"
        "c = classmethod(len)\ntry:\n    c.__init__(abs)\nexcept RuntimeError as e:\n"
        "    out.append(str(e).split(' on ')[0])\nfresh = property()\nfresh.__init__(len)\n"
        "out + [fresh.fget is len]",
        [
            "staticmethod.__init__()",
            "staticmethod.__init__()",
            "property.__init__()",
            "classmethod.__init__()",
            True,
        ],
    ),
    "a defaultdict factory that unsets itself while it runs, past the facade": (
        "import collections\nclass DD(collections.defaultdict):\n"
        "    def __missing__(self, key):\n"
        "        return super(collections.defaultdict, self).__missing__(key)\n"
        "dd = DD()\nclass L(list):\n    __slots__ = ()\nclass I:\n    def __lt__(s, o):\n"
        "        dd.default_factory = None\n        made = [[n] for n in range(200)]\n"
        "        return False\nl = L([I(), I(), I()])\ndd.default_factory = l.sort\n"
        "l = None\n[dd[1], dd.default_factory, list(dd)]",
        [None, None, [1]],
    ),
    "an array whose file's write shrinks it while tofile writes": (
        "import array\na = array.array('B', b'A' * (65536 + 4096))\ngot, keep = [], []\n"
        "class F:\n    def write(self, b):\n        got.append(bytes(b))\n"
        "        if len(got) == 1:\n            del a[1000:]\n            for _ in range(20):\n"
        "                keep.append(bytearray(b'SECRET-IN-ANOTHER-OBJECT-' * 2700))\n"
        "a.tofile(F())\n[len(g) for g in got] + [got[1] == b'A' * 4096, len(a)]",
        [65536, 4096, True, 1000],
    ),
    "a context manager's __exit__ given the error and its traceback": (
        "out = []\nclass CM:\n    def __enter__(self):\n        return self\n"
        "    def __exit__(self, et, ev, tb):\n"
        "        out.append([et.__name__, type(ev).__name__, tb is not None])\n"
        "        return True\nwith CM():\n    import os\nwith CM():\n    1 / 0\n"
        "with CM():\n    await tools.read(path='/etc/passwd')\nout",
        [
            ["ImportError", "ImportError", True],
            ["ZeroDivisionError", "ZeroDivisionError", True],
            ["ToolError", "ToolError", True],
        ],
    ),
    "a list or an exception whose item's repr drops the item it is inside": (
        "class Y:\n    def __repr__(self):\n        return 'Y-alive'\nclass Z:\n"
        "    def __repr__(self):\n        return 'Z-took-its-place'\nclass X:\n"
        "    def __init__(self, drop):\n        self.drop = drop\n    def __repr__(self):\n"
        "        self.drop()\n        global spray\n        spray = [Z() for _ in range(400)]\n"
        "        return 'X'\ndef clear():\n    l.clear()\ndef unset():\n    e.args = ()\n"
        "def unname():\n    o.filename = None\nl = [slice(X(clear), Y(), Y())]\nout = [repr(l)]\n"
        "class VE(ValueError):\n    pass\nclass KE(KeyError):\n    pass\n"
        "e = VE(slice(X(unset), Y(), Y()))\nout.append(repr(e))\n"
        "e = KE(slice(X(unset), Y(), Y()))\nout.append(str(e))\n"
        "class E(OSError):\n    pass\no = E(1, 'msg', slice(X(unname), Y(), Y()))\n"
        "out.append(str(o))\nout",
        [
            "[slice(X, Y-alive, Y-alive)]",
            "VE(slice(X, Y-alive, Y-alive))",
            "slice(X, Y-alive, Y-alive)",
            "[Errno 1] msg: slice(X, Y-alive, Y-alive)",
        ],
    ),
    "a sequence whose __getitem__ re-enters its own iterator (gh-156310)": (
        "import itertools\nst = [0]\nclass B:\n    def __iter__(self):\n"
        "        return iter([])\nclass Seq:\n    def __getitem__(self, i):\n"
        "        if st[0] == 0:\n            st[0] = 1\n            try:\n"
        "                next(IT)\n            except StopIteration:\n"
        "                pass\n        raise IndexError(i)\nclass Sub(B, Seq):\n    pass\n"
        "del B.__iter__\nout = []\n"
        "for make in (iter, lambda s: itertools.filterfalse(None, s), "
        "lambda s: itertools.dropwhile(bool, s)):\n    for kind in (Seq, Sub):\n"
        "        st[0] = 0\n        s = kind()\n        IT = make(s)\n        try:\n"
        "            next(IT)\n        except StopIteration:\n"
        "            out.append('stopped')\n        IT = None\n"
        "        made = [[i] for i in range(100)]\n        out.append(type(s).__name__)\n"
        "out[:4] + [out.count('stopped'), out.count('Seq'), out.count('Sub')]",
        ["stopped", "Seq", "stopped", "Sub", 6, 3, 3],
    ),
    "itertools re-entered from their own step or source (gh-154670, gh-149557, gh-142732)": (
        "import itertools\nout = []\nc = None\nclass Step:\n    armed = True\n"
        "    def __index__(self):\n        return 1\n"
        "    def __radd__(self, other):\n        if Step.armed:\n            Step.armed = False\n"
        "            next(c)\n        return other + 1\nc = itertools.count(int('7' * 40), Step())\n"
        "try:\n    next(c)\n    next(c)\nexcept ValueError as e:\n    out.append(str(e))\n"
        "it = None\ndef g():\n    yield next(it)\n"
        "for make in (itertools.pairwise, lambda s: itertools.islice(s, 3), "
        "lambda s: itertools.zip_longest(s, 'ab')):\n    it = make(g())\n    try:\n"
        "        next(it)\n    except ValueError as e:\n        out.append(str(e))\nout",
        ["generator already executing"] * 4,
    ),
    "a class attribute read back by a finalizer while it is replaced (gh-118492)": (
        "seen = []\nclass C:\n    pass\nclass Box:\n    pass\n"
        "def fin():\n    try:\n        yield 1\n    finally:\n        seen.append(C.attr)\n"
        "g = fin()\nnext(g)\nb = Box()\nb.g = g\nC.attr = b\ndel g, b\nC.attr\n"
        "C.attr = 0\ndel C.attr\n[type(x).__name__ for x in seen]",
        ["int"],
    ),
    "an attribute cache specialised while a key's __eq__ writes to the class (gh-89811)": (
        "import dataclasses\narm = [True]\nclass K:\n    def __hash__(self):\n"
        "        return hash('b')\n    def __eq__(self, other):\n        if arm[0]:\n"
        "            DC.tick = 1\n            Base.__annotations__\n        return False\n"
        "class Base:\n    pass\n@dataclasses.dataclass\nclass DC(Base):\n"
        "    a: int = 0\n    b: int = 0\ndc = DC()\nd = vars(dc)\nd.clear()\nd[K()] = 0\n"
        "d['a'] = 1\nd['b'] = 2\nfor i in range(200):\n    repr(dc)\narm[0] = False\n"
        "class S:\n    __slots__ = ('x',)\n    @property\n    def a(self):\n        S.tick = 1\n"
        "        return 0\nheld = [S() for i in range(1000)]\nout = []\nfor s in held:\n"
        "    try:\n        out.append(DC.__repr__(s))\n    except AttributeError as e:\n"
        "        out.append(str(e))\nsorted(set(out))",
        ["'S' object has no attribute 'b'"],
    ),
    "itertools.accumulate re-entered from its running total's __add__ (gh-154570)": (
        "import itertools\nacc = None\nclass X:\n    armed = True\n"
        "    def __add__(self, other):\n        if X.armed:\n            X.armed = False\n"
        "            next(acc)\n        return NotImplemented\nclass Y:\n"
        "    def __radd__(self, other):\n        return 7\n"
        "acc = itertools.accumulate(iter([X(), Y(), Y()]))\nnext(acc)\n"
        "try:\n    next(acc)\nexcept ValueError as e:\n    m = str(e)\nm",
        "generator already executing",
    ),
    "bytearray.extend told a length of 0 (gh-143003)": (
        "class It:\n    n = 0\n    def __iter__(self):\n        return self\n"
        "    def __length_hint__(self):\n        return 0\n    def __next__(self):\n"
        "        self.n += 1\n        if self.n > 3:\n            raise StopIteration\n"
        "        return 65\nba = bytearray()\nba.extend(It())\nbytes(ba).decode()",
        "AAA",
    ),
    "a dict key whose __eq__ empties the dict and refills it from another (gh-140551)": (
        "out = []\nfor how in ['update', 'ior', 'init'] * 30:\n    d = {}\n    class A:\n"
        "        def __hash__(s):\n            return 1\n    class B:\n"
        "        def __hash__(s):\n            return 1\n        def __eq__(s, o):\n"
        "            d.popitem()\n            if how == 'update':\n                d.update({'zz': 0})\n"
        "            elif how == 'ior':\n                h = d\n                h |= {'zz': 0}\n"
        "            else:\n                dict.__init__(d, {'zz': 0})\n            return False\n"
        "    d[A()] = 1\n    b = B()\n    d.setdefault(b, 2)\n    d['k'] = 1\n    d[b] = 3\n"
        "    out.append(sorted(map(str, d.values())))\nout[-3:]",
        [["0", "1", "3"]] * 3,
    ),
    "a chain or cycle drained by the iterator it is advancing": (
        "import itertools\nout = []\nbox = [None]\nclass Item:\n    def __bool__(self):\n"
        "        for _ in range(3):\n            next(box[0], None)\n        return True\n"
        "for make in (lambda f: itertools.chain(f), lambda f: itertools.chain.from_iterable([f]), "
        "itertools.cycle):\n    box[0] = make(filter(None, iter([Item(), Item()])))\n    try:\n"
        "        next(box[0])\n    except ValueError as e:\n        out.append(str(e))\nout",
        ["generator already executing"] * 3,
    ),
    "a Counter count whose __add__ clears the Counter (gh-143004)": (
        "import collections\nc = collections.Counter()\nclass N:\n    def __add__(self, o):\n"
        "        c.clear()\n        return 7\nc['a'] = N()\nc.update('a')\ndict(c)",
        {"a": 7},
    ),
    "a csv reader re-entered from its own input": (
        "import csv\nclass It:\n    n = 0\n    def __iter__(self):\n        return self\n"
        "    def __next__(self):\n        self.n += 1\n        if self.n == 1:\n"
        "            return 'a,b,\"c'\n        if self.n == 2:\n            next(r)\n"
        "            return 'd\",e'\n        if self.n < 6:\n            return 'x,y'\n"
        "        raise StopIteration\nr = csv.reader(It())\nout = []\ntry:\n"
        "    for row in r:\n        out.append(row)\nexcept ValueError as e:\n"
        "    out.append(str(e))\nout",
        ["generator already executing"],
    ),
    "a Unicode error whose start is before its object (gh-123378)": (
        "[str(UnicodeDecodeError('x', b'abc', -16, -15, 'r')), "
        "str(UnicodeEncodeError('x', 'abc', -1, 0, 'r')), "
        "str(UnicodeTranslateError('abc', -1, 0, 'r'))]",
        [
            "'x' codec can't decode bytes in position -16--16: r",
            "'x' codec can't encode characters in position -1--1: r",
            "can't translate characters in position -1--1: r",
        ],
    ),
    "a Unicode error subclass whose start is a property": (
        "class U(UnicodeDecodeError):\n    @property\n    def start(self):\n        return -9\n"
        "str(U('x', b'abc', 1, 2, 'r'))",
        "'x' codec can't decode byte 0x62 in position 1: r",
    ),
    "a groupby key whose __eq__ advances the groupby (gh-143543)": (
        "from itertools import groupby\nstash = []\nclass Key:\n    seen = False\n"
        "    def __init__(self, first):\n        self.first = first\n"
        "    def __eq__(self, other):\n        if self.first and not Key.seen:\n"
        "            Key.seen = True\n            next(G)\n            return NotImplemented\n"
        "        if not self.first and other is not self:\n            stash.append(other)\n"
        "        return False\ndef keys():\n    yield Key(True)\n    while True:\n"
        "        yield Key(False)\nk = keys()\nG = groupby([None, 1, 2, 3], lambda x: next(k))\n"
        "next(G)\nnext(G)\nclass Other:\n    pass\nspray = [Other() for _ in range(1000)]\n"
        "[type(s).__name__ for s in stash]",
        ["Key"],
    ),
    "iter(callable, sentinel) whose sentinel re-enters the iterator": (
        "stash = []\nclass S:\n    depth = 0\n    def __eq__(self, other):\n        S.depth += 1\n"
        "        if S.depth == 1:\n            next(it, None)\n            return NotImplemented\n"
        "        return True\nclass R:\n    def __eq__(self, other):\n        stash.append(other)\n"
        "        return False\nit = iter(R, S())\nnext(it, None)\nclass Other:\n    pass\n"
        "spray = [Other() for _ in range(1000)]\n[type(s).__name__ for s in stash]",
        ["S"],
    ),
    "bytearray.hex with a separator whose __len__ empties it (gh-143195)": (
        "t = bytearray(b'\\xaa' * 200)\nkeep = []\nclass S(bytes):\n    def __len__(self):\n"
        "        t.clear()\n        keep.extend([(i, i + 1.5) for i in range(20)])\n        return 1\n"
        "t.hex(S(b':')) == ':'.join(['aa'] * 200)",
        True,
    ),
    "an extended slice of a list subclass whose value empties it (gh-120384)": (
        "class L(list):\n    pass\nlst = L(range(10))\ndef g():\n"
        "    yield from list(range(10))\n    lst.clear()\n    lst.append(1)\n"
        "try:\n    lst[::-1] = g()\nexcept ValueError as e:\n    m = str(e)\n"
        "junk = [L() for _ in range(500)]\n[m, lst]",
        ["attempt to assign sequence of size 10 to extended slice of size 1", [1]],
    ),
    "deque.index reached through super()": (
        "from collections import deque\nstash = []\nclass A:\n    def __eq__(self, other):\n"
        "        d.clear()\n        return NotImplemented\nclass B:\n"
        "    def __eq__(self, other):\n        stash.append(other)\n        return False\n"
        "d = deque([A()])\ntry:\n    super(deque, d).index(B())\nexcept (RuntimeError, ValueError) as e:\n"
        "    m = type(e).__name__\nclass O:\n    pass\nspray = [O() for _ in range(1000)]\n"
        "[m, [type(s).__name__ for s in stash]]",
        ["RuntimeError", ["A"]],
    ),
    "a Struct subclass that never initialises its base": (
        "import struct\nclass S(struct.Struct):\n    def __init__(self, f):\n        pass\n"
        "s = S('>i')\nbuf = bytearray(8)\ns.pack_into(buf, 0, 7)\n"
        "try:\n    S('%')\nexcept struct.error as e:\n    m = str(e)\n[bytes(buf[:4]), s.size, m]",
        [b"\x00\x00\x00\x07", 4, "bad char in struct format"],
    ),
    "ZoneInfo.clear_cache on a subclass whose cache a descriptor makes (gh-142783)": (
        "import zoneinfo\nclass Z(zoneinfo.ZoneInfo):\n    def __init_subclass__(cls, **kw):\n"
        "        pass\nclass Z2(Z):\n    @classmethod\n    def _weak_cache(cls):\n"
        "        return {}\nout = []\nfor i in range(100):\n    try:\n"
        "        Z2.clear_cache()\n    except AttributeError as e:\n        out.append(str(e))\n"
        "junk = [{} for _ in range(1000)]\n[len(out), out[0], 'survived']",
        [100, "'function' object has no attribute 'clear'", "survived"],
    ),
    "json.dumps of a list subclass whose __iter__ frees it": (
        "import json\nouter = []\nclass L(list):\n    def __iter__(self):\n        outer.clear()\n"
        "        return iter([X()])\nclass X:\n    pass\nclass K(list):\n    pass\n"
        "class Y(list):\n    pass\nkeep = []\ndef default(o):\n    for i in range(200):\n"
        "        keep.append(K())\n    return 1\nouter.append(L([1]))\n"
        "text = json.dumps(outer, default=default)\nfresh = [Y() for i in range(200)]\n"
        "[text, [type(k).__name__ for k in keep if type(k) is not K]]",
        ["[[1]]", []],
    ),
    "a JSONEncoder subclass that asks for the C encoder": (
        "import json\nouter = []\nclass L(list):\n    def __iter__(self):\n        outer.clear()\n"
        "        return iter([X()])\nclass X:\n    pass\nclass K(list):\n    pass\n"
        "class Y(list):\n    pass\nkeep = []\nclass E(json.JSONEncoder):\n"
        "    def iterencode(self, o, _one_shot=False):\n"
        "        return super().iterencode(o, _one_shot=True)\n"
        "    def default(self, o):\n        for i in range(200):\n            keep.append(K())\n"
        "        return 1\nouter.append(L([1]))\ntext = json.dumps(outer, cls=E)\n"
        "fresh = [Y() for i in range(200)]\n"
        "[text, [type(k).__name__ for k in keep if type(k) is not K]]",
        ["[[1]]", []],
    ),
    "a returned value that changes under the encoder (a bytearray's __class__ read)": (
        "holder = []\nout = []\nkeep = []\nstate = []\nclass K(list):\n    pass\n"
        "class Y(list):\n    pass\nclass L(list):\n    def __iter__(self):\n"
        "        holder.clear()\n        return iter([X(b'x')])\nclass X(bytearray):\n"
        "    def __getattribute__(self, name):\n        if not keep:\n"
        "            keep.extend(K() for i in range(200))\n        return bytearray\n"
        "class B1(bytearray):\n    def __getattribute__(self, name):\n        if not state:\n"
        "            state.append(1)\n            holder.append(L([1]))\n        return bytearray\n"
        "class B2(bytearray):\n    def __getattribute__(self, name):\n"
        "        if len(state) == 1:\n            state.append(2)\n"
        "            fresh = [Y() for i in range(200)]\n"
        "            out.append([type(k).__name__ for k in keep if type(k) is not K])\n"
        "        return bytearray\n[B1(b'a'), holder, B2(b'b'), out, state]",
        [b"a", [], b"b", [], []],
    ),
    "a provider call's argument whose __iter__ frees it": (
        "outer = []\nclass L(list):\n    def __iter__(self):\n        outer.clear()\n"
        "        return iter([1])\nouter.append(L([1]))\ntry:\n    await tools.read(path=outer)\n"
        "except ToolError as e:\n    m = e.code\nm",
        "bad_arguments",
    ),
    "deque.index with an item whose __eq__ empties the deque": (
        "import collections\nclass E:\n    def __eq__(self, other):\n        deq.clear()\n"
        "        return NotImplemented\nkept = []\nclass V:\n    def __eq__(self, other):\n"
        "        kept.append(type(other).__name__)\n        return NotImplemented\n"
        "deq = collections.deque([E()])\ntry:\n    deq.index(V())\nexcept RuntimeError as e:\n"
        "    kept.append(str(e))\njunk = [bytes(47) + b'' for _ in range(2000)]\nkept",
        ["E", "deque mutated during iteration"],
    ),
    "a list ordering whose item empties the other list (gh-120298)": (
        EMPTYING + "w = [B()]\ntry:\n    [A()] < w\nexcept TypeError as e:\n    m = str(e)\n"
        "junk = [B() for _ in range(2000)]\nm",
        "'<' not supported between instances of 'A' and 'B'",
    ),
    "a list ordering whose item empties its own list": (
        "class A:\n    def __gt__(self, other):\n        v.clear()\n        return NotImplemented\n"
        "class B:\n    pass\nv = [B()]\ntry:\n    v > [A()]\nexcept TypeError as e:\n"
        "    m = str(e)\njunk = [B() for _ in range(2000)]\nm",
        "'>' not supported between instances of 'B' and 'A'",
    ),
    "nested lists whose inner item empties the outer one": (
        EMPTYING + "w = [[B()]]\ntry:\n    [[A()]] <= w\nexcept TypeError as e:\n"
        "    m = str(e)\njunk = [[B()] for _ in range(2000)]\nm",
        "'<=' not supported between instances of 'A' and 'B'",
    ),
    "sorting lists whose item empties one of them": (
        EMPTYING + "w = [B()]\ntry:\n    sorted([w, [A()]])\nexcept TypeError as e:\n"
        "    m = str(e)\njunk = [B() for _ in range(2000)]\nm",
        "'<' not supported between instances of 'A' and 'B'",
    ),
    "an lru_cache evicting a key whose __eq__ empties the cache (gh-94879)": (
        "import functools\nclass K:\n    trigger = None\n    def __init__(self, h):\n"
        "        self.h = h\n    def __hash__(self):\n        return self.h\n"
        "    def __eq__(self, other):\n        t = K.trigger\n"
        "        if t and (self is t[0] and other is t[1] or self is t[1] and other is t[0]):\n"
        "            K.trigger = None\n            f(b); f(c); f(d)\n"
        "        return self is other\n@functools.lru_cache(maxsize=2)\ndef f(k):\n"
        "    return k.h\nx, a, b, c, d = K(7), K(7), K(11), K(13), K(13)\n"
        "f(x); f(a); f(x)\nK.trigger = (x, a)\ntry:\n    f(b)\nexcept KeyError:\n"
        "    m = 'KeyError'\njunk = [[1 << 40, 0, 0] for _ in range(2000)]\n"
        "[m, f.cache_info().currsize, f(b)]",
        ["KeyError", 2, 11],
    ),
    "a Decimal comparison whose operand's __class__ frees the context (gh-148382)": (
        "from decimal import Decimal, localcontext\nfrom fractions import Fraction\n"
        "Decimal(1) < Fraction(1, 3)\nstate = {'m': localcontext()}\nstate['m'].__enter__()\n"
        "junk = []\nclass W:\n    def __getattribute__(self, name):\n"
        "        if name == '__class__':\n            m = state['m']\n"
        "            if m is not None:\n                m.__exit__(None, None, None)\n"
        "                state['m'] = None\n                m = None\n"
        "                junk.extend(bytes(63) for _ in range(50))\n            return Fraction\n"
        "        return 1 if name == 'numerator' else 3\ntry:\n    r = Decimal('NaN') < W()\n"
        "except Exception as e:\n    r = type(e).__name__\n"
        "[r, [i for i, j in enumerate(junk) if j != bytes(63)]]",
        ["InvalidOperation", []],
    ),
    "a context's traps and flags kept past the context (gh-146011)": (
        "from decimal import Context, DivisionByZero, InvalidOperation\n"
        "t = Context().traps\nf = Context().flags\nheld = [bytes(63) for i in range(200)]\n"
        "t[DivisionByZero] = False\nt[InvalidOperation] = True\nf[DivisionByZero] = True\n"
        "[[i for i, b in enumerate(held) if b != bytes(63)], t[InvalidOperation], "
        "t[DivisionByZero], f[DivisionByZero]]",
        [[], True, False, True],
    ),
    "Decimal.__format__ whose override's key frees the context (gh-148382)": (
        "from decimal import Decimal, localcontext\ncm = localcontext()\ncm.__enter__()\n"
        "junk = []\narmed = False\nclass K:\n    def __hash__(self):\n"
        "        return hash('decimal_point')\n    def __eq__(self, o):\n        global cm\n"
        "        if armed and cm is not None:\n            cm.__exit__(None, None, None)\n"
        "            cm = None\n            data = bytes(20) + (1).to_bytes(4, 'little') + "
        "bytes(39)\n            junk.extend(bytes(data) for i in range(64))\n"
        "        return False\no = {K(): '.'}\no['decimal_point'] = '.'\narmed = True\n"
        "Decimal('1.5').__format__('.0f', o)",
        "2",
    ),
    "bytearray of an object whose __index__ refuses and whose iterator deletes its front": (
        "class B(bytearray):\n    def __init__(self, src):\n        made.append(self)\n"
        "        super().__init__(src)\nmade = []\nclass X:\n    def __index__(self):\n"
        "        raise TypeError('no')\n    def __iter__(self):\n        done = False\n"
        "        for i in range(3000):\n            if not done and len(made[0]) == 1000:\n"
        "                del made[0][:400]\n                done = True\n"
        "            yield 0x41\njunk = [bytes(1000) for _ in range(50)]\nB(X())\n"
        "[len(made[0]), sum(1 for j in junk if j.count(0x41))]",
        [3000, 0],
    ),
    "ZoneInfo.utcoffset of a bytes subclass posing as a datetime": (
        "import zoneinfo, datetime\nz = zoneinfo.ZoneInfo('America/New_York')\nclass D(bytes):\n"
        "    def toordinal(self):\n        return 738000\n    hour = minute = second = 0\n"
        "out = []\nfor f in (0, 3, 40, 255):\n    d = D(bytes([0, 0, 0, f]) + bytes(20))\n"
        "    for lookup in (z.utcoffset, z.dst, z.tzname):\n        try:\n"
        "            lookup(d)\n        except TypeError as e:\n            out.append(str(e))\n"
        "[len(out), out[0], str(z.utcoffset(None)), z.tzname(datetime.datetime(2020, 1, 1))]",
        [12, "utcoffset() argument 1 must be datetime.datetime or None, not D", "None", "EST"],
    ),
    "property.getter(None), many times over (gh-115618)": (
        "def f(self):\n    'doc of f'\n    return 1\ndef s(self, v):\n    pass\n"
        "g = property().getter\nfor i in range(100_000):\n    g(None)\n"
        "p, q, e = property(f), property(None, s, None, 'given'), property()\n"
        "[p.getter(None).fget is f, p.setter(None).fget is f, q.getter(None).fset is s, "
        "q.getter(None).__doc__, p.deleter(None).__doc__, e.getter(None).fget]",
        [True, True, True, "given", "doc of f", None],
    ),
    "a snippet's list subclass, compared through super()": (
        EMPTYING + "class L(list):\n    def __lt__(self, other):\n"
        "        return super().__lt__(other)\nw = L([B()])\ntry:\n    L([A()]) < w\n"
        "except TypeError as e:\n    m = str(e)\nm",
        "'<' not supported between instances of 'A' and 'B'",
    ),
}
"""Special methods that change a container while CPython 3.11's C code holds a pointer into
it (gh-142555, gh-142882, gh-91153, gh-115243, gh-120298): CPython itself crashes on each; the
sandbox converts the value first (arrays, bytearrays) or uses Python code holding its own
references (collections' Python ``OrderedDict``, a ``deque`` whose ``index`` is written in
Python, list ordering and bytearray's argument conversion repaired in the worker's
interpreter)."""


@pytest.mark.parametrize("name", REENTRANT)
async def test_a_special_method_changing_its_container_never_crashes_the_worker(
    fab: Fabric, name: str
) -> None:
    code, expected = REENTRANT[name]
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == expected


async def test_asyncio_never_asks_a_snippet_object_whether_it_is_a_future(fab: Fabric) -> None:
    """A property that says "no future" when checked and "future" when asyncio asks would get
    asyncio's own callbacks (and a fake loop onto a real gathering future): the facade hands
    asyncio coroutines only, so the property is never read and no callback reaches it."""
    code = (
        "import asyncio\nseen = []\nclass Sly:\n    answers = [None, False, False, False]\n"
        "    @property\n    def _asyncio_future_blocking(self):\n"
        "        seen.append('asked')\n        return self.answers.pop(0) if self.answers else False\n"
        "    def get_loop(self):\n        seen.append('loop')\n        return None\n"
        "    def add_done_callback(self, cb, **kw):\n        seen.append(cb)\n"
        "    def __await__(self):\n        return iter([])\n"
        "got = await asyncio.gather(Sly(), Sly())\none = await asyncio.wait_for(Sly(), 5)\n"
        "[got, one, len(seen)]"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == [[None, None], None, 0]


_SELF_AWAIT = (
    "import asyncio\nbox = []\nasync def f():\n    await asyncio.sleep(0)\n"
    "    await box[0]\nbox.append(asyncio.create_task(f()))\n"
)


async def test_a_caught_asyncio_error_names_no_host_path(fab: Fabric) -> None:
    """asyncio's message for a task awaiting itself names the task, with the file and line of
    the coroutine it runs: in a worker those say ``<sandbox>``, so a snippet that catches the
    error and returns its text learns nothing of where the host keeps files."""
    code = _SELF_AWAIT + "try:\n    await box[0]\nexcept RuntimeError as e:\n    return str(e)"
    result = await fab.exec(code)
    assert result.ok, result.text
    root = str(Path(runtime.__file__).parent.parent)
    assert "cannot await on itself" in result.value and "<sandbox>" in result.value
    assert root not in result.value and "/python3" not in result.value, result.value


async def test_an_error_never_names_where_the_host_keeps_its_files(fab: Fabric) -> None:
    """The same error left uncaught: the message keeps the text, not the paths."""
    result = await fab.exec(_SELF_AWAIT + "await box[0]")
    assert result.error is not None and result.error.type == "RuntimeError", result.text
    root = str(Path(runtime.__file__).parent.parent)
    assert "<sandbox>" in result.error.message and root not in result.error.message


async def test_the_defaults_of_a_function_from_outside_are_a_copy(fab: Fabric) -> None:
    """``json.dumps.__kwdefaults__`` is the dict the worker's own ``json.dumps`` calls read:
    a snippet reads a copy, so what it writes there changes nothing."""
    code = (
        "import json\nd = json.dumps.__kwdefaults__\nd['cls'] = 5\nd['indent'] = 8\n"
        "[json.dumps({'a': 1}), json.dumps.__kwdefaults__['cls']]"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == ['{"a": 1}', None]


async def test_a_class_attribute_of_a_base_from_outside_is_a_copy(fab: Fabric) -> None:
    """What a class from outside holds as a class attribute is shared by every instance in
    the worker (TextWrapper's translation table, ZoneInfo's caches, NormalDist's slots): a
    snippet reads it, through an instance, a record or its own subclass, as a copy."""
    code = (
        "import textwrap, statistics, zoneinfo, datetime\n"
        "w = textwrap.TextWrapper(width=40)\nw.unicode_whitespace_trans[ord(' ')] = ord('#')\n"
        "class T(textwrap.TextWrapper):\n    pass\nT.unicode_whitespace_trans[9] = 88\n"
        "class N(statistics.NormalDist):\n    pass\nN.__slots__['x'] = 'y'\n"
        "class Z(zoneinfo.ZoneInfo):\n    pass\n"
        "Z._zones['UTC'] = datetime.timezone(datetime.timedelta(hours=13), 'FAKE')\n"
        "Z._files['Mars/Olympus'] = Z._files['UTC']\n"
        "[textwrap.fill('a b\\tc'), 'x' in statistics.NormalDist.__slots__, "
        "repr(zoneinfo.ZoneInfo('UTC')), 'Mars/Olympus' in zoneinfo.available_timezones()]"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == ["a b     c", False, "zoneinfo.ZoneInfo(key='UTC')", False]


async def test_what_a_snippet_leaves_running_never_stops_the_worker(fab: Fabric) -> None:
    """An abandoned async generator whose ``finally`` raises ``SystemExit`` (asyncio closes it
    in a task of its own), and a timeout or task group entered and never left (bound to the
    task that entered it), stop neither the worker nor the sending of a large result."""
    finalizer = (
        "import asyncio\nasync def agen():\n    try:\n        yield 1\n        yield 2\n"
        "    finally:\n        raise SystemExit(7)\ng = agen()\nasync for x in g:\n    break\n"
        "g = None\nfor _ in range(5):\n    await asyncio.sleep(0)\nreturn 'survived'"
    )
    result = await fab.exec(finalizer)
    assert result.ok and result.value == "survived", result.text
    for scope in (
        "a = asyncio.timeout(0.01)\nawait a.__aenter__()\n",
        "tg = asyncio.TaskGroup()\nawait tg.__aenter__()\nasync def boom():\n"
        "    await asyncio.sleep(0.01)\n    raise ValueError('x')\ntg.create_task(boom())\n",
        # a task left running re-arms the timeout once the snippet has returned
        "a = asyncio.timeout(1000)\nawait a.__aenter__()\nasync def bg():\n"
        "    while a.when() is not None:\n        try:\n            await asyncio.sleep(0)\n"
        "        except asyncio.CancelledError:\n            pass\n    a.reschedule(0)\n"
        "t = asyncio.create_task(bg())\n",
        # the group being left from another task when the snippet returns, then a task fails
        "tg = asyncio.TaskGroup()\nawait tg.__aenter__()\nasync def boom():\n"
        "    await asyncio.sleep(0.001)\n    raise ValueError('boom')\ntg.create_task(boom())\n"
        "async def exiter():\n    try:\n        await tg.__aexit__(None, None, None)\n"
        "    except BaseException:\n        pass\nasyncio.create_task(exiter())\n"
        "await asyncio.sleep(0)\n",
        # a timeout inside an async generator the loop closes in a task of its own
        "async def agen():\n    async with asyncio.timeout(0.05):\n        yield 1\n"
        "        await asyncio.sleep(10)\nasync for x in agen():\n    break\n"
        "await asyncio.sleep(0.1)\n",
        # a child that swallows the group's cancel and then fails
        "tg = asyncio.TaskGroup()\nawait tg.__aenter__()\nasync def child():\n    try:\n"
        "        await asyncio.sleep(1000)\n    except asyncio.CancelledError:\n        pass\n"
        "    await asyncio.sleep(0)\n    raise ValueError('boom')\ntg.create_task(child())\n"
        "await asyncio.sleep(0)\n",
    ):
        result = await fab.exec("import asyncio\n" + scope + "return 'x' * 2_000_000")
        assert result.ok, result.text
        again = await fab.exec("return 1")
        assert again.ok and again.value == 1


async def test_the_standard_library_never_hands_its_tables_to_a_snippet(fab: Fabric) -> None:
    """``re.escape`` passes re's own translation table to the pattern's ``translate``: a
    ``str`` subclass gets its text escaped, and its method is never called with the table."""
    code = (
        "import re\nseen = []\nclass S(str):\n    def translate(self, table):\n"
        "        seen.append(type(table).__name__)\n        return 'x'\n"
        "[re.escape(S('a.b')), re.escape('a.b'), seen]"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == ["a\\.b", "a\\.b", []]


async def test_tampering_does_not_leak_into_the_next_execution(fab: Fabric) -> None:
    """Whatever a snippet rebinds stays in its own, discarded worker."""
    await fab.exec("tools = None\njson = None")
    result = await fab.exec(
        'import json\nreturn json.dumps(len(await tools.read(path="notes.txt")))'
    )
    assert result.ok and result.value == "17"


async def test_worker_cannot_read_files_even_through_allowed_code(fab: Fabric) -> None:
    """The worker has no file access at all: reading the workspace goes through tools only."""
    result = await fab.exec("return await tools.read(path='/etc/passwd')")
    assert not result.ok
    assert result.error is not None and result.error.code == "outside_workspace"


_AUDITED = """
import json, os, socket, sys
from runtime.worker import _audit
_audit.install()
outcomes = {}
for name, attempt in {
    "open": lambda: open("/etc/hostname"),
    "os.system": lambda: os.system("true"),
    "os.listdir": lambda: os.listdir("/"),
    "socket": lambda: socket.socket(),
    "import": lambda: __import__("xml.dom.minidom"),
    "exec": lambda: exec("1"),
    "compile": lambda: compile("1", "x", "eval"),
    "sys._getframe": lambda: sys._getframe(),
}.items():
    try:
        attempt()
        outcomes[name] = "allowed"
    except Exception as exc:
        outcomes[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(outcomes))
"""


def test_the_audit_hook_refuses_what_the_value_checks_let_slip() -> None:
    """With the guards bypassed entirely (plain Python in a process with the hook), files,
    processes, sockets, imports and code execution are refused by the audit hook."""
    import json

    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {root!r})\n" + _AUDITED],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    outcomes = json.loads(done.stdout)
    for name, outcome in outcomes.items():
        assert outcome.startswith("PolicyError: the sandbox refuses"), (name, outcome)


async def test_the_dict_of_an_object_from_outside_is_a_copy(fab: Fabric) -> None:
    """vars() of a host function reads its attributes; writing to what it gives changes
    nothing outside (the write guard still decides what may be modified)."""
    result = await fab.exec(
        "import json\nd = vars(json.loads)\nd['x'] = 1\n[hasattr(json.loads, 'x'), d['x']]"
    )
    assert result.ok, result.text
    assert result.value == [False, 1]


async def test_a_refused_default_is_never_stored(fab: Fabric) -> None:
    """defaultdict's factory result is checked before it is stored, not only when read."""
    result = await fab.exec(
        "import collections, functools\n"
        "d = collections.defaultdict(functools.partial(type, tools))\n"
        "try:\n    d[1]\nexcept PolicyError:\n    pass\n"
        "counts = collections.defaultdict(int)\ncounts['a'] += 2\n"
        "return list(d.values()), dict(counts), isinstance(counts, collections.defaultdict)"
    )
    assert result.ok and result.value == [[], {"a": 2}, True], result.text


async def test_a_lying_key_never_answers_for_exact_text_in_a_shared_cache(fab: Fabric) -> None:
    """re, struct and strptime cache what they compile by the text they were given: a str or
    int subclass hashing as another text and equal to anything would answer every later
    caller's exact lookup (the runtime's own re.match of an error message included). The
    facades hand the caches exact text, so the exact calls give CPython's answers."""
    code = (
        "import re, struct, time\nclass S(str):\n    def __hash__(self):\n"
        "        return hash(self.twin)\n    def __eq__(self, other):\n        return True\n"
        "def lying(text, twin):\n    s = S(text)\n    s.twin = twin\n    return s\n"
        "class F(int):\n    def __hash__(self):\n        return 0\n"
        "    def __eq__(self, other):\n        return True\n"
        "time.strptime('30', lying('%M', '%H'))\nre.compile('a b', F(64))\n"
        "re.sub(r'(b)', lying(r'X\\1', r'<\\1>'), 'abc')\nstruct.pack(lying('>I', '<I'), 1)\n"
        "import enum\nclass G(enum.IntFlag):\n    V = 64\n    def __hash__(self):\n"
        "        return 0\n    def __eq__(self, other):\n        return True\n"
        "re.compile('a c', G.V)\n"
        "[time.strptime('12', '%H').tm_hour, bool(re.fullmatch('a b', 'ab')) or "
        "bool(re.fullmatch('a c', 'ac')), "
        "re.sub(r'(b)', r'<\\1>', 'abc'), struct.unpack('<I', struct.pack('<I', 1))[0], "
        "struct.pack('<I', 1)[0]]"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == [12, False, "a<b>c", 1, 1]


async def test_a_class_claiming_to_be_a_dict_is_still_iterated_through_the_guard(
    fab: Fabric,
) -> None:
    """``list.extend`` takes a dict as it is; an object whose ``__class__`` answers ``dict``
    is not one, and is iterated through the guard first, as any other iterable is."""
    code = (
        "seen = []\nlst = []\nclass Spoof:\n    def __getattribute__(self, name):\n"
        "        if name == '__class__':\n            return dict\n"
        "        return object.__getattribute__(self, name)\n    def __iter__(self):\n"
        "        for i in range(4):\n            seen.append(len(lst))\n            yield i\n"
        "lst.extend(Spoof())\n[isinstance(Spoof(), dict), seen, lst]"
    )
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == [True, [0, 0, 0, 0], [0, 1, 2, 3]]
