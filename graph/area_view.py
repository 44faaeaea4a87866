"""A graph store seen through the request's geo filter (`geo` of /v1/ask): the POIs, features
and zones outside the area are left out, so a count, a ranking, a nearest or a pair answered
from the data holds inside the area the caller asked about, as the documents' pages do.

`Within` is a plain point test (lat, lon -> bool) the service builds from its resolved
filter; polygon layers read whole as grouping layers (`polygons_only`: the bairros a count
is grouped by) stay whole, as what they group is already restricted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import h3

from graph.store import Feature, GraphStore, PoiRow

Within = Callable[[float, float], bool]  # (lat, lon) -> inside the area


class AreaView:
    """`store` with its reads of POIs, features and zones restricted to `within`; every
    other attribute is the store's."""

    def __init__(self, store: GraphStore, within: Within) -> None:
        self._store = store
        self._within = within

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def features(
        self,
        tenant: str,
        datasets: Iterable[str] | None = None,
        categories: Iterable[str] | None = None,
        polygons_only: bool = False,
    ) -> list[Feature]:
        feats = self._store.features(tenant, datasets, categories, polygons_only)
        return feats if polygons_only else [f for f in feats if self._within(f.lat, f.lon)]

    def pois(
        self, tenant: str, categories: Iterable[str] | None = None, cells: Iterable[str] | None = None
    ) -> list[PoiRow]:
        return [r for r in self._store.pois(tenant, categories, cells) if self._within(r.lat, r.lon)]

    def zones(self, tenant: str, cells: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """The zones whose centre is inside the area."""
        zones = self._store.zones(tenant, cells)
        return {c: z for c, z in zones.items() if self._within(*h3.cell_to_latlng(c))}
