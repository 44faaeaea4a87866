"""OpenStreetMap files (XML `.osm` and `.osm.pbf`) as vector layers.

An OSM extract uploaded as a document becomes a map document like a GeoJSON file: the
mapped things people ask about (named places, amenities, shops, parks, roads with a
name) become features with their tags as attributes; untagged geometry nodes do not.
Ways get their node locations (pyosmium's location index): closed ways with an area
tag are polygons, the others lines. Relations (multipolygons, routes) are not read.
"""

from __future__ import annotations

from typing import Any

import osmium

from ingest.errors import CorruptDocument, TooLarge

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


class _Collector(osmium.SimpleHandler):
    """Collects (name, properties, GeoJSON geometry) for interesting nodes and ways."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.items: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self.too_many = False
        self.title: str | None = None

    def _add(self, item: tuple[str, dict[str, Any], dict[str, Any]]) -> None:
        if len(self.items) >= self.limit:
            self.too_many = True
            return
        self.items.append(item)

    def node(self, n: Any) -> None:
        tags = {t.k: t.v for t in n.tags}
        if not tags or not _interesting(tags) or not n.location.valid():
            return
        geometry = {"type": "Point", "coordinates": [n.location.lon, n.location.lat]}
        self._add((_name("node", n.id, tags), _properties("node", n.id, tags), geometry))

    def way(self, w: Any) -> None:
        tags = {t.k: t.v for t in w.tags}
        if not tags or not (_interesting(tags) or ("highway" in tags and "name" in tags)):
            return
        coords = [[nd.lon, nd.lat] for nd in w.nodes if nd.location.valid()]
        if len(coords) < 2:
            return
        closed = len(coords) >= 4 and coords[0] == coords[-1]
        if closed and (AREA_KEYS & tags.keys() or tags.get("area") == "yes"):
            geometry: dict[str, Any] = {"type": "Polygon", "coordinates": [coords]}
        else:
            geometry = {"type": "LineString", "coordinates": coords}
        self._add((_name("way", w.id, tags), _properties("way", w.id, tags), geometry))


def read_osm(data: bytes, pbf: bool, limit: int) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, attributes, GeoJSON geometry) of the interesting nodes and ways, in file order.
    More than `limit` of them is TooLarge (such an extract belongs in a POI dataset)."""
    collector = _Collector(limit)
    try:
        collector.apply_buffer(data, "pbf" if pbf else "osm", locations=True)
    except RuntimeError as exc:
        raise CorruptDocument(f"the OpenStreetMap file cannot be read ({exc})") from exc
    if collector.too_many:
        raise TooLarge(
            f"the OpenStreetMap file has more than {limit:,} named or tagged places; upload a smaller "
            "extract as a document, or load it as a POI dataset"
        )
    return collector.items
