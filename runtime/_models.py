"""Frozen models of what an execution takes (limits) and gives back (result)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from runtime._content import ContentBlock
from runtime.worker._wire import ErrorKind as ErrorKind
from runtime.worker._wire import WireLimits
from store import json_default


class Limits(BaseModel):
    """Resource limits of one execution."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(30.0, ge=0.1, le=3600)
    """Wall-clock seconds before the worker is killed."""
    memory_mb: int = Field(512, ge=16, le=65536)
    """Address space the snippet may add to the worker, in MiB."""
    output_bytes: int = Field(65536, ge=0, le=64 * 1024 * 1024)
    """Characters of ``print`` output kept; the rest is counted and dropped."""
    max_result_bytes: int = Field(32 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024)
    """Largest serialized return value the worker may send."""
    max_calls: int = Field(2000, ge=0, le=1_000_000)
    """Provider calls one execution may make."""
    max_concurrent_calls: int = Field(64, ge=1, le=4096)
    """Provider calls served at once on the host; the rest wait their turn."""

    def wire(self) -> WireLimits:
        """The limits as the worker receives them."""
        return {
            "timeout_s": self.timeout_s,
            "memory_mb": self.memory_mb,
            "output_bytes": self.output_bytes,
            "max_result_bytes": self.max_result_bytes,
            "max_calls": self.max_calls,
            "max_concurrent_calls": self.max_concurrent_calls,
        }


class CompileIssue(BaseModel):
    """One syntax error or policy denial found before the snippet ran."""

    model_config = ConfigDict(frozen=True)

    kind: str
    message: str
    line: int | None = None
    column: int | None = None


class ExecError(BaseModel):
    """Why an execution failed, as data the model (or a program) can act on."""

    model_config = ConfigDict(frozen=True)

    kind: ErrorKind
    """syntax, policy, runtime, tool, timeout, memory, limit, crash or protocol."""
    type: str = ""
    """The exception type name, e.g. ``ZeroDivisionError``."""
    message: str
    line: int | None = None
    """Line of the snippet where it happened, 1-based."""
    column: int | None = None
    source_line: str | None = None
    """The snippet's own line of code at ``line``."""
    hint: str | None = None
    """How to fix or work around it."""
    limit: float | None = None
    """The value of the limit that was hit, for timeout, memory and limit errors."""
    tool: str | None = None
    """For tool errors, the provider call that failed (``tools.read``)."""
    code: str | None = None
    """For tool errors, the provider's error code."""
    problems: tuple[CompileIssue, ...] = ()
    """Every problem found at compile time (the first is also in the fields above)."""


class Timings(BaseModel):
    """Milliseconds spent in each phase."""

    model_config = ConfigDict(frozen=True)

    compile_ms: float = 0.0
    run_ms: float = 0.0
    total_ms: float = 0.0


PolicyApplied = Literal["inline", "offload", "summarize", "edit", "compact"]


class CallRecord(BaseModel):
    """One provider call a snippet made (the first few are kept, in the order they started)."""

    model_config = ConfigDict(frozen=True)

    tool: str
    """Qualified name, e.g. ``tools.read``."""
    args: dict[str, Any] = {}
    """Its arguments, long values shortened."""
    ms: float | None = None
    """How long the host took to serve it, approval included; None when the execution ended
    before it was answered."""
    bytes_in: int = 0
    """Size of the call's frame from the worker (its arguments, as they crossed)."""
    bytes_out: int = 0
    """Size of the reply frame sent back (the value, or the error)."""
    code: str | None = None
    """The error code it failed with (``denied``, ``bad_arguments``...); None when it answered."""
    risk: str | None = None
    """Its risk class, as the host's approvals judged it (None: the host did not say)."""
    approval: str | None = None
    """How it was let through or stopped, as the host labelled it (``allow``, ``approved``,
    ``deny``, ``refused``, ``unasked``); None when the host does not judge calls."""


class CallTotals(BaseModel):
    """Every call an execution made to one tool, added up (calls beyond the kept records too)."""

    model_config = ConfigDict(frozen=True)

    tool: str
    """Qualified name; calls to names the host does not know count under ``(unknown)``."""
    risk: str | None = None
    calls: int = 0
    failed: int = 0
    ms: float = 0.0
    """Milliseconds spent serving them, added up (concurrent calls overlap)."""
    bytes_in: int = 0
    bytes_out: int = 0
    approvals: dict[str, int] = {}
    """How many calls each approval label covered (``{"allow": 12, "refused": 1}``)."""


class ExecResult(BaseModel):
    """The outcome of one snippet."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    text: str
    """What the model sees: the rendered value and captured output, or the error. For
    content blocks, their text one after the other, each medium a line such as
    ``[image/png, 1234 bytes]``."""
    value: Any = None
    """The returned plain data (str, bytes, int, float, bool, None, list, dict); in
    ``model_dump_json`` bytes are ``{"bytes": n, "base64": ...}``, as the model reads them."""
    blocks: tuple[ContentBlock, ...] = ()
    """When the snippet returned content blocks: the blocks the model gets, in order (text
    within the shared budget, media at their places); empty for any other value."""
    media_bytes: int = 0
    """Bytes of the images, audio and blobs among ``blocks``, sent beside the text."""
    logs: str = ""
    """Captured ``print`` output, capped at ``Limits.output_bytes``."""
    logs_dropped: int = 0
    """Characters of output beyond the cap that were dropped."""
    error: ExecError | None = None
    timings: Timings = Timings()
    calls: int = 0
    """Provider calls the snippet made."""
    call_log: tuple[CallRecord, ...] = ()
    """The first provider calls, in the order they were made."""
    call_totals: tuple[CallTotals, ...] = ()
    """Every provider call, added up per tool, in the order each tool was first called."""
    handle: str | None = None
    """Where the full result is stored, when the boundary offloaded or summarized it."""
    logs_handle: str | None = None
    """Where the full printed output is stored, when it was too large to show."""
    bytes: int = 0
    """Size of the full model-facing rendering (value and output), before the boundary; of
    content blocks, their text (media are ``media_bytes``)."""
    tokens: int = 0
    """Tokens of that full rendering (exact up to 1 MB, extrapolated from samples beyond)."""
    text_tokens: int = 0
    """Tokens of ``text``, what the model actually reads."""
    policy_applied: PolicyApplied = "inline"
    """What the boundary did: ``inline``, ``offload``, ``summarize``, ``edit`` (an edit result
    acknowledged), ``compact`` (a long error compacted)."""
    warnings: tuple[str, ...] = ()
    """Problems the boundary met (a store that could not be written, say)."""
    analysis: Any = None
    """The static diagnosis of the snippet (an ``analyzer.Analysis``), when Fabric made one."""
    variables: dict[str, Any] | None = Field(None, exclude=True)
    """When the execution was asked to keep its variables (``persist``) and succeeded: the
    top-level plain-data variables it left, for the next one (never serialized)."""
    variables_bytes: int = Field(0, exclude=True)
    """Bytes of JSON those variables take."""

    @field_serializer("value", when_used="json")
    def _value_as_json(self, value: Any) -> Any:
        return json.loads(json.dumps(value, default=json_default))
