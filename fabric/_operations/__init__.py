"""The table of context operations and the surfaces made from it (see ``_table``)."""

from fabric._operations import (  # noqa: F401  (they fill the table)
    _context,
    _facts,
    _memory,
    _search,
    _state,
    _status,
)
from fabric._operations._context import SNIPPET_SHARE
from fabric._operations._status import status_text
from fabric._operations._surfaces import Calls, register_operations
from fabric._operations._table import (
    OPERATIONS,
    Args,
    Cli,
    Operation,
    Reply,
    Surface,
    offered,
    operation,
    signature,
)

__all__ = [
    "OPERATIONS",
    "SNIPPET_SHARE",
    "Args",
    "Calls",
    "Cli",
    "Operation",
    "Reply",
    "Surface",
    "offered",
    "operation",
    "register_operations",
    "signature",
    "status_text",
]
