"""The description of ``fabric_exec``: what the model needs to write a snippet, generated from
the provider registry so it always lists what exists. Its namespace lines are those ``help()``
shows in a snippet (``fabric.providers.overview_lines``)."""

from __future__ import annotations

import asyncio

from contract import MODULES, REFUSED_BUILTINS
from fabric.providers import ProviderRegistry, overview_lines
from runtime import IMAGE_TYPES, MAX_MEDIUM_BYTES

_ASYNCIO_ERRORS = frozenset(
    name
    for name in MODULES["asyncio"]
    if isinstance(getattr(asyncio, name, None), type)
    and issubclass(getattr(asyncio, name), BaseException)
)
"""asyncio's exception classes, left out of the description by name: a model knows them."""

DESCRIPTION_TOKENS = 900
"""The most the fabric_exec description may cost the model (a test holds it to this)."""


def exec_description(registry: ProviderRegistry, threshold: int) -> str:
    lines = [
        "Run a short Python snippet in a sandbox instead of calling tools one by one. The "
        "snippet is the body of an async function: use `await` at top level, "
        "`asyncio.gather(...)` for concurrency, and `return` a value (else the last "
        "expression is returned). Compute what you need inside the snippet (filter, count, "
        "slice, summarize) and return only that. Imports: "
        + ", ".join(name for name in MODULES if name != "asyncio")
        + ", and asyncio ("
        + ", ".join(name for name in MODULES["asyncio"] if name not in _ASYNCIO_ERRORS)
        + " and its errors). Not there: "
        + ", ".join(REFUSED_BUILTINS[:9])
        + ". "
        "A failing call raises ToolError (.code, .message).",
        "",
        "Namespaces (all calls are async; in a snippet, help() shows this list, "
        'help(tools.read) or help("tools.read") one call):',
        *overview_lines(registry),
    ]
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
