"""Typed dependencies of the routes: the app state, the service object, the caller, a
document the caller may see, and the audit log bound to the caller.

Declare them as parameters (`carta: CartaDep, who: Caller, audit: Audit`); FastAPI
resolves each once per request.

Permissions, one dependency each (the roles are service/auth.py's):
- `Caller`: any valid key (read: search, ask, list, fetch, traces);
- `Writer`: members and admins (upload, load and delete datasets); readers get 403;
- `AdminCaller`: admin keys (manage keys);
- `DeletableDocument`: a document the caller may see and delete (Principal.may_delete).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from graph.channel import GraphChannel
from index.registry import Document
from service.api.state import AppState, Services, app_state_of
from service.audit import AuditLog
from service.auth import Principal
from service.carta import Carta
from service.errors import (
    AuthThrottled,
    DocumentNotFound,
    Forbidden,
    GraphDisabled,
    InvalidKey,
    MissingKey,
    RateLimited,
    ReadOnlyKey,
)

VISIBLE = ("ready", "failed")  # a document being indexed is not visible yet


def get_state(request: Request) -> AppState:
    """The app's typed state."""
    return app_state_of(request.app.state)


def get_services(request: Request) -> Services:
    """What the lifespan opened: the service object, keys, audit log, jobs."""
    return get_state(request).running()


def get_carta(request: Request) -> Carta:
    """The service object."""
    return get_services(request).carta


StateDep = Annotated[AppState, Depends(get_state)]
ServicesDep = Annotated[Services, Depends(get_services)]
CartaDep = Annotated[Carta, Depends(get_carta)]

_bearer = HTTPBearer(auto_error=False, description="An API key from `carta keys create`.")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="The same key, as a header.")


def principal(
    request: Request,
    creds: HTTPAuthorizationCredentials | None = Security(_bearer),  # noqa: B008
    api_key: str | None = Security(_header),  # noqa: B008
) -> Principal:
    """The caller from `Authorization: Bearer` or `X-API-Key`, rate limited per key.
    Without any key ever created: the single user (default tenant, admin). A client
    address that sent too many wrong keys gets 429 before its key is checked."""
    state = get_state(request)
    keys = state.running().keys
    secret = api_key or (creds.credentials if creds else None)
    if secret is None and not keys.any_keys():
        who = Principal("local", state.settings.default_tenant, admin=True)
    elif secret is None:
        state.metrics.auth_failures.inc()
        raise MissingKey("an API key is required: send 'Authorization: Bearer <key>' or 'X-API-Key'")
    else:
        who = authenticated(state, client_address(request), secret)
    if not state.limiter.allow(who.key_id):
        state.metrics.rate_limited.inc()
        raise RateLimited("too many requests for this API key; retry in a second")
    request.state.who = who
    return who


def client_address(request: Request) -> str:
    """The peer's address (behind a reverse proxy: the proxy's; throttle there too)."""
    return request.client.host if request.client else "unknown"


def authenticated(state: AppState, address: str, secret: str) -> Principal:
    """The key's principal; InvalidKey (counted against `address`) or AuthThrottled."""
    wait = state.auth_throttle.retry_after(address)
    if wait:
        state.metrics.auth_throttled.inc()
        raise AuthThrottled(f"too many wrong API keys from this address; retry in {wait} s", wait)
    found = state.running().keys.authenticate(secret)
    if found is None:
        state.metrics.auth_failures.inc()
        state.auth_throttle.failed(address)
        raise InvalidKey("the API key is unknown or revoked")
    return found


Caller = Annotated[Principal, Depends(principal)]


def writer(who: Caller) -> Principal:
    """The caller, unless its key is read-only (ReadOnlyKey, 403)."""
    if not who.can_write:
        raise ReadOnlyKey("this key is read-only (role reader): it may search, ask and read, not change")
    return who


def admin_caller(who: Caller) -> Principal:
    """The caller, if it is an admin key (or the single user); else Forbidden."""
    if not who.admin:
        raise Forbidden("only an admin key may manage API keys")
    return who


Writer = Annotated[Principal, Depends(writer)]
AdminCaller = Annotated[Principal, Depends(admin_caller)]


def visible_document(carta: Carta, who: Principal, doc_id: str) -> Document:
    """The caller's document, or DocumentNotFound: another tenant's, a document its groups
    may not see and one still being indexed all look the same (absent)."""
    doc = carta.registry.get(who.tenant, doc_id)
    if doc is None or doc.status not in VISIBLE or not who.can_see(doc.acl):
        raise DocumentNotFound(f"no document {doc_id!r}")
    return doc


def visible_document_dep(carta: CartaDep, who: Caller, doc_id: str) -> Document:
    """`visible_document` for the `{doc_id}` of the path."""
    return visible_document(carta, who, doc_id)


# For routes whose only other parameter is the path's doc_id. Routes with more parameters
# (a page number, a query) call visible_document() in their body instead: a dependency runs
# before the route's own parameters are validated, so it would answer 404 where the API
# answers 422 for a malformed request.
VisibleDocument = Annotated[Document, Depends(visible_document_dep)]


def deletable_document_dep(services: ServicesDep, who: Writer, doc_id: str) -> Document:
    """The `{doc_id}` of the path, if the caller may see it (else 404) and delete it (else 403)."""
    doc = visible_document(services.carta, who, doc_id)
    if not who.may_delete(doc.acl, services.job_store.uploader(who.tenant, doc.id)):
        raise Forbidden(
            f"this key may not delete document {doc_id!r}: only its uploader, keys in all of its "
            "groups and admin keys may"
        )
    return doc


DeletableDocument = Annotated[Document, Depends(deletable_document_dep)]


def graph_channel(carta: Carta) -> GraphChannel:
    """The graph channel, or GraphDisabled (409) when the graph is turned off."""
    if carta.graph is None:
        raise GraphDisabled("the graph is turned off (CARTA_GRAPH_ENABLED=false); turn it on to load POIs")
    return carta.graph


def get_graph(carta: CartaDep, who: Caller) -> GraphChannel:
    """`graph_channel` after the caller: a request without a valid key answers 401, not 409."""
    return graph_channel(carta)


GraphDep = Annotated[GraphChannel, Depends(get_graph)]


@dataclass(frozen=True)
class Auditor:
    """The audit log bound to one request's caller and request id."""

    log: AuditLog
    who: Principal
    request_id: str | None

    def record(self, action: str, doc_ids: Iterable[str] = (), outcome: str = "ok") -> None:
        """Append one event (who, tenant, action, documents; never text)."""
        self.log.record(self.who.key_id, self.who.tenant, action, list(doc_ids), self.request_id, outcome)


def get_auditor(request: Request, services: ServicesDep, who: Caller) -> Auditor:
    """The audit log for this request."""
    return Auditor(services.audit, who, getattr(request.state, "request_id", None))


Audit = Annotated[Auditor, Depends(get_auditor)]
