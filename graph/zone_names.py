"""Names for zones and points: the place a point falls in, so answers say "Boa Viagem"
or "Kluuvi" and keep the H3 id as a detail. The tenant's own polygon layers come first
(the smallest named polygon covering the point), then the gazetteer (a user polygon, else
the nearest city)."""

from __future__ import annotations

from typing import Any

from geo.gazetteer import Gazetteer
from graph.store import GraphStore


class ZoneNamer:
    """`namer(lat, lon)` -> a place name or None; the tenant's polygons are read once."""

    def __init__(self, store: GraphStore, gazetteer: Gazetteer | None, tenant: str) -> None:
        self.store = store
        self.gazetteer = gazetteer
        self.tenant = tenant
        self._polys: list[Any] | None = None
        self._shapes: list[Any] = []
        self._tree: Any = None

    def _load(self) -> None:
        from shapely import STRtree
        from shapely.geometry import shape

        self._polys = [p for p in self.store.features(self.tenant, polygons_only=True) if p.name]
        self._shapes = [shape(p.geometry) for p in self._polys]
        self._tree = STRtree(self._shapes) if self._shapes else None

    def __call__(self, lat: float, lon: float) -> str | None:
        from shapely.geometry import Point

        if self._polys is None:
            self._load()
        if self._tree is not None:
            hits = [int(i) for i in self._tree.query(Point(lon, lat), predicate="covered_by")]
            if hits:
                assert self._polys is not None
                return self._polys[min(hits, key=lambda i: self._shapes[i].area)].name
        if self.gazetteer is not None and (place := self.gazetteer.place_at(lat, lon)) is not None:
            return place.name
        return None
