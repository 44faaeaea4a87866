"""OpenStreetMap files (XML `.osm` and `.osm.pbf`) as map documents.

An OSM extract uploaded as a document becomes a map document like a GeoJSON file: the
mapped things people ask about (named places, amenities, shops, parks, roads with a
name) become features with their tags as attributes; untagged geometry nodes do not.
Closed ways with an area tag are polygons, the other ways lines. The file is read by
ingest/readers/osm.py, the reader the graph's POI datasets use too.
"""

from __future__ import annotations

import re
from typing import Any

from ingest.errors import TooLarge
from ingest.formats.vector import MAX_FEATURES, Feature, VectorDocument, VectorLayer, layer_tags, validated
from ingest.geotagging import GeoTag
from ingest.loaders import FileType, LoadOptions, PointKind, SourceFile
from ingest.readers.osm import OsmElement, read_osm_elements

OSM_XML = FileType("application/vnd.openstreetmap.data+xml", "osm")
OSM_PBF = FileType("application/x-osm-pbf", "osm-pbf")
# Tags that make an unnamed node or way worth a feature of its own.
POI_KEYS = (
    "amenity",
    "shop",
    "tourism",
    "leisure",
    "historic",
    "office",
    "healthcare",
    "public_transport",
    "railway",
    "aeroway",
    "natural",
    "man_made",
    "emergency",
    "craft",
    "sport",
)
# A closed way with one of these is an area (a park, a building), not a ring road.
AREA_KEYS = frozenset({"building", "landuse", "leisure", "amenity", "natural", "place", "tourism", "shop"})
_SKIPPED_TAGS = frozenset({"source", "created_by", "fixme", "note"})
_OSM_ROOT = re.compile(rb"(?:\xef\xbb\xbf)?(?:\s|<\?.*?\?>|<!--.*?-->)*<osm[\s>]", re.S)
# An OSM PBF starts with a 4-byte length, then a BlobHeader whose first field is the
# string "OSMHeader".
_OSM_PBF_HEAD = b"\x0a\x09OSMHeader"


class OsmLoader:
    """OSM XML and PBF extracts; more than MAX_FEATURES places is TooLarge (such an
    extract belongs in a POI dataset)."""

    name = "osm"

    def sniff(self, data: bytes) -> FileType | None:
        if _OSM_ROOT.match(data[:4096]):
            return OSM_XML
        if data[4:15] == _OSM_PBF_HEAD:
            return OSM_PBF
        return None

    def claims(self, ftype: FileType, data: bytes) -> bool:
        return ftype.kind in ("osm", "osm-pbf")

    def open(self, data: bytes, ftype: FileType, options: LoadOptions) -> VectorDocument:
        return VectorDocument(osm_layer(data, ftype.kind), options)

    def geo_tags(self, source: SourceFile, ftype: FileType) -> list[GeoTag]:
        return layer_tags(osm_layer(source.data, ftype.kind))

    def point_kind(self, tags: list[GeoTag]) -> PointKind:
        return "map"


def osm_layer(data: bytes, kind: str, limit: int = MAX_FEATURES) -> VectorLayer:
    """The interesting nodes and ways of an OSM file as a validated vector layer."""
    features: list[Feature] = []
    for element in read_osm_elements(data, pbf=kind == "osm-pbf"):
        feature = _feature(element)
        if feature is None:
            continue
        if len(features) == limit:
            raise TooLarge(
                f"the OpenStreetMap file has more than {limit:,} named or tagged places; upload a smaller "
                "extract as a document, or load it as a POI dataset"
            )
        features.append(feature)
    return validated(VectorLayer(kind, None, features), data)


def _feature(element: OsmElement) -> Feature | None:
    tags = element.tags
    if element.type == "node":
        if not _interesting(tags) or not element.coords:
            return None
        lon, lat = element.coords[0]
        geometry: dict[str, Any] = {"type": "Point", "coordinates": [lon, lat]}
    else:
        if not (_interesting(tags) or ("highway" in tags and "name" in tags)):
            return None
        coords = [[lon, lat] for lon, lat in element.coords]
        if len(coords) < 2:
            return None
        closed = len(coords) >= 4 and coords[0] == coords[-1]
        if closed and (AREA_KEYS & tags.keys() or tags.get("area") == "yes"):
            geometry = {"type": "Polygon", "coordinates": [coords]}
        else:
            geometry = {"type": "LineString", "coordinates": coords}
    name = _name(element.type, element.id, tags)
    return Feature(name, _properties(element.type, element.id, tags), geometry)


def _interesting(tags: dict[str, str]) -> bool:
    return "name" in tags or any(k in tags for k in POI_KEYS)


def _name(kind: str, osm_id: int, tags: dict[str, str]) -> str:
    if tags.get("name"):
        return tags["name"]
    key = next((k for k in (*POI_KEYS, "highway", "building") if k in tags), None)
    return f"{key}={tags[key]} ({kind} {osm_id})" if key else f"{kind} {osm_id}"


def _properties(kind: str, osm_id: int, tags: dict[str, str]) -> dict[str, Any]:
    props: dict[str, Any] = {"osm_id": f"{kind}/{osm_id}"}
    props.update({k: v for k, v in tags.items() if k != "name" and k not in _SKIPPED_TAGS})
    return props
