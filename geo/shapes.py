"""GeoJSON geometry helpers, and the conversions between H3 cells and GeoJSON rings.

GeoJSON positions are [lon, lat]; h3 takes and returns (lat, lon). The swap between
the two happens here and nowhere else."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import h3


def outer_ring(geometry: dict[str, Any] | None) -> list[tuple[float, float]] | None:
    """The largest outer ring of a Polygon or MultiPolygon as (lon, lat) pairs, else None."""
    if not geometry:
        return None
    try:
        if geometry.get("type") == "Polygon":
            rings = [geometry["coordinates"][0]]
        elif geometry.get("type") == "MultiPolygon":
            rings = [poly[0] for poly in geometry["coordinates"]]
        else:
            return None
        return [(float(x), float(y)) for x, y, *_ in max(rings, key=len)]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None


def cell_to_geojson_ring(cell: str, *, digits: int | None = None) -> list[list[float]]:
    """The cell's outline as a closed GeoJSON ring of [lon, lat] positions (the first
    vertex repeated at the end), each coordinate rounded to `digits` when given."""
    if digits is None:
        ring = [[lon, lat] for lat, lon in h3.cell_to_boundary(cell)]
    else:
        ring = [[round(lon, digits), round(lat, digits)] for lat, lon in h3.cell_to_boundary(cell)]
    return ring + ring[:1]


def cell_to_geojson_polygon(cell: str, *, digits: int | None = None) -> dict[str, Any]:
    """The cell as a GeoJSON Polygon geometry: {"type": "Polygon", "coordinates": [ring]}."""
    return {"type": "Polygon", "coordinates": [cell_to_geojson_ring(cell, digits=digits)]}


def geojson_ring_to_latlng_poly(ring_lonlat: Sequence[tuple[float, float]]) -> h3.LatLngPoly:
    """A GeoJSON ring of (lon, lat) pairs as the h3 polygon (lat, lon) that
    `h3.polygon_to_cells` covers."""
    return h3.LatLngPoly([(lat, lon) for lon, lat in ring_lonlat])
