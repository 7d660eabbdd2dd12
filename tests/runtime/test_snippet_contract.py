"""The snippet contract of ARCHITECTURE.md, one behaviour per test."""

from __future__ import annotations

import pytest

from fabric import Fabric


async def run_ok(fab: Fabric, code: str) -> object:
    result = await fab.exec(code)
    assert result.ok, result.text
    return result.value


async def test_explicit_return_is_the_value(fab: Fabric) -> None:
    """`return` hands back its value."""
    assert await run_ok(fab, "return 1 + 1") == 2


async def test_last_expression_is_the_value(fab: Fabric) -> None:
    """Without a return, the last expression statement is the value."""
    assert await run_ok(fab, "x = 20\nx + 1") == 21


async def test_no_return_and_no_expression_is_none(fab: Fabric) -> None:
    """A snippet ending in an assignment returns None."""
    assert await run_ok(fab, "x = 1") is None


async def test_return_in_a_branch_else_last_expression(fab: Fabric) -> None:
    """An early return wins; otherwise the trailing expression counts."""
    assert await run_ok(fab, "if False:\n    return 1\n'fallthrough'") == "fallthrough"


async def test_top_level_await_of_a_provider(fab: Fabric) -> None:
    """Top-level await works on provider calls."""
    assert (
        await run_ok(fab, 'text = await tools.read(path="notes.txt")\ntext.splitlines()[1]')
        == "beta"
    )


async def test_asyncio_gather_runs_calls(fab: Fabric) -> None:
    """asyncio.gather returns results in order."""
    code = (
        "import asyncio\n"
        'a, b = await asyncio.gather(tools.read(path="notes.txt"), tools.ls(path="src"))\n'
        "return [len(a), [e['name'] for e in b]]"
    )
    assert await run_ok(fab, code) == [17, ["src/app.py"]]


async def test_async_def_for_with_and_comprehension(fab: Fabric) -> None:
    """Local async functions, async for, async with and async comprehensions all run."""
    code = """
import asyncio
async def gen(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield i, i * i
squares = []
async for i, sq in gen(3):
    squares.append(sq)
doubled = [x async for x, _ in gen(3)]
async with asyncio.timeout(5):
    await asyncio.sleep(0)
return squares, doubled
"""
    assert await run_ok(fab, code) == [[0, 1, 4], [0, 1, 2]]


async def test_unawaited_coroutine_says_add_await(fab: Fabric) -> None:
    """Returning a coroutine is an error that tells the model to add await."""
    result = await fab.exec('tools.read(path="notes.txt")')
    assert not result.ok
    assert "add await" in result.text


async def test_coroutine_inside_a_container_says_add_await(fab: Fabric) -> None:
    """A coroutine nested in the returned data is caught too."""
    result = await fab.exec('return [tools.read(path="notes.txt")]')
    assert not result.ok
    assert "add await" in result.text


async def test_print_is_captured_beside_the_value(fab: Fabric) -> None:
    """print() output is returned in logs and shown after the value."""
    result = await fab.exec('print("hello", 42)\nreturn "done"')
    assert result.ok
    assert result.logs == "hello 42\n"
    assert result.text.startswith("done")
    assert "hello 42" in result.text


async def test_print_is_capped(workspace: object) -> None:
    """Output beyond output_bytes is counted and dropped, and the text says so."""
    from fabric import Limits

    async with Fabric(workspace=str(workspace), limits=Limits(output_bytes=100)) as fab:
        result = await fab.exec("for i in range(1000):\n    print('x' * 10)")
    assert result.ok
    assert len(result.logs) == 100
    assert result.logs_dropped == 1000 * 11 - 100
    assert "truncated" in result.text


async def test_values_are_plain_data(fab: Fabric) -> None:
    """Tuples become lists, bytes survive, dict keys stay strings."""
    value = await run_ok(fab, "return {'t': (1, 2), 'b': b'\\x00\\xff', 'n': None, 'f': 1.5}")
    assert value == {"t": [1, 2], "b": b"\x00\xff", "n": None, "f": 1.5}


async def test_non_plain_return_value_is_explained(fab: Fabric) -> None:
    """An object of a snippet class cannot leave the sandbox; the error says what to return."""
    result = await fab.exec("class Point:\n    pass\nreturn Point()")
    assert not result.ok
    assert "plain data" in result.text


@pytest.mark.parametrize(
    "module,expr,expected",
    [
        ("json", "json.loads('[1, 2]')", [1, 2]),
        ("re", "re.findall(r'\\d+', 'a1b22')", ["1", "22"]),
        ("math", "math.floor(2.7)", 2),
        ("statistics", "statistics.mean([1, 2, 3])", 2),
        ("itertools", "list(itertools.islice(itertools.count(), 3))", [0, 1, 2]),
        ("functools", "functools.reduce(lambda a, b: a + b, [1, 2, 3])", 6),
        ("collections", "collections.Counter('aab').most_common(1)", [["a", 2]]),
        ("heapq", "heapq.nlargest(2, [5, 1, 9])", [9, 5]),
        ("bisect", "bisect.bisect([1, 3, 5], 4)", 2),
        ("datetime", "datetime.date(2024, 1, 2).isoformat()", "2024-01-02"),
        ("decimal", "str(decimal.Decimal('1.10') + decimal.Decimal('2.2'))", "3.30"),
        ("fractions", "str(fractions.Fraction(1, 3) * 3)", "1"),
        ("random", "random.Random(4).randint(1, 1)", 1),
        ("textwrap", "textwrap.shorten('hello world foo', width=11)", "hello [...]"),
        ("difflib", "difflib.get_close_matches('raed', ['read', 'ls'])", ["read"]),
        ("base64", "base64.b64encode(b'hi').decode()", "aGk="),
        ("hashlib", "hashlib.sha256(b'').hexdigest()[:8]", "e3b0c442"),
        ("uuid", "len(str(uuid.uuid4()))", 36),
    ],
)
async def test_allowed_modules_work(fab: Fabric, module: str, expr: str, expected: object) -> None:
    """Every module of the allowlist imports and its vetted functions work."""
    assert await run_ok(fab, f"import {module}\nreturn {expr}") == expected


@pytest.mark.parametrize(
    "module",
    [
        "os",
        "sys",
        "subprocess",
        "inspect",
        "pickle",
        "importlib",
        "shutil",
        "socket",
        "ctypes",
        "json.decoder",
    ],
)
async def test_other_imports_are_refused_with_the_allowed_set(fab: Fabric, module: str) -> None:
    """Anything outside the allowlist is an ImportError that names what is allowed."""
    result = await fab.exec(f"import {module}")
    assert not result.ok
    assert result.error is not None and result.error.type == "ImportError"
    assert "json" in result.error.message


async def test_builtins_module_name_is_reserved(fab: Fabric) -> None:
    """`import builtins` is refused before anything runs."""
    result = await fab.exec("import builtins")
    assert result.error is not None and result.error.kind == "policy"


async def test_facade_refuses_unvetted_attributes(fab: Fabric) -> None:
    """uuid.os, json.codecs and friends are not reachable through a facade."""
    for expr in ("uuid.os", "json.codecs", "datetime.sys", "random._inst", "re.sre_compile"):
        module = expr.split(".")[0]
        result = await fab.exec(f"import {module}\nreturn {expr}")
        assert not result.ok, expr


async def test_from_import_of_vetted_names(fab: Fabric) -> None:
    """`from json import loads` works for vetted names only."""
    assert await run_ok(fab, "from json import loads\nreturn loads('1')") == 1
    result = await fab.exec("from json import decoder")
    assert not result.ok


async def test_top_level_names_are_globals_for_local_functions(fab: Fabric) -> None:
    """Functions defined in the snippet see and update its top-level names."""
    code = "count = 0\ndef bump():\n    global count\n    count += 1\nbump()\nbump()\nreturn count"
    assert await run_ok(fab, code) == 2


async def test_global_of_a_name_bound_only_in_a_comprehension(fab: Fabric) -> None:
    """A comprehension's loop variable is not a top-level name; `global` of it stays global."""
    code = (
        "squares = [r * r for r in range(3)]\n"
        "def setr():\n    global r\n    r = 7\n"
        "setr()\nreturn [squares, r]"
    )
    assert await run_ok(fab, code) == [[0, 1, 4], 7]


async def test_walrus_in_a_comprehension_binds_at_top_level(fab: Fabric) -> None:
    """`:=` inside a comprehension binds the snippet's own name, visible to its functions."""
    code = (
        "kept = [y for x in range(5) if (y := x * 2) > 4]\n"
        "def last():\n    return y\n"
        "return [kept, last()]"
    )
    assert await run_ok(fab, code) == [[6, 8], 8]


async def test_classes_defined_by_the_snippet_are_writable(fab: Fabric) -> None:
    """Instances of snippet classes accept attribute writes."""
    code = (
        "class Acc:\n    def __init__(self):\n        self.items = []\n"
        "a = Acc()\na.items.append(1)\na.total = 5\nreturn [a.items, a.total]"
    )
    assert await run_ok(fab, code) == [[1], 5]


async def test_augmented_assignment_on_items(fab: Fabric) -> None:
    """Counting into a dict with += works."""
    assert await run_ok(fab, "d = {'a': 1}\nd['a'] += 2\nreturn d") == {"a": 3}


async def test_safe_builtins_are_present(fab: Fabric) -> None:
    """sorted, tuple, zip, enumerate, map, filter, min, max, sum, any, all... are available."""
    code = (
        "xs = [3, 1, 2]\n"
        "return [sorted(xs), list(tuple(xs)), list(zip(xs, xs)), list(enumerate(xs)),\n"
        "        list(map(str, xs)), list(filter(None, [0, 1])), min(xs), max(xs), sum(xs),\n"
        "        any(xs), all(xs), isinstance(xs, list), len(xs), list(range(2)),\n"
        "        list(reversed(xs)), dict(a=1), sorted(set(xs)), str(1), int('2'), float('1.5'),\n"
        "        bool(0), round(2.567, 1), abs(-1)]"
    )
    value = await run_ok(fab, code)
    assert value == [
        [1, 2, 3],
        [3, 1, 2],
        [[3, 3], [1, 1], [2, 2]],
        [[0, 3], [1, 1], [2, 2]],
        ["3", "1", "2"],
        [1],
        1,
        3,
        6,
        True,
        True,
        True,
        3,
        [0, 1],
        [2, 1, 3],
        {"a": 1},
        [1, 2, 3],
        "1",
        2,
        1.5,
        False,
        2.6,
        1,
    ]


@pytest.mark.parametrize(
    "name",
    [
        "type",
        "getattr",
        "setattr",
        "open",
        "eval",
        "exec",
        "compile",
        "globals",
        "locals",
        "vars",
        "dir",
    ],
)
async def test_dangerous_builtins_are_absent(fab: Fabric, name: str) -> None:
    """type, getattr, setattr, open, eval, exec, compile, globals, locals, vars do not exist."""
    result = await fab.exec(f"return {name}")
    assert not result.ok


async def test_str_format_is_safe(fab: Fabric) -> None:
    """str.format works for ordinary fields and refuses attribute walks to private names."""
    assert await run_ok(fab, "return '{} {x}'.format(1, x=2)") == "1 2"
    assert await run_ok(fab, "return '{0[a]}'.format({'a': 3})") == "3"
    result = await fab.exec("return '{0.__class__}'.format(1)")
    assert not result.ok
    assert result.error is not None and result.error.kind == "policy"


async def test_tool_error_is_catchable(fab: Fabric) -> None:
    """A failing provider call raises ToolError inside the snippet, with code and tool."""
    code = (
        "try:\n    await tools.read(path='missing.txt')\n"
        "except ToolError as e:\n    return [e.code, e.tool]"
    )
    assert await run_ok(fab, code) == ["not_found", "tools.read"]


async def test_positional_provider_arguments_fill_parameters_in_order(fab: Fabric) -> None:
    """`tools.read("notes.txt", 1)` is `tools.read(path="notes.txt", offset=1)`."""
    assert await run_ok(fab, "return await tools.read('notes.txt', 1)") == "beta\ngamma\n"


async def test_too_many_or_doubled_positional_arguments_are_explained(fab: Fabric) -> None:
    code = (
        "errors = []\n"
        "for call in (lambda: tools.read('a', 0, 1, 'utf-8', 5), lambda: tools.read('a', path='b')):\n"
        "    try:\n        await call()\n"
        "    except ToolError as e:\n        errors.append(str(e))\n"
        "return errors"
    )
    too_many, doubled = await run_ok(fab, code)  # type: ignore[misc]
    assert "takes at most 4 positional arguments (5 given)" in too_many
    assert "got path both by position and by name" in doubled


async def test_a_snippet_compiled_once_runs_the_same_every_time(fab: Fabric) -> None:
    """Repeated snippets reuse their compiled form: same results, fresh state each time."""
    code = "counter = [0]\ncounter[0] += 1\nreturn counter[0]"
    assert [await run_ok(fab, code) for _ in range(3)] == [1, 1, 1]


async def test_errors_of_uncompilable_snippets_still_name_every_problem(fab: Fabric) -> None:
    result = await fab.exec("x = _getattr_\ny = __builtins__\n")
    assert not result.ok and result.error is not None
    assert len(result.error.problems) == 2
