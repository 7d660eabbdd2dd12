"""Choosing the preview for a payload: JSON by shape, code by its outline, text by lines,
YAML and Markdown by sections, with secrets redacted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.boundary._code import language_of, outline_of
from runtime.boundary._fit import fit
from runtime.boundary._fit import size as _size
from runtime.boundary._outline import Outline
from runtime.boundary._preview_code import code_view
from runtime.boundary._preview_json import preview_json
from runtime.boundary._preview_text import MARKERS, preview_text
from runtime.boundary._redact import redact as redact_secrets
from runtime.boundary._shape import Shape, shape_of, skim

UNSET: Any = object()
"""``outline=`` not given: find out whether the text is code."""


@dataclass(frozen=True, slots=True)
class Preview:
    text: str
    json_path: str | None = None
    """A JSON path worth reading next (the first large array or object), for the recipes."""
    query: str | None = None
    """A query worth running next, for the recipes: an error marker seen in text, or the
    name of the main class or function of code."""
    ignore_case: bool = True
    """Whether ``query`` is worth running case-insensitively (a marker is, a name is not)."""
    coverage: float | None = None
    """Share of the text shown: of its definitions (code), lines, or bytes (one enormous
    line); None for JSON, whose preview is its shape."""


def preview(
    value: Any,
    budget: int,
    content_type: str,
    *,
    redact: bool = True,
    size_bytes: int | None = None,
    name: str | None = None,
) -> Preview:
    """At most ``budget`` bytes showing the structure of ``value`` (text or data).

    ``name`` is the file name the value came from, when known (``app.py``): it says which
    language code is in, or that text is not code."""
    if isinstance(value, str):
        body = text_preview(value, budget, content_type, name=name)
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
        body.ignore_case,
        body.coverage,
    )


def text_preview(
    text: str,
    budget: int,
    content_type: str,
    *,
    name: str | None = None,
    outline: Outline | None = UNSET,
) -> Preview:
    """The preview of text, unredacted; ``outline`` is its outline when the caller has
    looked already (None: it is not code)."""
    if content_type == "json":
        try:
            shape = skim(text)
        except ValueError:
            pass
        else:
            size = len(text.encode("utf-8", "surrogatepass"))
            return Preview(preview_json(shape, budget, size_bytes=size), _next_path(shape))
    if content_type == "text" and (len(text) > budget or _size(text) > budget):
        if outline is UNSET:
            outline = outline_of(text, name)
        if outline is not None:
            view = code_view(outline, budget)
            return Preview(view.text, None, outline.symbol, False, view.coverage)
    kind = "yaml" if content_type == "yaml" else "plain" if language_of(name) else "text"
    shown = preview_text(text, budget, kind=kind)
    marker = MARKERS.search(shown.text)
    query = marker.group(0).lower() if marker else None
    return Preview(shown.text, None, query, coverage=shown.coverage)


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
