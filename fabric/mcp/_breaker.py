"""A circuit breaker against re-run loops: the same code sent again and again.

It says what it knows, and nothing more: the earlier result's handle when it was stored, the
earlier result itself when it was small and came back whole, and that the same code returned
it before (not that it cannot change: a snippet may read a file that changed since).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

WARN_AT = 3
REFUSE_AT = 6
SHOWN_CHARS = 2000
"""An earlier result up to this long is shown again in the refusal; a longer one is not."""


@dataclass
class _Streak:
    digest: str = ""
    count: int = 0
    handle: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class Earlier:
    """What the breaker knows of the last result of the code sent again."""

    handle: str | None = None
    """Where it is stored, when it was offloaded."""
    text: str | None = None
    """What the model read, when it came back whole and small."""


class RepeatBreaker:
    """Counts identical ``fabric_exec`` codes in a row, per client session."""

    def __init__(self) -> None:
        self._streaks: dict[object, _Streak] = {}

    def see(self, session: object, code: str) -> tuple[int, Earlier]:
        """Record ``code``; return how many times in a row it was sent, and what is known of
        the last result it produced."""
        digest = hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()
        streak = self._streaks.setdefault(session, _Streak())
        if streak.digest == digest:
            streak.count += 1
        else:
            streak.digest, streak.count, streak.handle, streak.text = digest, 1, None, None
        return streak.count, Earlier(streak.handle, streak.text)

    def remember(self, session: object, handle: str | None, text: str) -> None:
        """The result the code just produced: its handle, or its text when it is small."""
        streak = self._streaks.get(session)
        if streak is not None:
            streak.handle = handle
            streak.text = text if handle is None and len(text) <= SHOWN_CHARS else None

    @staticmethod
    def warning(count: int, earlier: Earlier) -> str:
        where = (
            f" Its full result is stored as {earlier.handle}: read it with "
            f'ctx_read(handle="{earlier.handle}") instead of running it again.'
            if earlier.handle
            else " Use the result you already have, or change the code."
        )
        return (
            f"[warning: this exact code ran {count} times in a row; the same code returned "
            f"this before.{where} The {REFUSE_AT}th identical run in a row is refused.]"
        )

    @staticmethod
    def refusal(count: int, earlier: Earlier) -> str:
        if earlier.handle:
            where = (
                f'Its earlier result is stored: read it with ctx_read(handle="{earlier.handle}",'
                " query=...) or offset=/length=."
            )
        elif earlier.text is not None:
            where = f"The same code returned this the last time:\n{earlier.text}"
        else:
            where = "Use the result you already have, or change the code."
        return f"Refused: this exact code was sent {count} times in a row, a re-run loop. {where}"
