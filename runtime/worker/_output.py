"""The snippet's ``print``: captured, capped, and always valid text."""

from __future__ import annotations

import io
from typing import Any

from runtime.worker._errors import PolicyError


class Output:
    """Captured ``print`` output, capped; what does not fit is counted, not kept."""

    def __init__(self, cap: int = 0) -> None:
        self._parts: list[str] = []
        self._size = 0
        self.cap = cap
        self.dropped = 0

    def print(
        self,
        *args: Any,
        sep: str | None = " ",
        end: str | None = "\n",
        file: Any = None,
        flush: bool = False,
    ) -> None:
        if file is not None and not isinstance(file, io.StringIO):
            raise PolicyError(
                "print(file=...) is not allowed: snippets have no files (an io.StringIO is fine)"
            )
        text = (" " if sep is None else str(sep)).join(str(a) for a in args)
        text += "\n" if end is None else str(end)
        if file is not None:
            file.write(text)
            return
        if not text.isascii():
            _check_unicode(text)
        room = self.cap - self._size
        if room <= 0:
            self.dropped += len(text)
            return
        if len(text) > room:
            self.dropped += len(text) - room
            text = text[:room]
        self._parts.append(text)
        self._size += len(text)

    def text(self) -> str:
        return "".join(self._parts)


def _check_unicode(text: str) -> None:
    """Refuse a lone surrogate where it is printed, not later when the output is sent."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"print() got a lone surrogate {text[exc.start]!r} at character {exc.start}: it is "
            "not valid Unicode and cannot be shown; encode it first, e.g. "
            "s.encode('utf-8', 'backslashreplace').decode()"
        ) from None
