"""Opening SQLite databases the same careful way for the index and the facts.

WAL mode so readers never wait for writers, a busy timeout so several processes can write at
once, explicit ``BEGIN IMMEDIATE`` transactions, and every sqlite3 failure turned into a
StoreUnavailable that names the file and the fix.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from store._errors import StoreUnavailable

BUSY_TIMEOUT_MS = 30_000


class Database:
    """One connection, shared by the threads of a process under a lock."""

    def __init__(
        self,
        path: Path,
        migrations: tuple[str, ...],
        *,
        cache_mib: int = 2,
        functions: Mapping[str, Callable[[Any], Any]] | None = None,
    ) -> None:
        """Open ``path``; ``migrations[n]`` upgrades a database of format n to n + 1, so the
        format is ``len(migrations)`` and the first migration creates the tables. SQLite keeps
        up to ``cache_mib`` of its pages in memory (its default is 2 MiB), filled as read;
        ``functions`` are SQL functions of one argument the schema uses."""
        self.path = path
        self.lock = threading.RLock()
        self.closed = False
        _create_private(path)
        try:
            self.conn = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
            )
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None
        try:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute(f"PRAGMA cache_size = -{cache_mib * 1024}")
            for name, function in (functions or {}).items():
                self.conn.create_function(name, 1, function, deterministic=True)
            self._migrate(migrations)
        except sqlite3.Error as exc:
            self.conn.close()
            raise self._unavailable(exc) from None

    def _migrate(self, migrations: tuple[str, ...]) -> None:
        version = len(migrations)
        with self.write():
            found = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if found > version:
                raise StoreUnavailable(
                    f"{self.path} was written by a newer Fabric (format {found}, this one reads "
                    f"{version}); upgrade Fabric, or use another workspace."
                )
            for script in migrations[found:]:
                for statement in _statements(script):
                    self.conn.execute(statement)
            if found < version:
                self.conn.execute(f"PRAGMA user_version = {version}")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, taken at once: concurrent writers queue instead of failing."""
        with self.lock:
            self._check_open()
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._unavailable(exc) from None
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException as exc:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise self._unavailable(exc) from None
                raise

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for several queries."""
        with self.lock:
            self._check_open()
            try:
                self.conn.execute("BEGIN")
                try:
                    yield self.conn
                finally:
                    if self.conn.in_transaction:
                        self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise self._unavailable(exc) from None

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.conn.close()

    def _check_open(self) -> None:
        if self.closed:
            raise StoreUnavailable(f"{self.path} was closed; open the Store (or Facts) again")

    def _unavailable(self, exc: sqlite3.Error) -> StoreUnavailable:
        text = str(exc)
        if "full" in text:
            fix = "the disk is full: free space, then retry"
        elif "locked" in text or "busy" in text:
            fix = "another process held it too long: retry"
        elif "not a database" in text or "malformed" in text:
            fix = "the file is damaged: move it aside to start a fresh one"
        else:
            fix = "check that the folder is writable"
        return StoreUnavailable(f"{self.path}: {text} ({fix}). Nothing already stored was changed.")


def _statements(script: str) -> Iterator[str]:
    """Split a script into statements (``executescript`` would commit the open transaction)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
    if pending.strip():
        yield pending


def _create_private(path: Path) -> None:
    """Create the database file with mode 0600 (SQLite copies it to -wal and -shm)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise StoreUnavailable(
            f"cannot open {path}: {exc.strerror} (a symlink there is refused). "
            "Nothing already stored was changed."
        ) from None
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
