"""What ``Fabric.exec`` needs beside the session: results made without running (blocked,
disabled), a provider host that reports calls, and the fields telemetry keeps."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from analyzer import Analysis
from runtime import ExecError, ExecResult, ProviderHost, Timings, render_error


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


class Watched:
    """A provider host that reports each call before serving it."""

    def __init__(self, inner: ProviderHost, on_call: Callable[[str], None]) -> None:
        self.inner, self.on_call = inner, on_call

    def catalog(self) -> Mapping[str, Sequence[str]]:
        return self.inner.catalog()

    def parameters(self, namespace: str, name: str) -> Sequence[str]:
        return self.inner.parameters(namespace, name)

    def help(self) -> Mapping[str, str]:
        return self.inner.help()

    async def call(
        self, namespace: str, name: str, arguments: dict[str, Any], positional: Sequence[Any] = ()
    ) -> Any:
        self.on_call(f"{namespace}.{name}")
        return await self.inner.call(namespace, name, arguments, positional)


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
