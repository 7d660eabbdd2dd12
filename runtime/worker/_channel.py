"""The worker's side of provider calls: namespace proxies and the call channel.

``tools.read(path="a")`` in a snippet finds a :class:`ProviderFunction` through a
:class:`Namespace`; calling it sends ``{"op": "call", ...}`` to the host and returns a
coroutine that resolves to the host's reply, or raises :class:`ToolError`. Proxies carry no
public attributes besides the provider names, and hold nothing of the host.
"""

from __future__ import annotations

import asyncio
import difflib
import itertools
from typing import Any

from runtime.worker import _wire
from runtime.worker._guards import ToolError

_MAX_REPLY_BYTES = 1 << 40  # replies come from the trusted host; the memory limit bounds them


class CallLimitError(Exception):
    """The snippet made more provider calls than its limit allows."""


class Channel:
    """Sends provider calls to the host and matches replies to waiting calls."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_calls: int,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._max_calls = max_calls
        self._pump: asyncio.Task[None] | None = None
        self.calls = 0

    async def closed(self) -> None:
        """Wait until the host closes the connection."""
        if self._pump is not None:
            await self._pump
        else:
            await self._reader.read()

    async def _read_replies(self) -> None:
        try:
            while True:
                reply = await _wire.read_frame(
                    self._reader, max_bytes=_MAX_REPLY_BYTES, trust_marshal=True
                )
                future = self._pending.pop(reply["id"], None)
                if future is not None and not future.done():
                    future.set_result(reply)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ToolError(f"host connection lost: {exc}", code="host"))

    async def call(
        self, namespace: str, name: str, kwargs: dict[str, Any], args: tuple[Any, ...] = ()
    ) -> Any:
        qualified = f"{namespace}.{name}"
        if self.calls >= self._max_calls:
            raise CallLimitError(
                f"provider call limit reached: {self._max_calls} calls in one execution; "
                "batch the work into fewer calls"
            )
        self.calls += 1
        if self._pump is None:  # replies are read once there is a call to reply to
            self._pump = asyncio.get_running_loop().create_task(self._read_replies())
        call_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        message = {"op": "call", "id": call_id, "ns": namespace, "name": name, "kwargs": kwargs}
        if args:
            message["args"] = list(args)
        try:
            frame = _wire.encode_json(message)
        except (TypeError, ValueError, RecursionError) as exc:
            self._pending.pop(call_id, None)
            raise ToolError(
                f"{qualified}: arguments must be plain data ({exc})",
                tool=qualified,
                code="bad_args",
            ) from None
        self._writer.write(frame)
        await self._writer.drain()
        reply = await future
        if reply.get("ok"):
            return reply.get("value")
        error = reply.get("error") or {}
        raise ToolError(
            str(error.get("message", "provider call failed")),
            tool=qualified,
            code=str(error.get("code", "tool_error")),
        )


class ProviderFunction:
    """A callable provider; positional arguments are matched to its parameters on the host."""

    __slots__ = ("_channel", "_name", "_namespace")

    def __init__(self, channel: Channel, namespace: str, name: str) -> None:
        self._channel = channel
        self._namespace = namespace
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._channel.call(self._namespace, self._name, kwargs, args)

    def __repr__(self) -> str:
        return f"<provider {self._namespace}.{self._name}>"


class Namespace:
    """A provider namespace (``tools``, ``mcp``...) or a sub-namespace (``mcp.git``)."""

    __slots__ = ("_channel", "_names", "_path", "_root")

    def __init__(self, channel: Channel, root: str, names: list[str], path: str = "") -> None:
        self._channel = channel
        self._root = root
        self._names = names
        self._path = path

    def __getattr__(self, attr: str) -> Any:
        full = f"{self._path}{attr}"
        if full in self._names:
            return ProviderFunction(self._channel, self._root, full)
        prefix = full + "."
        if any(n.startswith(prefix) for n in self._names):
            return Namespace(self._channel, self._root, self._names, prefix)
        shown = f"{self._root}.{full}"
        nearby = difflib.get_close_matches(full, self._names, n=1)
        if nearby:
            raise AttributeError(f"{shown} is not a tool; did you mean {self._root}.{nearby[0]}?")
        if not self._names:
            raise AttributeError(f"{shown} is not a tool; no tools are registered in {self._root}")
        listed = ", ".join(sorted(self._names)[:30])
        raise AttributeError(f"{shown} is not a tool; {self._root} has: {listed}")

    def __setattr__(self, attr: str, value: Any) -> None:
        if attr in Namespace.__slots__:
            object.__setattr__(self, attr, value)
            return
        raise AttributeError("provider namespaces are read-only")

    def __repr__(self) -> str:
        return f"<namespace {self._root}{'.' + self._path.rstrip('.') if self._path else ''}>"
