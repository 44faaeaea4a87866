"""What both vector-store backends share in speaking to a Qdrant engine: the walk of a
Carta `Filter` into the engine's filter, and the engine's points read back as `Hit` and
`StorePoint`. qdrant-edge and qdrant-client have parallel object models (a Filter with
must/must_not/should, points with id, score, payload and vector), so the walk is written
once and each backend supplies its own constructors (index/edge_store.py,
index/server_store.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from index.types import Filter, GeoCondition, Hit, StorePoint

Match = Callable[[str, Any], Any]  # (key, value or values) -> the engine's field condition
Geo = Callable[[GeoCondition], Any]  # a geo condition -> the engine's field condition
EngineFilter = Callable[..., Any]  # the engine's Filter class (must=, must_not=, should=)


def engine_filter(flt: Filter | None, match: Match, geo: Geo, make: EngineFilter) -> Any:
    """`flt` as the engine's filter: the matches and the geo radius must hold, the
    exclusions must not, and at least one of `any_of` (a nested filter or a geo condition)."""
    if flt is None:
        return None
    must: list[Any] = [match(k, v) for k, v in flt.match.items()]
    must_not = [match(k, v) for k, v in flt.exclude.items()]
    if flt.geo_radius:
        must.append(geo(flt.geo_radius))
    if flt.any_of:
        should = [engine_filter(c, match, geo, make) if isinstance(c, Filter) else geo(c) for c in flt.any_of]
        must.append(make(should=should))
    return make(must=must or None, must_not=must_not or None)


def hit(point: Any) -> Hit:
    """An engine's scored (or scrolled, score 0) point as a Hit."""
    return Hit(
        id=str(point.id), score=float(getattr(point, "score", 0.0) or 0.0), payload=dict(point.payload or {})
    )


def stored_point(record: Any) -> StorePoint:
    """An engine's record read with its vectors, as the StorePoint it was written from."""
    return StorePoint(str(record.id), dict(record.vector or {}), dict(record.payload or {}))
