"""GeoJSON (RFC 7946) decoding: the JSON text and the list of its features."""

from __future__ import annotations

import json
from typing import Any

from ingest.errors import CorruptDocument

GEOJSON_TYPES = frozenset(
    {
        "FeatureCollection",
        "Feature",
        "Point",
        "MultiPoint",
        "LineString",
        "MultiLineString",
        "Polygon",
        "MultiPolygon",
        "GeometryCollection",
    }
)


def load_json(data: bytes) -> Any:
    """The decoded JSON: UTF-8 (RFC 7946) with or without a BOM, UTF-16/32 too, and
    latin-1 for older shapefile exports. Raises ValueError or RecursionError."""
    try:
        return json.loads(data)  # bytes: the encoding (and a UTF-8 BOM) is detected
    except UnicodeDecodeError:
        return json.loads(data.decode("latin-1"))


def raw_features(obj: dict[str, Any]) -> list[Any]:
    """The feature objects of a FeatureCollection, a Feature (itself) or a bare geometry
    (wrapped in a Feature without properties), not yet checked one by one."""
    kind = obj.get("type")
    if kind == "FeatureCollection":
        features = obj.get("features")
        if not isinstance(features, list):
            raise CorruptDocument('the GeoJSON FeatureCollection has no "features" list')
        return features
    if kind == "Feature":
        return [obj]
    return [{"type": "Feature", "geometry": obj, "properties": {}}]
