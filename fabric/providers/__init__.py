"""Providers: the host-side functions snippets call through ``tools``, ``mcp``, ``ctx``..."""

from fabric.providers._files import Workspace
from fabric.providers._paths import REFUSALS, OpenedPath, open_beneath, read_bytes
from fabric.providers._registry import RISKS, Provider, ProviderFunc, ProviderRegistry, Risk
from fabric.providers._tools import register_file_tools

__all__ = [
    "REFUSALS",
    "RISKS",
    "OpenedPath",
    "Provider",
    "ProviderFunc",
    "ProviderRegistry",
    "Risk",
    "Workspace",
    "open_beneath",
    "read_bytes",
    "register_file_tools",
]
