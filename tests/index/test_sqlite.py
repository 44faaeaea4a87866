"""The SQLite helper: WAL and pragmas, rows, the user_version migration runner, transactions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from index.registry import Document, Registry
from index.sqlite import (
    add_column,
    checkpoint,
    checkpoint_file,
    connect,
    migrate,
    schema_version,
    transaction,
)


def test_connect_creates_the_folder_in_wal_mode_with_named_rows(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a" / "b.sqlite3")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    row = conn.execute("SELECT 1 AS one").fetchone()
    assert row["one"] == 1 and tuple(row) == (1,)
    assert conn.isolation_level is None  # autocommit: BEGIN only where asked


def test_connect_sets_synchronous_and_plain_rows_when_asked(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.sqlite3", synchronous="NORMAL", named_rows=False)
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("SELECT 1, 2").fetchone() == (1, 2)
    full = connect(tmp_path / "y.sqlite3", synchronous="FULL")
    assert full.execute("PRAGMA synchronous").fetchone()[0] == 2


def test_migrate_runs_each_step_once_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    calls: list[int] = []

    def second(conn: sqlite3.Connection) -> None:
        calls.append(2)
        add_column(conn, "t", "b", "TEXT NOT NULL DEFAULT 'x'")

    steps = ["CREATE TABLE IF NOT EXISTS t (a INTEGER)", second]
    conn = connect(path)
    assert schema_version(conn) == 0
    assert migrate(conn, steps[:1]) == 1
    conn.execute("INSERT INTO t (a) VALUES (1)")
    assert migrate(conn, steps) == 2 and calls == [2]
    conn.close()
    again = connect(path)
    assert migrate(again, steps) == 2 and calls == [2]  # nothing left to run
    assert [tuple(r) for r in again.execute("SELECT a, b FROM t")] == [(1, "x")]
    assert migrate(again, steps[:1]) == 2  # a newer file is left as it is


def test_add_column_is_a_no_op_when_the_column_exists(tmp_path: Path) -> None:
    conn = connect(tmp_path / "c.sqlite3")
    conn.execute("CREATE TABLE t (a INTEGER, b TEXT)")
    add_column(conn, "t", "b", "TEXT")
    add_column(conn, "t", "c", "REAL")
    assert [r[1] for r in conn.execute("PRAGMA table_info(t)")] == ["a", "b", "c"]


def test_transaction_commits_or_rolls_back(tmp_path: Path) -> None:
    conn = connect(tmp_path / "t.sqlite3")
    conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY)")
    with transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(sqlite3.IntegrityError), transaction(conn):
        conn.execute("INSERT INTO t VALUES (2)")
        conn.execute("INSERT INTO t VALUES (1)")
    assert not conn.in_transaction
    assert [r[0] for r in conn.execute("SELECT a FROM t")] == [1]


def test_a_registry_from_before_versioning_is_migrated(tmp_path: Path) -> None:
    """Registries written before footprints, ACL groups and table versions (user_version 0)
    gain the columns and keep their rows; an old row counts as read by table reading 2."""
    path = tmp_path / "registry.sqlite3"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE documents (tenant TEXT NOT NULL, id TEXT NOT NULL, title TEXT NOT NULL, "
        "filename TEXT NOT NULL, mime TEXT NOT NULL, kind TEXT NOT NULL, size_bytes INTEGER NOT NULL, "
        "pages INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL, error TEXT, profile TEXT NOT NULL, "
        "metadata TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL, updated_at TEXT NOT NULL, "
        "PRIMARY KEY (tenant, id))"
    )
    old.execute(
        "INSERT INTO documents VALUES ('t', 'd1', 'Old', 'old.pdf', 'application/pdf', 'pdf', 10, 1, "
        "'ready', NULL, 'p', '{}', '2024-01-01T00:00:00+00:00', '2024-01-01T00:00:00+00:00')"
    )
    old.commit()
    old.close()
    reg = Registry(path)
    doc = reg.get("t", "d1")
    assert doc is not None and doc.title == "Old" and doc.acl == [] and doc.footprint is None
    assert doc.table_version == 2
    reg.put(Document("t", "d2", "New", "n.pdf", "application/pdf", "pdf", 1, "p", acl=["g"]))
    assert reg.get("t", "d2").acl == ["g"]  # type: ignore[union-attr]
    reg.close()
    assert schema_version(sqlite3.connect(path)) == 2


def _marker_db(path: Path) -> sqlite3.Connection:
    conn = connect(path)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    rows = [(i, ("ZQXSQLMARK " if i == 3 else "filler ") * 50) for i in range(100)]
    conn.executemany("INSERT INTO t VALUES (?, ?)", rows)
    return conn


def _marks(path: Path) -> dict[str, int]:
    return {
        p.name: p.read_bytes().count(b"ZQXSQLMARK")
        for p in (path, path.with_name(path.name + "-wal"))
        if p.exists()
    }


def test_a_deleted_row_leaves_neither_the_file_nor_its_wal_after_a_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    conn = _marker_db(path)
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")  # the row is in the main file too
    conn.execute("DELETE FROM t WHERE id=3")
    assert sum(_marks(path).values()) > 0  # the WAL still holds the old page
    assert checkpoint(conn)
    assert _marks(path) == {"a.sqlite3": 0, "a.sqlite3-wal": 0}
    assert path.with_name("a.sqlite3-wal").stat().st_size == 0
    assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 99


def test_checkpoint_waits_for_a_reader_and_reports_when_it_cannot(tmp_path: Path) -> None:
    path = tmp_path / "b.sqlite3"
    conn = _marker_db(path)
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM t").fetchone()  # holds a snapshot with the row
    conn.execute("DELETE FROM t WHERE id=3")
    assert not checkpoint_file(path, attempts=2, wait_s=0.01)
    reader.execute("COMMIT")
    assert checkpoint_file(path)
    assert sum(_marks(path).values()) == 0
    assert checkpoint_file(tmp_path / "absent.sqlite3")  # nothing to do
