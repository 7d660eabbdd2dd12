"""What the analyzer knows by name, in one public record (drift tests hold it to the contract)."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer._flow import MODULES, NAMESPACES
from analyzer._tables import (
    AGGREGATING_BUILTINS,
    ENCODING_BUILTINS,
    MODULE_FUNCTIONS,
    PRESERVING_BUILTINS,
    SCALAR_BUILTINS,
    SHAPING_BUILTINS,
)


@dataclass(frozen=True)
class Knowledge:
    namespaces: frozenset[str]
    """Names the analyzer treats as provider namespaces."""
    modules: frozenset[str]
    """Modules it treats as importable."""
    module_functions: frozenset[str]
    """Dotted module functions it models; others of an allowed module are UNKNOWN."""
    builtins: frozenset[str]
    """Builtins it models."""


KNOWLEDGE = Knowledge(
    namespaces=NAMESPACES,
    modules=MODULES,
    module_functions=frozenset(MODULE_FUNCTIONS),
    builtins=SCALAR_BUILTINS
    | ENCODING_BUILTINS
    | PRESERVING_BUILTINS
    | AGGREGATING_BUILTINS
    | SHAPING_BUILTINS,
)
