"""``fabric check FILE|-`` (ce_exec: the diagnosis without running) and ``fabric explain``."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from analyzer import Analysis, EffectsTable, Options, analyze
from fabric._cli_common import fail
from fabric._events import Events

_out = Console(highlight=False, soft_wrap=True)
_LOOK_BACK = 200
"""Events read back to find the last execution."""
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
    explain.add_argument(
        "source", metavar="FILE", nargs="?", help="snippet file, or - for standard input"
    )
    explain.add_argument(
        "--last",
        action="store_true",
        help="the workspace's last execution instead: the verdict beside what came back",
    )
    explain.add_argument("--workspace", default=".", help="workspace folder (default: .)")
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


def last(args: argparse.Namespace) -> int:
    """``fabric explain --last``: the analyzer's verdict on the workspace's last execution
    beside the real size of what came back."""
    events = Events(Path(args.workspace) / ".fabric" / "events.jsonl").recent(_LOOK_BACK)
    runs = [e for e in events if e.get("kind") == "exec"]
    if not runs:
        fail(args, "not_found", f"no execution is recorded in {args.workspace}/.fabric yet")
        return 1
    run_event = runs[-1]
    wrong = run_event.get("mismatch")
    keys = ("verdict", "classification", "bounded", "bound", "estimate_bytes", "estimate_tokens")
    said: dict[str, Any] = {key: run_event.get(key) for key in keys}
    actual: dict[str, Any] = {"bytes": run_event.get("bytes"), "tokens": run_event.get("tokens")}
    checked = bool(run_event.get("checked"))
    report = {
        "ts": run_event.get("ts"),
        "analyzer": said,
        "actual": actual,
        "checked": checked,
        "mismatch": wrong,
    }
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return 0
    if said["classification"] is None:
        _out.print("the last execution has no analysis (it was not analysed)", markup=False)
        return 0
    size = "bounded" if said["bounded"] else "unbounded"
    if said["bound"]:
        size += f", at most {said['bound']}"
    if said["estimate_bytes"] is not None:
        size += f", estimated {said['estimate_bytes']} bytes ({said['estimate_tokens']} tokens)"
    when = datetime.fromtimestamp(run_event.get("ts") or 0, tz=UTC).strftime("%H:%M:%S")
    _out.print(f"last execution ({when})", markup=False)
    _out.print(f"  analyzer: {said['verdict']} {said['classification']}, {size}", markup=False)
    _out.print(f"  actual:   {actual['bytes']} bytes ({actual['tokens']} tokens)", markup=False)
    if wrong:
        verdict = f"mismatch ({wrong})"
    else:
        verdict = "the verdict held" if checked else "not checked (the run failed)"
    _out.print(f"  {verdict}", markup=False)
    return 0


def _render(analysis: Analysis) -> None:
    colour = _COLOURS[analysis.verdict]
    bound = f", at most {analysis.bound.value} {analysis.bound.unit}" if analysis.bound else ""
    size = f"bounded{bound}" if analysis.bounded else "unbounded"
    if analysis.estimate is not None:
        size += f", estimated about {analysis.estimate.tokens} tokens"
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
