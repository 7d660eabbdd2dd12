"""The boundary between snippet results and the model: rendering, result policies, structural
previews, error compaction, and ``ctx_read``."""

from runtime.boundary._boundary import HEADER_BYTES, Boundary, Stored
from runtime.boundary._code import language_of, name_from
from runtime.boundary._config import (
    MAX_BUDGET,
    RESULT_FORMATS,
    RESULT_POLICIES,
    BoundaryConfig,
    ResultFormat,
    ResultPolicy,
)
from runtime.boundary._format import render, to_json
from runtime.boundary._patterns import MAX_EXPANSION, PatternTooLarge, check_pattern, expansion
from runtime.boundary._preview import Preview, preview
from runtime.boundary._query import MAX_CONTEXT_LINES, MAX_MATCHES_CAP
from runtime.boundary._read import read
from runtime.boundary._readable import (
    BytesReadable,
    Line,
    PathValue,
    Readable,
    ReadResult,
    Sample,
    StoredReadable,
    Window,
)
from runtime.boundary._redact import redact
from runtime.boundary._summarize import MODES, Summary, SummaryMode, looks_like_log, summarize
from runtime.boundary._tokens import EXACT_LIMIT, TokenCounter
from store import estimate_tokens

__all__ = [
    "EXACT_LIMIT",
    "HEADER_BYTES",
    "MAX_BUDGET",
    "MAX_CONTEXT_LINES",
    "MAX_EXPANSION",
    "MAX_MATCHES_CAP",
    "MODES",
    "RESULT_FORMATS",
    "RESULT_POLICIES",
    "Boundary",
    "BoundaryConfig",
    "BytesReadable",
    "Line",
    "PathValue",
    "PatternTooLarge",
    "Preview",
    "ReadResult",
    "Readable",
    "ResultFormat",
    "ResultPolicy",
    "Sample",
    "Stored",
    "StoredReadable",
    "Summary",
    "SummaryMode",
    "TokenCounter",
    "Window",
    "check_pattern",
    "estimate_tokens",
    "expansion",
    "language_of",
    "looks_like_log",
    "name_from",
    "preview",
    "read",
    "redact",
    "render",
    "summarize",
    "to_json",
]
