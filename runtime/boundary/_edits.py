"""Edit envelopes: a successful edit whose result carries a diff becomes a short
acknowledgement; the whole result stays under a handle."""

from __future__ import annotations

from typing import Any

from runtime.boundary._diffs import diff_stats

EDIT_MIN_BYTES = 2048
_DIFF_KEYS = ("diff", "patch")


def is_edit_envelope(value: Any, size: int) -> bool:
    """``{"ok": true, ..., "diff": "..."}`` of at least 2 KB."""
    return (
        size >= EDIT_MIN_BYTES
        and isinstance(value, dict)
        and (value.get("ok") is True or value.get("success") is True)
        and any(isinstance(value.get(key), str) for key in _DIFF_KEYS)
    )


def edit_summary(value: dict[str, Any], handle: str | None) -> str:
    key = next(k for k in _DIFF_KEYS if isinstance(value.get(k), str))
    diff: str = value[key]
    stats = diff_stats(diff)
    files, added, removed = stats.files, stats.added, stats.removed
    listed = ", ".join(f"{name} (+{a} -{r})" for name, (a, r) in list(files.items())[:10])
    if len(files) > 10:
        listed += f", +{len(files) - 10} more files"
    extras = [
        f"{k}: {v}"
        for k, v in value.items()
        if k not in _DIFF_KEYS and isinstance(v, str | int | float | bool) and len(str(v)) <= 120
    ][:6]
    lines = [f"edit applied ({'; '.join(extras) or 'ok'})"]
    lines.append(f"{key}: {len(files)} file(s), +{added} -{removed}: {listed or 'no hunks'}")
    if handle:
        lines.append(
            f"The full result is stored as {handle}; read the {key} with "
            f'await ctx.read("{handle}", json_path="$.{key}") only if you need it.'
        )
    else:
        lines.append(f"(the full result could not be stored; the {key} is not shown)")
    return "\n".join(lines)
