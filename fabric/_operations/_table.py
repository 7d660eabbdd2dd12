"""The table of operations: each context operation declared once, as an argument model and a
function.

Everything a caller reaches an operation through is made from its row: the snippet provider
(``ctx.read``), the MCP tool (``ctx_read``, its schema from the model, camelCase accepted), the
command (``fabric read``, a flag per field) and the Python call (``await fab.ctx.read(...)``).
The model holds each argument's type, default, bounds and description; the function does the
work and answers a :class:`Reply`. Adding an operation is one decorated function here.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AliasChoices, AliasGenerator, BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from fabric.providers import Risk
from runtime import run_sync

if TYPE_CHECKING:
    from fabric._session import Fabric

Surface = Literal["snippet", "mcp", "cli", "python"]
"""Where a call came from: a snippet, an MCP client, the command line or Python code."""
SURFACES: frozenset[Surface] = frozenset(("snippet", "mcp", "cli", "python"))


def _accepted(name: str) -> AliasChoices:
    """A field answers to its own name and its camelCase spelling (``max_matches``,
    ``maxMatches``), the names the reference's tools use."""
    camel = to_camel(name)
    return AliasChoices(name, camel) if camel != name else AliasChoices(name)


class Args(BaseModel):
    """The base of every operation's arguments: frozen, unknown names refused, values taken
    as they are (``true`` is not a number, ``"5"`` is not an int), each field accepted by its
    name or its camelCase spelling."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        alias_generator=AliasGenerator(validation_alias=_accepted),
    )


@dataclass(frozen=True)
class Reply:
    """What an operation answers."""

    text: str
    """What a person or a model reads: the MCP text content, the command's output."""
    data: Any
    """The structured answer: a snippet's return value, MCP structured content, ``--json``."""
    ok: bool = True
    """False when the operation found nothing to act on (forgetting an unknown fact): the
    command exits 1; it is not an error."""


@dataclass(frozen=True)
class Cli:
    """How an operation's command differs from one flag per field."""

    positional: tuple[str, ...] = ()
    """Fields given as positional arguments, in this order (the others are ``--flags``)."""
    files: tuple[str, ...] = ()
    """Fields the command reads from a file named on the command line (``-``: standard input)."""
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """Defaults of the command's own: a new process has no session, so ``fabric status`` shows
    the workspace's lifetime."""


Run = Callable[["Fabric", Any, Surface], "Reply | Awaitable[Reply]"]


@dataclass(frozen=True)
class Operation:
    """One row of the table."""

    namespace: str
    name: str
    args: type[Args]
    run: Run
    """``run(session, args, surface)``; a plain function runs in a worker thread."""
    help: str
    """One line: the command's help and the first line of the tool's description."""
    description: str
    """What the MCP tool's description and the command's ``--help`` say after ``help``."""
    needs_store: bool
    """Offered only when the session has a store."""
    cli: Cli
    text_key: str | None
    """A snippet's result also carries ``text`` under this key (``preview`` for an offload)."""
    read_only: bool
    """Changes nothing a caller can see (MCP's ``readOnlyHint``)."""
    risk: Risk = "read"
    """Its risk class in a snippet (approvals): ``read``, or ``write`` for what changes what
    later sessions are told (a remembered fact)."""
    surfaces: frozenset[Surface] = SURFACES
    """Where it is offered: every surface, unless it makes no sense on some (``state.*``
    lives in one session, which a command never has)."""
    mcp_name: str | None = None
    """The MCP tool's name when it is not ``<namespace>_<name>`` (``memory.keys`` is TPipe's
    ``secure_listPageKeys``)."""

    def offered_on(self, surface: Surface) -> bool:
        return surface in self.surfaces

    @property
    def qualified(self) -> str:
        """``ctx.read``: the name in a snippet."""
        return f"{self.namespace}.{self.name}"

    @property
    def tool_name(self) -> str:
        """``ctx_read``: the name of the MCP tool."""
        return self.mcp_name or f"{self.namespace}_{self.name}"

    @property
    def command(self) -> str:
        """``read``: the ``fabric`` subcommand."""
        name = self.name.replace("_", "-")
        return name if self.namespace == "ctx" else f"{self.namespace}-{name}"

    @property
    def full_description(self) -> str:
        return f"{self.help}. {self.description}".strip() if self.description else self.help

    async def __call__(self, session: Fabric, args: Args, surface: Surface) -> Reply:
        """Run the operation on validated ``args``, under the session's current settings."""
        session.refresh()
        if inspect.iscoroutinefunction(self.run):
            return await self.run(session, args, surface)  # type: ignore[no-any-return]
        # On the provider threads, asked to stop when the call is cancelled (its snippet timed
        # out): a read cannot outlive its execution, nor queue the host's own work behind it.
        done = await run_sync(self.run, session, args, surface)
        assert isinstance(done, Reply)
        return done


RESERVED = frozenset({"workspace", "json", "command", "help", "ctx", "args"})
"""Names no field may have: the command line's own flags and what the surfaces pass."""
OPERATIONS: dict[str, Operation] = {}
"""Every operation by its qualified name (``ctx.read``), in the order declared."""


def operation(
    args: type[Args],
    *,
    help: str,
    description: str = "",
    namespace: str = "ctx",
    needs_store: bool = False,
    cli: Cli | None = None,
    text_key: str | None = None,
    read_only: bool = False,
    risk: Risk = "read",
    surfaces: frozenset[Surface] = SURFACES,
    mcp_name: str | None = None,
) -> Callable[[Run], Run]:
    """Declare the decorated function as the operation ``namespace.<its name>``."""

    def declare(run: Run) -> Run:
        name = getattr(run, "__name__", "")
        op = Operation(
            namespace,
            name,
            args,
            run,
            help,
            description,
            needs_store,
            cli or Cli(),
            text_key,
            read_only,
            risk,
            surfaces,
            mcp_name,
        )
        if op.qualified in OPERATIONS:
            raise ValueError(f"the operation {op.qualified} is declared twice")
        taken = RESERVED & set(args.model_fields)
        if taken:
            raise ValueError(
                f"{op.qualified}: {sorted(taken)} name what every command and tool has; "
                "call the fields something else"
            )
        unknown = {*op.cli.positional, *op.cli.files, *op.cli.defaults} - set(args.model_fields)
        if unknown:
            raise ValueError(f"{op.qualified}: the command names unknown fields {sorted(unknown)}")
        if "snippet" not in surfaces or not surfaces <= SURFACES:
            raise ValueError(
                f"{op.qualified}: surfaces are some of {sorted(SURFACES)}, snippet among them"
            )
        if any(o.tool_name == op.tool_name for o in OPERATIONS.values()):
            raise ValueError(f"{op.qualified}: the MCP tool {op.tool_name} is taken")
        OPERATIONS[op.qualified] = op
        return run

    return declare


def offered(session: Fabric, surface: Surface) -> list[Operation]:
    """The operations ``session`` can serve on ``surface`` (those that need a store only when
    it has one)."""
    has_store = session.boundary.store is not None
    return [
        op
        for op in OPERATIONS.values()
        if (has_store or not op.needs_store) and op.offered_on(surface)
    ]


def signature(op: Operation) -> inspect.Signature:
    """A Python signature made from the argument model, for ``help()`` and docs: arguments
    by position or name, in the model's order, as in a snippet."""
    params = []
    for name, info in op.args.model_fields.items():
        default = (
            inspect.Parameter.empty
            if info.is_required()
            else info.get_default(call_default_factory=True)
        )
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params.append(inspect.Parameter(name, kind, default=default, annotation=info.annotation))
    return inspect.Signature(params, return_annotation=Reply)
