"""The boundary: what of a result reaches the model, and where the rest goes.

Small results are inlined. Large ones are stored first (the exact original, in the store) and
replaced by a notice with the handle, sizes, recipes to read more, and a structural preview.
Long errors are compacted the same way; edit results that carry a diff are acknowledged.
Every channel that reaches the model (value and printed output) shares one budget, and so do
the text blocks of a result made of content blocks (``_blocks.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from runtime._content import ContentBlock, TextBlock, media_bytes, render_blocks
from runtime._isolation import about_isolation
from runtime._models import CallRecord, ExecError, ExecResult, PolicyApplied
from runtime._recognise import ContentError, recognise
from runtime._render import logs_section, render_error, render_notes
from runtime.boundary import _blocks
from runtime.boundary._code import name_from
from runtime.boundary._compaction import compact_error_text
from runtime.boundary._config import BoundaryConfig, ResultFormat, ResultPolicy
from runtime.boundary._edits import edit_summary, is_edit_envelope
from runtime.boundary._fit import fit
from runtime.boundary._fit import size as _size
from runtime.boundary._format import render, to_json
from runtime.boundary._preview import Preview, preview
from runtime.boundary._redact import redact
from runtime.boundary._tokens import TokenCounter
from store import ContentType, Entry, Store, StoreError

HEADER_BYTES = 1024
"""The most an offload notice adds on top of its preview (handles, sizes, recipes)."""
_LOG_SHARE = 4
_LOG_PREVIEW = 600
_SUMMARY_BYTES = 4096


@dataclass(frozen=True, slots=True)
class Stored:
    """A payload the boundary put in the store, and the notice that describes it."""

    entry: Entry
    notice: str


class Boundary:
    """Applies result policies between snippets (or tools) and the model."""

    def __init__(
        self,
        store: Store | None,
        config: BoundaryConfig | None = None,
        tokens: TokenCounter | None = None,
    ) -> None:
        self.store = store
        self.config = config or BoundaryConfig()
        self.tokens = tokens or TokenCounter()

    # -- results -------------------------------------------------------------------------

    def finish(
        self,
        result: ExecResult,
        *,
        policy: ResultPolicy | None = None,
        fmt: ResultFormat | None = None,
    ) -> ExecResult:
        """The result as the model should see it: ``text`` bounded, originals stored.

        Never raises for what a snippet returned: a value too deep or too large for the host
        to render is a ``limit`` error naming the fix."""
        try:
            if not result.ok:
                return self._finish_error(result)
            return self._finish_value(result, policy, fmt)
        except (RecursionError, MemoryError) as exc:
            error = ExecError(
                kind="limit",
                type="ResultTooComplex",
                message=f"the host could not render the result ({type(exc).__name__}): it "
                "nests too deeply or is too large",
                hint="return flatter or smaller data, or store it: `await ctx.offload(value)`",
            )
            text = render_error(error)
            failed = result.model_copy(update={"ok": False, "value": None, "error": error})
            count = self.tokens.count(text)
            return self._done(failed, text, _size(text), count, "inline", counted=text)

    def _finish_value(
        self, result: ExecResult, policy: ResultPolicy | None, fmt: ResultFormat | None
    ) -> ExecResult:
        policy = policy or self.config.result_policy
        fmt = fmt or self.config.result_format
        threshold = self.config.read_offload_threshold
        try:
            recognised = recognise(result.value)
        except ContentError as exc:
            return self._finish_error(_bad_content(result, exc))
        if recognised.blocks is not None:
            return self._finish_blocks(result, recognised.blocks, policy)
        if recognised.note is not None:
            result = _noted(result, recognised.note)
        original, ctype = _original(result.value)
        if result.value is None and result.logs:
            value_text = ""
        elif policy != "inline" and ctype == "json" and _size(original) > 4 * threshold:
            value_text = original  # far over the threshold: not worth a pretty rendering
        else:
            try:
                value_text = render(result.value, fmt)
            except RecursionError:  # the formats that recurse: one-line JSON goes deeper
                value_text = to_json(result.value)
                result = _noted(result, f"shown as JSON: the value nests too deeply for {fmt}")
        logs_text = logs_section(result.logs, result.logs_dropped, bool(value_text))
        full = value_text + logs_text
        size = len(full.encode("utf-8", "surrogatepass"))
        tokens = self.tokens.count(full)
        edit = (
            policy == "auto"
            and self.config.compact_edit_results
            and is_edit_envelope(result.value, len(value_text.encode("utf-8", "surrogatepass")))
        )
        by_size = policy in ("auto", "summarize")  # summarize, like auto, only what is large
        if policy == "inline" or (by_size and size <= threshold and not edit):
            return self._done(result, full, size, tokens, "inline", counted=full)
        source = _source(result.call_log)
        warnings: list[str] = []
        logs_part, logs_handle = logs_text, None
        if _size(logs_text) > threshold // _LOG_SHARE:
            logs_part, logs_handle = self._offload_logs(
                result.logs, result.logs_dropped, source, warnings
            )
        value_budget = threshold - _size(logs_part)
        applied: PolicyApplied
        handle = None
        if edit:
            stored = self._store(original, ctype, source, warnings)
            value_part = edit_summary(result.value, stored.entry.handle if stored else None)
            handle, applied = (stored.entry.handle if stored else None), "edit"
        elif by_size and _size(value_text) <= value_budget:
            value_part, applied = value_text, "inline"
        else:
            summarize = policy == "summarize"
            budget = min(
                threshold, _SUMMARY_BYTES if summarize else self.config.offload_preview_bytes
            )
            budget = max(0, min(budget, value_budget))
            stored = self._store(original, ctype, source, warnings)
            name = name_from(source[1])
            body = self._preview(result.value, budget, ctype, _size(original), warnings, name)
            if stored is None:
                value_part = f"[the result could not be stored: {warnings[-1]}]\n{body.text}"
            else:
                notice = _notice(stored.entry, body, summarize)
                value_part = f"{notice}\n{body.text}"
            handle = stored.entry.handle if stored else None
            applied = "summarize" if summarize else "offload"
        text = value_part + logs_part
        return self._done(
            result,
            text,
            size,
            tokens,
            applied,
            handle=handle,
            logs_handle=logs_handle,
            warnings=warnings,
        )

    def _finish_blocks(
        self, result: ExecResult, blocks: tuple[ContentBlock, ...], policy: ResultPolicy
    ) -> ExecResult:
        """Content blocks: their text within one budget (see ``_blocks``), media in place."""
        threshold = self.config.read_offload_threshold
        texts = _blocks.texts_of(blocks)
        logs_text = logs_section(result.logs, result.logs_dropped, True).lstrip("\n")
        text = "\n".join(t for _, t in texts)
        full = f"{text}\n{logs_text}" if logs_text else text
        size, tokens = _size(full), self.tokens.count(full)
        logs = (TextBlock(text=logs_text),) if logs_text else ()
        by_size = policy in ("auto", "summarize")  # as for values: only what is large
        if not texts or policy == "inline" or (by_size and size <= threshold):
            return self._done(result, "", size, tokens, "inline", blocks=(*blocks, *logs))
        warnings: list[str] = []
        logs_part, logs_handle = logs_text, None
        if _size(logs_text) > threshold // _LOG_SHARE:
            logs_part, logs_handle = self._offload_logs(
                result.logs, result.logs_dropped, _source(result.call_log), warnings
            )
            logs = (TextBlock(text=logs_part.lstrip("\n")),)
        value_budget = max(0, threshold - _size(logs_part))
        if by_size and _size(text) <= value_budget:
            shown = (*blocks, *logs)
            return self._done(
                result, "", size, tokens, "inline", logs_handle=logs_handle, blocks=shown
            )
        allowance = min(_blocks.SIBLINGS_BYTES, value_budget // 4)
        kept = _blocks.siblings(texts, allowance) if policy == "auto" else frozenset()
        if len(texts) == 1:
            data, ctype = _original(texts[0][1])
        else:
            data, ctype = _blocks.text_payload(blocks, texts), "json"
        stored = self._store(data, ctype, _source(result.call_log), warnings)
        summarize = policy == "summarize"
        budget = min(threshold, _SUMMARY_BYTES if summarize else self.config.offload_preview_bytes)
        kept_bytes = sum(_size(t) for i, t in texts if i in kept)
        budget = max(0, min(budget, value_budget - kept_bytes))
        if len(texts) == 1:
            body = self._preview(texts[0][1], budget, ctype, _size(data), warnings)
        else:

            def show(one: str, room: int) -> Preview:
                return self._preview(one, room, "text", _size(one), warnings)

            body = _blocks.previews(texts, kept, budget, show)
        if stored is None:
            notice = f"[the result could not be stored: {warnings[-1]}]\n{body.text}"
        else:
            holds = _blocks.holds(blocks, texts, kept)
            head = _notice(stored.entry, body, summarize, holds)
            notice = f"{head}\n{body.text}"
        return self._done(
            result,
            "",
            size,
            tokens,
            "summarize" if summarize else "offload",
            handle=stored.entry.handle if stored else None,
            logs_handle=logs_handle,
            warnings=warnings,
            blocks=(*_blocks.placed(blocks, texts, kept, notice), *logs),
        )

    def _preview(
        self,
        value: Any,
        budget: int,
        ctype: str,
        size: int,
        warnings: list[str],
        name: str | None = None,
    ) -> Preview:
        """A preview; should building one fail on some odd input, the start of the text."""
        redacting = self.config.redact_secrets
        try:
            return preview(value, budget, ctype, redact=redacting, size_bytes=size, name=name)
        except Exception as exc:  # the original is stored already: degrade, never crash
            warnings.append(f"the preview failed ({type(exc).__name__}: {exc})")
            text = value if isinstance(value, str) else to_json(value)
            return Preview(fit(redact(text[: budget * 2]), budget))

    def _finish_error(self, result: ExecResult) -> ExecResult:
        text = result.text
        size = len(text.encode("utf-8", "surrogatepass"))
        tokens = self.tokens.count(text)
        if size < self.config.error_compaction_threshold:
            # the model reads it redacted; result.error keeps the exact words for the caller
            shown = redact(text) if self.config.redact_secrets else text
            return self._done(result, shown, size, tokens, "inline", counted=text)
        warnings: list[str] = []
        stored = self._store(text, "text", ("exec.error", {}), warnings)
        if stored is None:  # nothing may be lost: show the original as it is
            return self._done(result, text, size, tokens, "inline", warnings=warnings, counted=text)
        compact = compact_error_text(
            text,
            self.config.error_compaction_preview_bytes,
            stored.entry.handle,
            redact=self.config.redact_secrets,
        )
        return self._done(result, compact, size, tokens, "compact", handle=stored.entry.handle)

    def _offload_logs(
        self, logs: str, dropped: int, source: tuple[str, dict[str, Any]], warnings: list[str]
    ) -> tuple[str, str | None]:
        stored = self._store(logs, "text", ("exec.print", source[1]), warnings)
        body = preview(logs, _LOG_PREVIEW, "text", redact=self.config.redact_secrets)
        kept = _size(logs)
        lost = ""
        if dropped:  # the worker kept the first outputBytes: say what did not come back
            cut = "" if logs.endswith("\n") else ", its last line cut at the limit"
            lost = (
                f"; {kept + dropped} bytes were printed, the first {kept} kept{cut}, the "
                f"other {dropped} dropped (raise outputBytes to keep more)"
            )
        if stored is None:
            return f"\n\n[printed output, could not be stored{lost}]\n{body.text}", None
        entry = stored.entry
        head = (
            f"\n\n[printed output: {entry.bytes} bytes stored as {entry.handle}{lost}; "
            f'read it with ctx.read("{entry.handle}", offset=0, length=4000)]'
        )
        return f"{head}\n{body.text}", entry.handle

    def _done(
        self,
        result: ExecResult,
        text: str,
        size: int,
        tokens: int,
        applied: PolicyApplied,
        *,
        handle: str | None = None,
        logs_handle: str | None = None,
        warnings: list[str] | None = None,
        counted: str | None = None,
        blocks: tuple[ContentBlock, ...] | None = None,
    ) -> ExecResult:
        """``result`` as the model reads it: ``text``, or ``blocks`` (and ``text`` made from
        them); ``size`` and ``tokens`` are those of the whole result, and ``counted`` the text
        ``tokens`` were counted on (when that is ``text`` itself, it is not counted again)."""
        notes = tuple(w for w in result.warnings if not about_isolation(w))
        extra: dict[str, Any] = {}
        if blocks is not None:
            if notes:
                blocks = (*blocks, TextBlock(text=render_notes(notes).lstrip("\n")))
            text = render_blocks(blocks)
            extra = {"blocks": blocks, "media_bytes": sum(media_bytes(b) for b in blocks)}
        elif notes:  # what happened to the value (NaN made strings, say) the model must know
            text += render_notes(notes)
        text_tokens = tokens if counted is text else self.tokens.count(text)
        return result.model_copy(
            update={
                **extra,
                "text": text,
                "bytes": size,
                "tokens": tokens,
                "text_tokens": text_tokens,
                "policy_applied": applied,
                "handle": handle,
                "logs_handle": logs_handle,
                "warnings": (*result.warnings, *(warnings or ())),
            }
        )

    # -- explicit offloads -----------------------------------------------------------------

    def offload(
        self,
        data: Any,
        *,
        key: str | None = None,
        tool: str = "ctx.offload",
        args: dict[str, Any] | None = None,
    ) -> Stored:
        """Store ``data`` (text, bytes or a JSON value) and describe it with a preview."""
        if self.store is None:
            raise StoreError("no store is configured, so nothing can be offloaded")
        if isinstance(data, bytes | bytearray):
            entry = self.store.put(bytes(data), tool=tool, args=args, key=key)
        else:
            original, ctype = _original(data)
            entry = self.store.put(
                original,
                tool=tool,
                args=args,
                key=key,
                content_type=ctype,
                tokens=self.tokens.count(original),
            )
        return Stored(entry, self.describe(entry))

    def describe(self, entry: Entry, budget: int | None = None) -> str:
        """The offload notice and a preview for a stored entry."""
        budget = budget or self.config.offload_preview_bytes
        if self.store is None:
            raise StoreError("no store is configured")
        if entry.content_type == "bytes":
            head = self.store.read_range(entry.handle, 0, 48).data
            body = Preview(f"binary data; first bytes: {head.hex(' ')}")
        else:
            text = self.store.get_text(entry.handle)
            name = name_from(entry.source.args, entry.key)
            redacting = self.config.redact_secrets
            body = preview(text, budget, entry.content_type, redact=redacting, name=name)
        return f"{_notice(entry, body, False)}\n{body.text}"

    def _store(
        self,
        data: str,
        ctype: ContentType,
        source: tuple[str, dict[str, Any]],
        warnings: list[str],
    ) -> Stored | None:
        if self.store is None:
            warnings.append("no store is configured")
            return None
        try:
            entry = self.store.put(
                data,
                tool=source[0],
                args=source[1],
                content_type=ctype,
                tokens=self.tokens.count(data),
            )
        except StoreError as exc:
            warnings.append(str(exc))
            return None
        return Stored(entry, "")


def _original(value: Any) -> tuple[str, ContentType]:
    """The exact text kept for a value, and its content type."""
    if isinstance(value, str):
        stripped = value.lstrip()[:1]
        if stripped in ("{", "["):
            try:
                json.loads(value)
                return value, "json"
            except (ValueError, RecursionError, MemoryError):  # nested too deep is text too
                pass
        return value, "text"
    return to_json(value), "json"


def _source(calls: tuple[CallRecord, ...]) -> tuple[str, dict[str, Any]]:
    """Name a result after the call that made it, when there was exactly one kind of call."""
    tools = list(dict.fromkeys(call.tool for call in calls))
    if len(calls) == 1:
        return calls[0].tool, dict(calls[0].args)
    if len(tools) == 1:
        return tools[0], {"calls": len(calls)}
    if tools:
        return "exec", {"tools": ", ".join(tools[:4])}
    return "exec", {}


def _notice(entry: Entry, body: Preview, summary: bool, holds: str | None = None) -> str:
    h, query = entry.handle, body.query or "text to find"
    what = "summary" if summary else "result"
    case = ", ignore_case=True" if body.ignore_case else ""
    lines = [
        f"[{what} stored as {h}: {entry.bytes} bytes, about {entry.tokens} tokens, "
        f"{entry.content_type}. The full result is kept and nothing is lost: do not re-run the "
        "code that produced it; read from the handle.]",
        *([holds] if holds else []),
        "Read more with ctx.read in a snippet (the ctx_read tool takes the same arguments):",
        f'  await ctx.read("{h}", offset=0, length=4000)',
        f'  await ctx.read("{h}", query="{query}"{case})',
    ]
    if body.json_path:
        lines.append(f'  await ctx.read("{h}", json_path="{body.json_path}")')
    lines.append("Structural summary:" if summary else "Preview (partial):")
    return "\n".join(lines)


def _bad_content(result: ExecResult, exc: ContentError) -> ExecResult:
    """``result`` failed: its content blocks cannot be sent, as ``exc`` says."""
    error = ExecError(
        kind=exc.kind,
        type="ContentTooLarge" if exc.kind == "limit" else "ContentBlockError",
        message=exc.message,
        hint=exc.hint,
        limit=exc.limit,
    )
    text = render_error(error) + logs_section(result.logs, result.logs_dropped, True)
    return result.model_copy(update={"ok": False, "value": None, "error": error, "text": text})


def _noted(result: ExecResult, note: str) -> ExecResult:
    """``result`` with ``note`` among its warnings (shown to the model with the value)."""
    return result.model_copy(update={"warnings": (*result.warnings, note)})
