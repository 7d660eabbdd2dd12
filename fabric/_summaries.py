"""``ctx.summarize``: one owner for summaries, deterministic (``structural``, ``code``) or by a
model, the source always kept under a handle."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

from fabric._context import ContextTools
from fabric._llm import Budgets, Completer, ModelSettings, OpenAICompatible, summarize_with_model
from runtime import ProviderCallError
from runtime.boundary import (
    SummaryMode,
    TokenCounter,
    language_of,
    name_from,
    redact,
    summarize,
)
from store import Entry, Store


class Summaries:
    """Summaries of text or stored results, recorded as ``summarize`` events."""

    def __init__(
        self,
        context: ContextTools,
        tokens: TokenCounter,
        record: Callable[..., object],
        configured: Callable[[], ModelSettings | None],
    ) -> None:
        self._context, self._tokens, self._record = context, tokens, record
        self._configured = configured
        self.model: Completer | None = None
        """A model of your own for ``mode="model"``; else the configured endpoint."""

    async def summarize(
        self,
        *,
        text: str | None,
        handle: str | None,
        mode: SummaryMode,
        max_tokens: int,
        strategy: Literal["chunked", "direct"],
        budgets: Budgets,
        offset: int = 0,
    ) -> dict[str, Any]:
        """A summary of ``text`` (or of the entry ``handle``) within ``max_tokens``; ``budgets``
        bound a model summary's input, chunks, calls and time. The arguments are the
        ``ctx.summarize`` operation's, validated there."""
        settings = self._configured()
        if mode == "model" and settings is None and self.model is None:
            raise ProviderCallError(
                "no model is configured, so mode='model' cannot run; add "
                '"model": {"baseUrl": ..., "model": ..., "apiKeyEnv": ...} to .fabric/config.json, '
                "or use mode='structural' or mode='code' (deterministic)",
                code="no_model",
            )
        store = self._context.store
        if text is not None:
            entry = await asyncio.to_thread(
                store.put, text, tool="ctx.summarize", tokens=self._tokens.count(text)
            )
        else:
            entry = await asyncio.to_thread(store.stat, handle or "")
        extra: dict[str, Any] = {}
        if mode == "model":
            source = await asyncio.to_thread(store.get_text, entry.handle)
        else:  # a page at a time, so a huge entry costs one page
            name = name_from(entry.source.args, entry.key)
            whole = entry.content_type == "json" or mode == "code" or language_of(name)
            size = WHOLE_BYTES if whole else PAGE_BYTES
            source, extra = await asyncio.to_thread(_page, store, entry, offset, size)
        if mode == "model":
            completer = self.model or OpenAICompatible(settings)  # type: ignore[arg-type]
            done = await summarize_with_model(
                source,
                completer=completer,
                count=self._tokens.count,
                max_tokens=max_tokens,
                budgets=budgets,
                strategy=strategy,
                handle=entry.handle,
            )
            summary_text, tokens, coverage = done.text, done.tokens, done.coverage
            extra = {"calls": done.calls, "chunks": done.chunks, "next_offset": done.next_offset}
        else:
            header = _page_header(entry.handle, extra, entry.bytes) if extra else ""
            room = max(16, max_tokens - self._tokens.count(header)) if header else max_tokens
            summary = await asyncio.to_thread(
                summarize, source, mode, room, self._tokens.count, entry.content_type, name
            )
            summary_text, tokens, coverage = summary.text, summary.tokens, summary.coverage
            if header:  # the page's share of the whole
                coverage *= extra["page_bytes"] / max(1, entry.bytes)
                summary_text = header + summary_text
                tokens = self._tokens.count(summary_text)
        if self._context.boundary.config.redact_secrets:  # the stored source stays as it was
            shown = redact(summary_text)
            if shown != summary_text:
                summary_text, tokens = shown, self._tokens.count(shown)
                while tokens > max_tokens and summary_text:  # a marker may be the longer
                    summary_text = summary_text[: len(summary_text) * 9 // 10].rstrip() + "…"
                    tokens = self._tokens.count(summary_text)
        self._record(
            "summarize",
            mode=mode,
            bytes=entry.bytes,
            tokens=entry.tokens,
            summary_tokens=tokens,
            handle=entry.handle,
            **extra,
        )
        return {
            "summary": summary_text,
            "mode": mode,
            "tokens": tokens,
            "coverage": coverage,
            "handle": entry.handle,
            "source_bytes": entry.bytes,
            **extra,
        }


PAGE_BYTES = 512 * 1024
"""A structural summary of stored text reads this much of it, from ``offset``."""
WHOLE_BYTES = 16 * 1024 * 1024
"""Code and JSON are summarized whole up to this size (an outline or a JSON shape of part of
them would mislead: offsets and line numbers of a page are not the file's); the outline
looks at no more than this itself."""


def _page(store: Store, entry: Entry, offset: int, size: int) -> tuple[str, dict[str, Any]]:
    """The text to summarize: the whole entry when it is small, else ``size`` bytes from
    ``offset``, never splitting a character, and where the next page starts."""
    if offset > entry.bytes:
        raise ProviderCallError(
            f"offset: {offset} is past the end of {entry.handle} ({entry.bytes} bytes); "
            f"pass an offset below {entry.bytes}",
            code="bad_arguments",
        )
    if offset == 0 and entry.bytes <= size:
        return store.get_text(entry.handle), {}
    data = store.read_range(entry.handle, offset, size + 4).data
    start = 0
    while start < min(4, len(data)) and 0x80 <= data[start] < 0xC0:  # inside a character
        start += 1
    end = min(len(data), start + size)
    while end < len(data) and end > start and 0x80 <= data[end] < 0xC0:
        end -= 1
    last = offset + end
    page = {
        "offset": offset + start,
        "page_bytes": end - start,
        "next_offset": last if last < entry.bytes else None,
    }
    return data[start:end].decode("utf-8", "replace"), page


def _page_header(handle: str, page: dict[str, Any], size: int) -> str:
    """The line before a page's summary: which bytes it covers and how to go on."""
    first, last = page["offset"], page["offset"] + page["page_bytes"]
    where = f"[summary of bytes {first}-{last} of {size}"
    if first:  # an outline of the page counts from the page
        where += f" (its line numbers and [offsets] count from byte {first})"
    if page["next_offset"] is None:
        return f"{where}; this is the end]\n"
    return (
        f'{where}; continue with ctx.summarize(handle="{handle}", offset={page["next_offset"]})]\n'
    )
