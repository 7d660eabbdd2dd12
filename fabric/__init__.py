"""Fabric: a code-mode runtime for LLM agents.

The model sends a short Python snippet; Fabric runs it in a sandboxed worker process with
provider namespaces (``tools``, ``mcp``, ``ctx``...) served by the host, and hands back a
small, governed result.
"""

from fabric._approvals import ApprovalPolicy, Decision
from fabric._approver import ApprovalRequest, Approvals, Approver
from fabric._errors import ConfigError, FabricClosed, FabricError, RegistrationError
from fabric._extensions import extension
from fabric._hooks import Completed, HookCounts, PostHook
from fabric._memory import MemoryScope, MiniBankHook
from fabric._operations import Reply
from fabric._outcomes import FabricResult
from fabric._session import Fabric
from fabric._translate import ErrorPayload, error_payload
from fabric.providers import Provider, ProviderRegistry, Workspace
from runtime import (
    AudioBlock,
    BlobResource,
    ContentBlock,
    ExecError,
    ExecResult,
    ImageBlock,
    Limits,
    ProviderCallError,
    ResourceBlock,
    TextBlock,
    TextResource,
    Timings,
)

__all__ = [
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approvals",
    "Approver",
    "AudioBlock",
    "BlobResource",
    "Completed",
    "ConfigError",
    "ContentBlock",
    "Decision",
    "ErrorPayload",
    "ExecError",
    "ExecResult",
    "Fabric",
    "FabricClosed",
    "FabricError",
    "FabricResult",
    "HookCounts",
    "ImageBlock",
    "Limits",
    "MemoryScope",
    "MiniBankHook",
    "PostHook",
    "Provider",
    "ProviderCallError",
    "ProviderRegistry",
    "RegistrationError",
    "Reply",
    "ResourceBlock",
    "TextBlock",
    "TextResource",
    "Timings",
    "Workspace",
    "error_payload",
    "extension",
]

__version__ = "0.1.0"
