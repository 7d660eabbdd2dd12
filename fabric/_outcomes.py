"""What ``Fabric.exec`` needs beside the session: results made without running (blocked,
disabled), and the fields telemetry keeps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analyzer import Analysis
from runtime import CallTotals, ExecError, ExecResult, Timings, render_error


class FabricResult(ExecResult):
    """What ``Fabric.exec`` returns: the sandbox's ``ExecResult``, with ``analysis`` typed as
    the analyzer's diagnosis (the runtime cannot know the analyzer's types)."""

    analysis: Analysis | None = None
    """The static diagnosis of the snippet, made beside (or, when strict, before) the run."""

    @classmethod
    def of(cls, result: ExecResult, analysis: Analysis | None) -> FabricResult:
        """``result`` with its diagnosis, without validating the value again."""
        fields = dict(result)
        fields["analysis"] = analysis
        return cls.model_construct(result.model_fields_set | {"analysis"}, **fields)


_TOOLS_KEPT = 50
"""Tools an ``exec`` event lists; calls to the rest are added up under ``(others)``."""


def call_fields(totals: Sequence[CallTotals]) -> list[dict[str, Any]]:
    """The ``providers`` field of an ``exec`` event: per tool, its risk class, calls, failures,
    milliseconds, bytes in and out, and approvals (``{"allow": 3}``); the busiest first."""
    rows = sorted(totals, key=lambda t: -t.calls)
    fields = [t.model_dump(exclude_defaults=True) | {"tool": t.tool} for t in rows[:_TOOLS_KEPT]]
    rest = rows[_TOOLS_KEPT:]
    if rest:
        fields.append(
            {
                "tool": "(others)",
                "calls": sum(t.calls for t in rest),
                "failed": sum(t.failed for t in rest),
                "ms": round(sum(t.ms for t in rest), 3),
                "bytes_in": sum(t.bytes_in for t in rest),
                "bytes_out": sum(t.bytes_out for t in rest),
            }
        )
    return fields


def is_small(result: ExecResult) -> bool:
    """A result whose rendering is cheap: scalars, short strings, short logs."""
    value = result.value
    cheap = (
        value is None
        or isinstance(value, bool | int | float)
        or (isinstance(value, str) and len(value) < 4096)
    )
    return cheap and len(result.logs) < 4096 and len(result.text) < 4096


def verdict_fields(analysis: Any) -> dict[str, Any]:
    if not isinstance(analysis, Analysis):
        return {}
    bound, estimate = analysis.bound, analysis.estimate
    return {
        "verdict": analysis.verdict,
        "classification": analysis.classification.value,
        "bounded": analysis.bounded,
        "bound": f"{bound.value} {bound.unit}" if bound else None,
        "estimate_bytes": estimate.bytes if estimate else None,
        "estimate_tokens": estimate.tokens if estimate else None,
    }


def refused(error: ExecError, analysis: Analysis | None = None) -> FabricResult:
    """The result of a snippet that was not run, failing with ``error``."""
    return FabricResult(
        ok=False, text=render_error(error), error=error, timings=Timings(), analysis=analysis
    )


def disabled() -> FabricResult:
    return refused(
        ExecError(
            kind="policy",
            type="Disabled",
            message="Fabric is disabled for this workspace (enabled: false in .fabric/config.json)",
            hint='set "enabled": true in .fabric/config.json to run snippets again',
        )
    )


def empty_snippet() -> FabricResult:
    """The result of a snippet with no code in it."""
    return refused(
        ExecError(
            kind="syntax",
            type="EmptySnippet",
            message="the snippet is empty; nothing was run",
            hint="send Python code that returns what you need, e.g. `return 1 + 1`",
        )
    )


def blocked(diagnosis: Analysis) -> FabricResult:
    """The result of a snippet refused before it ran."""
    first = next((d for d in diagnosis.diagnostics if d.severity == "error"), None)
    message = first.message if first else "the analyzer blocked this snippet"
    error = ExecError(
        kind="policy",
        type="Blocked",
        message=f"{message}; nothing was run. Trail: {diagnosis.explain()}",
        line=first.line if first else None,
        column=first.column if first else None,
        hint=first.fix if first else None,
    )
    return refused(error, diagnosis)
