"""Decide what a file is from its content, never from its name."""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass

from ingest.errors import EmptyFile, UnsupportedType


@dataclass(frozen=True)
class FileType:
    mime: str
    kind: str  # "pdf", "image", "geojson", "kml", "kmz", "osm" or "osm-pbf"


_SIGNATURES: list[tuple[bytes, FileType]] = [
    (b"%PDF-", FileType("application/pdf", "pdf")),
    (b"\x89PNG\r\n\x1a\n", FileType("image/png", "image")),
    (b"\xff\xd8\xff", FileType("image/jpeg", "image")),
    (b"II*\x00", FileType("image/tiff", "image")),
    (b"MM\x00*", FileType("image/tiff", "image")),
]
GEOJSON = FileType("application/geo+json", "geojson")
KML = FileType("application/vnd.google-earth.kml+xml", "kml")
KMZ = FileType("application/vnd.google-earth.kmz", "kmz")
OSM_XML = FileType("application/vnd.openstreetmap.data+xml", "osm")
OSM_PBF = FileType("application/x-osm-pbf", "osm-pbf")
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
# An optional UTF-8 BOM, then whitespace, XML declaration, comments or DOCTYPE, then a
# root element named kml in any namespace prefix.
_KML_ROOT = re.compile(
    rb"(?:\xef\xbb\xbf)?(?:\s|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*<(?:[\w.-]+:)?kml[\s/>]", re.S
)
_OSM_ROOT = re.compile(rb"(?:\xef\xbb\xbf)?(?:\s|<\?.*?\?>|<!--.*?-->)*<osm[\s>]", re.S)
# An OSM PBF starts with a 4-byte length, then a BlobHeader whose first field is the
# string "OSMHeader".
_OSM_PBF_HEAD = b"\x0a\x09OSMHeader"
_JSON_OBJECT = re.compile(rb"(?:\xef\xbb\xbf)?\s*\{")
# A file that says it is GeoJSON but does not parse is a broken GeoJSON, not another type.
_GEOJSON_HINT = re.compile(rb'"type"\s*:\s*"(?:FeatureCollection|Feature)"')

SUPPORTED = "PDF, PNG, JPEG, TIFF, WebP, GeoJSON, KML/KMZ or OpenStreetMap (.osm, .osm.pbf)"


def sniff(data: bytes) -> FileType:
    if not data:
        raise EmptyFile("the file is empty (0 bytes)")
    head = data[:1024]
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return FileType("image/webp", "image")
    # PDFs may carry a little junk before the header; the spec allows it within 1 KiB.
    if b"%PDF-" in head:
        return FileType("application/pdf", "pdf")
    for magic, ftype in _SIGNATURES:
        if head.startswith(magic):
            return ftype
    if _KML_ROOT.match(data[:4096]):
        return KML
    if _OSM_ROOT.match(data[:4096]):
        return OSM_XML
    if head[4:15] == _OSM_PBF_HEAD:
        return OSM_PBF
    if head.startswith(b"PK\x03\x04") and _is_kmz(data):
        return KMZ
    if _JSON_OBJECT.match(head) and _is_geojson(data):
        return GEOJSON
    raise UnsupportedType(f"unsupported file type; Carta accepts {SUPPORTED}")


def _is_kmz(data: bytes) -> bool:
    """A ZIP archive with a .kml file in it (Google Earth's KMZ)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return any(name.lower().endswith(".kml") for name in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return False


def _is_geojson(data: bytes) -> bool:
    """A JSON object whose top-level "type" is a GeoJSON type (RFC 7946); a file that
    does not parse counts when its opening names a FeatureCollection or Feature (the
    loader then refuses it as corrupt)."""
    try:
        obj = json.loads(data)  # bytes: the encoding (and a UTF-8 BOM) is detected
    except UnicodeDecodeError:
        obj = _loads(data.decode("latin-1"))  # older exports; the loader reads them the same way
    except (ValueError, RecursionError):
        return bool(_GEOJSON_HINT.search(data[:4096]))
    return isinstance(obj, dict) and obj.get("type") in GEOJSON_TYPES


def _loads(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
