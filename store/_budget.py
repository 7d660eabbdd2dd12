"""Token budgets: how many tokens a selection may take, and which end gives way.

The store imports no tokenizer: a budget counts with the ``count`` it is given (the fabric
layer passes tiktoken's o200k_base counter, ``runtime.boundary.TokenCounter().count``), else
with :func:`store.estimate_tokens` on the UTF-8 size (about four bytes a token).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from store._errors import InvalidRequest
from store._store import estimate_tokens

Count = Callable[[str], int]
"""Tokens of a text."""

MAX_TOKENS = 10_000_000
"""The largest budget accepted (far beyond any model's context window)."""


class Truncation(StrEnum):
    """Which items give way when the selected ones do not all fit, in their given order."""

    TOP = "TOP"
    """Drop from the top: keep the last items (the most recent, for a conversation)."""
    BOTTOM = "BOTTOM"
    """Drop from the bottom: keep the first items (the heaviest, for a lorebook selection)."""
    MIDDLE = "MIDDLE"
    """Drop from the middle: keep the first and the last items, alternately."""


def estimated(text: str) -> int:
    """The count used when none is injected: the UTF-8 size over four, rounded up."""
    return estimate_tokens(len(text.encode("utf-8", "surrogatepass")))


@dataclass(frozen=True)
class TokenBudget:
    """At most ``max_tokens`` tokens; with ``context_window_size`` (the model's whole window)
    also at most what the window leaves once the triggering text is counted, so that the text
    and the selection fit the model together. ``count`` counts tokens (see the module)."""

    max_tokens: int
    context_window_size: int | None = None
    truncation: Truncation = Truncation.BOTTOM
    count: Count | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_tokens("max_tokens", self.max_tokens)
        if self.context_window_size is not None:
            _check_tokens("context_window_size", self.context_window_size)
        try:
            object.__setattr__(self, "truncation", Truncation(self.truncation))
        except ValueError:
            raise InvalidRequest(
                f"truncation must be TOP, BOTTOM or MIDDLE, not {self.truncation!r}"
            ) from None

    def counter(self, default: Count | None = None) -> Count:
        """The budget's own count, else ``default``, else the estimate."""
        return self.count or default or estimated

    def limit(self, text: str = "", count: Count | None = None) -> int:
        """Tokens available to a selection triggered by ``text``."""
        if self.context_window_size is None:
            return self.max_tokens
        left = self.context_window_size - self.counter(count)(text)
        return max(0, min(self.max_tokens, left))

    def fit(self, costs: Sequence[int], limit: int) -> list[int]:
        """Indexes (ascending) of the items kept within ``limit`` tokens, each item costing
        ``costs[i]``: items are taken from the end the truncation keeps, and one that no longer
        fits is skipped so a smaller one after it may still come in. The kept costs never sum
        past ``limit``."""
        order: list[int]
        n = len(costs)
        if self.truncation is Truncation.BOTTOM:
            order = list(range(n))
        elif self.truncation is Truncation.TOP:
            order = list(range(n - 1, -1, -1))
        else:
            order = []
            low, high = 0, n - 1
            while low <= high:
                order.append(low)
                if high != low:
                    order.append(high)
                low, high = low + 1, high - 1
        kept: list[int] = []
        spent = 0
        for i in order:
            if spent + costs[i] <= limit:
                kept.append(i)
                spent += costs[i]
        return sorted(kept)


def _check_tokens(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        raise InvalidRequest(
            f"{name} must be a whole number of tokens from 0 to {MAX_TOKENS}, not {value!r}"
        )
