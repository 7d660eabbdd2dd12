"""Code as the model reads it within a byte budget: an outline, never the first lines.

::

    python, 5321 lines, 210334 bytes (partial view: outline by ast; definitions as ...)
    module docstring: The job engine.
    imports: 34 statements (L3-60)
    L62-4980 class Engine(Base) [1830+180022]
      L72-90 def __init__(self, config) [2100+640]
      L92-130 async def run(self, job) [2740+1500]
    L4990-5100 def main(argv) [190100+3200]
    … not shown: 18 methods (Engine 16, Cache 2); their lines are found with query="def "

Every definition gets its line range and its bytes as ``[offset+length]``, so one
``ctx_read(offset=, length=)`` returns it whole. When not all fit, the public top-level ones
come first, then public members, then private ones (file order within each tier): in each
tier as many as fit by name, then as many of those with their signatures (and, in summaries,
their docstrings' first lines); the last line counts exactly what is not shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from runtime.boundary._fit import fit
from runtime.boundary._fit import size as _size
from runtime.boundary._outline import GROUPS, Definition, Outline

_SLACK = 64
"""Bytes kept beyond the count of what is not shown with nothing shown: once some are
shown, it may name other classes."""
_PARENTS = 3


@dataclass(frozen=True, slots=True)
class CodeView:
    text: str
    shown: int
    """Definitions shown."""
    total: int

    @property
    def coverage(self) -> float:
        return self.shown / self.total if self.total else 1.0


def code_view(
    outline: Outline, budget: int, *, summary: bool = False, notes: Sequence[str] = ()
) -> CodeView:
    """The outline within ``budget`` bytes, as a preview or (``summary``) as a summary,
    which adds docstrings' first lines where room is left; ``notes`` (TODO lines, say) come
    last. The count of what is not shown comes before any definition: the module's
    docstring, its imports and then the header's explanations give way to it."""
    heads = _heads(outline, "" if summary else "partial view: ")
    for head in heads:
        view = _within(outline, head, budget, summary, notes)
        if view is not None:
            return view
    everything = "\n".join([heads[-1][0], *_trailer(outline, list(outline.definitions))])
    return CodeView(fit(everything, budget), 0, outline.total)


def _within(
    outline: Outline, head: list[str], budget: int, summary: bool, notes: Sequence[str]
) -> CodeView | None:
    """The outline under ``head`` within ``budget``; None if not even the count of what
    is not shown fits."""
    defs = outline.definitions
    used = sum(_size(line) + 1 for line in head)
    if used > budget:
        return None
    order = sorted(range(len(defs)), key=lambda i: (defs[i].tier, i))
    reserve = sum(_size(line) + 1 for line in _trailer(outline, list(defs))) + _SLACK
    levels = _choose(defs, order, budget - used, reserve, summary, whole=not outline.more)
    while True:
        body = [_entry(defs[i], levels[i]) for i in range(len(defs)) if levels[i]]
        trailer = _trailer(outline, [d for d, level in zip(defs, levels, strict=True) if not level])
        room = budget - used - sum(_size(line) + 1 for line in [*body, *trailer]) + 1
        if room >= 0:
            break
        if not body:
            return None
        dropped = next(i for i in reversed(order) if levels[i])  # the least wanted goes first
        levels[dropped] = 0
    lines = [*head, *body, *_notes(notes, room), *trailer]
    return CodeView("\n".join(lines), len(body), outline.total)


def _heads(outline: Outline, view: str) -> list[list[str]]:
    """The lines above the definitions, from the fullest to the shortest."""
    what = f"{outline.language}, {outline.lines} lines, {outline.size} bytes"
    title = (
        f"{what} ({view}{outline.how}; definitions as L<first>-<last> "
        "[<byte offset>+<length>]: ctx.read(offset=, length=) reads one whole)"
    )
    extra = []
    if outline.doc:
        extra.append(f"module docstring: {outline.doc}")
    if outline.imports:
        extra.append(f"imports: {outline.imports}")
    short = f"{what} ({view}outline; L<lines> [<byte offset>+<length>])"
    return [[title, *extra], [title], [short]]


def _choose(
    defs: Sequence[Definition],
    order: list[int],
    room: int,
    reserve: int,
    docs: bool,
    *,
    whole: bool,
) -> list[int]:
    """How each definition is shown: 0 not at all, 1 by name, 2 with its signature (or its
    source line), 3 with its docstring's first line too. Tier by tier (public top-level
    first), as many as fit by name, then as many of those with their details."""
    levels = [0] * len(defs)
    short = [_size(_entry(d, 1)) + 1 for d in defs]
    if whole and sum(short) <= room:
        levels = [1] * len(defs)
        room -= sum(short)
    else:
        room -= reserve
    for tier in sorted({d.tier for d in defs}):
        members = [i for i in order if defs[i].tier == tier]
        for i in members:
            if not levels[i] and short[i] <= room:
                levels[i], room = 1, room - short[i]
        for level in (2, 3) if docs else (2,):
            for i in members:
                if levels[i] != level - 1 or (level == 3 and not defs[i].doc):
                    continue
                more = _size(_entry(defs[i], level)) - _size(_entry(defs[i], level - 1))
                if more <= room:
                    levels[i], room = level, room - more
    return levels


def _entry(d: Definition, level: int) -> str:
    span = f"L{d.line}-{d.end}" if d.end > d.line else f"L{d.line}"
    what = f"{d.kind} {d.name}" if level == 1 else d.source or f"{d.kind} {d.name}{d.signature}"
    doc = f"  # {d.doc}" if level == 3 else ""
    return f"{'  ' * min(d.depth, 6)}{span} {what} [{d.offset}+{d.length}]{doc}"


def _trailer(outline: Outline, hidden: list[Definition]) -> list[str]:
    """The line that counts the definitions not shown, by kind (methods by class)."""
    counts = Counter(d.group for d in hidden) + Counter(outline.more)
    if not counts:
        return []
    owners = Counter(d.parent for d in hidden if d.group == "methods" and d.parent)
    parts = []
    for group in GROUPS:
        if not counts[group]:
            continue
        part = f"{counts[group]} {group if counts[group] != 1 else _one(group)}"
        if group == "methods" and owners:
            named = [f"{name} {n}" for name, n in owners.most_common(_PARENTS)]
            others = len(owners) - len(named)
            part += f" ({', '.join(named)}{f', and {others} other classes' if others else ''})"
        parts.append(part)
    line = f"… not shown: {', '.join(parts)}"
    if outline.list_query:
        line += f'; their lines are found with query="{outline.list_query}"'
    return [line]


def _one(group: str) -> str:
    return {"classes": "class", "types": "type", "functions": "function"}.get(group, "method")


def _notes(notes: Sequence[str], room: int) -> list[str]:
    """As many notes as fit in ``room`` bytes, under a heading that says how many there are."""
    if not notes:
        return []
    kept: list[str] = []
    room -= _size(f"notes ({len(notes)}, the first {len(notes)} shown):") + 1
    for note in notes:
        cost = _size(note) + 1
        if cost > room:
            break
        kept.append(note)
        room -= cost
    if not kept:
        return []
    if len(kept) < len(notes):
        return [f"notes ({len(notes)}, the first {len(kept)} shown):", *kept]
    return [f"notes ({len(notes)}):", *kept]
