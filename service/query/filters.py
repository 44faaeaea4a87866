"""The engine filter: tenant, ACL, readiness, metadata and geo conditions, built once per
query and passed to every channel, so they act inside the engine, before top-k."""

from __future__ import annotations

from index.acl import ACL_FIELD
from index.types import Filter
from service.query.geo_filter import ResolvedGeo
from service.query.types import SearchQuery


def engine_filter(q: SearchQuery) -> Filter:
    """The filter every channel of `q` searches under."""
    match: dict = {"tenant": q.tenant, "state": "ready"}
    if q.acl is not None:  # the caller's tokens; a point matches when it carries one (index.acl)
        match[ACL_FIELD] = list(q.acl)
    if q.doc_ids:
        match["doc_id"] = list(q.doc_ids)
    if q.kinds:
        match["kind"] = list(q.kinds)
    return Filter(match, any_of=list(q.geo.conditions) if q.geo else [])


def within_place(flt: Filter, place: ResolvedGeo) -> Filter:
    """`flt` with its geo conditions replaced by a place's (the geo prior's "filter" mode)."""
    return Filter(flt.match, any_of=list(place.conditions))
