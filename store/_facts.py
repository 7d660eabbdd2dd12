"""Remembered project facts: named upserts, ranked and bounded recall, deletion.

Facts live apart from the store, under ``<workspace>/.fabric/facts/``, never expire, and are
searched with SQLite FTS5 (bm25 ranking, prefix matching on each query word).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from store._blobs import ensure_dir, ensure_private_dir
from store._errors import BudgetExceeded, InvalidRequest, NotFound, StoreUnavailable
from store._models import Fact, Recall
from store._names import check_name
from store._schema import to_datetime
from store._sqlite import Database
from store._store import estimate_tokens

FACTS_MAX_BYTES = 5 * 1024 * 1024
FACT_SHARE = 8
"""One fact holds at most this fraction of the facts' budget."""
_NAME_LIMIT = 128
_SCHEMA = """
CREATE TABLE facts (
    name TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    bytes INTEGER NOT NULL
);
CREATE VIRTUAL TABLE facts_fts USING fts5 (
    name, text, content = 'facts', content_rowid = 'rowid', tokenize = 'unicode61'
);
CREATE TRIGGER facts_added AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts (rowid, name, text) VALUES (new.rowid, new.name, new.text);
END;
CREATE TRIGGER facts_removed AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts (facts_fts, rowid, name, text)
        VALUES ('delete', old.rowid, old.name, old.text);
END;
CREATE TRIGGER facts_changed AFTER UPDATE ON facts BEGIN
    INSERT INTO facts_fts (facts_fts, rowid, name, text)
        VALUES ('delete', old.rowid, old.name, old.text);
    INSERT INTO facts_fts (rowid, name, text) VALUES (new.rowid, new.name, new.text);
END;
"""
_COLUMNS = "name, text, created, updated"
_Facts = list[Fact]
_Rows = list[tuple[str, str, int, int]]


class Facts:
    """Named facts about a project, kept across sessions within ``max_bytes`` (5 MB)."""

    def __init__(
        self,
        workspace: str | Path,
        *,
        max_bytes: int = FACTS_MAX_BYTES,
        count_tokens: Callable[[str], int] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(max_bytes, int) or not 0 < max_bytes <= FACTS_MAX_BYTES:
            raise InvalidRequest(f"max_bytes must be between 1 and {FACTS_MAX_BYTES} (5 MB)")
        workspace = Path(workspace)
        if not workspace.is_dir():
            raise StoreUnavailable(
                f"the workspace {workspace} is not a folder; create it or pass another one"
            )
        root = workspace / ".fabric" / "facts"
        ensure_private_dir(root.parent)
        ensure_dir(root)
        self.max_bytes = max_bytes
        self._count = count_tokens or (lambda text: estimate_tokens(len(text.encode())))
        self._clock = clock
        self._db = Database(root / "facts.db", (_SCHEMA,))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Facts:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def remember(self, name: str, text: str) -> Fact:
        """Store ``text`` under ``name``, replacing what the name held before. Over the
        budget, the least recently updated other facts are forgotten to make room (the
        reference's order), and the fact says which (``evicted``); a fact larger than an
        eighth of the budget is refused and nothing is forgotten."""
        check_name(name, what="fact name", limit=_NAME_LIMIT)
        if not isinstance(text, str) or not text.strip():
            raise InvalidRequest(f"the text of fact {name!r} must be non-empty text")
        size = len(text.encode("utf-8", errors="surrogatepass"))
        if size > self.max_bytes // FACT_SHARE:
            raise BudgetExceeded(
                f"fact {name!r} ({size} bytes) is too large: one fact holds at most "
                f"{self.max_bytes // FACT_SHARE} bytes (an eighth of the facts' budget, so that "
                "remembering one never forgets all the others); shorten it, or store it with "
                "ctx.offload and remember its handle",
                size=size,
                limit=self.max_bytes // FACT_SHARE,
            )
        now = int(self._clock() * 1000)
        with self._db.write() as conn:
            (used,) = conn.execute(
                "SELECT coalesce(sum(bytes), 0) FROM facts WHERE name != ?", (name,)
            ).fetchone()
            evicted: list[str] = []
            if used + size > self.max_bytes:
                oldest = conn.execute(
                    "SELECT name, bytes FROM facts WHERE name != ? ORDER BY updated, name", (name,)
                )
                for old, old_bytes in oldest.fetchall():
                    if used + size <= self.max_bytes:
                        break
                    evicted.append(old)
                    used -= old_bytes
                conn.executemany("DELETE FROM facts WHERE name = ?", [(n,) for n in evicted])
            conn.execute(
                "INSERT INTO facts (name, text, created, updated, bytes) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET text = excluded.text, "
                "updated = excluded.updated, bytes = excluded.bytes",
                (name, text, now, now, size),
            )
            row = conn.execute(f"SELECT {_COLUMNS} FROM facts WHERE name = ?", (name,)).fetchone()
        return self._fact(row).model_copy(update={"evicted": evicted})

    def get(self, name: str) -> Fact:
        check_name(name, what="fact name", limit=_NAME_LIMIT)
        with self._db.read() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM facts WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise NotFound(
                f"no fact named {name!r}; recall by query to find it, or remember it first",
                ref=name,
                reason="unknown",
            )
        return self._fact(row)

    def forget(self, name: str) -> bool:
        """Delete a fact; False when there was none by that name."""
        check_name(name, what="fact name", limit=_NAME_LIMIT)
        with self._db.write() as conn:
            return conn.execute("DELETE FROM facts WHERE name = ?", (name,)).rowcount > 0

    def list(self) -> list[Fact]:
        """Every fact, most recently updated first."""
        with self._db.read() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM facts ORDER BY updated DESC, name")
            return [self._fact(row) for row in rows.fetchall()]

    def total_bytes(self) -> int:
        with self._db.read() as conn:
            return int(conn.execute("SELECT coalesce(sum(bytes), 0) FROM facts").fetchone()[0])

    def recall(self, query: str = "", *, max_tokens: int = 1000, limit: int = 20) -> Recall:
        """Facts matching ``query`` best first (all facts, newest first, for an empty query),
        as many as fit in ``max_tokens``; a fact named exactly ``query`` comes first."""
        if not isinstance(query, str) or len(query) > 1000:
            raise InvalidRequest("a recall query must be text of at most 1000 characters")
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise InvalidRequest(
                f"max_tokens must be a whole number of at least 1, not {max_tokens!r}"
            )
        if not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise InvalidRequest(f"limit must be a whole number from 1 to 1000, not {limit!r}")
        with self._db.read() as conn:
            rows = self._matching(conn, query, limit)
        facts: _Facts = []
        spent = 0
        truncated = False
        for row in rows:
            fact = self._fact(row)
            if spent + fact.tokens > max_tokens:
                truncated = True
                if not facts:  # the best match alone is too large: cut it to the budget
                    text = _fit(fact.text, max_tokens, self._count)
                    facts.append(
                        fact.model_copy(update={"text": text, "tokens": self._count(text)})
                    )
                    spent = facts[0].tokens
                break
            facts.append(fact)
            spent += fact.tokens
        return Recall(
            query=query, facts=facts, matches=len(rows), tokens=spent, truncated=truncated
        )

    def _matching(self, conn: sqlite3.Connection, query: str, limit: int) -> _Rows:
        if not query.strip():
            sql = f"SELECT {_COLUMNS} FROM facts ORDER BY updated DESC, name LIMIT ?"
            return conn.execute(sql, (limit,)).fetchall()
        words = re.findall(r"\w+", query)
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"*' for w in words)
        rows: _Rows = conn.execute(
            f"SELECT {', '.join('f.' + c.strip() for c in _COLUMNS.split(','))} FROM facts_fts "
            "JOIN facts AS f ON f.rowid = facts_fts.rowid WHERE facts_fts MATCH ? "
            "ORDER BY (f.name = ?) DESC, bm25(facts_fts, 4.0, 1.0), f.updated DESC LIMIT ?",
            (match, query.strip(), limit),
        ).fetchall()
        return rows

    def _fact(self, row: tuple[str, str, int, int]) -> Fact:
        name, text, created, updated = row
        return Fact(
            name=name,
            text=text,
            created=to_datetime(created),
            updated=to_datetime(updated),
            tokens=self._count(text),
        )


def _fit(text: str, budget: int, count: Callable[[str], int]) -> str:
    """The longest prefix of ``text`` (plus an ellipsis) within ``budget`` tokens."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(text[:mid] + "...") <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "..."
