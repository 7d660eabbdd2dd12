"""What the ``fabric`` subcommands share."""

from __future__ import annotations

import argparse
from typing import Any


def subcommand(commands: Any, name: str, help: str) -> argparse.ArgumentParser:
    """A subcommand that works on a workspace and can print JSON."""
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help)
    parser.add_argument("--workspace", default=".", help="workspace folder (default: .)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    return parser
