"""``tools.read``, ``tools.ls`` and ``tools.grep``: the workspace, read-only.

Every path is resolved (symlinks included) and must stay inside the workspace; the
store under ``.fabric/`` is not listed or searched. File work runs in a thread so a large
file never stalls the host's event loop, and grep patterns run under a time limit so a
catastrophic regular expression cannot hang the host.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
from pathlib import Path
from typing import Any

import regex

from runtime import ProviderCallError

MAX_READ_BYTES = 256 * 1024 * 1024
MAX_LS_ENTRIES = 10_000
MAX_GREP_RESULTS = 10_000
GREP_LINE_CHARS = 500
GREP_TIMEOUT_S = 5.0
SKIPPED_DIRS = frozenset({".git", ".fabric", ".hg", ".svn", "__pycache__", ".venv", "node_modules"})


class Workspace:
    """The folder snippets may read."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()

    def resolve(self, path: str) -> Path:
        if "\x00" in path:
            raise ProviderCallError("path contains a NUL byte", code="bad_path")
        candidate = (self.root / path).resolve()
        if candidate != self.root and self.root not in candidate.parents:
            raise ProviderCallError(
                f"path {path!r} is outside the workspace {self.root}; use a path inside it",
                code="outside_workspace",
            )
        return candidate

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head


def _read(ws: Workspace, path: str, offset: int, limit: int | None, encoding: str) -> str:
    target = ws.resolve(path)
    if target.is_dir():
        raise ProviderCallError(f"{path!r} is a directory; use tools.ls", code="is_directory")
    if not target.is_file():
        raise ProviderCallError(f"{path!r} does not exist in the workspace", code="not_found")
    size = target.stat().st_size
    if size > MAX_READ_BYTES:
        raise ProviderCallError(
            f"{path!r} is {size} bytes, above the {MAX_READ_BYTES}-byte read limit",
            code="too_large",
        )
    data = target.read_bytes()
    try:
        text = data.decode(encoding)
    except LookupError:
        raise ProviderCallError(f"unknown encoding {encoding!r}", code="bad_arguments") from None
    except UnicodeDecodeError as exc:
        raise ProviderCallError(
            f"{path!r} is not {encoding} text (byte {exc.start}); it may be binary",
            code="not_text",
        ) from None
    if offset or limit is not None:
        lines = text.splitlines(keepends=True)
        end = None if limit is None else offset + limit
        text = "".join(lines[offset:end])
    return text


def _entry(ws: Workspace, path: Path) -> dict[str, Any]:
    kind = "symlink" if path.is_symlink() else "dir" if path.is_dir() else "file"
    size = path.lstat().st_size if kind == "file" else 0
    return {"name": ws.relative(path), "type": kind, "size": size}


def _ls(ws: Workspace, path: str, recursive: bool, glob: str | None) -> list[dict[str, Any]]:
    base = ws.resolve(path)
    if not base.is_dir():
        raise ProviderCallError(f"{path!r} is not a directory in the workspace", code="not_found")
    entries: list[dict[str, Any]] = []
    if recursive:
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            for name in [*dirs, *sorted(files)]:
                entries.append(_entry(ws, Path(folder) / name))
                if len(entries) > MAX_LS_ENTRIES:
                    raise ProviderCallError(
                        f"more than {MAX_LS_ENTRIES} entries under {path!r}; "
                        "narrow the path or pass glob=",
                        code="too_many",
                    )
    else:
        entries = [_entry(ws, p) for p in sorted(base.iterdir()) if p.name not in (".fabric",)]
    if glob:
        entries = [e for e in entries if fnmatch.fnmatch(e["name"], glob)]
    return entries


def _files_under(ws: Workspace, base: Path, glob: str | None) -> list[Path]:
    if base.is_file():
        return [base]
    found: list[Path] = []
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(folder) / name
            if (
                glob is None
                or fnmatch.fnmatch(ws.relative(path), glob)
                or fnmatch.fnmatch(name, glob)
            ):
                found.append(path)
    return found


def _grep(
    ws: Workspace,
    pattern: str,
    path: str,
    glob: str | None,
    ignore_case: bool,
    literal: bool,
    max_results: int,
) -> list[dict[str, Any]]:
    flags = regex.IGNORECASE if ignore_case else 0
    try:
        compiled = regex.compile(regex.escape(pattern) if literal else pattern, flags)
    except regex.error as exc:
        raise ProviderCallError(
            f"invalid regular expression {pattern!r}: {exc}; pass literal=True to search "
            "for the text as it is",
            code="invalid_regex",
        ) from None
    base = ws.resolve(path)
    if not base.exists():
        raise ProviderCallError(f"{path!r} does not exist in the workspace", code="not_found")
    matches: list[dict[str, Any]] = []
    for file in _files_under(ws, base, glob):
        try:
            data = file.read_bytes()
        except OSError:
            continue
        if _is_binary(data[:8192]):
            continue
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            try:
                hit = compiled.search(line, timeout=GREP_TIMEOUT_S)
            except TimeoutError:
                raise ProviderCallError(
                    f"the pattern {pattern!r} took too long on {ws.relative(file)}:{number}; "
                    "simplify it",
                    code="regex_timeout",
                ) from None
            if hit:
                matches.append(
                    {"path": ws.relative(file), "line": number, "text": line[:GREP_LINE_CHARS]}
                )
                if len(matches) >= max_results:
                    return matches
    return matches


def register_file_tools(registry: Any, workspace: Workspace) -> None:
    """Register ``tools.read``, ``tools.ls`` and ``tools.grep`` for ``workspace``."""

    async def read(
        path: str, offset: int = 0, limit: int | None = None, encoding: str = "utf-8"
    ) -> str:
        """Read a workspace file as text; offset and limit count lines."""
        if offset < 0 or (limit is not None and limit < 0):
            raise ProviderCallError("offset and limit must be >= 0", code="bad_arguments")
        return await asyncio.to_thread(_read, workspace, path, offset, limit, encoding)

    async def ls(
        path: str = ".", recursive: bool = False, glob: str | None = None
    ) -> list[dict[str, Any]]:
        """List a workspace folder: [{name, type, size}], names relative to the workspace."""
        return await asyncio.to_thread(_ls, workspace, path, recursive, glob)

    async def grep(
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        ignore_case: bool = False,
        literal: bool = False,
        max_results: int = 200,
    ) -> list[dict[str, Any]]:
        """Search workspace text files: [{path, line, text}]."""
        if not 1 <= max_results <= MAX_GREP_RESULTS:
            raise ProviderCallError(
                f"max_results must be between 1 and {MAX_GREP_RESULTS}", code="bad_arguments"
            )
        return await asyncio.to_thread(
            _grep, workspace, pattern, path, glob, ignore_case, literal, max_results
        )

    for func in (read, ls, grep):
        registry.register("tools", func.__name__, func, replace=True)
