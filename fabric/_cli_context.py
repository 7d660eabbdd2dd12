"""``fabric status|trace|settings|clear|summarize|remember|recall|forget``."""

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
from fabric._session import Fabric
from fabric.mcp._server import status_text
from runtime import Isolation, ProviderCallError, Sandbox
from store import Facts, Store, StoreError

_out = Console(highlight=False, soft_wrap=True)


def add_parsers(commands: Any) -> None:
    def command(name: str, help: str) -> argparse.ArgumentParser:
        return subcommand(commands, name, help)

    status = command("status", "what Fabric did for the context: sizes, offloads, reads, store")
    status.add_argument("--all", action="store_true", help="every session, with settings")
    trace = command("trace", "recent events as a table")
    trace.add_argument("count", nargs="?", type=int, default=20, help="how many (default 20)")
    command("settings", "the effective configuration, where each value came from, warnings")
    clear = command("clear", "delete stored results (and with --facts, remembered facts)")
    clear.add_argument("--facts", action="store_true", help="also delete remembered facts")
    clear.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    summarize = command("summarize", "summarize a file or standard input within a token budget")
    summarize.add_argument("source", metavar="FILE", help="a file, or - for standard input")
    summarize.add_argument("--mode", default="structural", choices=["structural", "code", "model"])
    summarize.add_argument("--max-tokens", type=int, default=500)
    remember = command("remember", "remember a project fact under a name")
    remember.add_argument("name")
    remember.add_argument("text")
    recall = command("recall", "remembered facts matching a query")
    recall.add_argument("query", nargs="?", default="")
    recall.add_argument("--max-tokens", type=int, default=1000)
    forget = command("forget", "forget a remembered fact")
    forget.add_argument("name")


COMMANDS = ("status", "trace", "settings", "clear", "summarize", "remember", "recall", "forget")


def run(args: argparse.Namespace, read_code: Any) -> int:
    try:
        return int(_RUN[args.command](args, read_code))
    except StoreError as exc:
        return report(args, exc)


def _print(args: argparse.Namespace, value: Any, text: str) -> None:
    if args.json:
        sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        _out.print(text, markup=False)


def _status(args: argparse.Namespace, _: Any) -> int:
    root = Path(args.workspace)
    events = Events(root / ".fabric" / "events.jsonl")
    report: dict[str, Any] = {"scope": "lifetime", **events.lifetime()}
    with Store(root) as store:
        usage = store.usage()
        report["store"] = {
            "entries": usage.entries,
            "bytes": usage.bytes,
            "max_bytes": usage.max_bytes,
        }
    if args.all:
        loaded = capped(ConfigFile(root).current())
        report["settings"] = loaded.config.flat()
        report["settings_warnings"] = list(loaded.warnings)
    _print(args, report, status_text(report))
    return 0


def _trace(args: argparse.Namespace, _: Any) -> int:
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


def _settings(args: argparse.Namespace, _: Any) -> int:
    config_file = ConfigFile(Path(args.workspace))
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


def _clear(args: argparse.Namespace, _: Any) -> int:
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


def _summarize(args: argparse.Namespace, read_code: Any) -> int:
    text = read_code(args.source)

    async def go() -> dict[str, Any]:
        async with Fabric(workspace=args.workspace, spares=0) as fab:
            return await fab.summarize(text=text, mode=args.mode, max_tokens=args.max_tokens)

    try:
        done = asyncio.run(go())
    except ProviderCallError as exc:
        fail(args, exc.code, exc.message)
        return 1
    _print(
        args,
        done,
        f"[{done['mode']} summary, {done['tokens']} tokens; source {done['handle']}]\n"
        + done["summary"],
    )
    return 0


def _remember(args: argparse.Namespace, _: Any) -> int:
    with Facts(args.workspace) as memory:
        fact = memory.remember(args.name, args.text)
    _print(args, fact.model_dump(mode="json"), f"remembered {fact.name}")
    return 0


def _recall(args: argparse.Namespace, _: Any) -> int:
    with Facts(args.workspace) as memory:
        found = memory.recall(args.query, max_tokens=args.max_tokens)
    text = "\n".join(f"{f.name}: {f.text}" for f in found.facts) or "no fact matches"
    _print(args, found.model_dump(mode="json"), text)
    return 0


def _forget(args: argparse.Namespace, _: Any) -> int:
    with Facts(args.workspace) as memory:
        existed = memory.forget(args.name)
    _print(
        args, {"name": args.name, "forgotten": existed}, "forgotten" if existed else "no such fact"
    )
    return 0 if existed else 1


_RUN = {
    "status": _status,
    "trace": _trace,
    "settings": _settings,
    "clear": _clear,
    "summarize": _summarize,
    "remember": _remember,
    "recall": _recall,
    "forget": _forget,
}
