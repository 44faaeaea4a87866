"""Relational retrieval: the pairs of places a question asks for, with verified distances.

Zones (H3 cells holding POIs of the asked categories inside the searched area) are ranked
by how well they cover the categories (and by embedding similarity of their profiles when
an embedder is given); their POIs are filtered by category; with a zone budget the H3 ring
around the chosen zones widens until both sides of a pair are present and a pair is found
(or the ring limit); then every pair within the radius is computed exactly (bucketed
candidates, haversine on all of them, each distance checked again). Within the searched
area no valid pair is missed and no returned pair is beyond the radius. The zones name
only the documents the caller may see (a `DocFilter`, graph/store.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import h3
import numpy as np

from geo.distance import haversine_m
from geo.gazetteer import Place
from graph.parser import Constraints
from graph.spatial import join_resolution, pairs_within
from graph.store import DocFilter, GraphStore, PoiRow, visible_zone

DEFAULT_AREA_RADIUS_M = 10_000.0
MAX_RING = 4
Embedder = Callable[[list[str]], np.ndarray]


@dataclass
class Pair:
    a: PoiRow
    b: PoiRow
    dist_m: float


@dataclass
class Area:
    """Where pairs are searched: a place's polygon, a circle around it, or everything."""

    kind: str  # "polygon" | "circle" | "all"
    place: str | None = None
    lat: float | None = None
    lon: float | None = None
    radius_m: float | None = None
    geometry: dict | None = None
    place_id: str | None = None

    def contains(self, rows: Sequence[PoiRow]) -> list[bool]:
        if self.kind == "all":
            return [True] * len(rows)
        if self.kind == "circle":
            return [haversine_m(self.lat, self.lon, r.lat, r.lon) <= self.radius_m for r in rows]
        from shapely import points
        from shapely.geometry import shape

        poly = shape(self.geometry)
        return [bool(x) for x in poly.covers(points([(r.lon, r.lat) for r in rows]))] if rows else []

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "place": self.place}
        if self.kind == "circle":
            out |= {"lat": self.lat, "lon": self.lon, "radius_m": self.radius_m}
        return out


def area_for(place: Place | None, radius_m: float = DEFAULT_AREA_RADIUS_M) -> Area:
    if place is None:
        return Area("all")
    if place.geometry is not None:
        return Area("polygon", place.name, place.lat, place.lon, geometry=place.geometry, place_id=place.id)
    return Area("circle", place.name, place.lat, place.lon, radius_m, place_id=place.id)


@dataclass
class RelationalResult:
    constraints: Constraints
    area: Area
    zones: list[dict] = field(default_factory=list)  # {"h3", "score", "total", "categories", "documents"}
    pois: list[PoiRow] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    searched_cells: list[str] = field(default_factory=list)
    rings: int = 0
    truncated: bool = False
    notes: list[str] = field(default_factory=list)


def zone_profile_text(cell: str, profile: dict) -> str:
    """A zone as a short document (seed 000): totals and dominant categories."""
    cats = ", ".join(f"{n} {c.replace('_', ' ')}" for c, n in list(profile.get("categories", {}).items())[:8])
    return f"Zone {cell}: {profile.get('total', 0)} points of interest ({cats})."


class RelationalRetriever:
    def __init__(
        self,
        store: GraphStore,
        area_radius_m: float = DEFAULT_AREA_RADIUS_M,
        max_pairs: int = 5000,
        embed: Embedder | None = None,
    ) -> None:
        self.store = store
        self.area_radius_m = area_radius_m
        self.max_pairs = max_pairs
        self.embed = embed

    def retrieve(
        self,
        tenant: str,
        constraints: Constraints,
        place: Place | None = None,
        question: str | None = None,
        visible: DocFilter | None = None,
    ) -> RelationalResult:
        """The pairs `constraints` ask for inside the place's area; `visible`: the documents
        the caller may see (None: all), the only ones the zones name."""
        area = area_for(place, self.area_radius_m)
        result = RelationalResult(constraints, area)
        wanted = sorted({c for pair in constraints.pairs for c in pair})
        rows = self.store.pois(tenant, wanted)
        rows = [r for r, inside in zip(rows, area.contains(rows), strict=True) if inside]
        by_cell: dict[str, list[PoiRow]] = {}
        for r in rows:
            by_cell.setdefault(r.h3, []).append(r)
        # every zone here holds POIs, so it exists for any caller; only its documents vary
        profiles = {c: visible_zone(p, visible) or {} for c, p in self.store.zones(tenant, by_cell).items()}
        scores = self._zone_scores(by_cell, wanted, profiles, question)
        ranked = sorted(by_cell, key=lambda c: (-scores[c], c))
        if constraints.zones is None:
            cells = set(ranked)
        else:
            cells, result.rings = self._widen(ranked[: constraints.zones], by_cell, constraints)
        result.searched_cells = sorted(cells)
        result.zones = [
            {
                "h3": c,
                "score": round(scores[c], 4),
                "total": profiles.get(c, {}).get("total", 0),
                "categories": profiles.get(c, {}).get("categories", {}),
                "documents": profiles.get(c, {}).get("documents", []),
            }
            for c in ranked
            if c in cells
        ]
        searched = [r for c in result.searched_cells for r in by_cell[c]]
        pairs = self._pairs(searched, constraints)
        if len(pairs) > self.max_pairs:
            pairs, result.truncated = pairs[: self.max_pairs], True
            result.notes.append(f"only the {self.max_pairs} closest pairs are returned")
        result.pairs = pairs
        involved = {p.a.id for p in pairs} | {p.b.id for p in pairs}
        result.pois = sorted((r for r in searched if r.id in involved), key=lambda r: (r.category, r.id))
        return result

    def _zone_scores(
        self, by_cell: dict[str, list[PoiRow]], wanted: list[str], profiles: dict, question: str | None
    ) -> dict[str, float]:
        """Coverage of the asked categories (share present, plus a log count), blended
        with the cosine between the question and the zone profile when an embedder is set."""
        scores = {}
        for cell, members in by_cell.items():
            present = {r.category for r in members}
            scores[cell] = len(present & set(wanted)) / max(1, len(wanted)) + 0.1 * math.log1p(len(members))
        if self.embed is not None and question and by_cell:
            cells = sorted(by_cell)
            vecs = self.embed([question] + [zone_profile_text(c, profiles.get(c, {})) for c in cells])
            q, z = vecs[0], vecs[1:]
            sims = z @ q / (np.linalg.norm(z, axis=1) * np.linalg.norm(q) + 1e-9)
            for c, s in zip(cells, sims.tolist(), strict=True):
                scores[c] = 0.5 * scores[c] + 0.5 * float(s)
        return scores

    def _widen(
        self, seeds: list[str], by_cell: dict[str, list[PoiRow]], constraints: Constraints
    ) -> tuple[set[str], int]:
        """Seed zones plus H3 rings (only cells inside the area that hold candidates)
        until every pair's categories are present and a pair exists, or MAX_RING."""
        cells = set(seeds)
        for k in range(0, MAX_RING + 1):
            if k:
                cells = {n for c in seeds for n in h3.grid_disk(c, k) if n in by_cell}
            members = [r for c in cells for r in by_cell[c]]
            present = {r.category for r in members}
            if all(a in present and b in present for a, b in constraints.pairs) and self._pairs(
                members, constraints
            ):
                return cells, k
        return cells, MAX_RING

    def _pairs(self, rows: list[PoiRow], constraints: Constraints) -> list[Pair]:
        out: dict[tuple[str, str], Pair] = {}
        radius = constraints.radius_m
        jres = join_resolution(radius)
        for cat_a, cat_b in constraints.pairs:
            a = [r for r in rows if r.category == cat_a]
            b = a if cat_a == cat_b else [r for r in rows if r.category == cat_b]
            arr = lambda xs: (np.array([x.lat for x in xs]), np.array([x.lon for x in xs]))  # noqa: E731
            (alat, alon), (blat, blon) = arr(a), arr(b)
            for i, j, _ in pairs_within(alat, alon, blat, blon, radius, jres, same_set=cat_a == cat_b):
                pa, pb = a[i], b[j]
                if pa.id == pb.id:
                    continue
                d = haversine_m(pa.lat, pa.lon, pb.lat, pb.lon)  # verified, independent of the join
                if d <= radius:
                    key = (pa.id, pb.id) if cat_a != cat_b else tuple(sorted((pa.id, pb.id)))
                    out.setdefault(key, Pair(pa, pb, round(d, 2)))
        return sorted(out.values(), key=lambda p: (p.dist_m, p.a.id, p.b.id))
