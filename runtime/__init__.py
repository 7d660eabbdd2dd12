"""Sandboxed execution of snippets, and the boundary between their results and the model.

Public names are loaded on first use, so that ``python -m runtime.worker`` (the lean parent
that forks workers) imports neither pydantic nor anything else of the host side.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runtime._content import (
        AUDIO_TYPES,
        BLOCK_TYPES,
        IMAGE_TYPES,
        MAX_BLOCKS,
        MAX_MEDIA_BYTES,
        MAX_MEDIUM_BYTES,
        MAX_META_BYTES,
        MAX_META_DEPTH,
        MAX_MIME_CHARS,
        MAX_URI_CHARS,
        AudioBlock,
        BlobResource,
        BlockAnnotations,
        ContentBlock,
        ImageBlock,
        ResourceBlock,
        TextBlock,
        TextResource,
        described,
    )
    from runtime._errors import (
        ProviderCallError,
        ReadError,
        SandboxClosed,
        SandboxError,
        SandboxUnavailable,
    )
    from runtime._execution import ProviderHost, call_deadline
    from runtime._isolation import ISOLATIONS, DoctorReport, Isolation, Layer, Probe
    from runtime._labels import CallLabels, label_call
    from runtime._models import (
        CallRecord,
        CallTotals,
        CompileIssue,
        ErrorKind,
        ExecError,
        ExecResult,
        Limits,
        PolicyApplied,
        Timings,
    )
    from runtime._render import render_error, render_value
    from runtime._sandbox import MAX_CODE_BYTES, MAX_RUNNING, Sandbox
    from runtime._testing import NoProviders
    from runtime._threads import (
        CallStopped,
        run_host_work,
        run_sync,
        stop_if_requested,
        stop_requested,
    )

_EXPORTS = {
    "AUDIO_TYPES": "runtime._content",
    "BLOCK_TYPES": "runtime._content",
    "IMAGE_TYPES": "runtime._content",
    "MAX_BLOCKS": "runtime._content",
    "MAX_MEDIA_BYTES": "runtime._content",
    "MAX_MEDIUM_BYTES": "runtime._content",
    "MAX_META_BYTES": "runtime._content",
    "MAX_META_DEPTH": "runtime._content",
    "MAX_MIME_CHARS": "runtime._content",
    "MAX_URI_CHARS": "runtime._content",
    "AudioBlock": "runtime._content",
    "BlobResource": "runtime._content",
    "BlockAnnotations": "runtime._content",
    "ContentBlock": "runtime._content",
    "ImageBlock": "runtime._content",
    "ResourceBlock": "runtime._content",
    "TextBlock": "runtime._content",
    "TextResource": "runtime._content",
    "described": "runtime._content",
    "ProviderCallError": "runtime._errors",
    "ReadError": "runtime._errors",
    "SandboxClosed": "runtime._errors",
    "SandboxError": "runtime._errors",
    "SandboxUnavailable": "runtime._errors",
    "ProviderHost": "runtime._execution",
    "call_deadline": "runtime._execution",
    "ISOLATIONS": "runtime._isolation",
    "DoctorReport": "runtime._isolation",
    "Isolation": "runtime._isolation",
    "Layer": "runtime._isolation",
    "Probe": "runtime._isolation",
    "CallRecord": "runtime._models",
    "CallTotals": "runtime._models",
    "CallLabels": "runtime._labels",
    "label_call": "runtime._labels",
    "CompileIssue": "runtime._models",
    "PolicyApplied": "runtime._models",
    "ErrorKind": "runtime._models",
    "ExecError": "runtime._models",
    "ExecResult": "runtime._models",
    "Limits": "runtime._models",
    "Timings": "runtime._models",
    "render_error": "runtime._render",
    "render_value": "runtime._render",
    "MAX_CODE_BYTES": "runtime._sandbox",
    "MAX_RUNNING": "runtime._sandbox",
    "Sandbox": "runtime._sandbox",
    "NoProviders": "runtime._testing",
    "CallStopped": "runtime._threads",
    "run_sync": "runtime._threads",
    "run_host_work": "runtime._threads",
    "stop_if_requested": "runtime._threads",
    "stop_requested": "runtime._threads",
}

__all__ = [
    "AUDIO_TYPES",
    "BLOCK_TYPES",
    "IMAGE_TYPES",
    "ISOLATIONS",
    "MAX_BLOCKS",
    "MAX_CODE_BYTES",
    "MAX_MEDIA_BYTES",
    "MAX_MEDIUM_BYTES",
    "MAX_META_BYTES",
    "MAX_META_DEPTH",
    "MAX_MIME_CHARS",
    "MAX_RUNNING",
    "MAX_URI_CHARS",
    "AudioBlock",
    "BlobResource",
    "BlockAnnotations",
    "CallLabels",
    "CallRecord",
    "CallStopped",
    "CallTotals",
    "CompileIssue",
    "ContentBlock",
    "DoctorReport",
    "ErrorKind",
    "ExecError",
    "ExecResult",
    "ImageBlock",
    "Isolation",
    "Layer",
    "Limits",
    "NoProviders",
    "PolicyApplied",
    "Probe",
    "ProviderCallError",
    "ProviderHost",
    "ReadError",
    "ResourceBlock",
    "Sandbox",
    "SandboxClosed",
    "SandboxError",
    "SandboxUnavailable",
    "TextBlock",
    "TextResource",
    "Timings",
    "call_deadline",
    "described",
    "label_call",
    "render_error",
    "render_value",
    "run_host_work",
    "run_sync",
    "stop_if_requested",
    "stop_requested",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
