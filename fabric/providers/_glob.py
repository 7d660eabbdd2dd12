"""``tools.glob``: workspace paths matching a shell pattern, sorted, bounded, without ``.fabric``.

Patterns are ``/``-separated and relative to ``path``: ``*`` and ``?`` match within one name
(names starting with a dot too), ``[abc]`` one character of a set, ``**`` as a whole component
any number of folders, none included (``src/**`` names ``src`` too), as Python's
``glob.glob(recursive=True, include_hidden=True)`` does. The walk starts at the pattern's
longest literal folder prefix, follows no symlink (a symlink is matched by its own name and
never entered), never enters ``.fabric``, and enters the folders ``tools.grep`` skips
(``.git``, ``node_modules``, ``.venv``...) only when the pattern names them literally.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
import stat
import time
from pathlib import Path

from fabric.providers._paths import OpenedPath, is_private, open_beneath, walk_beneath
from runtime import ProviderCallError, stop_if_requested

MAX_GLOB_RESULTS = 10_000
"""The most paths one call returns (``max_results`` defaults to 200)."""
MAX_GLOB_VISITS = 200_000
"""Entries one call may look at before it stops and asks for a narrower pattern."""
GLOB_TIMEOUT_S = 10.0
"""Seconds one call may walk."""
_MAGIC = re.compile(r"[*?\[]")


def glob_paths(
    root: Path, pattern: str, path: str, max_results: int, skipped: frozenset[str]
) -> list[str]:
    """Root-relative names of the entries under ``path`` matching ``pattern``, sorted."""
    parts = _parts(pattern)
    literal: list[str] = []
    while len(parts) > 1 and not _MAGIC.search(parts[0]) and parts[0] != "**":
        literal.append(parts.pop(0))
    start = posixpath.join(path, *literal) if literal else path
    rest = "/".join(parts)
    matchers = (_compile(rest, folders=True), _compile(rest, folders=False))
    named = frozenset(p for p in _parts(pattern) if not _MAGIC.search(p)) & skipped
    try:
        base = open_beneath(root, start)
    except ProviderCallError as exc:
        if exc.code == "not_found" and literal:
            return []  # a literal folder of the pattern that is not there matches nothing
        raise
    with base:
        if not stat.S_ISDIR(os.fstat(base.fd).st_mode):
            if literal:
                return []
            raise ProviderCallError(
                f"{path!r} is not a directory in the workspace", code="not_found"
            )
        depth = None if "**" in parts else len(parts)
        whole = bool(literal) and all(part == "**" for part in parts)
        return _walk(base, matchers, pattern, max_results, skipped - named, depth, whole)


def _walk(
    base: OpenedPath,
    matchers: tuple[re.Pattern[str], re.Pattern[str]],
    pattern: str,
    cap: int,
    skipped: frozenset[str],
    depth: int | None,
    whole: bool,
) -> list[str]:
    prefix = "" if base.name == "." else f"{base.name}/"
    found = [base.name] if base.name != "." and whole else []  # "a/**" names a too
    deadline = time.monotonic() + GLOB_TIMEOUT_S
    for visits, walked in enumerate(walk_beneath(base.fd, prefix, skipped, depth), 1):
        stop_if_requested()
        if visits > MAX_GLOB_VISITS or time.monotonic() > deadline:
            raise ProviderCallError(
                f"tools.glob({pattern!r}) looked at {visits} entries in "
                f"{time.monotonic() - deadline + GLOB_TIMEOUT_S:.1f} s without finishing "
                f"(limits: {MAX_GLOB_VISITS} entries, {GLOB_TIMEOUT_S:g} s); start it in a "
                "narrower path or give the pattern a literal folder",
                code="too_many",
            )
        matcher = matchers[0] if walked.entry.is_dir(follow_symlinks=False) else matchers[1]
        if is_private(walked.name) or not matcher.fullmatch(walked.name[len(prefix) :]):
            continue
        found.append(walked.name)
        if len(found) > cap:
            raise ProviderCallError(
                f"more than {cap} paths match {pattern!r}; narrow the pattern or the path, or "
                f"raise max_results (at most {MAX_GLOB_RESULTS})",
                code="too_many",
            )
    return sorted(found)


def _parts(pattern: str) -> list[str]:
    if "\x00" in pattern:
        raise ProviderCallError("pattern contains a NUL byte", code="bad_arguments")
    if not pattern or pattern.startswith("/"):
        raise ProviderCallError(
            f"pattern {pattern!r} must be relative to path (like 'src/**/*.py'); give the "
            "folder to start from as path=",
            code="bad_arguments",
        )
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ProviderCallError(
            f"pattern {pattern!r} contains '..'; give the folder to start from as path=",
            code="bad_arguments",
        )
    return parts


@functools.lru_cache(maxsize=256)
def _compile(pattern: str, folders: bool) -> re.Pattern[str]:
    """A regular expression matching the ``/``-separated names ``pattern`` matches.

    ``**`` stands for any number of whole names, none included: ``**/y`` matches ``y`` too and
    ``x/**`` matches what is below ``x``, and ``x`` itself when it is a folder (``folders``:
    the expression for folders; for other entries, ``x/**`` needs a name below)."""
    out: list[str] = []
    parts: list[str] = []
    for part in pattern.split("/"):
        if part != "**" or parts[-1:] != ["**"]:  # "**/**" is "**"
            parts.append(part)
    apart = False  # whether the next name needs a "/" before it
    for index, part in enumerate(parts):
        if part != "**":
            out.append(("/" if apart else "") + _component(part))
            apart = True
        elif index < len(parts) - 1:
            out.append("/(?:[^/]+/)*" if apart else "(?:[^/]+/)*")
            apart = False
        else:
            out.append(("(?:/.*)?" if folders else "/.*") if apart else ".*")
    return re.compile("".join(out), re.DOTALL)


def _component(part: str) -> str:
    """One name's pattern: ``*``, ``?`` and ``[...]`` never cross a ``/``."""
    out: list[str] = []
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = part.find("]", i + 2 if part[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = part[i + 1 : end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                escaped = body.replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
                out.append(f"[{'^/' if negate else ''}{escaped}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
