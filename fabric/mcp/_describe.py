"""The description of ``fabric_exec``: what the model needs to write a snippet, generated from
the provider registry so it always lists what exists."""

from __future__ import annotations

from contract import MODULES, REFUSED_BUILTINS
from fabric.providers import ProviderRegistry
from runtime import IMAGE_TYPES, MAX_MEDIUM_BYTES

DESCRIPTION_TOKENS = 900
"""The most the fabric_exec description may cost the model (a test holds it to this)."""
_PER_NAMESPACE = 12


def exec_description(registry: ProviderRegistry, threshold: int) -> str:
    lines = [
        "Run a short Python snippet in a sandbox instead of calling tools one by one. The "
        "snippet is the body of an async function: use `await` at top level, "
        "`asyncio.gather(...)` for concurrency, and `return` a value (else the last "
        "expression is returned). Compute what you need inside the snippet (filter, count, "
        "slice, summarize) and return only that. Imports: "
        + ", ".join(name for name in MODULES if name != "asyncio")
        + ", and asyncio ("
        + ", ".join(MODULES["asyncio"])
        + "). Not there: "
        + ", ".join(REFUSED_BUILTINS[:9])
        + ". "
        "A failing call raises ToolError (.code, .message).",
        "",
        "Namespaces (all calls are async):",
    ]
    catalog = registry.catalog()
    for namespace in sorted(catalog):
        names = [n for n in catalog[namespace] if "." not in n]
        nested = sorted({n.partition(".")[0] for n in catalog[namespace] if "." in n})
        if not names and not nested:
            continue
        shown = [registry.get(namespace, name).signature() for name in names[:_PER_NAMESPACE]]
        more = f" (+{len(names) - _PER_NAMESPACE} more)" if len(names) > _PER_NAMESPACE else ""
        if nested:  # MCP servers and the like: a count and their names, not every tool
            listed = ", ".join(nested[:_PER_NAMESPACE])
            extra = f" +{len(nested) - _PER_NAMESPACE}" if len(nested) > _PER_NAMESPACE else ""
            shown.append(
                f"{len(nested)} groups of tools ({listed}{extra}), called as "
                f"{namespace}.<group>.<tool>(...)"
                + (f"; see {namespace}.list()" if "list" in names else "")
            )
        lines.append(f"- {namespace}: " + "; ".join(shown) + more)
    lines += [
        "",
        f"Results up to {threshold} bytes come back whole. Larger ones are stored and you get "
        "a handle, sizes and a structural preview: read more with ctx.read(handle, "
        'offset=, length=) or (query=, regex=, ignore_case=) or (json_path="$.items[0:5]"), '
        "in a snippet or with the ctx_read tool. Never re-run a call to see its output again: "
        "read the handle.",
        'To show images, return content blocks: [{"type": "text", "text": ...}, {"type": '
        '"image", "data": <bytes>, "mime_type": "image/png"}] (also audio and resource '
        "blocks; images "
        + ", ".join(IMAGE_TYPES)
        + f", {MAX_MEDIUM_BYTES // 2**20} MiB each). All text blocks share the limit above.",
        "Each result is classified before it runs (see ce_exec): RAW, ENCODED, UNKNOWN, "
        "SELECTED, PROJECTED, AGGREGATED, COMPRESSED, OFFLOADED, NONE; with strict=true an "
        "unbounded return is refused before it runs, with the fix.",
    ]
    return "\n".join(lines)
