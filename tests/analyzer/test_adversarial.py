"""Generated adversarial snippets: a source wrapped in random chains of aliasing, containers,
destructuring, helpers, callbacks, gather, branches, try/finally, loops and encoders must stay
unbounded (never a false "bounded"); a bounding wrapper at the end must make it bounded."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer import analyze

SOURCES = [
    'await tools.read(path="a")',
    'await mcp.github.search(q="x")',
    "await state.get(key='k')",
    'await agents.run(task="t")',
]

# Each step turns the value in `{v}` into a new name `{w}`; `{n}` makes helper names unique.
STEPS = [
    "{w} = {v}",
    "{w} = [{v}][0]",
    '{w} = {{"k": {v}}}["k"]',
    "{w}, _p{n} = {v}, 0",
    "_p{n}, {w} = 0, {v}",
    "def ident{n}(x):\n    return x\n{w} = ident{n}({v})",
    "def wrap{n}(x):\n    y = x\n    return y\n{w} = wrap{n}(x={v})",
    "async def aident{n}(x):\n    return x\n{w} = await aident{n}({v})",
    "async def aident{n}(x):\n    return x\n{w}, = await asyncio.gather(aident{n}({v}))",
    "{w} = list(map(lambda x: x, [{v}]))",
    "{w} = sorted([{v}], key=lambda x: len(x))",
    "if len({v}) > 3:\n    {w} = {v}\nelse:\n    {w} = {v}",
    "{w} = {v} if {v} else {v}",
    "{w} = {v} or {v}",
    "try:\n    {w} = {v}\nfinally:\n    _p{n} = 1",
    "try:\n    {w} = {v}\nexcept ToolError:\n    {w} = {v}",
    "{w} = []\nfor _x{n} in [{v}]:\n    {w}.append(_x{n})",
    "{w} = []\nfor _x{n} in {v}:\n    {w}.append(_x{n})",
    "{w} = [_x for _x in {v}]",
    "{w} = {{_i: _x for _i, _x in enumerate({v})}}",
    "{w} = json.dumps({v})",
    "{w} = str({v})",
    '{w} = f"<{{{v}}}>"',
    '{w} = "prefix " + str({v})',
    "{w} = {v}.strip()",
    "{w} = {v}.splitlines()",
    "{w} = tuple({v})",
    "{w} = {{'a': {v}, 'b': 1}}",
    "{w} = ({v}, len({v}))",
    "with thing() as _c{n}:\n    {w} = {v}",
    "_acc{n} = ''\nfor _l in {v}:\n    _acc{n} += _l\n{w} = _acc{n}",
    "def outer{n}():\n    return {v}\n{w} = outer{n}()",
]

BOUNDING = [
    "return {v}[:10]",
    "return len({v})",
    "return {v}[-5:]",
    "return await ctx.summarize(text={v}, max_tokens=200)",
    "return await ctx.offload({v})",
    'return {{"n": len({v}), "ok": True}}',
    "return sum(1 for _ in {v})",
    "return bool({v})",
]


def build(source: str, steps: list[int]) -> tuple[str, str]:
    lines = [f"v0 = {source}"]
    current = "v0"
    for n, index in enumerate(steps, 1):
        target = f"v{n}"
        lines.append(STEPS[index].format(v=current, w=target, n=n))
        current = target
    return "\n".join(lines), current


chains = st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=8)


@settings(max_examples=400, deadline=None)
@given(source=st.sampled_from(SOURCES), steps=chains)
def test_an_unbounded_source_stays_unbounded(source: str, steps: list[int]) -> None:
    body, last = build(source, steps)
    got = analyze(f"{body}\nreturn {last}")
    assert got.classification.value != "NONE", body
    assert not got.bounded, f"false bounded: {got.explain()}\n{body}"
    assert got.verdict == "WARN"


@settings(max_examples=300, deadline=None)
@given(source=st.sampled_from(SOURCES), steps=chains, ending=st.sampled_from(BOUNDING))
def test_a_bounding_wrapper_bounds_it(source: str, steps: list[int], ending: str) -> None:
    body, last = build(source, steps)
    got = analyze(f"{body}\n{ending.format(v=last)}")
    assert got.bounded and got.verdict == "PASS", f"{got.explain()}\n{body}\n{ending}"
