"""Full Python in the sandbox: each construct runs in plain CPython and in Fabric, and both
give the same value, or the same exception type and message.

A case is a snippet whose last line is usually an expression. CPython runs it as a module
(``__name__ == "__main__"``, top-level ``await`` allowed) and evaluates the last line; Fabric
returns it. Values are compared as JSON, the form in which Fabric hands them back.
"""

from __future__ import annotations

import ast
import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric import Fabric

CASES: dict[str, str] = {
    # -- module semantics -------------------------------------------------------------------
    "a later top-level def shadows a builtin for functions": (
        "def f(xs):\n    return min(xs)\na = f([3, 1])\n"
        "def min(xs):\n    return 'mine'\n[a, f([3])]"
    ),
    "functions see top-level names as globals": (
        "count = 0\ndef bump():\n    global count\n    count += 1\nbump(); bump()\ncount"
    ),
    "a global created inside a function": "def f():\n    global g\n    g = 5\nf()\ng",
    "a builtin shadowed later at top level": "a = len('ab')\nlen = 3\n[a, len]",
    "a name read before it is bound": "print(y)\ny = 1\ny",
    "a missing argument names the function": "def f(a):\n    pass\nf()",
    "a missing argument names the method": ("class C:\n    def m(self, x):\n        pass\nC().m()"),
    "a lambda's missing argument": "(lambda a: a)()",
    "** of a non-mapping names the function": "def f(**k):\n    pass\nf(**[1])",
    "* of a non-iterable names the function": "def f(*a):\n    pass\nf(*1)",
    "a keyword given twice names the function": ("def f(**k):\n    pass\nf(a=1, **{'a': 2})"),
    "keywords that are not strings": "def f(**k):\n    pass\nf(**{1: 2})",
    "keywords that are str subclasses": (
        "class S(str):\n    pass\ndef f(**k):\n    return sorted(k)\nf(**{S('a'): 1}, b=2)"
    ),
    "keywords merged in order": (
        "def f(**k):\n    return list(k.items())\nf(a=1, **{'b': 2}, c=3, **{'d': 4})"
    ),
    "** of a mapping that is not a dict": (
        "import collections\ndef f(**k):\n    return k\nf(**collections.OrderedDict(a=1))"
    ),
    "a failed unpacking leaves the rest of the iterator": (
        "src = iter([1, 2, 3, 4, 5])\ntry:\n    a, b = src\nexcept ValueError as e:\n"
        "    m = str(e)\n[m, list(src)]"
    ),
    "too few values to unpack": "a, b, c = iter([1, 2])",
    "starred unpacking": "a, *b, c = iter(range(5))\n[a, b, c]",
    "nested unpacking": "(a, (b, c)), d = [(1, iter([2, 3])), 4]\n[a, b, c, d]",
    "a chained unpacking evaluates its value once, targets from the left": (
        "n = []\ndef f():\n    n.append(1)\n    return (1, 2)\na, b = c, d = f()\n"
        "x = [y, z] = f()\ndef g():\n    a, b = c = iter([1, 2])\n    return a, b, list(c)\n"
        "class T:\n    pass\nt = T()\nt.x, t.y = t.z = (1, 2)\n"
        "[len(n), a, b, c, d, x, y, z, g(), t.x, t.z]"
    ),
    "the rewriting's temporaries never meet a snippet's names": (
        "import contextlib\n_tmp0 = 'mine'\n_with_value_0_ = 'also'\nclass C:\n    pass\nc = C()\n"
        "with contextlib.nullcontext((1, 2)) as (a, b):\n    pass\n"
        "with contextlib.nullcontext(5) as c.v:\n    pass\n"
        "for p, q in [(3, 4)]:\n    pass\n[_tmp0, _with_value_0_, a, b, c.v, p, q]"
    ),
    "qualified names as CPython gives them": (
        "class C:\n    def m(self):\n        return 1\n"
        "def f():\n    def g():\n        pass\n    return g\n"
        "[C.__qualname__, C.m.__qualname__, f().__qualname__, (lambda: 0).__qualname__]"
    ),
    "__name__ is __main__": "__name__",
    # -- names and dunders ------------------------------------------------------------------
    "underscore names": "_cache = {}\ndef _get(k):\n    return _cache.setdefault(k, len(_cache))\n[_get('a'), _get('b'), _get('a')]",
    "private attributes of the snippet's objects": (
        "class C:\n    def __init__(self):\n        self._rows = [1]\n"
        "    def _add(self, x):\n        self._rows.append(x)\n        return self._rows\nC()._add(2)"
    ),
    "name mangling": (
        "class C:\n    def __init__(self):\n        self.__secret = 7\n"
        "    def peek(self):\n        return self.__secret\n[C().peek(), C()._C__secret]"
    ),
    "__repr__, __str__ and __eq__": (
        "class P:\n    def __init__(self, x):\n        self.x = x\n"
        "    def __repr__(self):\n        return f'P({self.x})'\n"
        "    def __str__(self):\n        return 'p' + str(self.x)\n"
        "    def __eq__(self, o):\n        return isinstance(o, P) and o.x == self.x\n"
        "[repr(P(1)), str(P(2)), P(1) == P(1), P(1) != P(2), f'{P(3)}']"
    ),
    "sortable and hashable records": (
        "class R:\n    def __init__(self, k):\n        self.k = k\n"
        "    def __lt__(self, o):\n        return self.k < o.k\n"
        "    def __hash__(self):\n        return hash(self.k)\n"
        "    def __eq__(self, o):\n        return self.k == o.k\n"
        "[[r.k for r in sorted([R(3), R(1), R(2)])], len({R(1), R(1), R(2)})]"
    ),
    "iterable and indexable containers": (
        "class Bag:\n    def __init__(self, *xs):\n        self.xs = list(xs)\n"
        "    def __len__(self):\n        return len(self.xs)\n"
        "    def __iter__(self):\n        return iter(self.xs)\n"
        "    def __getitem__(self, i):\n        return self.xs[i]\n"
        "    def __contains__(self, x):\n        return x in self.xs\n"
        "    def __bool__(self):\n        return bool(self.xs)\n"
        "b = Bag(1, 2, 3)\n[len(b), list(b), b[1], 2 in b, bool(Bag()), b[::-1], sum(b)]"
    ),
    "an iterator class": (
        "class Count:\n    def __init__(self, n):\n        self.i, self.n = 0, n\n"
        "    def __iter__(self):\n        return self\n"
        "    def __next__(self):\n        if self.i >= self.n:\n            raise StopIteration\n"
        "        self.i += 1\n        return self.i\nlist(Count(3))"
    ),
    "a context manager class": (
        "log = []\nclass CM:\n    def __enter__(self):\n        log.append('in')\n        return 5\n"
        "    def __exit__(self, *exc):\n        log.append('out')\n        return True\n"
        "with CM() as v:\n    raise ValueError\n[v, log]"
    ),
    "__index__, __call__ and operators": (
        "class N:\n    def __init__(self, v):\n        self.v = v\n"
        "    def __index__(self):\n        return self.v\n"
        "    def __call__(self, x):\n        return x * self.v\n"
        "    def __add__(self, o):\n        return N(self.v + o.v)\n"
        "    def __radd__(self, o):\n        return N(self.v + o)\n"
        "[[10, 20, 30][N(1)], N(3)(2), (N(1) + N(2)).v, sum([N(1), N(2)], 0).v]"
    ),
    "super().__init__ in a subclass": (
        "class A:\n    def __init__(self, x):\n        self.x = x\n"
        "class B(A):\n    def __init__(self):\n        super().__init__(4)\n        self.y = 1\n"
        "[B().x, B().y, isinstance(B(), A)]"
    ),
    "a subclass of Exception with super().__init__": (
        "class E(Exception):\n    def __init__(self, code):\n        super().__init__(f'code {code}')\n"
        "        self.code = code\ntry:\n    raise E(3)\nexcept E as e:\n    r = [str(e), e.code, e.args]\nr"
    ),
    "a subclass of dict": (
        "class D(dict):\n    def __missing__(self, k):\n        return k * 2\n"
        "    def __setitem__(self, k, v):\n        super().__setitem__(k, v + 1)\n"
        "d = D()\nd['a'] = 1\n[d['a'], d['zz'], dict(d)]"
    ),
    "object.__setattr__ in a frozen class": (
        "class F:\n    def __init__(self, x):\n        object.__setattr__(self, 'x', x)\n"
        "    def __setattr__(self, k, v):\n        raise AttributeError('frozen')\n"
        "f = F(1)\ntry:\n    f.x = 2\nexcept AttributeError as e:\n    m = str(e)\n[f.x, m]"
    ),
    "__init_subclass__, __set_name__ and __class_getitem__": (
        "names = []\nclass Base:\n    def __init_subclass__(cls, tag='', **kw):\n"
        "        super().__init_subclass__(**kw)\n        names.append((cls.__name__, tag))\n"
        "    def __class_getitem__(cls, item):\n        return f'{cls.__name__}[{item}]'\n"
        "class Field:\n    def __set_name__(self, owner, name):\n        self.name = name\n"
        "class Sub(Base, tag='x'):\n    f = Field()\n[names, Sub.f.name, Base[int]]"
    ),
    "a property and a classmethod": (
        "class T:\n    def __init__(self):\n        self._c = 1\n"
        "    @property\n    def c(self):\n        return self._c * 2\n"
        "    @classmethod\n    def make(cls):\n        return cls()\n[T.make().c]"
    ),
    "dunder reads of plain data and the snippet's objects": (
        "class C:\n    def __init__(self):\n        self.a = 1\n"
        "def f():\n    pass\n"
        "[(1).__class__.__name__, C().__class__.__name__, C().__dict__, f.__name__, "
        "type(C()).__name__, C.__mro__[0].__name__, [].__len__()]"
    ),
    "a __new__ that keeps one instance, inherited": (
        "class S:\n    _inst = None\n    def __new__(cls, *a):\n"
        "        if cls._inst is None:\n            cls._inst = super().__new__(cls)\n"
        "        return cls._inst\nclass T(S):\n    pass\n"
        "[S() is S(), T() is S(), type(T()).__name__, S.__new__.__qualname__]"
    ),
    "a __new__ of an int subclass, and one returning a number": (
        "class N(int):\n    def __new__(cls, v):\n        return super().__new__(cls, v * 2)\n"
        "class W:\n    def __new__(cls):\n        return 5\n[N(2), type(N(2)).__name__, W()]"
    ),
    "an enum whose members get their values in __new__": (
        "import enum\nclass Planet(enum.Enum):\n    def __new__(cls, mass, radius):\n"
        "        obj = object.__new__(cls)\n        obj._value_ = mass\n"
        "        obj.radius = radius\n        return obj\n    EARTH = (5.97, 6371)\n"
        "    MARS = (0.642, 3389)\n[Planet.EARTH.value, Planet.MARS.radius, Planet(0.642).name]"
    ),
    "total_ordering, abstractmethod, final and no_type_check on the snippet's own": (
        "import abc, functools, typing\n@functools.total_ordering\nclass V:\n"
        "    def __init__(self, v):\n        self.v = v\n"
        "    def __eq__(self, o):\n        return self.v == o.v\n"
        "    def __lt__(self, o):\n        return self.v < o.v\n"
        "class A(abc.ABC):\n    @abc.abstractmethod\n    def f(self): ...\n"
        "    @classmethod\n    @abc.abstractmethod\n    def g(cls): ...\n"
        "@typing.final\nclass F:\n    pass\n@typing.no_type_check\nclass N:\n"
        "    def m(self):\n        pass\ntry:\n    A()\nexcept TypeError as e:\n    m = str(e)\n"
        "[V(2) >= V(1), V(1) > V(2), m, F.__final__, N.m.__no_type_check__]"
    ),
    "augmented assignment reads and writes its target once": (
        "import collections\nclass P:\n    def __init__(self):\n        self.reads = 0\n"
        "        self._v = [1]\n    @property\n    def v(self):\n        self.reads += 1\n"
        "        return self._v\n    @v.setter\n    def v(self, x):\n        self._v = x\n"
        "p = P()\np.v += [2]\nd = {'a': [1]}\nd['a'] += (3, 4)\nd['a'] += iter([5])\n"
        "l = [0, 1, 2, 3]\nl[1:2] += [9]\ndq = collections.deque([1])\n"
        "dq += collections.deque([2])\nx = [1]\nx += collections.deque([7])\n"
        "c = collections.Counter('ab')\nc += collections.Counter('a')\nm = {'a': 1}\n"
        "m |= collections.OrderedDict(b=2)\ns = {1}\ns |= {2: 0}.keys()\n"
        "class T:\n    z = [1]\n    z += [2]\n"
        "[p.reads, p.v, d, l, list(dq), x, dict(c), m, sorted(s), T.z]"
    ),
    # -- constructs ---------------------------------------------------------------------------
    "nonlocal counters": (
        "def counter():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n"
        "        return n\n    return inc\nc = counter()\nc(); c()\nc()"
    ),
    "match with every pattern kind": (
        "class Point:\n    __match_args__ = ('x', 'y')\n"
        "    def __init__(self, x, y):\n        self.x, self.y = x, y\n"
        "def what(v):\n    match v:\n        case None:\n            return 'none'\n"
        "        case 0 | 1:\n            return 'bit'\n"
        "        case [x, *rest] if x > 5:\n            return ('big list', x, rest)\n"
        "        case [x, y]:\n            return ('pair', x, y)\n"
        "        case {'k': str() as k, **others}:\n            return ('map', k, others)\n"
        "        case Point(0, y=yy):\n            return ('on y', yy)\n"
        "        case Point(x=px):\n            return ('point', px)\n"
        "        case str(s):\n            return ('str', s)\n"
        "        case _:\n            return 'other'\n"
        "[what(None), what(1), what([9, 8, 7]), what([1, 2]), what({'k': 'v', 'z': 1}), "
        "what(Point(0, 5)), what(Point(3, 4)), what('s'), what(2.5)]"
    ),
    "match at the top level binds module names": (
        "match {'a': [1, 2]}:\n    case {'a': [x, *rest]}:\n        pass\ndef f():\n    return x\n"
        "[f(), rest]"
    ),
    "annotated assignments": (
        "x: int = 3\ny: list[str]\ndef f() -> int:\n    z: int = 1\n    return z\n"
        "class C:\n    a: int = 1\n    b: 'str'\n"
        "[x, f(), sorted(__annotations__), sorted(C.__annotations__), C.a]"
    ),
    "try/except*": (
        "got = []\ntry:\n    raise ExceptionGroup('g', [ValueError(1), KeyError(2)])\n"
        "except* ValueError as eg:\n    got.append(len(eg.exceptions))\n"
        "except* KeyError as eg:\n    got.append(repr(eg.exceptions[0]))\ngot"
    ),
    "async generators and comprehensions": (
        "async def agen(n):\n    for i in range(n):\n        yield i\n"
        "async def total():\n    return sum([x async for x in agen(4)])\n"
        "r = [x * 2 async for x in agen(3)]\n"
        "[r, await total(), {x: x async for x in agen(2)}]"
    ),
    "a walrus in a comprehension": "[y := 5, [y := y + 1 for _ in range(2)], y]",
    "generators with send": (
        "def acc():\n    total = 0\n    while True:\n        x = yield total\n        total += x\n"
        "g = acc()\nnext(g)\n[g.send(2), g.send(3)]"
    ),
    "a multiple-target assignment": "a = b = [1]\na.append(2)\nb",
    # -- builtins -----------------------------------------------------------------------------
    "type of a value": "[type(1).__name__, type('s') is str, type([]) == list]",
    "type with three arguments": "X = type('X', (), {'a': 1})\n[X().a, X.__name__]",
    "getattr, hasattr, setattr, delattr": (
        "class C:\n    pass\nc = C()\nsetattr(c, 'x', 1)\nsetattr(c, '_y', 2)\n"
        "h = [hasattr(c, 'x'), hasattr(c, 'z')]\ndelattr(c, 'x')\n"
        "[getattr(c, '_y'), getattr(c, 'x', 'gone'), h, vars(c)]"
    ),
    "hasattr as a namedtuple test": (
        "import collections\nP = collections.namedtuple('P', 'x')\n"
        "[hasattr(P(1), '_fields'), hasattr((1,), '_fields'), hasattr([], '__len__')]"
    ),
    "getattr of a missing attribute": "class C:\n    pass\ngetattr(C(), 'nope')",
    "vars without __dict__": "vars(1)",
    "id, callable, iter and next": (
        "it = iter([1, 2])\n[isinstance(id(it), int), callable(len), callable(1), next(it), "
        "next(it), next(it, 'end')]"
    ),
    "builtins called wrongly say what CPython says": (
        "errors = []\nfor call in (lambda: sum(), lambda: enumerate(), lambda: map(str), "
        "lambda: filter(None), lambda: reversed(), lambda: sorted(), lambda: min(), "
        "lambda: zip(1), lambda: enumerate(1), lambda: max(1)):\n"
        "    try:\n        call()\n    except TypeError as e:\n        errors.append(str(e))\n"
        "errors"
    ),
    "enumerate with a keyword": "list(enumerate(iterable='ab', start=1))",
    "iter with a sentinel": "xs = [1, 2, 0, 3]\nlist(iter(lambda: xs.pop(0), 0))",
    "every exception class": (
        "[issubclass(ModuleNotFoundError, ImportError), ProcessLookupError.__name__, "
        "issubclass(EncodingWarning, Warning), str(NotADirectoryError('x'))]"
    ),
    # -- modules ------------------------------------------------------------------------------
    "functools caches and their parameters": (
        "import functools\n@functools.cache\ndef f(x):\n    return x * 2\n"
        "@functools.lru_cache(maxsize=4)\ndef g(x):\n    return x + 1\n"
        "@functools.lru_cache\ndef h(x):\n    return x\n"
        "[f(2), f(2), f.cache_parameters(), g(1), g.cache_info().misses, h(3), "
        "h.cache_parameters(), g.cache_clear(), g.cache_info(), h.__wrapped__.__name__]"
    ),
    "subclasses override what classes from outside define": (
        "import string, re, json, enum, abc, contextlib, textwrap, copy\n"
        "class T(string.Template):\n    delimiter = '%'\n    flags = re.IGNORECASE\n"
        "    braceidpattern = None\nclass E(json.JSONEncoder):\n    item_separator = ';'\n"
        "    def default(self, o):\n        return sorted(o)\n"
        "class Color(enum.Enum):\n    @staticmethod\n"
        "    def _generate_next_value_(name, start, count, last):\n        return name.lower()\n"
        "    RED = enum.auto()\nclass W(textwrap.TextWrapper):\n"
        "    wordsep_simple_re = re.compile(r'(\\s+)')\n    break_on_hyphens = False\n"
        "class M(abc.ABC):\n    @abc.abstractmethod\n    def f(self):\n        pass\n"
        "class M2(M):\n    def f(self):\n        return 'f'\nclass M3(M2, abc.ABC):\n"
        "    pass\nclass S(contextlib.ExitStack):\n    def close(self):\n"
        "        return 'closed'\nclass L(list):\n    @property\n    def first(self):\n        return self[0]\n"
        "with S() as s:\n    s.enter_context(contextlib.nullcontext())\n"
        "T.delimiter = '&'\nclass T2(T):\n    pass\n"
        "[T2('&who').substitute(who='x'), E().encode([{1, 2}, 3]), Color.RED.value, "
        "W(width=5).wrap('ab-cd ef'), M3().f(), S().close(), L([4]).first, "
        "str(copy.copy(ValueError('x')))]"
    ),
    "classes from outside mixed with the snippet's own ABCs, and a builtin as an override": (
        "import abc, typing, json, datetime\nclass A(metaclass=abc.ABCMeta):\n"
        "    @abc.abstractmethod\n    def f(self): ...\nclass B(A, abc.ABC):\n"
        "    def f(self):\n        return 'b'\nclass M(A, typing.Mapping):\n"
        "    def f(self):\n        return 1\n    def __getitem__(self, k):\n        return k\n"
        "    def __len__(self):\n        return 0\n    def __iter__(self):\n"
        "        return iter([])\nclass Enc(json.JSONEncoder):\n    default = str\n"
        "[B().f(), M().f(), json.dumps({'t': datetime.date(2020, 1, 1)}, cls=Enc)]"
    ),
    "a __getattribute__ that asks object's, or super()'s": (
        "seen = []\nclass P:\n    def __init__(self):\n        self.x = 1\n"
        "    def __getattribute__(self, name):\n        seen.append(name)\n"
        "        return object.__getattribute__(self, name)\nclass Q(P):\n"
        "    def __getattribute__(self, name):\n        return super().__getattribute__(name)\n"
        "p, q = P(), Q()\ntry:\n    p.y\nexcept AttributeError as e:\n    m = str(e)\n"
        "[p.x, q.x, m, 'x' in seen, type(p).__name__]"
    ),
    "__dict__ written in place on subclasses of classes from outside": (
        "import collections, json, random, string\nclass U(collections.ChainMap):\n"
        "    def __init__(self, *a, **kw):\n        super().__init__(dict(*a, **kw))\n"
        "        self.__dict__['tag'] = 't'\nclass E(json.JSONEncoder):\n"
        "    def __init__(self, **kw):\n        super().__init__(**kw)\n"
        "        vars(self).update(extra=5)\nclass R(random.Random):\n"
        "    def setup(self, **kw):\n        self.__dict__.update(kw)\n"
        "        self.__dict__.setdefault('m', 4)\n        del self.__dict__['n']\n"
        "r = R(1)\nr.setup(n=3)\nclass T(string.Template):\n    delimiter = '%'\n"
        "t = T('%a')\nt.__dict__['note'] = 1\n"
        "[U(a=1).tag, E().extra, r.m, hasattr(r, 'n'), t.note, t.substitute(a=2)]"
    ),
    "__dict__ written in place on subclasses of ABC and Exception": (
        "import abc\nclass A(abc.ABC):\n    def __init__(self, **kw):\n"
        "        self.__dict__.update(kw)\nclass E(Exception):\n    def __init__(self, **kw):\n"
        "        vars(self).update(kw)\n[A(a=1).a, E(b=2).b]"
    ),
    "decimal contexts, their traps and flags, and formatting": (
        "import decimal\nc = decimal.Context(prec=5, traps=[decimal.DivisionByZero])\n"
        "c.traps[decimal.InvalidOperation] = False\nc.flags[decimal.DivisionByZero] = True\n"
        "with decimal.localcontext(c) as d:\n    p = d.prec\n"
        "[p, c.traps[decimal.InvalidOperation], c.flags[decimal.DivisionByZero], c.prec, "
        "format(decimal.Decimal('1234.5678'), ',.2f'), f'{decimal.Decimal(2.5):.0f}']"
    ),
    "a property over a cached method": (
        "import functools\nclass C:\n    def __init__(self, v):\n        self.v = v\n"
        "    @property\n    @functools.cache\n    def sq(self):\n        return self.v * self.v\n"
        "    @property\n    @functools.lru_cache(maxsize=8)\n    def cube(self):\n"
        "        return self.v ** 3\n[C(2).sq, C(3).cube, property().getter.__name__]"
    ),
    "Decimal comparisons with other numbers": (
        "from decimal import Decimal as D\nfrom fractions import Fraction as F\n"
        "class E(D):\n    pass\n[D(1) < F(1, 3), D(1) == 1, D('1.5') > 1.2, D(2) <= D(2), "
        "D(1) != 2, E(3) >= 2, sorted([D(2), 1, F(1, 2)]) == [F(1, 2), 1, D(2)], "
        "hash(D(2)) == hash(2)]"
    ),
    "bytearray of an iterable that changes the bytearray being made": (
        "made = []\ndef items():\n    made[0].extend(b'A' * 150)\n    del made[0][:60]\n"
        "    yield from [0x42] * 5\nclass B(bytearray):\n    def __init__(self):\n"
        "        made.append(self)\n        super().__init__(items())\nb = B()\nout = []\n"
        "for bad in ([256], [-1], 1.5, ['a']):\n    try:\n        bytearray(bad)\n"
        "    except (ValueError, TypeError) as e:\n        out.append(str(e))\n"
        "[len(b), b[85:].hex(), list(bytearray(range(3))), list(bytearray(2)), "
        "bytearray('é', 'utf-8').hex(), list(bytearray(source=[1])), out]"
    ),
    "a cached function's own attributes win over the cache's (update_wrapper)": (
        "import functools\ndef f(x):\n    return x\nf.cache_info = lambda: 'mine'\n"
        "g = functools.lru_cache(f)\n[g.cache_info(), g(2), g.cache_parameters()]"
    ),
    "a TypedDict in both forms": (
        "import typing\nTD = typing.TypedDict('TD', {'a': int, 'b': str})\n"
        "class TD2(typing.TypedDict, total=False):\n    c: int\n"
        "[dict(TD(a=1, b='x')), sorted(TD.__required_keys__), typing.is_typeddict(TD), "
        "sorted(TD2.__optional_keys__), TD.__name__, TD.__module__]"
    ),
    "a compiled pattern's methods": (
        "import re\np = re.compile(r'(\\d+)')\nm = p.search('ab12')\n"
        "[m.group(1), p.match('3x').group(0), bool(p.fullmatch('44')), "
        "[x.group(0) for x in p.finditer('1a2')], p.sub('N', 'a1b2'), p.subn('N', 'a1'), "
        "p.findall('1 22'), p.split('a1b')]"
    ),
    "classes made by type() and by a metaclass called directly": (
        "import abc\nseen = []\nclass D:\n    def __set_name__(self, owner, name):\n"
        "        seen.append((owner.__name__, name))\nclass Base:\n"
        "    def __init_subclass__(cls, **kw):\n        seen.append(cls.__name__)\n"
        "X = type('X', (Base,), {'d': D(), 'v': 1})\nA = abc.ABCMeta('A', (), {'x': 2})\n"
        "class B(A):\n    pass\n[seen, X().v, type(A).__name__, B.x, isinstance(B(), A)]"
    ),
    "a metaclass named by keyword: abc's, type and enum's": (
        "import abc, enum\nclass Shape(metaclass=abc.ABCMeta):\n    @abc.abstractmethod\n"
        "    def area(self):\n        ...\nclass Sq(Shape):\n    def area(self):\n"
        "        return 4\ntry:\n    Shape()\nexcept TypeError as e:\n    err = str(e)\n"
        "class P(metaclass=type):\n    x = 1\n"
        "class Base:\n    def __init_subclass__(cls, tag=None, **kw):\n        cls.tag = tag\n"
        "class T(Base, metaclass=abc.ABCMeta, tag='t'):\n    pass\n"
        "class E(enum.Enum, metaclass=enum.EnumMeta):\n    A = 1\n"
        "[Sq().area(), err, type(Shape).__name__, P.x, type(P).__name__, T.tag, "
        "isinstance(Sq(), Shape), [m.name for m in E], type(E).__name__]"
    ),
    "a dataclass's fields read through __dataclass_fields__": (
        "from dataclasses import dataclass\n@dataclass\nclass A:\n    x: int\n    y: str = 's'\n"
        "@dataclass\nclass B(A):\n    z: int = 0\n"
        "[A.__dataclass_fields__['x'].type.__name__, list(B.__dataclass_fields__), "
        "list(getattr(B, '__dataclass_fields__')), list(B(1).__dataclass_fields__), "
        "B.__dataclass_fields__['y'].default]"
    ),
    "the Unicode errors' messages": (
        "out = []\nfor make in [lambda: b'a\\xffb'.decode(), lambda: 'a\\xe9'.encode('ascii'), "
        "lambda: '\\u20ac\\U0001f600'.encode('latin-1'), "
        "lambda: UnicodeTranslateError('a\\xe9b', 1, 2, 'why'), "
        "lambda: UnicodeDecodeError('utf-8', b'abc', 0, 3, 'bad'), "
        "lambda: UnicodeEncodeError('ascii', 'abc', 5, 6, 'far')]:\n"
        "    try:\n        raise make()\n    except Exception as e:\n        out.append(str(e))\n"
        "out"
    ),
    "a set grown every way": (
        "s = set()\ns.add(1)\ns |= {2}\ns ^= {3}\ns.update([4], (5,))\n"
        "s.symmetric_difference_update({6})\nf = s.update\nf(x for x in [7, 8])\n"
        "set.update(s, iter([9]))\nclass S(set):\n    def add(self, x):\n"
        "        super().add(x * 10)\nt = S([1])\nt.add(2)\nseen = set()\nseen_add = seen.add\n"
        "dedup = [x for x in [1, 2, 1, 3] if not (x in seen or seen_add(x))]\n"
        "try:\n    s |= [1]\nexcept TypeError as e:\n    err = str(e)\n"
        "[sorted(s), sorted(t), dedup, err, set.add.__name__]"
    ),
    "asyncio's locks, events, queues and tasks": (
        "import asyncio\nsem = asyncio.Semaphore(2)\nactive, peak = [], []\n"
        "async def one(i):\n    async with sem:\n        active.append(i)\n"
        "        peak.append(len(active))\n        await asyncio.sleep(0)\n"
        "        active.remove(i)\n        return i * 10\n"
        "results = await asyncio.gather(*(one(i) for i in range(6)))\n"
        "q = asyncio.Queue(maxsize=10)\nfor r in results:\n    q.put_nowait(r)\ntotal = 0\n"
        "while not q.empty():\n    total += await q.get()\n    q.task_done()\nawait q.join()\n"
        "ev = asyncio.Event()\nasync def waiter():\n    await ev.wait()\n    return 'woke'\n"
        "t = asyncio.create_task(waiter(), name='w')\nawait asyncio.sleep(0)\nev.set()\n"
        "woke = await t\nlock = asyncio.Lock()\nasync with lock:\n    locked = lock.locked()\n"
        "pq, lq = asyncio.PriorityQueue(), asyncio.LifoQueue()\nfor x in [3, 1, 2]:\n"
        "    await pq.put(x)\n    lq.put_nowait(x)\n"
        "ordered = [pq.get_nowait() for _ in range(3)] + [lq.get_nowait() for _ in range(3)]\n"
        "try:\n    pq.get_nowait()\nexcept asyncio.QueueEmpty:\n    empty = 'empty'\n"
        "async with asyncio.TaskGroup() as tg:\n    a = tg.create_task(asyncio.sleep(0, 'a'))\n"
        "    b = tg.create_task(asyncio.sleep(0, 'b'))\n"
        "async def boom():\n    raise ValueError('x')\n"
        "try:\n    async with asyncio.TaskGroup() as tg:\n        tg.create_task(boom())\n"
        "except* ValueError as eg:\n    grouped = [str(e) for e in eg.exceptions]\n"
        "bs = asyncio.BoundedSemaphore(1)\ntry:\n    bs.release()\nexcept ValueError as e:\n"
        "    bounded = str(e)\nlate = asyncio.create_task(asyncio.sleep(0, 'late'))\n"
        "try:\n    late.result()\nexcept asyncio.InvalidStateError as e:\n    pending = str(e)\n"
        "cancelled = asyncio.create_task(asyncio.sleep(10))\nawait asyncio.sleep(0)\n"
        "cancelled.cancel()\ntry:\n    await cancelled\nexcept asyncio.CancelledError:\n"
        "    gone = cancelled.cancelled()\n"
        "[results, max(peak), total, woke, t.done(), t.get_name(), locked, ordered, empty, "
        "a.result() + b.result(), grouped, bounded, pending, gone, q.maxsize, q.full(), "
        "isinstance(pq, asyncio.Queue), asyncio.Queue[int].__name__, repr(t)[:14]]"
    ),
    "a class of the snippet's that is awaitable": (
        "import asyncio\nout = []\nclass Turns:\n    def __init__(self, n):\n"
        "        self.n = n\n    def __await__(self):\n        for _ in range(self.n):\n"
        "            yield\n        return self.n * 10\nout.append(await Turns(3))\n"
        "out.append(await asyncio.gather(Turns(1), Turns(2)))\n"
        "out.append(await asyncio.wait_for(Turns(2), 1))\nclass Forever:\n"
        "    def __await__(self):\n        try:\n            while True:\n"
        "                yield\n        except asyncio.CancelledError:\n"
        "            out.append('cancelled inside')\n            raise\ntry:\n"
        "    async with asyncio.timeout(0.01):\n        await Forever()\n"
        "except TimeoutError:\n    out.append('timed out')\nclass NotSteps:\n"
        "    def __await__(self):\n        return 5\ntry:\n    await NotSteps()\n"
        "except TypeError as e:\n    out.append(str(e))\nclass Odd:\n"
        "    def __await__(self):\n        try:\n            yield 7\n"
        "        except RuntimeError as e:\n            out.append(str(e))\n"
        "        return 'after'\nout.append(await Odd())\nout"
    ),
    "a class with __getitem__ and no __iter__": (
        "import typing, itertools\nclass Squares:\n    def __getitem__(self, i):\n"
        "        if i >= 5:\n            raise IndexError(i)\n        return i * i\n"
        "it = iter(Squares())\nfirst = [next(it), next(it)]\n"
        "[first, list(it), list(it), list(Squares()), 9 in Squares(), sorted(Squares()), "
        "list(itertools.filterfalse(None, Squares())), "
        "isinstance(Squares(), typing.Iterable)]"
    ),
    "the names of functools's decorator factories": (
        "import functools\nmade = functools.lru_cache()\n[made.__qualname__, made.__module__]"
    ),
    "forward references in annotations": (
        "import dataclasses, typing\n@dataclasses.dataclass\nclass Node:\n    name: str\n"
        "    children: typing.List['Node'] = dataclasses.field(default_factory=list)\n"
        "T = typing.TypeVar('T', 'int', 'str')\ntry:\n    typing.List['not ( valid']\n"
        "except SyntaxError as e:\n    bad = str(e)\n"
        "[repr(Node('a', [Node('b')])), repr(T), repr(typing.Optional['Node']), bad]"
    ),
    "a __new__ of a builtin type's subclass returning its parent class's instance": (
        "class Tok(str):\n    def __new__(cls, v):\n        return str.__new__(Tok, v)\n"
        "class Sub(Tok):\n    pass\n[type(Sub('a')).__name__, Sub('b') + 'c']"
    ),
    "attributes on the snippet's own functions": (
        "import functools\ndef memo(f):\n    cache = {}\n    @functools.wraps(f)\n"
        "    def inner(*args):\n        if args not in cache:\n            cache[args] = f(*args)\n"
        "        return cache[args]\n    inner.cache = cache\n    return inner\n@memo\n"
        "def paths(r, c):\n    if r == 0 or c == 0:\n        return 1\n"
        "    return paths(r - 1, c) + paths(r, c - 1)\n"
        "counter = lambda: None\ncounter.calls = 0\ncounter.calls += 1\ncounter._seen = [1]\n"
        "del counter._seen\n"
        "[paths(10, 10), len(paths.cache), paths.__name__, counter.calls, "
        "hasattr(counter, '_seen'), sorted(vars(counter))]"
    ),
    "the sandbox's itertools, csv reader and dict merges at their edges": (
        "import csv, io, itertools, collections\nf = io.StringIO('a,b\\n1,2\\n')\n"
        "header = next(csv.reader(f))\nrest = f.read()\n"
        "it = iter(range(10))\na = list(itertools.islice(it, 5, 2))\nb = next(it)\n"
        "it = iter(range(10))\nc = list(itertools.islice(it, 3, 20, 4))\nd = next(it, 'end')\n"
        "it = iter(range(10))\ne = list(itertools.islice(it, 0, 6, 2))\ng = next(it)\n"
        "class N:\n    def __init__(self, v):\n        self.v = v\n"
        "    def __add__(self, o):\n        return N(self.v + o)\n"
        "    def __iadd__(self, o):\n        self.v += o\n        return self\n"
        "cnt = itertools.count(N(0))\nvals = [next(cnt).v for _ in range(3)]\n"
        "dd = collections.defaultdict(list, {'a': [1]})\ndd.__init__(int, {'c': 3})\n"
        "m = {}\nm.update(x=1)\nm |= {'y': 2}\n"
        "[header, rest, a, b, c, d, e, g, vals, sorted(dd.items()), dd['q'], m, "
        "list(itertools.pairwise('abc')), list(itertools.zip_longest('a', 'xy'))]"
    ),
    "functools.wraps in a decorator": (
        "import functools\ndef deco(f):\n    @functools.wraps(f)\n    def inner(*a, **k):\n"
        "        return f(*a, **k) * 2\n    return inner\n@deco\ndef area(w, h):\n"
        '    """The area."""\n    return w * h\n'
        "[area(2, 3), area.__name__, area.__doc__, area.__wrapped__(2, 3), "
        "list(functools.WRAPPER_ASSIGNMENTS)]"
    ),
    "asyncio.timeout as a scope": (
        "import asyncio\nr = []\ntry:\n    async with asyncio.timeout(0.01) as s:\n"
        "        r.append(s.when() is not None)\n        await asyncio.sleep(10)\n"
        "except TimeoutError:\n    r.append(s.expired())\n"
        "async with asyncio.timeout(None) as t:\n    r.append(t.when())\nr"
    ),
    "a ChainMap's views, the singletons' types and typing's origins": (
        "import collections, typing\ncm = collections.ChainMap({'a': 1}, {'b': 2})\n"
        "[sorted(cm.items()), sorted(cm.keys()), sorted(cm.values()), dict(cm), "
        "type(None)(), type(None).__name__, typing.get_origin(typing.Mapping[int, int]).__name__, "
        "isinstance({}, typing.get_origin(typing.Mapping[int, int]))]"
    ),
    "class hooks given under other names": (
        "seen = []\ndef helper(cls, **kw):\n    seen.append(('sub', cls.__name__))\n"
        "def named_oddly(self, owner, name):\n    seen.append(('set', owner.__name__, name))\n"
        "class B:\n    __init_subclass__ = classmethod(helper)\nclass D:\n"
        "    __set_name__ = named_oddly\nclass C(B):\n    d = D()\n"
        "class S:\n    @staticmethod\n    def __set_name__(owner, name):\n"
        "        seen.append(('static', owner.__name__, name))\nclass E:\n    s = S()\n"
        "[seen, B.__init_subclass__.__name__, D.__set_name__.__qualname__]"
    ),
    "a pattern's group index": (
        "import re\np = re.compile('(?P<a>x)(?P<b>y)')\n[dict(p.groupindex), p.groupindex['b'], len(p.groupindex)]"
    ),
    "fractions of subclasses take their values": (
        "import decimal, fractions\nF = fractions.Fraction\nclass Fl(float):\n"
        "    def as_integer_ratio(self):\n        return (7, 1)\n"
        "class I(int):\n    pass\nclass G(F):\n    pass\n"
        "[str(x) for x in (F(Fl(1.5)), F(I(3), I(6)), F(G(3, 4)), F(decimal.Decimal('2.5')), "
        "F(G(1, 3), F(2, 3)), F(True), F('1/3') + F(1, 6))]"
    ),
    "dataclasses": (
        "from dataclasses import dataclass, field, asdict, replace\n"
        "@dataclass(order=True)\nclass P:\n    x: int\n    y: int = 0\n"
        "    tags: list = field(default_factory=list)\n"
        "p = P(1)\n[repr(p), asdict(replace(p, y=5)), sorted([P(2), P(1)])[0].x, p == P(1)]"
    ),
    "a frozen dataclass": (
        "import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass F:\n    a: int\n"
        "try:\n    F(1).a = 2\nexcept dataclasses.FrozenInstanceError as e:\n    m = type(e).__name__\n"
        "[m, hash(F(1)) == hash(F(1)), [f.name for f in dataclasses.fields(F)]]"
    ),
    "a dataclass without a docstring or an __init__": (
        "import dataclasses\n@dataclasses.dataclass(init=False, eq=False)\nclass N:\n    a: int = 1\n"
        "@dataclasses.dataclass\nclass K:\n    a: int\n    b: str = 'x'\n"
        "@dataclasses.dataclass(init=False)\nclass J(K):\n    c: int = 0\n"
        "[repr(N()), N.__doc__, K.__doc__, J.__doc__]"
    ),
    "dataclass inheritance and make_dataclass": (
        "import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass P:\n    x: int\n    y: int = 0\n"
        "@dataclasses.dataclass(frozen=True, slots=True)\nclass Q(P):\n    z: int = 1\n"
        "M = dataclasses.make_dataclass('M', ['a', ('b', int, dataclasses.field(default=2))], "
        "bases=(P,), namespace={'total': lambda s: s.x + s.a + s.b}, kw_only=True, frozen=True)\n"
        "E = dataclasses.make_dataclass('E', [('a', int, 3)], init=False)\n"
        "m = M(1, a=2)\n[repr(Q(1, z=3)), repr(m), m.total(), M.__doc__, E.__doc__, E().a, "
        "[f.name for f in dataclasses.fields(M)], hash(Q(1)) == hash(Q(1))]"
    ),
    "a dataclass field named self": (
        "import dataclasses\n@dataclasses.dataclass(order=True)\nclass S:\n    self: int = 0\n"
        "    name: str = 'n'\n[repr(S(self=2)), S(1) < S(2), S.__doc__]"
    ),
    "typing annotations": (
        "from typing import Optional, List, Dict, TypeVar, Generic, Callable, Any\n"
        "T = TypeVar('T')\nclass Box(Generic[T]):\n    def __init__(self, v: T) -> None:\n"
        "        self.v = v\n"
        "def f(x: Optional[int] = None, ys: List[str] = [], cb: Callable[[int], Any] = str) "
        "-> Dict[str, int]:\n    return {'x': x or 0}\n[f(2), Box[int](3).v, str(Optional[int])]"
    ),
    "typing's TypedDict and Protocol": (
        "from typing import TypedDict, Protocol\nclass M(TypedDict):\n    a: int\n"
        "class Q(Protocol):\n    def f(self) -> int: ...\n[M(a=1), Q.__name__]"
    ),
    "enum": (
        "import enum\nclass Color(enum.Enum):\n    RED = 1\n    GREEN = enum.auto()\n"
        "class F(enum.IntFlag):\n    A = 1\n    B = 2\n"
        "[Color.RED.name, Color(2).name, [c.value for c in Color], list(Color.__members__), "
        "int(F.A | F.B), Color['GREEN'].value]"
    ),
    "typing.NamedTuple": (
        "from typing import NamedTuple\nclass P(NamedTuple):\n    'a point'\n    x: int\n"
        "    y: int = 2\n    def norm(self):\n        return self.x + self.y\n"
        "    def __repr__(self):\n        return f'P<{self.x},{self.y}>'\n"
        "p = P(1)\nQ = NamedTuple('Q', [('a', int)])\nR = NamedTuple('R', b=str)\n"
        "[p, repr(p), p._asdict(), p.norm(), P.__doc__, P.__annotations__ == {'x': int, 'y': int}, "
        "Q(3).a, R('z').b, P.__module__, P._fields, p._replace(x=5), isinstance(p, tuple)]"
    ),
    "typing.NamedTuple's rules": (
        "from typing import NamedTuple\nerrors = []\n"
        "try:\n    class P(NamedTuple):\n        x: int = 1\n        y: int\n"
        "except TypeError as e:\n    errors.append(str(e))\n"
        "try:\n    class S(NamedTuple):\n        x: int\n        _fields = 3\n"
        "except AttributeError as e:\n    errors.append(str(e))\nerrors"
    ),
    "class patterns: builtins match themselves, classes their __match_args__": (
        "import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int\n    y: int = 0\n"
        "class S(str):\n    pass\nclass K:\n    pass\n"
        "def f(v):\n    match v:\n        case bool(b):\n            return ['bool', b]\n"
        "        case int(i):\n            return ['int', i]\n        case S(s):\n            return ['S', s]\n"
        "        case str(t):\n            return ['str', t]\n        case P(a, b):\n            return ['P', a, b]\n"
        "        case [int(q), *_]:\n            return ['list', q]\n        case _:\n            return None\n"
        "errors = []\nfor v in (P(1), K()):\n    try:\n        match v:\n"
        "            case P(a, b, c):\n                pass\n            case K(a):\n                pass\n"
        "    except TypeError as e:\n        errors.append(str(e))\n"
        "[f(True), f(3), f(S('s')), f('t'), f(P(1, 2)), f([5, 6]), f(2.5), errors]"
    ),
    "enum's functional API": (
        "import enum\nC = enum.Enum('C', 'RED GREEN')\nD = enum.IntEnum('D', [('A', 5), ('B', 7)])\n"
        "E = enum.Enum('E', {'X': 'x'}, module='m', qualname='Q.E')\n"
        "[[c.name for c in C], C.RED.value, D.B + 1, E.X.value, repr(C.GREEN), E.__module__, "
        "E.__qualname__, C.__module__]"
    ),
    "csv over a string": (
        "import csv, io\nrows = list(csv.DictReader(io.StringIO('a,b\\n1,2\\n3,4\\n')))\n"
        "out = io.StringIO()\nw = csv.writer(out)\nw.writerows([['x', 'y'], [1, 'a,b']])\n"
        "[rows, out.getvalue()]"
    ),
    "csv.Sniffer and its dialect": (
        "import csv, io\nsample = 'a;b;c\\n1;2;3\\n4;5;6\\n'\nd = csv.Sniffer().sniff(sample)\n"
        'class Mine(d):\n    quotechar = "\'"\n'
        "[d.delimiter, d.__name__, list(csv.reader(io.StringIO(sample), d)), Mine().quotechar, "
        "csv.Sniffer().has_header(sample), csv.Sniffer().sniff('x,y\\n1,2\\n', ',').delimiter]"
    ),
    "deque and its index": (
        "import collections, typing, copy\nd = collections.deque([1, 2, 3, 2], maxlen=5)\n"
        "d.appendleft(0)\nd.rotate(1)\n[d.index(2), d.index(2, 3), d.index(3, -2), repr(d), "
        "type(d).__name__, type(typing.Deque([4])) is type(d), repr(copy.copy(d)), d.maxlen]"
    ),
    "io in memory": (
        "import io\nb = io.BytesIO()\nb.write(b'ab')\ns = io.StringIO()\nprint('hi', file=s)\n"
        "[b.getvalue().decode(), s.getvalue()]"
    ),
    "copy and operator": (
        "import copy, operator\nclass P:\n    def __init__(self):\n        self.n = [1]\n"
        "p = P()\nq = copy.deepcopy(p)\nq.n.append(2)\nrows = [{'a': 2}, {'a': 1}]\n"
        "[p.n, q.n, sorted(rows, key=operator.itemgetter('a')), operator.attrgetter('n')(p), "
        "operator.methodcaller('upper')('x'), operator.add(1, 2), copy.copy([1, [2]])]"
    ),
    "dataclasses' asdict, astuple and replace": (
        "import dataclasses, contextlib\n@dataclasses.dataclass\nclass P:\n    x: int\n    tags: list\n"
        "class S(contextlib.ExitStack):\n    def __init__(self):\n        super().__init__()\n"
        "        self.n = 1\n"
        "p = P(1, ['a'])\nd = dataclasses.asdict(p)\nd['tags'].append('b')\n"
        "[d, dataclasses.astuple(p), dataclasses.replace(p, x=2).x, p.tags, S().n, "
        "dataclasses.asdict(p, dict_factory=lambda kv: sorted(kv))]"
    ),
    "copy and deepcopy of ordinary values": (
        "import copy, collections, dataclasses, datetime, decimal, enum, fractions\n"
        "@dataclasses.dataclass\nclass P:\n    xs: list\nclass C(enum.Enum):\n    A = 1\n"
        "class O:\n    def __init__(self):\n        self.d = {'k': [1]}\n"
        "v = [P([1]), collections.deque([1, [2]]), collections.Counter('aab'), "
        "collections.OrderedDict(a=1), collections.defaultdict(list, a=[1]), "
        "datetime.datetime(2024, 1, 2), decimal.Decimal('1.5'), fractions.Fraction(1, 3), C.A, "
        "ValueError('x'), (1, {2}), O()]\n"
        "d = copy.deepcopy(v)\nd[0].xs.append(2)\nd[1][1].append(3)\nd[11].d['k'].append(2)\n"
        "s = copy.copy(v)\n[v[0].xs, d[0].xs, list(d[1]), dict(d[2]), d[4]['a'], str(d[5]), "
        "str(d[6]), str(d[7]), d[8] is C.A, d[9].args, v[11].d, d[11].d, s[0] is v[0]]"
    ),
    "copy follows each object's own recipe": (
        "import copy, collections, dataclasses, datetime\n"
        "class P:\n    def __init__(self, x):\n        self.x = x\n"
        "    def __reduce__(self):\n        return (P, (self.x,))\n"
        "class S:\n    def __init__(self):\n        self.a, self.cache = 1, {'k': 2}\n"
        "    def __getstate__(self):\n        return {'a': self.a}\n"
        "    def __setstate__(self, state):\n        self.__dict__.update(state, cache={})\n"
        "class M:\n    def __init__(self):\n        self.xs = [1]\n"
        "    def __deepcopy__(self, memo):\n        new = M()\n"
        "        new.xs = copy.deepcopy(self.xs, memo) + ['deep']\n        return new\n"
        "    def __copy__(self):\n        return 'shallow'\n"
        "class AttrDict(dict):\n    pass\nad = AttrDict(a=[1])\nad.tag = 't'\n"
        "class L(list):\n    pass\n"
        "@dataclasses.dataclass(frozen=True)\nclass F:\n    xs: list\n"
        "@dataclasses.dataclass(frozen=True, slots=True)\nclass FS:\n    n: int\n"
        "Pt = collections.namedtuple('Pt', 'x y')\n"
        "class Slotted:\n    __slots__ = ('a', 'b')\n"
        "sl = Slotted()\nsl.a = [1]\n"
        "r = [1]\nr.append(r)\nt = (1, 'a')\n"
        "e = KeyError('k')\nd2 = copy.deepcopy(ad)\nd2['a'].append(2)\n"
        "ll = copy.deepcopy(L([[1]]))\nrr = copy.deepcopy(r)\n"
        "[copy.copy(P(3)).x, copy.deepcopy(S()).cache, copy.deepcopy(M()).xs, copy.copy(M()), "
        "type(d2).__name__, d2.tag, ad['a'], type(ll).__name__, ll, "
        "copy.deepcopy(F([1])).xs, copy.deepcopy(FS(2)).n, copy.deepcopy(Pt(1, [2])), "
        "copy.deepcopy(sl).a, rr[1] is rr, copy.deepcopy(t) is t, copy.deepcopy(e).args, "
        "str(copy.deepcopy(datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc))), "
        "copy.deepcopy(collections.deque([1], maxlen=3)).maxlen, copy.copy(len) is len]"
    ),
    "deepcopy of lists nested as deep as CPython's copy goes": (
        "import copy\nx = []\nfor i in range(450):\n    x = [x, {'k': (i,)}]\n"
        "y = copy.deepcopy(x)\nn = 0\nwhile y:\n    y = y[0]\n    n += 1\nn"
    ),
    "functools.partial": (
        "import functools\ndef f(a, b, c=0):\n    return [a, b, c]\n"
        "p = functools.partial(f, 1, c=3)\nq = functools.partial(p, 2)\n"
        "a = [p(2), q(), q.func is f, q.args, q.keywords, repr(functools.partial(str.upper, 'a')),"
        " sorted(['bb', 'a'], key=functools.partial(len)), callable(p)]\n"
        "class P(functools.partial):\n    pass\n"
        "try:\n    functools.partial()\nexcept TypeError as e:\n    m = str(e)\n"
        "[a, repr(P(str.upper, 'a')), P(f, 1)(2), P(P(f), 1).func is f, P(P(f), 1).args, m]"
    ),
    "string, struct, binascii, unicodedata, array": (
        "import string, struct, binascii, unicodedata, array\n"
        "[string.Template('$x!').substitute(x=1), string.capwords('a b'), string.digits, "
        "list(struct.unpack('>HH', struct.pack('>HH', 1, 2))), binascii.hexlify(b'ab').decode(), "
        "unicodedata.name('a'), unicodedata.normalize('NFC', 'e\\u0301'), "
        "array.array('i', [1, 2]).tolist()]"
    ),
    "time's clocks and zoneinfo": (
        "import time, zoneinfo, datetime\n"
        "t = datetime.datetime(2024, 7, 1, tzinfo=zoneinfo.ZoneInfo('Europe/Paris'))\n"
        "[time.monotonic() > 0, time.perf_counter() > 0, str(t.utcoffset()), "
        "time.strftime('%Y', time.gmtime(0)), isinstance(t.tzinfo, zoneinfo.ZoneInfo), "
        "repr(t.tzinfo), t.tzinfo is zoneinfo.ZoneInfo('Europe/Paris')]"
    ),
    "contextlib": (
        "from contextlib import contextmanager, suppress, ExitStack\nlog = []\n"
        "@contextmanager\ndef cm(tag):\n    log.append('+' + tag)\n    yield tag\n"
        "    log.append('-' + tag)\n"
        "with ExitStack() as stack:\n    a = stack.enter_context(cm('a'))\n"
        "with suppress(KeyError):\n    {}['x']\n[a, log]"
    ),
    "context managers as decorators": (
        "import contextlib\nlog = []\nclass T(contextlib.ContextDecorator):\n"
        "    def __enter__(self):\n        log.append('in')\n        return self\n"
        "    def __exit__(self, *exc):\n        log.append('out')\n        return False\n"
        "@T()\ndef f(x):\n    return x + 1\n"
        "@contextlib.contextmanager\ndef cm():\n    log.append('a')\n    yield\n    log.append('b')\n"
        "@cm()\ndef g():\n    return 'g'\n[f(1), g(), f.__name__, log]"
    ),
    "abc": (
        "import abc\nclass A(abc.ABC):\n    @abc.abstractmethod\n    def f(self): ...\n"
        "class B(A):\n    def f(self):\n        return 1\ntry:\n    A()\nexcept TypeError as e:\n"
        "    m = str(e)\n[B().f(), m]"
    ),
    "json.dumps of subclasses and with default": (
        "import json\nclass L(list):\n    def __iter__(self):\n        return iter([9])\n"
        "class D(dict):\n    def items(self):\n        return [('k', L([1]))]\n"
        "[json.dumps(L([1, 2])), json.dumps(D(a=1)), json.dumps({'s': {1}}, default=sorted),"
        " json.dumps([1, (2, 3)], indent=1), json.dumps({'b': 1, 'a': [1.5, None]}, sort_keys=True)]"
    ),
    "functools.singledispatch": (
        "from functools import singledispatch\n@singledispatch\ndef kind(x):\n"
        "    return 'other'\n@kind.register\ndef _(x: int | float):\n    return 'number'\n"
        "@kind.register(list)\ndef _(x):\n    return 'list'\nclass L(list):\n    pass\n"
        "try:\n    kind()\nexcept TypeError as e:\n    m = str(e)\n"
        "[kind(1), kind(2.5), kind(True), kind(L()), kind({}), kind.dispatch(int).__name__,"
        " kind.__name__, m]"
    ),
    "functools.cached_property": (
        "from functools import cached_property\nruns = []\nclass A:\n    @cached_property\n"
        "    def v(self):\n        runs.append(1)\n        return [len(runs)]\n"
        "class S:\n    __slots__ = ()\n    @cached_property\n    def v(self):\n        return 1\n"
        "a = A()\ntry:\n    S().v\nexcept TypeError as e:\n    m = str(e)\n"
        "[a.v, a.v is a.v, runs, A.v.attrname, vars(a), m]"
    ),
    "an unknown module": "import no_such_module_here",
    # -- list ordering, which the worker's interpreter runs as Python (gh-120298) ----------
    "list ordering": (
        "a, b = [1, [2, 'x']], [1, [2, 'y']]\nclass L(list):\n    pass\n"
        "[a < b, a <= b, a > b, a >= b, [] < [0], [0] <= [0], L([2]) > [1], [1] >= L([1, 0]),"
        " sorted([[2], [1, 5], [1]]), min([[3], [2, 9]]), list.__lt__([1], [2])]"
    ),
    "asyncio's argument errors name asyncio's functions": (
        "import asyncio\nawait asyncio.sleep(0)\nr = []\n"
        "for f in (lambda: asyncio.sleep(), lambda: asyncio.gather(x=1),"
        " lambda: asyncio.wait_for(), lambda: asyncio.timeout(), lambda: asyncio.as_completed()):\n"
        "    try:\n        f()\n    except TypeError as e:\n        r.append(str(e))\n"
        "r + [repr(asyncio.timeout(1))]"
    ),
    "itertools.groupby": (
        "from itertools import groupby\ncalls = []\nclass K:\n    def __init__(self, v):\n"
        "        self.v = v\n    def __eq__(self, o):\n        calls.append(1)\n"
        "        return self.v == o.v\n"
        "r = [(k, list(g)) for k, g in groupby('aaabbcaa')]\n"
        "r3 = [(k, list(g)) for k, g in groupby(range(10), key=lambda x: x // 3)]\n"
        "g = groupby('aabb')\nk1, g1 = next(g)\nk2, g2 = next(g)\n"
        "r4 = [[x for x in g] for _, g in groupby([1, 1, 2], key=K)]\n"
        "[r, r3, list(g1), list(g2), r4, len(calls), list(groupby([]))]"
    ),
    "bytearray methods": (
        "b = bytearray(b'hello world')\nclass I:\n    def __index__(self):\n        return 2\n"
        "class B(bytearray):\n    pass\n"
        "[b.find(b'o'), b.find(ord('o'), I()), b.rfind(b'o', None, 5), b.index(b'w', 1),"
        " b.rindex(b'l'), b.count(b'l', I(), -1), b.startswith((b'x', b'he')),"
        " b.endswith(b'wor', 0, -2), ord('h') in b, b'wor' in b, 300 in [1],"
        " (bytearray(b'%d-%s') % (5, b'x')).decode(), (B(b'%r') % 'a').decode(),"
        " type(B(b'a') % ()).__name__, bytearray.find(b, b'l')]"
    ),
    "list slice assignment": (
        "class L(list):\n    pass\na = list(range(6))\na[::2] = 'abc'\nb = L(range(4))\n"
        "b[1:3] = (x * 10 for x in range(3))\nc = [1, 2, 3]\nc[::-1] = c\nd = [0] * 3\n"
        "list.__setitem__(d, slice(None), iter('xy'))\ndel a[::3]\n[a, b, c, d]"
    ),
    "list extended slice of the wrong size": "a = [1, 2, 3]\na[::2] = iter([9])",
    "list slice assigned a non-iterable": "a = [1, 2]\na[::2] = 5",
    "print's separator must be a string": "print('a', sep=5)",
    "bytearray method errors": "bytearray(b'a').find('a')",
    "bytearray contains out of range": "256 in bytearray(b'a')",
    "bytearray methods called on something else": "bytearray.find(b'a', b'a')",
    "list ordering of unorderable items": "[1, 'a'] < [1, 2]",
    "list ordering against another type": "[1] < (1,)",
    "list ordering called on something else": "list.__ge__(5, [])",
    "the vetted classes name their modules": (
        "import collections, functools, itertools, operator\n"
        "[repr(c) for c in (operator.attrgetter, operator.itemgetter, operator.methodcaller,\n"
        "    collections.deque, collections.defaultdict, itertools.groupby,\n"
        "    functools.cached_property)]"
    ),
    "a json.JSONEncoder subclass": (
        "import json, datetime\nclass E(json.JSONEncoder):\n    def __init__(self, **kw):\n"
        "        kw['sort_keys'] = True\n        super().__init__(**kw)\n"
        "    def default(self, o):\n        if isinstance(o, datetime.date):\n"
        "            return o.isoformat()\n        return super().default(o)\n"
        "out = [json.dumps({'b': datetime.date(2020, 1, 2), 'a': 1}, cls=E, indent=1)]\n"
        "e = E()\nout += [e.encode([1, 'x']), list(e.iterencode({'k': [1]})), repr(E.__mro__[1])]\n"
        "out.append(json.JSONEncoder(separators=(',', ':')).encode({'a': [1, 2]}))\n"
        "try:\n    json.dumps({1, 2}, cls=E)\nexcept TypeError as x:\n    out.append(str(x))\n"
        "out"
    ),
    "a module's docstring is its own": (
        "import json, asyncio\n[json.__doc__.split()[:3], asyncio.__doc__.split()[:2]]"
    ),
    "generic aliases substituted": (
        "import typing\nT = typing.TypeVar('T')\nP = typing.ParamSpec('P')\n"
        "class C:\n    pass\n"
        "[str(a) for a in (list[T][int], dict[str, T][C], (int | list[T])[str], list[list[T]][int],"
        " typing.Callable[P, T][[int], str], typing.List[T][int], typing.Optional[list[T]][int])]"
    ),
    "a generic alias that has nothing to substitute": (
        "class C:\n    def __repr__(self):\n        return 'C()'\nlist[C()][int]"
    ),
    "list ordering through super() and NotImplemented": (
        "class L(list):\n    def __lt__(self, other):\n        return super().__lt__(other)\n"
        "class R:\n    def __gt__(self, other):\n        return 'reflected'\n"
        "[L([1]) < L([2]), L([1]) < R(), list.__lt__([1], 3) is NotImplemented]"
    ),
}


def _cpython(code: str) -> tuple[str, Any]:
    """Run ``code`` as a module of plain CPython; ("value", json) or ("error", (type, text))."""
    tree = ast.parse(code)
    last = tree.body[-1]
    value = last.value if isinstance(last, ast.Expr) else ast.Constant(None)
    if isinstance(last, ast.Expr):
        tree.body.pop()
    tree.body.append(ast.Assign(targets=[ast.Name("__result__", ast.Store())], value=value))
    ast.fix_missing_locations(tree)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # dont_inherit: not this module's __future__ import
    namespace: dict[str, Any] = {"__name__": "__main__"}
    try:
        made = eval(compile(tree, "<case>", "exec", flags=flags, dont_inherit=True), namespace)
        if asyncio.iscoroutine(made):
            asyncio.run(made)
    except Exception as exc:
        return "error", (type(exc).__name__, str(exc))
    return "value", json.loads(json.dumps(namespace["__result__"]))


@pytest.mark.parametrize("name", sorted(CASES))
async def test_fabric_runs_it_as_cpython_does(fab: Fabric, name: str) -> None:
    """Same value, or same exception type and message."""
    code = CASES[name]
    kind, expected = await asyncio.to_thread(_cpython, code)
    result = await fab.exec(code)
    if kind == "value":
        assert result.ok, result.text
        assert result.value == expected
    else:
        assert not result.ok and result.error is not None, result.text
        if name in GUIDED:
            assert result.error.type == expected[0]
            assert result.error.message.startswith(expected[1]), result.error.message
        else:
            assert (result.error.type, result.error.message) == expected


_STAND_INS = (
    "str.format",
    "'x'.format",
    "getattr",
    "vars",
    "map",
    "sorted",
    "g.__anext__()",
    "g.asend(None)",
    "g.athrow(ValueError)",
    "g.aclose()",
    "g.asend",
    "collections.deque.index",
    "operator.attrgetter('a')",
    "asyncio.timeout(1)",
    "asyncio.sleep",
)
_WRONG_CALLS = (
    "type(object.__setattr__)",
    "type(asyncio)",
    "operator.attrgetter()",
    "operator.itemgetter.__call__()",
    "struct.Struct.__init__()",
    "collections.deque.index(collections.deque())",
    "collections.defaultdict.__missing__",
    "operator.attrgetter.__call__",
    "fractions.Fraction.__new__",
    "itertools.groupby.__next__",
    "struct.Struct.__init__",
    "zoneinfo.ZoneInfo.__repr__",
    "operator.attrgetter('a')._resolve",
)
SANDBOX_NAMES = (
    "import asyncio, collections, fractions, itertools, operator, struct, zoneinfo\n"
    "async def ag():\n    yield 1\n"
    "g = ag()\n"
    f"seen = [{', '.join(_STAND_INS)}]\n"
    "shown = [repr(x) + ' ' + str(getattr(x, '__module__', '')) for x in seen]\n"
    "for step in seen[6:10]:\n    step.close()\n"
    + "".join(
        f"try:\n    {call}\nexcept Exception as e:\n    shown.append(str(e))\n"
        for call in _WRONG_CALLS
    )
    + "shown"
)


async def test_nothing_a_snippet_sees_names_the_sandbox(fab: Fabric) -> None:
    """The reprs of what the sandbox stands in with (async generator steps, the vetted
    classes and their methods) and the messages of wrong calls and refusals name what the
    snippet wrote, never the sandbox's own modules or helpers."""
    result = await fab.exec(SANDBOX_NAMES)
    assert result.ok, result.text
    shown = dict(zip([*_STAND_INS, *_WRONG_CALLS], result.value, strict=True))
    for wrote, text in shown.items():
        assert not any(n in text for n in ("runtime", "_awaiting", "<locals>", "Deque")), (
            wrote,
            text,
        )
    assert shown["g.asend(None)"].startswith("<coroutine object async_generator_asend at ")
    assert shown["g.aclose()"].startswith("<coroutine object async_generator_athrow at ")
    assert shown["collections.deque.index"].startswith("<function deque.index at ")
    assert shown["type(asyncio)"].startswith("the result of this call is the class Facade ")


_ORDER = (
    "import operator\n"
    "def order(a, b):\n    out = []\n"
    "    for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq):\n"
    "        try:\n            out.append(op(a, b))\n"
    "        except TypeError as e:\n            out.append(str(e))\n    return out\n"
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pairs=st.lists(
        st.tuples(*[st.lists(st.recursive(st.integers(-2, 2), st.lists, max_leaves=4))] * 2),
        max_size=20,
    )
)
async def test_list_ordering_gives_cpythons_answers(fab: Fabric, pairs: list[Any]) -> None:
    """The worker's repaired list ordering agrees with CPython's own on nested lists, errors
    included."""
    namespace: dict[str, Any] = {}
    exec(_ORDER, namespace)
    expected = [namespace["order"](a, b) for a, b in pairs]
    result = await fab.exec(f"{_ORDER}[order(a, b) for a, b in {pairs!r}]")
    assert result.ok, result.text
    assert result.value == expected


GUIDED = {"an unknown module"}
"""Cases whose message is CPython's, followed by what the sandbox offers instead."""


MODEL_PROGRAM = """
import csv
import io
from dataclasses import dataclass, field
from typing import Optional


@dataclass
class Item:
    name: str
    price: float
    qty: int = 1
    tags: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        return self.price * self.qty


class Inventory:
    def __init__(self, items: Optional[list[Item]] = None) -> None:
        self._items: dict[str, Item] = {}
        for item in items or []:
            self.add(item)

    def add(self, item: Item) -> None:
        self._items[item.name] = item

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        return iter(sorted(self._items.values(), key=lambda i: i.name))

    def __contains__(self, name: str) -> bool:
        return name in self._items

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} items)"


class DiscountedInventory(Inventory):
    def __init__(self, items: list[Item], rate: float) -> None:
        super().__init__(items)
        self.rate = rate

    def value(self) -> float:
        return round(sum(i.total for i in self) * (1 - self.rate), 2)


def make_counter():
    count = 0

    def tick() -> int:
        nonlocal count
        count += 1
        return count

    return tick


def describe(item: Item) -> str:
    match item:
        case Item(name=n, qty=0):
            return f"{n}: sold out"
        case Item(name=n, price=p) if p > 10:
            return f"{n}: premium"
        case _:
            return f"{item.name}: ok"


text = "name,price,qty\\nwidget,2.5,4\\ngadget,12,1\\nthing,1,0\\n"
tick = make_counter()
items = []
for row in csv.DictReader(io.StringIO(text)):
    tick()
    items.append(Item(row["name"], float(row["price"]), int(row["qty"])))
inv = DiscountedInventory(items, rate=0.1)
[repr(inv), "gadget" in inv, [describe(i) for i in inv], inv.value(), tick()]
"""


async def test_an_ordinary_model_written_program_runs_unchanged(fab: Fabric) -> None:
    """Classes with dunders and super(), a dataclass, match, a nonlocal counter, csv over a
    string and typing annotations, as a model writes them: Fabric gives CPython's answer."""
    kind, expected = await asyncio.to_thread(_cpython, MODEL_PROGRAM)
    assert kind == "value", expected
    result = await fab.exec(MODEL_PROGRAM)
    assert result.ok, result.text
    assert result.value == expected


_LEAVES = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=2), inner, max_size=3)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers(0, 6), max_size=3)
    )


_NESTED = st.recursive(_LEAVES, _containers, max_leaves=10)
_COPIES = (
    "import copy\nx = {literal}\npair = [x, x, (x,)]\nd = copy.deepcopy(pair)\n"
    "s = copy.copy(pair)\n"
    "[repr(d) == repr(pair), d[0] is d[1], d[2][0] is d[0], d[0] is x, s[0] is x, s is pair, "
    "d[2] is pair[2], repr(d)]"
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_NESTED)
async def test_copy_and_deepcopy_give_cpythons_answers(fab: Fabric, data: Any) -> None:
    """The sandbox's copy, which carries out every step itself, agrees with CPython's on
    nested plain data: equal values, the same sharing (a value met twice is copied once, an
    immutable one is its own copy), the same result of a shallow copy."""
    code = _COPIES.format(literal=repr(data))
    kind, expected = await asyncio.to_thread(_cpython, code)
    assert kind == "value", expected
    result = await fab.exec(code)
    assert result.ok, result.text
    assert result.value == expected
