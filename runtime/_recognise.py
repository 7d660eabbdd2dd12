"""Whether a returned value is content blocks, and whether they can be sent.

A value is content blocks when it is a non-empty list of dicts, each with a ``type`` naming a
kind of block and no key that kind does not take (any spelling); only the first
:data:`MAX_BLOCKS` + 1 items are looked at. Such a list is validated strictly by the models:
a block that breaks its model, a media type that is not one models read, bytes that are not
what ``mime_type`` says, or a medium over its cap is a :class:`ContentError` naming
``value[i].field`` and the fix. Any other list, however similar, is plain data; when it holds
something typed as a medium, a note says which item kept it from being content blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from runtime._content import (
    AUDIO_TYPES,
    BLOCK_TYPES,
    IMAGE_TYPES,
    MAX_BLOCKS,
    MAX_MEDIA_BYTES,
    MAX_MEDIUM_BYTES,
    MAX_META_BYTES,
    MAX_META_DEPTH,
    MODELS,
    AudioBlock,
    BlobResource,
    BlockAnnotations,
    ContentBlock,
    ImageBlock,
    ResourceBlock,
    TextResource,
    contents_kind,
    media_bytes,
    metas_bytes,
    spellings,
)

_MIME = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$", re.I)

_KEYS = {kind: spellings(model) for kind, model in MODELS.items()}
_EXAMPLES = {
    "text": '{"type": "text", "text": "..."}',
    "image": '{"type": "image", "data": <bytes>, "mime_type": "image/png"}',
    "audio": '{"type": "audio", "data": <bytes>, "mime_type": "audio/wav"}',
    "resource": '{"type": "resource", "resource": {"uri": "file:///a.txt", "text": "..."}} '
    '(or "blob": <bytes>)',
}

_SHORTER = {
    "uri": "a uri names the resource (file:///report.txt, say): put its content in text or blob",
    "mime_type": 'write it as type/subtype, e.g. "text/plain" or "image/png"',
    "audience": 'give "user", "assistant" or both, each once',
    "last_modified": 'write it as ISO 8601 text, e.g. "2025-01-31T12:00:00Z"',
}
_SHORTER["mimeType"], _SHORTER["lastModified"] = _SHORTER["mime_type"], _SHORTER["last_modified"]

_META_HINT = (
    "keep _meta to a few small keys (it is forwarded to MCP clients, not read by the model); "
    "return data as a value, or store it with ctx.offload"
)


class ContentError(Exception):
    """Content blocks that cannot be sent; the boundary makes it the result's error
    (``kind`` ``runtime`` for a bad block, ``limit`` for one over a cap)."""

    def __init__(
        self, kind: Literal["runtime", "limit"], message: str, hint: str, limit: float | None = None
    ) -> None:
        super().__init__(message)
        self.kind, self.message, self.hint, self.limit = kind, message, hint, limit


@dataclass(frozen=True)
class Recognised:
    """What a value is: content blocks (``blocks``), or plain data with ``note`` saying why
    it was not taken as blocks when it looked meant to be."""

    blocks: tuple[ContentBlock, ...] | None = None
    note: str | None = None


def recognise(value: Any) -> Recognised:
    """``value`` as content blocks, validated, or plain data; raises :class:`ContentError`
    for a list of blocks that cannot be sent (a list longer than :data:`MAX_BLOCKS` whose
    first items are all blocks among them: only those are looked at)."""
    if not isinstance(value, list) or not value:
        return Recognised()
    for index, item in enumerate(value[: MAX_BLOCKS + 1]):  # more are too many blocks
        why = _not_a_block(item)
        if why is not None:
            return Recognised(note=_note(value, index, why))
    if len(value) > MAX_BLOCKS:
        raise ContentError(
            "limit",
            f"value: {len(value)} content blocks, more than the {MAX_BLOCKS} a result may have",
            "join text blocks into one, or return fewer media (or store some with ctx.offload)",
            MAX_BLOCKS,
        )
    blocks = tuple(_block(index, item) for index, item in enumerate(value))
    total = sum(media_bytes(block) for block in blocks)
    if total > MAX_MEDIA_BYTES:
        raise ContentError(
            "limit",
            f"value: the media hold {total} bytes in all, more than the {MAX_MEDIA_BYTES} one "
            "result may carry",
            "return fewer or smaller media (downscale or crop images), over several snippets",
            MAX_MEDIA_BYTES,
        )
    metas = sum(metas_bytes(block) for block in blocks)
    if metas > MAX_META_BYTES:
        raise ContentError(
            "limit",
            f"value: the _meta of the blocks hold about {metas} bytes as JSON in all, more than "
            f"the {MAX_META_BYTES} one result may carry",
            _META_HINT,
            MAX_META_BYTES,
        )
    return Recognised(blocks)


def _not_a_block(item: object) -> str | None:
    """Why ``item`` cannot be a content block; None when it has the shape of one."""
    if not isinstance(item, dict):
        return f"is a {type(item).__name__}, not a block"
    kind = item.get("type")
    if not isinstance(kind, str) or kind not in _KEYS:
        return "has no type among " + ", ".join(BLOCK_TYPES)
    other = next((key for key in item if not isinstance(key, str) or key not in _KEYS[kind]), None)
    if other is not None:
        return (
            f"has {str(other)[:40]!r}, which {_article(kind)} {kind} block does not take "
            f"(it takes {_fields(_KEYS[kind])})"
        )
    return None


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _fields(keys: dict[str, str]) -> str:
    """The fields behind ``keys``, each once."""
    return ", ".join(dict.fromkeys(map(_named, keys.values())))


def _named(field: str) -> str:
    """A field as MCP spells it (``_meta``, whose model field is ``meta``)."""
    return "_meta" if field == "meta" else field


def _note(value: list[Any], index: int, why: str) -> str | None:
    """A note when the list holds something typed as a medium, so it was meant as blocks."""
    media = ("image", "audio", "resource")
    if not any(isinstance(item, dict) and item.get("type") in media for item in value[:256]):
        return None
    return f"shown as plain data, not content blocks: value[{index}] {why}"


def _block(index: int, item: dict[str, Any]) -> ContentBlock:
    kind = item["type"]
    try:
        block: ContentBlock = MODELS[kind].model_validate(item)  # type: ignore[assignment]
    except ValidationError as exc:
        raise _invalid(index, item, exc) from None
    _check(index, item, block)
    return block


def _invalid(index: int, item: dict[str, Any], exc: ValidationError) -> ContentError:
    """The first problem pydantic found, named as the snippet wrote it."""
    first = exc.errors(include_url=False)[0]
    loc = list(first["loc"])
    if loc[:1] == ["resource"] and loc[1:2] in (["text"], ["blob"]) and len(loc) > 2:
        del loc[1]  # the tag of the resource's contents, not a key
    where = f"value[{index}]" + "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc
    )
    kind, problem = item["type"], first["type"]
    example = f"{_article(kind)} {kind} block is {_EXAMPLES[kind]}"
    if loc[:1] == ["annotations"]:
        example = 'annotations take audience (["user", "assistant"]), priority (0 to 1) '
        example += "and last_modified (ISO 8601 text)"
    if problem == "missing":
        return ContentError("runtime", f"{where}: missing", example)
    if problem == "extra_forbidden":
        known = spellings(_model_at(MODELS[kind], item, loc[:-1]))
        field = known.get(str(loc[-1]))
        if field is not None:
            return ContentError(
                "runtime",
                f"{where}: a second spelling of {_named(field)}",
                "give each field once, in one spelling",
            )
        return ContentError(
            "runtime", f"{where}: not a field here (it takes {_fields(known)})", example
        )
    got = type(first["input"]).__name__
    if problem in ("string_too_long", "too_long"):
        field = str(loc[-1])
        most = first["ctx"]["max_length"]
        unit = "characters" if problem == "string_too_long" else "items"
        return ContentError(
            "limit",
            f"{where}: {len(first['input'])} {unit}, more than the {most} it may have",
            _SHORTER.get(field, example),
            most,
        )
    if loc[-1:] == ["priority"] and problem in ("greater_than_equal", "less_than_equal"):
        return ContentError(
            "runtime", f"{where}: must be a number from 0 to 1, not {first['input']!r}", example
        )
    if problem == "meta_size":
        return ContentError("limit", f"{where}: {first['msg']}", _META_HINT, MAX_META_BYTES)
    if problem in ("meta_depth", "meta_json"):
        return ContentError(
            "runtime",
            f"{where}: {first['msg']}",
            f"give _meta as a JSON object (text keys; text, numbers, true/false, null, lists "
            f"and objects) at most {MAX_META_DEPTH} levels deep",
        )
    if problem == "base64":
        return ContentError(
            "runtime",
            f"{where}: neither bytes nor base64 text",
            "pass the bytes themselves (or their base64 text, as MCP does)",
        )
    if problem == "union_tag_not_found":
        return ContentError(
            "runtime", f"{where}: must be an object with uri and text (or blob), not {got}", example
        )
    if problem.endswith("_type"):
        return ContentError("runtime", f"{where}: {first['msg'].lower()}, not {got}", example)
    return ContentError("runtime", f"{where}: {first['msg'].lower()}", example)


def _model_at(model: type[BaseModel], item: dict[str, Any], path: list[Any]) -> type[BaseModel]:
    """The model that validates the object at ``path`` of ``item``."""
    if path == ["resource"]:
        return BlobResource if contents_kind(item.get("resource")) == "blob" else TextResource
    if path == ["annotations"]:
        return BlockAnnotations
    return model


def _check(index: int, item: dict[str, Any], block: ContentBlock) -> None:
    """What the models cannot say alone: media types, the bytes behind them, the caps."""
    where = f"value[{index}]"
    if isinstance(block, ImageBlock):
        typed = _typed(item)
        _media_type(f"{where}.{typed}", block.mime_type, tuple(IMAGE_TYPES), "an image")
        _cap(f"{where}.data", block.data, "an image")
        found = sniff(block.data)
        if found != block.mime_type:
            start = block.data[:8].hex(" ") or "nothing"
            said = f"the bytes are {found}," if found else f"the bytes (starting {start}) are"
            raise ContentError(
                "runtime",
                f"{where}.data: {said} not the {block.mime_type} that {typed} says",
                f"set {typed} to {found}"
                if found
                else "send the encoded file's bytes (a PNG's, say), not pixels or text",
            )
    elif isinstance(block, AudioBlock):
        _media_type(f"{where}.{_typed(item)}", block.mime_type, AUDIO_TYPES, "an audio")
        _cap(f"{where}.data", block.data, "an audio clip")
    elif isinstance(block, ResourceBlock):
        contents = block.resource
        if contents.mime_type is not None and not _MIME.match(contents.mime_type):
            raise ContentError(
                "runtime",
                f"{where}.resource.{_typed(item['resource'])}: {contents.mime_type[:60]!r} is "
                "not a media type",
                'write it as type/subtype, e.g. "text/plain" or "application/pdf"',
            )
        if isinstance(contents, BlobResource):
            _cap(f"{where}.resource.blob", contents.blob, "a blob")


def _typed(item: dict[str, Any]) -> str:
    """How ``item`` spells its media type."""
    return "mimeType" if "mimeType" in item else "mime_type"


def _media_type(where: str, mime: str, allowed: tuple[str, ...], what: str) -> None:
    if mime not in allowed:
        raise ContentError(
            "runtime",
            f"{where}: {mime[:60]!r} is not {what} type models read",
            "use one of " + ", ".join(allowed),
        )


def _cap(where: str, data: bytes, what: str) -> None:
    if len(data) > MAX_MEDIUM_BYTES:
        raise ContentError(
            "limit",
            f"{where}: {len(data)} bytes, more than the {MAX_MEDIUM_BYTES} {what} may hold",
            "send a smaller one (downscale or crop an image, cut a clip)",
            MAX_MEDIUM_BYTES,
        )


def sniff(data: bytes) -> str | None:
    """The image type ``data`` starts as, by its first bytes; None if none of ours."""
    for mime, starts in IMAGE_TYPES.items():
        if data.startswith(starts) and (mime != "image/webp" or data[8:12] == b"WEBP"):
            return mime
    return None
