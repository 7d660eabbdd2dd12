"""``fabric read HANDLE``: the ctx_read tool from the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fabric._cli_common import report
from fabric._context import ContextTools
from fabric._events import Events
from fabric.providers import Workspace
from runtime import ReadError
from runtime.boundary import Boundary
from store import Store, StoreError


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "read", help="read part of a stored result: a byte range, a query, or a JSON path"
    )
    parser.add_argument("handle", help="a handle (or key) from an offload notice, or a file path")
    parser.add_argument("--workspace", default=".", help="workspace folder (default: .)")
    parser.add_argument("--offset", type=int, help="first byte of a range")
    parser.add_argument("--length", type=int, help="bytes of a range")
    parser.add_argument("--query", help="text to find (literal, case-sensitive)")
    parser.add_argument("--regex", action="store_true", help="the query is a regular expression")
    parser.add_argument("--ignore-case", action="store_true", help="match the query in any case")
    parser.add_argument("--max-matches", type=int, default=100, help="windows to show (1-500)")
    parser.add_argument("--context", type=int, default=1, help="lines around each match")
    parser.add_argument("--json-path", help="e.g. '$.items[0:5]' or '$.items[*].name'")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")


def run(args: argparse.Namespace) -> int:
    try:
        with Store(args.workspace) as store:
            events = Events(Path(args.workspace) / ".fabric" / "events.jsonl")
            tools = ContextTools(Boundary(store), Workspace(args.workspace), events.record)
            found = tools.read(
                args.handle,
                offset=args.offset,
                length=args.length,
                query=args.query,
                regex=args.regex,
                ignore_case=args.ignore_case,
                max_matches=args.max_matches,
                context=args.context,
                json_path=args.json_path,
            )
    except (ReadError, StoreError) as exc:
        return report(args, exc)
    if args.json:
        sys.stdout.write(found.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(found.text + ("" if found.text.endswith("\n") else "\n"))
    return 0
