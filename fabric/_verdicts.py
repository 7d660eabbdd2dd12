"""The analyzer's verdict checked against what came back.

After each execution the class, bound and size estimate the analyzer gave the snippet are
compared with the real size of its result. Two disagreements are recorded as a
``verdict_mismatch`` event and counted in ``ctx_status``:

- ``oversized``: a bounded verdict whose result is more than :data:`FACTOR` times its estimate
  (and above :data:`FLOOR_BYTES`), or, with no estimate to go by, a bounded verdict on a
  result above :data:`UNSIZED_BYTES`; the result also carries a warning saying so when it
  held provider data (NONE said it held none: the event is recorded all the same);
- ``overcautious``: an unbounded verdict on a result of at most :data:`TINY_BYTES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from analyzer import Analysis

FACTOR = 4
"""How far above its estimate a bounded result may be before the estimate counts as wrong."""
FLOOR_BYTES = 1024
"""Results this small never count as oversized, whatever the estimate."""
TINY_BYTES = 256
"""An unbounded verdict on a result this small was more cautious than the data."""
UNSIZED_BYTES = 64 * 1024
"""A result this large belies a bounded verdict that gave no size."""


@dataclass(frozen=True)
class Mismatch:
    kind: Literal["oversized", "overcautious"]
    expected: str
    """What the analyzer said, in words."""
    actual_bytes: int
    warn: bool = True
    """Whether the result says so too (an oversized verdict on provider data)."""

    def warning(self) -> str:
        return (
            f"the analyzer expected {self.expected} for this return, but it was "
            f"{self.actual_bytes} bytes: its verdict was wrong (the size of an item may be "
            "larger than the effects table says, or the data took a path it does not follow)"
        )


def checked(analysis: Analysis | None, ok: bool) -> bool:
    """Whether this result puts a verdict to the test: it succeeded and was analysed."""
    return ok and analysis is not None


def mismatch(analysis: Analysis | None, ok: bool, actual_bytes: int) -> Mismatch | None:
    """How the verdict and the result disagree, if they do."""
    if analysis is None or not checked(analysis, ok):
        return None
    estimate = analysis.estimate
    if analysis.bounded and estimate is not None:
        if actual_bytes > max(FLOOR_BYTES, FACTOR * estimate.bytes):
            expected = f"about {estimate.bytes} bytes ({estimate.basis})"
            return Mismatch("oversized", expected, actual_bytes)
        return None
    if analysis.bounded and actual_bytes > UNSIZED_BYTES:
        what = analysis.classification.value
        expected = "no provider data" if what == "NONE" else f"{what} data of bounded size"
        return Mismatch("oversized", expected, actual_bytes, warn=what != "NONE")
    if not analysis.bounded and actual_bytes <= TINY_BYTES:
        expected = f"{analysis.classification.value} data of unbounded size"
        return Mismatch("overcautious", expected, actual_bytes)
    return None
