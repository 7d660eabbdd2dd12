"""Telling code from other text, and outlining it.

The language comes from a file name when one reached the boundary: the path a
``tools.read(path="app.py")`` call was given, or the key or label of a
``ctx.offload(data, key="app.py")``. Without one, text is taken for Python only when it
parses as Python and defines a class or function; other languages need a name (or a
summary's ``mode="code"``, which guesses from definition-looking lines).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from runtime.boundary._outline import Outline
from runtime.boundary._outline_heuristic import guess_language, heuristic_outline
from runtime.boundary._outline_python import looks_defined, python_outline

LANGUAGES: Mapping[str, str] = {
    **dict.fromkeys((".py", ".pyi", ".pyw"), "python"),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), "javascript"),
    **dict.fromkeys((".ts", ".tsx", ".mts", ".cts"), "typescript"),
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    **dict.fromkeys((".c", ".h"), "c"),
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++"), "cpp"),
}
"""File suffixes whose text is outlined as code, and the language of each."""
NOT_CODE = frozenset(
    [
        ".md",
        ".markdown",
        ".rst",
        ".txt",
        ".log",
        ".csv",
        ".tsv",
        ".json",
        ".jsonl",
        ".yaml",
        ".yml",
        ".toml",
        ".ini",
        ".cfg",
        ".html",
        ".xml",
        ".svg",
    ]
)
"""File suffixes whose text is never taken for code, whatever it parses as."""
_NAME_ARGS = ("path", "file", "filename", "file_path", "name", "label", "url")


def language_of(name: str | None) -> str | None:
    """The language a file name says; ``""`` when it says the text is not code; None when
    it says nothing (no name, or a suffix of neither kind)."""
    if not name:
        return None
    suffix = PurePosixPath(name.split("?", 1)[0]).suffix.lower()
    if suffix in NOT_CODE:
        return ""
    return LANGUAGES.get(suffix)


def name_from(args: Mapping[str, Any], key: str | None = None) -> str | None:
    """The file name, among a producing call's arguments or a stored entry's key, that says
    which language (or that no language) its result is in."""
    for value in [*(args.get(arg) for arg in _NAME_ARGS), key]:
        if isinstance(value, str) and language_of(value) is not None:
            return value
    return None


def outline_of(text: str, name: str | None = None, *, guess: bool = False) -> Outline | None:
    """The outline of ``text`` when it is code that defines something, else None.

    ``name`` is the file name it came from, if known. With ``guess`` (a summary asked for
    ``mode="code"``), text with no name is taken for code anyway: Python when it parses,
    else the language most of whose definition lines it has."""
    language = language_of(name)
    if language == "":
        return None
    if language == "python":
        parsed = python_outline(text)
        found: Outline | None = (
            parsed
            if isinstance(parsed, Outline)
            else heuristic_outline(text, "python", reason=f"not parsed: {parsed}")
        )
    elif language is not None:
        found = heuristic_outline(text, language)
    elif guess or looks_defined(text):
        found = _unnamed(text, guess)
    else:
        return None
    return found if found is not None and found.total else None


def _unnamed(text: str, guess: bool) -> Outline | None:
    """Text that came with no name: Python when it parses; else, with ``guess``, the
    language its definition lines say."""
    parsed = python_outline(text)
    if isinstance(parsed, Outline):
        return parsed
    language = guess_language(text) if guess else None
    if language is None:
        return None
    reason = f"not parsed: {parsed}" if language == "python" else "not parsed"
    return heuristic_outline(text, language, reason=reason, guessed=True)
