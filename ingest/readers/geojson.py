"""GeoJSON (RFC 7946) decoding: the JSON text and the list of its features."""

from __future__ import annotations

from typing import Any

from ingest.errors import CorruptDocument
from ingest.readers.jsontext import load_json

__all__ = ["GEOJSON_TYPES", "load_json", "raw_features"]  # load_json: bounded, in jsontext

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
