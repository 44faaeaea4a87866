"""API keys: only hashes stored, revocation, single-user mode never back once a key
existed, ACL visibility, the token bucket, roles (and their migration), reserved group
names, the delete rule, the failed-auth throttle and its bounded table."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from index.acl import PUBLIC_ACL
from service.auth import _SCHEMA, FailedAuthThrottle, KeyStore, Principal, RateLimiter, check_group


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


def test_reserved_group_names_are_refused(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "auth.sqlite3")
    for name in (PUBLIC_ACL, "_admins", "_"):
        with pytest.raises(ValueError, match="reserved"):
            check_group(name)
        with pytest.raises(ValueError, match="reserved"):
            store.create("acme", ["finance", name])
    assert check_group("a_b") == "a_b" and check_group("x_") == "x_"  # only a leading "_" is reserved
    assert not store.any_keys()  # nothing was created
    store.close()


def test_roles_are_stored_and_agree_with_the_admin_flag(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "auth.sqlite3")
    reader, reader_secret = store.create("acme", ["finance"], role="reader")
    member, member_secret = store.create("acme")
    admin, admin_secret = store.create("acme", admin=True)
    assert (reader.role, member.role, admin.role) == ("reader", "member", "admin")
    assert store.create("acme", role="admin")[0].admin
    who = store.authenticate(reader_secret)
    assert who is not None and who.role == "reader" and not who.admin and not who.can_write
    assert who.acl() == [PUBLIC_ACL, "finance"]  # a reader sees what its groups see
    assert store.authenticate(member_secret) == Principal(member.id, "acme", (), False, "member")
    found = store.authenticate(admin_secret)
    assert found is not None and found.admin and found.role == "admin" and found.acl() is None
    assert sorted(k.role for k in store.list()) == ["admin", "admin", "member", "reader"]
    with pytest.raises(ValueError, match="role"):
        store.create("acme", role="owner")
    with pytest.raises(ValueError, match="admin key cannot have role"):
        store.create("acme", admin=True, role="reader")
    store.close()
    assert Principal("k", "t", role="admin").admin and Principal("k", "t", admin=True).role == "admin"
    assert Principal("k", "t").role == "member"


def test_keys_from_before_roles_keep_what_they_could_do(tmp_path: Path) -> None:
    """A file at schema version 1 (no role column) migrates: admins stay admins, the rest members."""
    path = tmp_path / "auth.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(_SCHEMA)
    for key_id, admin in (("old1", 0), ("old2", 1)):
        conn.execute(
            "INSERT INTO api_keys (id, hash, tenant, groups, admin, created_at) VALUES (?,?,?,?,?,?)",
            (key_id, f"h-{key_id}", "acme", json.dumps([]), admin, "2024-01-01T00:00:00"),
        )
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()
    store = KeyStore(path)
    migrated = [(k.id, k.role, k.admin) for k in store.list()]
    assert migrated == [("old1", "member", False), ("old2", "admin", True)]
    store.close()


def test_who_may_delete_a_document() -> None:
    reader = Principal("r", "t", ("finance",), role="reader")
    plain, fin = Principal("p", "t"), Principal("f", "t", ("finance",))
    both, admin = Principal("fh", "t", ("finance", "hr")), Principal("a", "t", admin=True)
    # a tenant-wide document uploaded by an admin: only admins (and its uploader)
    assert admin.may_delete([], "a") and not plain.may_delete([], "a") and not fin.may_delete([], "a")
    assert plain.may_delete([], "p")  # its own upload
    assert not reader.may_delete([], "r") and not reader.may_delete(["finance"], "a")  # never a reader
    # a document shared with groups: keys in every one of them
    assert fin.may_delete(["finance"], "a") and both.may_delete(["finance", "hr"], "a")
    assert not fin.may_delete(["finance", "hr"], "fh") and fin.may_delete(["finance", "hr"], "f")
    assert not plain.may_delete(["finance"], None) and admin.may_delete(["hr"], None)


def test_failed_auth_throttle_per_address() -> None:
    throttle = FailedAuthThrottle(rate=0.5, burst=3)
    assert throttle.retry_after("1.2.3.4") == 0
    for _ in range(3):
        assert throttle.retry_after("1.2.3.4") == 0
        throttle.failed("1.2.3.4")
    assert throttle.retry_after("1.2.3.4") == 2  # one token back at 0.5/s
    assert throttle.retry_after("5.6.7.8") == 0  # per address
    off = FailedAuthThrottle(rate=0, burst=1)
    for _ in range(50):
        off.failed("1.2.3.4")
    assert off.retry_after("1.2.3.4") == 0 and len(off) == 0


def test_failed_auth_table_stays_bounded() -> None:
    throttle = FailedAuthThrottle(rate=0.001, burst=2, max_addresses=100)
    for i in range(5_000):
        throttle.failed(f"10.0.{i // 256}.{i % 256}")
    assert len(throttle) == 100
    throttle.failed("10.9.9.9")
    throttle.failed("10.9.9.9")
    assert throttle.retry_after("10.9.9.9") > 0  # the newest stays throttled
    fast = FailedAuthThrottle(rate=1e9, burst=5)  # refills at once: nothing worth keeping
    for i in range(1_000):
        fast.failed(f"a{i}")
    assert len(fast) <= 1


def test_cli_keys_create_refuses_reserved_groups_and_takes_a_role(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.cli.main import app

    monkeypatch.setenv("CARTA_DATA_DIR", str(tmp_path))
    runner = CliRunner()
    refused = runner.invoke(app, ["keys", "create", "--tenant", "acme", "--group", PUBLIC_ACL])
    assert refused.exit_code == 2 and "reserved" in refused.output
    bad_role = runner.invoke(app, ["keys", "create", "--tenant", "acme", "--role", "owner"])
    assert bad_role.exit_code == 2 and "role" in bad_role.output
    made = runner.invoke(app, ["keys", "create", "--tenant", "acme", "--role", "reader", "--json"])
    assert made.exit_code == 0, made.output
    key = json.loads(made.stdout)
    assert key["role"] == "reader" and not key["admin"] and key["secret"].startswith("carta_")
    listed = runner.invoke(app, ["keys", "list", "--json"])
    assert [k["role"] for k in json.loads(listed.stdout)] == ["reader"]
