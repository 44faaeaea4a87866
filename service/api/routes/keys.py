"""/v1/keys: the API keys of the caller's tenant (admin keys only): create, list, revoke."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.api import schemas
from service.api.deps import AdminCaller, Audit, ServicesDep
from service.api.errors import ERROR_RESPONSES as _ERRORS
from service.auth import check_group
from service.errors import InvalidGroups, InvalidRequest, KeyNotFound

router = APIRouter(tags=["keys"])


@router.post(
    "/v1/keys", status_code=201, response_model=schemas.KeyCreated, responses={400: _ERRORS, 403: _ERRORS}
)
def create_key(services: ServicesDep, who: AdminCaller, audit: Audit, body: schemas.KeyRequest) -> Any:
    """A new key of the caller's tenant (admin keys only); the secret is shown once."""
    try:
        for g in body.groups:
            check_group(g)
    except ValueError as exc:
        raise InvalidGroups(str(exc)) from exc
    try:
        key, secret = services.keys.create(who.tenant, body.groups, body.admin, body.label, role=body.role)
    except ValueError as exc:  # admin=true with another role
        raise InvalidRequest(str(exc)) from exc
    audit.record("key_create")
    return schemas.KeyCreated(**schemas.KeyOut(**key.to_dict()).model_dump(), secret=secret)


@router.get("/v1/keys", response_model=list[schemas.KeyOut], responses={403: _ERRORS})
def list_keys(services: ServicesDep, who: AdminCaller) -> Any:
    """The keys of the caller's tenant (admin keys only), without secrets."""
    return [k.to_dict() for k in services.keys.list() if k.tenant == who.tenant]


@router.delete("/v1/keys/{key_id}", responses={403: _ERRORS, 404: _ERRORS})
def revoke_key(services: ServicesDep, who: AdminCaller, audit: Audit, key_id: str) -> dict[str, str]:
    """Revoke a key of the caller's tenant (admin keys only) at once."""
    keys = services.keys
    mine = {k.id for k in keys.list() if k.tenant == who.tenant}
    if key_id not in mine or not keys.revoke(key_id):
        raise KeyNotFound(f"no active key {key_id!r}")
    audit.record("key_revoke")
    return {"revoked": key_id}
