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
from typing import Any, NoReturn

from contract import MAX_DEPTH, json_nests_within
from runtime.worker import _audit, _wire
from runtime.worker._errors import ToolError
from runtime.worker._exact import exact


class CallLimitError(Exception):
    """The snippet made more provider calls than its limit allows."""


class HostLink(asyncio.Protocol):
    """The worker's end of the connection to the host, driven by the event loop.

    Replies are parsed as they arrive and handed straight to the call waiting for them, with
    no reader task in between. Writes follow the transport's flow control: ``drain`` waits
    while the transport's buffer is over its limit.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._transport: asyncio.WriteTransport | None = None
        self._paused = False
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._lost: Exception | None = None
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.writing = asyncio.Lock()
        """Held while a frame goes out: a frame goes out in slices, and two must not
        interleave (a provider call from a task and the result)."""
        self.answered = False
        """Set once the snippet's main has returned: its result is all that goes out after."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self._transport = transport
        transport.set_write_buffer_limits(high=0)  # drain() waits until everything is sent

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while len(self._buffer) >= _wire.HEADER.size:
            length, codec = _wire.HEADER.unpack_from(self._buffer)
            end = _wire.HEADER.size + length
            if len(self._buffer) < end:
                return
            with memoryview(self._buffer) as view, _audit.trusted():
                reply = _wire.decode(codec, view[_wire.HEADER.size : end], trust_marshal=True)
            del self._buffer[:end]
            future = self._pending.pop(reply["id"], None)
            if future is not None and not future.done():
                future.set_result(reply)

    def eof_received(self) -> bool:
        return False  # the host hung up: close

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = exc or ConnectionResetError("the host closed the connection")
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ToolError(f"host connection lost: {self._lost}", code="host"))
        self._pending.clear()
        self.resume_writing()
        if not self.closed.done():
            self.closed.set_result(None)

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        for waiter in self._drain_waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._drain_waiters.clear()

    def expect(self, call_id: int) -> asyncio.Future[Any]:
        """The future the reply to ``call_id`` will resolve."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self._lost is not None:
            future.set_exception(ToolError(f"host connection lost: {self._lost}", code="host"))
        else:
            self._pending[call_id] = future
        return future

    def forget(self, call_id: int) -> None:
        self._pending.pop(call_id, None)

    def write(self, frame: bytes | memoryview) -> None:
        if self._transport is None or self._transport.is_closing():
            raise ConnectionResetError("the connection to the host is closed")
        self._transport.write(frame)

    async def drain(self) -> None:
        if self._lost is not None:
            raise ConnectionResetError(f"the connection to the host is closed: {self._lost}")
        if self._paused:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._drain_waiters.append(waiter)
            await waiter

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


class Channel:
    """Sends provider calls to the host and waits for their replies."""

    def __init__(self, link: HostLink, *, max_calls: int) -> None:
        self._link = link
        self._ids = itertools.count(1)
        self._max_calls = max_calls
        self.calls = 0

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
        call_id = next(self._ids)
        try:  # exact types first: the C encoder must run none of the snippet's code
            message = _wire.call_message(call_id, namespace, name, exact(kwargs), exact(list(args)))
            frame = _wire.encode_json(message)
            if not json_nests_within(frame[_wire.HEADER.size :], MAX_DEPTH + 2):  # {kwargs: {k: v}}
                raise ValueError(f"they nest deeper than {MAX_DEPTH} levels; flatten them")
        except (TypeError, ValueError, RecursionError) as exc:
            raise ToolError(
                f"{qualified}: arguments must be plain data ({exc})",
                tool=qualified,
                code="bad_args",
            ) from None
        link = self._link
        if link.answered:
            await self._finished(qualified)
        reply_future = link.expect(call_id)
        try:
            async with link.writing:
                late = link.answered  # main returned while this call waited its turn
                if not late:
                    await _wire.write_frame(link, frame)
        except ConnectionError as exc:
            self._link.forget(call_id)
            raise ToolError(f"host connection lost: {exc}", code="host") from None
        if late:  # waits with the lock let go: the result takes it next
            link.forget(call_id)
            await self._finished(qualified)
        reply = await reply_future
        if reply.get("ok"):
            return reply.get("value")
        error = reply.get("error") or {}
        raise ToolError(
            str(error.get("message", "provider call failed")),
            tool=qualified,
            code=str(error.get("code", "tool_error")),
        )

    async def _finished(self, qualified: str) -> NoReturn:
        """A call from a task still running once main has returned: it waits, without
        taking the loop from the result going out (a loop retrying at once would), until the
        host hangs up."""
        await asyncio.shield(self._link.closed)
        raise ToolError(
            f"{qualified}: the snippet had returned; a task it left running cannot call "
            "providers (await every task before returning)",
            tool=qualified,
            code="finished",
        )


class ReadOnly:
    """A sandbox object a snippet holds, whose state nothing may change once it is made (its
    ``__init__`` sets it with ``object.__setattr__``)."""

    __slots__ = ()

    def __setattr__(self, attr: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} objects are read-only")

    def __delattr__(self, attr: str) -> None:
        raise AttributeError(f"{type(self).__name__} objects are read-only")


class ProviderFunction(ReadOnly):
    """A callable provider; positional arguments are matched to its parameters on the host."""

    __slots__ = ("_channel", "_name", "_namespace")
    _channel: Channel
    _name: str
    _namespace: str

    def __init__(self, channel: Channel, namespace: str, name: str) -> None:
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_namespace", namespace)
        object.__setattr__(self, "_name", name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._channel.call(self._namespace, self._name, kwargs, args)

    def __repr__(self) -> str:
        return f"<provider {self._namespace}.{self._name}>"


class Namespace(ReadOnly):
    """A provider namespace (``tools``, ``mcp``...) or a sub-namespace (``mcp.git``).

    A catalog name ``git.*`` stands for every name under ``git.`` (an MCP server whose tools
    the host lists when it is first called): the call goes to the host, which answers it or
    says what exists."""

    __slots__ = ("_channel", "_names", "_path", "_root")
    _channel: Channel
    _names: tuple[str, ...]
    _path: str
    _root: str

    def __init__(
        self, channel: Channel, root: str, names: list[str] | tuple[str, ...], path: str = ""
    ) -> None:
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_names", tuple(names))
        object.__setattr__(self, "_path", path)

    def __getattr__(self, attr: str) -> Any:
        full = f"{self._path}{attr}"
        if full in self._names:
            return ProviderFunction(self._channel, self._root, full)
        prefix = full + "."
        if any(n.startswith(prefix) for n in self._names):
            return Namespace(self._channel, self._root, self._names, prefix)
        if f"{self._path}*" in self._names:  # names the host knows only once it is asked
            return ProviderFunction(self._channel, self._root, full)
        shown = f"{self._root}.{full}"
        nearby = difflib.get_close_matches(full, self._names, n=1)
        if nearby:
            near = nearby[0].removesuffix(".*")  # a server whose tools are not listed yet
            raise AttributeError(f"{shown} is not a tool; did you mean {self._root}.{near}?")
        if not self._names:
            raise AttributeError(f"{shown} is not a tool; no tools are registered in {self._root}")
        listed = ", ".join(sorted(self._names)[:30])
        raise AttributeError(f"{shown} is not a tool; {self._root} has: {listed}")

    def __repr__(self) -> str:
        return f"<namespace {self._root}{'.' + self._path.rstrip('.') if self._path else ''}>"
