"""An append-only audit log of uploads, deletions and queries in `<data_dir>/audit.sqlite3`:
who (key id), when, which tenant, what action and which document ids; never document
text or question text (triggers refuse UPDATE and DELETE, so rows cannot be rewritten
through this database connection)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from index.sqlite import SqliteFile

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL,
    key_id     TEXT NOT NULL,
    tenant     TEXT NOT NULL,
    action     TEXT NOT NULL,
    doc_ids    TEXT NOT NULL DEFAULT '[]',
    request_id TEXT,
    outcome    TEXT NOT NULL DEFAULT 'ok'
);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"""
ACTIONS = frozenset({"upload", "delete", "search", "ask", "key_create", "key_revoke"})


@dataclass(frozen=True)
class AuditEvent:
    seq: int
    at: str
    key_id: str
    tenant: str
    action: str
    doc_ids: list[str]
    request_id: str | None
    outcome: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class AuditLog(SqliteFile):
    def __init__(self, path: Path) -> None:
        super().__init__(path, [_SCHEMA])

    def record(
        self,
        key_id: str,
        tenant: str,
        action: str,
        doc_ids: list[str] | None = None,
        request_id: str | None = None,
        outcome: str = "ok",
    ) -> None:
        if action not in ACTIONS:
            raise ValueError(f"unknown audit action {action!r}")
        with self._lock:
            self._conn.execute(
                "INSERT INTO audit (at, key_id, tenant, action, doc_ids, request_id, outcome) "
                "VALUES (?,?,?,?,?,?,?)",
                (
                    datetime.now(UTC).isoformat(timespec="milliseconds"),
                    key_id,
                    tenant,
                    action,
                    json.dumps(sorted(set(doc_ids or []))),
                    request_id,
                    outcome[:40],
                ),
            )

    def events(
        self, tenant: str | None = None, action: str | None = None, limit: int = 100
    ) -> list[AuditEvent]:
        """The newest `limit` events (optionally of one tenant / action), oldest first."""
        sql, args = "SELECT * FROM audit WHERE 1=1", []
        if tenant:
            sql, args = sql + " AND tenant=?", [*args, tenant]
        if action:
            sql, args = sql + " AND action=?", [*args, action]
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY seq DESC LIMIT ?", (*args, limit)).fetchall()
        return [
            AuditEvent(
                r["seq"],
                r["at"],
                r["key_id"],
                r["tenant"],
                r["action"],
                json.loads(r["doc_ids"]),
                r["request_id"],
                r["outcome"],
            )
            for r in reversed(rows)
        ]
