"""The commands made from the table of operations: ``fabric read``, ``fabric summarize``,
``fabric remember``... one flag per field of the operation's model (``max_matches`` is
``--max-matches``), its positional fields as arguments, its file fields read from a file or
standard input. A flag left out lets the model's default apply."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from fabric._cli_common import report, subcommand
from fabric._errors import ConfigError
from fabric._operations import OPERATIONS, Operation, Reply
from fabric._translate import describe


def commands() -> dict[str, Operation]:
    """The commands made from the table, by name."""
    return {op.command: op for op in OPERATIONS.values() if op.offered_on("cli")}


def add_parsers(commands: Any) -> None:
    for op in OPERATIONS.values():
        if not op.offered_on("cli"):
            continue
        parser = subcommand(commands, op.command, op.help[:1].lower() + op.help[1:])
        parser.description = op.full_description
        for name, info in op.args.model_fields.items():
            _add(parser, op, name, info)


def flags(op: Operation) -> dict[str, str]:
    """Each field by what a terminal user types for it (``--max-matches``, ``FILE``)."""
    names = {}
    for name in op.args.model_fields:
        if name in op.cli.files:
            names[name] = "FILE"
        elif name in op.cli.positional:
            names[name] = name.upper()
        else:
            names[name] = _flag(name)
    return names


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _add(parser: argparse.ArgumentParser, op: Operation, name: str, info: FieldInfo) -> None:
    default = op.cli.defaults.get(name, info.default)
    said = info.description or ""
    low, high = _bound(info, "ge"), _bound(info, "le")
    notes = []
    if low is not None and high is not None:
        notes.append(f"{low} to {high}")
    elif low is not None:
        notes.append(f"at least {low}")
    elif high is not None:
        notes.append(f"at most {high}")
    if default not in (None, False, "") and not info.is_required():
        notes.insert(0, f"default: {default}")
    if notes:
        said += f" ({'; '.join(notes)})"
    if name in op.cli.files or name in op.cli.positional:
        metavar = "FILE" if name in op.cli.files else name.upper()
        if name in op.cli.files:
            said += "; - reads standard input"
        parser.add_argument(
            name,
            metavar=metavar,
            nargs=None if info.is_required() else "?",
            default=argparse.SUPPRESS,
            help=said,
        )
        return
    kind = _plain(info.annotation)
    flag = _flag(name)
    if kind is bool:
        action = argparse.BooleanOptionalAction if default is True else "store_true"
        parser.add_argument(flag, dest=name, action=action, default=argparse.SUPPRESS, help=said)
    elif get_origin(kind) is Literal:
        parser.add_argument(
            flag, dest=name, choices=get_args(kind), default=argparse.SUPPRESS, help=said
        )
    else:
        parser.add_argument(
            flag,
            dest=name,
            type=kind if kind in (int, float) else str,
            default=argparse.SUPPRESS,
            help=said,
        )


def _bound(info: FieldInfo, which: str) -> Any:
    """The field's ``ge`` or ``le`` bound, if it has one."""
    return next((getattr(m, which) for m in info.metadata if hasattr(m, which)), None)


def _plain(annotation: Any) -> Any:
    """``int`` for ``int | None``."""
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


def run(args: argparse.Namespace) -> int:
    op = commands()[args.command]
    names = flags(op)
    try:
        arguments = dict(op.cli.defaults)
        for name in op.args.model_fields:
            if hasattr(args, name):
                value = getattr(args, name)
                arguments[name] = _read(value, op, name) if name in op.cli.files else value
        try:
            values = op.args.model_validate(arguments)
        except ValidationError as exc:
            raise ConfigError(describe(exc, names)) from None
        done = asyncio.run(_serve(op, Path(args.workspace), values))
    except Exception as exc:
        return report(args, exc, names)
    if args.json:  # the data, and the text a person reads beside it
        data = done.data
        if isinstance(data, dict):
            data = {**data, op.text_key or "text": done.text}
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        sys.stdout.write(done.text + ("" if done.text.endswith("\n") else "\n"))
    return 0 if done.ok else 1


async def _serve(op: Operation, workspace: Path, values: Any) -> Reply:
    """One call on a session of ``workspace`` that starts no sandbox."""
    from fabric._session import Fabric

    fab = Fabric(workspace=workspace, spares=0)
    try:
        return await op(fab, values, "cli")
    finally:
        await fab.close()


def _read(source: str, op: Operation, name: str) -> Any:
    """The content of the file ``source`` names (``-``: standard input): text, or bytes
    where the field takes any data and the file is not UTF-8."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {source!r}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        if op.args.model_fields[name].annotation is Any:
            return data
        raise ConfigError(f"{source!r} is not UTF-8 text") from None
