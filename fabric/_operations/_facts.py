"""``ctx.remember``, ``ctx.recall`` and ``ctx.forget``: project facts that persist across
sessions (``store.Facts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from fabric._operations._table import Args, Cli, Reply, Surface, operation

if TYPE_CHECKING:
    from fabric._session import Fabric


class RememberArgs(Args):
    name: str = Field(description="the fact's name; remembering it again replaces it")
    text: str = Field(description="what to remember")


@operation(
    RememberArgs,
    help="Remember a project fact under a name",
    description="It replaces what the name held, and persists across sessions.",
    cli=Cli(positional=("name", "text")),
    risk="write",
)
def remember(session: Fabric, args: RememberArgs, surface: Surface) -> Reply:
    fact = session.facts.remember(args.name, args.text)
    text = f"remembered {fact.name} ({fact.tokens} tokens)"
    if fact.evicted:
        text += (
            f"; to stay within the facts' {session.facts.max_bytes:,}-byte budget, the "
            f"{len(fact.evicted)} least recently "
            f"updated facts were forgotten: {', '.join(fact.evicted[:20])}"
            + (f" and {len(fact.evicted) - 20} more" if len(fact.evicted) > 20 else "")
        )
    return Reply(text, {"ok": True, **fact.model_dump(mode="json")})


class RecallArgs(Args):
    query: str = Field("", description="words to match; empty: every fact, newest first")
    max_tokens: int = Field(1000, ge=1, le=100_000, description="the facts' budget")
    limit: int = Field(20, ge=1, le=1000, description="facts at most")


@operation(
    RecallArgs,
    help="Recall remembered facts matching a query, best first, within max_tokens",
    cli=Cli(positional=("query",)),
    read_only=True,
)
def recall(session: Fabric, args: RecallArgs, surface: Surface) -> Reply:
    found = session.facts.recall(args.query, max_tokens=args.max_tokens, limit=args.limit)
    if not found.facts:
        text = f"no remembered fact matches {args.query!r}"
    else:
        text = "\n".join(f"{f.name}: {f.text}" for f in found.facts)
        if found.truncated:
            text += (
                f"\n[{found.matches} facts matched; the {args.max_tokens}-token budget cut the "
                "rest]"
            )
    return Reply(text, found.model_dump(mode="json"))


class ForgetArgs(Args):
    name: str = Field(description="the fact to forget")


@operation(
    ForgetArgs,
    help="Forget a remembered fact by name",
    cli=Cli(positional=("name",)),
    risk="write",
)
def forget(session: Fabric, args: ForgetArgs, surface: Surface) -> Reply:
    existed = session.facts.forget(args.name)
    text = f"forgot {args.name}" if existed else f"there was no fact named {args.name}"
    return Reply(text, {"ok": existed, "name": args.name, "forgotten": existed}, ok=existed)
