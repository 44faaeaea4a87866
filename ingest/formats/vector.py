"""GeoJSON and KML/KMZ files as documents (and the map page OpenStreetMap files share).

A vector file becomes one page: a rendered map of its features (the page picture) and
one text block per feature ("name — key: value; ..."), boxed where the feature is drawn,
so BM25 and the dense vectors find features by their attributes. The geometries become
document geo tags (`geodata_tags`): points as POIs, polygons as areas with their outer
ring, lines at their midpoint.

Coordinates must be WGS84 longitude/latitude in degrees (GeoJSON order, as KML also
writes them); anything outside -180..180 / -90..90 is refused with `BadCoordinates`.
"""

from __future__ import annotations

import html
import io
import json
import math
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from PIL import Image

from geo.shapes import outer_ring
from ingest.errors import BadCoordinates, CorruptDocument, TooLarge, UnsupportedType
from ingest.geotagging import GeoTag
from ingest.loaders import BBox, FileType, LoadedPage, LoadOptions, PointKind, SourceFile, TextBlock
from ingest.readers.geojson import GEOJSON_TYPES, load_json, raw_features

GEOJSON = FileType("application/geo+json", "geojson")
KML = FileType("application/vnd.google-earth.kml+xml", "kml")
KMZ = FileType("application/vnd.google-earth.kmz", "kmz")
MAX_KMZ_KML_BYTES = 50 * 1024 * 1024  # the .kml inside a KMZ, uncompressed (zip bombs)
MAX_FEATURES = 20_000
MAX_VERTICES = 2_000_000
MAX_TAGS = 200  # document tags: the first features with a geometry
# Document tags go into every chunk's payload, and each ring adds an H3 covering of up to
# 400 cells (+ ancestors); later polygons are tagged at a representative point only.
MAX_AREA_RINGS = 20
MAP_WIDTH_PX = 1200
MAX_LABELS = 60  # feature names are written on the map when there are at most this many
MAX_BLOCK_CHARS = 2000
GEODATA_SOURCE = "geodata"

Position = tuple[float, float]  # (lon, lat)

# Styling and housekeeping attributes of KML exports and simplestyle: noise for search.
_STYLE_KEYS = frozenset(
    {
        "tessellate", "extrude", "visibility", "draworder", "altitudemode", "icon", "begin", "end",
        "timestamp", "styleurl", "stroke", "stroke-width", "stroke-opacity", "fill", "fill-opacity",
        "marker-color", "marker-size", "marker-symbol",
    }
)  # fmt: skip
# How deep positions sit in each geometry type's "coordinates".
_NESTING = {
    "Point": 0,
    "MultiPoint": 1,
    "LineString": 1,
    "MultiLineString": 2,
    "Polygon": 2,
    "MultiPolygon": 3,
}
_NAME_KEYS = ("name", "nome", "title", "titulo", "título", "label")
_NAME_PREFIXES = ("name", "nome", "nm_")


@dataclass
class Feature:
    name: str
    properties: dict[str, Any]  # attributes other than the name
    geometry: dict[str, Any] | None  # GeoJSON geometry, [lon, lat] positions; None if absent

    def text(self) -> str:
        """ "name — key: value; key: value" over the non-empty, non-styling attributes."""
        values = ((k, _value_text(k, v)) for k, v in self.properties.items())
        pairs = [f"{k}: {text}" for k, text in values if text]
        text = f"{self.name} — {'; '.join(pairs)}" if pairs else self.name
        return text[:MAX_BLOCK_CHARS]


@dataclass
class VectorLayer:
    kind: str  # "geojson", "kml", "kmz", "osm" or "osm-pbf"
    title: str | None
    features: list[Feature]


# --- parsing ---------------------------------------------------------------------------


def parse_geodata(data: bytes, kind: str) -> VectorLayer:
    """Features of a GeoJSON or KML/KMZ file, validated (structure, coordinate ranges, size)."""
    if kind == "kml":
        layer = _parse_kml(data)
    elif kind == "kmz":
        layer = _parse_kml(_kml_in_kmz(data))
    else:
        layer = _parse_geojson(data)
    return validated(layer, data)


def validated(layer: VectorLayer, data: bytes) -> VectorLayer:
    """`layer` when it has features and every position is a WGS84 [lon, lat] within range
    and the vertex count within MAX_VERTICES; `data` (the file) only feeds the CRS hint."""
    kind = layer.kind
    if not layer.features:
        what = {"kml": "Placemarks", "kmz": "Placemarks", "osm": "named or tagged places"}.get(
            kind.removesuffix("-pbf"), "features"
        )
        raise CorruptDocument(f"the {kind.upper()} file has no {what}")
    vertices = 0
    for index, feature in enumerate(layer.features):
        if feature.geometry is None:
            continue
        for lon, lat in _positions(feature.geometry):
            vertices += 1
            if not (-180 <= lon <= 180 and -90 <= lat <= 90):
                raise BadCoordinates(
                    f"feature {index + 1} ({feature.name!r}) has the position [{lon}, {lat}], outside "
                    "longitude -180..180 / latitude -90..90; coordinates must be WGS84 [lon, lat] in "
                    f"degrees{_crs_hint(data, kind)}"
                )
        if vertices > MAX_VERTICES:
            raise TooLarge(f"the file has more than {MAX_VERTICES:,} vertices; simplify the geometries")
    return layer


def _parse_geojson(data: bytes) -> VectorLayer:
    try:
        obj = load_json(data)
    except (ValueError, RecursionError) as exc:
        raise CorruptDocument(f"the GeoJSON is not valid JSON ({exc})") from exc
    kind = obj.get("type") if isinstance(obj, dict) else None
    if kind not in GEOJSON_TYPES:
        raise UnsupportedType(
            'the JSON is not GeoJSON (no top-level "type" FeatureCollection/Feature/geometry)'
        )
    raw = raw_features(obj)
    if len(raw) > MAX_FEATURES:
        raise TooLarge(f"the GeoJSON has {len(raw):,} features; the limit is {MAX_FEATURES:,}")
    features = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or item.get("type") != "Feature":
            raise CorruptDocument(f"GeoJSON feature {index + 1} is not a Feature object")
        props = item.get("properties") or {}
        if not isinstance(props, dict):
            raise CorruptDocument(f"GeoJSON feature {index + 1} has properties that are not an object")
        geometry = item.get("geometry")
        if geometry is not None:
            _check_geometry(geometry, index)
        name_key = _name_key(props)
        name = _clean(props[name_key]) if name_key else ""
        rest = {k: v for k, v in props.items() if k != name_key}
        features.append(Feature(name or f"feature {index + 1}", rest, geometry))
    title = obj.get("name") or obj.get("title")
    return VectorLayer("geojson", (_clean(title) or None) if isinstance(title, str) else None, features)


def _name_key(props: dict[str, Any]) -> str | None:
    """The attribute that names a feature: a usual name key, else the first text value."""
    lowered = {k.lower(): k for k in props if isinstance(k, str)}
    for key in _NAME_KEYS:
        if key in lowered and _clean(props[lowered[key]]):
            return lowered[key]
    for key in props:
        if key.lower().startswith(_NAME_PREFIXES) and _clean(props[key]):
            return key
    for key, value in props.items():
        if key.lower() not in _STYLE_KEYS and isinstance(value, str) and re.search(r"[^\W\d_]", value):
            return key
    return None


def _check_geometry(geometry: Any, index: int) -> None:
    """Raise CorruptDocument unless `geometry` is a well-formed GeoJSON geometry."""
    where = f"GeoJSON feature {index + 1}"
    if not isinstance(geometry, dict) or geometry.get("type") not in {*_NESTING, "GeometryCollection"}:
        raise CorruptDocument(f"{where} has a geometry that is not a GeoJSON geometry")
    if geometry["type"] == "GeometryCollection":
        parts = geometry.get("geometries")
        if not isinstance(parts, list):
            raise CorruptDocument(f'{where}: a GeometryCollection needs a "geometries" list')
        for part in parts:
            _check_geometry(part, index)
        return

    def check(value: Any, level: int) -> None:
        if level == 0:
            if (
                not isinstance(value, list | tuple)
                or len(value) < 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
                or not all(math.isfinite(v) for v in value)
            ):
                raise CorruptDocument(f"{where} has a position that is not [lon, lat] numbers: {value!r:.80}")
            return
        if not isinstance(value, list):
            raise CorruptDocument(f"{where} has malformed {geometry['type']} coordinates")
        for item in value:
            check(item, level - 1)

    coordinates = geometry.get("coordinates")
    if coordinates != []:  # an empty geometry is allowed (RFC 7946) and read as none
        check(coordinates, _NESTING[geometry["type"]])


def _crs_hint(data: bytes, kind: str) -> str:
    """A hint when a GeoJSON declares a projected CRS (the 2008 "crs" member)."""
    if kind != "geojson":
        return ""
    match = re.search(rb'"crs"\s*:\s*\{[^{}]*"properties"\s*:\s*\{[^{}]*"name"\s*:\s*"([^"]+)"', data[:4096])
    if match and not re.search(rb"CRS84|EPSG:?:?4326|WGS ?84", match.group(1), re.I):
        return (
            f" (the file declares the CRS {match.group(1).decode(errors='replace')}; reproject it to WGS84)"
        )
    return ""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(element: ET.Element, name: str) -> ET.Element | None:
    return next((c for c in element if _local(c.tag) == name), None)


def _child_text(element: ET.Element, name: str) -> str:
    child = _child(element, name)
    return _clean(child.text) if child is not None and child.text else ""


def _parse_kml(data: bytes) -> VectorLayer:
    if b"<!ENTITY" in data:  # entity expansion is never needed in KML; refuse it outright
        raise CorruptDocument("the KML declares XML entities, which are not accepted")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise CorruptDocument(f"the KML is not well-formed XML ({exc})") from exc
    document = next((e for e in root.iter() if _local(e.tag) in ("Document", "Folder")), None)
    title = _child_text(document, "name") if document is not None else ""
    features: list[Feature] = []
    for placemark in (e for e in root.iter() if _local(e.tag) == "Placemark"):
        if len(features) == MAX_FEATURES:
            raise TooLarge(f"the KML has more than {MAX_FEATURES:,} Placemarks")
        index = len(features)
        props: dict[str, Any] = {}
        if description := _html_text(_child_text(placemark, "description")):
            props["description"] = description
        extended = _child(placemark, "ExtendedData")
        for item in extended.iter() if extended is not None else ():
            if _local(item.tag) == "Data" and item.get("name"):
                props[item.get("name", "")] = _child_text(item, "value")
            elif _local(item.tag) == "SimpleData" and item.get("name"):
                props[item.get("name", "")] = _clean(item.text or "")
        geometry = next(
            (g for c in placemark if (g := _kml_geometry(c, index)) is not None),
            None,
        )
        name = _child_text(placemark, "name")
        features.append(Feature(name or f"feature {index + 1}", props, geometry))
    return VectorLayer("kml", title or None, features)


def _kml_in_kmz(data: bytes) -> bytes:
    """The main .kml of a KMZ archive (doc.kml by convention, else the first .kml)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = [i for i in archive.infolist() if i.filename.lower().endswith(".kml")]
            if not entries:
                raise CorruptDocument("the KMZ archive has no .kml file")
            main = next((i for i in entries if i.filename.lower() == "doc.kml"), entries[0])
            if main.file_size > MAX_KMZ_KML_BYTES:
                raise TooLarge(
                    f"the KML inside the KMZ is {main.file_size:,} bytes uncompressed; the limit is "
                    f"{MAX_KMZ_KML_BYTES:,}"
                )
            with archive.open(main) as handle:
                kml = handle.read(MAX_KMZ_KML_BYTES + 1)
    except (zipfile.BadZipFile, OSError, RuntimeError) as exc:  # RuntimeError: encrypted entries
        raise CorruptDocument(f"the KMZ archive cannot be read ({exc})") from exc
    if len(kml) > MAX_KMZ_KML_BYTES:  # the header lied about the size
        raise TooLarge(f"the KML inside the KMZ is larger than {MAX_KMZ_KML_BYTES:,} bytes")
    return kml


def _kml_coordinates(element: ET.Element | None, index: int) -> list[list[float]]:
    coords = _child(element, "coordinates") if element is not None else None
    text = re.sub(r"\s*,\s*", ",", (coords.text or "") if coords is not None else "").split()
    try:
        positions = [[float(v) for v in item.split(",")[:2]] for item in text]
    except ValueError as exc:
        raise CorruptDocument(f"KML Placemark {index + 1} has unreadable coordinates ({exc})") from exc
    if any(len(p) < 2 for p in positions) or not all(math.isfinite(v) for p in positions for v in p):
        raise CorruptDocument(f"KML Placemark {index + 1} has coordinates that are not lon,lat pairs")
    return positions


def _kml_geometry(element: ET.Element, index: int) -> dict[str, Any] | None:
    tag = _local(element.tag)
    where = f"KML Placemark {index + 1}"
    if tag == "Point":
        positions = _kml_coordinates(element, index)
        if len(positions) != 1:
            raise CorruptDocument(f"{where}: a Point needs exactly one lon,lat position")
        return {"type": "Point", "coordinates": positions[0]}
    if tag == "LineString":
        positions = _kml_coordinates(element, index)
        if len(positions) < 2:
            raise CorruptDocument(f"{where}: a LineString needs at least two positions")
        return {"type": "LineString", "coordinates": positions}
    if tag in ("Polygon", "LinearRing"):
        rings_of = (
            [element]
            if tag == "LinearRing"
            else [
                ring
                for boundary in element
                if _local(boundary.tag) in ("outerBoundaryIs", "innerBoundaryIs")
                for ring in boundary
                if _local(ring.tag) == "LinearRing"
            ]
        )
        rings = [_kml_coordinates(r, index) for r in rings_of]
        if not rings or any(len(r) < 3 for r in rings):
            raise CorruptDocument(f"{where}: a Polygon needs an outer ring of at least three positions")
        return {"type": "Polygon", "coordinates": [r if r[0] == r[-1] else [*r, r[0]] for r in rings]}
    if tag == "MultiGeometry":
        parts = [g for c in element if (g := _kml_geometry(c, index)) is not None]
        if not parts:
            return None
        types = {p["type"] for p in parts}
        if len(types) == 1 and (single := types.pop()) in ("Point", "LineString", "Polygon"):
            return {"type": f"Multi{single}", "coordinates": [p["coordinates"] for p in parts]}
        return {"type": "GeometryCollection", "geometries": parts}
    return None  # styles, names, Model, gx:Track ...: not a geometry we read


# --- geometry helpers ------------------------------------------------------------------


def _parts(geometry: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Non-empty simple parts: ("Point", [x, y]), ("LineString", [[x, y], ...]),
    ("Polygon", [ring, ...])."""
    kind = geometry["type"]
    if kind == "GeometryCollection":
        for part in geometry["geometries"]:
            yield from _parts(part)
        return
    pieces = (
        [(kind[5:], c) for c in geometry["coordinates"]]
        if kind.startswith("Multi")
        else [(kind, geometry["coordinates"])]
    )
    for simple, coords in pieces:
        if coords and (simple != "Polygon" or coords[0]):
            yield simple, coords


def _positions(geometry: dict[str, Any]) -> Iterator[Position]:
    for kind, coords in _parts(geometry):
        if kind == "Point":
            yield float(coords[0]), float(coords[1])
            continue
        for ring in coords if kind == "Polygon" else [coords]:
            for p in ring:
                yield float(p[0]), float(p[1])


def _bounds(features: list[Feature]) -> tuple[float, float, float, float] | None:
    xs, ys = [], []
    for f in features:
        if f.geometry is not None:
            for lon, lat in _positions(f.geometry):
                xs.append(lon)
                ys.append(lat)
    return (min(xs), min(ys), max(xs), max(ys)) if xs else None


# --- geo tags --------------------------------------------------------------------------


def geodata_tags(data: bytes, kind: str, limit: int = MAX_TAGS) -> list[GeoTag]:
    """Document geo tags of a GeoJSON or KML/KMZ file (see `layer_tags`)."""
    return layer_tags(parse_geodata(data, kind), limit)


def layer_tags(layer: VectorLayer, limit: int = MAX_TAGS) -> list[GeoTag]:
    """Document geo tags from the first `limit` features that have a geometry; only the
    first MAX_AREA_RINGS areas keep their outline."""
    tags: list[GeoTag] = []
    rings = 0
    for feature in layer.features:
        if feature.geometry is None or (tag := feature_tag(feature)) is None:
            continue
        if tag.ring is not None:
            rings += 1
            if rings > MAX_AREA_RINGS:
                tag.ring = None
        tags.append(tag)
        if len(tags) == limit:
            break
    return tags


def feature_tag(feature: Feature) -> GeoTag | None:
    """A point is a POI; a polygon an area tagged at a representative point with its outer
    ring; a line is tagged at its midpoint. Mixed collections use their largest kind."""
    from shapely.geometry import shape

    parts = list(_parts(feature.geometry)) if feature.geometry else []
    kinds = {k for k, _ in parts}
    if not parts:
        return None
    try:
        if "Polygon" in kinds:
            geom = {"type": "MultiPolygon", "coordinates": [c for k, c in parts if k == "Polygon"]}
            point = shape(geom).representative_point()
            return _tag(feature.name, point.y, point.x, "area", outer_ring(geom))
        if "LineString" in kinds:
            lines = [shape({"type": "LineString", "coordinates": c}) for k, c in parts if k == "LineString"]
            line = max(lines, key=lambda g: g.length)
            mid = line.interpolate(0.5, normalized=True)
            return _tag(feature.name, mid.y, mid.x, "line")
        point = shape({"type": "MultiPoint", "coordinates": [c for _, c in parts]}).representative_point()
        return _tag(feature.name, point.y, point.x, "poi")
    except Exception:  # invalid geometry (self-intersections...): fall back to the first vertex
        lon, lat = next(_positions(feature.geometry))  # type: ignore[arg-type]
        return _tag(feature.name, lat, lon, "area" if "Polygon" in kinds else "poi")


def _tag(name: str, lat: float, lon: float, kind: str, ring: list[Position] | None = None) -> GeoTag:
    return GeoTag(lat, lon, GEODATA_SOURCE, name, 1.0, ring=ring, kind=kind)


# --- the document ----------------------------------------------------------------------


class VectorDocument:
    """A vector layer as a one-page `OpenedDocument`: the map and one block per feature."""

    def __init__(self, layer: VectorLayer, options: LoadOptions) -> None:
        self.layer = layer
        self.options = options
        self.kind = layer.kind
        self.title = layer.title
        self.page_count = 1
        with_geometry = sum(f.geometry is not None for f in layer.features)
        self.warnings = (
            (
                f"only the first {MAX_TAGS} of {with_geometry:,} features are geo-tagged; "
                "all of them are searchable by text",
            )
            if with_geometry > MAX_TAGS
            else ()
        )

    def pages(self) -> Iterator[LoadedPage]:
        image, boxes = render_map(self.layer)
        blocks = [TextBlock(box, f.text()) for f, box in zip(self.layer.features, boxes, strict=True)]
        yield LoadedPage(1, image, float(image.width), float(image.height), blocks, "text")

    def close(self) -> None:
        pass


class VectorLoader:
    """GeoJSON and KML/KMZ files."""

    name = "vector"

    def sniff(self, data: bytes) -> FileType | None:
        if _KML_ROOT.match(data[:4096]):
            return KML
        if data[:4] == b"PK\x03\x04" and _is_kmz(data):
            return KMZ
        if _JSON_OBJECT.match(data[:1024]) and _is_geojson(data):
            return GEOJSON
        return None

    def claims(self, ftype: FileType, data: bytes) -> bool:
        return ftype.kind in ("geojson", "kml", "kmz")

    def open(self, data: bytes, ftype: FileType, options: LoadOptions) -> VectorDocument:
        return VectorDocument(parse_geodata(data, ftype.kind), options)

    def geo_tags(self, source: SourceFile, ftype: FileType) -> list[GeoTag]:
        return geodata_tags(source.data, ftype.kind)

    def point_kind(self, tags: list[GeoTag]) -> PointKind:
        return "map"


# An optional UTF-8 BOM, then whitespace, XML declaration, comments or DOCTYPE, then a
# root element named kml in any namespace prefix.
_KML_ROOT = re.compile(
    rb"(?:\xef\xbb\xbf)?(?:\s|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*<(?:[\w.-]+:)?kml[\s/>]", re.S
)
_JSON_OBJECT = re.compile(rb"(?:\xef\xbb\xbf)?\s*\{")
# A file that says it is GeoJSON but does not parse is a broken GeoJSON, not another type.
_GEOJSON_HINT = re.compile(rb'"type"\s*:\s*"(?:FeatureCollection|Feature)"')


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
        try:  # older exports; the loader reads them the same way
            obj = json.loads(data.decode("latin-1"))
        except (ValueError, RecursionError):
            return False
    except (ValueError, RecursionError):
        return bool(_GEOJSON_HINT.search(data[:4096]))
    return isinstance(obj, dict) and obj.get("type") in GEOJSON_TYPES


def render_map(layer: VectorLayer, width_px: int = MAP_WIDTH_PX) -> tuple[Image.Image, list[BBox]]:
    """The features drawn over a plain background with lon/lat axes, and each feature's
    box in image pixels (origin top-left; the whole picture for features without geometry)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.figure import Figure

    bounds = _bounds(layer.features) or (-180.0, -90.0, 180.0, 90.0)
    min_x, min_y, max_x, max_y = bounds
    pad_x = max((max_x - min_x) * 0.05, 0.002)
    pad_y = max((max_y - min_y) * 0.05, 0.002)
    min_x, max_x, min_y, max_y = min_x - pad_x, max_x + pad_x, min_y - pad_y, max_y + pad_y
    # Equirectangular at the mean latitude, so shapes are not squashed away from the equator.
    aspect = 1 / max(math.cos(math.radians((min_y + max_y) / 2)), 0.05)
    ratio = (max_y - min_y) * aspect / (max_x - min_x)
    height_px = int(min(max(width_px * ratio, width_px * 0.5), width_px * 1.5))
    fig = Figure(figsize=(width_px / 100, height_px / 100), dpi=100, facecolor="white")
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.08, 0.07, 0.9, 0.86), facecolor="#f4f1ea")
    polygons, holes, lines, points = [], [], [], []
    for feature in layer.features:
        for kind, coords in _parts(feature.geometry) if feature.geometry else ():
            if kind == "Point":
                points.append(coords[:2])
            elif kind == "LineString":
                if coords:
                    lines.append([p[:2] for p in coords])
            else:  # an empty ring is valid GeoJSON but nothing to draw (matplotlib raised: the job failed)
                outer, *inner = [[p[:2] for p in ring] for ring in coords] or [[]]
                if outer:
                    polygons.append(outer)
                holes.extend(ring for ring in inner if ring)
    if polygons:
        ax.add_collection(
            PolyCollection(polygons, facecolor="#9ecae1", edgecolor="#2c6e9b", lw=0.8, alpha=0.6)
        )
    if holes:
        ax.add_collection(LineCollection(holes, colors="#2c6e9b", linewidths=0.6))
    if lines:
        ax.add_collection(LineCollection(lines, colors="#c0392b", linewidths=1.4))
    if points:
        ax.scatter(
            [p[0] for p in points],
            [p[1] for p in points],
            s=14,
            c="#d35400",
            edgecolors="#5a2600",
            lw=0.5,
            zorder=3,
        )
    ax.set_xlim(min_x, max_x)
    ax.set_ylim(min_y, max_y)
    ax.set_aspect(aspect, adjustable="box")
    ax.set_xlabel("longitude (°)")
    ax.set_ylabel("latitude (°)")
    ax.grid(True, color="white", lw=0.8)
    count = len(layer.features)
    ax.set_title(f"{layer.title or layer.kind.upper()} — {count:,} feature{'s' * (count != 1)}", fontsize=11)
    tags = [feature_tag(f) if f.geometry else None for f in layer.features] if count <= MAX_LABELS else []
    for tag in tags:
        if tag is not None:
            ax.annotate(
                tag.label[:40],
                (tag.lon, tag.lat),
                fontsize=7,
                ha="center",
                va="bottom",
                xytext=(0, 4),
                textcoords="offset points",
                zorder=4,
            )
    canvas.draw()
    image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).convert("RGB")
    boxes = [_box(ax, f, image.width, image.height) for f in layer.features]
    return image, boxes


def _box(ax: Any, feature: Feature, width: int, height: int) -> BBox:
    positions = list(_positions(feature.geometry)) if feature.geometry else []
    if not positions:
        return (0.0, 0.0, float(width), float(height))
    xy = ax.transData.transform(positions)
    pad = 6.0  # a point is a marker a few pixels wide
    x0, x1 = max(float(xy[:, 0].min()) - pad, 0.0), min(float(xy[:, 0].max()) + pad, float(width))
    y0 = max(height - float(xy[:, 1].max()) - pad, 0.0)
    y1 = min(height - float(xy[:, 1].min()) + pad, float(height))
    return (x0, y0, max(x1, x0), max(y1, y0))


# --- text ------------------------------------------------------------------------------


def _clean(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _html_text(text: str) -> str:
    return _clean(html.unescape(re.sub(r"<[^>]+>", " ", text)))


def _value_text(key: str, value: Any) -> str:
    if key.lower() in _STYLE_KEYS or value is None:
        return ""
    if isinstance(value, dict | list):
        return _clean(json.dumps(value, ensure_ascii=False))[:300] if value else ""
    return _clean(value)
