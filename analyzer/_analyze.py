"""``analyze``: the diagnosis of a snippet, a pure function of code, effects and options."""

from __future__ import annotations

from functools import lru_cache

import libcst as cst

from analyzer._effects import EffectsTable
from analyzer._flow import MAX_STEPS, Flow, OutOfSteps
from analyzer._models import Analysis, Bound, Diagnostic, Estimate, Options, SourceRef, Verdict
from analyzer._positions import Positions
from analyzer._shape import Unreadable, unreadable
from analyzer._values import Cls, V

FIXES = (
    "slice it: `[:200]`; summarize it: `await ctx.summarize(text=..., max_tokens=300)`; "
    "offload it: `await ctx.offload(data)` and return the handle; or return a count or a field"
)


def analyze(
    code: str, effects: EffectsTable | None = None, options: Options | None = None
) -> Analysis:
    """Classify what ``code`` returns and whether its size is bounded, without running it."""
    return _cached(code, effects or EffectsTable.default(), options or Options())


MAX_ANALYSED_CHARS = 64 * 1024
"""Snippets longer than this are not analysed (the analysis costs about 15 µs a character):
they are UNKNOWN, and refused in strict mode."""


@lru_cache(maxsize=256)
def _cached(code: str, effects: EffectsTable, options: Options) -> Analysis:
    if len(code) > MAX_ANALYSED_CHARS:
        return _unanalysed(
            options,
            "too-large",
            f"the snippet is {len(code)} characters, above the {MAX_ANALYSED_CHARS} the "
            "analyzer reads",
            "send a shorter snippet: keep data in providers or the store, not in the code",
        )
    shape = unreadable(code)
    if shape is not None:
        return _refused_shape(shape, options)
    try:
        return _analysed(code, effects, options)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # libcst's native parser panics as a BaseException
        return _unanalysed(
            options,
            "analysis-failed",
            f"the analyzer could not read this snippet ({type(exc).__name__})",
            "the snippet still runs; its result is checked at the boundary",
        )


def _refused_shape(shape: Unreadable, options: Options) -> Analysis:
    if shape.code == "too-deep":
        return _unanalysed(options, "too-deep", shape.message, _FLAT)
    problem = Diagnostic(
        code=shape.code,
        severity="error",
        message=shape.message,
        line=shape.line,
        column=shape.column,
        fix="fix the syntax; snippets are the body of an async function",
    )
    verdict: Verdict = "BLOCK" if options.strict else "WARN"
    return Analysis(classification="UNKNOWN", bounded=False, diagnostics=[problem], verdict=verdict)


def _analysed(code: str, effects: EffectsTable, options: Options) -> Analysis:
    try:
        module = cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        problem = Diagnostic(
            code="syntax-error",
            severity="error",
            message=f"the snippet does not parse: {exc.message}",
            line=exc.raw_line,
            column=exc.raw_column + 1,
            fix="fix the syntax; snippets are the body of an async function",
        )
        verdict: Verdict = "BLOCK" if options.strict else "WARN"
        return Analysis(
            classification="UNKNOWN", bounded=False, diagnostics=[problem], verdict=verdict
        )
    except RecursionError:
        return _unanalysed(options, "too-deep", "the snippet nests too deeply to analyse", _FLAT)
    flow = Flow(effects, options, Positions(code, module))
    try:
        result = flow.run(module)
    except RecursionError:
        return _unanalysed(options, "too-deep", "the snippet nests too deeply to analyse", _FLAT)
    except OutOfSteps:
        return _unanalysed(
            options,
            "too-complex",
            f"the analysis stopped after {MAX_STEPS} steps (local functions calling each other "
            "many times, or loops nested deep)",
            "call helpers fewer times, or nest loops less deeply",
        )
    return _verdict(result, flow, options)


_FLAT = "nest less deeply: name intermediate values"


def _unanalysed(options: Options, code: str, message: str, fix: str) -> Analysis:
    """The diagnosis of a snippet the analyzer could not follow: UNKNOWN, refused when strict."""
    problem = Diagnostic(
        code=code, severity="error" if options.strict else "warning", message=message, fix=fix
    )
    verdict: Verdict = "BLOCK" if options.strict else "WARN"
    return Analysis(classification="UNKNOWN", bounded=False, diagnostics=[problem], verdict=verdict)


def _verdict(result: V, flow: Flow, options: Options) -> Analysis:
    diagnostics = _notes(flow)
    sources = sorted(
        (
            SourceRef(namespace=s.namespace, name=s.name, line=s.line, column=s.column)
            for s in result.sources
        ),
        key=lambda s: (s.line or 0, s.column or 0, s.namespace, s.name),
    )
    bound = (
        Bound.model_validate({"value": result.bound[0], "unit": result.bound[1]})
        if result.bound
        else None
    )
    verdict: Verdict = "PASS"
    tainted = result.cls is not Cls.NONE
    estimate = _estimate(result) if tainted and result.bounded else None
    if tainted and not result.bounded:
        block = options.strict or options.block_unbounded_returns
        verdict = "BLOCK" if block else "WARN"
        what = ", ".join(str(s) for s in sources) or "a provider"
        diagnostics.insert(
            0,
            Diagnostic(
                code="unbounded-return",
                severity="error" if block else "warning",
                message=f"the return carries {result.cls.name} data from {what} with no static "
                f"bound on its size" + (f" ({result.reason})" if result.reason else ""),
                line=sources[0].line if sources else None,
                column=sources[0].column if sources else None,
                fix=FIXES,
            ),
        )
    elif not tainted and bound is not None and bound.unit == "bytes":
        tokens = bound.value // 4
        if tokens > options.max_return_tokens:
            what = f"the return is literal data of about {tokens} tokens"
            fix = "return less, or store it with `await ctx.offload(...)`"
            diagnostics.insert(0, _too_large("large-literal-return", what, fix, options, []))
            verdict = "BLOCK" if options.strict else "PASS"
    elif estimate is not None and estimate.tokens > options.max_return_tokens:
        what = (
            f"the return is bounded, but estimated at about {estimate.tokens} tokens "
            f"({estimate.basis})"
        )
        fix = "take fewer items (`[:50]`), project the fields you need, or count them"
        diagnostics.insert(0, _too_large("estimated-oversized", what, fix, options, sources))
        verdict = "BLOCK" if options.strict else "PASS"
    return Analysis(
        classification=result.cls.public(),
        bounded=result.bounded or not tainted,
        bound=bound,
        estimate=estimate,
        sources=sources,
        trail=[*result.trail, "return"] if tainted else [],
        diagnostics=diagnostics,
        verdict=verdict,
    )


def _too_large(
    code: str, what: str, fix: str, options: Options, sources: list[SourceRef]
) -> Diagnostic:
    """A return above ``max_return_tokens``: a warning, an error when strict."""
    return Diagnostic(
        code=code,
        severity="error" if options.strict else "warning",
        message=f"{what}, above max_return_tokens ({options.max_return_tokens})",
        line=sources[0].line if sources else None,
        column=sources[0].column if sources else None,
        fix=fix,
    )


DEFAULT_ITEM_BYTES = 200
"""The size of one item when the effects table gives none."""
BYTES_PER_TOKEN = 4


def _estimate(result: V) -> Estimate | None:
    """What a bounded return weighs, from its bound: bytes and tokens as they are, items
    times the size of one item of its source."""
    if result.bound is None:
        return None
    amount, unit = result.bound
    if unit == "bytes":
        return Estimate(bytes=amount, tokens=-(-amount // BYTES_PER_TOKEN), basis=f"{amount} bytes")
    if unit == "tokens":
        return Estimate(bytes=amount * BYTES_PER_TOKEN, tokens=amount, basis=f"{amount} tokens")
    each = result.item_bytes or DEFAULT_ITEM_BYTES
    size = amount * each
    return Estimate(
        bytes=size,
        tokens=-(-size // BYTES_PER_TOKEN),
        basis=f"{amount} items x {each} bytes",
    )


def _notes(flow: Flow) -> list[Diagnostic]:
    seen: set[tuple[str, str]] = set()
    found: list[Diagnostic] = []
    for code, message in flow.notes:
        if (code, message) in seen:
            continue
        seen.add((code, message))
        fix = "model it in the effects table, or return a projection of its result"
        found.append(Diagnostic(code=code, severity="info", message=message, fix=fix))
    return found
