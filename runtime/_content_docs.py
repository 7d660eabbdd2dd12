"""The README's table of content blocks, generated from their models and limits.

``python -m runtime._content_docs README.md`` rewrites the lines between the README's blocks
markers; a test fails when they drift from what this module makes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from contract import markers, write_block
from runtime._content import (
    AUDIO_TYPES,
    IMAGE_TYPES,
    MAX_BLOCKS,
    MAX_MEDIA_BYTES,
    MAX_MEDIUM_BYTES,
    MAX_META_BYTES,
    MAX_META_DEPTH,
    MAX_MIME_CHARS,
    MAX_URI_CHARS,
    MODELS,
    BlobResource,
    TextResource,
    spellings,
)
from runtime.boundary._blocks import SIBLING_BYTES, SIBLINGS, SIBLINGS_BYTES

START, END = markers("blocks", "python -m runtime._content_docs README.md")
_GETS = {
    "text": "the text, within the budget all text blocks share",
    "image": "the image, at its place",
    "audio": "the clip, at its place",
    "resource": "a `text`: text within the shared budget; a `blob`: the bytes, at its place",
}
_BINARY = {"data": " (bytes, or base64 text)", "blob": " (bytes, or base64 text)"}
_RULES = {
    "text": "—",
    "image": ", ".join(f"`{mime}`" for mime in IMAGE_TYPES) + "; the bytes must be of that type",
    "audio": ", ".join(f"`{mime}`" for mime in AUDIO_TYPES),
    "resource": f"`uri` required, at most {MAX_URI_CHARS} characters; `text` or `blob`, not "
    "both; `mime_type` as type/subtype",
}


def readme_table() -> str:
    """A Markdown table of the kinds of block, then the limits."""
    lines = [
        START,
        "| `type` | keys (either spelling) | the model gets | media types, rules |",
        "| --- | --- | --- | --- |",
    ]
    for kind, model in MODELS.items():
        keys = _keys(spellings(model))
        if kind == "resource":
            merged = {**spellings(TextResource), **spellings(BlobResource)}
            inner = dict(sorted(merged.items(), key=lambda item: item[1] == "meta"))
            keys = keys.replace("`resource`", f"`resource` ({_keys(inner)})")
        lines.append(f"| `{kind}` | {keys} | {_GETS[kind]} | {_RULES[kind]} |")
    mib = 1024 * 1024
    lines += [
        "",
        f"Limits: at most {MAX_BLOCKS} blocks; an image, clip or blob of at most "
        f"{MAX_MEDIUM_BYTES // mib} MiB (decoded), the media of one result {MAX_MEDIA_BYTES // mib}"
        f" MiB together, and the whole value within `maxResultBytes`; a `mime_type` of at most "
        f"{MAX_MIME_CHARS} characters, `annotations.audience` of at most two (`user`, `assistant`)"
        f"; `_meta` a JSON object at most {MAX_META_DEPTH} levels deep "
        f"and {MAX_META_BYTES // 1024} KiB as JSON, and all of a result's together. Kept "
        "beside the media "
        f"when the text is offloaded: text blocks of at most {SIBLING_BYTES} bytes, first come "
        f"first kept, {SIBLINGS_BYTES} bytes (and a quarter of the budget) and {SIBLINGS} "
        "blocks in all.",
        END,
    ]
    return "\n".join(lines)


def _keys(keys: dict[str, str]) -> str:
    """Each field once, its spellings joined by a slash (``mime_type``/``mimeType``)."""
    by_field: dict[str, list[str]] = {}
    for key, field in keys.items():
        by_field.setdefault(field, []).append(key)
    shown = {
        field: "/".join(f"`{key}`" for key in spelled) + _BINARY.get(field, "")
        for field, spelled in by_field.items()
    }
    return ", ".join(shown.values())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m runtime._content_docs README.md")
    changed = write_block(Path(sys.argv[1]), readme_table(), START, END)
    print(f"{sys.argv[1]}: {'updated' if changed else 'already up to date'}")
