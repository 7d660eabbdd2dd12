"""Labels the host puts on the provider call it is serving: its risk class and how it was
approved, for the call's ``CallRecord`` and the execution's ``CallTotals``.

The runtime measures what it can see (duration, frame sizes, the error code); what a call
*is* is known only to whoever serves it. ``label_call`` writes into the labels of the call
being served in the current task (set by the runtime before it hands the call over), so no
signature of the provider host changes and a host that never labels costs nothing.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class CallLabels:
    """What the host said about one call."""

    risk: str | None = None
    approval: str | None = None


CURRENT: ContextVar[CallLabels | None] = ContextVar("fabric_call_labels", default=None)


def label_call(*, risk: str | None = None, approval: str | None = None) -> None:
    """Label the provider call served in this task; outside one, nothing happens."""
    labels = CURRENT.get()
    if labels is None:
        return
    if risk is not None:
        labels.risk = risk
    if approval is not None:
        labels.approval = approval
