"""The effects table: what each provider call gives back, as data.

Rows live in ``effects.json`` (shipped with the package); users add their own ahead of them
(from ``.fabric/config.json``), and Fabric adds rows for the providers it registers. A row
that does not validate is skipped with a warning, never an error.
"""

from __future__ import annotations

import importlib.resources
import json
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analyzer._models import Unit

Effect = Literal["source", "passthrough", "scalar", "select", "compress", "offload", "unknown"]


class EffectRow(BaseModel):
    """One row: calls whose dotted name matches ``match`` have ``effect``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    match: str
    """A dotted name pattern: ``tools.read``, ``mcp.*.search`` (``*`` also crosses dots)."""
    effect: Effect
    bound_keyword: str | None = None
    """The argument that bounds the result (``max_tokens``, ``limit``...)."""
    unit: Unit = "items"
    default_bound: int | None = None
    """The bound when the keyword is not passed (the provider's default)."""
    bounded_when: tuple[str, ...] = ()
    """Arguments any one of which makes the result bounded (``ctx.read``: length, query...)."""
    result: Literal["text", "data"] = "data"
    """What the call returns: ``text`` (a string: ``[:N]`` keeps N characters, its lines are
    its items) or other ``data``."""
    item_bytes: int | None = Field(None, ge=1, le=100_000_000)
    """The estimated size of one item of the result (an entry, a row; a line of text), for
    the size of a bound counted in items."""


class EffectsTable:
    """Rows in order; the first row that matches a call decides."""

    def __init__(self, rows: list[EffectRow]) -> None:
        self.rows = tuple(rows)
        self._lookup = lru_cache(maxsize=1024)(self._find)

    @classmethod
    def default(cls) -> EffectsTable:
        return _default()

    def extended(self, rows: list[Any]) -> tuple[EffectsTable, list[str]]:
        """This table with ``rows`` placed first; bad rows are skipped with a warning each."""
        good, warnings = parse_rows(rows)
        return EffectsTable(good + list(self.rows)), warnings

    def lookup(self, dotted: str) -> EffectRow | None:
        return self._lookup(dotted)

    def fingerprint(self) -> int:
        return hash(self.rows)

    def _find(self, dotted: str) -> EffectRow | None:
        for row in self.rows:
            if fnmatchcase(dotted, row.match):
                return row
        return None


def parse_rows(rows: list[Any]) -> tuple[list[EffectRow], list[str]]:
    good: list[EffectRow] = []
    warnings: list[str] = []
    for n, raw in enumerate(rows):
        try:
            good.append(EffectRow.model_validate(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "row"
            warnings.append(f"effects row {n} ({str(raw)[:80]}) skipped: {where}: {first['msg']}")
    return good, warnings


@lru_cache(maxsize=1)
def _default() -> EffectsTable:
    text = importlib.resources.files("analyzer").joinpath("effects.json").read_text()
    rows, warnings = parse_rows(json.loads(text)["rows"])
    assert not warnings, warnings
    return EffectsTable(rows)
