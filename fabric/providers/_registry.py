"""The provider registry: namespaces of async callables that snippets reach as
``tools.read(...)``, ``mcp.git.status(...)`` and so on.

Each provider has an argument model: a pydantic model built from the function's signature,
one given explicitly, or a JSON schema. Unknown names and bad arguments fail the call with a
message that lists what exists, so the model can correct itself in one step.
"""

from __future__ import annotations

import difflib
import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args, get_type_hints

import jsonschema
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from contract import NAMESPACES
from fabric._errors import RegistrationError
from fabric._translate import describe
from fabric.providers._discovery import help_entries
from fabric.providers._signature import schema_signature
from runtime import ProviderCallError

ProviderFunc = Callable[..., Awaitable[Any]]
Risk = Literal["read", "write", "execute", "network", "agent"]
"""What a provider's call can do to the world beyond the snippet; approvals are set per class."""
RISKS: tuple[Risk, ...] = get_args(Risk)
_SPARE_ARGUMENTS = 8
"""Arguments beyond twice the parameters (each may come in two spellings) that a call may
carry before it is refused unread."""
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*(?:\.[A-Za-z][A-Za-z0-9_]*)*$")


class Mount(Protocol):
    """Providers under one prefix of a namespace whose names are known only once loaded
    (the tools of an MCP server, ``mcp.git.*``, known once the server is connected)."""

    @property
    def version(self) -> int:
        """Changes whenever :meth:`loaded` does."""
        ...

    def loaded(self) -> Mapping[str, Provider] | None:
        """The providers by their name in the namespace (``git.git_log``); None until known."""
        ...

    async def load(self) -> None:
        """Make the providers known (raise ProviderCallError when they cannot be)."""
        ...


WILDCARD = "*"
"""The catalog's name for "any name under this prefix": the host resolves it at the call."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Provider:
    """One callable provider."""

    namespace: str
    name: str
    func: ProviderFunc
    description: str
    args_model: type[BaseModel] | None = None
    schema: Mapping[str, Any] | None = None
    risk: Risk | None = None
    """Its risk class; None when whoever registered it did not say."""

    @property
    def qualified(self) -> str:
        return f"{self.namespace}.{self.name}"

    def signature(self) -> str:
        """``tools.read(path: str, offset: int = 0)``: what the model needs to call it."""
        if self.args_model is not None:
            parts = []
            for field_name, field in self.args_model.model_fields.items():
                part = f"{field_name}: {_type_shown(field.annotation)}"
                if not field.is_required():
                    made = field.get_default(call_default_factory=True, validated_data={})
                    part += f" = {made!r}"
                parts.append(part)
            return f"{self.qualified}({', '.join(parts)})"
        return schema_signature(self.qualified, self.schema)

    def parameters(self) -> list[str]:
        """Parameter names in the order positional arguments fill them."""
        if self.args_model is not None:
            return list(self.args_model.model_fields)
        return list((self.schema or {}).get("properties", {}))

    def bind(self, positional: Sequence[Any], arguments: dict[str, Any]) -> dict[str, Any]:
        """Name positional arguments after the parameters they fill."""
        names = self.parameters()
        if len(positional) > len(names):
            raise ProviderCallError(
                f"{self.qualified} takes at most {len(names)} positional arguments "
                f"({len(positional)} given); call it as {self.signature()}",
                code="bad_arguments",
            )
        bound = dict(zip(names, positional, strict=False))
        twice = sorted(bound.keys() & arguments.keys())
        if twice:
            raise ProviderCallError(
                f"{self.qualified} got {', '.join(twice)} both by position and by name",
                code="bad_arguments",
            )
        return bound | arguments

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.args_model is not None:  # counted, not listed: this runs on every call
            count = len(self.args_model.model_fields)
        else:
            count = len((self.schema or {}).get("properties", {}))
        if len(arguments) > 2 * count + _SPARE_ARGUMENTS:  # before any work on them
            raise ProviderCallError(
                f"{self.qualified} takes {count} arguments, not {len(arguments)}; "
                f"call it as {self.signature()}",
                code="bad_arguments",
            )
        if self.args_model is not None:
            try:
                model = self.args_model.model_validate(arguments)
            except ValidationError as exc:
                raise ProviderCallError(self._explain(exc), code="bad_arguments") from None
            return {name: getattr(model, name) for name in self.args_model.model_fields}
        if self.schema is not None:
            error = jsonschema.exceptions.best_match(_validator(self.schema).iter_errors(arguments))
            if error is not None:
                where = ".".join(str(p) for p in error.absolute_path) or "arguments"
                raise ProviderCallError(
                    f"{self.qualified}: {where}: {error.message}; call it as {self.signature()}",
                    code="bad_arguments",
                ) from None
        return arguments

    def _explain(self, exc: ValidationError) -> str:
        problems = describe(exc, known=self.parameters())
        return f"{self.qualified}: {problems}; call it as {self.signature()}"


def _type_shown(kind: Any) -> str:
    """``list[str]`` as a model writes a call, without ``Annotated``'s constraints."""
    if typing.get_origin(kind) is typing.Annotated:
        return _type_shown(typing.get_args(kind)[0])
    if isinstance(kind, type) and not typing.get_args(kind):
        return kind.__name__
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is not None and args and isinstance(origin, type):
        return f"{origin.__name__}[{', '.join(_type_shown(a) for a in args)}]"
    return str(kind).replace("typing.", "").replace("NoneType", "None")


_VALIDATORS: dict[int, tuple[Mapping[str, Any], Any]] = {}
"""Compiled validators by schema (kept with the schema, so its id is not reused)."""


def _validator(schema: Mapping[str, Any]) -> Any:
    """The schema's validator, built once (building one checks the schema, which costs more
    than the call it guards)."""
    found = _VALIDATORS.get(id(schema))
    if found is None or found[0] is not schema:
        if len(_VALIDATORS) > 4096:
            _VALIDATORS.clear()
        found = (schema, jsonschema.validators.validator_for(schema)(schema))
        _VALIDATORS[id(schema)] = found
    return found[1]


def _parameter_hints(func: ProviderFunc) -> dict[str, Any]:
    """Resolved parameter annotations; one that cannot be resolved is taken as Any."""
    try:
        return get_type_hints(func)
    except (NameError, TypeError):
        pass
    hints: dict[str, Any] = {}
    namespace = getattr(func, "__globals__", {})
    for name, annotation in getattr(func, "__annotations__", {}).items():
        if name == "return":
            continue
        try:
            hints[name] = eval(annotation, namespace) if isinstance(annotation, str) else annotation
        except Exception:
            hints[name] = Any
    return hints


def _model_from_signature(func: ProviderFunc, qualified: str) -> type[BaseModel]:
    signature = inspect.signature(func)
    hints = _parameter_hints(func)
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise RegistrationError(f"{qualified}: *args and **kwargs cannot be described")
        if param.kind is param.POSITIONAL_ONLY:
            raise RegistrationError(
                f"{qualified}: positional-only parameters cannot be named in calls"
            )
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    model_name = "".join(p.capitalize() for p in re.split(r"[._]", qualified)) + "Args"
    model: type[BaseModel] = create_model(model_name, __base__=_Strict, **fields)
    return model


class ProviderRegistry:
    """Namespaces of providers; the host side of every ``tools.x(...)`` call.

    ``ProviderRegistry(base=shared)`` layers a registry over another: lookups find its own
    providers first, then the base's (registrations made to the base later included), and
    registering never touches the base. A ``Fabric`` session layers its own workspace and
    context tools over the registry it is given this way, so two sessions sharing one
    registry never see each other's workspace and the caller's registry stays as it was.
    """

    def __init__(self, base: ProviderRegistry | None = None) -> None:
        self._providers: dict[str, dict[str, Provider]] = {ns: {} for ns in NAMESPACES}
        self._mounts: dict[tuple[str, str], Mount] = {}
        self._base = base
        self._version = 0
        self._catalog: dict[str, list[str]] | None = None
        self._catalog_version: tuple[int, ...] = ()
        self._help: tuple[tuple[int, ...], dict[str, str]] | None = None

    def _versions(self) -> tuple[int, ...]:
        own = (self._version, *(m.version for m in self._mounts.values()))
        return own + self._base._versions() if self._base is not None else own

    def register(
        self,
        namespace: str,
        name: str,
        func: ProviderFunc,
        *,
        description: str | None = None,
        args_model: type[BaseModel] | None = None,
        schema: Mapping[str, Any] | None = None,
        replace: bool = False,
        risk: Risk | None = None,
    ) -> Provider:
        """Add ``namespace.name``. Without a model or schema, one is built from the signature.

        ``risk`` is its class (``read``, ``write``, ``execute``, ``network``, ``agent``)."""
        if namespace not in self._providers:
            raise RegistrationError(
                f"unknown namespace {namespace!r}; namespaces are {', '.join(NAMESPACES)}"
            )
        if not _NAME.match(name):
            raise RegistrationError(
                f"bad provider name {name!r}: use letters, digits and single underscores, "
                "not starting with '_' (dots separate sub-namespaces, e.g. 'git.status')"
            )
        qualified = f"{namespace}.{name}"
        if name in self._providers[namespace] and not replace:
            raise RegistrationError(f"{qualified} is already registered; pass replace=True")
        if not inspect.iscoroutinefunction(func):
            raise RegistrationError(f"{qualified}: providers must be async functions")
        if risk is not None and risk not in RISKS:
            raise RegistrationError(
                f"{qualified}: risk must be one of {', '.join(RISKS)}, not {risk!r}"
            )
        if args_model is not None and schema is not None:
            raise RegistrationError(f"{qualified}: give args_model or schema, not both")
        if schema is not None:
            try:
                jsonschema.Draft202012Validator.check_schema(schema)
            except jsonschema.SchemaError as exc:
                raise RegistrationError(
                    f"{qualified}: invalid JSON schema: {exc.message}"
                ) from None
        elif args_model is None:
            args_model = _model_from_signature(func, qualified)
        doc = description if description is not None else inspect.getdoc(func) or ""
        provider = Provider(namespace, name, func, doc.strip(), args_model, schema, risk)
        self._providers[namespace][name] = provider
        self._version += 1
        return provider

    def provider(
        self,
        namespace: str,
        name: str | None = None,
        *,
        description: str | None = None,
        risk: Risk | None = None,
    ) -> Callable[[ProviderFunc], ProviderFunc]:
        """Decorator form of :meth:`register`."""

        def decorate(func: ProviderFunc) -> ProviderFunc:
            self.register(
                namespace, name or func.__name__, func, description=description, risk=risk
            )
            return func

        return decorate

    def mount(self, namespace: str, prefix: str, mount: Mount) -> None:
        """Serve ``namespace.prefix.*`` from ``mount``: until it has loaded, the catalog shows
        ``prefix.*`` and a call to any name under it loads it first."""
        if namespace not in self._providers or not _NAME.match(prefix) or "." in prefix:
            raise RegistrationError(f"cannot mount {namespace}.{prefix}: bad namespace or prefix")
        self._mounts[(namespace, prefix)] = mount
        self._version += 1

    def unmount(self, namespace: str, prefix: str) -> None:
        if self._mounts.pop((namespace, prefix), None) is not None:
            self._version += 1

    def _layer(self, namespace: str) -> dict[str, Provider]:
        """The providers of ``namespace``, this registry's over its base's."""
        own = self._providers.get(namespace, {})
        if self._mounts:
            mounted = [m.loaded() for (ns, _), m in self._mounts.items() if ns == namespace]
            own = {k: v for m in mounted if m for k, v in m.items()} | own
        if self._base is None:
            return own
        return {**self._base._layer(namespace), **own}

    def _waiting(self, namespace: str) -> list[str]:
        """The prefixes of ``namespace`` whose mounts have not loaded."""
        own = [p for (ns, p), m in self._mounts.items() if ns == namespace and m.loaded() is None]
        return own + (self._base._waiting(namespace) if self._base is not None else [])

    def _mounted(self, namespace: str, name: str) -> Mount | None:
        prefix = name.partition(".")[0]
        found = self._mounts.get((namespace, prefix))
        if found is None and self._base is not None:
            return self._base._mounted(namespace, name)
        return found

    def get(self, namespace: str, name: str) -> Provider:
        if namespace not in self._providers:
            raise ProviderCallError(f"{namespace} is not a namespace", code="unknown_namespace")
        providers = self._layer(namespace)
        provider = providers.get(name)
        if provider is None:
            shown = f"{namespace}.{name}"
            nearby = difflib.get_close_matches(name, list(providers), n=1)
            if nearby:
                message = f"{shown} is not a tool; did you mean {namespace}.{nearby[0]}?"
            elif providers:
                message = f"{shown} is not a tool; {namespace} has: {', '.join(sorted(providers))}"
            else:
                message = f"{shown} is not a tool; no tools are registered in {namespace}"
            raise ProviderCallError(message, code="unknown_tool")
        return provider

    def providers(self, namespace: str | None = None) -> list[Provider]:
        spaces = [namespace] if namespace else list(self._providers)
        return [p for ns in spaces for p in self._layer(ns).values()]

    def catalog(self) -> Mapping[str, Sequence[str]]:
        versions = self._versions()
        if self._catalog is None or versions != self._catalog_version:  # after registrations
            self._catalog = {
                ns: sorted([*self._layer(ns), *(f"{p}.{WILDCARD}" for p in self._waiting(ns))])
                for ns in self._providers
            }
            self._catalog_version = versions
        return self._catalog

    def help(self) -> Mapping[str, str]:
        """What ``help()`` shows in a snippet, by what it is asked about (``""``, ``tools``,
        ``tools.read``); made again after registrations."""
        versions = self._versions()
        if self._help is None or self._help[0] != versions:
            self._help = (versions, help_entries(self))
        return self._help[1]

    def parameters(self, namespace: str, name: str) -> Sequence[str]:
        """The names positional arguments of ``namespace.name`` fill, in order."""
        return self.get(namespace, name).parameters()

    async def ensure(self, namespace: str, name: str) -> None:
        """Load the mount that serves ``namespace.name`` when the name is not known yet (an MCP
        server's tool before the server has started); a host that serves calls itself calls
        this before :meth:`get`."""
        if name in self._layer(namespace) or namespace not in self._providers:
            return
        mount = self._mounted(namespace, name)
        if mount is not None:
            await mount.load()  # connects, or says why it cannot

    async def call(
        self,
        namespace: str,
        name: str,
        arguments: dict[str, Any],
        positional: Sequence[Any] = (),
    ) -> Any:
        await self.ensure(namespace, name)
        provider, arguments = self.prepare(namespace, name, arguments, positional)
        return await provider.func(**arguments)

    def prepare(
        self,
        namespace: str,
        name: str,
        arguments: dict[str, Any],
        positional: Sequence[Any] = (),
    ) -> tuple[Provider, dict[str, Any]]:
        """The provider a call names and its arguments bound and validated, as :meth:`call`
        hands them over; a host that judges calls first (approvals) starts here."""
        provider = self.get(namespace, name)
        if positional:
            arguments = provider.bind(positional, arguments)
        return provider, provider.validate(arguments)
