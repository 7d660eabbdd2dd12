"""``tools.read``, ``tools.read_json``, ``tools.ls`` and ``tools.grep``: reading the workspace.

Every path is opened beneath the workspace root by ``_paths.open_beneath`` (openat2, no
symlink out, no check-then-open race) and worked on through its descriptor; ``.fabric/`` is
refused by path and never listed or searched, and walks follow no symlink. File work runs in a
thread so a large file never stalls the host's event loop, and grep patterns run under a time
limit so a catastrophic regular expression cannot hang the host.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import stat
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import regex

from fabric.providers._paths import (
    OpenedPath,
    WalkedEntry,
    list_beneath,
    open_beneath,
    open_entry,
    read_bytes,
    walk_beneath,
)
from fabric.providers._ripgrep import candidates, ripgrep
from runtime import ProviderCallError, stop_if_requested
from runtime.boundary import PatternTooLarge, check_pattern

MAX_READ_BYTES = 256 * 1024 * 1024
MAX_JSON_BYTES = 64 * 1024 * 1024
"""The largest file ``tools.read_json`` parses."""
MAX_LS_ENTRIES = 10_000
MAX_GREP_RESULTS = 10_000
GREP_LINE_CHARS = 500
GREP_TIMEOUT_S = 5.0
"""Seconds a pattern may run over one whole grep call, all files together."""
SKIPPED_DIRS = frozenset({".git", ".fabric", ".hg", ".svn", "__pycache__", ".venv", "node_modules"})


class Workspace:
    """The folder snippets may read."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()

    def open(self, path: str) -> OpenedPath:
        """Open ``path`` beneath the root (see ``open_beneath``); the caller closes it."""
        return open_beneath(self.root, path)


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head


def read_text(ws: Workspace, path: str, offset: int, limit: int | None, encoding: str) -> str:
    with ws.open(path) as opened:
        size = _file_size(opened, path)
        if size > MAX_READ_BYTES:
            raise ProviderCallError(
                f"{path!r} is {size} bytes, above the {MAX_READ_BYTES}-byte read limit",
                code="too_large",
            )
        data = read_bytes(opened.fd, MAX_READ_BYTES)
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


def parse_json(ws: Workspace, path: str) -> Any:
    """The parsed JSON of a workspace file; a syntax error names its line and column."""
    with ws.open(path) as opened:
        size = _file_size(opened, path)
        if size > MAX_JSON_BYTES:
            raise ProviderCallError(
                f"{path!r} is {size} bytes, above the {MAX_JSON_BYTES}-byte read_json limit; "
                "read a part with tools.read(path, offset=, limit=) or query it with tools.bash",
                code="too_large",
            )
        data = read_bytes(opened.fd, MAX_JSON_BYTES)
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise ProviderCallError(
            f"{path!r} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            code="not_json",
        ) from None
    except UnicodeDecodeError as exc:
        raise ProviderCallError(
            f"{path!r} is not UTF-8 text (byte {exc.start}), so not JSON", code="not_json"
        ) from None
    except RecursionError:
        raise ProviderCallError(
            f"{path!r} nests deeper than the JSON parser goes; read it with tools.read",
            code="not_json",
        ) from None


def _file_size(opened: OpenedPath, path: str) -> int:
    """The size of the regular file ``opened``; folders and devices are refused."""
    info = os.fstat(opened.fd)
    if stat.S_ISDIR(info.st_mode):
        raise ProviderCallError(f"{path!r} is a directory; use tools.ls", code="is_directory")
    if not stat.S_ISREG(info.st_mode):
        raise ProviderCallError(
            f"{path!r} is not a regular file (a device, FIFO or socket), so it is not read",
            code="not_found",
        )
    return info.st_size


def _entry(walked: WalkedEntry) -> dict[str, Any] | None:
    """``{name, type, size}`` from an ``lstat`` (a symlink's target is never looked at);
    None when the entry went away since it was listed."""
    try:
        info = walked.entry.stat(follow_symlinks=False)
    except OSError:
        return None
    kind = (
        "symlink" if stat.S_ISLNK(info.st_mode) else "dir" if stat.S_ISDIR(info.st_mode) else "file"
    )
    return {"name": walked.name, "type": kind, "size": info.st_size if kind == "file" else 0}


def list_entries(
    ws: Workspace, path: str, recursive: bool, glob: str | None
) -> list[dict[str, Any]]:
    with ws.open(path) as base:
        if not stat.S_ISDIR(os.fstat(base.fd).st_mode):
            raise ProviderCallError(
                f"{path!r} is not a directory in the workspace", code="not_found"
            )
        entries: list[dict[str, Any]] = []
        with contextlib.closing(_listing(base, recursive)) as listing:
            for walked in listing:
                stop_if_requested()
                entry = _entry(walked)
                if entry is not None:
                    entries.append(entry)
                if len(entries) > MAX_LS_ENTRIES:
                    raise ProviderCallError(
                        f"more than {MAX_LS_ENTRIES} entries under {path!r}; "
                        "narrow the path or pass glob=",
                        code="too_many",
                    )
    if glob:
        entries = [e for e in entries if fnmatch.fnmatch(e["name"], glob)]
    return entries


def _listing(base: OpenedPath, recursive: bool) -> Generator[WalkedEntry, None, None]:
    """The entries of the folder ``base``: all levels, or its own; never ``.fabric``."""
    if recursive:
        yield from walk_beneath(base.fd, _prefix(base), SKIPPED_DIRS)
    else:
        yield from list_beneath(base.fd, _prefix(base), frozenset())


def _prefix(base: OpenedPath) -> str:
    return "" if base.name == "." else f"{base.name}/"


def _files_under(
    base: OpenedPath, glob: str | None, wanted: set[str] | None = None
) -> Generator[tuple[str, bytes], None, None]:
    """``(name, content)`` of each regular file at or under ``base`` matching ``glob`` (and,
    when ``wanted`` is given, named in it)."""
    if stat.S_ISREG(os.fstat(base.fd).st_mode):
        try:
            data = read_bytes(base.fd, MAX_READ_BYTES)
        except OSError:
            return
        yield base.name, data
        return
    if not stat.S_ISDIR(os.fstat(base.fd).st_mode):
        return
    for walked in walk_beneath(base.fd, _prefix(base), SKIPPED_DIRS):
        stop_if_requested()
        if not _matches(walked, glob) or (wanted is not None and walked.name not in wanted):
            continue
        fd = open_entry(walked)  # None for symlinks: they are never read
        if fd is None:
            continue
        try:
            data = read_bytes(fd, MAX_READ_BYTES)
        except OSError:
            continue
        finally:
            os.close(fd)
        yield walked.name, data


def _matches(walked: WalkedEntry, glob: str | None) -> bool:
    name = walked.entry.name
    return glob is None or fnmatch.fnmatch(walked.name, glob) or fnmatch.fnmatch(name, glob)


def grep_lines(
    ws: Workspace,
    pattern: str,
    path: str,
    glob: str | None,
    ignore_case: bool,
    literal: bool,
    max_results: int,
) -> list[dict[str, Any]]:
    flags = regex.IGNORECASE if ignore_case else 0
    source = regex.escape(pattern) if literal else pattern
    try:
        check_pattern(source)
    except PatternTooLarge as exc:
        raise ProviderCallError(f"tools.grep: {exc}", code="pattern_too_large") from None
    try:
        compiled = regex.compile(source, flags)
    except regex.error as exc:
        raise ProviderCallError(
            f"invalid regular expression {pattern!r}: {exc}; pass literal=True to search "
            "for the text as it is",
            code="invalid_regex",
        ) from None
    deadline = time.monotonic() + GREP_TIMEOUT_S
    with ws.open(path) as base:
        wanted = None
        rg = ripgrep() if stat.S_ISDIR(os.fstat(base.fd).st_mode) else None
        if rg is not None:
            wanted = candidates(rg, base, source, ignore_case, SKIPPED_DIRS, deadline)
        with contextlib.closing(_files_under(base, glob, wanted)) as files:
            return _search(compiled, pattern, files, max_results, deadline)


def _search(
    compiled: regex.Pattern[str],
    pattern: str,
    files: Iterator[tuple[str, bytes]],
    max_results: int,
    deadline: float,
) -> list[dict[str, Any]]:
    """``{path, line, text}`` of the lines of the text ``files`` that ``compiled`` matches.

    Lines end at ``\\n`` (a ``\\r`` before it is dropped), as in ripgrep and grep."""
    matches: list[dict[str, Any]] = []
    for name, data in files:
        if _is_binary(data[:8192]):
            continue
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(_lines(text), 1):
            stop_if_requested()
            try:  # concurrent: the match lets go of the GIL, so the host's loop runs on
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                hit = compiled.search(line, timeout=left, concurrent=True)
            except TimeoutError:
                raise ProviderCallError(
                    f"the pattern {pattern!r} ran longer than {GREP_TIMEOUT_S:g} s (stopped at "
                    f"{name}:{number}); simplify it (avoid nested repetition), narrow path or "
                    "glob, or pass literal=True",
                    code="regex_timeout",
                ) from None
            if hit:
                matches.append({"path": name, "line": number, "text": line[:GREP_LINE_CHARS]})
                if len(matches) >= max_results:
                    return matches
    return matches


def _lines(text: str) -> Iterator[str]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    for line in lines:
        yield line[:-1] if line.endswith("\r") else line
