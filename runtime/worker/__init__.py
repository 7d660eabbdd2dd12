"""The worker side of the sandbox: imports only the standard library and RestrictedPython.

``python -m runtime.worker FD`` starts the zygote that forks one worker per execution.
The host side lives in :mod:`runtime`; nothing here imports it.
"""

from runtime.worker._confine import ISOLATION_MODES, OPTIONAL_LAYERS
from runtime.worker._policy import CompileProblem, compile_snippet
from runtime.worker._probes import PROBES
from runtime.worker._sandbox import NAMESPACES
from runtime.worker._wire import WireError

__all__ = [
    "ISOLATION_MODES",
    "NAMESPACES",
    "OPTIONAL_LAYERS",
    "PROBES",
    "CompileProblem",
    "WireError",
    "compile_snippet",
]
