"""One translation of errors into what a user sees: a code and a message that names the field
or flag they typed, what it accepts, and nothing internal.

The MCP server, the CLI and the providers snippets call all use :func:`error_payload`, so the
same mistake reads the same everywhere (``timeout_s must be at least 0.1, not -1`` over MCP,
``--timeout must be at least 0.1, not -1`` in a terminal).
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from fabric._errors import ConfigError, FabricError
from runtime import ProviderCallError, SandboxError
from store import StoreError

log = logging.getLogger("fabric")
USAGE_CODES = frozenset(
    {
        "bad_arguments",
        "bad_query",
        "bad_json_path",
        "bad_range",
        "bad_mode",
        "invalid_regex",
        "pattern_too_large",
    }
)
"""Codes that mean the caller asked wrongly (exit status 2 in the CLI), not that work failed."""
_CAPITAL = re.compile(r"[A-Z]")
_KINDS = {
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "string": "a string",
    "dict": "an object",
    "list": "a list",
}


_SHOWN_ERRORS = 5
"""Problems of one input described at most; the rest are counted."""


@dataclass(frozen=True)
class ErrorPayload:
    """What a user sees of an error."""

    code: str
    """What programs match on: ``bad_arguments``, ``not_found``, ``invalid_regex``..."""
    message: str
    """What is wrong, in the user's own terms, and what to do."""
    usage: bool
    """The caller's mistake (a bad argument or flag), not a failure of the work."""

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def error_payload(exc: BaseException, names: Mapping[str, str] | None = None) -> ErrorPayload:
    """``exc`` as a user sees it. ``names`` maps parameter names to what the user typed
    (``{"timeout_s": "--timeout"}`` for the CLI); anything unexpected is logged with its
    traceback and shown only as an internal error, a bare pydantic ``ValidationError`` too
    (input a user typed is validated where it arrives and raised as ``ConfigError`` or
    ``ProviderCallError``, so one that gets here is Fabric's own)."""
    names = names or {}
    if isinstance(exc, ProviderCallError):
        return ErrorPayload(exc.code, _renamed(exc.message, names), exc.code in USAGE_CODES)
    if isinstance(exc, ConfigError):
        return ErrorPayload(exc.code, _renamed(str(exc), names), True)
    if isinstance(exc, FabricError | SandboxError | StoreError):
        return ErrorPayload(exc.code, str(exc), False)
    if isinstance(exc, OSError):
        what = f" ({exc.filename})" if exc.filename else ""
        return ErrorPayload("os_error", f"{exc.strerror or exc}{what}", False)
    log.error("internal error", exc_info=exc)
    return ErrorPayload(
        "internal",
        f"Fabric hit an internal error ({type(exc).__name__}); it is logged. This is a bug: "
        "please report it with the call that caused it",
        False,
    )


def describe(
    exc: ValidationError, names: Mapping[str, str] | None = None, known: Sequence[str] = ()
) -> str:
    """A pydantic error in words: each field by the name the user typed, what it accepts and
    what it got (no pydantic jargon, no URLs). ``known``: the names the input takes, so that
    a misspelt one gets the near one."""
    names = names or {}
    errors = exc.errors(include_url=False)
    said = [_one(error, names, known) for error in errors[:_SHOWN_ERRORS]]
    if len(errors) > _SHOWN_ERRORS:
        said.append(f"and {len(errors) - _SHOWN_ERRORS} more problems")
    return "; ".join(said)


def _one(error: Any, names: Mapping[str, str], known: Sequence[str]) -> str:
    loc = [str(part) for part in error.get("loc", ()) if not str(part).endswith("Arguments")]
    field = ".".join(loc) or "the input"
    if field in names:
        name = names[field]
    elif loc and loc[0] in names:  # a field inside a setting: quantitativePolicy.maxBytes
        name = ".".join([names[loc[0]], *loc[1:]])
    else:
        name = field
    kind, ctx = str(error.get("type", "")), error.get("ctx") or {}
    got = _shown(error.get("input"))
    if kind == "missing":
        return f"{name} is required"
    if kind == "extra_forbidden":
        snake = _CAPITAL.sub(lambda m: "_" + m.group(0).lower(), name)
        if snake != name and snake in known:
            return f"{name} and {snake} are one parameter: give it once"
        near = difflib.get_close_matches(name[:100], known, n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]}?" if near else ""
        return f"{name} is not a parameter here{hint}"
    if kind in ("model_type", "model_attributes_type", "dataclass_type"):
        return f"{name} must be an object, not {got}"
    if kind == "int_from_float":
        return f"{name} must be a whole number, not {got}"
    if kind == "string_too_long":
        given = error.get("input")
        size = f"{len(given)} characters" if isinstance(given, str) else "too long"
        return f"{name} is {size}, more than the {ctx.get('max_length')} it takes"
    if kind == "too_long":
        return (
            f"{name} holds {ctx.get('actual_length')} items, more than the "
            f"{ctx.get('max_length')} it takes"
        )
    for prefix, words in _KINDS.items():
        if kind.startswith(f"{prefix}_"):
            return f"{name} must be {words}{_within(error)}, not {got}"
    bounds = {
        "greater_than_equal": ("at least", "ge"),
        "greater_than": ("more than", "gt"),
        "less_than_equal": ("at most", "le"),
        "less_than": ("less than", "lt"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"{name} must be {words} {ctx.get(key)}, not {got}"
    if kind == "literal_error":
        return f"{name} must be one of {ctx.get('expected')}, not {got}"
    if kind in ("string_too_short", "too_short"):
        return f"{name} is too short ({error.get('msg')}), not {got}"
    said = str(error.get("msg", "is invalid"))
    if said.startswith("Input should be "):
        return f"{name} must be {said.removeprefix('Input should be ')}, not {got}"
    return f"{name}: {said[:1].lower()}{said[1:]}"


def _within(error: Any) -> str:
    """``int_parsing_size`` and friends: a number of the right kind, but far too large."""
    return " of a sensible size" if str(error.get("type", "")).endswith("_size") else ""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _renamed(message: str, names: Mapping[str, str]) -> str:
    """A message that starts with a parameter's name (or with several, ``text and handle:``),
    with the user's spelling of each."""
    head, colon, rest = message.partition(": ")
    subjects = head.split(" and ")
    if colon and len(subjects) > 1 and all(s in names for s in subjects):
        return " and ".join(names[s] for s in subjects) + colon + rest
    for name, typed in names.items():
        if message.startswith(f"{name}:") or message.startswith(f"{name} "):
            return typed + message[len(name) :]
    return message
