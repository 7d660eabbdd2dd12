"""What the ``fabric`` subcommands share."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape


def subcommand(
    commands: Any, name: str, help: str, *, nested: bool = False
) -> argparse.ArgumentParser:
    """A subcommand that works on a workspace and can print JSON. ``nested``: an action of a
    command that takes the same flags itself (``fabric store --workspace X list``), so the
    action's flags apply only when given."""
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help)
    workspace: Any = argparse.SUPPRESS if nested else "."
    json_flag: Any = argparse.SUPPRESS if nested else False
    parser.add_argument("--workspace", default=workspace, help="workspace folder (default: .)")
    parser.add_argument("--json", action="store_true", default=json_flag, help="print JSON")
    return parser


FLAGS = {"timeout": "--timeout", "timeout_s": "--timeout", "memory_mb": "--memory"}
"""``fabric exec``'s parameters as a terminal user types them, for error messages (the
commands made from operations have their own, from the operation's model)."""


def report(
    args: argparse.Namespace, exc: BaseException, names: Mapping[str, str] | None = None
) -> int:
    """Print ``exc`` as the user sees it (``error_payload``, parameters named as ``names``
    says, else as ``FLAGS``); the exit status: 2 for a usage mistake, else 1."""
    from fabric._translate import error_payload

    payload = error_payload(exc, FLAGS if names is None else names)
    fail(args, payload.code, payload.message)
    return 2 if payload.usage else 1


def fail(args: argparse.Namespace, code: str, message: str) -> None:
    """An error: JSON on stdout under ``--json``, else a line on stderr."""
    if getattr(args, "json", False):
        error = {"error": {"code": code, "message": message}}
        sys.stdout.write(json.dumps(error, ensure_ascii=False) + "\n")
    else:
        Console(stderr=True, highlight=False).print(
            f"[bold red]error ({code}):[/] {escape(message)}", markup=True
        )
