"""The snippet contract: what a snippet may name, declared once.

The sandbox builds its facades and builtins from these tables, the analyzer takes its module
and namespace knowledge from them, and the MCP description and README list them; tests fail
when any of those drift from here. Standard library only, so the worker imports it for free.
"""

from __future__ import annotations

import builtins
import math

_EXCEPTIONS = tuple(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)

NAMESPACES: tuple[str, ...] = ("tools", "mcp", "ctx", "state", "memory", "agents", "extensions")
"""Provider namespaces, globals in every snippet."""

MODULES: dict[str, tuple[str, ...]] = {
    "asyncio": (
        "gather",
        "sleep",
        "wait_for",
        "timeout",
        "as_completed",
        "TimeoutError",
        "CancelledError",
    ),
    "base64": (
        "b64encode",
        "b64decode",
        "urlsafe_b64encode",
        "urlsafe_b64decode",
        "b32encode",
        "b32decode",
        "b16encode",
        "b16decode",
        "standard_b64encode",
        "standard_b64decode",
    ),
    "bisect": ("bisect", "bisect_left", "bisect_right", "insort", "insort_left", "insort_right"),
    "collections": ("Counter", "OrderedDict", "defaultdict", "deque", "namedtuple", "ChainMap"),
    "datetime": ("date", "time", "datetime", "timedelta", "timezone", "MINYEAR", "MAXYEAR"),
    "decimal": (
        "Decimal",
        "getcontext",
        "localcontext",
        "Context",
        "InvalidOperation",
        "DivisionByZero",
        "ROUND_HALF_UP",
        "ROUND_HALF_EVEN",
        "ROUND_DOWN",
        "ROUND_UP",
        "ROUND_FLOOR",
        "ROUND_CEILING",
        "ROUND_HALF_DOWN",
        "ROUND_05UP",
    ),
    "difflib": (
        "SequenceMatcher",
        "Differ",
        "unified_diff",
        "context_diff",
        "ndiff",
        "get_close_matches",
    ),
    "fractions": ("Fraction",),
    "functools": ("reduce", "partial", "lru_cache", "cache", "cmp_to_key", "total_ordering"),
    "hashlib": (
        "md5",
        "sha1",
        "sha224",
        "sha256",
        "sha384",
        "sha512",
        "blake2b",
        "blake2s",
        "sha3_256",
        "sha3_512",
        "new",
        "algorithms_available",
    ),
    "heapq": (
        "heappush",
        "heappop",
        "heapify",
        "heappushpop",
        "heapreplace",
        "nlargest",
        "nsmallest",
        "merge",
    ),
    "itertools": (
        "accumulate",
        "chain",
        "combinations",
        "combinations_with_replacement",
        "compress",
        "count",
        "cycle",
        "dropwhile",
        "filterfalse",
        "groupby",
        "islice",
        "pairwise",
        "permutations",
        "product",
        "repeat",
        "starmap",
        "takewhile",
        "tee",
        "zip_longest",
    ),
    "json": ("loads", "dumps", "JSONDecodeError"),
    "math": tuple(name for name in dir(math) if not name.startswith("_")),
    "random": (
        "random",
        "randint",
        "randrange",
        "choice",
        "choices",
        "shuffle",
        "sample",
        "uniform",
        "gauss",
        "seed",
        "Random",
        "betavariate",
        "expovariate",
        "triangular",
        "normalvariate",
    ),
    "re": (
        "compile",
        "search",
        "match",
        "fullmatch",
        "findall",
        "finditer",
        "sub",
        "subn",
        "split",
        "escape",
        "error",
        "Pattern",
        "Match",
        "IGNORECASE",
        "I",
        "MULTILINE",
        "M",
        "DOTALL",
        "S",
        "VERBOSE",
        "X",
        "ASCII",
        "A",
    ),
    "statistics": (
        "mean",
        "fmean",
        "geometric_mean",
        "harmonic_mean",
        "median",
        "median_low",
        "median_high",
        "median_grouped",
        "mode",
        "multimode",
        "quantiles",
        "pstdev",
        "pvariance",
        "stdev",
        "variance",
        "covariance",
        "correlation",
        "linear_regression",
        "NormalDist",
        "StatisticsError",
    ),
    "textwrap": ("wrap", "fill", "shorten", "dedent", "indent", "TextWrapper"),
    "uuid": (
        "uuid3",
        "uuid4",
        "uuid5",
        "UUID",
        "NAMESPACE_DNS",
        "NAMESPACE_URL",
        "NAMESPACE_OID",
        "NAMESPACE_X500",
    ),
}
"""The modules a snippet may import, each with the only names its facade exposes. ``asyncio``
is rebuilt from small wrappers, so no task, future or loop ever reaches a snippet."""

NEVER: dict[str, str] = {
    "string": "its Formatter resolves attribute paths unguarded",
    "operator": "attrgetter and methodcaller reach any attribute",
    "typing": "get_type_hints evaluates strings",
    "copy": "copying calls each object's reduce hook, which hands back constructors and state",
    "dataclasses": "it builds classes from strings with exec",
    "inspect": "it hands out frames and code objects",
    "importlib": "it imports anything",
    "pickle": "loading runs arbitrary constructors",
    "os": "the operating system is reached through providers only",
    "sys": "it holds every loaded module",
    "time": "not vetted yet; use datetime",
}
"""Modules that are refused on purpose, with the reason an ImportError gives."""

BUILTINS: tuple[str, ...] = (
    # functions
    "abs", "all", "any", "ascii", "bin", "callable", "chr", "delattr", "divmod", "enumerate",
    "filter", "format", "getattr", "hasattr", "hash", "hex", "id", "isinstance", "issubclass",
    "iter", "len", "map", "max", "min", "next", "oct", "ord", "pow", "print", "repr",
    "reversed", "round", "setattr", "sorted", "sum", "vars", "zip",
    # types
    "bool", "bytearray", "bytes", "classmethod", "complex", "dict", "float", "frozenset",
    "int", "list", "object", "property", "range", "set", "slice", "staticmethod", "str",
    "super", "tuple", "type",
    # constants
    "True", "False", "None", "Ellipsis", "NotImplemented",
    # exceptions and warnings: every one CPython has
    *sorted(_EXCEPTIONS),
    # Fabric's own
    "ToolError", "PolicyError",
)  # fmt: skip
"""Every builtin name a snippet can use."""

REFUSED_BUILTINS: tuple[str, ...] = (
    "open", "eval", "exec", "compile", "globals", "locals", "dir", "__import__", "breakpoint",
    "input", "memoryview", "help", "exit", "quit",
)  # fmt: skip
"""Builtins that are not there at all (``__import__`` is replaced by the facade import)."""
