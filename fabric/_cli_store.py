"""``fabric store list|show|search|gc|clear``: look after a workspace's stored payloads."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from fabric._cli_common import report, subcommand
from store import Entry, Store, StoreError

_out = Console(highlight=False, soft_wrap=True)
_SHOW_BYTES = 2048


def add_parser(commands: Any) -> None:
    """Register ``fabric store`` and its subcommands on the top-level subparsers."""
    parser = subcommand(commands, "store", "list, show, search and clean stored payloads")
    sub = parser.add_subparsers(dest="store_command", required=True, metavar="ACTION")

    def action(name: str, help: str) -> argparse.ArgumentParser:
        return subcommand(sub, name, help, nested=True)

    listing = action("list", "live handles, most recently used first")
    listing.add_argument("--limit", type=int, default=50, help="entries to show (default 50)")
    listing.add_argument("--order", choices=["recent", "created", "largest"], default="recent")
    show = action("show", "one entry: where it came from, its size, and its first bytes")
    show.add_argument("handle", help="a handle (or key) from `fabric store list`")
    show.add_argument("--raw", action="store_true", help="write the exact stored bytes to stdout")
    # The literal scan, not the index: it reads every byte, so it finds text inside words,
    # punctuation and whatever lies past a payload's indexed head. `fabric search` asks the
    # full-text index (ranked words, fast); they answer different questions.
    search = action(
        "search",
        "find the lines of stored payloads that contain a literal text, reading every byte "
        "(`fabric search` asks the ranked word index instead)",
    )
    search.description = (
        "Find the lines of stored payloads that contain a literal text, case-insensitively, "
        "reading every byte: text inside words, punctuation, past the indexed head of a large "
        "payload. `fabric search` finds whole words in the full-text index, ranked (BM25)."
    )
    search.add_argument("query", help="literal text, matched case-insensitively")
    search.add_argument("--handle", help="search only this handle")
    search.add_argument("--max-hits", type=int, default=20)
    gc = action("gc", "expire, evict to budget and remove leftovers now")
    gc.add_argument("--verify", action="store_true", help="re-hash every blob (slow)")
    clear = action("clear", "delete every stored payload of the workspace")
    clear.add_argument("--yes", action="store_true", help="do not ask for confirmation")


def run(args: argparse.Namespace) -> int:
    try:
        with Store(args.workspace) as store:
            return _ACTIONS[args.store_command](store, args)
    except StoreError as exc:
        return report(args, exc)


def _list(store: Store, args: argparse.Namespace) -> int:
    entries = store.list(limit=args.limit, order=args.order)
    usage = store.usage()
    if args.json:
        _print_json({"entries": _dump(entries), "usage": usage.model_dump()})
        return 0
    table = Table(
        title=f"{usage.entries} entries, {_size(usage.bytes)} of {_size(usage.max_bytes)}",
        box=None,
        pad_edge=False,
        title_justify="left",
    )
    columns = ("handle", "type", "size", "tokens", "source", "used", "expires")
    rows = [
        (
            e.handle,
            e.content_type,
            _size(e.bytes),
            str(e.tokens),
            str(e.source),
            _ago(e.accessed),
            _ago(e.expires),
        )
        for e in entries
    ]
    for n, column in enumerate(columns):
        # a handle is copied whole into ctx.read: only the source gives way to a narrow terminal
        if column == "source":
            table.add_column(column, overflow="fold", min_width=8)
        else:
            widest = max([len(column), *(len(row[n]) for row in rows)])
            table.add_column(column, no_wrap=True, min_width=widest)
    for row in rows:
        table.add_row(*row)
    _out.print(table)
    return 0


def _show(store: Store, args: argparse.Namespace) -> int:
    if args.raw:
        sys.stdout.buffer.write(store.get(args.handle))
        return 0
    entry = store.stat(args.handle)
    head = store.read_range(entry.handle, 0, _SHOW_BYTES)
    if args.json:
        _print_json({"entry": entry.model_dump(mode="json"), "head": head.text})
        return 0
    table = Table(show_header=False, box=None)
    for name, value in (
        ("handle", entry.handle),
        ("key", entry.key or "-"),
        ("source", str(entry.source)),
        ("type", entry.content_type),
        ("size", f"{_size(entry.bytes)} ({entry.bytes} bytes, about {entry.tokens} tokens)"),
        ("sha256", entry.sha256),
        ("created", _when(entry.created)),
        ("used", _when(entry.accessed)),
        ("expires", _when(entry.expires)),
    ):
        table.add_row(f"[bold]{name}[/]", value)
    _out.print(table, soft_wrap=False)
    _out.print()
    _out.print(head.text if entry.content_type != "bytes" else repr(head.data[:256]), markup=False)
    if head.next_offset is not None:
        _out.print(
            f"[dim]... {entry.bytes - head.next_offset} more bytes; "
            f"`fabric store show {entry.handle} --raw` prints them all[/]"
        )
    return 0


def _search(store: Store, args: argparse.Namespace) -> int:
    found = store.scan(args.query, handle=args.handle, max_hits=args.max_hits)
    if args.json:
        _print_json(found.model_dump(mode="json"))
        return 0
    table = Table(title=f"{len(found.hits)} hits for {found.query!r}")
    for column in ("handle", "line", "text"):
        table.add_column(column, overflow="fold")
    for hit in found.hits:
        table.add_row(hit.handle, str(hit.line), hit.text)
    _out.print(table, soft_wrap=False)
    if not found.complete:
        _out.print("[dim]the scan stopped at its budget; narrow it with --handle[/]")
    return 0


def _gc(store: Store, args: argparse.Namespace) -> int:
    report = store.gc(verify=args.verify)
    if args.json:
        _print_json(report.model_dump())
        return 0
    table = Table(title="garbage collection")
    table.add_column("removed")
    table.add_column("count", justify="right")
    for name, value in report.model_dump().items():
        table.add_row(name.replace("_", " "), _size(value) if name == "bytes_freed" else str(value))
    _out.print(table, soft_wrap=False)
    return 0


def _clear(store: Store, args: argparse.Namespace) -> int:
    if not args.yes:
        if not sys.stdin.isatty():
            raise _Refused("`fabric store clear` deletes every stored payload; pass --yes")
        usage = store.usage()
        answer = input(f"delete {usage.entries} entries ({_size(usage.bytes)})? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            return 1
    count = store.clear()
    if args.json:
        _print_json({"cleared": count})
    else:
        _out.print(f"cleared {count} entries")
    return 0


class _Refused(StoreError):
    """A destructive action asked for without confirmation."""


_ACTIONS = {"list": _list, "show": _show, "search": _search, "gc": _gc, "clear": _clear}


def _dump(models: list[Entry]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in models]


def _print_json(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _when(moment: datetime) -> str:
    return f"{moment.strftime('%Y-%m-%d %H:%M:%S UTC')} ({_ago(moment)})"


def _ago(moment: datetime) -> str:
    seconds = (moment - datetime.now(UTC)).total_seconds()
    future, span = seconds > 0, abs(seconds)
    for unit, length in (("d", 86400), ("h", 3600), ("m", 60)):
        if span >= length:
            text = f"{span / length:.0f}{unit}"
            break
    else:
        text = f"{span:.0f}s"
    return f"in {text}" if future else f"{text} ago"
