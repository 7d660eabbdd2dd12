"""What an analysis says: the classification of a snippet's return and why."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Classification(StrEnum):
    """What kind of data a snippet hands back, worst first (see ARCHITECTURE.md)."""

    RAW = "RAW"
    """Provider data as it came."""
    ENCODED = "ENCODED"
    """Provider data re-encoded (json.dumps, str, f-strings, joins): as large as it was."""
    UNKNOWN = "UNKNOWN"
    """Provider data through something the analyzer cannot follow."""
    SELECTED = "SELECTED"
    """A part of provider data: slices, indexes, filters, matches."""
    PROJECTED = "PROJECTED"
    """Fields, lengths, counts, comparisons of provider data."""
    AGGREGATED = "AGGREGATED"
    """Reductions: sum, min, max, any, all, statistics."""
    COMPRESSED = "COMPRESSED"
    """ctx.summarize output."""
    OFFLOADED = "OFFLOADED"
    """Handles from ctx.offload."""
    NONE = "NONE"
    """No provider data reaches the return."""


Verdict = Literal["PASS", "WARN", "BLOCK"]
Unit = Literal["bytes", "tokens", "items"]
Severity = Literal["error", "warning", "info"]


class Bound(BaseModel):
    """A static upper bound on the returned size."""

    model_config = _FROZEN

    value: int
    unit: Unit


class SourceRef(BaseModel):
    """A provider call whose data reaches the return."""

    model_config = _FROZEN

    namespace: str
    name: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.namespace}.{self.name}{where}"


class Diagnostic(BaseModel):
    """A finding, with the fix to apply."""

    model_config = _FROZEN

    code: str
    severity: Severity
    message: str
    line: int | None = None
    column: int | None = None
    fix: str | None = None


class Options(BaseModel):
    """How strict an analysis is."""

    model_config = _FROZEN

    strict: bool = False
    """Block unbounded source-bearing returns and every warning (a literal return estimated
    above ``max_return_tokens``, say)."""
    block_unbounded_returns: bool = False
    """Block unbounded source-bearing returns only."""
    max_return_tokens: int = Field(4000, ge=1, le=10_000_000)
    """Above this estimate, a return of literal data is a warning."""
    read_bytes: int = Field(16 * 1024, ge=256)
    """What one ctx.read returns at most (the offload threshold)."""


class Estimate(BaseModel):
    """What a bounded return is expected to weigh."""

    model_config = _FROZEN

    bytes: int
    tokens: int
    basis: str
    """How it was made: ``bound`` (a size the code states), or ``5000 items x 100 bytes``."""


class Analysis(BaseModel):
    """The diagnosis of one snippet, made without running it."""

    model_config = _FROZEN

    classification: Classification
    bounded: bool
    """Whether a static upper bound on the returned size is known."""
    bound: Bound | None = None
    estimate: Estimate | None = None
    """The expected size of a bounded return, where the bound and the effects table give
    one; above ``max_return_tokens`` it is an ``estimated-oversized`` advisory."""
    sources: list[SourceRef] = []
    trail: list[str] = []
    """From source to boundary, e.g.
    ``tools.read (line 1) -> splitlines -> [:20] (20 items) -> return``."""
    diagnostics: list[Diagnostic] = []
    verdict: Verdict

    def explain(self) -> str:
        return " -> ".join(self.trail) if self.trail else "no provider data reaches the return"
