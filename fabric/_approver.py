"""Approvals at work: one session's :class:`Approvals` (the policy of its settings, the answers
remembered for the session, the approver that is asked) and :class:`Gated`, the provider host
an execution's calls go through, which judges each call before its arguments reach the
provider.

An approver is a callable (sync or async) that takes an :class:`ApprovalRequest` and answers
``"allow"``, ``"deny"``, ``"always"`` (allow this tool for the rest of the session) or
``"never"`` (deny it for the rest of the session); ``True`` and ``False`` stand for allow and
deny. One that raises, answers anything else, or takes longer than ``approvalTimeoutS`` has
denied the call: the snippet sees ``ToolError`` (code ``refused``) and the host goes on. A
session asks one question at a time, so "always" also answers the calls waiting behind it.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from fabric._approvals import ApprovalPolicy, Decision, Mode
from fabric._errors import ConfigError
from fabric.providers import Provider, ProviderRegistry, Risk
from runtime import ProviderCallError, label_call

if TYPE_CHECKING:
    from fabric._settings import Settings

Answer = Literal["allow", "deny", "always", "never"]
"""What an approver says: allow or deny this call, or ``always``/``never`` for the session."""
ANSWERS: tuple[Answer, ...] = ("allow", "deny", "always", "never")
Approver = Callable[["ApprovalRequest"], "Answer | bool | Awaitable[Answer | bool]"]
Label = Literal["allow", "deny", "approved", "refused", "unasked", "session_allow", "session_deny"]
"""How a call was let through or stopped (``CallRecord.approval``): the config allowed or
denied it, the approver approved or refused it (or failed, which refuses), nobody could be
asked, or an earlier ``always``/``never`` answer of the session decided."""
_SHOWN_ARGUMENTS = 20
_SHOWN_CHARS = 200


@dataclass(frozen=True)
class ApprovalRequest:
    """A call waiting for an approver's answer."""

    namespace: str
    name: str
    risk: Risk
    """Its provider's risk class (``execute`` for one registered without)."""
    arguments: Mapping[str, Any]
    """Its arguments, validated, long values shortened (never the whole of a large value)."""
    key: str
    """The ``approvals`` key that says ``ask`` (``execute``, ``mcp.git.*``)."""

    @property
    def tool(self) -> str:
        """``tools.bash``: the name the snippet called."""
        return f"{self.namespace}.{self.name}"

    def describe(self) -> str:
        """One line a person decides on."""
        shown = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return (
            f"a snippet calls {self.tool}({shown}), risk class {self.risk} "
            f"(approvals.{self.key} is ask)"
        )


def shortened(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` as an approver sees them: scalars (strings cut at 200 characters), and
    the type and size of anything larger."""
    out: dict[str, Any] = {}
    for name, value in list(arguments.items())[:_SHOWN_ARGUMENTS]:
        if isinstance(value, str):
            cut = len(value) > _SHOWN_CHARS
            out[name] = value[:_SHOWN_CHARS] + (f"... ({len(value)} chars)" if cut else "")
        elif isinstance(value, bool | int | float) or value is None:
            out[name] = value
        elif isinstance(value, bytes | list | dict | tuple):
            out[name] = f"<{type(value).__name__} of {len(value)}>"
        else:
            out[name] = f"<{type(value).__name__}>"
    return out


class Approvals:
    """One session's approvals. :meth:`decide` is the cheap question any provider may ask
    (``session.approvals.decide("network", "tools.bash")``)."""

    def __init__(
        self, settings: Settings, approver: Approver | None, record: Callable[..., None]
    ) -> None:
        if approver is not None and not callable(approver):
            raise ConfigError(
                f"approver must be a callable taking an ApprovalRequest, not "
                f"{type(approver).__name__}"
            )
        self._settings = settings
        self.approver = approver
        """Asked when a call's mode is ``ask`` and the execution brings no approver of its own."""
        self._record = record
        self._source = settings.config.approvals
        self._policy = ApprovalPolicy(self._source)
        self.remembered: dict[str, bool] = {}
        """Tools an approver answered ``always`` (True) or ``never`` (False) for, this session."""
        self._asking = asyncio.Lock()

    @property
    def policy(self) -> ApprovalPolicy:
        """The policy of the current settings (rebuilt when config.json changed)."""
        approvals = self._settings.config.approvals
        if approvals is not self._source:  # a new config since
            self._policy, self._source = ApprovalPolicy(approvals), approvals
        return self._policy

    def decision(self, risk: Risk | None, tool: str) -> Decision:
        """What the config says about ``tool`` of class ``risk``, and which key says it."""
        return self.policy.decide(risk, tool)

    def decide(self, risk: Risk | None, tool: str) -> Mode:
        """``allow``, ``ask`` or ``deny`` for a call of ``tool`` judged as class ``risk``:
        the config's word, unless an approver answered ``always`` or ``never`` for ``tool``
        this session. A provider that does something of another class on its own (``bash``
        opening the network) asks with that class and its own name:
        ``decide("network", "tools.bash") == "allow"``."""
        remembered = self.remembered.get(tool)
        if remembered is not None:
            return "allow" if remembered else "deny"
        return self.decision(risk, tool).mode

    async def check(
        self, provider: Provider, arguments: Mapping[str, Any], approver: Approver | None
    ) -> Label:
        """Judge one call; return how it was let through, or raise ``ProviderCallError``
        (``denied``, ``refused``, ``approval_required``) naming the key to change."""
        tool = provider.qualified
        decision = self.decision(provider.risk, tool)
        label_call(risk=decision.risk)
        remembered = self.remembered.get(tool)
        if remembered is not None:
            return _remembered(tool, remembered)
        if decision.mode == "allow":
            return _allowed("allow")
        if decision.mode == "deny":
            _stopped("deny", "denied", _denied(tool, decision))
        approver = approver or self.approver
        if approver is None:
            _stopped("unasked", "approval_required", _unasked(tool, decision))
        request = ApprovalRequest(
            provider.namespace, provider.name, decision.risk, shortened(arguments), decision.key
        )
        return await self._ask(approver, request, decision)

    async def _ask(self, approver: Approver, request: ApprovalRequest, decision: Decision) -> Label:
        tool = request.tool
        async with self._asking:  # one question at a time; "always" answers those waiting
            remembered = self.remembered.get(tool)
            if remembered is not None:
                return _remembered(tool, remembered)
            started = time.perf_counter()
            timeout = self._settings.config.approval_timeout_s
            answer, reason = await _answer(approver, request, timeout)
            ms = round((time.perf_counter() - started) * 1000, 2)
            if answer in ("always", "never"):
                self.remembered[tool] = answer == "always"
        allowed = answer in ("allow", "always")
        self._record(
            "approval",
            tool=tool,
            risk=decision.risk,
            key=decision.setting,
            outcome="approved" if allowed else "refused",
            answer=answer,
            reason=reason,
            ms=ms,
        )
        if allowed:
            return _allowed("approved")
        why = f" ({reason})" if reason else ""
        _stopped(
            "refused",
            "refused",
            f"{tool} was refused by the approver{why}; {decision.setting} is ask in "
            f".fabric/config.json (set it to allow to run {tool} without asking)",
        )

    def stopped(self, provider: Provider, code: str) -> None:
        """Record an ``approval`` event for a call the config denied (``denied``) or nobody
        could be asked about (``approval_required``)."""
        decision = self.decision(provider.risk, provider.qualified)
        self._record(
            "approval",
            tool=provider.qualified,
            risk=decision.risk,
            key=decision.setting,
            outcome="deny" if code == "denied" else "unasked",
        )

    def report(self) -> dict[str, Any]:
        """For ``ctx_status``: each class's and tool key's mode, the answers remembered for the
        session, and whether an approver is set."""
        return {
            "modes": self.policy.modes(),
            "remembered": {t: "always" if ok else "never" for t, ok in self.remembered.items()},
            "approver": self.approver is not None,
        }


def _allowed(label: Label) -> Label:
    label_call(approval=label)
    return label


def _stopped(label: Label, code: str, message: str) -> NoReturn:
    label_call(approval=label)
    raise ProviderCallError(message, code=code)


def _remembered(tool: str, allowed: bool) -> Label:
    if allowed:
        return _allowed("session_allow")
    _stopped("session_deny", "refused", f"{tool} was refused for this session by the approver")


def _denied(tool: str, decision: Decision) -> str:
    said = "by default" if decision.source == "default" else f"by {decision.setting}"
    return (
        f"{tool} is denied: its risk class is {decision.risk}, denied {said}; to let it run "
        f'set "approvals": {{"{decision.key}": "allow"}} (or "ask") in .fabric/config.json'
        + (f', or "{tool}": "allow" for this tool alone' if decision.source != "tool" else "")
    )


def _unasked(tool: str, decision: Decision) -> str:
    return (
        f"{tool} needs approval ({decision.setting} is ask: risk class {decision.risk}) and no "
        f'approver is connected; set "approvals": {{"{tool}": "allow"}} in .fabric/config.json '
        f'(or "{decision.key}": "allow"), or run with an approver: Fabric(approver=...) in '
        "Python, or an MCP client that supports elicitation"
    )


async def _answer(
    approver: Approver, request: ApprovalRequest, timeout: float
) -> tuple[str, str | None]:
    """The approver's answer, or ``deny`` with the reason it counts as one."""
    try:
        async with asyncio.timeout(timeout):
            if inspect.iscoroutinefunction(approver):
                said = await approver(request)
            else:
                said = await asyncio.to_thread(approver, request)  # it may block on a person
                if inspect.isawaitable(said):
                    said = await said
    except TimeoutError:
        return "deny", f"no answer within approvalTimeoutS ({timeout:g} s)"
    except Exception as exc:
        return "deny", f"the approver failed: {type(exc).__name__}: {str(exc)[:200]}"
    if said is True or said is False:
        return ("allow" if said else "deny"), None
    if isinstance(said, str) and said in ANSWERS:
        return said, None
    return "deny", f"the approver answered {str(said)[:80]!r}, not one of {', '.join(ANSWERS)}"


class Gated:
    """The provider host of one execution: every call is looked up, bound and validated as
    the registry does, then judged by the session's approvals, and only then reaches the
    provider. The first denial of each tool and every question asked are ``approval`` events;
    the rest are counted in the execution's call totals."""

    def __init__(
        self,
        registry: ProviderRegistry,
        approvals: Approvals,
        approver: Approver | None,
        on_call: Callable[[str], None] | None = None,
    ) -> None:
        self._registry, self._approvals, self._approver = registry, approvals, approver
        self._on_call = on_call
        """Told each call's name as it starts (progress reports)."""
        self._told: set[tuple[str, str]] = set()

    def catalog(self) -> Mapping[str, Sequence[str]]:
        return self._registry.catalog()

    def parameters(self, namespace: str, name: str) -> Sequence[str]:
        return self._registry.parameters(namespace, name)

    def help(self) -> Mapping[str, str]:
        return self._registry.help()

    async def call(
        self, namespace: str, name: str, arguments: dict[str, Any], positional: Sequence[Any] = ()
    ) -> Any:
        if self._on_call is not None:
            self._on_call(f"{namespace}.{name}")
        await self._registry.ensure(namespace, name)  # an MCP server's tools, once it started
        provider, arguments = self._registry.prepare(namespace, name, arguments, positional)
        try:
            await self._approvals.check(provider, arguments, self._approver)
        except ProviderCallError as exc:
            self._tell(provider, exc)
            raise
        return await provider.func(**arguments)

    def _tell(self, provider: Provider, exc: ProviderCallError) -> None:
        """An ``approval`` event for the first denial of each kind of each tool."""
        if exc.code == "refused":  # asked: the approver's answer is already recorded
            return
        seen = (provider.qualified, exc.code)
        if seen not in self._told:
            self._told.add(seen)
            self._approvals.stopped(provider, exc.code)
