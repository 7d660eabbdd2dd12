"""Fabric's contracts, declared once: what a snippet may name.

Standard library only, so every package imports it, the sandbox's worker included. The
sandbox, the analyzer, the MCP description and the README are built from or checked
against these tables.
"""

from __future__ import annotations

from contract._depth import MAX_DEPTH, json_nests_within
from contract._docs import markers, readme_block, readme_lists, write_block
from contract._python import AST_LOCK, compile_tree, literal_eval, parse
from contract._snippet import BUILTINS, MODULES, NAMESPACES, NEVER, REFUSED_BUILTINS

__all__ = [
    "AST_LOCK",
    "BUILTINS",
    "MAX_DEPTH",
    "MODULES",
    "NAMESPACES",
    "NEVER",
    "REFUSED_BUILTINS",
    "compile_tree",
    "json_nests_within",
    "literal_eval",
    "markers",
    "parse",
    "readme_block",
    "readme_lists",
    "write_block",
]
