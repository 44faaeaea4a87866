"""OpenStreetMap files (XML `.osm` and `.osm.pbf`) as a stream of tagged nodes and ways.

pyosmium resolves the node locations of ways (its location index); relations
(multipolygons, routes) are not read, and neither are untagged nodes, which only carry
the geometry of ways.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import osmium

from ingest.errors import CorruptDocument

Position = tuple[float, float]  # (lon, lat) in degrees, GeoJSON order


@dataclass(frozen=True)
class OsmElement:
    """A tagged node or way, e.g. OsmElement("node", 42, {"amenity": "school"}, ((-34.9, -8.05),)).

    `coords` holds the node's position, or the positions of the way's nodes whose location
    the file gives (a clipped extract misses some); empty for a node without a location."""

    type: Literal["node", "way"]
    id: int
    tags: dict[str, str]
    coords: tuple[Position, ...]


def read_osm_elements(data: bytes, *, pbf: bool) -> Iterator[OsmElement]:
    """The tagged nodes and ways of an OSM file, in file order (relations and changesets
    are not read: a tagged <changeset> had no is_node and answered 500). Every parse error
    is a CorruptDocument: libosmium raises RuntimeError, ValueError for an id like "x" and
    InvalidLocationError (no RuntimeError) for a lat like "" or "nan"; the last two were 500s."""
    source = osmium.io.FileBuffer(data, "pbf" if pbf else "osm")
    try:
        for obj in osmium.FileProcessor(source, osmium.osm.NODE | osmium.osm.WAY).with_locations():
            if not len(obj.tags):
                continue
            if obj.is_node():
                loc = obj.location
                coords = ((loc.lon, loc.lat),) if loc.valid() else ()
                yield OsmElement("node", obj.id, dict(obj.tags), coords)
            elif obj.is_way():
                positions = tuple((n.location.lon, n.location.lat) for n in obj.nodes if n.location.valid())
                yield OsmElement("way", obj.id, dict(obj.tags), positions)
    except (RuntimeError, ValueError, osmium.InvalidLocationError) as exc:
        raise CorruptDocument(f"the OpenStreetMap file cannot be read ({exc})") from exc
