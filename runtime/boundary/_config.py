"""What the boundary does with results: formats, policies, thresholds."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

ResultFormat = Literal["auto", "json", "yaml", "text"]
ResultPolicy = Literal["auto", "inline", "offload", "summarize"]
RESULT_FORMATS: tuple[ResultFormat, ...] = ("auto", "json", "yaml", "text")
RESULT_POLICIES: tuple[ResultPolicy, ...] = ("auto", "inline", "offload", "summarize")

_CLAMPS: dict[str, tuple[int, int]] = {
    "read_offload_threshold": (256, 1024**3),
    "offload_preview_bytes": (256, 4096),
    "error_compaction_threshold": (512, 1024 * 1024),
    "error_compaction_preview_bytes": (256, 4096),
}


class BoundaryConfig(BaseModel):
    """Settings of the boundary. In ``.fabric/config.json`` the keys are camelCase
    (``readOffloadThreshold``); numbers out of range are clamped with a warning."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    result_format: ResultFormat = "auto"
    """How values are rendered for the model: ``auto`` (strings as they are, structured data as
    compact YAML-like text with long strings in labelled sections), ``json``, ``yaml``, ``text``."""
    result_policy: ResultPolicy = "auto"
    """``auto`` inlines up to the threshold and offloads the rest; ``inline`` never rewrites;
    ``offload`` always stores and returns a handle; ``summarize`` returns a structural summary
    with the exact original under a handle."""
    read_offload_threshold: int = 16 * 1024
    """Largest model-facing text, in bytes, that ``auto`` inlines (256 B to 1 GB)."""
    offload_preview_bytes: int = 2048
    """Size of the preview that follows an offload notice (256 to 4096)."""
    error_compaction_threshold: int = 4096
    """Errors whose text is larger than this are compacted, the original kept under a handle."""
    error_compaction_preview_bytes: int = 4096
    """Size of a compacted error (256 to 4096)."""
    compact_edit_results: bool = True
    """Results of 2 KB or more carrying a diff or patch become an acknowledgement and a handle."""
    redact_secrets: bool = True
    """Redact things that look like keys and tokens in previews (never in stored originals)."""
    warnings: tuple[str, ...] = Field(default=(), exclude=True)
    """What was clamped, and why."""

    @model_validator(mode="before")
    @classmethod
    def _clamp(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        warnings = list(data.get("warnings", ()))
        for name, (low, high) in _CLAMPS.items():
            key = name if name in data else to_camel(name)
            value = data.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high:
                clamped = min(max(value, low), high)
                warnings.append(
                    f"{to_camel(name)} {value} is outside {low}..{high}; using {clamped}"
                )
                data[key] = clamped
        data["warnings"] = tuple(warnings)
        return data
