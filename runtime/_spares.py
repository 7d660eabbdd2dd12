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
        self._arrivals: deque[float] = deque(maxlen=256)

    def arrived(self, now: float) -> None:
        """A call came at ``now``."""
        self._arrivals.append(now)

    def burst(self, now: float) -> int:
        """The largest number of calls that came close together within the last ``QUIET_S``."""
        largest = run = 0
        previous: float | None = None
        for at in self._arrivals:
            if now - at > QUIET_S:
                previous = None
                continue
            run = run + 1 if previous is not None and at - previous <= CLOSE_S else 1
            largest = max(largest, run)
            previous = at
        return largest

    def until_pause(self, now: float) -> float:
        """Seconds until the current burst counts as paused (0 when it already does)."""
        if not self._arrivals:
            return 0.0
        return max(0.0, CLOSE_S - (now - self._arrivals[-1]))

    def plan(self, now: float) -> Plan:
        """``base`` full spares always (an agent's next call gets the best prepared worker),
        and lean ones beside them for as many more calls as the recent bursts brought."""
        if self.base == 0:
            return Plan(0)
        return Plan(self.base, max(0, min(self.cap, self.burst(now)) - self.base))
