"""``<workspace>/.fabric/config.json``: every setting, its default, and where its value came from.

The file is camelCase (``readOffloadThreshold``); the Python API takes snake_case too. Loading
never raises: bad JSON or a bad value falls back to the default with a warning, numbers out of
range are clamped with a warning, deprecated keys load with a warning and no effect, and unknown
keys are reported. The file is re-read when its modification time changes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from analyzer import Options
from fabric._model import ModelSettings
from runtime import Limits
from runtime.boundary import BoundaryConfig

DEPRECATED = ("nestedResultThreshold", "compactStaleResults", "maxUnprocessedToolCalls")
STORE_MAX_BYTES = 500_000_000
_CLAMPS: dict[str, tuple[float, float]] = {
    "max_return_tokens": (1, 10_000_000),
    "read_offload_threshold": (256, 1024**3),
    "error_compaction_threshold": (512, 1024 * 1024),
    "error_compaction_preview_bytes": (256, 4096),
    "offload_preview_bytes": (256, 4096),
    "runtime_advisory_threshold": (0, 1024**3),
    "store_max_bytes": (1024 * 1024, STORE_MAX_BYTES),
    "store_ttl_ms": (60_000, 365 * 24 * 3600 * 1000),
    "timeout_s": (0.1, 3600),
    "memory_mb": (16, 65536),
    "output_bytes": (0, 64 * 1024 * 1024),
}


class QuantitativePolicy(BaseModel):
    """Hard caps on what one result may hand the model (0 means no cap)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    max_bytes: int = Field(0, ge=0)
    max_tokens: int = Field(0, ge=0)
    max_characters: int = Field(0, ge=0)


class FabricConfig(BaseModel):
    """Every setting of a workspace, with its default."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, strict=True
    )

    enabled: bool = True
    """Whether fabric_exec runs snippets at all (off: every call is refused with this setting)."""
    strict: bool = False
    """Analyse first and refuse unbounded returns and warnings before running."""
    block_unbounded_returns: bool = False
    """Analyse first and refuse unbounded source-bearing returns."""
    max_return_tokens: int = 4000
    """Above this estimate a literal return is a warning (blocked under strict)."""
    read_offload_threshold: int = 16384
    """Largest result, in bytes, inlined for the model; larger ones are offloaded."""
    result_policy: Literal["auto", "inline", "offload", "summarize"] = "auto"
    result_format: Literal["auto", "json", "yaml", "text"] = "auto"
    error_compaction_threshold: int = 4096
    error_compaction_preview_bytes: int = 4096
    offload_preview_bytes: int = 2048
    runtime_advisory_threshold: int = 0
    """Results above this many bytes get an advisory note even when inlined (0: never)."""
    compact_edit_results: bool = True
    notify_on_start: bool = False
    """Log a line with the effective settings when a session starts."""
    store_max_bytes: int = STORE_MAX_BYTES
    store_ttl_ms: int = 604_800_000
    quantitative_policy: QuantitativePolicy = Field(
        default_factory=QuantitativePolicy, validation_alias="quantitativePolicy"
    )
    isolation: Literal["full", "minimal"] = "full"
    """``full``: snippets run only behind the kernel layer (seccomp, Landlock, namespaces where
    the kernel has them) and are refused without seccomp; ``minimal``: without the kernel layer,
    with a warning on every result."""
    timeout_s: float = 30.0
    memory_mb: int = 512
    output_bytes: int = 65536
    effects: list[dict[str, Any]] = Field(default_factory=list)
    """Rows added ahead of the analyzer's effects table."""
    model: ModelSettings | None = None
    """An OpenAI-compatible endpoint for ``ctx_summarize(mode="model")``:
    ``{"baseUrl": ..., "model": ..., "apiKeyEnv": ...}``."""

    def boundary(self) -> BoundaryConfig:
        return BoundaryConfig(
            result_format=self.result_format,
            result_policy=self.result_policy,
            read_offload_threshold=self.read_offload_threshold,
            offload_preview_bytes=self.offload_preview_bytes,
            error_compaction_threshold=self.error_compaction_threshold,
            error_compaction_preview_bytes=self.error_compaction_preview_bytes,
            compact_edit_results=self.compact_edit_results,
        )

    def analysis(self) -> Options:
        return Options(
            strict=self.strict,
            block_unbounded_returns=self.block_unbounded_returns,
            max_return_tokens=self.max_return_tokens,
            read_bytes=self.read_offload_threshold,
        )

    def limits(self) -> Limits:
        return Limits(
            timeout_s=self.timeout_s, memory_mb=self.memory_mb, output_bytes=self.output_bytes
        )


FIELDS = {name: to_camel(name) for name in FabricConfig.model_fields}


@dataclass(frozen=True)
class Loaded:
    """A configuration and what loading it found."""

    config: FabricConfig
    warnings: tuple[str, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)
    """For each setting (camelCase): ``default``, ``file`` or ``clamped``."""


def parse(raw: Any, where: str = "config.json") -> Loaded:
    """Validate a config mapping key by key: a bad key falls back to its default."""
    warnings: list[str] = []
    sources = dict.fromkeys(FIELDS.values(), "default")
    if not isinstance(raw, dict):
        return Loaded(
            FabricConfig(), (f"{where}: the top level must be an object; using defaults",), sources
        )
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key in DEPRECATED:
            warnings.append(f"{where}: {key} is deprecated and has no effect; remove it")
            continue
        name = _field_name(key)
        if name is None:
            known = ", ".join(sorted(FIELDS.values()))
            warnings.append(f"{where}: unknown key {key!r} ignored (known: {known})")
            continue
        value, note = _clamp(name, value)
        if note:
            warnings.append(f"{where}: {note}")
        try:
            FabricConfig.model_validate({name: value})
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
            warnings.append(
                f"{where}: {key}={json.dumps(value)[:60]} is invalid ({problem}); using the default"
            )
            continue
        values[name] = value
        sources[FIELDS[name]] = "clamped" if note else "file"
    return Loaded(FabricConfig.model_validate(values), tuple(warnings), sources)


def _field_name(key: str) -> str | None:
    if key in FIELDS:
        return key
    if key == "policy":
        return "quantitative_policy"
    for name, camel in FIELDS.items():
        if camel == key:
            return name
    return None


def _clamp(name: str, value: Any) -> tuple[Any, str | None]:
    bounds = _CLAMPS.get(name)
    if bounds is None or isinstance(value, bool) or not isinstance(value, int | float):
        return value, None
    low, high = bounds
    if low <= value <= high:
        return value, None
    clamped = min(max(value, low), high)
    if isinstance(value, int) and float(clamped).is_integer():
        clamped = int(clamped)
    return (
        clamped,
        f"{FIELDS[name]} {value} is outside {_num(low)}..{_num(high)}; using {_num(clamped)}",
    )


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


class ConfigFile:
    """The workspace's config file, re-read when it changes."""

    def __init__(self, workspace: Path) -> None:
        self.path = workspace / ".fabric" / "config.json"
        self._stamp: tuple[int, int] | None = None
        self._loaded = Loaded(FabricConfig(), (), dict.fromkeys(FIELDS.values(), "default"))
        self.current()

    def current(self) -> Loaded:
        """The configuration as the file says now (defaults when there is no file)."""
        try:
            info = os.stat(self.path)
            stamp: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
        except FileNotFoundError:
            stamp = None
        except OSError as exc:
            return Loaded(
                FabricConfig(), (f"cannot read {self.path}: {exc.strerror}; using defaults",)
            )
        if stamp == self._stamp:
            return self._loaded
        self._stamp = stamp
        if stamp is None:
            self._loaded = Loaded(FabricConfig(), (), dict.fromkeys(FIELDS.values(), "default"))
            return self._loaded
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            self._loaded = Loaded(
                FabricConfig(),
                (f"{self.path} is not valid JSON ({exc}); using defaults until it is fixed",),
                dict.fromkeys(FIELDS.values(), "default"),
            )
            return self._loaded
        self._loaded = parse(raw, str(self.path))
        return self._loaded

    def changed(self) -> bool:
        """Whether the file changed since it was last read."""
        try:
            info = os.stat(self.path)
            return (info.st_mtime_ns, info.st_size) != self._stamp
        except OSError:
            return self._stamp is not None
