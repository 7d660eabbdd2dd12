"""What a worker sends back: errors as data, and the one result frame, which always leaves.

A returned value crosses as JSON. What JSON cannot carry is handled here, in the worker:

- NaN and Infinity are returned as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``
  (JSON has no such numbers), with a warning that says where they were;
- a lone surrogate in a string is a clean error that names where it is;
- anything that is not plain data is a clean error that says what to return instead;
- a value too large for the result limit is a clean error with the size and the limit.

Before any of that, :func:`runtime.worker._exact.exact` rebuilds the value of exact types
through the base types' own C methods, so encoding it runs none of the snippet's code (a
``dict`` subclass's ``items``, a ``list`` subclass's ``__iter__``). Whatever goes wrong while
encoding, :func:`encode_result` still produces frames the host can read, and an exception's
text is read so that no ``__str__`` of the snippet can stop the error from leaving: the
worker never dies for what its snippet returned or raised.

A value whose JSON is larger than :data:`PART_BYTES` goes in slices: the result frame carries
the value with its biggest list or dict left empty, and ``parts`` says where that container is;
the slices follow, one frame each. The host decodes them one at a time, so no single decode
holds its interpreter (and the event loop serving every other session) for long.
"""

from __future__ import annotations

import math
import re
import types
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Literal

from contract import MAX_DEPTH, json_nests_within
from runtime.worker import _audit, _variables, _wire
from runtime.worker._channel import CallLimitError
from runtime.worker._errors import PolicyError, ToolError
from runtime.worker._exact import type_name
from runtime.worker._places import unplaced
from runtime.worker._policy import FILENAME, MAIN
from runtime.worker._wire import (
    ErrorKind,
    ResultError,
    ResultMessage,
    ResultProblem,
    WireLimits,
)

PART_BYTES = 1 << 20
"""Values whose JSON is larger than this cross in slices of about this size."""

_RESULT_SHARE = 8
"""An error's message is at most this fraction of the result limit, in characters (a character
is at most six bytes of JSON), so that the error always fits its frame."""
_SHOWN_PATHS = 5
_WALK_BUDGET = 1_000_000


def readable(text: str) -> str:
    """``text`` with lone surrogates spelled out, so it always encodes as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def error(
    kind: ErrorKind,
    message: str,
    *,
    type_name: str = "",
    line: int | None = None,
    column: int | None = None,
    limit: float | None = None,
    tool: str | None = None,
    code: str | None = None,
    problems: list[ResultProblem] | None = None,
) -> ResultError:
    """The ``error`` of a result message; what is None is left out."""
    failure: ResultError = {
        "kind": kind,
        "type": type_name,
        "message": readable(message),
        "line": line,
        "column": column,
    }
    if limit is not None:
        failure["limit"] = limit
    if tool is not None:
        failure["tool"] = tool
    if code is not None:
        failure["code"] = code
    if problems is not None:
        failure["problems"] = problems
    return failure


_TRACEBACK: Any = vars(BaseException)["__traceback__"].__get__
_TB_FRAME: Any = vars(types.TracebackType)["tb_frame"].__get__
_TB_NEXT: Any = vars(types.TracebackType)["tb_next"].__get__
_TB_LINENO: Any = vars(types.TracebackType)["tb_lineno"].__get__
_F_CODE: Any = vars(types.FrameType)["f_code"].__get__


def traceback_of(exc: BaseException) -> TracebackType | None:
    """``exc.__traceback__`` as the interpreter set it: a snippet's exception class may
    define ``__traceback__`` as a property, whose getter must not run here."""
    tb = _TRACEBACK(exc)
    return tb if type(tb) is types.TracebackType else None


def _frames(tb: TracebackType | None) -> list[TracebackType]:
    """The entries of a real traceback, read with the interpreter's own descriptors (nothing
    a snippet defines runs while the audit hook trusts the reads)."""
    entries = []
    with _audit.trusted():
        while type(tb) is types.TracebackType:
            entries.append(tb)
            tb = _TB_NEXT(tb)
    return entries


def snippet_line(tb: TracebackType | None) -> int | None:
    """The last line of the snippet's own code in a traceback."""
    line, entries = None, _frames(tb)
    with _audit.trusted():
        for entry in entries:
            if _F_CODE(_TB_FRAME(entry)).co_filename == FILENAME:
                line = _TB_LINENO(entry)
    return line


def module_error(exc: BaseException) -> BaseException:
    """``exc`` as CPython would raise it at a module's top level: a fast local of the wrapper
    read before it is bound is a ``NameError`` there, not an ``UnboundLocalError``."""
    if type(exc) is not UnboundLocalError:
        return exc
    entries = _frames(traceback_of(exc))
    with _audit.trusted():
        top = bool(entries) and _F_CODE(_TB_FRAME(entries[-1])).co_name == MAIN
    found = re.match(r"cannot access local variable '(\w+)'", str(exc))
    if not top or found is None:
        return exc
    return NameError(f"name '{found.group(1)}' is not defined").with_traceback(traceback_of(exc))


def exception_error(exc: BaseException, limits: WireLimits) -> ResultError:
    """The error result for what a snippet raised, whatever its ``__str__`` or its class's
    hooks raise while it is read."""
    try:
        return _exception_error(exc, limits)
    except BaseException as again:
        return error(
            "runtime",
            f"the snippet raised {type_name(exc)}, and reading its message raised "
            f"{type_name(again)}",
            type_name=type_name(exc),
            line=snippet_line(traceback_of(exc)),
        )


def _exception_error(exc: BaseException, limits: WireLimits) -> ResultError:
    exc = module_error(exc)
    line = snippet_line(traceback_of(exc))
    name = type_name(exc)
    if isinstance(exc, MemoryError):
        return error(
            "memory",
            f"the snippet exceeded its memory limit of {limits['memory_mb']} MB",
            type_name=name,
            line=line,
            limit=limits["memory_mb"],
        )
    if isinstance(exc, PolicyError):
        return error("policy", str(exc), type_name=name, line=line)
    if isinstance(exc, CallLimitError):
        return error("limit", str(exc), type_name=name, line=line, limit=limits["max_calls"])
    cap = int(limits["max_result_bytes"]) // _RESULT_SHARE
    if isinstance(exc, ToolError):  # a snippet may raise one with anything in its fields
        text = _printable(exc, cap)
        tool = _printable(getattr(exc, "tool", ""), 200, attribute=True)
        code = _printable(getattr(exc, "code", ""), 200, attribute=True) or "tool_error"
        if tool and not text.startswith(tool):
            text = f"{tool}: {text}"
        return error("tool", text, type_name=name, line=line, tool=tool, code=code)
    return error("runtime", unplaced(_printable(exc, cap)), type_name=name, line=line)


def _printable(value: Any, cap: int, attribute: bool = False) -> str:
    """``str(value)`` as text that always encodes, whatever a snippet's ``__str__`` does."""
    try:
        text = value if type(value) is str else str(value)
        if type(text) is not str:
            raise TypeError
    except BaseException:
        return "" if attribute else "<exception str() failed>"  # as CPython prints it
    if attribute:
        return readable(text[:cap])
    half = cap // 2
    if len(text) <= cap:  # a lone surrogate spelled out takes 6 characters: cut after it
        shown = readable(text)
        if len(shown) <= cap:
            return shown
        cut = len(shown) - 2 * half
    else:  # never spell out more than is kept (60 million surrogates would be 360 million)
        cut = len(text) - 2 * half
    head, tail = readable(text[:half])[:half], readable(text[-half:])[-half:]
    return (
        f"{head}\n… [{cut} characters cut here: the message is larger than the result limit "
        f"allows] …\n{tail}"
    )


# -- a value that cannot leave ------------------------------------------------------------------


def unreturnable(exc: BaseException, limits: WireLimits) -> ResultError:
    """The error for a return value :func:`runtime.worker._exact.exact` refused."""
    if isinstance(exc, TypeError):
        return _plain_data_error(exc)
    if isinstance(exc, MemoryError):
        return error(
            "memory",
            "the return value is too large to copy within the memory limit",
            type_name="MemoryError",
            limit=limits["memory_mb"],
        )
    return error(
        "runtime",
        f"the return value cannot leave the sandbox: {type_name(exc)}: {_printable(exc, 2000)}",
        type_name=type_name(exc),
    )


# -- walking a value -------------------------------------------------------------------------


def _leaves(value: Any) -> Iterator[tuple[str, Any]]:
    """(JSON path, leaf) for every str and float in ``value``, depth first, within a budget."""
    stack: list[tuple[str, Any]] = [("$", value)]
    budget = _WALK_BUDGET
    while stack and budget > 0:
        budget -= 1
        path, item = stack.pop()
        if isinstance(item, dict):
            for key in reversed(list(item)):
                if isinstance(key, str):
                    yield f"{path}.{key} (key)", key
                stack.append((f"{path}[{key!r}]", item[key]))
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}[{i}]", part) for i, part in reversed(list(enumerate(item))))
        else:
            yield path, item


def _non_finite(value: Any) -> str | None:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return None


def _finite(value: Any, found: list[str], path: str = "$") -> Any:
    """``value`` with NaN and Infinity replaced by their names; their paths go to ``found``."""
    if isinstance(value, float):
        name = _non_finite(value)
        if name is None:
            return value
        found.append(path)
        return name
    if isinstance(value, dict):
        return {
            _finite_key(k, found, path): _finite(v, found, f"{path}[{k!r}]")
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_finite(v, found, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def _finite_key(key: Any, found: list[str], path: str) -> Any:
    if isinstance(key, float) and _non_finite(key) is not None:
        found.append(f"{path} (a key)")
        return _non_finite(key)
    return key


def _surrogate(value: Any) -> str:
    for path, leaf in _leaves(value):
        if isinstance(leaf, str):
            try:
                leaf.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"{path} (character {exc.start}, {leaf[exc.start]!r})"
    return "somewhere in it"


# -- the frame -------------------------------------------------------------------------------


def _failed(result: ResultMessage, failure: ResultError) -> ResultMessage:
    failed: ResultMessage = {**result, "ok": False, "error": failure}
    failed.pop("value", None)
    failed.pop("variables", None)  # a failed execution keeps nothing for the next
    return failed


def _plain_data_error(exc: TypeError) -> ResultError:
    hint = "add await" if "coroutine" in str(exc) else "return plain data"
    return error(
        "runtime",
        f"the return value cannot leave the sandbox: {exc}; {hint} "
        "(str, bytes, int, float, bool, None, list, dict)",
        type_name="TypeError",
    )


Encoded = tuple[ResultMessage, bytes]
"""A result message as it will be sent, and its frame."""


def _encode(result: ResultMessage) -> Encoded:
    try:
        return result, _wire.encode_json(result)
    except TypeError as exc:
        failed = _failed(result, _plain_data_error(exc))
        return failed, _wire.encode_json(failed)
    except UnicodeEncodeError:
        where = _surrogate(result.get("value"))
        failure = error(
            "runtime",
            f"the return value holds a lone surrogate at {where}: it is not valid Unicode, so "
            "it cannot leave the sandbox; encode the text first, e.g. "
            "s.encode('utf-8', 'backslashreplace').decode()",
            type_name="UnicodeEncodeError",
        )
        failed = _failed(result, failure)
        return failed, _wire.encode_json(failed)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        found: list[str] = []
        value = _finite(result.get("value"), found)
        shown = ", ".join(found[:_SHOWN_PATHS]) + (" ..." if len(found) > _SHOWN_PATHS else "")
        note = (
            f"the return value held {len(found)} NaN or Infinity number(s) at {shown}; JSON has "
            'none, so they are returned as the strings "NaN", "Infinity" and "-Infinity"'
        )
        warnings = [*result.get("warnings", []), note]
        return _encode({**result, "value": value, "warnings": warnings})


def _checked(result: ResultMessage, limits: WireLimits) -> Encoded:
    cap = int(limits["max_result_bytes"])
    try:
        sent, frame = _encode(result)
    except MemoryError:
        failure = error(
            "memory",
            "the return value is too large to serialize within the memory limit",
            type_name="MemoryError",
            limit=limits["memory_mb"],
        )
        failed = _failed({**result, "logs": ""}, failure)
        return failed, _wire.encode_json(failed)
    except (ValueError, RecursionError) as exc:
        failure = error(
            "runtime",
            f"the return value cannot leave the sandbox: {type(exc).__name__}: {exc}",
            type_name=type(exc).__name__,
        )
        failed = _failed(result, failure)
        return failed, _wire.encode_json(failed)
    if not json_nests_within(frame[_wire.HEADER.size :], MAX_DEPTH + 1):  # {"value": v}
        failure = error(
            "runtime",
            f"the return value nests deeper than {MAX_DEPTH} levels of lists and dicts, past "
            "what the model and its tools can read; flatten it, or return json.dumps(value)",
            type_name="ValueError",
        )
        failed = _failed(result, failure)
        return failed, _wire.encode_json(failed)
    if len(frame) - _variables_bytes(sent) > cap:  # kept variables have their own cap
        failure = error(
            "limit",
            f"the return value is {len(frame)} bytes, above the {cap}-byte limit; "
            "return a slice, a count or a summary instead",
            type_name="ResultTooLarge",
            limit=cap,
        )
        failed = _failed(result, failure)
        return failed, _wire.encode_json(failed)
    return sent, frame


def _variables_bytes(result: ResultMessage) -> int:
    kept = result.get("variables")
    return _variables.size_of(kept) + len('"variables":,') if kept else 0


# -- large values, in slices -----------------------------------------------------------------


def _bulk(value: Any, size: int) -> list[Any]:
    """The path (dict keys) to where the bulk of ``value`` is: descend while one entry of a
    dict holds most of its bytes."""
    path: list[Any] = []
    node = value
    while isinstance(node, dict) and len(node) > 0:
        sizes = {key: len(_wire.encode_json(child)) for key, child in node.items()}
        key = max(sizes, key=lambda k: sizes[k])
        if type(key) is not str:
            break  # JSON renames other keys: the path must be one the host can follow
        child = node[key]
        if sizes[key] * 2 < size or not isinstance(child, list | dict) or len(child) < 2:
            break
        path.append(key)
        node, size = child, sizes[key]
    return path


def _emptied(value: Any, path: list[Any], empty: Any) -> Any:
    """``value`` with the container at ``path`` replaced by ``empty``, copying only the dicts
    on the way (the snippet's own value is not touched)."""
    if not path:
        return empty
    copy = dict(value)
    copy[path[0]] = _emptied(value[path[0]], path[1:], empty)
    return copy


def _sliced(result: ResultMessage, size: int) -> list[bytes] | None:
    """The frames of a large result in slices, or None when there is no container to slice
    (one huge string, say)."""
    value = result["value"]
    path = _bulk(value, size)
    container = value
    for key in path:
        container = container[key]
    if not isinstance(container, list | dict) or len(container) < 2:
        return None
    kind: Literal["list", "dict"] = "dict" if isinstance(container, dict) else "list"
    items: list[Any] = list(container.items()) if isinstance(container, dict) else container
    per = max(1, len(items) * PART_BYTES // size)
    slices = [items[i : i + per] for i in range(0, len(items), per)]
    header: ResultMessage = {
        **result,
        "value": _emptied(value, path, {} if kind == "dict" else []),
        "parts": {"path": path, "kind": kind, "count": len(slices)},
    }
    frames = [_wire.encode_json(header)]
    frames.extend(_wire.encode_json(dict(part) if kind == "dict" else part) for part in slices)
    return frames


def encode_result(result: ResultMessage, limits: WireLimits) -> list[bytes]:
    """The result frames; every failure to encode becomes an error result, never an exception."""
    sent, frame = _checked(result, limits)
    if len(frame) <= PART_BYTES or not sent.get("ok"):
        return [frame]
    try:
        return _sliced(sent, len(frame)) or [frame]
    except (MemoryError, ValueError, RecursionError, TypeError):
        return [frame]
