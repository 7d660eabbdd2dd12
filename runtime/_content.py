"""Content blocks: a result made of text, images, audio and embedded resources, declared once.

A snippet returns content blocks as a list of dicts, each with a ``type`` naming a kind of
block (:data:`BLOCK_TYPES`)::

    [{"type": "text", "text": "the chart:"},
     {"type": "image", "data": png_bytes, "mime_type": "image/png"}]

The models below say what each kind takes, in either spelling (``mime_type`` or MCP's
``mimeType``, ``_meta`` or ``meta``; ``data`` as bytes or MCP's base64 text), and the limits
beside them bound what one result carries. They are the one source: the check of what a
snippet returned (``_recognise.py``), the boundary, the MCP replies, the README's table
(``python -m runtime._content_docs README.md``) and the ``fabric_exec`` description are made
from them.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    Tag,
)
from pydantic_core import PydanticCustomError

MIB = 1024 * 1024
MAX_BLOCKS = 64
"""The most content blocks one result may have."""
MAX_MEDIUM_BYTES = 5 * MIB
"""The most bytes one image, audio clip or blob may hold (decoded)."""
MAX_MEDIA_BYTES = 10 * MIB
"""The most bytes the media of one result may hold together."""
IMAGE_TYPES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),  # and "WEBP" at offset 8
}
"""The image types models read, each with the bytes its files start with."""
AUDIO_TYPES: tuple[str, ...] = (
    "audio/wav",
    "audio/x-wav",
    "audio/mpeg",
    "audio/mp3",
    "audio/ogg",
    "audio/flac",
    "audio/webm",
    "audio/mp4",
    "audio/aac",
)
"""The audio types a block may declare."""
MAX_URI_CHARS = 2048
"""The most characters a resource's ``uri`` may have (a name, not content)."""
MAX_MIME_CHARS = 255
"""The most characters a ``mime_type`` may have (RFC 6838: 127 for the type and subtype
each)."""
MAX_STAMP_CHARS = 64
"""The most characters an annotation's ``last_modified`` may have."""
MAX_META_BYTES = 64 * 1024
"""The most bytes a ``_meta`` may hold as JSON, and all of one result's together."""
MAX_META_DEPTH = 32
"""The deepest a ``_meta`` may nest (the object itself is level 1)."""


# -- the models -------------------------------------------------------------------------------


def _bytes_or_base64(value: object) -> object:
    """Media as bytes: bytes as they are, text as base64 (MCP's form), checked strictly."""
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise PydanticCustomError("base64", "neither bytes nor base64 text") from None
    return value


def _as_base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


Media = Annotated[
    bytes, BeforeValidator(_bytes_or_base64), PlainSerializer(_as_base64, when_used="json")
]
"""Binary data: given as bytes or base64 text, held as bytes, written to JSON as base64."""


MimeType = Annotated[str, Field(max_length=MAX_MIME_CHARS)]
"""A media type as text (type/subtype), of bounded length."""


def meta_bytes(value: object) -> int:
    """About how many bytes ``value`` takes as JSON, walked no further than
    :data:`MAX_META_DEPTH` levels and :data:`MAX_META_BYTES` bytes; raises a pydantic error
    for what is not JSON (a key not text, bytes, nan), deeper or larger."""
    size = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth > MAX_META_DEPTH:
                raise PydanticCustomError(
                    "meta_depth", "nests deeper than {most} levels", {"most": MAX_META_DEPTH}
                )
            size += 1
            pairs = item.items() if isinstance(item, dict) else ((None, one) for one in item)
            for key, inner in pairs:
                if isinstance(item, dict):
                    if not isinstance(key, str):
                        raise PydanticCustomError(
                            "meta_json",
                            "has a key of type {kind} ({key}), not text",
                            {"kind": type(key).__name__, "key": repr(key)[:40]},
                        )
                    size += _text_bytes(key) + 1
                size += 1
                stack.append((inner, depth + 1))
                if size > MAX_META_BYTES:
                    break
        elif isinstance(item, str):
            size += _text_bytes(item)
        elif item is None or isinstance(item, bool):
            size += 5
        elif isinstance(item, int):
            size += item.bit_length() // 3 + 2  # decimal digits, about
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise PydanticCustomError(
                    "meta_json", "holds {item}, which JSON has not", {"item": repr(item)}
                )
            size += len(repr(item))
        else:
            raise PydanticCustomError(
                "meta_json",
                "holds a value of type {kind}, which is not JSON",
                {"kind": type(item).__name__},
            )
        if size > MAX_META_BYTES:
            raise PydanticCustomError(
                "meta_size", "more than {most} bytes as JSON", {"most": MAX_META_BYTES}
            )
    return size


def _text_bytes(text: str) -> int:
    if len(text) > MAX_META_BYTES:
        return len(text)  # over already: no need to encode it
    return len(text.encode("utf-8", "surrogatepass")) + 2


def _bounded_json(value: object) -> object:
    if isinstance(value, dict):  # else the model says what it must be
        meta_bytes(value)
    return value


Meta = Annotated[dict[str, Any], BeforeValidator(_bounded_json)]
"""MCP's ``_meta``: a JSON object, at most :data:`MAX_META_DEPTH` deep and
:data:`MAX_META_BYTES` bytes."""


def _spelled(*names: str, **given: Any) -> Any:
    return Field(validation_alias=AliasChoices(*names), **given)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True)


class BlockAnnotations(_Model):
    """MCP's annotations of a block, forwarded to MCP clients (a test holds them to the
    SDK's)."""

    audience: list[Literal["user", "assistant"]] | None = Field(None, max_length=2)
    """Who the block is for."""
    priority: float | None = Field(None, ge=0.0, le=1.0)
    """How much the block matters, 0 to 1."""
    last_modified: str | None = Field(
        None,
        max_length=MAX_STAMP_CHARS,
        validation_alias=AliasChoices("last_modified", "lastModified"),
    )
    """ISO 8601 time the content was last changed."""


class _Block(_Model):
    annotations: BlockAnnotations | None = None
    """MCP annotations, forwarded to MCP clients as they are."""
    meta: Meta | None = _spelled("_meta", "meta", default=None)
    """MCP's ``_meta``, forwarded as it is."""


class TextBlock(_Block):
    """Text the model reads. All text blocks of a result share one budget."""

    type: Literal["text"] = "text"
    text: str


class ImageBlock(_Block):
    """An image the model sees at its place among the blocks."""

    type: Literal["image"] = "image"
    data: Media
    """The encoded image (PNG bytes, say); over MCP, base64 text."""
    mime_type: MimeType = _spelled("mime_type", "mimeType")
    """One of :data:`IMAGE_TYPES`; the bytes must be of that type."""


class AudioBlock(_Block):
    """An audio clip, kept at its place among the blocks."""

    type: Literal["audio"] = "audio"
    data: Media
    """The encoded audio; over MCP, base64 text."""
    mime_type: MimeType = _spelled("mime_type", "mimeType")
    """One of :data:`AUDIO_TYPES`."""


class TextResource(_Model):
    """An embedded resource's text: text the model reads, under the shared budget."""

    uri: str = Field(min_length=1, max_length=MAX_URI_CHARS)
    mime_type: MimeType | None = _spelled("mime_type", "mimeType", default=None)
    text: str
    meta: Meta | None = _spelled("_meta", "meta", default=None)


class BlobResource(_Model):
    """An embedded resource's bytes: a medium, under the media caps."""

    uri: str = Field(min_length=1, max_length=MAX_URI_CHARS)
    mime_type: MimeType | None = _spelled("mime_type", "mimeType", default=None)
    blob: Media
    """The bytes; over MCP, base64 text."""
    meta: Meta | None = _spelled("_meta", "meta", default=None)


def contents_kind(value: object) -> str | None:
    """Which contents an embedded resource holds: ``blob`` or ``text``."""
    if isinstance(value, BlobResource) or (isinstance(value, dict) and "blob" in value):
        return "blob"
    if isinstance(value, TextResource | dict):
        return "text"
    return None


class ResourceBlock(_Block):
    """An embedded resource (MCP's ``EmbeddedResource``): its ``text`` is text under the
    shared budget, its ``blob`` a medium."""

    type: Literal["resource"] = "resource"
    resource: Annotated[
        Annotated[TextResource, Tag("text")] | Annotated[BlobResource, Tag("blob")],
        Discriminator(contents_kind),
    ]


ContentBlock = Annotated[
    TextBlock | ImageBlock | AudioBlock | ResourceBlock, Field(discriminator="type")
]
"""One block of a result, as the model gets it."""
MODELS: dict[str, type[_Block]] = {
    "text": TextBlock,
    "image": ImageBlock,
    "audio": AudioBlock,
    "resource": ResourceBlock,
}
"""Each kind of block and its model."""
BLOCK_TYPES: tuple[str, ...] = tuple(MODELS)


def spellings(model: type[BaseModel]) -> dict[str, str]:
    """Every key ``model`` takes (each spelling), and the field it fills: ``type`` first,
    MCP's ``annotations`` and ``_meta`` last."""
    keys: dict[str, str] = {}
    for name, info in sorted(model.model_fields.items(), key=_field_order):
        keys[name] = name
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            keys.update({choice: name for choice in alias.choices if isinstance(choice, str)})
    return keys


def _field_order(item: tuple[str, Any]) -> int:
    return {"type": 0, "annotations": 2, "meta": 3}.get(item[0], 1)


# -- what a block holds ---------------------------------------------------------------------


def text_of(block: ContentBlock) -> str | None:
    """The text the model reads in ``block``; None for a medium."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ResourceBlock) and isinstance(block.resource, TextResource):
        return block.resource.text
    return None


def media_bytes(block: ContentBlock) -> int:
    """Bytes of the medium in ``block`` (0 for text)."""
    if isinstance(block, ImageBlock | AudioBlock):
        return len(block.data)
    if isinstance(block, ResourceBlock) and isinstance(block.resource, BlobResource):
        return len(block.resource.blob)
    return 0


def metas_bytes(block: ContentBlock) -> int:
    """Bytes of the ``_meta`` of ``block`` and of its resource, as JSON (about)."""
    metas = [block.meta, block.resource.meta if isinstance(block, ResourceBlock) else None]
    return sum(meta_bytes(meta) for meta in metas if meta is not None)


def as_text(block: ContentBlock) -> str:
    """``block`` as text: its text, or a line for a medium (``[image/png, 1234 bytes]``)."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ImageBlock | AudioBlock):
        return f"[{block.mime_type}, {len(block.data)} bytes]"
    contents = block.resource
    kind = f", {contents.mime_type}" if contents.mime_type else ""
    if isinstance(contents, TextResource):
        return f"[resource {contents.uri}{kind}]\n{contents.text}"
    return f"[resource {contents.uri}{kind}, {len(contents.blob)} bytes]"


def described(block: ContentBlock) -> dict[str, Any]:
    """``block`` without its payload: its type, media type, uri and size in bytes."""
    out: dict[str, Any] = {"type": block.type}
    if isinstance(block, ImageBlock | AudioBlock):
        out["mime_type"] = block.mime_type
    elif isinstance(block, ResourceBlock):
        out["uri"] = block.resource.uri
        out["mime_type"] = block.resource.mime_type
    text = text_of(block)
    size = media_bytes(block) if text is None else len(text.encode("utf-8", "surrogatepass"))
    return {**out, "bytes": size}


def render_blocks(blocks: tuple[ContentBlock, ...]) -> str:
    """The blocks as one text, one after the other (what a terminal shows)."""
    return "\n".join(as_text(block) for block in blocks)
