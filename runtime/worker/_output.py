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
        pieces = [_exact(str(a)) for a in args]  # exact text: no subclass's join or __len__
        text = (" " if sep is None else _separator(sep, "sep")).join(pieces)
        text += "\n" if end is None else _separator(end, "end")
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


def _exact(text: str) -> str:
    """A ``str`` subclass's text as an exact ``str`` (its own methods never run)."""
    return text if type(text) is str else str.__str__(text)


def _separator(value: Any, what: str) -> str:
    if not issubclass(type(value), str):
        raise TypeError(f"{what} must be None or a string, not {type(value).__name__}")
    return _exact(value)


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
