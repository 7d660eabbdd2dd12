"""``fabric trace|settings|clear``: a workspace's events, settings and stored data."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from fabric._cli_common import fail, report, subcommand
from fabric._config import SETTINGS, ConfigFile, capped
from fabric._events import Events
from fabric._session import existing_workspace
from runtime import Isolation, Sandbox
from store import Facts, Store, StoreError

_out = Console(highlight=False, soft_wrap=True)


def add_parsers(commands: Any) -> None:
    def command(name: str, help: str) -> argparse.ArgumentParser:
        return subcommand(commands, name, help)

    trace = command("trace", "recent events as a table")
    trace.add_argument("count", nargs="?", type=int, default=20, help="how many (default 20)")
    command("settings", "the effective configuration, where each value came from, warnings")
    clear = command("clear", "delete stored results (and with --facts, remembered facts)")
    clear.add_argument("--facts", action="store_true", help="also delete remembered facts")
    clear.add_argument("--yes", action="store_true", help="do not ask for confirmation")


COMMANDS = ("trace", "settings", "clear")


def run(args: argparse.Namespace) -> int:
    try:
        return int(_RUN[args.command](args))
    except StoreError as exc:
        return report(args, exc)


def _print(args: argparse.Namespace, value: Any, text: str) -> None:
    if args.json:
        sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        _out.print(text, markup=False)


def _trace(args: argparse.Namespace) -> int:
    events = Events(Path(args.workspace) / ".fabric" / "events.jsonl").recent(args.count)
    if args.json:
        _print(args, events, "")
        return 0
    table = Table(title=f"last {len(events)} events")
    for column in ("time", "kind", "ok", "policy", "bytes", "returned", "tokens", "verdict", "ms"):
        table.add_column(
            column, justify="right" if column in ("bytes", "returned", "tokens", "ms") else "left"
        )
    for e in events:
        when = datetime.fromtimestamp(e.get("ts", 0), tz=UTC).strftime("%H:%M:%S")
        table.add_row(
            when,
            str(e.get("kind", "")),
            "" if e.get("ok") is None else ("yes" if e.get("ok") else "no"),
            str(e.get("policy") or e.get("mode") or ""),
            str(e.get("bytes", "")),
            str(e.get("text_bytes", "")),
            str(e.get("tokens", "")),
            str(e.get("verdict") or ""),
            str(e.get("ms", "")),
        )
    _out.print(table)
    return 0


def _layers(isolation: Isolation) -> list[dict[str, Any]]:
    """The isolation layers a session of this workspace gets (a zygote is started to ask;
    nothing is written to the workspace)."""

    async def go() -> list[dict[str, Any]]:
        async with Sandbox(spares=0, isolation=isolation) as sandbox:
            return [layer.model_dump() for layer in sandbox.layers]

    return asyncio.run(go())


def _settings(args: argparse.Namespace) -> int:
    config_file = ConfigFile(existing_workspace(args.workspace))
    loaded = capped(config_file.current())
    values = loaded.config.flat()
    layers = _layers(loaded.config.isolation)
    report = {
        "file": str(config_file.path),
        "values": {
            key: {"value": values[key], "source": loaded.sources.get(key, "default")}
            for key in values
        },
        "warnings": list(loaded.warnings),
        "layers": layers,
    }
    if args.json:
        _print(args, report, "")
        return 0
    table = Table(title=f"settings ({config_file.path})")
    for column in ("key", "value", "from"):
        table.add_column(column, overflow="fold")
    for key in SETTINGS:
        table.add_row(key, json.dumps(values[key]), loaded.sources.get(key, "default"))
    _out.print(table)
    active = [layer["name"] for layer in layers if layer["active"]]
    inactive = [layer["name"] for layer in layers if not layer["active"]]
    _out.print(
        f"isolation {values['isolation']}: active {', '.join(active) or 'none'}"
        + (f"; off: {', '.join(inactive)}" if inactive else "")
        + " (`fabric doctor` probes them)",
        markup=False,
    )
    for warning in loaded.warnings:
        _out.print(f"warning: {warning}", markup=False)
    return 0


def _clear(args: argparse.Namespace) -> int:
    if not args.yes:
        if not sys.stdin.isatty():
            fail(args, "needs_confirmation", "`fabric clear` deletes stored results; pass --yes")
            return 1
        what = "stored results" + (" and remembered facts" if args.facts else "")
        if input(f"delete all {what}? [y/N] ").strip().lower() not in ("y", "yes"):
            return 1
    with Store(args.workspace) as store:
        cleared = store.clear()
    facts = 0
    if args.facts:
        with Facts(args.workspace) as memory:
            for fact in memory.list():
                facts += memory.forget(fact.name)
    _print(args, {"cleared": cleared, "facts": facts}, f"cleared {cleared} results, {facts} facts")
    return 0


_RUN = {"trace": _trace, "settings": _settings, "clear": _clear}
