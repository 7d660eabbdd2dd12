"""``ctx.read``, ``ctx.offload`` and ``ctx.summarize``: drilling into stored results and
workspace files, storing data, and compressing it within a token budget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from fabric._llm import Budgets
from fabric._operations._table import Args, Cli, Reply, Surface, operation
from fabric._summaries import PAGE_BYTES, WHOLE_BYTES
from runtime import ProviderCallError
from runtime.boundary import MAX_CONTEXT_LINES, MAX_MATCHES_CAP, SummaryMode

if TYPE_CHECKING:
    from fabric._session import Fabric

SNIPPET_SHARE = 0.8
"""A read inside a snippet gets this share of ``readOffloadThreshold``, so that returning it
whole still passes the boundary inline."""


class ReadArgs(Args):
    handle: str = Field(
        description="a handle (or key) from an offload notice, or a workspace file path"
    )
    offset: int | None = Field(None, ge=0, description="first byte of a range")
    length: int | None = Field(None, ge=0, description="bytes of a range")
    query: str | None = Field(
        None, description="text to find (literal and case-sensitive unless asked otherwise)"
    )
    regex: bool = Field(False, description="the query is a regular expression")
    ignore_case: bool = Field(False, description="match the query in any case")
    max_matches: int = Field(
        100,
        ge=1,
        le=MAX_MATCHES_CAP,
        description="windows shown (adjacent matches share one); the rest counted and sampled",
    )
    context: int = Field(1, ge=0, le=MAX_CONTEXT_LINES, description="lines around each match")
    json_path: str | None = Field(
        None, description='the values at a JSON path: "$.items[0:5]", "$.a[*].b", "$.a[-1]"'
    )


@operation(
    ReadArgs,
    help="Read part of a stored result (by handle) or a workspace file",
    description=(
        "One mode per call: a byte range (offset, length; never splitting a character), the "
        "lines matching a query (windows with line numbers and the exact total count), or the "
        "values at a JSON path. What comes back always fits one read, with the call that "
        "continues it."
    ),
    cli=Cli(positional=("handle",)),
    read_only=True,
)
def read(session: Fabric, args: ReadArgs, surface: Surface) -> Reply:
    threshold = session.boundary.config.read_offload_threshold
    budget = int(threshold * SNIPPET_SHARE) if surface == "snippet" else threshold
    found = session.context.read(
        args.handle,
        offset=args.offset,
        length=args.length,
        query=args.query,
        regex=args.regex,
        ignore_case=args.ignore_case,
        max_matches=args.max_matches,
        context=args.context,
        json_path=args.json_path,
        budget=budget,
    )
    return Reply(found.text, found.model_dump(mode="json", exclude={"text"}, exclude_none=True))


class OffloadArgs(Args):
    data: Any = Field(description="what to store: text, bytes or a JSON value")
    key: str | None = Field(None, description="a name to read it back by, beside its handle")
    label: str | None = Field(None, description="a note kept with it")
    source: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="what produced the data (grep, read, bash...); its handle is named for it",
    )


@operation(
    OffloadArgs,
    help="Store data under a handle and get a structural preview back",
    description="Read it later with ctx_read, by its handle or its key.",
    needs_store=True,
    cli=Cli(files=("data",)),
    text_key="preview",
)
def offload(session: Fabric, args: OffloadArgs, surface: Surface) -> Reply:
    stored = session.context.offload(args.data, key=args.key, label=args.label, source=args.source)
    preview = stored.pop("preview")
    return Reply(preview, {"ok": True, **stored})


def _budget(name: str) -> Any:
    """A model summary's budget, as the summarizer bounds it."""
    return Budgets.model_fields[name]


class SummarizeArgs(Args):
    text: str | None = Field(None, description="the text to summarize")
    handle: str | None = Field(None, description="or the handle of a stored result to summarize")
    mode: SummaryMode = Field(
        "structural",
        description=(
            "structural (JSON outline, log levels and errors, sections, head and tail), code "
            "(imports, classes, functions, TODOs; diffs by file) or model (the configured model)"
        ),
    )
    max_tokens: int = Field(500, ge=16, le=100_000, description="the summary's budget")
    offset: int = Field(
        0,
        ge=0,
        description=f"structural: the byte to start from; stored text is summarized "
        f"{PAGE_BYTES // 1024} KB at a time (code and JSON whole up to "
        f"{WHOLE_BYTES // 1024 // 1024} MB), each summary saying where the next one starts",
    )
    strategy: Literal["chunked", "direct"] = Field(
        "chunked", description="model mode: summarize chunk by chunk, or in one call"
    )
    max_input_tokens: int = _budget("max_input_tokens")
    max_chunks: int = _budget("max_chunks")
    max_calls: int | None = _budget("max_calls")
    timeout_seconds: float = _budget("timeout_seconds")


@operation(
    SummarizeArgs,
    help="Compress text or a stored result within max_tokens",
    description=(
        "structural and code are deterministic; model uses the model configured in "
        ".fabric/config.json. The source stays under a handle."
    ),
    needs_store=True,
    cli=Cli(files=("text",)),
)
async def summarize(session: Fabric, args: SummarizeArgs, surface: Surface) -> Reply:
    if (args.text is None) == (args.handle is None):
        raise ProviderCallError(
            "text and handle: give one of them, the text to summarize or the handle of a stored "
            "result",
            code="bad_arguments",
        )
    budgets = Budgets(**args.model_dump(include=set(Budgets.model_fields)))
    done = await session.summaries.summarize(
        text=args.text,
        handle=args.handle,
        mode=args.mode,
        max_tokens=args.max_tokens,
        strategy=args.strategy,
        budgets=budgets,
        offset=args.offset,
    )
    head = f"[{args.mode} summary, {done['tokens']} tokens; the source is {done['handle']}]"
    return Reply(f"{head}\n{done['summary']}", done)
