"""Admin commands of the `carta` CLI: API keys (`carta keys ...`) and the audit log
(`carta audit`). They work on the data dir's SQLite files directly, so they also work
while `carta serve` runs (SQLite allows a second process; the vector store does not)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from service.audit import AuditLog
from service.auth import KeyStore
from service.cli.common import console, fail, out, print_json
from service.settings import Settings

keys_app = typer.Typer(help="Create, list and revoke API keys.", no_args_is_help=True)


@keys_app.command("create")
def create_key(
    tenant: Annotated[str, typer.Option(help="The tenant the key acts on.")],
    group: Annotated[list[str], typer.Option("--group", "-g", help="ACL group (repeatable).")] = [],  # noqa: B006
    admin: Annotated[
        bool, typer.Option(help="May manage keys and see every document of its tenant (= --role admin).")
    ] = False,
    role: Annotated[
        str | None,
        typer.Option(
            help="reader (search, ask, read), member (also upload and delete its own) or admin; "
            "default: member, or admin with --admin."
        ),
    ] = None,
    label: Annotated[str, typer.Option(help="A note for humans (who holds it).")] = "",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Create a key; its secret is printed once (only a hash is stored). Once any key
    exists, the server requires a key on every /v1 request."""
    store = KeyStore(Settings().auth_path)
    try:
        key, secret = store.create(tenant, group, admin, label, role=role)
    except ValueError as exc:
        fail(str(exc), code=2)
    finally:
        store.close()
    if as_json:
        print_json({**key.to_dict(), "secret": secret})
        return
    groups = ", ".join(key.groups) or "-"
    console.print(f"key {key.id} for tenant {key.tenant} (role: {key.role}; groups: {groups})")
    typer.echo(secret)


@keys_app.command("list")
def list_keys(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List keys (never their secrets)."""
    store = KeyStore(Settings().auth_path)
    try:
        keys = store.list()
    finally:
        store.close()
    if as_json:
        print_json([k.to_dict() for k in keys])
        return
    table = Table("id", "tenant", "groups", "role", "label", "created", "revoked")
    for k in keys:
        table.add_row(
            k.id,
            k.tenant,
            ",".join(k.groups),
            k.role,
            k.label,
            k.created_at,
            k.revoked_at or "",
        )
    out.print(table)


@keys_app.command("revoke")
def revoke_key(key_id: Annotated[str, typer.Argument(help="Key id (see `carta keys list`).")]) -> None:
    """Revoke a key at once (the server checks the key on every request)."""
    store = KeyStore(Settings().auth_path)
    try:
        revoked = store.revoke(key_id)
    finally:
        store.close()
    if not revoked:
        fail(f"no active key {key_id!r}")
    console.print(f"revoked {key_id}")


def audit(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant.")] = None,
    action: Annotated[
        str | None, typer.Option(help="upload, delete, search, ask, key_create, key_revoke.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="The newest N events.")] = 100,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Show the audit log: who (key id), when, what, which document ids (no document text)."""
    log = AuditLog(Settings().audit_path)
    try:
        events = log.events(tenant, action, limit)
    finally:
        log.close()
    if as_json:
        print_json([e.to_dict() for e in events])
        return
    table = Table("#", "at", "key", "tenant", "action", "outcome", "documents")
    for e in events:
        table.add_row(str(e.seq), e.at, e.key_id, e.tenant, e.action, e.outcome, ",".join(e.doc_ids))
    out.print(table)
