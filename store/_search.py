"""Full-text search of the index (``Store.search``): the query as FTS5, BM25 ranking, and where
in its payload each hit is.

- **The query** is words and "quoted phrases", each quoted before it reaches FTS5, so nothing
  a user types is read as FTS5 syntax: ``foo-bar "x`` is the phrase *foo bar* and the word
  *x*, ``AND(`` the word *and*. A word ending in ``*`` matches as a prefix. Punctuation only
  separates words, as in the index; a query with no word in it is refused, saying so.
  ``match="any"`` joins them with OR; ``match="fts5"`` passes the query to FTS5 as it stands
  (AND, OR, NOT, NEAR(), prefix*), and one FTS5 refuses is an InvalidRequest naming ``query``.
- **Ranking**: BM25 (``rank``) of each payload's best passage, then the most recently used
  entry. Entries sharing a blob are each a hit; only live entries are joined, so an entry
  that is gone (or past its expiry) is never returned.
- **Where**: the first match of the best passage, located by ``highlight()`` between two
  control characters the indexed text never holds (``_fulltext``); its byte offset and line
  count from the passage's own.
"""

from __future__ import annotations

import re
import sqlite3
from typing import NamedTuple

from store._errors import InvalidRequest
from store._models import SEARCH_MATCHES, Entry, SearchHit, SearchMatch
from store._schema import COLUMNS, PASSAGES, to_entry

MAX_HITS = 100
"""The most hits one search returns."""
LINE_BYTES = 200
"""About how much of a hit's line is shown, around the match."""
_MATCH_SHOWN = 120
_OPEN, _CLOSE = "\x01", "\x02"
_TERMS = re.compile(r'"([^"]*)(?:"(\*?)|$)|([^\s"]+)')
_WORDY = re.compile(r"[^\W_]|[\ue000-\uf8ff]")
_UNSENDABLE = re.compile("[\x00\ud800-\udfff]")
_SQLITE_ERROR = 1
"""SQLite's generic error code, which FTS5 gives a query it cannot parse (a full disk, a lock
or a damaged file have codes of their own)."""
_BEST = f"""
WITH best AS (
    SELECT rowid / {PASSAGES} AS doc, rowid AS passage, min(rank) AS score
    FROM search_text WHERE search_text MATCH ?1 GROUP BY doc
)
SELECT {", ".join("e." + c for c in COLUMNS.split(", "))}, best.passage, best.score, d.indexed
FROM best JOIN search_docs AS d ON d.id = best.doc JOIN entries AS e ON e.sha256 = d.sha256
WHERE e.expires > ?2 AND e.content_type != 'bytes'
ORDER BY best.score, e.accessed DESC, e.handle
LIMIT ?3
"""
_COUNT = f"""
SELECT count(*) FROM (
    SELECT DISTINCT rowid / {PASSAGES} AS doc FROM search_text WHERE search_text MATCH ?1
) AS matched
JOIN search_docs AS d ON d.id = matched.doc JOIN entries AS e ON e.sha256 = d.sha256
WHERE e.expires > ?2 AND e.content_type != 'bytes'
"""
"""How many live entries match: no ranking, so counting is cheap (a window count over the
ranked rows would cost as much as ranking them)."""
_PLACES = (
    "SELECT p.id, highlight(search_text, 0, char(1), char(2)), p.start, p.line, p.line_start "
    "FROM search_text JOIN search_passages AS p ON p.id = search_text.rowid "
    "WHERE search_text MATCH ? AND search_text.rowid IN ({})"
)


def check(query: object, limit: object, match: object) -> None:
    """Refuse arguments ``search`` cannot take, naming the argument, before any work."""
    if not isinstance(query, str) or not query.strip() or len(query) > 1000:
        raise InvalidRequest("query must be non-empty text of at most 1000 characters")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_HITS:
        raise InvalidRequest(f"limit must be a whole number from 1 to {MAX_HITS}, not {limit!r}")
    if match not in SEARCH_MATCHES:
        raise InvalidRequest(f"match must be one of {', '.join(SEARCH_MATCHES)}, not {match!r}")
    expression(query, match)  # a query with no word in it


def expression(query: str, match: SearchMatch) -> str:
    """The FTS5 query for what the user typed (see the module's docstring). NUL would end
    FTS5's string and a lone surrogate cannot be sent to SQLite: both separate words anyway."""
    cleaned = _UNSENDABLE.sub(" ", query)
    if match == "fts5":
        return cleaned
    terms = []
    for found in _TERMS.finditer(cleaned):
        phrase, star, word = found.groups()
        text = phrase if phrase is not None else word.rstrip("*")
        if _WORDY.search(text):
            prefix = star if phrase is not None else word[len(text) :]
            terms.append('"' + text.replace('"', '""') + '"' + ("*" if prefix else ""))
    if not terms:
        raise InvalidRequest(
            f"query {query[:80]!r} has no word to search for: the index holds words and "
            "numbers, and punctuation only separates them. Search for a word near it, or "
            'find the exact text in one payload with ctx_read(handle, query="...")'
        )
    return (" OR " if match == "any" else " ").join(terms)


def search(
    conn: sqlite3.Connection, query: str, match: SearchMatch, limit: int, now: int
) -> tuple[list[tuple[Entry, SearchHit]], int]:
    """The best ``limit`` live entries matching ``query``, each with its hit, and how many
    live entries match in all."""
    fts = expression(query, match)
    try:
        rows = conn.execute(_BEST, (fts, now, limit)).fetchall()
        total = conn.execute(_COUNT, (fts, now)).fetchone()[0] if len(rows) == limit else len(rows)
        passages = sorted({row[-3] for row in rows})
        marked = conn.execute(_PLACES.format(",".join("?" * len(passages))), (fts, *passages))
        places = {passage: rest for passage, *rest in marked}
    except sqlite3.OperationalError as exc:
        if match != "fts5" or exc.sqlite_errorcode != _SQLITE_ERROR:
            raise
        raise InvalidRequest(
            f"query {query[:80]!r} is not FTS5 syntax that SQLite accepts ({exc}); with "
            'match="fts5" it is read as FTS5 syntax. Use match="all" to search for the words '
            "as typed"
        ) from None
    found = []
    for row in rows:
        entry = to_entry(row[:-3])
        passage, score, indexed = row[-3:]
        place = _place(*places[passage], size=entry.bytes)
        found.append((entry, _hit(entry, place, -score, indexed)))
    return found, total


class _Place(NamedTuple):
    offset: int
    match: str
    line: int
    line_offset: int
    text: str


def _hit(entry: Entry, place: _Place, score: float, indexed: int) -> SearchHit:
    return SearchHit(
        handle=entry.handle,
        key=entry.key,
        offset=place.offset,
        length=_size(place.match),
        match=place.match,
        line=place.line,
        line_offset=place.line_offset,
        text=place.text,
        score=score,
        bytes=entry.bytes,
        indexed=indexed,
    )


def _place(marked: str, start: int, line: int, line_start: int, *, size: int) -> _Place:
    """Where the first match of a passage (``marked`` by highlight(), of a payload of ``size``
    bytes) is, and its line."""
    at = marked.find(_OPEN)
    if at < 0:  # FTS5 matched the passage without marking a phrase in it: show its start
        at, end = 0, 0
        marked = _OPEN + _CLOSE + marked
    else:
        end = marked.find(_CLOSE, at)
    before, found = marked[:at], _clean(marked[at + 1 : end])
    after = _clean(marked[end + 1 :])
    offset = start + _size(before)
    newline = before.rfind("\n")
    if newline >= 0:
        line_offset = start + _size(before[: newline + 1])
        left, left_cut = before[newline + 1 :], False
    else:
        line_offset, left, left_cut = line_start, before, line_start < start
    stop = after.find("\n")
    if stop < 0:  # the passage ends mid-line: the line goes on, unless the payload ends here
        right, right_cut = after, offset + _size(found) + _size(after) < size
    else:
        right, right_cut = after[:stop].rstrip("\r"), False
    text = _window(left, found, right, left_cut, right_cut)
    return _Place(offset, found, line + before.count("\n"), line_offset, text)


def _window(left: str, found: str, right: str, left_cut: bool, right_cut: bool) -> str:
    """About LINE_BYTES of the line: the match (itself cut when long) and what is around it,
    a third before and the rest after, ``...`` where the line goes on."""
    shown = _head(found, _MATCH_SHOWN)
    if shown != found:
        shown += "..."
    room = max(0, LINE_BYTES - _size(shown))
    keep = min(_size(left), max(room // 3, room - _size(right)))
    before, after = _tail(left, keep), _head(right, room - keep)
    return (
        ("..." if before != left or left_cut else "")
        + before
        + shown
        + after
        + ("..." if after != right or right_cut else "")
    )


def _clean(text: str) -> str:
    return text.replace(_OPEN, "").replace(_CLOSE, "")


def _size(text: str) -> int:
    return len(text.encode())


def _head(text: str, size: int) -> str:
    """The longest start of ``text`` within ``size`` UTF-8 bytes."""
    return text[:size].encode()[:size].decode("utf-8", "ignore") if size > 0 else ""


def _tail(text: str, size: int) -> str:
    """The longest end of ``text`` within ``size`` UTF-8 bytes."""
    return text[-size:].encode()[-size:].decode("utf-8", "ignore") if size > 0 else ""
