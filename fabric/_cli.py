"""The ``fabric`` command line.

``fabric exec FILE|-`` runs a snippet and prints what the model would see; ``--json`` prints
the whole result. ``fabric check`` and ``fabric explain`` diagnose a snippet without running it;
``fabric read HANDLE``, ``fabric summarize``, ``fabric status`` and the other context
operations are made from their table (``_cli_ops``); ``fabric store ...`` looks after stored
payloads; ``fabric doctor`` proves each isolation layer from inside a real worker. The exit
status is 0 on success, 1 when the snippet (or store action) failed, and 2 for a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import sys
from collections.abc import Sequence

from rich.console import Console

from fabric import (
    __version__,
    _cli_check,
    _cli_context,
    _cli_doctor,
    _cli_mcp,
    _cli_ops,
    _cli_store,
)
from fabric._cli_common import report
from fabric._errors import ConfigError
from fabric._session import Fabric
from runtime import MAX_CODE_BYTES
from runtime.boundary import RESULT_FORMATS, RESULT_POLICIES

_err = Console(stderr=True, highlight=False)


def _read_code(source: str) -> str:
    """The snippet in ``source`` (``-``: standard input), read no further than a snippet may
    be long (``/dev/zero`` would never end), as UTF-8 text."""
    where = "the snippet on standard input" if source == "-" else f"snippet file {source!r}"
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_CODE_BYTES + 1)
        else:
            with open(source, "rb") as f:
                data = f.read(MAX_CODE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {where}: {exc.strerror}") from None
    if len(data) > MAX_CODE_BYTES:
        raise ConfigError(
            f"{where} is larger than {MAX_CODE_BYTES} bytes, the most a snippet may be: keep "
            "data in files or the store and read it from the snippet"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{where} is not UTF-8 text") from None


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv``; a flag the chosen command does not know gets the near one it does, in
    that command's own usage message."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        chosen = _chosen(parser, args)
        known = sorted(o for p in chosen for a in p._actions for o in a.option_strings)
        message = "unrecognized arguments: " + " ".join(extra)
        for word in extra:
            near = difflib.get_close_matches(word.split("=")[0], known, n=1, cutoff=0.75)
            if word.startswith("-") and near:
                message += f" (did you mean {near[0]}?)"
        chosen[-1].error(message)
    return args


def _chosen(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> list[argparse.ArgumentParser]:
    """The parser and the (sub)commands ``args`` chose, outermost first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub = action.choices.get(getattr(args, action.dest, None) or "")
            if sub is not None:
                return [parser, *_chosen(sub, args)]
    return [parser]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fabric", description="Code-mode runtime for LLM agents.")
    parser.add_argument("--version", action="version", version=f"fabric {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("exec", help="run a snippet in the sandbox and print the result")
    run.add_argument("source", metavar="FILE", help="snippet file, or - for standard input")
    run.add_argument("--workspace", default=".", help="workspace folder (default: .)")
    run.add_argument("--json", action="store_true", help="print the whole result as JSON")
    run.add_argument(
        "--timeout", type=float, help="wall-clock limit in seconds (default: timeoutS, 30)"
    )
    run.add_argument("--memory", type=int, help="memory limit in MiB (default: memoryMb, 512)")
    run.add_argument(
        "--policy", choices=RESULT_POLICIES, help="result policy (default: resultPolicy, auto)"
    )
    run.add_argument(
        "--format", choices=RESULT_FORMATS, help="result format (default: resultFormat, auto)"
    )
    run.add_argument(
        "--strict", action="store_true", help="refuse unbounded returns before running"
    )
    _cli_check.add_parsers(commands)
    _cli_ops.add_parsers(commands)
    _cli_context.add_parsers(commands)
    serve = commands.add_parser("mcp", help="serve Fabric's tools over MCP (stdio, or --http)")
    serve.add_argument("--workspace", default=".", help="workspace folder (default: .)")
    serve.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="HTTP address (default 127.0.0.1; others need --token-env)",
    )
    serve.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765; 0: any)")
    serve.add_argument(
        "--token-env",
        metavar="NAME",
        help="require 'Authorization: Bearer <token>', the token read from variable NAME",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name clients reach the server by, for the Host check (repeatable)",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed to call, e.g. http://localhost:5173 (repeatable)",
    )
    serve.add_argument("--log-file", help="write logs here instead of standard error")
    _cli_store.add_parser(commands)
    _cli_doctor.add_parser(commands)
    _cli_mcp.add_parser(commands)
    return parser


async def _exec(args: argparse.Namespace) -> int:
    code = _read_code(args.source)
    fab = Fabric(workspace=args.workspace, spares=0)
    async with fab:
        result = await fab.exec(
            code,
            timeout=args.timeout,
            memory_mb=args.memory,
            policy=args.policy,
            result_format=args.format,
            strict=args.strict or None,
        )
        if fab.warnings:  # the settings' own problems: a bad key in config.json, say
            result = result.model_copy(update={"warnings": (*fab.warnings, *result.warnings)})
    if args.json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(result.text + ("" if result.text.endswith("\n") else "\n"))
        for warning in result.warnings:
            _err.print(f"[yellow]warning:[/] {warning}", markup=True, highlight=False)
    return 0 if result.ok else 1


def _serve(args: argparse.Namespace) -> int:
    import logging

    import anyio

    from fabric._errors import ConfigError
    from fabric.mcp import HttpSettings, read_token, serve

    http = None
    if args.http:
        http = HttpSettings(
            host=args.host,
            port=args.port,
            token=None if args.token_env is None else read_token(args.token_env),
            allow_hosts=tuple(args.allow_host),
            allow_origins=tuple(args.allow_origin),
        )
    elif args.token_env is not None or args.allow_host or args.allow_origin:
        raise ConfigError("--token-env, --allow-host and --allow-origin need --http")
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=logging.INFO, force=True)

    def ready(url: str) -> None:
        guard = "bearer token required" if http and http.token else "no token: loopback only"
        sys.stderr.write(f"fabric mcp: serving streamable HTTP on {url} ({guard})\n")
        sys.stderr.flush()

    async def run() -> None:
        async with Fabric(workspace=args.workspace) as fab:
            for warning in fab.warnings:
                logging.getLogger("fabric").warning(warning)
            if http is None:  # stdout carries the protocol: the one line goes to stderr
                sys.stderr.write(
                    f"fabric mcp: serving MCP on stdio for the workspace {fab.workspace.root}\n"
                )
                sys.stderr.flush()
            await serve(fab, http, ready=ready)

    anyio.run(run)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(_parser(), argv)
    try:
        if args.command == "exec":
            return asyncio.run(_exec(args))
        if args.command == "store":
            return _cli_store.run(args)
        if args.command in _cli_ops.commands():
            return _cli_ops.run(args)
        if args.command == "mcp":
            return _serve(args)
        if args.command == "doctor":
            return _cli_doctor.run(args)
        if args.command == _cli_mcp.COMMAND:
            return _cli_mcp.run(args)
        if args.command in _cli_context.COMMANDS:
            return _cli_context.run(args)
        if args.command == "explain" and args.last:
            return _cli_check.last(args)
        if args.command in ("check", "explain"):
            if args.source is None:
                raise ConfigError("name a snippet FILE (or - for standard input), or pass --last")
            return _cli_check.run(args, _read_code(args.source))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # one translation for every failure; no traceback for a user
        return report(args, exc)
    return 2


if __name__ == "__main__":
    sys.exit(main())
