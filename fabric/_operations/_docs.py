"""The README's table of context operations, generated from the table.

``python -m fabric._operations README.md`` rewrites the lines between the README's operations
markers; a test fails when they drift from what this module makes.
"""

from __future__ import annotations

from contract import markers
from fabric._cli_ops import flags
from fabric._operations._table import OPERATIONS, Operation

START, END = markers("operations", "python -m fabric._operations README.md")


def readme_table() -> str:
    """A Markdown table: each operation's names in a snippet, over MCP and on the command
    line, its arguments and what it does."""
    lines = [
        START,
        "| in a snippet | MCP tool | command | does |",
        "| --- | --- | --- | --- |",
    ]
    for op in OPERATIONS.values():
        tool = f"`{op.tool_name}`" if op.offered_on("mcp") else "none"
        command = f"`fabric {op.command}{_command(op)}`" if op.offered_on("cli") else "none"
        lines.append(f"| `{op.qualified}({_arguments(op)})` | {tool} | {command} | {op.help} |")
    return "\n".join([*lines, END])


def _arguments(op: Operation) -> str:
    parts = []
    for name, info in op.args.model_fields.items():
        default = info.get_default(call_default_factory=True)
        parts.append(name if info.is_required() else f"{name}={default!r}")
    return ", ".join(parts)


def _command(op: Operation) -> str:
    """The command's positional arguments (the flags are the fields' names)."""
    names = flags(op)
    shown = []
    for name, info in op.args.model_fields.items():
        if not names[name].startswith("--"):
            shown.append(names[name] if info.is_required() else f"[{names[name]}]")
    return "".join(f" {name}" for name in shown)
