"""The document registry: one SQLite file with documents and their pages.

It is the source of truth for what exists and in which state (queued, processing,
ready, failed); vector points carry the same ids so one filter finds them all.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from index.sqlite import SqliteFile, add_column, transaction

Status = Literal["queued", "processing", "ready", "failed"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    tenant     TEXT NOT NULL,
    id         TEXT NOT NULL,
    title      TEXT NOT NULL,
    filename   TEXT NOT NULL,
    mime       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    pages      INTEGER NOT NULL DEFAULT 0,
    status     TEXT NOT NULL,
    error      TEXT,
    profile    TEXT NOT NULL,
    metadata   TEXT NOT NULL DEFAULT '{}',
    footprint  TEXT,
    acl        TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE TABLE IF NOT EXISTS pages (
    tenant      TEXT NOT NULL,
    doc_id      TEXT NOT NULL,
    page_no     INTEGER NOT NULL,
    width       INTEGER NOT NULL,
    height      INTEGER NOT NULL,
    text_source TEXT NOT NULL,
    chars       INTEGER NOT NULL,
    chunks      INTEGER NOT NULL,
    PRIMARY KEY (tenant, doc_id, page_no)
);
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Document:
    tenant: str
    id: str
    title: str
    filename: str
    mime: str
    kind: str
    size_bytes: int
    profile: str
    pages: int = 0
    status: Status = "queued"
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    footprint: str | None = None  # GeoJSON geometry (lon, lat) of everything the document is about
    acl: list[str] = field(default_factory=list)  # groups allowed to see it; empty = the whole tenant
    # The table reading (ingest.tables.TABLE_VERSION) its pages were read with: a document read
    # by an older one is read again when uploaded again, or by `carta reindex --source`.
    table_version: int = 2
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PageRecord:
    tenant: str
    doc_id: str
    page_no: int
    width: int
    height: int
    text_source: str  # "text" (PDF text layer), "ocr" or "none"
    chars: int
    chunks: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _create(conn: sqlite3.Connection) -> None:
    """Migration 1: the tables, and the columns registries written before the geospatial
    layer (footprint) or ACL groups (acl) lack."""
    conn.executescript(_SCHEMA)
    add_column(conn, "documents", "footprint", "TEXT")
    add_column(conn, "documents", "acl", "TEXT NOT NULL DEFAULT '[]'")


def _table_version(conn: sqlite3.Connection) -> None:
    """Migration 2: the table reading each document was read with. Rows written before the
    column were read by reading 2 at most (the one current then); those read by reading 1
    are found by their table chunks' own version (service/reindex.py)."""
    add_column(conn, "documents", "table_version", "INTEGER NOT NULL DEFAULT 2")


_MIGRATIONS = [_create, _table_version]


class Registry(SqliteFile):
    def __init__(self, path: Path) -> None:
        super().__init__(path, _MIGRATIONS)

    def put(self, doc: Document) -> None:
        doc.updated_at = _now()
        row = doc.to_dict()
        row["metadata"] = json.dumps(doc.metadata, ensure_ascii=False)
        row["acl"] = json.dumps(doc.acl)
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        self._query(f"INSERT OR REPLACE INTO documents ({cols}) VALUES ({marks})", *row.values())

    def get(self, tenant: str, doc_id: str) -> Document | None:
        rows = self._query("SELECT * FROM documents WHERE tenant=? AND id=?", tenant, doc_id)
        return self._doc(rows[0]) if rows else None

    def list(self, tenant: str, status: Status | None = None) -> list[Document]:
        sql = "SELECT * FROM documents WHERE tenant=?"
        args: list[Any] = [tenant]
        if status:
            sql += " AND status=?"
            args.append(status)
        return [self._doc(r) for r in self._query(sql + " ORDER BY created_at, id", *args)]

    def ids_with_status(self, status: Status) -> list[tuple[str, str]]:
        return [
            (r["tenant"], r["id"])
            for r in self._query("SELECT tenant, id FROM documents WHERE status=?", status)
        ]

    def table_versions(self) -> dict[tuple[str, str], int]:
        """The table reading each ready document was read by, in one query (service/reindex.py)."""
        rows = self._query("SELECT tenant, id, table_version FROM documents WHERE status='ready'")
        return {(r["tenant"], r["id"]): int(r["table_version"]) for r in rows}

    def indexed_otherwise(self, profile: str) -> list[tuple[str, str]]:
        """Ready documents indexed under another profile signature than `profile`."""
        rows = self._query(
            "SELECT tenant, id FROM documents WHERE status='ready' AND profile<>? ORDER BY tenant, id",
            profile,
        )
        return [(r["tenant"], r["id"]) for r in rows]

    def set_status(
        self,
        tenant: str,
        doc_id: str,
        status: Status,
        error: str | None = None,
        pages: int | None = None,
        footprint: str | None = None,
    ) -> None:
        self._query(
            "UPDATE documents SET status=?, error=?, pages=COALESCE(?, pages), "
            "footprint=COALESCE(?, footprint), updated_at=? WHERE tenant=? AND id=?",
            status,
            error,
            pages,
            footprint,
            _now(),
            tenant,
            doc_id,
        )

    def _transaction(self, statements: list[tuple[str, list[tuple]]]) -> None:
        """Run (sql, rows) pairs atomically; roll back on any error."""
        with self._lock, transaction(self._conn):
            for sql, rows in statements:
                self._conn.executemany(sql, rows)

    def put_pages(self, pages: list[PageRecord]) -> None:
        rows = [tuple(p.to_dict().values()) for p in pages]
        self._transaction([("INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)])

    def pages(self, tenant: str, doc_id: str) -> list[PageRecord]:
        rows = self._query("SELECT * FROM pages WHERE tenant=? AND doc_id=? ORDER BY page_no", tenant, doc_id)
        return [PageRecord(**dict(r)) for r in rows]

    def delete(self, tenant: str, doc_id: str, keep_document: bool = False) -> None:
        """Remove the page rows and (unless keep_document) the document row."""
        key = [(tenant, doc_id)]
        statements = [("DELETE FROM pages WHERE tenant=? AND doc_id=?", key)]
        if not keep_document:
            statements.append(("DELETE FROM documents WHERE tenant=? AND id=?", key))
        self._transaction(statements)

    @staticmethod
    def _doc(row: sqlite3.Row) -> Document:
        data = dict(row)
        data["metadata"] = json.loads(data["metadata"] or "{}")
        data["acl"] = json.loads(data.get("acl") or "[]")
        return Document(**data)
