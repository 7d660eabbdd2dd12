"""Providers: the host-side functions snippets call through ``tools``, ``mcp``, ``ctx``..."""

from fabric.providers._files import Workspace, register_file_tools
from fabric.providers._registry import Provider, ProviderFunc, ProviderRegistry

__all__ = ["Provider", "ProviderFunc", "ProviderRegistry", "Workspace", "register_file_tools"]
