"""API keys and who is calling: keys are stored hashed (SHA-256 of a 192-bit random
secret) in `<data_dir>/auth.sqlite3`, each mapping to one tenant, ACL groups and an
admin flag. The server derives the tenant from the key on every request; clients never
name a tenant.

Single-user mode (every request acts on the default tenant as admin) holds only while no
key was ever created: revoking the last key does not reopen the service. Reading the key
from an HTTP request is the API's job (service/api/deps.py); this module knows no HTTP.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from index.acl import caller_tokens, is_visible
from index.sqlite import connect, migrate

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    id         TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,
    tenant     TEXT NOT NULL,
    groups     TEXT NOT NULL DEFAULT '[]',
    admin      INTEGER NOT NULL DEFAULT 0,
    label      TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
"""


def check_name(value: str, what: str) -> str:
    """`value` when it is a usable tenant or group name, else ValueError saying why."""
    if not _NAME.match(value):
        raise ValueError(f"{what} {value!r} must be 1-64 letters, digits, '_' or '-'")
    return value


@dataclass(frozen=True)
class Principal:
    """The caller: a key (or the single user), its tenant, groups and admin flag."""

    key_id: str  # "local" in single-user mode
    tenant: str
    groups: tuple[str, ...] = ()
    admin: bool = False

    def acl(self) -> list[str] | None:
        """ACL tokens a document must carry one of to be visible (None = all of the tenant)."""
        return caller_tokens(self.groups, admin=self.admin)

    def can_see(self, doc_acl: list[str]) -> bool:
        """Whether a document with groups `doc_acl` is visible to this caller (index.acl)."""
        return is_visible(doc_acl, self.acl())


@dataclass(frozen=True)
class ApiKey:
    id: str
    tenant: str
    groups: list[str]
    admin: bool
    label: str
    created_at: str
    revoked_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class KeyStore:
    def __init__(self, path: Path) -> None:
        self._conn = connect(path)
        migrate(self._conn, [_SCHEMA])
        self._lock = threading.Lock()

    def _query(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    def create(
        self, tenant: str, groups: list[str] | None = None, admin: bool = False, label: str = ""
    ) -> tuple[ApiKey, str]:
        """A new key; the secret is returned once and only its hash is stored."""
        check_name(tenant, "tenant")
        groups = sorted({check_name(g, "group") for g in groups or []})
        key_id = secrets.token_hex(6)
        secret = f"carta_{key_id}_{secrets.token_urlsafe(24)}"
        now = datetime.now(UTC).isoformat(timespec="seconds")
        self._query(
            "INSERT INTO api_keys (id, hash, tenant, groups, admin, label, created_at) "
            "VALUES (?,?,?,?,?,?,?)",
            key_id,
            _hash(secret),
            tenant,
            json.dumps(groups),
            int(admin),
            label[:200],
            now,
        )
        return ApiKey(key_id, tenant, groups, admin, label[:200], now, None), secret

    def list(self) -> list[ApiKey]:
        return [self._key(r) for r in self._query("SELECT * FROM api_keys ORDER BY created_at, id")]

    def revoke(self, key_id: str) -> bool:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        rows = self._query(
            "UPDATE api_keys SET revoked_at=? WHERE id=? AND revoked_at IS NULL RETURNING id", now, key_id
        )
        return bool(rows)

    def any_keys(self) -> bool:
        """True once any key was created (revoked ones count): single-user mode is then off."""
        return bool(self._query("SELECT 1 FROM api_keys LIMIT 1"))

    def authenticate(self, secret: str) -> Principal | None:
        digest = _hash(secret)
        rows = self._query("SELECT * FROM api_keys WHERE hash=? AND revoked_at IS NULL", digest)
        if not rows or not hmac.compare_digest(rows[0]["hash"], digest):
            return None
        key = self._key(rows[0])
        return Principal(key.id, key.tenant, tuple(key.groups), key.admin)

    def close(self) -> None:
        self._conn.close()

    @staticmethod
    def _key(row: sqlite3.Row) -> ApiKey:
        return ApiKey(
            row["id"],
            row["tenant"],
            json.loads(row["groups"]),
            bool(row["admin"]),
            row["label"],
            row["created_at"],
            row["revoked_at"],
        )


class RateLimiter:
    """A token bucket per key: `rate` requests per second on average, bursts of `burst`."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        if self.rate <= 0:
            return True
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                return False
            self._buckets[key] = (tokens - 1.0, now)
            return True
