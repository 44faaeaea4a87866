"""/v1/search: the evidence pages for a query, with per-channel scores."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.api import schemas
from service.api.deps import Audit, Caller, CartaDep
from service.query.understood import understood

router = APIRouter(tags=["query"])


@router.post("/v1/search", response_model=schemas.SearchResponse)
def search(carta: CartaDep, who: Caller, audit: Audit, body: schemas.SearchRequest) -> Any:
    q = carta.query(
        body.query,
        who.tenant,
        top_k=body.top_k,
        doc_ids=body.doc_ids,
        kinds=body.kinds,
        channels=frozenset(body.channels) if body.channels else None,
        geo=body.geo.spec() if body.geo else None,
        geo_prior=body.geo_prior,
        geo_prior_mode=body.geo_prior_mode,
        acl=who.acl(),
    )
    result = carta.search(q)
    audit.record("search", [p.doc_id for p in result.pages])
    return schemas.search_response(result, understood(q, carta.gazetteer))
