"""The session's agent memory: its ContextBank (opened on first use), the ContextAccess scope
its ``memory.*`` calls run under, and the MiniBank rebuilt before each execution.

The scope comes from ``Fabric(memory_scope=...)`` (a ``store.AccessScope`` or the config-shaped
mapping), else from config.json's ``memoryScope``; with neither, calls run outside any scope
(legacy shared behaviour). A ``memoryScope`` the file gets wrong fails closed: it becomes a
scope that grants nothing and requires enrollment, so no page is reached until it is fixed.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fabric._errors import ConfigError
from runtime import ProviderCallError, run_sync
from store import (
    AccessMode,
    AccessRights,
    AccessScope,
    ContextBank,
    ContextWindow,
    Count,
    ExecutionPrincipal,
    StoreError,
    issue_root_scope,
    use_scope,
)

INVALID_PRINCIPAL = "invalid-memoryScope"
"""The principal of the scope a malformed ``memoryScope`` becomes (it grants nothing)."""
MINIBANK_TIMEOUT_S = 30.0
"""How long a MiniBank hook may take before that execution's ``memory.mini`` fails."""


class MemoryScope(BaseModel):
    """``memoryScope`` in config.json: ``{"principal": "agent-1", "mode": "REQUIRE_ENROLLMENT",
    "rights": {"read": [{"resource": "r17"}, {"boundary": "ws3"}], "write": [], ...,
    "delegable": false}}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    principal: str = Field(pattern=r"\S")
    """Who the session's snippets act as."""
    mode: Literal["LEGACY_COMPATIBLE", "REQUIRE_ENROLLMENT"] = "LEGACY_COMPATIBLE"
    """How pages without an enrollment sidecar are treated."""
    rights: dict[str, Any] = Field(default_factory=dict)
    """A selector list per operation (``read``, ``write``, ``create``, ``delete``,
    ``enumerate``, ``delegate``) and ``delegable``."""

    def scope(self) -> AccessScope:
        return issue_root_scope(
            ExecutionPrincipal(self.principal),
            AccessRights.from_data(self.rights),
            AccessMode(self.mode),
        )


_CLOSED = {"principal": INVALID_PRINCIPAL, "mode": "REQUIRE_ENROLLMENT", "rights": {}}


def scope_problems(raw: Any) -> list[str]:
    """What is wrong with a ``memoryScope`` value, each naming ``memoryScope.<field>``."""
    if not isinstance(raw, Mapping):
        return [f"memoryScope must be an object of principal, mode and rights, not {raw!r}"]
    problems = []
    unknown = sorted(set(raw) - set(MemoryScope.model_fields))
    if unknown:
        problems.append(
            f"memoryScope.{unknown[0]}: unknown field; the fields are principal, mode and rights"
        )
    principal = raw.get("principal")
    if not isinstance(principal, str) or not principal.strip():
        problems.append(f"memoryScope.principal must be a non-blank string, not {principal!r}")
    mode = raw.get("mode", "LEGACY_COMPATIBLE")
    if mode not in ("LEGACY_COMPATIBLE", "REQUIRE_ENROLLMENT"):
        problems.append(
            f"memoryScope.mode must be LEGACY_COMPATIBLE or REQUIRE_ENROLLMENT, not {mode!r}"
        )
    try:
        AccessRights.from_data(raw.get("rights", {}))
    except StoreError as exc:
        problems.append(f"memoryScope.rights: {exc}")
    if not problems:
        try:
            ExecutionPrincipal(principal)  # type: ignore[arg-type]
        except StoreError as exc:
            problems.append(f"memoryScope.principal: {exc}")
    return problems


def clean_scope(raw: Any, where: str = "config.json") -> tuple[dict[str, Any], list[str]]:
    """The ``memoryScope`` to apply and its warnings: a malformed one fails closed (a scope
    that grants nothing), never falls back to no scope."""
    problems = scope_problems(raw)
    if not problems:
        return dict(raw), []
    return dict(_CLOSED), [
        f"{where}: {problem}; memory.* is denied every page until memoryScope is fixed"
        for problem in problems
    ]


def api_scope(value: AccessScope | Mapping[str, Any] | None) -> AccessScope | None:
    """``Fabric(memory_scope=...)``: a scope, the config-shaped mapping, or None."""
    if value is None or isinstance(value, AccessScope):
        return value
    problems = scope_problems(value)
    if problems:
        said = "; ".join(problems).replace("memoryScope", "memory_scope")
        raise ConfigError(f"{said}; pass a store.AccessScope or a mapping as in memoryScope")
    return MemoryScope.model_validate(dict(value)).scope()


MiniBankHook = Callable[[], "Mapping[str, Any] | Awaitable[Mapping[str, Any]]"]
"""``fn()`` -> ``{name: ContextWindow or its plain data}``, sync or async."""


@dataclass(frozen=True)
class _Mini:
    pages: Mapping[str, dict[str, Any]] | None
    error: str | None = None


_MINI: contextvars.ContextVar[_Mini | None] = contextvars.ContextVar(
    "fabric_minibank", default=None
)


class AgentMemory:
    """One session's bank, scope and MiniBank."""

    def __init__(
        self,
        root: Path,
        count: Count,
        scope: AccessScope | None,
        configured: Callable[[], MemoryScope | None],
    ) -> None:
        self._root, self._count = root, count
        self._scope, self._configured = scope, configured
        self._bank: ContextBank | None = None
        self._lock = threading.Lock()
        self._minibank: MiniBankHook | None = None
        self._from_config: tuple[MemoryScope | None, AccessScope | None] = (None, None)

    @property
    def bank(self) -> ContextBank:
        """The workspace's bank on ``.fabric/bank/``, opened on first use."""
        with self._lock:
            if self._bank is None:
                self._bank = ContextBank(self._root, count=self._count)
            return self._bank

    def scope(self) -> AccessScope | None:
        """The scope ``memory.*`` runs under: the API's, else config's, else None."""
        if self._scope is not None:
            return self._scope
        configured = self._configured()
        if configured is None:
            return None
        if self._from_config[0] is not configured:
            self._from_config = (configured, configured.scope())
        return self._from_config[1]

    @contextlib.contextmanager
    def scoped(self) -> Iterator[ContextBank]:
        """The bank, with the session's scope installed around the block."""
        bank = self.bank
        scope = self.scope()
        if scope is None:
            yield bank
            return
        with use_scope(scope):
            yield bank

    # -- MiniBank ---------------------------------------------------------------------------

    def set_minibank(self, fn: MiniBankHook | None) -> None:
        if fn is not None and not callable(fn):
            raise ConfigError("set_minibank takes a function returning {name: ContextWindow}")
        self._minibank = fn

    async def rebuild(self) -> contextvars.Token[_Mini | None]:
        """Rebuild the MiniBank for the execution about to run in this context."""
        return _MINI.set(await self._build())

    @staticmethod
    def forget(token: contextvars.Token[_Mini | None]) -> None:
        _MINI.reset(token)

    async def _build(self) -> _Mini:
        hook = self._minibank
        if hook is None:
            return _Mini(None)
        try:
            if inspect.iscoroutinefunction(hook):
                made = await asyncio.wait_for(hook(), MINIBANK_TIMEOUT_S)
            else:
                made = await asyncio.wait_for(run_sync(hook), MINIBANK_TIMEOUT_S)
                if inspect.isawaitable(made):
                    made = await asyncio.wait_for(made, MINIBANK_TIMEOUT_S)
            return _Mini(_plain(made))
        except TimeoutError:
            return _Mini(None, f"the MiniBank hook took over {MINIBANK_TIMEOUT_S:g}s")
        except Exception as exc:
            return _Mini(None, f"the MiniBank hook raised {type(exc).__name__}: {exc}")

    @staticmethod
    def mini(name: str) -> dict[str, Any]:
        """Window ``name`` of this execution's MiniBank, as plain data."""
        built = _MINI.get()
        if built is None or (built.pages is None and built.error is None):
            raise ProviderCallError(
                "this execution has no MiniBank; the host sets one with Fabric.set_minibank(fn)",
                code="not_found",
            )
        if built.error is not None:
            raise ProviderCallError(
                f"{built.error}; memory.mini is unavailable in this execution",
                code="minibank_failed",
            )
        assert built.pages is not None
        if name not in built.pages:
            known = ", ".join(repr(n) for n in sorted(built.pages)[:20]) or "none"
            raise ProviderCallError(
                f"the MiniBank has no window {name!r} (windows: {known})", code="not_found"
            )
        return {"key": name, **built.pages[name]}

    def close(self) -> None:
        with self._lock:
            self._bank = None


def _plain(made: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(made, Mapping):
        raise TypeError(f"it must return {{name: ContextWindow}}, not {type(made).__name__}")
    pages = {}
    for name, window in made.items():
        if not isinstance(name, str):
            raise TypeError(f"window names are strings, not {name!r}")
        if isinstance(window, Mapping):
            window = ContextWindow.from_data(dict(window))
        if not isinstance(window, ContextWindow):
            raise TypeError(f"window {name!r} is a {type(window).__name__}, not a ContextWindow")
        pages[name] = window.to_data()
    return pages
