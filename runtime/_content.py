"""Content blocks: a result made of text, images, audio and embedded resources, declared once.

A snippet hands back content blocks when its value is a non-empty list of dicts, each with a
``type`` naming a kind of block (:data:`BLOCK_TYPES`) and no key that kind does not take, in
either spelling (``mime_type`` or MCP's ``mimeType``, ``_meta`` or ``meta``)::

    [{"type": "text", "text": "the chart:"},
     {"type": "image", "data": png_bytes, "mime_type": "image/png"}]

What an MCP provider returned as content (``data`` as base64 text, ``mimeType``) is taken as
it is. Such a list is then validated strictly by the models below: a block that breaks its
model, a media type that is not one models read, bytes that are not what ``mime_type`` says,
or a medium over its cap is an error naming ``value[i].field`` and the fix. Any other list,
however similar, is plain data; when it holds something typed as a medium, a note on the
result says which item kept it from being content blocks.

The models are the one source: the boundary, the MCP replies, the README's table
(``python -m runtime._content_docs README.md``) and the ``fabric_exec`` description are made
from them and the limits beside them.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
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
    ValidationError,
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
_MIME = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$", re.I)


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


def _spelled(*names: str) -> Any:
    return Field(validation_alias=AliasChoices(*names))


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True)


class BlockAnnotations(_Model):
    """MCP's annotations of a block, forwarded to MCP clients (a test holds them to the
    SDK's)."""

    audience: list[Literal["user", "assistant"]] | None = None
    """Who the block is for."""
    priority: float | None = Field(None, ge=0.0, le=1.0)
    """How much the block matters, 0 to 1."""
    last_modified: str | None = Field(
        None, validation_alias=AliasChoices("last_modified", "lastModified")
    )
    """ISO 8601 time the content was last changed."""


class _Block(_Model):
    annotations: BlockAnnotations | None = None
    """MCP annotations, forwarded to MCP clients as they are."""
    meta: dict[str, Any] | None = Field(None, validation_alias=AliasChoices("_meta", "meta"))
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
    mime_type: str = _spelled("mime_type", "mimeType")
    """One of :data:`IMAGE_TYPES`; the bytes must be of that type."""


class AudioBlock(_Block):
    """An audio clip, kept at its place among the blocks."""

    type: Literal["audio"] = "audio"
    data: Media
    """The encoded audio; over MCP, base64 text."""
    mime_type: str = _spelled("mime_type", "mimeType")
    """One of :data:`AUDIO_TYPES`."""


class TextResource(_Model):
    """An embedded resource's text: text the model reads, under the shared budget."""

    uri: str = Field(min_length=1)
    mime_type: str | None = Field(None, validation_alias=AliasChoices("mime_type", "mimeType"))
    text: str
    meta: dict[str, Any] | None = Field(None, validation_alias=AliasChoices("_meta", "meta"))


class BlobResource(_Model):
    """An embedded resource's bytes: a medium, under the media caps."""

    uri: str = Field(min_length=1)
    mime_type: str | None = Field(None, validation_alias=AliasChoices("mime_type", "mimeType"))
    blob: Media
    """The bytes; over MCP, base64 text."""
    meta: dict[str, Any] | None = Field(None, validation_alias=AliasChoices("_meta", "meta"))


def _contents_kind(value: object) -> str | None:
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
        Discriminator(_contents_kind),
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


_KEYS = {kind: spellings(model) for kind, model in MODELS.items()}
_EXAMPLES = {
    "text": '{"type": "text", "text": "..."}',
    "image": '{"type": "image", "data": <bytes>, "mime_type": "image/png"}',
    "audio": '{"type": "audio", "data": <bytes>, "mime_type": "audio/wav"}',
    "resource": '{"type": "resource", "resource": {"uri": "file:///a.txt", "text": "..."}} '
    '(or "blob": <bytes>)',
}


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


# -- recognising and checking ------------------------------------------------------------------


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
    return Recognised(blocks)


def _not_a_block(item: object) -> str | None:
    """Why ``item`` cannot be a content block; None when it has the shape of one."""
    if not isinstance(item, dict):
        return f"is a {type(item).__name__}, not a block"
    kind = item.get("type")
    if not isinstance(kind, str) or kind not in _KEYS:
        return "has no type among " + ", ".join(BLOCK_TYPES)
    other = [key for key in item if not isinstance(key, str) or key not in _KEYS[kind]]
    if other:
        return (
            f"has {str(other[0])[:40]!r}, which {_article(kind)} {kind} block does not take "
            f"(it takes {_fields(_KEYS[kind])})"
        )
    return None


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _fields(keys: dict[str, str]) -> str:
    """The fields behind ``keys``, each once."""
    return ", ".join(dict.fromkeys(keys.values()))


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
                f"{where}: a second spelling of {field}",
                "give each field once, in one spelling",
            )
        return ContentError(
            "runtime", f"{where}: not a field here (it takes {_fields(known)})", example
        )
    got = type(first["input"]).__name__
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
        return BlobResource if _contents_kind(item.get("resource")) == "blob" else TextResource
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
