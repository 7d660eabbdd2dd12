"""``<workspace>/.fabric/config.json``: every setting, its default, and where its value came from.

The file is camelCase (``readOffloadThreshold``); the Python API takes snake_case too. Loading
never raises: bad JSON or a bad value falls back to the default with a warning, numbers out of
range are clamped with a warning, deprecated keys load with a warning and no effect, and unknown
keys are reported. The file is re-read when its modification time changes.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from analyzer import Options
from fabric import _approvals as approvals
from fabric._approvals import Mode
from fabric._llm import ModelSettings
from fabric._memory import MemoryScope, clean_scope
from fabric._translate import describe
from fabric.mcpclient._settings import McpServer, parse_servers
from runtime import Isolation, Limits
from runtime.boundary import MAX_BUDGET, BoundaryConfig

DEPRECATED = ("nestedResultThreshold", "compactStaleResults", "maxUnprocessedToolCalls")
STORE_MAX_BYTES = 500_000_000
Source = Literal["default", "file", "clamped", "argument", "policy"]


POLICY_MAX = MAX_BUDGET
"""The largest budget a quantitative policy takes, the thresholds' own."""


class QuantitativePolicy(BaseModel):
    """The budgets one result is held to, the reference's defaults. A ``maxBytes`` the file
    sets is the offload threshold unless ``readOffloadThreshold`` is set too (which wins); a
    ``maxTokens`` it sets is the analyzer's ``maxReturnTokens`` unless that is set too.
    ``maxCharacters`` is the reference's budget for its own preflight: Fabric's analyzer
    estimates bytes and tokens, so it is kept and shown, with no effect of its own."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    max_bytes: int = Field(8192, ge=0, le=POLICY_MAX)
    max_tokens: int = Field(4000, ge=0, le=POLICY_MAX)
    max_characters: int = Field(8192, ge=0, le=POLICY_MAX)


class FabricConfig(BaseModel):
    """Every setting of a workspace: Fabric's own here, and the whole of each part's settings
    (``limits``, ``boundary``, ``analysis``), each declared with its default and bounds only
    in that part's model. The file is flat: every field of every part is a camelCase key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    """Whether fabric_exec runs snippets at all (off: every call is refused with this setting)."""
    runtime_advisory_threshold: int = Field(0, ge=0, le=1024**3)
    """Results above this many bytes get an advisory note even when inlined (0: never)."""
    notify_on_start: bool = False
    """Log a line with the effective settings when a session starts."""
    store_max_bytes: int = Field(STORE_MAX_BYTES, ge=1024 * 1024, le=STORE_MAX_BYTES)
    """Bytes the store keeps before it evicts the least recently used results."""
    store_ttl_ms: int = Field(604_800_000, ge=60_000, le=365 * 24 * 3600 * 1000)
    """How long a stored result is kept after its last use."""
    quantitative_policy: QuantitativePolicy = Field(default_factory=QuantitativePolicy)
    """Caps that tighten ``readOffloadThreshold`` (``policy`` in the file works too)."""
    isolation: Isolation = "full"
    """``full``: snippets run only behind the kernel layer (seccomp, Landlock, namespaces where
    the kernel has them) and are refused without seccomp; ``minimal``: without the kernel layer,
    with a warning on every result."""
    bash_sandbox: bool = True
    """``tools.bash`` runs each command in an environment of its own made from kernel
    namespaces (the workspace writable, the rest read-only, ``.fabric/`` hidden, no network);
    ``false`` runs commands as plain subprocesses of the host, uncontained."""
    effects: list[dict[str, Any]] = Field(default_factory=list)
    """Rows added ahead of the analyzer's effects table."""
    model: ModelSettings | None = None
    """An OpenAI-compatible endpoint for ``ctx_summarize(mode="model")``:
    ``{"baseUrl": ..., "model": ..., "apiKeyEnv": ...}``."""
    approvals: dict[str, Mode] = Field(default_factory=dict)
    """``allow``, ``ask`` or ``deny`` per risk class and per tool (``{"execute": "ask",
    "mcp.git.*": "allow", "tools.bash": "deny"}``); the most specific key wins
    (``fabric._approvals``); unset classes keep their defaults."""
    approval_timeout_s: float = Field(60.0, ge=1, le=3600)
    """Seconds an approver may take to answer before the call counts as refused."""
    extensions: list[str] = Field(default_factory=list)
    """Async functions served as ``extensions.<name>``, each ``"pkg.module:function"``, beside
    those packages register in the ``fabric.extensions`` entry-point group (read when the
    session starts)."""
    state_max_bytes: int = Field(1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    """Bytes of JSON that ``state.set`` may keep for one session, all keys together."""
    persist_variables: bool = False
    """Keep the top-level plain-data variables of one execution for the next (REPL
    continuity)."""
    persist_variables_max_bytes: int = Field(1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    """Bytes of JSON the kept variables may take, all together; larger ones are dropped with a
    note."""
    mcp_servers: dict[str, McpServer] = Field(default_factory=dict)
    """MCP servers whose tools snippets call as ``mcp.<server>.<tool>(...)``, in the common
    format: ``{"git": {"command": "uvx", "args": ["mcp-server-git"]}}``, or ``"url"``."""
    memory_scope: MemoryScope | None = None
    """The ContextAccess scope of ``memory.*`` calls: ``{"principal": "agent-1", "mode":
    "REQUIRE_ENROLLMENT", "rights": {"read": [{"resource": "r17"}], ...}}``; not set: no
    scope (every page shared). A malformed one grants nothing (fails closed)."""
    limits: Limits = Field(default_factory=Limits)
    boundary: BoundaryConfig = Field(default_factory=BoundaryConfig)
    analysis: Options = Field(default_factory=Options)

    def flat(self) -> dict[str, Any]:
        """Every setting under its file key, as JSON values."""
        dumped: dict[str | None, dict[str, Any]] = {
            None: self.model_dump(mode="json", by_alias=True, exclude=set(SECTIONS))
        }
        for section in SECTIONS:
            dumped[section] = getattr(self, section).model_dump(mode="json", by_alias=False)
        return {key: dumped[s.section][s.name] for key, s in SETTINGS.items()}


SECTIONS: dict[str, type[BaseModel]] = {
    "limits": Limits,
    "boundary": BoundaryConfig,
    "analysis": Options,
}
"""The parts whose settings the file holds, each declared in its own model."""
_DERIVED = {("analysis", "read_bytes")}
"""Fields that follow another setting (what one ctx.read returns is the offload threshold)."""


@dataclass(frozen=True)
class Setting:
    """One key of the file: the field it sets and the model that declares it."""

    key: str
    name: str
    section: str | None
    model: type[BaseModel]

    def bounds(self) -> tuple[float | None, float | None]:
        low = high = None
        for rule in self.model.model_fields[self.name].metadata:
            if isinstance(rule, annotated_types.Ge | annotated_types.Gt):
                low = rule.ge if isinstance(rule, annotated_types.Ge) else rule.gt
            elif isinstance(rule, annotated_types.Le | annotated_types.Lt):
                high = rule.le if isinstance(rule, annotated_types.Le) else rule.lt
        return (
            None if low is None else float(low),  # type: ignore[arg-type]
            None if high is None else float(high),  # type: ignore[arg-type]
        )

    def doc(self) -> str:
        return (self.model.model_fields[self.name].description or "").split("\n")[0]


def _settings() -> dict[str, Setting]:
    found: dict[str, Setting] = {}
    parts: list[tuple[str | None, type[BaseModel]]] = [(None, FabricConfig)]
    parts += list(SECTIONS.items())
    for section, model in parts:
        for name in model.model_fields:
            if (section is None and name in SECTIONS) or (section, name) in _DERIVED:
                continue
            key = to_camel(name)
            if key in found:
                raise RuntimeError(f"two settings are both {key!r}")
            found[key] = Setting(key, name, section, model)
    return found


SETTINGS = _settings()
"""Every key of the file, generated from the models that declare the settings."""
FIELDS = {setting.name: key for key, setting in SETTINGS.items()}
"""snake_case name -> camelCase key."""
_ALIASES = {"policy": "quantitativePolicy"}
_Cleaner = Callable[[Any, str], tuple[Any, list[str]]]
_CLEANED: dict[str, _Cleaner] = {
    "approvals": approvals.clean,
    "mcpServers": parse_servers,
    "memoryScope": clean_scope,
}
"""Settings checked entry by entry by their own module: a bad entry is left out, named."""
"""Settings whose entries are checked one by one: a bad entry is dropped with its warning,
the others apply."""


@dataclass(frozen=True)
class Loaded:
    """A configuration and what loading it found."""

    config: FabricConfig
    warnings: tuple[str, ...] = ()
    sources: dict[str, Source] = field(default_factory=lambda: dict.fromkeys(SETTINGS, "default"))
    """For each setting (camelCase): ``default``, ``file``, ``clamped``, ``argument`` or
    ``policy`` (lowered by ``quantitativePolicy``)."""


def setting_for(key: str) -> Setting | None:
    """The setting a file key names: camelCase, snake_case or an alias."""
    key = _ALIASES.get(key, key)
    return SETTINGS.get(key) or SETTINGS.get(FIELDS.get(key, ""))


def parse(raw: Any, where: str = "config.json") -> Loaded:
    """Validate a config mapping key by key: a bad key falls back to its default."""
    if not isinstance(raw, dict):
        return Loaded(
            FabricConfig(), (f"{where}: the top level must be an object; using defaults",)
        )
    warnings: list[str] = []
    sources: dict[str, Source] = dict.fromkeys(SETTINGS, "default")
    values: dict[str | None, dict[str, Any]] = {None: {}, **{s: {} for s in SECTIONS}}
    typed: dict[str, str] = {}
    """Each setting met so far, by the spelling the file used."""
    for key, value in raw.items():
        if key in DEPRECATED:
            warnings.append(f"{where}: {key} is deprecated and has no effect; remove it")
            continue
        setting = setting_for(key)
        if setting is None:
            near = difflib.get_close_matches(str(key), SETTINGS, n=1)
            hint = f"did you mean {near[0]!r}?" if near else "known: " + ", ".join(sorted(SETTINGS))
            warnings.append(f"{where}: unknown key {key!r} ignored ({hint})")
            continue
        if setting.key in typed:
            warnings.append(
                f"{where}: {typed[setting.key]} and {key} are one setting ({setting.key}): "
                "give it once; the last one given applies"
            )
            values[setting.section].pop(setting.name, None)
            sources[setting.key] = "default"
        typed[setting.key] = str(key)
        if setting.key in _CLEANED:
            value, problems = _CLEANED[setting.key](value, where)
            warnings.extend(problems)
            if value is None:  # not even the right shape: the default
                continue
        value, note = _clamp(setting, value)
        if note:
            warnings.append(f"{where}: {note}")
        value, problem = _valid_part(setting, value, str(key))
        if problem:
            warnings.append(f"{where}: {problem}")
        if value is _INVALID:
            continue
        values[setting.section][setting.name] = value
        sources[setting.key] = "clamped" if note else "file"
    parts = {s: model.model_validate(values[s], strict=True) for s, model in SECTIONS.items()}
    config = FabricConfig.model_validate({**values[None], **parts}, strict=True)
    return Loaded(config, tuple(warnings), sources)


_INVALID = object()


def _valid_part(setting: Setting, value: Any, key: str) -> tuple[Any, str]:
    """``value`` if it validates; else, for an object or a list, what is left without the
    entries at fault (each named in the problem); else ``_INVALID`` (the default applies)."""
    try:
        setting.model.model_validate({setting.name: value}, strict=True)
        return value, ""
    except ValidationError as exc:
        problem = describe(exc, {setting.name: key})
        faulty = {error["loc"][1] for error in exc.errors() if len(error["loc"]) > 1}
        inner = len(faulty) == len({tuple(e["loc"][:2]) for e in exc.errors()})
    if not faulty or not inner or not isinstance(value, dict | list):
        return _INVALID, f"{problem}; using the default"
    if isinstance(value, dict):
        rest: Any = {k: v for k, v in value.items() if k not in faulty}
    else:
        rest = [item for n, item in enumerate(value) if n not in faulty]
    if not rest:
        return _INVALID, f"{problem}; using the default"
    try:
        setting.model.model_validate({setting.name: rest}, strict=True)
    except ValidationError:
        return _INVALID, f"{problem}; using the default"
    return rest, f"{problem}; ignored, the rest of {key} applies"


def _clamp(setting: Setting, value: Any) -> tuple[Any, str | None]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value, None
    if setting.model.model_fields[setting.name].annotation is int and not isinstance(value, int):
        return value, None  # 1.5 for a whole number: refused as it is, not clamped first
    if value != value or value in (float("inf"), float("-inf")):
        return value, None  # NaN or infinity: refused as it is (no bound is nearer)
    low, high = setting.bounds()
    if (low is None or value >= low) and (high is None or value <= high):
        return value, None
    clamped: float = value
    if low is not None:
        clamped = max(clamped, low)
    if high is not None:
        clamped = min(clamped, high)
    if isinstance(value, int) and float(clamped).is_integer():
        clamped = int(clamped)
    span = f"{_num(low) if low is not None else '..'}..{_num(high) if high is not None else ''}"
    return clamped, f"{setting.key} {value} is outside {span}; using {_num(clamped)}"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


_STANDS_FOR = {"max_bytes": "readOffloadThreshold", "max_tokens": "maxReturnTokens"}
"""The policy's budgets that stand for a setting the file leaves unset."""


def capped(loaded: Loaded) -> Loaded:
    """``loaded`` with ``quantitativePolicy`` applied as the reference does: a ``maxBytes``
    the file sets becomes ``readOffloadThreshold`` (within its bounds) and a ``maxTokens``
    becomes ``maxReturnTokens``, each only when that setting itself was not set (in the file
    or as an argument), which wins."""
    config, policy = loaded.config, loaded.config.quantitative_policy
    warnings = list(loaded.warnings)
    sources: dict[str, Source] = dict(loaded.sources)
    updates: dict[str, dict[str, int]] = {}
    for name, key in _STANDS_FOR.items():
        value = getattr(policy, name)
        if name not in policy.model_fields_set:
            continue
        if value == 0:  # Fabric's old "no cap"
            warnings.append(
                f"quantitativePolicy.{to_camel(name)} 0 is ignored: it no longer means no cap "
                f"(the reference's budgets apply); remove it, or set a budget"
            )
        elif sources[key] == "default":
            setting = SETTINGS[key]
            low, high = setting.bounds()
            chosen = int(min(max(value, low or 0), high or value))
            updates.setdefault(setting.section or "", {})[setting.name] = chosen
            sources[key] = "policy"
    if not updates and len(warnings) == len(loaded.warnings):
        return loaded
    parts = {s: getattr(config, s).model_copy(update=u) for s, u in updates.items()}
    return Loaded(config.model_copy(update=parts), tuple(warnings), sources)


def overlay(base: Loaded, **given: BaseModel | str | bool | None) -> Loaded:
    """``base`` with the settings given as arguments on top: of a part's model (``limits=``,
    ``boundary=``, ``analysis=``) only the fields that were set apply (``Limits()`` sets
    none, so the file's values stay); ``isolation=`` (and any other plain value) applies when
    not None."""
    config, sources = base.config, dict(base.sources)
    update: dict[str, Any] = {}
    for section, part in given.items():
        if part is None:
            continue
        if isinstance(part, BaseModel):
            chosen = {n: getattr(part, n) for n in part.model_fields_set}
            update[section] = getattr(config, section).model_copy(update=chosen)
            sources.update({to_camel(n): "argument" for n in chosen if to_camel(n) in SETTINGS})
        else:
            update[section] = part
            sources[to_camel(section)] = "argument"
    return Loaded(config.model_copy(update=update), base.warnings, sources)


class ConfigFile:
    """The workspace's config file, re-read when it changes."""

    def __init__(self, workspace: Path) -> None:
        self.path = workspace / ".fabric" / "config.json"
        self._stamp: tuple[int, int] | None = None
        self._loaded = Loaded(FabricConfig())
        self.current()

    def current(self) -> Loaded:
        """The configuration as the file says now (defaults when there is no file)."""
        try:
            info = os.stat(self.path)
            stamp: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
        except FileNotFoundError:
            stamp = None
        except OSError as exc:
            return Loaded(
                FabricConfig(), (f"cannot read {self.path}: {exc.strerror}; using defaults",)
            )
        if stamp == self._stamp:
            return self._loaded
        self._stamp = stamp
        if stamp is None:
            self._loaded = Loaded(FabricConfig())
            return self._loaded
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            self._loaded = Loaded(
                FabricConfig(),
                (f"{self.path} is not valid JSON ({exc}); using defaults until it is fixed",),
            )
            return self._loaded
        self._loaded = parse(raw, str(self.path))
        return self._loaded

    def changed(self) -> bool:
        """Whether the file changed since it was last read."""
        try:
            info = os.stat(self.path)
            return (info.st_mtime_ns, info.st_size) != self._stamp
        except OSError:
            return self._stamp is not None
