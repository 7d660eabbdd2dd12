"""Loops are analysed to their fixpoint: a value carried from one iteration to the next is
followed however long the chain, and a loop that does not settle fails closed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer import MAX_LOOP_ROUNDS, Options, analyze

_READ = 'await tools.read(path="x.txt")'


def test_a_chain_that_needs_three_iterations_is_followed() -> None:
    """The case two passes missed: ``c`` holds the file from the third iteration on."""
    code = f"a = b = c = None\nfor i in range(3):\n    c = b\n    b = a\n    a = {_READ}\nreturn c"
    got = analyze(code)
    assert (got.classification.value, got.bounded) == ("RAW", False)
    assert got.verdict == "WARN"
    assert analyze(code, options=Options(strict=True)).verdict == "BLOCK"


def test_a_while_loop_carries_values_the_same_way() -> None:
    code = f"a = b = None\nn = 0\nwhile n < 10:\n    b = a\n    a = {_READ}\n    n += 1\nreturn b"
    assert analyze(code).classification.value == "RAW"


def test_a_bound_that_grows_each_round_is_unbounded() -> None:
    """Adding a slice each round may add it any number of times: the rounds are not counted,
    so the value is unbounded (fail closed), and the loop settles."""
    code = f's = ""\nfor x in range(5):\n    r = {_READ}\n    s = s + r[:10]\nreturn s'
    got = analyze(code)
    assert (got.classification.value, got.bounded) == ("SELECTED", False)
    assert "grows each round" in got.explain()


def test_an_unbounded_loop_that_grows_a_value_is_unbounded() -> None:
    code = f"s = []\nwhile True:\n    r = {_READ}\n    s.append(r[:10])\nreturn s"
    assert analyze(code).bounded is False


def _reference(order: list[int], steps: list[str]) -> tuple[str, bool]:
    """What ``v0`` can hold after any number of iterations, by running the loop body on
    abstract values: each variable is NONE, RAW (unbounded) or SELECTED (bounded)."""
    n = len(steps)
    state = ["NONE"] * (n + 1)
    seen = [state[0]]
    for _ in range(n + 3):
        for link in order:
            if link == n:
                state[n] = "RAW"
            else:
                held = state[link + 1]
                state[link] = "SELECTED" if steps[link] == "slice" and held != "NONE" else held
        seen.append(state[0])
    rank = {"NONE": 0, "SELECTED": 1, "RAW": 2}
    worst = max(seen, key=rank.__getitem__)
    return worst, "RAW" not in seen


@st.composite
def chains(draw: st.DrawFn) -> tuple[str, tuple[str, bool]]:
    """A loop whose body copies v1 into v0, v2 into v1... and reads the file into the last,
    in any order, some links slicing what they copy."""
    n = draw(st.integers(1, 8))
    steps = draw(st.lists(st.sampled_from(["copy", "slice"]), min_size=n, max_size=n))
    order = draw(st.permutations(list(range(n + 1))))
    lines = [" = ".join(f"v{i}" for i in range(n + 1)) + " = None", "for i in range(20):"]
    for link in order:
        if link == n:
            lines.append(f"    v{n} = {_READ}")
        else:
            taken = f"v{link + 1}[:10]" if steps[link] == "slice" else f"v{link + 1}"
            lines.append(f"    v{link} = {taken}")
    lines.append("return v0")
    return "\n".join(lines), _reference(order, steps)


@settings(max_examples=300, deadline=None)
@given(chains())
def test_loop_carried_chains_match_a_reference_interpretation(
    chain: tuple[str, tuple[str, bool]],
) -> None:
    """Zero unbounded flows judged bounded, and no bounded one judged otherwise."""
    code, (expected, bounded) = chain
    got = analyze(code)
    assert (got.classification.value, got.bounded) == (expected, bounded), code


RECURSIONS = {
    "a recursive call passes provider data to itself": (
        "async def f(x, done):\n"
        "    if done:\n"
        "        return x\n"
        f"    return await f({_READ}, True)\n"
        'return await f("a", False)',
        ("RAW", False),
    ),
    "the base case reads": (
        "async def f(n):\n"
        "    if n == 0:\n"
        f"        return {_READ}\n"
        "    return await f(n - 1)\n"
        "return await f(3)",
        ("RAW", False),
    ),
    "the base case slices": (
        "async def f(t, n):\n"
        "    if n == 0:\n"
        "        return t[:10]\n"
        "    return await f(t, n - 1)\n"
        f"r = {_READ}\n"
        "return await f(r, 3)",
        ("SELECTED", True),
    ),
    "mutual recursion": (
        "async def even(n):\n"
        "    return True if n == 0 else await odd(n - 1)\n"
        "async def odd(n):\n"
        f"    return {_READ} if n == 0 else await even(n - 1)\n"
        "return await even(4)",
        ("RAW", False),
    ),
    "a recursion on numbers only": (
        "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\nreturn fact(5)",
        ("NONE", True),
    ),
}


def test_recursive_helpers_are_analysed_to_their_fixpoint() -> None:
    """A recursive call answers what the function returns so far and widens the parameters
    with its own arguments, until both settle: what a call passes to itself is followed."""
    for what, (code, expected) in RECURSIONS.items():
        got = analyze(code)
        assert (got.classification.value, got.bounded) == expected, what


GROWTH = {
    "a list grown through recursion": (
        "async def f(n, acc):\n"
        "    if n == 0:\n"
        "        return acc\n"
        "    return await f(n - 1, acc + [raw[:10]])\n"
        "return await f(len(raw), [])"
    ),
    "a result grown at each level": (
        "async def f(n):\n"
        "    if n <= 0:\n"
        "        return raw[:10]\n"
        "    return raw[:10] + await f(n - 1)\n"
        "return await f(len(raw))"
    ),
    "a global grown by a recursive helper": (
        'acc = ""\n'
        "def f(n):\n"
        "    global acc\n"
        "    acc = acc + raw[:10]\n"
        "    if n:\n"
        "        f(n - 1)\n"
        "f(len(raw))\n"
        "return acc"
    ),
    "a list concatenated in an unbounded loop": (
        "acc = []\nfor line in raw.splitlines():\n    acc = acc + [line[:10]]\nreturn acc"
    ),
    "a set grown by union in a while loop": (
        "s = set()\nwhile len(s) < len(raw):\n    s = s | {raw[:5]}\nreturn s"
    ),
    "an f-string grown in an unbounded loop": (
        's = ""\nfor line in raw.splitlines():\n    s = f"{s}{line[:10]}"\nreturn s'
    ),
}


def test_what_grows_any_number_of_times_is_unbounded() -> None:
    for what, code in GROWTH.items():
        got = analyze(f"raw = {_READ}\n" + code)
        assert got.bounded is False, what


def test_a_loop_that_does_not_settle_fails_closed_with_its_sources() -> None:
    chain = "\n".join(f"    a{k} = a{k + 1}" for k in range(MAX_LOOP_ROUNDS + 1))
    code = (
        " = ".join(f"a{k}" for k in range(MAX_LOOP_ROUNDS + 2))
        + " = None\n"
        + f"for i in range(50):\n{chain}\n    a{MAX_LOOP_ROUNDS + 1} = {_READ}\n"
        + "return a0"
    )
    got = analyze(code)
    assert (got.classification.value, got.bounded) == ("UNKNOWN", False)
    assert [s.name for s in got.sources] == ["read"]


def test_a_call_of_one_of_several_functions_fails_closed() -> None:
    code = (
        f"async def a():\n    return {_READ}\n"
        'async def b():\n    return "ok"\n'
        "f = b\nfor i in range(2):\n    f = a\nreturn await f()"
    )
    assert analyze(code).classification.value == "UNKNOWN"


def test_shared_parts_cost_their_size() -> None:
    """``b = (b, b)`` forty times is a tree of 2**40 leaves sharing its parts; the analysis
    looks at each part once (this would not finish otherwise)."""
    body = "    b = (raw, raw)\n" + "    b = (b, b)\n" * 40
    got = analyze(f"raw = {_READ}\nfor i in range(2):\n{body}return b")
    assert got.classification.value == "RAW"
