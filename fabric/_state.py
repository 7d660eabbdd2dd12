"""What one ``Fabric`` session keeps between executions: ``state.*`` values set on purpose,
and (with ``persistVariables``) the top-level variables an execution left behind.

Both live in the session's memory only: they are gone when it closes. Each is held as JSON
text, so what a caller gets back is always a fresh copy, and capped in bytes by its setting.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from runtime import ProviderCallError

_KEY_CHARS = 256


def encoded(value: Any) -> str:
    """``value`` as JSON; raises TypeError or ValueError when it is not JSON data."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def size(key: str, text: str) -> int:
    """Bytes a key and its JSON take."""
    return len(key.encode("utf-8", "surrogatepass")) + len(text.encode("utf-8", "surrogatepass"))


class SessionState:
    """``state.get``/``set``/``delete``/``keys``: JSON values by key, within ``max_bytes()``
    bytes (keys and values together, as JSON). Safe to use from several threads."""

    def __init__(self, max_bytes: Callable[[], int]) -> None:
        self._values: dict[str, str] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self.max_bytes = max_bytes
        """The cap in force (``stateMaxBytes``, read at each ``set``)."""

    @property
    def bytes(self) -> int:
        return self._bytes

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            text = self._values.get(key)
        return default if text is None else json.loads(text)

    def set(self, key: str, value: Any) -> int:
        """Keep ``value`` under ``key``; its size in bytes. Raises ProviderCallError when it is
        not JSON or would take the state past its cap."""
        if len(key) > _KEY_CHARS or not key:
            raise ProviderCallError(
                f"state.set: key must be 1 to {_KEY_CHARS} characters, not {len(key)}",
                code="bad_arguments",
            )
        try:
            text = encoded(value)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ProviderCallError(
                f"state.set({key!r}): the value is not JSON ({exc}); keep str, int, float, bool, "
                "None, and lists and dicts of them (bytes as base64 text)",
                code="bad_arguments",
            ) from None
        added = size(key, text)
        cap = self.max_bytes()
        with self._lock:
            old = self._values.get(key)
            after = self._bytes - (size(key, old) if old is not None else 0) + added
            if after > cap:
                raise ProviderCallError(
                    f"state.set({key!r}): the value takes {added:,} bytes as JSON, which would "
                    f"bring the session's state to {after:,} bytes, above stateMaxBytes "
                    f"({cap:,}); delete keys you no longer need, keep less, or raise "
                    "stateMaxBytes in .fabric/config.json",
                    code="too_large",
                )
            self._values[key] = text
            self._bytes = after
        return added

    def delete(self, key: str) -> bool:
        """Forget ``key``; whether it was there."""
        with self._lock:
            old = self._values.pop(key, None)
            if old is not None:
                self._bytes -= size(key, old)
        return old is not None

    def keys(self) -> list[str]:
        with self._lock:
            return sorted(self._values)

    def usage(self) -> dict[str, int]:
        """For ``ctx_status``: keys, bytes and the cap."""
        return {"keys": len(self._values), "bytes": self._bytes, "max_bytes": self.max_bytes()}


class Variables:
    """The top-level variables the last successful execution handed back (``persistVariables``),
    which the next one starts with."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._bytes = 0

    def take(self, values: Mapping[str, Any], total: int) -> None:
        self._values, self._bytes = dict(values), total

    def current(self) -> dict[str, Any]:
        return dict(self._values)

    def clear(self) -> None:
        self._values, self._bytes = {}, 0

    def usage(self, max_bytes: int) -> dict[str, Any]:
        return {"names": sorted(self._values), "bytes": self._bytes, "max_bytes": max_bytes}
