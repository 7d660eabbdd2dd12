"""What the sandbox's isolation layers are, and what it does when the kernel layer is missing.

Fabric fails closed: under ``isolation="full"`` (the default) a snippet runs only in a worker
that loaded the seccomp filter; on a kernel without seccomp every execution is refused with an
error that says how to fix it. ``isolation="minimal"`` runs snippets without the kernel layer
(no seccomp, Landlock or namespaces) and puts :data:`MINIMAL_WARNING` on every result.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from runtime._models import ExecError
from runtime.worker._confine import SWITCHED_OFF

Isolation = Literal["full", "minimal"]
ISOLATIONS: tuple[Isolation, ...] = get_args(Isolation)
"""The modes, from the type; the worker's ``ISOLATION_MODES`` and the config's field are
checked against them by a test."""

MINIMAL_WARNING = (
    'isolation is "minimal": this snippet ran without the kernel layer (no seccomp, Landlock '
    "or namespaces), so only the language layer stood between it and the host; set "
    '"isolation": "full" on a kernel with seccomp'
)

LANGUAGE_LAYER = {
    "name": "language",
    "active": True,
    "detail": "RestrictedPython policy; values checked where they enter the snippet (attribute, "
    "item, call and iteration results, exception attributes); imports only through vetted "
    "facades; an audit hook refuses files, processes, sockets and imports",
}


class Layer(BaseModel):
    """One isolation layer and whether it is in force."""

    model_config = ConfigDict(frozen=True)

    name: str
    """``seccomp``, ``landlock``, ``user_namespace``, ``rlimits``..."""
    active: bool
    detail: str
    """What it does on this machine (kernel ABI, filter size, uid map), or why it is off."""


class Probe(BaseModel):
    """One thing a worker with the language layer bypassed tried to do to the host."""

    model_config = ConfigDict(frozen=True)

    name: str
    denied: bool
    """Whether the attempt failed, as it must."""
    detail: str


class DoctorReport(BaseModel):
    """``fabric doctor``: the layers, and the probes run inside a real worker."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    """True only when every probe was denied."""
    isolation: Isolation
    layers: tuple[Layer, ...]
    probes: tuple[Probe, ...]


def active(layers: tuple[Layer, ...], name: str) -> bool:
    return any(layer.name == name and layer.active for layer in layers)


_MEASUREMENT = "kernel layers switched off for a measurement"


def measurement_warning(without: tuple[str, ...]) -> str:
    return (
        f"{_MEASUREMENT} (without={', '.join(without)}): "
        "this snippet ran with less isolation than Fabric gives"
    )


def about_isolation(warning: str) -> bool:
    """Whether a result's warning is about the sandbox (for the user), not about the value
    (for the model too)."""
    return warning == MINIMAL_WARNING or warning.startswith(_MEASUREMENT)


def refusal(isolation: Isolation, layers: tuple[Layer, ...]) -> ExecError | None:
    """The error every execution gets when ``full`` isolation cannot be had, else None.

    A seccomp layer switched off on purpose (``without=("seccomp",)``) is not refused: that
    is a measurement, and its results say so."""
    if isolation != "full" or active(layers, "seccomp"):
        return None
    if any(layer.name == "seccomp" and SWITCHED_OFF in layer.detail for layer in layers):
        return None
    why = next((layer.detail for layer in layers if layer.name == "seccomp"), "not reported")
    return ExecError(
        kind="policy",
        type="IsolationUnavailable",
        message=f"the kernel layer is unavailable (seccomp: {why}), so Fabric refuses to run "
        "snippets",
        hint="install libseccomp (Debian and Ubuntu: libseccomp2) on a Linux kernel with seccomp, "
        'or set "isolation": "minimal" in .fabric/config.json to run with the language layer '
        "only (every result then says so); `fabric doctor` shows each layer",
    )
