"""Static analysis of snippets: what kind of data a snippet returns and whether its size is
bounded, before it runs. A pure function of the code, the effects table and the options;
imports only libcst, pydantic, the standard library and the contract."""

from analyzer._analyze import MAX_ANALYSED_CHARS, analyze
from analyzer._effects import EffectRow, EffectsTable
from analyzer._flow import MAX_LOOP_ROUNDS, MAX_RECURSION_ROUNDS, MAX_STEPS
from analyzer._knowledge import KNOWLEDGE, Knowledge
from analyzer._models import (
    Analysis,
    Bound,
    Classification,
    Diagnostic,
    Estimate,
    Options,
    Severity,
    SourceRef,
    Unit,
    Verdict,
)

__all__ = [
    "KNOWLEDGE",
    "MAX_ANALYSED_CHARS",
    "MAX_LOOP_ROUNDS",
    "MAX_RECURSION_ROUNDS",
    "MAX_STEPS",
    "Analysis",
    "Bound",
    "Classification",
    "Diagnostic",
    "EffectRow",
    "EffectsTable",
    "Estimate",
    "Knowledge",
    "Options",
    "Severity",
    "SourceRef",
    "Unit",
    "Verdict",
    "analyze",
]
