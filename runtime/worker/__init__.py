"""The worker side of the sandbox: imports only the standard library, the contract,
RestrictedPython and libseccomp's binding.

``python -m runtime.worker FD`` starts the zygote that forks one worker per execution.
The host side lives in :mod:`runtime`; nothing here imports it.
"""

from runtime.worker._confine import ISOLATION_MODES, OPTIONAL_LAYERS
from runtime.worker._errors import PolicyError, ToolError
from runtime.worker._guards import Guards, SnippetClasses, make_guards
from runtime.worker._policy import CompileProblem, compile_snippet
from runtime.worker._probes import PROBES
from runtime.worker._values import Admission
from runtime.worker._wire import (
    CallMessage,
    CallReply,
    ExecRequest,
    ProbeRequest,
    WireError,
    WireLimits,
)

__all__ = [
    "ISOLATION_MODES",
    "OPTIONAL_LAYERS",
    "PROBES",
    "Admission",
    "CallMessage",
    "CallReply",
    "CompileProblem",
    "ExecRequest",
    "Guards",
    "PolicyError",
    "ProbeRequest",
    "SnippetClasses",
    "ToolError",
    "WireError",
    "WireLimits",
    "compile_snippet",
    "make_guards",
]
