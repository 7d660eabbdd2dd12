"""The workspace tools, ``tools.*``, as one session registers them, each with its risk class.

=========  ==========================================================  ========
tool       bounds                                                      risk
=========  ==========================================================  ========
read       files up to 256 MiB                                         read
read_json  files up to 64 MiB                                          read
ls         10,000 entries                                              read
glob       ``max_results`` (200; at most 10,000), 200,000 entries      read
           looked at, 10 s
grep       ``max_results`` (200; at most 10,000), 500 characters a     read
           line, 5 s for the whole call
write      16 MiB of content, 32 new folders                           write
edit       files up to 16 MiB, a diff of at most 8 KiB                 write
bash       ``timeout_s`` (120; at most 600), 64 KiB of each stream,    execute
           64 KiB of command
=========  ==========================================================  ========
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fabric.providers._bash import DEFAULT_TIMEOUT_S, run_bash
from fabric.providers._files import (
    MAX_GREP_RESULTS,
    SKIPPED_DIRS,
    Workspace,
    grep_lines,
    list_entries,
    parse_json,
    read_text,
)
from fabric.providers._glob import MAX_GLOB_RESULTS, glob_paths
from fabric.providers._write import edit_file, write_file
from runtime import ProviderCallError, run_sync


def _never() -> bool:
    return False


def _always() -> bool:
    return True


def register_file_tools(
    registry: Any,
    workspace: Workspace,
    *,
    sandbox: Callable[[], bool] = _always,
    network: Callable[[], bool] = _never,
) -> None:
    """Register the ``tools.*`` of ``workspace`` in ``registry``.

    ``sandbox()`` says, at each ``tools.bash`` call, whether the command runs contained (the
    ``bashSandbox`` setting); ``network()`` whether a contained command may use the network
    (by default never)."""
    root = workspace.root

    async def read(
        path: str, offset: int = 0, limit: int | None = None, encoding: str = "utf-8"
    ) -> str:
        """Read a workspace file as text (at most 256 MiB); offset and limit count lines."""
        if offset < 0 or (limit is not None and limit < 0):
            raise ProviderCallError("offset and limit must be >= 0", code="bad_arguments")
        return await run_sync(read_text, workspace, path, offset, limit, encoding)

    async def read_json(path: str) -> Any:
        """Parse a workspace JSON file (at most 64 MiB); a syntax error names line and column."""
        return await run_sync(parse_json, workspace, path)

    async def ls(
        path: str = ".", recursive: bool = False, glob: str | None = None
    ) -> list[dict[str, Any]]:
        """List a workspace folder (at most 10,000 entries): [{name, type, size}]."""
        return await run_sync(list_entries, workspace, path, recursive, glob)

    async def glob(pattern: str, path: str = ".", max_results: int = 200) -> list[str]:
        """Workspace paths matching a pattern ('**' crosses folders), sorted, at most
        max_results (10,000); never .fabric."""
        _results(max_results, MAX_GLOB_RESULTS)
        return await run_sync(glob_paths, root, pattern, path, max_results, SKIPPED_DIRS)

    async def grep(
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        ignore_case: bool = False,
        literal: bool = False,
        max_results: int = 200,
    ) -> list[dict[str, Any]]:
        """Search workspace text files (ripgrep first when on PATH): [{path, line, text}], at
        most max_results (10,000), lines cut at 500 characters, 5 s a call."""
        _results(max_results, MAX_GREP_RESULTS)
        return await run_sync(
            grep_lines, workspace, pattern, path, glob, ignore_case, literal, max_results
        )

    async def write(path: str, content: str) -> dict[str, Any]:
        """Create or replace a workspace text file atomically (UTF-8, at most 16 MiB); missing
        parent folders are made."""
        return await run_sync(write_file, root, path, content)

    async def edit(path: str, old: str, new: str, count: int = 1) -> dict[str, Any]:
        """Replace exactly `count` occurrences of `old` by `new` (files up to 16 MiB); returns
        {ok, path, replacements, diff}, the diff cut at 8 KiB."""
        return await run_sync(edit_file, root, path, old, new, count)

    async def bash(
        command: str, timeout_s: float = DEFAULT_TIMEOUT_S, cwd: str = ".", settle: bool = False
    ) -> dict[str, Any]:
        """Run a shell command in the workspace, contained: {ok, exit_code, stdout, stderr},
        each stream capped at 64 KiB, timeout_s at most 600; a nonzero exit raises unless
        settle=True."""
        return await run_bash(
            root, command, timeout_s, cwd, settle, contained=sandbox(), network=network()
        )

    risks = {"read": (read, read_json, ls, glob, grep), "write": (write, edit), "execute": (bash,)}
    for risk, funcs in risks.items():
        for func in funcs:
            registry.register("tools", func.__name__, func, replace=True, risk=risk)


def _results(max_results: int, cap: int) -> None:
    if not 1 <= max_results <= cap:
        raise ProviderCallError(f"max_results must be between 1 and {cap}", code="bad_arguments")
