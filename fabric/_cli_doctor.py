"""``fabric doctor [--json]``: prove each isolation layer from inside a real worker.

Lists the layers (``name``, ``active``, ``detail``), then runs the probes with the language
layer bypassed and prints whether each was denied. Exit status 0 only when every probe was
denied, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from fabric._cli_common import subcommand
from fabric._session import Fabric
from runtime import ISOLATIONS, DoctorReport

_out = Console(highlight=False, soft_wrap=True)


def add_parser(commands: Any) -> None:
    doctor = subcommand(
        commands, "doctor", "show each isolation layer and probe it from inside a real worker"
    )
    doctor.add_argument(
        "--isolation",
        choices=ISOLATIONS,
        help="probe this isolation mode instead of the configured one",
    )


def run(args: argparse.Namespace) -> int:
    async def go() -> DoctorReport:
        async with Fabric(workspace=args.workspace, spares=0, isolation=args.isolation) as fab:
            return await fab.doctor()

    report = asyncio.run(go())
    if args.json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        _render(report)
    return 0 if report.ok else 1


def _table(title: str, columns: tuple[str, str, str], rows: list[tuple[str, str, str]]) -> None:
    table = Table(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    _out.print(table)


def _render(report: DoctorReport) -> None:
    _table(
        f"isolation layers ({report.isolation})",
        ("layer", "active", "detail"),
        [(x.name, "[green]yes[/]" if x.active else "[red]no[/]", x.detail) for x in report.layers],
    )
    _table(
        "probes from inside a worker, language layer bypassed",
        ("probe", "denied", "detail"),
        [
            (p.name, "[green]yes[/]" if p.denied else "[bold red]NO[/]", p.detail)
            for p in report.probes
        ],
    )
    if report.ok:
        _out.print("[green]every probe was denied[/]")
    else:
        escaped = ", ".join(p.name for p in report.probes if not p.denied)
        _out.print(f"[bold red]not contained:[/] {escaped}")
