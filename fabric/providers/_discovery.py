"""What the model reads to find its way: the namespaces and their signatures, compactly.

One source for two readers: ``help()`` inside a snippet (the worker gets :func:`help_entries`
with each execution) and the ``fabric_exec`` description (its namespace lines are
:func:`overview_lines`). Each namespace shows its first few signatures and a count of the rest;
``mcp`` shows its own calls (``mcp.list``...) and only a count of its servers' tools with a
pointer to ``mcp.list()``, so the description grows by a line however many servers are
configured.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabric.providers._registry import Provider, ProviderRegistry

PER_NAMESPACE = 13
"""Signatures a namespace shows in the overview; the rest are counted."""
FULL_SIGNATURES = 8
"""A namespace with more calls than this is shown compactly in the overview, its calls by name
and required arguments only (``memory.{get(key); put(key, ...); ...}``), so a large namespace
costs the description few tokens; ``help("memory")`` has the signatures."""
_DESCRIPTION_CHARS = 1200
"""Of a call's description, what ``help(tools.read)`` shows."""
_HELP_BYTES = 128 * 1024
"""What the help sent with an execution may take; past it, calls get their signature only."""
SERVER_NAMESPACE = "mcp"
"""The namespace whose dotted names are servers' tools (``mcp.git.git_log``)."""


def _groups(registry: ProviderRegistry, namespace: str) -> dict[str, list[Provider]]:
    """The dotted names of ``namespace`` by their first part (``mcp``'s servers' tools by
    server), in name order."""
    groups: dict[str, list[Provider]] = defaultdict(list)
    for provider in sorted(registry.providers(namespace), key=lambda p: p.name):
        group, dot, _ = provider.name.partition(".")
        if dot:
            groups[group].append(provider)
    return dict(groups)


_SHORT_DEFAULT = 16


def brief(provider: Provider, *, compact: bool = False) -> str:
    """``ctx.read(handle: str, offset=None, regex=False, ...)``: the signature as the overview
    shows it, the types of the required arguments only (``help(ctx.read)`` has them all);
    ``compact``: ``read(handle, ...)``, the name and the required arguments' names."""
    model = provider.args_model
    if model is None:
        return provider.name + "(...)" if compact else provider.signature()
    parts = []
    for name, field in model.model_fields.items():
        if compact:
            if field.is_required():
                parts.append(name)
            elif "..." not in parts:
                parts.append("...")
        elif field.is_required():
            kind = field.annotation
            shown = kind.__name__ if isinstance(kind, type) else str(kind).replace("typing.", "")
            parts.append(f"{name}: {shown}")
        else:
            default = repr(field.get_default(call_default_factory=True))
            parts.append(f"{name}={default}" if len(default) <= _SHORT_DEFAULT else f"{name}=...")
    return f"{provider.name if compact else provider.qualified}({', '.join(parts)})"


def _servers_line(servers: Mapping[str, list[Provider]], waiting: set[str]) -> str:
    """``26 tools on 3 servers (...)``; a server not started yet (its tools unknown) counts
    as a server."""
    count = sum(len(tools) for tools in servers.values())
    names = sorted(set(servers) | waiting)
    tools = f"{count} tools on " if count else ""
    return (
        f"{tools}{len(names)} servers ({', '.join(names[:8])}"
        f"{', ...' if len(names) > 8 else ''}) as mcp.<server>.<tool>(...): "
        "await mcp.list() lists them"
    )


def overview_lines(registry: ProviderRegistry) -> list[str]:
    """A line per namespace that has calls: ``- tools: tools.read(path: str, ...); ...``."""
    lines = []
    catalog = registry.catalog()
    for namespace in sorted(catalog):
        names = [n for n in catalog[namespace] if not _is_server_tool(namespace, n)]
        compact = len(names) > FULL_SIGNATURES
        shown = [
            brief(registry.get(namespace, name), compact=compact) for name in names[:PER_NAMESPACE]
        ]
        if compact:
            shown = [f"{namespace}.{{{'; '.join(shown)}}}"]
        if len(names) > PER_NAMESPACE:
            shown.append(f'+{len(names) - PER_NAMESPACE} more: help("{namespace}") lists them')
        if namespace == SERVER_NAMESPACE:
            servers = _groups(registry, namespace)
            waiting = {n[: -len(".*")] for n in catalog[namespace] if n.endswith(".*")}
            if servers or waiting:
                shown.append(_servers_line(servers, waiting))
        if shown:
            lines.append(f"- {namespace}: " + "; ".join(shown))
    return lines


def _is_server_tool(namespace: str, name: str) -> bool:
    return namespace == SERVER_NAMESPACE and "." in name


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0][:160]


def _listing(providers: list[Provider]) -> str:
    return "\n".join(
        f"{p.signature()}" + (f": {_first_line(p.description)}" if p.description else "")
        for p in providers
    )


def _entry(provider: Provider, full: bool) -> str:
    lines = [f"async {provider.signature()}"]
    if provider.risk is not None:
        lines[0] += f"  [risk: {provider.risk}]"
    if provider.description:
        text = provider.description if full else _first_line(provider.description)
        if len(text) > _DESCRIPTION_CHARS:
            text = text[:_DESCRIPTION_CHARS] + " ..."
        lines.append(text)
    return "\n".join(lines)


def help_entries(registry: ProviderRegistry) -> dict[str, str]:
    """What ``help()`` shows in a snippet: ``""`` the overview, each namespace (and server,
    ``mcp.git``) its calls with a line each, each call (``tools.read``) its signature and
    description."""
    overview = [
        'Provider namespaces (every call is async: await it). help(tools) or help("tools") '
        'lists a namespace; help(tools.read) or help("tools.read") describes one call.',
        *overview_lines(registry),
    ]
    entries = {"": "\n".join(overview)}
    catalog = registry.catalog()
    for namespace in catalog:
        providers = registry.providers(namespace)
        if not providers:
            entries[namespace] = f"{namespace}: no calls are registered here"
            continue
        own = sorted(
            (p for p in providers if not _is_server_tool(namespace, p.name)),
            key=lambda p: p.name,
        )
        listing = [_listing(own)] if own else []
        for group, tools in _groups(registry, namespace).items():
            entries[f"{namespace}.{group}"] = _listing(tools)
            if namespace == SERVER_NAMESPACE:
                server = f"{namespace}.{group}"
                listing.append(f"{server}: {len(tools)} tools (help({server}) lists them)")
        entries[namespace] = "\n".join(listing)
    used = sum(len(text) for text in entries.values())
    for provider in sorted(registry.providers(), key=lambda p: p.qualified):
        text = _entry(provider, full=used < _HELP_BYTES)
        entries[provider.qualified] = text
        used += len(text)
    return entries
