"""What ``Store.put`` takes apart: the payload's bytes and content type, and its source."""

from __future__ import annotations

import json
from typing import Any

from store._errors import InvalidRequest
from store._json import json_default
from store._models import CONTENT_TYPES, ContentType, Source

_JSON_SNIFF = 8 * 1024 * 1024
_ARG_CHARS = 200


def make_source(tool: str, args: dict[str, Any] | None) -> Source:
    if not isinstance(tool, str) or not tool or len(tool) > 200:
        raise InvalidRequest("tool must be a non-empty name of at most 200 characters")
    clean: dict[str, Any] = {}
    for name, value in (args or {}).items():
        text = json.dumps(value, ensure_ascii=False, default=json_default)
        long = len(text) > _ARG_CHARS
        clean[str(name)[:100]] = text[: _ARG_CHARS - 3] + "..." if long else json.loads(text)
    return Source(tool=tool, args=clean)


def encode(data: Any, content_type: ContentType | None) -> tuple[bytes, ContentType]:
    if content_type is not None and content_type not in CONTENT_TYPES:
        raise InvalidRequest(
            f"content_type must be one of {', '.join(CONTENT_TYPES)}, not {content_type!r}"
        )
    if isinstance(data, bytes | bytearray | memoryview):
        payload = bytes(data)
        if content_type is not None:
            return payload, content_type
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            return payload, "bytes"
        return payload, sniff(text)
    if isinstance(data, str):
        try:
            payload = data.encode("utf-8")
        except UnicodeEncodeError:
            payload = data.encode("utf-8", errors="surrogatepass")
        return payload, content_type or sniff(data)
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=json_default)
    except (TypeError, ValueError) as exc:
        raise InvalidRequest(
            f"cannot store a {type(data).__name__}: pass text, bytes or a JSON value ({exc})"
        ) from None
    return text.encode("utf-8", errors="surrogatepass"), content_type or "json"


def sniff(text: str) -> ContentType:
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return "text"
    if len(text) > _JSON_SNIFF:
        return "json" if text.rstrip()[-1:] in ("}", "]") else "text"
    try:
        json.loads(text)
    except ValueError:
        return "text"
    return "json"
