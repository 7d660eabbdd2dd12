"""Handles, keys and fact names: how they are made and what is accepted.

Nothing here ever becomes a path: blob files are named by their sha256 alone, so a name can
at worst be refused, never point outside the store.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from store._errors import InvalidName

HEX_DIGITS = 8
"""Hex digits of the hash in a new handle; more are added only to avoid a clash."""
_SLUG_CHARS = 40
_HANDLE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*-[0-9a-f]{8,64}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_EXAMPLE = "read-app-log-3fa2b1c9"


def slugify(text: str, *, limit: int = _SLUG_CHARS) -> str:
    """Lowercase ASCII words joined by dashes, at most ``limit`` characters; never empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > limit:
            if not slug:
                slug = word[:limit]
            break
        slug = candidate
    return slug or "data"


def source_slug(tool: str, args: dict[str, Any]) -> str:
    """``tools.read(path="logs/app.log")`` becomes ``read-logs-app-log``."""
    name = tool.rsplit(".", 1)[-1]
    values = [str(v) for v in args.values() if isinstance(v, str | int | float)]
    return slugify(" ".join([name, *values]))


def make_handle(slug: str, sha256: str, digits: int = HEX_DIGITS) -> str:
    return f"{slug}-{sha256[:digits]}"


def is_handle(ref: str) -> bool:
    return len(ref) <= _SLUG_CHARS + 65 and _HANDLE.fullmatch(ref) is not None


def hash_prefix(handle: str) -> str:
    """The hex digits a handle ends with; they must prefix the content's sha256."""
    return handle.rsplit("-", 1)[1]


def check_handle(ref: object) -> str:
    """Return ``ref`` when it has the form of a handle, else raise InvalidName."""
    if isinstance(ref, str) and is_handle(ref):
        return ref
    raise InvalidName(
        f"{_show(ref)} is not a handle: handles look like {_EXAMPLE!r} (lowercase words and "
        "dashes, then 8 to 64 hex digits). Copy the handle exactly from the result that gave it, "
        "or list live handles with `fabric store list`.",
        name=str(ref)[:200],
    )


def is_name(ref: str, limit: int = 64) -> bool:
    return len(ref) <= limit and ".." not in ref and _NAME.fullmatch(ref) is not None


def check_name(name: object, *, what: str, limit: int = 64) -> str:
    """Validate a key or fact name: ASCII letters, digits, ``.``, ``_`` and ``-``."""
    if not isinstance(name, str):
        raise InvalidName(f"a {what} must be a string, not {type(name).__name__}", name=str(name))
    problem = None
    if not name:
        problem = "is empty"
    elif len(name) > limit:
        problem = f"is {len(name)} characters long (at most {limit})"
    elif "\x00" in name:
        problem = "contains a NUL character"
    elif "/" in name or "\\" in name:
        problem = "contains a path separator"
    elif ".." in name:
        problem = "contains '..'"
    elif not name.isascii():
        problem = "contains non-ASCII characters"
    elif _NAME.fullmatch(name) is None:
        problem = "has characters other than letters, digits, '.', '_' and '-'"
    if problem is None:
        return name
    raise InvalidName(
        f"{what} {_show(name)} {problem}. Use ASCII letters, digits, '.', '_' and '-', starting "
        f"with a letter or digit, at most {limit} characters, e.g. {slugify(name, limit=limit)!r}.",
        name=name[:200],
    )


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
