"""Cutting a long line where the model can see it was cut: every preview and summary that
shortens a line of the original does it here, so none is ever cut silently."""

from __future__ import annotations


def cut_line(line: str, limit: int) -> str:
    """``line`` whole when it has at most ``limit`` characters, else its first ``limit``
    characters and a note that says so: ``… (line cut at 200 of 5,321 characters)``."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… (line cut at {limit:,} of {len(line):,} characters)"
