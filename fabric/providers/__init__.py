"""Providers: the host-side functions snippets call through ``tools``, ``mcp``, ``ctx``..."""

from fabric.providers._discovery import help_entries, overview_lines
from fabric.providers._files import Workspace, register_file_tools
from fabric.providers._paths import REFUSALS, OpenedPath, open_beneath, read_bytes
from fabric.providers._registry import RISKS, Provider, ProviderFunc, ProviderRegistry, Risk

__all__ = [
    "REFUSALS",
    "RISKS",
    "OpenedPath",
    "Provider",
    "ProviderFunc",
    "ProviderRegistry",
    "Risk",
    "Workspace",
    "help_entries",
    "open_beneath",
    "overview_lines",
    "read_bytes",
    "register_file_tools",
]
