"""``ctx.search``: find stored results by the words in them, best first, each hit with the
``ctx_read`` call that opens it (the store's full-text index, ``store.Store.search``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import Field

from fabric._operations._table import Args, Cli, Reply, Surface, operation
from runtime import ProviderCallError
from store import INDEXED_BYTES, InvalidRequest, SearchHit, SearchMatch, SearchResult

if TYPE_CHECKING:
    from fabric._session import Fabric

MAX_LIMIT = 20
"""The most hits one call shows: with their lines and read calls they stay well within what
a snippet's result may inline."""
_BEFORE, _AFTER, _READ_MAX = 200, 300, 4000
"""The read a hit offers: from its line's start (or 200 bytes before the match, in a long
line) to 300 bytes past the match."""


class SearchArgs(Args):
    query: str = Field(
        description='words to find (any case and accents); "quoted words" must be adjacent, '
        "word* is a prefix"
    )
    limit: int = Field(10, ge=1, le=MAX_LIMIT, description="hits at most, best first")
    match: SearchMatch = Field(
        "all",
        description="all: every word in one passage (lines up to about 4 KB together); any: "
        "at least one; fts5: the query is SQLite FTS5 syntax (AND, OR, NOT, NEAR)",
    )


@operation(
    SearchArgs,
    help="Search every stored result for words, best first (BM25)",
    description=(
        "Each hit names the handle (and key), the line of the first match with its line "
        "number and byte offset, and the ctx_read call that opens it. The first "
        f"{INDEXED_BYTES // 1024 // 1024} MiB of each text or JSON result is indexed; for text "
        "inside words or punctuation, read one result with ctx_read(handle, query=...)."
    ),
    needs_store=True,
    cli=Cli(positional=("query",)),
    read_only=True,
)
def search(session: Fabric, args: SearchArgs, surface: Surface) -> Reply:
    try:
        found = session.context.search(args.query, limit=args.limit, match=args.match)
    except InvalidRequest as exc:  # the store names the argument: query
        raise ProviderCallError(str(exc), code="bad_query") from None
    hits = [{**hit.model_dump(), "read": read_call(hit)} for hit in found.hits]
    data: dict[str, Any] = {**found.model_dump(exclude={"hits"}), "hits": hits}
    return Reply(_text(found, [h["read"] for h in hits]), data)


def read_call(hit: SearchHit) -> str:
    """The ``ctx_read`` call that shows the hit's line around its match."""
    start = hit.line_offset if hit.offset - hit.line_offset <= _BEFORE else hit.offset - _BEFORE
    length = min(_READ_MAX, hit.offset - start + hit.length + _AFTER)
    return f"ctx_read(handle={json.dumps(hit.handle)}, offset={start}, length={length})"


def _text(found: SearchResult, reads: list[str]) -> str:
    query = json.dumps(found.query, ensure_ascii=False)
    if not found.hits:
        lines = [
            f"no stored result matches {query} (match={found.match}): words match whole, so try "
            'word* for a prefix or match="any"; text inside words is found by '
            'ctx_read(handle, query="...") in one result'
        ]
    else:
        many = found.total != 1
        lines = [
            f"{found.total} stored result{'s' if many else ''} match{'' if many else 'es'} "
            + query
            + (
                f"; the best {len(found.hits)} (BM25):"
                if found.total > len(found.hits)
                else ", best first (BM25):"
            )
        ]
    for n, (hit, read) in enumerate(zip(found.hits, reads, strict=True), 1):
        key = f" (key {hit.key})" if hit.key else ""
        partial = (
            f"; only its first {hit.indexed} of {hit.bytes} bytes are indexed"
            if hit.indexed < hit.bytes
            else ""
        )
        lines += [
            f"{n}. {hit.handle}{key}, line {hit.line}, byte {hit.offset}{partial}",
            f"   {hit.text}",
            f"   {read}",
        ]
    if found.total > len(found.hits):
        lines.append(
            f"{found.total - len(found.hits)} more: add words to narrow it, or raise limit "
            f"(at most {MAX_LIMIT})"
        )
    if found.pending:
        lines.append(
            f"{found.pending} results stored before the index existed are not searchable yet; "
            "each search indexes more (`fabric store gc` indexes them all)"
        )
    return "\n".join(lines)
