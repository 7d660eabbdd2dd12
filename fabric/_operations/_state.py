"""``state.get``, ``state.set``, ``state.delete`` and ``state.keys``: JSON values kept for the
rest of the session (``fabric._state``).

Offered in snippets and as Python calls (``await fab.state.get("k")``) only: a command starts
a session of its own, which would have nothing in it, and a client reaches the same values by
running a snippet.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from pydantic import Field

from fabric._operations._table import Args, Reply, Surface, operation

if TYPE_CHECKING:
    from fabric._session import Fabric

state_operation = functools.partial(
    operation, namespace="state", surfaces=frozenset(("snippet", "python"))
)
"""A row of ``state``: offered in snippets and Python only."""
_KEY = "the value's name"


class GetArgs(Args):
    key: str = Field(description=_KEY)
    default: Any = Field(None, description="what to return when the key is not set")


@state_operation(
    GetArgs,
    help="The JSON value kept under key, or default",
    read_only=True,
)
def get(session: Fabric, args: GetArgs, surface: Surface) -> Reply:
    value = session.session_state.get(args.key, args.default)
    return Reply(json.dumps(value, ensure_ascii=False, default=repr), value)


class SetArgs(Args):
    key: str = Field(description=_KEY)
    value: Any = Field(description="any JSON value: str, int, float, bool, None, lists, dicts")


@state_operation(
    SetArgs,
    help="Keep a JSON value under key for the rest of the session",
    description="All keys together are capped at stateMaxBytes; a set past it fails.",
)
def set(session: Fabric, args: SetArgs, surface: Surface) -> Reply:
    state = session.session_state
    taken = state.set(args.key, args.value)
    usage = state.usage()
    text = f"kept {args.key} ({taken:,} bytes; {usage['bytes']:,} of {usage['max_bytes']:,} used)"
    return Reply(text, {"key": args.key, "bytes": taken, **usage})


class KeyArgs(Args):
    key: str = Field(description=_KEY)


@state_operation(
    KeyArgs,
    help="Forget the value under key; whether it was there",
)
def delete(session: Fabric, args: KeyArgs, surface: Surface) -> Reply:
    found = session.session_state.delete(args.key)
    return Reply(f"deleted {args.key}" if found else f"{args.key} was not set", found, ok=found)


class NoArgs(Args):
    pass


@state_operation(
    NoArgs,
    help="The keys kept in this session's state, sorted",
    read_only=True,
)
def keys(session: Fabric, args: NoArgs, surface: Surface) -> Reply:
    names = session.session_state.keys()
    return Reply("\n".join(names) or "no keys are set", names)
