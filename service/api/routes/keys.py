"""/v1/keys: the API keys of the caller's tenant (admin keys only): create, list, revoke."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.api import schemas
from service.api.deps import Audit, Caller, ServicesDep
from service.api.errors import ERROR_RESPONSES as _ERRORS
from service.auth import Principal, check_name
from service.errors import Forbidden, InvalidGroups, KeyNotFound

router = APIRouter(tags=["keys"])


def admin_only(who: Principal) -> None:
    """Forbidden unless the caller is an admin key (or the single user)."""
    if not who.admin:
        raise Forbidden("only an admin key may manage API keys")


@router.post(
    "/v1/keys", status_code=201, response_model=schemas.KeyCreated, responses={400: _ERRORS, 403: _ERRORS}
)
def create_key(services: ServicesDep, who: Caller, audit: Audit, body: schemas.KeyRequest) -> Any:
    """A new key of the caller's tenant (admin keys only); the secret is shown once."""
    admin_only(who)
    try:
        for g in body.groups:
            check_name(g, "group")
    except ValueError as exc:
        raise InvalidGroups(str(exc)) from exc
    key, secret = services.keys.create(who.tenant, body.groups, body.admin, body.label)
    audit.record("key_create")
    return schemas.KeyCreated(**schemas.KeyOut(**key.to_dict()).model_dump(), secret=secret)


@router.get("/v1/keys", response_model=list[schemas.KeyOut], responses={403: _ERRORS})
def list_keys(services: ServicesDep, who: Caller) -> Any:
    """The keys of the caller's tenant (admin keys only), without secrets."""
    admin_only(who)
    return [k.to_dict() for k in services.keys.list() if k.tenant == who.tenant]


@router.delete("/v1/keys/{key_id}", responses={403: _ERRORS, 404: _ERRORS})
def revoke_key(services: ServicesDep, who: Caller, audit: Audit, key_id: str) -> dict[str, str]:
    admin_only(who)
    keys = services.keys
    mine = {k.id for k in keys.list() if k.tenant == who.tenant}
    if key_id not in mine or not keys.revoke(key_id):
        raise KeyNotFound(f"no active key {key_id!r}")
    audit.record("key_revoke")
    return {"revoked": key_id}
