"""What the rules know by name: fields, methods and builtins, by what they do to data."""

from __future__ import annotations

SCALAR = (24, "bytes")
STATUS_FIELDS = frozenset(
    {"ok", "status", "exit_code", "returncode", "code", "error", "count", "total", "success"}
)
ENVELOPE_FIELDS = frozenset(
    {"content", "data", "result", "results", "stdout", "stderr", "output", "text", "body", "value"}
)
PRESERVING_METHODS = frozenset(
    [
        "strip",
        "lstrip",
        "rstrip",
        "lower",
        "upper",
        "casefold",
        "title",
        "capitalize",
        "swapcase",
        "replace",
        "split",
        "rsplit",
        "splitlines",
        "expandtabs",
        "encode",
        "decode",
        "copy",
        "values",
        "items",
        "center",
        "ljust",
        "rjust",
        "zfill",
        "removeprefix",
        "removesuffix",
        "translate",
        "partition",
        "rpartition",
    ]
)
SCALAR_METHODS = frozenset(
    [
        "count",
        "find",
        "rfind",
        "index",
        "rindex",
        "startswith",
        "endswith",
        "isdigit",
        "isalpha",
        "isalnum",
        "isspace",
        "islower",
        "isupper",
        "isnumeric",
        "isdecimal",
        "istitle",
        "isidentifier",
    ]
)
MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})
PRESERVING_BUILTINS = frozenset(
    {"sorted", "reversed", "list", "tuple", "set", "frozenset", "dict", "iter", "enumerate"}
)
SCALAR_BUILTINS = frozenset(
    {"len", "bool", "int", "float", "isinstance", "abs", "round", "hash", "ord", "callable"}
)
ENCODING_BUILTINS = frozenset({"str", "repr", "ascii", "format"})
AGGREGATING_BUILTINS = frozenset({"sum", "min", "max", "any", "all"})
BOUNDING_KEYWORDS = ("max_tokens", "limit", "max_count", "max_results", "head", "top", "n")
