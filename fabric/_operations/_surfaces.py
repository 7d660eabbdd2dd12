"""Two of the surfaces made from the table: the snippet's providers (``ctx.read`` in a
snippet) and the Python calls (``await fab.ctx.read(...)``). The MCP tools are made in
``fabric.mcp._tools`` and the commands in ``fabric._cli_ops``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fabric._errors import FabricClosed
from fabric._operations._table import OPERATIONS, Operation, Reply, Surface, signature
from fabric._translate import error_payload
from runtime import ProviderCallError

if TYPE_CHECKING:
    from fabric._session import Fabric
    from fabric.providers import ProviderRegistry


def register_operations(registry: ProviderRegistry, session: Fabric) -> None:
    """Serve every operation to ``session``'s snippets, validated by its argument model."""
    for op in OPERATIONS.values():
        registry.register(
            op.namespace,
            op.name,
            _provider(op, session),
            args_model=op.args,
            description=op.full_description,
            replace=True,
            risk=op.risk,
        )


def _provider(op: Operation, session: Fabric) -> Callable[..., Awaitable[Any]]:
    """The provider behind ``ctx.<name>``: the registry has validated the arguments with the
    operation's model; a failure reaches the snippet as ToolError with its code."""

    async def provider(**fields: Any) -> Any:
        reply = await _answer(op, session, fields, "snippet")
        if op.text_key is not None and isinstance(reply.data, dict):
            return {**reply.data, op.text_key: reply.text}
        return reply.data

    provider.__name__ = provider.__qualname__ = op.name
    return provider


async def _answer(
    op: Operation, session: Fabric, fields: dict[str, Any], surface: Surface
) -> Reply:
    """``op`` on arguments its model has validated; what it raises for the caller's mistake or
    the data's comes out as ProviderCallError with its code (a bug of Fabric's as it is)."""
    try:
        return await op(session, op.args.model_construct(**fields), surface)
    except ProviderCallError:
        raise
    except Exception as exc:
        payload = error_payload(exc)
        if payload.code == "internal":
            raise
        raise ProviderCallError(payload.message, code=payload.code) from None


class Calls:
    """The operations of one namespace as Python calls: ``await fab.ctx.read(handle,
    query="x")`` takes what ``ctx.read`` takes in a snippet and returns its :class:`Reply`
    (``text`` for a person, ``data`` as a snippet gets it). A failure raises
    ``ProviderCallError`` with its code (``bad_arguments`` for an argument the model refuses,
    named; ``invalid_name``, ``not_found``... from the store), and a call on a closed session
    ``FabricClosed``."""

    def __init__(self, session: Fabric, namespace: str) -> None:
        self._session, self._namespace = session, namespace

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Reply]]:
        op = OPERATIONS.get(f"{self._namespace}.{name}")
        if op is None or name.startswith("_") or not op.offered_on("python"):
            raise AttributeError(f"{self._namespace} has no operation {name!r}")
        return _call(op, self._session)

    def __dir__(self) -> list[str]:
        prefix = f"{self._namespace}."
        return [
            q.removeprefix(prefix)
            for q, op in OPERATIONS.items()
            if q.startswith(prefix) and op.offered_on("python")
        ]


def _call(op: Operation, session: Fabric) -> Callable[..., Awaitable[Reply]]:
    async def call(*positional: Any, **named: Any) -> Reply:
        if session.closed:
            raise FabricClosed("this Fabric session is closed")
        provider = session.providers.get(op.namespace, op.name)  # binds and checks as in a snippet
        fields = provider.validate(provider.bind(positional, named))
        return await _answer(op, session, fields, "python")

    call.__name__ = call.__qualname__ = op.name
    call.__doc__ = op.full_description
    call.__signature__ = signature(op)  # type: ignore[attr-defined]
    return call
