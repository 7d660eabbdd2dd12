"""What the boundary does with results: formats, policies, thresholds."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

ResultFormat = Literal["auto", "json", "yaml", "text"]
ResultPolicy = Literal["auto", "inline", "offload", "summarize"]
RESULT_FORMATS: tuple[ResultFormat, ...] = ("auto", "json", "yaml", "text")
RESULT_POLICIES: tuple[ResultPolicy, ...] = ("auto", "inline", "offload", "summarize")
MAX_BUDGET = 1_000_000_000
"""The largest byte budget a setting takes (the reference's MAX_CONTEXT_BOUNDARY_BUDGET)."""


class BoundaryConfig(BaseModel):
    """Settings of the boundary, each with its bounds. In ``.fabric/config.json`` the keys are
    camelCase (``readOffloadThreshold``), and a number out of bounds there is clamped with a
    warning; here it is a validation error."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    result_format: ResultFormat = "auto"
    """How values are rendered for the model: ``auto`` (strings as they are, structured data as
    compact YAML-like text with long strings in labelled sections), ``json``, ``yaml``, ``text``."""
    result_policy: ResultPolicy = "auto"
    """``auto`` inlines up to the threshold and offloads the rest; ``inline`` never rewrites;
    ``offload`` always stores and returns a handle; ``summarize``, like ``auto``, inlines up to
    the threshold, and above it returns a structural summary with the exact original under a
    handle."""
    read_offload_threshold: int = Field(16 * 1024, ge=256, le=MAX_BUDGET)
    """Largest model-facing text, in bytes, that ``auto`` inlines."""
    offload_preview_bytes: int = Field(2048, ge=256, le=4096)
    """Size of the preview that follows an offload notice."""
    error_compaction_threshold: int = Field(4096, ge=256, le=MAX_BUDGET)
    """Errors of this many bytes or more are compacted, the exact original kept under a
    handle."""
    error_compaction_preview_bytes: int = Field(4096, ge=256, le=64_000)
    """Size of a compacted error."""
    compact_edit_results: bool = True
    """Results of 2 KB or more carrying a diff or patch become an acknowledgement and a handle."""
    redact_secrets: bool = True
    """Redact things that look like keys and tokens in previews (never in stored originals)."""
