"""How deeply a value may nest to cross between a snippet and the world.

Everything that crosses is JSON, and each reader on the way has a recursion limit of its own:
pydantic's serializer (a result's ``--json``, MCP's structured content), an MCP client's parser
(about 200 levels), CPython's JSON decoder (about 1,000). A value deeper than
:data:`MAX_DEPTH` is refused where it would cross, with an error that says so, never left to
fail in one of them.

The depth is read from the JSON text, not from the objects: dropping the escapes, keeping only
quotes and brackets and cutting out what lies between quotes are C-speed passes, and each
further pass removes one level of brackets, so ordinary data (a few levels) costs a few scans
of its brackets, where walking a decoded value object by object cost a second for a 5 MB
one.
"""

from __future__ import annotations

MAX_DEPTH = 100
"""The deepest nesting of lists and dicts a value may have to cross (a result, a provider
call's arguments, a value read by a JSON path)."""

_QUOTES_AND_BRACKETS_ONLY = bytes(b for b in range(256) if b not in b'"[]{}')
_AS_SQUARE = bytes.maketrans(b"{}", b"[]")


def json_nests_within(text: bytes | str, depth: int = MAX_DEPTH) -> bool:
    """Whether the JSON ``text`` nests its arrays and objects at most ``depth`` levels (text
    that is not JSON may be answered either way: its decoder refuses it)."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if raw.count(b"[") + raw.count(b"{") <= depth:
        return True
    # escapes first (an escaped backslash, then an escaped quote), so that every quote left
    # opens or closes a string; then only quotes and brackets, and the strings' brackets gone
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = raw.translate(_AS_SQUARE, _QUOTES_AND_BRACKETS_ONLY).replace(b'""', b"")
    brackets = b"".join(kept.split(b'"')[0::2]) if b'"' in kept else kept  # between strings
    if not brackets:
        return True  # every bracket was inside a string
    for _ in range(depth):
        shorter = brackets.replace(b"[]", b"")
        if not shorter:
            return True
        if len(shorter) == len(brackets):
            return False  # unbalanced: not JSON
        brackets = shorter
    return False
