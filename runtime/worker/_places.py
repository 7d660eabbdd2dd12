"""The host's paths, kept out of what a snippet reads.

Some errors of asyncio and the interpreter name where the runtime's and Python's files live
(``Task <... coro=<_serve() running at /opt/.../_process.py:302> cb=[... at
/usr/lib/python3.11/asyncio/base_events.py:180]>``). A snippet that catches one learns nothing
from it: asyncio's helpers that format coroutines and callbacks say ``<sandbox>`` in a worker,
and an error's message is passed through :func:`unplaced` once more on its way out.
"""

from __future__ import annotations

import asyncio.coroutines
import asyncio.format_helpers
import os
import sysconfig
from typing import Any

PLACES = tuple(
    sorted(
        {os.path.dirname(os.path.dirname(os.path.dirname(__file__))), sysconfig.get_path("stdlib")},
        key=len,
        reverse=True,
    )
)
"""Where the runtime's and the standard library's files live on the host."""


def unplaced(text: str) -> str:
    """``text`` with each of :data:`PLACES` replaced by ``<sandbox>``."""
    for place in PLACES:
        text = text.replace(place, "<sandbox>")
    return text


_format_coroutine = asyncio.coroutines._format_coroutine  # type: ignore[attr-defined]
_get_function_source = asyncio.format_helpers._get_function_source


def _coroutine(coro: Any) -> str:
    return unplaced(_format_coroutine(coro))


def _function_source(func: Any) -> tuple[str, int] | None:
    found = _get_function_source(func)
    return None if found is None else (unplaced(found[0]), found[1])


def patch_asyncio() -> None:
    """In the zygote: asyncio's reprs of tasks, futures and handles name no host path."""
    asyncio.coroutines._format_coroutine = _coroutine  # type: ignore[attr-defined]
    asyncio.format_helpers._get_function_source = _function_source  # type: ignore[assignment]
