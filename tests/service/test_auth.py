"""API keys: only hashes stored, revocation, single-user mode never back once a key
existed, ACL visibility, the token bucket."""

from __future__ import annotations

from pathlib import Path

import pytest

from index.acl import PUBLIC_ACL
from service.auth import KeyStore, Principal, RateLimiter


def test_keys_are_stored_hashed_and_revocable(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "auth.sqlite3")
    assert not store.any_keys()
    key, secret = store.create("acme", ["finance", "ops", "finance"], label="ci")
    assert key.groups == ["finance", "ops"] and not key.admin
    assert secret.encode() not in (tmp_path / "auth.sqlite3").read_bytes()
    who = store.authenticate(secret)
    assert who == Principal(key.id, "acme", ("finance", "ops"), False)
    assert store.authenticate(secret + "x") is None and store.authenticate("") is None
    assert store.revoke(key.id) and not store.revoke(key.id)
    assert store.authenticate(secret) is None
    assert store.any_keys()  # a revoked key still keeps single-user mode off
    with pytest.raises(ValueError, match="tenant"):
        store.create("../etc")
    with pytest.raises(ValueError, match="group"):
        store.create("acme", ["a b"])
    store.close()


def test_acl_visibility() -> None:
    plain, fin = Principal("k1", "t"), Principal("k2", "t", ("finance",))
    admin = Principal("k3", "t", admin=True)
    assert plain.acl() == [PUBLIC_ACL] and fin.acl() == [PUBLIC_ACL, "finance"] and admin.acl() is None
    assert plain.can_see([]) and not plain.can_see(["finance"])
    assert fin.can_see(["finance", "hr"]) and admin.can_see(["hr"])


def test_token_bucket() -> None:
    limiter = RateLimiter(rate=1000.0, burst=2)
    assert limiter.allow("a") and limiter.allow("a")
    assert limiter.allow("b")  # buckets are per key
    off = RateLimiter(rate=0, burst=1)
    assert all(off.allow("a") for _ in range(100))
