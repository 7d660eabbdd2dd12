"""Model-facing text for a value or an error."""

from __future__ import annotations

import json
from typing import Any

from runtime._models import ExecError
from store import json_default


def render_value(value: Any) -> str:
    """Strings as they are; everything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=json_default)


def logs_section(logs: str, dropped: int, after_value: bool) -> str:
    """Captured output as the model reads it: after a value, under a ``[printed output]`` label."""
    if not logs and not dropped:
        return ""
    printed = logs
    if dropped:
        printed += f"\n[output truncated: {dropped} more characters were dropped]"
    return f"\n\n[printed output]\n{printed}" if after_value else printed


def render_output(value: Any, logs: str, logs_dropped: int) -> str:
    text = "" if value is None and logs else render_value(value)
    return text + logs_section(logs, logs_dropped, bool(text))


def render_notes(warnings: tuple[str, ...]) -> str:
    """Warnings about the value, as the model reads them after it (``[note: ...]`` lines)."""
    return "".join(f"\n[note: {warning}]" for warning in warnings)


def render_error(error: ExecError) -> str:
    """``Type: message (line N)`` then the snippet's line with a caret, then the hint."""
    head = f"{error.type or error.kind.capitalize() + 'Error'}: {error.message}"
    if error.line is not None:
        where = f"line {error.line}"
        if error.column is not None:
            where += f", column {error.column}"
        head += f" ({where})"
    lines = [head]
    if error.line is not None and error.source_line is not None:
        gutter = f"  {error.line} | "
        lines.append(gutter + error.source_line)
        if error.column is not None:
            lines.append(" " * (len(gutter) - 2) + "| " + " " * (error.column - 1) + "^")
    for extra in error.problems[1:]:
        lines.append(f"also: {extra.message} (line {extra.line})")
    if error.hint:
        lines.append(f"hint: {error.hint}")
    return "\n".join(lines)
