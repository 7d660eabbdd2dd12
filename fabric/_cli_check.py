"""``fabric check FILE|-`` (ce_exec: the diagnosis without running) and ``fabric explain``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from analyzer import Analysis, EffectsTable, Options, analyze

_out = Console(highlight=False, soft_wrap=True)
_COLOURS = {"PASS": "green", "WARN": "yellow", "BLOCK": "red"}


def add_parsers(commands: Any) -> None:
    check = commands.add_parser(
        "check", help="classify what a snippet would return, without running it (ce_exec)"
    )
    check.add_argument("source", metavar="FILE", help="snippet file, or - for standard input")
    check.add_argument("--json", action="store_true", help="print the Analysis as JSON")
    check.add_argument("--strict", action="store_true", help="block unbounded returns and warnings")
    check.add_argument(
        "--block-unbounded", action="store_true", help="block unbounded source-bearing returns"
    )
    explain = commands.add_parser(
        "explain", help="show how provider data flows to a snippet's return"
    )
    explain.add_argument("source", metavar="FILE", help="snippet file, or - for standard input")
    explain.add_argument("--json", action="store_true", help="print the trail as JSON")


def run(args: argparse.Namespace, code: str) -> int:
    options = Options(
        strict=getattr(args, "strict", False),
        block_unbounded_returns=getattr(args, "block_unbounded", False),
    )
    analysis = analyze(code, EffectsTable.default(), options)
    if args.command == "explain":
        if args.json:
            sources = [s.model_dump() for s in analysis.sources]
            report = {"trail": analysis.trail, "explain": analysis.explain(), "sources": sources}
            sys.stdout.write(json.dumps(report, indent=2) + "\n")
        else:
            _out.print(analysis.explain(), markup=False)
        return 0
    if args.json:
        sys.stdout.write(analysis.model_dump_json(indent=2) + "\n")
    else:
        _render(analysis)
    return {"PASS": 0, "WARN": 0, "BLOCK": 1}[analysis.verdict]


def _render(analysis: Analysis) -> None:
    colour = _COLOURS[analysis.verdict]
    bound = f", at most {analysis.bound.value} {analysis.bound.unit}" if analysis.bound else ""
    size = f"bounded{bound}" if analysis.bounded else "unbounded"
    _out.print(f"[bold {colour}]{analysis.verdict}[/]  {analysis.classification.value}, {size}")
    if analysis.trail:
        _out.print(f"  {analysis.explain()}", markup=False)
    if analysis.diagnostics:
        table = Table(show_header=True, box=None, pad_edge=False)
        for column in ("severity", "code", "where", "message"):
            table.add_column(column, overflow="fold")
        for d in analysis.diagnostics:
            where = f"{d.line}:{d.column}" if d.line else "-"
            table.add_row(
                d.severity, d.code, where, d.message + (f"\nfix: {d.fix}" if d.fix else "")
            )
        _out.print(table)
