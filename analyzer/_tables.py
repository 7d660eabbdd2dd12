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
SPLITTING_METHODS = frozenset(
    ["split", "rsplit", "splitlines", "partition", "rpartition", "items", "values", "copy"]
)
"""Preserving methods whose result is no longer one string (its items are the lines)."""
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
MUTATORS = frozenset(
    {"append", "extend", "insert", "add", "update", "setdefault", "put", "put_nowait"}
)
PRESERVING_BUILTINS = frozenset(
    {"sorted", "reversed", "list", "tuple", "set", "frozenset", "dict", "iter", "enumerate"}
)
SCALAR_BUILTINS = frozenset(
    {"len", "bool", "int", "float", "isinstance", "abs", "round", "hash", "ord", "callable"}
)
ENCODING_BUILTINS = frozenset({"str", "repr", "ascii", "format"})
AGGREGATING_BUILTINS = frozenset({"sum", "min", "max", "any", "all"})
SHAPING_BUILTINS = frozenset({"map", "filter", "zip", "next", "range", "print"})
"""Builtins with a rule of their own in the analyzer."""
BOUNDING_KEYWORDS = ("max_tokens", "limit", "max_count", "max_results", "head", "top", "n")

MODULE_FUNCTIONS: dict[str, str] = {
    "json.dumps": "encode",
    "base64.b64encode": "encode",
    "base64.b64decode": "encode",
    "json.loads": "preserve",
    "textwrap.dedent": "preserve",
    "textwrap.indent": "preserve",
    "re.sub": "preserve",
    "re.split": "preserve-second",
    "re.findall": "match",
    "re.finditer": "match",
    "re.search": "match",
    "re.match": "match",
    "re.fullmatch": "match",
    "itertools.islice": "islice",
    "heapq.nlargest": "top-n",
    "heapq.nsmallest": "top-n",
    "collections.Counter": "counter",
    "functools.reduce": "reduce",
    "textwrap.shorten": "shorten",
    "asyncio.gather": "gather",
    "asyncio.wait_for": "first",
    "asyncio.create_task": "first",
    "asyncio.sleep": "clean",
    "itertools.chain": "chain",
    "itertools.chain.from_iterable": "chain",
}
"""Module functions by what they do to data (``encode``: ENCODED text of the first argument;
``preserve``: the class of the arguments; ``match``: a selection of the text searched; ...).
Every name is one the contract lets a snippet import (a test holds this); the rest of an
allowed module is not modelled, so a source value through it is UNKNOWN."""
AGGREGATING_MODULES = frozenset({"statistics", "math"})
"""Modules whose every function reduces its arguments to a bounded scalar."""
