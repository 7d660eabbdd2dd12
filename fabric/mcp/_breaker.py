"""A circuit breaker against re-run loops: the same code sent again and again."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

WARN_AT = 3
REFUSE_AT = 6


@dataclass
class _Streak:
    digest: str = ""
    count: int = 0
    handle: str | None = None


class RepeatBreaker:
    """Counts identical ``fabric_exec`` codes in a row, per client session."""

    def __init__(self) -> None:
        self._streaks: dict[object, _Streak] = {}

    def see(self, session: object, code: str) -> tuple[int, str | None]:
        """Record ``code``; return how many times in a row it was sent, and the handle of the
        last result it produced (if any)."""
        digest = hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()
        streak = self._streaks.setdefault(session, _Streak())
        if streak.digest == digest:
            streak.count += 1
        else:
            streak.digest, streak.count, streak.handle = digest, 1, None
        return streak.count, streak.handle

    def remember(self, session: object, handle: str | None) -> None:
        if handle is not None and session in self._streaks:
            self._streaks[session].handle = handle

    @staticmethod
    def warning(count: int) -> str:
        return (
            f"[warning: this exact code ran {count} times in a row; its result will not change. "
            f"Read the earlier result (ctx_read on its handle) instead of running it again; the "
            f"{REFUSE_AT}th identical run is refused.]"
        )

    @staticmethod
    def refusal(count: int, handle: str | None) -> str:
        where = (
            f'Read it with ctx_read(handle="{handle}", query=...) or offset=/length=.'
            if handle
            else "Use the result you already have, or change the code."
        )
        return (
            f"Refused: this exact code was sent {count} times in a row, a re-run loop. The "
            f"earlier result is unchanged. {where}"
        )
