"""``tools.write`` and ``tools.edit``: changing workspace files, atomically and beneath the root.

A file is never written in place: the new content goes to a temporary file in the same folder,
which is flushed to disk and then renamed over the target, so a reader sees the old file or the
new one and never half of either. The folder is opened beneath the root (``open_beneath``) and
every later step works on its descriptor, so a symlink swapped in meanwhile cannot redirect the
write: ``rename`` replaces a name in that folder and follows nothing. A path through a symlink
that stays inside the workspace writes the symlink's target (as an editor would); one leading out
is refused. Missing parent folders are made one at a time beneath the nearest one that exists.
An edited file keeps its mode (and, for a root host, its owner).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import posixpath
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabric.providers._paths import OpenedPath, is_private, open_beneath, read_bytes
from fabric.providers._paths import _private as private_error
from fabric.providers._paths import _relative_text as relative_text
from runtime import ProviderCallError

MAX_WRITE_BYTES = 16 * 1024 * 1024
"""The largest content ``tools.write`` takes, and the largest file ``tools.edit`` changes."""
MAX_DIFF_BYTES = 8000
"""The diff ``tools.edit`` returns is cut after this many UTF-8 bytes, its note of the cut
included in 8 KiB (the analyzer's effects table declares that bound); the file is whole."""
MAX_NEW_FOLDERS = 32
"""Missing parent folders one ``tools.write`` may make."""
_HINT_LINES = 20_000
"""Files up to this many lines get a nearest-line hint when ``old`` is not found."""
_MADE = 0o777
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


@dataclass(frozen=True)
class _Target:
    folder: OpenedPath
    """The folder holding the file, opened beneath the root."""
    leaf: str
    name: str
    """The file's real root-relative name."""
    existing: os.stat_result | None


def write_file(root: Path, path: str, content: str) -> dict[str, Any]:
    """``content`` as the whole of the workspace file ``path``: ``{ok, path, bytes, created}``."""
    data = _encoded(content, "content")
    if len(data) > MAX_WRITE_BYTES:
        raise ProviderCallError(
            f"the content is {len(data)} bytes of UTF-8, above the {MAX_WRITE_BYTES}-byte limit; "
            "write it in parts or produce it with tools.bash",
            code="too_large",
        )
    target = _target(root, path, create=True)
    with target.folder:
        _replace(target, data, expected=None)
    return {"ok": True, "path": target.name, "bytes": len(data), "created": not target.existing}


def edit_file(root: Path, path: str, old: str, new: str, count: int) -> dict[str, Any]:
    """``old`` replaced by ``new`` exactly ``count`` times: ``{ok, path, replacements, diff}``."""
    if old == "":
        raise ProviderCallError(
            "old is empty; pass the exact text to replace (use tools.write for a new file)",
            code="bad_arguments",
        )
    if old == new:
        raise ProviderCallError("old and new are the same; nothing would change", code="no_change")
    if count < 1:
        raise ProviderCallError(f"count must be at least 1, not {count}", code="bad_arguments")
    target = _target(root, path, create=False)
    with target.folder:
        assert target.existing is not None
        text = _read_text(target, path)
        found = text.count(old)
        if found != count:
            raise _mismatch(path, text, old, found, count)
        grows = len(new.encode("utf-8", "surrogatepass")) - len(old.encode("utf-8"))
        size = len(text.encode("utf-8")) + count * grows
        if size > MAX_WRITE_BYTES:  # checked before the text is built: new may be huge
            raise ProviderCallError(
                f"the edit would make {path!r} {size} bytes of UTF-8, above the "
                f"{MAX_WRITE_BYTES}-byte limit; write it in parts or produce it with tools.bash",
                code="too_large",
            )
        changed = text.replace(old, new, count)
        _replace(target, _encoded(changed, "new"), expected=target.existing)
    return {
        "ok": True,
        "path": target.name,
        "replacements": count,
        "diff": unified_diff(target.name, text, changed),
    }


def _encoded(text: str, field: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ProviderCallError(
            f"{field} holds a lone surrogate at character {exc.start}, which is not text a file "
            "can hold as UTF-8; write binary data with tools.bash",
            code="bad_arguments",
        ) from None


def unified_diff(name: str, before: str, after: str) -> str:
    """The unified diff (3 lines of context) from ``before`` to ``after``, cut to a bound.

    Only the span from the first changed line to the last is compared: what lies around it is
    the same in both, so a small edit of a large file costs little."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start = max(head - 3, 0)
    old_span = old[start : len(old) - max(tail - 3, 0)]
    new_span = new[start : len(new) - max(tail - 3, 0)]
    lines = []
    for line in difflib.unified_diff(old_span, new_span, f"a/{name}", f"b/{name}", n=3):
        lines.append(_shift(line, start) if line.startswith("@@") else line)
        if not line.endswith("\n"):
            lines.append("\n\\ No newline at end of file\n")
    diff = "".join(lines).encode("utf-8", errors="surrogateescape")
    if len(diff) <= MAX_DIFF_BYTES:
        return diff.decode("utf-8", errors="surrogateescape")
    kept = diff[:MAX_DIFF_BYTES].decode("utf-8", errors="ignore")
    note = f"\n[... diff cut: {len(diff) - MAX_DIFF_BYTES} more bytes; the file is written whole]\n"
    return kept + note


def _shift(header: str, offset: int) -> str:
    """A hunk header of a diff of a span starting at line ``offset``, in file line numbers."""

    def moved(match: re.Match[str]) -> str:
        old, old_len, new, new_len = match.groups()
        old_at = int(old) + offset if int(old) or old_len != ",0" else offset
        new_at = int(new) + offset if int(new) or new_len != ",0" else offset
        return f"@@ -{old_at}{old_len or ''} +{new_at}{new_len or ''} @@"

    return _HUNK.sub(moved, header, count=1)


def _read_text(target: _Target, path: str) -> str:
    assert target.existing is not None
    if target.existing.st_size > MAX_WRITE_BYTES:
        raise ProviderCallError(
            f"{path!r} is {target.existing.st_size} bytes, above the {MAX_WRITE_BYTES}-byte "
            "edit limit; change it with tools.bash",
            code="too_large",
        )
    fd = os.open(target.leaf, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW, dir_fd=target.folder.fd)
    try:
        data = read_bytes(fd, MAX_WRITE_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProviderCallError(
            f"{path!r} is not UTF-8 text (byte {exc.start}); tools.edit changes text files only",
            code="not_text",
        ) from None


def _mismatch(path: str, text: str, old: str, found: int, count: int) -> ProviderCallError:
    if found == 0:
        return ProviderCallError(
            f"old was not found in {path!r}{_nearest(text, old)}; read the file and copy the "
            "exact text, whitespace included",
            code="no_match",
        )
    if found > count:
        return ProviderCallError(
            f"old occurs {found} times in {path!r}, more than count={count}; include more "
            f"surrounding lines in old so it matches only where you mean, or pass count={found} "
            "to replace every one",
            code="ambiguous_match",
        )
    return ProviderCallError(
        f"old occurs {found} times in {path!r}, fewer than count={count}; pass count={found}",
        code="match_count",
    )


def _nearest(text: str, old: str) -> str:
    """Where the text most like ``old`` is, when that is cheap to find; else ``""``."""
    if "\r\n" in text and "\r\n" not in old and old.replace("\n", "\r\n") in text:
        return " (the file has CRLF line endings: write old with \\r\\n)"
    first = next((line.strip() for line in old.splitlines() if line.strip()), "")
    lines = text.splitlines()
    if not first or len(lines) > _HINT_LINES or len(first) > 1000:
        return ""
    for number, line in enumerate(lines, 1):
        if line.strip() == first:
            return (
                f"; its first line is at line {number}, so the difference is further on or in "
                "whitespace"
            )
    stripped = [line.strip()[:1000] for line in lines]
    close = difflib.get_close_matches(first, stripped, n=1, cutoff=0.6)
    if not close:
        return ""
    number = stripped.index(close[0]) + 1
    return f"; the nearest line to its first is line {number}: {lines[number - 1][:200]!r}"


def _target(root: Path, path: str, *, create: bool) -> _Target:
    """The folder and name that ``path`` writes, resolved beneath ``root``."""
    if path.endswith("/") or posixpath.basename(path) in ("", ".", ".."):
        raise ProviderCallError(
            f"{path!r} names a folder; give the path of a file", code="is_directory"
        )
    try:
        opened = open_beneath(root, path)
    except ProviderCallError as exc:
        if exc.code != "not_found" or not create:
            raise
    else:  # it exists: write where it really is (through a symlink that stays inside)
        with opened:
            info = os.fstat(opened.fd)
        if stat.S_ISDIR(info.st_mode):
            raise ProviderCallError(
                f"{path!r} is a directory; give the path of a file", code="is_directory"
            )
        if not stat.S_ISREG(info.st_mode):
            raise ProviderCallError(
                f"{path!r} is not a regular file (a device, FIFO or socket); it is not written",
                code="not_regular",
            )
        folder_name, leaf = posixpath.split(opened.name)
        folder = open_beneath(root, folder_name or ".")
        return _Target(folder, leaf, opened.name, info)
    folder_typed, leaf = posixpath.split(relative_text(root, path))
    folder = _make_folders(root, folder_typed or ".", path)
    name = leaf if folder.name == "." else f"{folder.name}/{leaf}"
    if is_private(name):
        folder.close()
        raise private_error(path)
    try:
        info = os.stat(leaf, dir_fd=folder.fd, follow_symlinks=False)
    except FileNotFoundError:
        return _Target(folder, leaf, name, None)
    except OSError as exc:
        folder.close()
        raise ProviderCallError(
            f"{path!r} cannot be written: {exc.strerror}", code="unwritable"
        ) from None
    folder.close()
    if stat.S_ISLNK(info.st_mode):
        raise ProviderCallError(
            f"{path!r} is a symlink to nothing in the workspace; it is not written through",
            code="symlink_refused",
        )
    raise ProviderCallError(f"{path!r} changed while it was opened; try again", code="busy")


def _make_folders(root: Path, folder: str, typed: str) -> OpenedPath:
    """The folder ``folder`` opened beneath ``root``, made (with its missing parents) if need be."""
    parts = [p for p in folder.split("/") if p not in ("", ".")]
    missing: list[str] = []
    while True:
        existing = "/".join(parts) or "."
        try:
            opened = open_beneath(root, existing)
            break
        except ProviderCallError as exc:
            if exc.code != "not_found" or not parts:
                raise
            missing.insert(0, parts.pop())
    if not stat.S_ISDIR(os.fstat(opened.fd).st_mode):
        opened.close()
        raise ProviderCallError(
            f"{typed!r} goes through {opened.name!r}, which is a file, not a folder",
            code="not_found",
        )
    if len(missing) > MAX_NEW_FOLDERS or ".." in missing:
        opened.close()
        raise ProviderCallError(
            f"{typed!r} needs folders that do not exist ({'/'.join(missing)}); "
            + (
                "'..' cannot follow them"
                if ".." in missing
                else f"at most {MAX_NEW_FOLDERS} are made"
            ),
            code="bad_path",
        )
    if is_private("/".join(missing)):  # checked before any folder is made
        opened.close()
        raise private_error(typed)
    for part in missing:
        name = part if opened.name == "." else f"{opened.name}/{part}"
        try:
            with contextlib.suppress(FileExistsError):  # made meanwhile: fine if a folder
                os.mkdir(part, _MADE, dir_fd=opened.fd)
            fd = os.open(
                part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=opened.fd
            )
        except OSError as exc:
            raise ProviderCallError(
                f"the folder {name!r} for {typed!r} cannot be made: {exc.strerror}",
                code="unwritable",
            ) from None
        finally:
            opened.close()
        opened = OpenedPath(fd, name)
    return opened


def _replace(target: _Target, data: bytes, expected: os.stat_result | None) -> None:
    """Write ``data`` to a temporary file beside the target and rename it over the target."""
    folder = target.folder.fd
    temp = f".{target.leaf[:200]}.{secrets.token_hex(6)}.fabric-tmp"
    existing = target.existing
    try:
        fd = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=folder,
        )
    except OSError as exc:
        raise ProviderCallError(
            f"{target.name!r} cannot be written: {exc.strerror}; check the folder's permissions",
            code="unwritable",
        ) from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask())
            if existing is not None and os.geteuid() == 0:
                with contextlib.suppress(OSError):
                    os.fchown(fd, existing.st_uid, existing.st_gid)
            os.fsync(fd)
        finally:
            os.close(fd)
        if expected is not None:
            _unchanged(target, expected)
        os.rename(temp, target.leaf, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        if isinstance(exc, OSError):
            raise ProviderCallError(
                f"{target.name!r} cannot be written: {exc.strerror}", code="unwritable"
            ) from None
        raise
    with contextlib.suppress(OSError):
        os.fsync(folder)


def _unchanged(target: _Target, expected: os.stat_result) -> None:
    """Refuse to replace a file that changed since it was read."""
    try:
        now = os.stat(target.leaf, dir_fd=target.folder.fd, follow_symlinks=False)
    except OSError:
        now = None
    same = now is not None and (now.st_ino, now.st_size, now.st_mtime_ns) == (
        expected.st_ino,
        expected.st_size,
        expected.st_mtime_ns,
    )
    if not same:
        raise ProviderCallError(
            f"{target.name!r} changed while it was being edited; read it again and retry",
            code="conflict",
        )


def _umask() -> int:
    """This process's umask, read without changing it (``os.umask`` would, for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022
