"""How many spare workers to keep, and how to prepare them, from how calls have been arriving.

A spare is a worker forked and locked down ahead of its request. At an agent's pace (a model
turn between calls) ``base`` spares, fully prepared (they rehearse an execution and fault in a
heap while they wait), are enough. Calls can also come in bursts: sub-agents firing together, or
a model sending several snippets in a row. A burst of N calls needs N spares ready before it
starts, because a full spare takes longer to prepare than a call takes to run. So the pool
remembers the largest recent burst (calls that followed each other within ``CLOSE_S``) and
keeps that many spares, up to ``cap``, which bounds the memory idle spares hold. The extra
spares are lean (locked down, no rehearsal, no heap: ready in a few milliseconds, and a few
MiB each). Once no burst has been seen for ``QUIET_S``, the pool goes back to ``base`` full
spares.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

CLOSE_S = 0.005
"""Calls this close together belong to one burst: back to back, each arriving before the
spare forked after the previous one could be ready."""

QUIET_S = 30.0
"""A burst is remembered this long."""

DEFAULT_CAP = 8
"""Spares kept at most."""


@dataclass(frozen=True)
class Plan:
    """What the pool should hold now: ``full`` spares, and ``lean`` ones beside them."""

    full: int
    lean: int = 0

    @property
    def wanted(self) -> int:
        return self.full + self.lean


class SparePolicy:
    """Remembers when calls came, and sizes the pool of spares from the bursts among them."""

    def __init__(self, base: int, cap: int = DEFAULT_CAP) -> None:
        self.base = base
        self.cap = max(cap, base)
        self._last: float | None = None
        self._run = 0
        self._largest: deque[tuple[float, int]] = deque()
        """The longest run that ended at each time, each longer than every later one's: a
        sliding maximum, so ``burst`` costs what has left the window, not every call."""

    def arrived(self, now: float) -> None:
        """A call came at ``now``."""
        close = self._last is not None and now - self._last <= CLOSE_S
        self._run = self._run + 1 if close else 1
        self._last = now
        while self._largest and self._largest[-1][1] <= self._run:
            self._largest.pop()
        self._largest.append((now, self._run))

    def burst(self, now: float) -> int:
        """The largest number of calls that came close together, the last of them within the
        last ``QUIET_S``."""
        while self._largest and now - self._largest[0][0] > QUIET_S:
            self._largest.popleft()
        return self._largest[0][1] if self._largest else 0

    def until_pause(self, now: float) -> float:
        """Seconds until the current burst counts as paused (0 when it already does)."""
        if self._last is None:
            return 0.0
        return max(0.0, CLOSE_S - (now - self._last))

    def plan(self, now: float) -> Plan:
        """``base`` full spares always (an agent's next call gets the best prepared worker),
        and lean ones beside them for as many more calls as the recent bursts brought."""
        if self.base == 0:
            return Plan(0)
        return Plan(self.base, max(0, min(self.cap, self.burst(now)) - self.base))
