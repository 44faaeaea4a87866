"""Small GeoJSON helpers (coordinates in GeoJSON order: [lon, lat])."""

from __future__ import annotations

from typing import Any


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
