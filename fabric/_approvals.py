"""The approvals policy: ``allow``, ``ask`` or ``deny`` for each provider call, from the risk
class of its provider and the ``approvals`` setting of ``.fabric/config.json``.

Keys are risk classes (``"execute": "ask"``) or tool patterns (``"tools.bash": "deny"``,
``"mcp.git.*": "allow"``; a bare namespace such as ``"mcp"`` is ``"mcp.*"``). For a call the
most specific key wins:

1. a tool key naming the tool exactly (``tools.bash``);
2. else the matching glob with the most literal characters (``mcp.git.*`` beats ``mcp.*``);
   between two as specific, the stricter mode (``deny`` over ``ask`` over ``allow``);
3. else the key of its risk class (``execute``);
4. else the class's default: read allow, write allow, execute ask, network deny, agent ask.

A provider registered without a risk class is judged as ``execute`` (:data:`UNSTATED`):
Fabric cannot know what it does, so by default it asks.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from contract import NAMESPACES
from fabric.providers._registry import RISKS, Risk

Mode = Literal["allow", "ask", "deny"]
"""What happens to a call: it runs, an approver is asked first, or it fails (``denied``)."""
MODES: tuple[Mode, ...] = get_args(Mode)
DEFAULTS: dict[Risk, Mode] = {
    "read": "allow",
    "write": "allow",
    "execute": "ask",
    "network": "deny",
    "agent": "ask",
}
"""Each class's mode when ``approvals`` does not name it. ``agent`` asks: a delegated model
spends and acts beyond what the snippet shows."""
UNSTATED: Risk = "execute"
"""The class of a provider registered without one."""
_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
_TOOL_KEY = re.compile(rf"^(?:{'|'.join(NAMESPACES)})(?:\.[A-Za-z0-9_*?]+(?:\.[A-Za-z0-9_*?]+)*)?$")


def clean(raw: Any, where: str = "config.json") -> tuple[dict[str, Mode] | None, list[str]]:
    """The entries of an ``approvals`` mapping that make sense, and a warning naming
    ``approvals.<key>`` for each that does not (the rest still apply); None when ``raw`` is
    not a mapping at all."""
    if not isinstance(raw, dict):
        kind = type(raw).__name__
        return None, [
            f'{where}: approvals must be an object such as {{"execute": "ask", '
            f'"mcp.git.*": "allow"}}, not {kind}; using the defaults'
        ]
    kept: dict[str, Mode] = {}
    warnings: list[str] = []
    for key, mode in raw.items():
        problem = _problem(key, mode)
        if problem is None:
            kept[key] = mode
        else:
            warnings.append(f"{where}: approvals.{key}: {problem}; ignored")
    return kept, warnings


def _problem(key: str, mode: Any) -> str | None:
    if key not in RISKS and not _TOOL_KEY.match(key):
        if "." not in key and "*" not in key:
            return (
                f"not a risk class ({', '.join(RISKS)}) nor a namespace ({', '.join(NAMESPACES)})"
            )
        return (
            "a tool key is a namespace, a dot and a name, '*' and '?' matching any "
            "characters (tools.bash, mcp.git.*)"
        )
    if mode not in MODES:
        return f"must be allow, ask or deny, not {mode!r}"
    return None


@dataclass(frozen=True)
class Decision:
    """What the policy says about one call, and which key said it."""

    mode: Mode
    risk: Risk
    key: str
    """The ``approvals`` key to change for a different outcome (``execute``, ``mcp.git.*``)."""
    source: Literal["tool", "class", "default"]
    """A tool key decided, the class's key, or the class's default."""

    @property
    def setting(self) -> str:
        """``approvals.<key>``, as a settings warning or an error names it."""
        return f"approvals.{self.key}"


@dataclass(frozen=True)
class _Glob:
    pattern: str
    key: str
    mode: Mode
    literal: int


class ApprovalPolicy:
    """The ``approvals`` setting, compiled: :meth:`decide` costs a dict lookup once a tool
    has been judged."""

    def __init__(self, approvals: Mapping[str, Mode]) -> None:
        self.approvals = dict(approvals)
        self._classes: dict[Risk, tuple[Mode, Literal["class", "default"]]] = {
            risk: (approvals[risk], "class") if risk in approvals else (mode, "default")
            for risk, mode in DEFAULTS.items()
        }
        self._exact: dict[str, Mode] = {}
        globs: list[_Glob] = []
        for key, mode in approvals.items():
            if key in RISKS:
                continue
            pattern = key if "." in key else f"{key}.*"
            if "*" in pattern or "?" in pattern:
                literal = len(pattern.replace("*", "").replace("?", ""))
                globs.append(_Glob(pattern, key, mode, literal))
            else:
                self._exact[key] = mode
        globs.sort(key=lambda g: (-g.literal, -_STRICTNESS[g.mode]))
        self._globs = tuple(globs)
        self._judged: dict[tuple[str | None, str], Decision] = {}

    def decide(self, risk: Risk | None, tool: str) -> Decision:
        """The decision for a call of ``tool`` (``mcp.git.status``) whose provider has class
        ``risk`` (None: :data:`UNSTATED`)."""
        known = self._judged.get((risk, tool))
        if known is not None:
            return known
        judged = risk if risk in DEFAULTS else UNSTATED
        decision = self._judge(judged, tool)
        if len(self._judged) < 4096:
            self._judged[(risk, tool)] = decision
        return decision

    def _judge(self, risk: Risk, tool: str) -> Decision:
        exact = self._exact.get(tool)
        if exact is not None:
            return Decision(exact, risk, tool, "tool")
        for glob in self._globs:
            if fnmatch.fnmatchcase(tool, glob.pattern):
                return Decision(glob.mode, risk, glob.key, "tool")
        mode, source = self._classes[risk]
        return Decision(mode, risk, risk, source)

    def modes(self) -> dict[str, Mode]:
        """Every class's mode and every tool key's, as they apply."""
        return {
            **{risk: mode for risk, (mode, _) in self._classes.items()},
            **{k: v for k, v in self.approvals.items() if k not in RISKS},
        }
