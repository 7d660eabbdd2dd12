"""``Settings``: one session's effective settings, and their lifetime.

``.fabric/config.json`` under what the ``Fabric`` constructor was given (an argument wins over
the file, a value left out lets the file's apply), capped by the quantitative policy, with the
effects table extended by the file's rows and the constructor's. Reloaded when the file
changes; the owners that hold a setting (the boundary, the store) take the new values from
:meth:`Settings.refresh`'s caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer import EffectsTable, Options
from fabric._config import ConfigFile, FabricConfig, Loaded, Source, capped, overlay
from runtime import Isolation, Limits
from runtime.boundary import BoundaryConfig


@dataclass(frozen=True)
class Overrides:
    """Settings passed to the constructor; they win over the config file."""

    limits: Limits | None = None
    boundary: BoundaryConfig | None = None
    analysis: Options | None = None
    effects: list[Any] = field(default_factory=list)
    isolation: Isolation | None = None
    persist_variables: bool | None = None


class Settings:
    """The effective settings of one session over ``workspace``."""

    def __init__(self, workspace: Path, overrides: Overrides) -> None:
        self.file = ConfigFile(workspace)
        self._overrides = overrides
        self._take(self.file.current())

    def _take(self, loaded: Loaded) -> None:
        given = self._overrides
        loaded = capped(
            overlay(
                loaded,
                limits=given.limits,
                boundary=given.boundary,
                analysis=given.analysis,
                isolation=given.isolation,
                persist_variables=given.persist_variables,
            )
        )
        self.config: FabricConfig = loaded.config
        self.sources: dict[str, Source] = dict(loaded.sources)
        """Where each setting came from: ``default``, ``file``, ``clamped``, ``argument`` or
        ``policy``."""
        self.analysis: Options = loaded.config.analysis.model_copy(
            update={"read_bytes": loaded.config.boundary.read_offload_threshold}
        )
        """The analyzer's options, its read budget the offload threshold."""
        rows = list(loaded.config.effects) + given.effects
        self.effects, effect_warnings = EffectsTable.default().extended(rows)
        self.warnings: tuple[str, ...] = (*loaded.warnings, *effect_warnings)
        """What was wrong with the settings: a bad key in config.json, a bad effects row."""

    def refresh(self) -> bool:
        """Reload the file if it changed since it was read; whether anything was reloaded."""
        if not self.file.changed():
            return False
        self._take(self.file.current())
        return True

    @property
    def limits(self) -> Limits:
        return self.config.limits

    @property
    def boundary(self) -> BoundaryConfig:
        return self.config.boundary

    @property
    def isolation(self) -> Isolation:
        return self.config.isolation

    def options(self, strict: bool | None, block_unbounded_returns: bool | None = None) -> Options:
        """The analyzer's options, with ``strict`` (and ``block_unbounded_returns``) for one
        call when given."""
        given = {
            k: v
            for k, v in (("strict", strict), ("block_unbounded_returns", block_unbounded_returns))
            if v is not None and v != getattr(self.analysis, k)
        }
        return self.analysis.model_copy(update=given) if given else self.analysis
