"""Providers: the host-side functions snippets call through ``tools``, ``mcp``, ``ctx``..."""

from fabric.providers._files import Workspace, register_file_tools
from fabric.providers._paths import REFUSALS, OpenedPath, open_beneath, read_bytes
from fabric.providers._registry import Provider, ProviderFunc, ProviderRegistry

__all__ = [
    "REFUSALS",
    "OpenedPath",
    "Provider",
    "ProviderFunc",
    "ProviderRegistry",
    "Workspace",
    "open_beneath",
    "read_bytes",
    "register_file_tools",
]
