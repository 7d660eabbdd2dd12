"""Keeping model-facing text within a byte budget."""

from __future__ import annotations


def size(text: str) -> int:
    """Bytes of ``text`` as UTF-8 (lone surrogates counted, never an error)."""
    return len(text.encode("utf-8", "surrogatepass"))


def fit(text: str, budget: int) -> str:
    """``text`` if it fits in ``budget`` bytes, else its whole lines that do, and a '…' line."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= budget:
        return text
    return data[: max(0, budget - 4)].decode("utf-8", "ignore").rsplit("\n", 1)[0] + "\n…"
