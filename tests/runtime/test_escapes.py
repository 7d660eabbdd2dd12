"""Escape payloads from public advisories and jail-break write-ups.

Each payload is valid Python that, if it escaped, would reach ``os``, ``open``, the real
builtins or the host's files, and finally create a canary file. Every one must fail (as a
policy denial or a runtime error inside the sandbox) and the canary must never appear.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric import Fabric

ESCAPE = 'open("{canary}", "w").write("escaped")'

PAYLOADS: dict[str, str] = {
    # __subclasses__ walks
    "subclasses-from-tuple": "c = ().__class__.__bases__[0].__subclasses__()\n" + ESCAPE,
    "subclasses-from-list-mro": "c = [].__class__.__mro__[-1].__subclasses__()",
    "object-subclasses": "object.__subclasses__()",
    "mro-method": "int.mro()[-1]",
    "str-mro": "str.mro()",
    # __globals__ / __builtins__ recovery
    "lambda-globals": "(lambda: 0).__globals__['__builtins__']['open']",
    "function-globals": "def f():\n    pass\nf.__globals__",
    "builtins-name": "__builtins__['open']",
    "import-dunder": "__import__('os').system('touch {canary}')",
    "print-self": "print.__self__",
    "toolerror-init-globals": "ToolError.__init__.__globals__",
    "class-body-builtins": "class A:\n    x = __builtins__\nA.x",
    "namespace-internals": "tools._channel",
    "provider-call-self": "tools.read.__call__.__self__",
    # generator, coroutine and traceback frames (RestrictedPython CVE-2023-37271 and kin)
    "generator-frame-walk": "g = (x for x in [1])\ng.gi_frame.f_back.f_back.f_globals",
    "generator-code": "g = (x for x in [1])\ng.gi_code.co_consts",
    "generator-function-frame": "def gen():\n    yield 1\ngen().gi_frame.f_globals",
    "coroutine-frame": "async def c():\n    pass\nco = c()\nco.cr_frame.f_globals",
    "coroutine-await": "co = tools.read(path='notes.txt')\nco.cr_await",
    "async-generator-frame": "async def ag():\n    yield 1\nag().ag_frame.f_globals",
    "traceback-frame": "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame.f_globals",
    "traceback-next": "try:\n    1 / 0\nexcept Exception as e:\n    tb = e.__traceback__\ntb.tb_next",
    "coroutine-send-future-loop": "c = tools.read(path='notes.txt')\nf = c.send(None)\nf.get_loop()",
    "asyncio-sleep-send": "import asyncio\nc = asyncio.sleep(0)\nc.send(None)",
    "asend-drive": (
        "async def g():\n    yield await tools.read(path='notes.txt')\n"
        "a = g().asend(None)\nf = a.send(None)\nf.get_loop()"
    ),
    "gather-loop": "import asyncio\nasyncio.gather().get_loop()",
    # str.format / format_map attribute chains
    "format-class": "'{0.__class__.__base__.__subclasses__}'.format(0)",
    "format-map": "'{x.__class__}'.format_map({'x': 1})",
    "str-format-unbound": "str.format('{0.__class__}', 1)",
    "format-globals": "def f():\n    pass\n'{0.__globals__}'.format(f)",
    "format-gi-frame": "'{0.gi_frame}'.format((x for x in []))",
    "fstring-class": "f'{().__class__}'",
    # modules and helpers that resolve attribute paths
    "string-formatter": "import string\nstring.Formatter().get_field('0.__class__', [1], {})",
    "operator-attrgetter": "import operator\noperator.attrgetter('__class__')(1)",
    "typing-hints": "import typing\ntyping.get_type_hints",
    "import-os": "import os\nos.system('touch {canary}')",
    "import-subprocess": "import subprocess\nsubprocess.run(['touch', '{canary}'])",
    "uuid-os": "import uuid\nuuid.os.system('touch {canary}')",
    "json-codecs": "import json\njson.codecs.open('{canary}', 'w')",
    "datetime-sys": "import datetime\ndatetime.sys.modules['os']",
    "asyncio-events-os": "import asyncio\nasyncio.events.os",
    "random-private": "import random\nrandom._os",
    "re-module-attr": "import re\nre.sre_compile",
    "namedtuple-dunder-field": "import collections\ncollections.namedtuple('A', ['__class__'])",
    # dangerous builtins
    "getattr": "getattr(1, '__class__')",
    "type-subclasses": "type.__subclasses__(object)",
    "eval": "eval('1')",
    "exec": "exec('import os')",
    "compile": "compile('1', 'x', 'eval')",
    "globals": "globals()['__builtins__']",
    "vars": "vars()",
    "open": ESCAPE,
    "breakpoint": "breakpoint()",
    # decorators, descriptors, metaclasses, special methods
    "decorator-code": "def deco(f):\n    return f.__code__\n@deco\ndef g():\n    pass\ng",
    "metaclass-keyword": "class A(metaclass=print):\n    pass",
    "subclass-type": "class M(type):\n    pass\nM('X', (), {{}})",
    "descriptor-get": "class D:\n    def __get__(self, obj, owner):\n        return owner\n",
    "del-in-host": "class X:\n    def __del__(self):\n        " + ESCAPE + "\nreturn X()",
    "repr-in-host": "class X:\n    def __repr__(self):\n        " + ESCAPE + "\nreturn X()",
    "init-subclass": "class X:\n    def __init_subclass__(cls):\n        pass",
    "except-star": "try:\n    pass\nexcept* Exception:\n    pass",
    "match-statement": "match 1:\n    case 1:\n        pass",
    # shared-namespace and host tampering
    "overwrite-provider": "tools.read = print",
    "overwrite-facade": "import json\njson.loads = print",
    "overwrite-builtin-type": "list.append = print",
    "overwrite-namespace-internals": "tools._names = []",
    "print-to-file": "print('x', file='{canary}')",
}


def test_there_are_at_least_forty_payloads() -> None:
    """The suite covers the advisories' families with 40+ payloads."""
    assert len(PAYLOADS) >= 40


@pytest.mark.parametrize("name", sorted(PAYLOADS))
async def test_payload_does_not_escape(fab: Fabric, tmp_path: Path, name: str) -> None:
    """The payload fails inside the sandbox and leaves no trace on the host."""
    canary = tmp_path / "canary"
    code = PAYLOADS[name].replace("{canary}", str(canary)).replace("{{}}", "{}")
    result = await fab.exec(code)
    assert not result.ok, f"{name} ran: {result.text}"
    assert result.error is not None
    assert result.error.kind in {"policy", "runtime", "tool"}, result.text
    assert not canary.exists()


async def test_tampering_does_not_leak_into_the_next_execution(fab: Fabric) -> None:
    """Whatever a snippet rebinds stays in its own, discarded worker."""
    await fab.exec("tools = None\njson = None")
    result = await fab.exec(
        'import json\nreturn json.dumps(len(await tools.read(path="notes.txt")))'
    )
    assert result.ok and result.value == "17"


async def test_worker_cannot_write_files_even_through_allowed_code(
    fab: Fabric, tmp_path: Path
) -> None:
    """The worker has no file access at all: reading the workspace goes through tools only."""
    result = await fab.exec("return await tools.read(path='/etc/passwd')")
    assert not result.ok
    assert result.error is not None and result.error.code == "outside_workspace"
