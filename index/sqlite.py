"""How Carta opens its SQLite files (registry, graph, API keys, jobs, audit log).

Every file is opened the same way: one connection shared by the threads of a process
(callers serialise access with their own lock), autocommit with explicit `BEGIN` where
several statements must land together, and WAL so readers in other processes (the CLI
next to a running API) never block on a writer.

Erasure: every connection sets `PRAGMA secure_delete=ON`, so a DELETE overwrites the
freed cells and pages with zeros instead of leaving them in the file; `checkpoint` then
copies the WAL into the main file and truncates the WAL, the one place where the old
page images (with the deleted rows) would otherwise stay until SQLite recycles it.

Schemas change through `migrate`: an ordered list of steps, the file's `PRAGMA
user_version` saying how many have run. Step 1 of each file is its original
`CREATE TABLE IF NOT EXISTS` script (plus the column additions files from before
versioning may lack), so files written before this module existed (user_version 0) are
brought up to date by the same code that creates new ones. Append steps; never edit one
that has shipped.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]
# a step: an SQL script, or a function for what a script cannot say ("add the column if missing")
Migration = str | Callable[[sqlite3.Connection], None]


def connect(
    path: Path, *, synchronous: Synchronous | None = None, named_rows: bool = True
) -> sqlite3.Connection:
    """Open (creating its folder) the SQLite file at `path` in WAL mode.

    Args:
        path: the database file.
        synchronous: `PRAGMA synchronous`, when the file needs other than SQLite's default
            (FULL: jobs must survive a power cut; NORMAL: the graph can be rebuilt).
        named_rows: rows as `sqlite3.Row` (by name or index); False gives plain tuples.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    if named_rows:
        conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    # on by default in Debian's build, not in every build: a deleted row must not stay in the file
    conn.execute("PRAGMA secure_delete=ON")
    if synchronous is not None:
        conn.execute(f"PRAGMA synchronous={synchronous}")
    return conn


def checkpoint(conn: sqlite3.Connection, *, attempts: int = 50, wait_s: float = 0.05) -> bool:
    """`PRAGMA wal_checkpoint(TRUNCATE)`: every WAL frame into the main file, then the WAL
    cut to zero bytes. A reader holding an older snapshot (another process's open read)
    makes SQLite answer busy and leave the WAL; retried `attempts` times, `wait_s` apart.
    True when the WAL was emptied. Any connection to the file can do it."""
    for attempt in range(attempts):
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy == 0:
            return True
        if attempt + 1 < attempts:
            time.sleep(wait_s)
    return False


def checkpoint_file(path: Path, *, attempts: int = 50, wait_s: float = 0.05) -> bool:
    """`checkpoint` through a connection of its own, for a file another object holds open
    (the job table, the audit log); True when nothing was left to do or the WAL was emptied."""
    if not path.exists():
        return True
    # no busy timeout: `checkpoint` retries on its own; sqlite3's default 5 s wait on each
    # attempt would make 50 attempts past a long reader take 250 s instead of 2.5 s
    conn = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        return checkpoint(conn, attempts=attempts, wait_s=wait_s)
    finally:
        conn.close()


def schema_version(conn: sqlite3.Connection) -> int:
    """How many migration steps the file has run (`PRAGMA user_version`)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, steps: Sequence[Migration]) -> int:
    """Run the steps the file has not run yet, in order, recording each; returns the
    version reached. A file at a later version than `steps` knows is left as it is.
    Steps should be idempotent (IF NOT EXISTS, `add_column`): two processes opening a new
    file at once may both run a step before either records it."""
    version = schema_version(conn)
    for number, step in enumerate(steps[version:], start=version + 1):
        if isinstance(step, str):
            conn.executescript(step)
        else:
            step(conn)
        conn.execute(f"PRAGMA user_version={number}")
        version = number
    return version


def add_column(conn: sqlite3.Connection, table: str, column: str, declaration: str) -> None:
    """`ALTER TABLE table ADD COLUMN column declaration`, unless the table has it already."""
    if column not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


class SqliteFile:
    """One SQLite file a store keeps open: connected as above, migrated, and one lock for
    the connection its threads share (the registry, API keys, jobs and the audit log)."""

    def __init__(
        self, path: Path, migrations: Sequence[Migration], *, synchronous: Synchronous | None = None
    ) -> None:
        self._conn = connect(path, synchronous=synchronous)
        migrate(self._conn, migrations)
        self._lock = threading.Lock()

    def _query(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    def close(self) -> None:
        self._conn.close()


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """`BEGIN` ... `COMMIT`, or `ROLLBACK` when the block (or the commit) raises."""
    conn.execute("BEGIN")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
