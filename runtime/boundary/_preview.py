"""Choosing the preview for a payload: JSON by shape, text by lines, YAML and Markdown by
sections, with secrets redacted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.boundary._fit import fit
from runtime.boundary._preview_json import preview_json
from runtime.boundary._preview_text import MARKERS, preview_text
from runtime.boundary._redact import redact as redact_secrets
from runtime.boundary._shape import Shape, shape_of, skim


@dataclass(frozen=True, slots=True)
class Preview:
    text: str
    json_path: str | None = None
    """A JSON path worth reading next (the first large array or object), for the recipes."""
    query: str | None = None
    """A query worth running next (an error marker seen in the text), for the recipes."""
    coverage: float | None = None
    """Share of the text shown: of its lines, or of its bytes (one enormous line); None
    for JSON, whose preview is its shape."""


def preview(
    value: Any,
    budget: int,
    content_type: str,
    *,
    redact: bool = True,
    size_bytes: int | None = None,
) -> Preview:
    """At most ``budget`` bytes showing the structure of ``value`` (text or data)."""
    if isinstance(value, str):
        body = _of_text(value, budget, content_type)
    elif isinstance(value, dict | list | tuple):
        shape = shape_of(value)
        body = Preview(preview_json(shape, budget, size_bytes=size_bytes), _next_path(shape))
    else:
        shown = preview_text(repr(value), budget)
        body = Preview(shown.text, coverage=shown.coverage)
    if not redact:
        return body
    return Preview(
        fit(redact_secrets(body.text), budget),
        body.json_path,
        body.query,
        body.coverage,
    )


def _of_text(text: str, budget: int, content_type: str) -> Preview:
    if content_type == "json":
        try:
            shape = skim(text)
        except ValueError:
            pass
        else:
            size = len(text.encode("utf-8", "surrogatepass"))
            return Preview(preview_json(shape, budget, size_bytes=size), _next_path(shape))
    kind = "yaml" if content_type == "yaml" else "text"
    shown = preview_text(text, budget, kind=kind)
    marker = MARKERS.search(shown.text)
    query = marker.group(0).lower() if marker else None
    return Preview(shown.text, None, query, shown.coverage)


def _next_path(shape: Shape, path: str = "$", depth: int = 0) -> str:
    """The first array below ``shape`` (as a slice of five), else the root."""
    if shape.kind == "array":
        return f"{path}[0:5]"
    if shape.kind == "object" and depth < 4:
        for key, member in shape.members.items():
            if member.kind in ("array", "object") and member.size:
                step = f"{path}.{key}" if key.isidentifier() else f'{path}["{key}"]'
                return _next_path(member, step, depth + 1)
    return path
