"""Geo filters of /v1/search and /v1/ask, turned into engine conditions.

Points are matched exactly (`location` within a radius, box or polygon); areas (map
footprints, neighbourhood polygons) are matched by H3 covering overlap, so a map whose
footprint meets the searched circle is found even when its centre lies outside.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import h3
from shapely import contains_xy
from shapely.geometry import Polygon

from geo.coordinates import valid_latlon
from geo.distance import haversine_m
from geo.gazetteer import Gazetteer, PlaceMatch
from geo.h3tags import (
    AREA_FIELD,
    AREA_UP_FIELD,
    MAX_QUERY_CELLS,
    MAX_QUERY_TOKENS,
    area_cells,
    area_query,
    circle_cells,
    distinct_cells,
    is_h3_cell,
    polygon_area_km2,
    token_count,
    tokens_for_cells,
)
from geo.shapes import outer_ring
from index.types import Filter, GeoBox, GeoCondition, GeoPolygon, GeoRadius
from service.errors import GeoFilterError

DEFAULT_PLACE_RADIUS_M = 10_000.0
STATE_RADIUS_M = 300_000.0  # states have no outline in the gazetteer: a wide circle around the centre
# A filter polygon's vertices: a drawn area or a neighbourhood outline has hundreds; each
# vertex is tested against every covering cell and the store's points.
MAX_POLYGON_VERTICES = 10_000


@dataclass
class GeoSpec:
    """One geo filter: a point + radius, a bbox, a GeoJSON polygon, H3 cells or a place name."""

    lat: float | None = None
    lon: float | None = None
    radius_m: float | None = None
    bbox: list[float] | None = None  # [min_lon, min_lat, max_lon, max_lat]
    polygon: dict[str, Any] | None = None  # GeoJSON Polygon geometry, [lon, lat] pairs
    h3: list[str] | None = None
    place: str | None = None


@dataclass
class ResolvedGeo:
    """What a filter or prior resolved to; reported back in the response."""

    kind: str  # "radius", "bbox", "polygon", "h3", "place"
    conditions: list[GeoCondition | Filter]
    description: dict[str, Any]
    # where a place is and how far it reaches, for the ranking priors (decay, hashed H3);
    # None for countries, which are matched by code only
    center: tuple[float, float] | None = None  # lat, lon
    reach_m: float = DEFAULT_PLACE_RADIUS_M


def point_test(geo: ResolvedGeo) -> Callable[[float, float], bool] | None:
    """Whether a point (lat, lon) is inside the filter, for answers computed from POI data
    (graph/area_view.py), which never go through the engine's conditions: the filter's
    radius, box or polygon exactly, its H3 cells by containment. None for a country (pages
    match it by the countries tagged on them; a POI has no country), meaning no restriction."""
    for condition in geo.conditions:
        if isinstance(condition, GeoRadius):
            lat0, lon0, radius = condition.lat, condition.lon, condition.radius_m
            return lambda lat, lon: haversine_m(lat0, lon0, lat, lon) <= radius
        if isinstance(condition, GeoBox):
            box = condition
            return lambda lat, lon: box.min_lat <= lat <= box.max_lat and box.min_lon <= lon <= box.max_lon
        if isinstance(condition, GeoPolygon):
            shape = Polygon(condition.ring)
            return lambda lat, lon: bool(contains_xy(shape, lon, lat))
    if geo.kind == "h3":
        cells = set(geo.description["h3"])
        resolutions = sorted({h3.get_resolution(c) for c in cells})
        return lambda lat, lon: any(h3.latlng_to_cell(lat, lon, r) in cells for r in resolutions)
    return None


def _area_conditions(cells: list[str]) -> list[Filter]:
    query = area_query(cells)
    return [Filter({AREA_FIELD: query[AREA_FIELD]}), Filter({AREA_UP_FIELD: query[AREA_UP_FIELD]})]


def _radius(lat: float, lon: float, radius_m: float) -> list[GeoCondition | Filter]:
    return [GeoRadius("location", lat, lon, radius_m), *_area_conditions(circle_cells(lat, lon, radius_m))]


def _ring(ring: list[tuple[float, float]]) -> list[GeoCondition | Filter]:
    return [GeoPolygon("location", tuple(ring)), *_area_conditions(area_cells(ring))]


def resolve(spec: GeoSpec, gazetteer: Gazetteer | None, country_hint: str | None = None) -> ResolvedGeo:
    given = [k for k in ("radius", "bbox", "polygon", "h3", "place") if _has(spec, k)]
    if len(given) != 1:
        raise GeoFilterError("give exactly one of: lat+lon+radius_m, bbox, polygon, h3, place")
    kind = given[0]
    if kind == "radius":
        if spec.lat is None or spec.lon is None or spec.radius_m is None:
            raise GeoFilterError("a radius filter needs lat, lon and radius_m (metres)")
        lat, lon, radius = float(spec.lat), float(spec.lon), float(spec.radius_m)
        if not valid_latlon(lat, lon):
            raise GeoFilterError(f"({lat}, {lon}) is not a valid latitude/longitude")
        if not 0 < radius <= 2_000_000:
            raise GeoFilterError("radius_m must be between 0 and 2,000,000 metres")
        return ResolvedGeo(kind, _radius(lat, lon, radius), {"lat": lat, "lon": lon, "radius_m": radius})
    if kind == "bbox":
        min_lon, min_lat, max_lon, max_lat = _bbox(spec.bbox)
        box: list[GeoCondition | Filter] = [GeoBox("location", min_lon, min_lat, max_lon, max_lat)]
        ring = [
            (min_lon, min_lat),
            (max_lon, min_lat),
            (max_lon, max_lat),
            (min_lon, max_lat),
            (min_lon, min_lat),
        ]
        return ResolvedGeo(
            kind, box + _area_conditions(area_cells(ring)), {"bbox": [min_lon, min_lat, max_lon, max_lat]}
        )
    if kind == "polygon":
        ring = _polygon_ring(spec.polygon)
        return ResolvedGeo(kind, _ring(ring), {"polygon": spec.polygon})
    if kind == "h3":
        cells = h3_cells(spec.h3)
        by_field: dict[str, list[str]] = {}
        for token in tokens_for_cells(cells):
            by_field.setdefault(f"h3_r{h3.get_resolution(token)}", []).append(token)
        conditions: list[GeoCondition | Filter] = [
            Filter({name: tokens}) for name, tokens in by_field.items()
        ]
        return ResolvedGeo(kind, conditions + _area_conditions(cells), {"h3": cells})
    match = place_match(spec.place or "", gazetteer, country_hint)
    if match is None:
        raise GeoFilterError(f"place {spec.place!r} is not in the gazetteers")
    return resolve_place(match, spec.radius_m)


def h3_cells(values: list[str] | None) -> list[str]:
    """The query's H3 cells, validated and bounded before anything is expanded: at most
    MAX_QUERY_CELLS ids, all valid, expanding to at most MAX_QUERY_TOKENS res-7+ tokens
    (coarse cells match the stored point tokens through their children). Cells inside
    another listed cell are dropped. Raises GeoFilterError with a sentence naming the limit."""
    values = list(values or [])
    if not values:
        raise GeoFilterError("an H3 filter needs at least one H3 cell id")
    if len(values) > MAX_QUERY_CELLS:
        raise GeoFilterError(
            f"an H3 filter takes at most {MAX_QUERY_CELLS} cells; this one has {len(values):,}"
        )
    bad = [v for v in values if not is_h3_cell(v)]
    if bad:
        shown = ", ".join(repr(v)[:40] for v in bad[:5])
        raise GeoFilterError(
            f"not valid H3 cell ids: {shown}" + (f" (and {len(bad) - 5} more)" if len(bad) > 5 else "")
        )
    cells = distinct_cells(values)
    if (needed := token_count(cells)) > MAX_QUERY_TOKENS:
        raise GeoFilterError(
            f"the H3 cells expand to {needed:,} resolution-7 cells (a coarse cell counts all its "
            f"children); the limit is {MAX_QUERY_TOKENS:,}, about 20 resolution-3 cells: "
            "use fewer or finer cells, or a bbox or polygon filter"
        )
    return cells


def place_match(name: str, gazetteer: Gazetteer | None, country_hint: str | None = None) -> PlaceMatch | None:
    if gazetteer is None or not name.strip():
        return None
    matches = gazetteer.lookup(name.strip(), country_hint=country_hint)
    return matches[0] if matches else None


def resolve_place(match: PlaceMatch, radius_m: float | None = None) -> ResolvedGeo:
    place = match.place
    ring = outer_ring(place.geometry)
    if place.kind == "country" and place.country:  # exact: pages tagged with places in that country
        description = {
            "place": place.name,
            "place_id": place.id,
            "country": place.country,
            "lat": place.lat,
            "lon": place.lon,
            "source": place.source,
            "confidence": round(match.confidence, 3),
        }
        return ResolvedGeo("place", [Filter({"countries": [place.country]})], description)
    description = {
        "place": place.name,
        "place_id": place.id,
        "lat": place.lat,
        "lon": place.lon,
        "source": place.source,
        "confidence": round(match.confidence, 3),
    }
    center = (place.lat, place.lon)
    if ring and radius_m is None:
        reach = max(math.sqrt(polygon_area_km2(ring) / math.pi) * 1000, 500.0)  # an equal-area circle
        return ResolvedGeo("place", _ring(ring), {**description, "area": True}, center, reach)
    radius = radius_m or (STATE_RADIUS_M if place.kind == "state" else DEFAULT_PLACE_RADIUS_M)
    return ResolvedGeo(
        "place", _radius(place.lat, place.lon, radius), {**description, "radius_m": radius}, center, radius
    )


def _has(spec: GeoSpec, kind: str) -> bool:
    if kind == "radius":
        return (
            spec.lat is not None or spec.lon is not None or (spec.radius_m is not None and spec.place is None)
        )
    return getattr(spec, kind) not in (None, [], "")


def _bbox(values: list[float] | None) -> tuple[float, float, float, float]:
    if not values or len(values) != 4:
        raise GeoFilterError("bbox must be [min_lon, min_lat, max_lon, max_lat]")
    min_lon, min_lat, max_lon, max_lat = (float(v) for v in values)
    if (
        not (valid_latlon(min_lat, min_lon) and valid_latlon(max_lat, max_lon))
        or min_lon >= max_lon
        or (min_lat >= max_lat)
    ):
        raise GeoFilterError("bbox must be [min_lon, min_lat, max_lon, max_lat] with min < max, in degrees")
    return min_lon, min_lat, max_lon, max_lat


def _polygon_ring(geometry: dict[str, Any] | None) -> list[tuple[float, float]]:
    ring = outer_ring(geometry)
    if not ring or len(ring) < 4 or ring[0] != ring[-1]:
        raise GeoFilterError("polygon must be a GeoJSON Polygon with a closed ring of [lon, lat] pairs")
    if len(ring) > MAX_POLYGON_VERTICES:
        raise GeoFilterError(
            f"the polygon has {len(ring):,} vertices; the limit is {MAX_POLYGON_VERTICES:,}: "
            "simplify it, or use a bbox filter"
        )
    if not all(valid_latlon(lat, lon) for lon, lat in ring):
        raise GeoFilterError("polygon coordinates must be [lon, lat] in degrees")
    return ring
