"""API keys and who is calling: keys are stored hashed (SHA-256 of a 192-bit random
secret) in `<data_dir>/auth.sqlite3`, each mapping to one tenant, ACL groups and a role.
The server derives the tenant from the key on every request; clients never name a tenant.

Roles (ROLES, what each may do is decided here and enforced by the API's dependencies):
`reader` searches, asks, lists and reads; `member` also uploads, loads and deletes
datasets, and deletes the documents `may_delete` allows; `admin` also manages keys and
sees and deletes every document of its tenant. Group names starting with "_" are
reserved (index/acl.py's PUBLIC_ACL is one) and refused wherever a group name enters.

Single-user mode (every request acts on the default tenant as admin) holds only while no
key was ever created: revoking the last key does not reopen the service. Reading the key
from an HTTP request is the API's job (service/api/deps.py); this module knows no HTTP.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import secrets
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from index.acl import caller_tokens, is_visible
from index.sqlite import SqliteFile, add_column

Role = Literal["reader", "member", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)
RESERVED_PREFIX = "_"  # group names of Carta's own (PUBLIC_ACL = "_public" is the "everyone" token)

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


def _add_role(conn: sqlite3.Connection) -> None:
    """Step 2: a role per key; keys from before roles keep what they could do (admin or member)."""
    add_column(conn, "api_keys", "role", "TEXT NOT NULL DEFAULT 'member'")
    conn.execute("UPDATE api_keys SET role='admin' WHERE admin=1")


_MIGRATIONS = [_SCHEMA, _add_role]


def check_name(value: str, what: str) -> str:
    """`value` when it is a usable tenant or group name, else ValueError saying why."""
    if not _NAME.match(value):
        raise ValueError(f"{what} {value!r} must be 1-64 letters, digits, '_' or '-'")
    return value


def check_group(value: str) -> str:
    """`value` when it is a usable ACL group name (check_name, and not reserved), else ValueError."""
    check_name(value, "group")
    if value.startswith(RESERVED_PREFIX):
        raise ValueError(f"group {value!r} is reserved: group names may not start with {RESERVED_PREFIX!r}")
    return value


def check_role(value: str) -> Role:
    """`value` when it is one of ROLES, else ValueError."""
    for role in ROLES:
        if value == role:
            return role
    raise ValueError(f"role {value!r} must be one of {', '.join(ROLES)}")


def role_of(role: str | None, admin: bool) -> Role:
    """The role a key gets from `--role` and the older `--admin` flag (ValueError when they disagree)."""
    if role is None:
        return "admin" if admin else "member"
    checked = check_role(role)
    if admin and checked != "admin":
        raise ValueError(f"an admin key cannot have role {role!r}")
    return checked


@dataclass(frozen=True)
class Principal:
    """The caller: a key (or the single user), its tenant, groups and role. `admin` and
    `role` agree after construction: admin=True means role "admin" and the reverse."""

    key_id: str  # "local" in single-user mode
    tenant: str
    groups: tuple[str, ...] = ()
    admin: bool = False
    role: Role | None = None  # None: "admin" when admin, else "member"

    def __post_init__(self) -> None:
        role = role_of(self.role, self.admin)
        object.__setattr__(self, "role", role)
        object.__setattr__(self, "admin", role == "admin")

    @property
    def can_write(self) -> bool:
        """May upload, delete (see may_delete) and manage datasets: members and admins."""
        return self.role != "reader"

    def acl(self) -> list[str] | None:
        """ACL tokens a document must carry one of to be visible (None = all of the tenant)."""
        return caller_tokens(self.groups, admin=self.admin)

    def can_see(self, doc_acl: list[str]) -> bool:
        """Whether a document with groups `doc_acl` is visible to this caller (index.acl)."""
        return is_visible(doc_acl, self.acl())

    def may_delete(self, doc_acl: list[str], uploader: str | None) -> bool:
        """Whether this caller may delete a document it can see, with groups `doc_acl`,
        uploaded by key `uploader` (None: unknown, e.g. indexed by the local CLI): an admin
        always; a member when it uploaded it, or when the document is shared with groups and
        the key is in every one of them (the groups the uploader chose); a reader never."""
        if self.admin:
            return True
        if not self.can_write:
            return False
        return uploader == self.key_id or (bool(doc_acl) and set(doc_acl) <= set(self.groups))


@dataclass(frozen=True)
class ApiKey:
    id: str
    tenant: str
    groups: list[str]
    admin: bool
    label: str
    created_at: str
    revoked_at: str | None
    role: Role = "member"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class KeyStore(SqliteFile):
    def __init__(self, path: Path) -> None:
        super().__init__(path, _MIGRATIONS)

    def create(
        self,
        tenant: str,
        groups: list[str] | None = None,
        admin: bool = False,
        label: str = "",
        *,
        role: str | None = None,
    ) -> tuple[ApiKey, str]:
        """A new key; the secret is returned once and only its hash is stored. `role`
        (ROLES) defaults to "admin" with `admin`, else "member"; ValueError for a bad
        tenant, group (reserved ones included) or role."""
        check_name(tenant, "tenant")
        groups = sorted({check_group(g) for g in groups or []})
        checked = role_of(role, admin)
        key_id = secrets.token_hex(6)
        secret = f"carta_{key_id}_{secrets.token_urlsafe(24)}"
        now = datetime.now(UTC).isoformat(timespec="seconds")
        self._query(
            "INSERT INTO api_keys (id, hash, tenant, groups, admin, role, label, created_at) "
            "VALUES (?,?,?,?,?,?,?,?)",
            key_id,
            _hash(secret),
            tenant,
            json.dumps(groups),
            int(checked == "admin"),
            checked,
            label[:200],
            now,
        )
        return ApiKey(key_id, tenant, groups, checked == "admin", label[:200], now, None, checked), secret

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
        return Principal(key.id, key.tenant, tuple(key.groups), key.admin, key.role)

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
            check_role(row["role"]),
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


class FailedAuthThrottle:
    """A token bucket of failed authentications per client address: `burst` wrong keys at
    once, then `rate` per second. An address whose bucket is empty is refused before its
    key is even checked (so a right guess looks the same as a wrong one while throttled).

    The table is bounded: at most `max_addresses` buckets, least recently failed evicted
    first, and a bucket that has refilled is dropped, so a flood of addresses cannot grow
    it (an attacker rotating addresses only evicts its own older entries)."""

    def __init__(self, rate: float, burst: int, max_addresses: int = 10_000) -> None:
        self.rate, self.burst, self.max_addresses = rate, burst, max_addresses
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # address -> (tokens, at)
        self._lock = threading.Lock()

    def _tokens(self, address: str, now: float) -> float:
        tokens, last = self._buckets.get(address, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - last) * self.rate)

    def retry_after(self, address: str) -> int:
        """Seconds until `address` may try a key again; 0 when it may now."""
        if self.rate <= 0:
            return 0
        with self._lock:
            if address not in self._buckets:
                return 0
            tokens = self._tokens(address, time.monotonic())
        return 0 if tokens >= 1.0 else max(1, math.ceil((1.0 - tokens) / self.rate))

    def failed(self, address: str) -> None:
        """Record one failed authentication from `address`."""
        if self.rate <= 0:
            return
        now = time.monotonic()
        with self._lock:
            self._buckets[address] = (max(0.0, self._tokens(address, now) - 1.0), now)
            self._buckets.move_to_end(address)
            while len(self._buckets) > self.max_addresses:
                self._buckets.popitem(last=False)
            self._drop_refilled(now)

    def _drop_refilled(self, now: float) -> None:
        """Forget the oldest buckets that have refilled (they hold nothing a new one would not)."""
        while self._buckets:
            address = next(iter(self._buckets))
            if self._tokens(address, now) < self.burst:
                return
            del self._buckets[address]

    def __len__(self) -> int:
        return len(self._buckets)
