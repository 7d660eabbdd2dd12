"""Rendering a returned value as the text the model reads.

``auto`` keeps strings as they are and shows structured data as compact YAML-like text in
which long multi-line strings move out of the tree into labelled sections::

    status: failed
    exit_code: 1
    stdout: (see [stdout] below, 120 lines)
    files: [a.py, b.py]

    [stdout]
    ...the lines, as they are...

``json`` is one-line JSON, ``yaml`` is YAML (PyYAML), ``text`` keeps strings, joins lists of
strings with newlines and shows other data as indented JSON.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import yaml

from runtime.boundary._config import ResultFormat
from store import json_default

_INLINE_LIST = 100
_SECTION_LINES = 3
_SECTION_CHARS = 160
_PLAIN = re.compile(r"[A-Za-z0-9_./@()+~][^\n:#]*")
_LOOKS_TYPED = re.compile(
    r"(?i)(?:true|false|yes|no|on|off|null|none|~|[-+]?(?:\d[\d_]*)?\.?\d+(?:e[-+]?\d+)?|0x[0-9a-f]+)"
)

try:
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # PyYAML built without libyaml
    _Dumper = yaml.SafeDumper


_SLICE_ITEMS = 4096
_SLICED_DEPTH = 4


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=json_default, separators=(",", ":"))


def to_json(value: Any, _depth: int = 0) -> str:
    """Compact one-line JSON: what the store keeps for structured results.

    The same text as one ``json.dumps``, but large lists and dicts are encoded a slice at a
    time with a pause between slices: ``json.dumps`` holds the interpreter for its whole run,
    and a boundary thread encoding megabytes would otherwise stall the event loop."""
    if _depth > _SLICED_DEPTH or not isinstance(value, list | tuple | dict):
        return _dumps(value)
    if isinstance(value, dict):
        if not all(type(key) is str for key in value):
            return _dumps(value)  # json.dumps's own key conversions
        if len(value) <= _SLICE_ITEMS:
            entries = [f"{_dumps(k)}:{to_json(v, _depth + 1)}" for k, v in value.items()]
            return "{" + ",".join(entries) + "}"
        items = list(value.items())
        pieces = []
        for start in range(0, len(items), _SLICE_ITEMS):
            pieces.append(_dumps(dict(items[start : start + _SLICE_ITEMS]))[1:-1])
            time.sleep(0)  # let other threads run
        return "{" + ",".join(pieces) + "}"
    if len(value) <= _SLICE_ITEMS:
        if len(value) <= 16:
            return "[" + ",".join(to_json(v, _depth + 1) for v in value) + "]"
        return _dumps(value)
    pieces = []
    for start in range(0, len(value), _SLICE_ITEMS):
        pieces.append(_dumps(list(value[start : start + _SLICE_ITEMS]))[1:-1])
        time.sleep(0)
    return "[" + ",".join(pieces) + "]"


def render(value: Any, fmt: ResultFormat = "auto") -> str:
    if fmt == "json":
        return json.dumps(value, ensure_ascii=False, default=json_default)
    if isinstance(value, str):
        return value
    if fmt == "yaml":
        plain = json.loads(to_json(value))
        return str(yaml.dump(plain, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100))
    if fmt == "text":
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return "\n".join(value)
        return json.dumps(value, ensure_ascii=False, default=json_default, indent=2)
    if not isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=json_default)
    sections: list[tuple[str, str]] = []
    lines = _block(value, "", 0, sections)
    out = "\n".join(lines)
    for label, text in sections:
        out += f"\n\n[{label}]\n{text.rstrip(chr(10))}"
    return out


def _block(value: Any, path: str, indent: int, sections: list[tuple[str, str]]) -> list[str]:
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            return [pad + "{}"]
        lines = []
        for key, member in value.items():
            name = _key(str(key))
            child = f"{path}.{key}" if path else str(key)
            inline = _inline(member, child, sections)
            if inline is not None:
                lines.append(f"{pad}{name}: {inline}")
            else:
                lines.append(f"{pad}{name}:")
                lines += _block(member, child, indent + 1, sections)
        return lines
    if isinstance(value, list | tuple):
        if not value:
            return [pad + "[]"]
        lines = []
        for n, item in enumerate(value):
            child = f"{path}[{n}]"
            inline = _inline(item, child, sections)
            if inline is not None:
                lines.append(f"{pad}- {inline}")
            else:
                nested = _block(item, child, indent + 1, sections)
                lines.append(f"{pad}- {nested[0].lstrip()}")
                lines += nested[1:]
        return lines
    return [pad + _scalar(value)]


def _inline(value: Any, path: str, sections: list[tuple[str, str]]) -> str | None:
    """A one-line rendering, or None when the value needs its own block."""
    if isinstance(value, str):
        if value.count("\n") >= _SECTION_LINES or (len(value) > _SECTION_CHARS and "\n" in value):
            sections.append((path, value))
            return f"(see [{path}] below, {len(value.splitlines())} lines)"
        return _scalar(value)
    if isinstance(value, dict):
        return "{}" if not value else None
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        if all(not isinstance(v, dict | list | tuple) for v in value):
            flow = "[" + ", ".join(_scalar(v, flow=True) for v in value) + "]"
            if len(flow) <= _INLINE_LIST and "\n" not in flow:
                return flow
        return None
    return _scalar(value)


def _scalar(value: Any, flow: bool = False) -> str:
    if isinstance(value, str):
        plain = (
            _PLAIN.fullmatch(value) is not None
            and value == value.strip()
            and not _LOOKS_TYPED.fullmatch(value)
            and not (flow and ("," in value or "]" in value))
        )
        return value if plain else json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, default=json_default)


def _key(key: str) -> str:
    return (
        key if _PLAIN.fullmatch(key) and key == key.strip() else json.dumps(key, ensure_ascii=False)
    )
