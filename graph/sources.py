"""Read points of interest (and roads) from OSM PBF/XML, Overpass JSON, GeoJSON and CSV.

Every reader returns a `Parsed` with POIs keyed by a stable source id (`osm:n123`,
`osm:w45`, or `<dataset>:<feature id or row>`), already normalised to one category and
deduplicated by that id. The file type is sniffed from the content, not the name. The
files are parsed by the readers the document formats use too (ingest/readers/); this
module turns their records into POIs and roads.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.attributes import flatten
from graph.categories import normalise_name, normalise_tags
from graph.errors import PoiFormatError, TooManyPois
from ingest.errors import CorruptDocument, JsonTooDeep
from ingest.readers.delimited import DELIMITERS, read_rows
from ingest.readers.encoding import NotText, decode_text
from ingest.readers.geojson import load_json, raw_features
from ingest.readers.osm import read_osm_elements

# Property values of one dataset (features x properties) and columns of one CSV: each
# value becomes a Python object, a typed attribute and stored JSON (about 9 us each), so an
# 8 MB CSV of 200 rows x 20,000 columns took 36 s and 420 MB of one request; the upload
# limit allows twelve times that. 200,000 POIs with 15 properties each fit.
MAX_DATASET_VALUES = 3_000_000
MAX_CSV_COLUMNS = 5_000
MAX_CSV_LINE_CHARS = 1_000_000  # the csv module builds a row's every field at once
ROAD_KINDS = frozenset(
    "motorway trunk primary secondary tertiary unclassified residential service living_street pedestrian "
    "footway cycleway path track steps motorway_link trunk_link primary_link secondary_link "
    "tertiary_link".split()
)
_NAME_KEYS = ("name", "nome", "Name", "NAME", "Nome", "NOME", "Escola", "title", "label")
_LAT_KEYS = ("lat", "latitude", "y", "lat_wgs84")
_LON_KEYS = ("lon", "lng", "long", "longitude", "x", "lon_wgs84")
_ID_KEYS = ("id", "osm_id", "@id", "ID", "fid", "gid")
_CATEGORY_KEYS = ("category", "categoria", "amenity", "type", "tipo", "kind")


@dataclass(frozen=True)
class Poi:
    """A feature at one point; `attrs`: its typed properties (graph/attributes.py);
    `geometry`: its GeoJSON geometry when it is not a point (a polygon layer's feature)."""

    id: str
    name: str
    category: str
    lat: float
    lon: float
    attrs: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    geometry: dict[str, Any] | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class Road:
    id: str
    name: str
    kind: str
    coords: tuple[tuple[float, float], ...]  # (lat, lon) vertices


@dataclass
class Parsed:
    pois: list[Poi] = field(default_factory=list)
    roads: list[Road] = field(default_factory=list)
    duplicates: int = 0
    skipped: int = 0  # features without a usable location
    kind: str = ""  # what `sniff` found: pbf, osm-xml, overpass, geojson, csv


def _valid(lat: float, lon: float) -> bool:
    return math.isfinite(lat) and math.isfinite(lon) and -90 <= lat <= 90 and -180 <= lon <= 180


def _collect(pois: Iterable[Poi | None], roads: Iterable[Road] = ()) -> Parsed:
    out = Parsed(roads=list(roads))
    seen: set[str] = set()
    for poi in pois:
        if poi is None:
            out.skipped += 1
        elif poi.id in seen:
            out.duplicates += 1
        else:
            seen.add(poi.id)
            out.pois.append(poi)
    return out


def sniff(data: bytes) -> str:
    """'pbf', 'osm-xml', 'overpass', 'geojson' or 'csv' from the first bytes."""
    head = data[:4096].lstrip()
    if data[4:14] == b"\n\tOSMHeader" or b"OSMHeader" in data[:32]:
        return "pbf"
    if head.startswith(b"<?xml") or head.startswith(b"<osm"):
        if b"<osm" not in data[:65536]:
            raise PoiFormatError("an XML file that is not OSM XML (no <osm> element)")
        return "osm-xml"
    if head.startswith(b"{"):
        try:
            doc = load_json(data, what="the JSON file")
        except JsonTooDeep:
            raise  # the depth limit's own answer (422), not "unsupported file"
        except (ValueError, RecursionError) as exc:
            raise PoiFormatError(f"invalid JSON ({exc})") from exc
        if isinstance(doc, dict) and "elements" in doc:
            return "overpass"
        if isinstance(doc, dict) and doc.get("type") in ("FeatureCollection", "Feature"):
            return "geojson"
        raise PoiFormatError("JSON that is neither Overpass JSON (elements) nor GeoJSON")
    try:  # a CSV in UTF-8, UTF-16 or Windows-1252 (ingest/readers/encoding.py)
        first = decode_text(data[:4096], partial=True).splitlines()[0]
    except NotText as exc:
        raise PoiFormatError(f"not a POI file: {exc}") from exc
    except (ValueError, IndexError) as exc:
        raise PoiFormatError("not a POI file: expected OSM PBF/XML, Overpass JSON, GeoJSON or CSV") from exc
    cols = {c.strip().strip('"').lower() for c in first.replace(";", ",").split(",")}
    if cols & set(_LAT_KEYS) and cols & set(_LON_KEYS):
        return "csv"
    raise PoiFormatError("not a POI file: expected OSM PBF/XML, Overpass JSON, GeoJSON or CSV with lat/lon")


def parse(data: bytes, dataset: str, default_category: str | None = None) -> Parsed:
    """POIs (and roads, for OSM) of one upload; `Parsed.kind` says what the file was."""
    kind = sniff(data)
    if kind in ("pbf", "osm-xml"):
        parsed = read_osm(data, kind)
    elif kind == "overpass":
        parsed = read_overpass(load_json(data))
    elif kind == "geojson":
        parsed = read_geojson(load_json(data), dataset, default_category)
    else:
        try:
            text = decode_text(data)
        except UnicodeDecodeError as exc:  # a BOM's UTF-16/32 broken further on
            raise PoiFormatError(
                f"the CSV is not {exc.encoding.upper()} text as its byte order mark says "
                f"(byte {exc.start:,} is not): save it as UTF-8"
            ) from exc
        except NotText as exc:
            raise PoiFormatError(f"the CSV cannot be read as text ({exc})") from exc
        parsed = read_csv(text, dataset, default_category)
    parsed.kind = kind
    return parsed


# --------------------------------------------------------------------------- OSM


def _osm_poi(prefix: str, ident: int | str, tags: Mapping[str, str], lat: float, lon: float) -> Poi | None:
    category = normalise_tags(tags)
    if category is None or not _valid(lat, lon):
        return None
    return Poi(f"osm:{prefix}{ident}", tags.get("name", ""), category, lat, lon, flatten(tags))


def read_osm(data: bytes, kind: str = "pbf") -> Parsed:
    """Tagged nodes and ways of an OSM PBF or XML file. A way POI sits at the mean of its
    distinct vertices; ways tagged highway=<road kind> become roads."""
    pois: list[Poi | None] = []
    roads: list[Road] = []
    try:
        for element in read_osm_elements(data, pbf=kind == "pbf"):
            tags = element.tags
            if element.type == "node":
                if normalise_tags(tags) is not None:
                    lon, lat = element.coords[0] if element.coords else (math.nan, math.nan)
                    pois.append(_osm_poi("n", element.id, tags, lat, lon))
                continue
            coords = [(lat, lon) for lon, lat in element.coords]
            if not coords:
                continue
            if tags.get("highway") in ROAD_KINDS:
                if len(coords) < 2:  # clipped extract: a road needs two known vertices
                    continue
                roads.append(Road(f"osm:w{element.id}", tags.get("name", ""), tags["highway"], tuple(coords)))
            elif normalise_tags(tags) is not None:
                distinct = coords[:-1] if len(coords) > 1 and coords[0] == coords[-1] else coords
                lat = sum(c[0] for c in distinct) / len(distinct)
                lon = sum(c[1] for c in distinct) / len(distinct)
                pois.append(_osm_poi("w", element.id, tags, lat, lon))
    except CorruptDocument as exc:
        raise PoiFormatError(f"unreadable OSM {kind} file ({exc.__cause__ or exc})") from exc
    return _collect(pois, roads)


def read_overpass(doc: dict[str, Any]) -> Parsed:
    """Overpass API JSON: nodes (lat/lon), ways/relations with `center` or `geometry`. The
    JSON is the uploader's: an element that is not an object with an id and its tags, or
    whose position is not numbers in range, is skipped (counted) like a GeoJSON feature
    without a location; an Overpass element whose "lat" was "x" or whose tag value was a
    list once answered 500."""
    elements = doc.get("elements")
    if not isinstance(elements, list):
        raise PoiFormatError('Overpass JSON needs "elements" to be a list of objects')
    pois: list[Poi | None] = []
    roads: list[Road] = []
    prefixes = {"node": "n", "way": "w", "relation": "r"}
    for el in elements:
        if not isinstance(el, dict) or not isinstance(el.get("type"), str):
            pois.append(None)
            continue
        tags = _overpass_tags(el.get("tags"))
        prefix = prefixes.get(el["type"])
        if prefix is None or not tags:
            continue
        ident = el.get("id")
        if not isinstance(ident, (int, str)) or isinstance(ident, bool):
            pois.append(None)
            continue
        raw_geometry = el.get("geometry")
        points = [_overpass_point(g) for g in raw_geometry] if isinstance(raw_geometry, list) else []
        geometry = [g for g in points if g is not None]
        if prefix == "w" and tags.get("highway") in ROAD_KINDS and geometry:
            roads.append(Road(f"osm:w{ident}", tags.get("name", ""), tags["highway"], tuple(geometry)))
            continue
        if normalise_tags(tags) is None:
            continue
        if "lat" in el and "lon" in el:
            point = _overpass_point(el)
        elif el.get("center"):
            point = _overpass_point(el["center"])
        elif geometry:
            point = (sum(g[0] for g in geometry) / len(geometry), sum(g[1] for g in geometry) / len(geometry))
        else:
            point = None
        pois.append(_osm_poi(prefix, ident, tags, *point) if point else None)
    return _collect(pois, roads)


def _overpass_tags(tags: Any) -> dict[str, str]:
    """An element's tags as OSM has them, strings to strings (numbers written out); tags
    of any other shape are dropped."""
    if not isinstance(tags, dict):
        return {}
    return {
        str(k): str(v)
        for k, v in tags.items()
        if isinstance(v, (str, int, float)) and not isinstance(v, bool)
    }


def _overpass_point(value: Any) -> tuple[float, float] | None:
    """(lat, lon) of an Overpass {"lat": ..., "lon": ...} object, or None unless both are
    numbers in range."""
    if not isinstance(value, dict):
        return None
    try:
        lat, lon = float(value["lat"]), float(value["lon"])
    except (KeyError, TypeError, ValueError):
        return None
    return (lat, lon) if _valid(lat, lon) else None


# --------------------------------------------------------------------------- GeoJSON / CSV


def _pick(props: Mapping[str, Any], keys: Iterable[str]) -> Any:
    keys = tuple(keys)
    for key in keys:  # exact names first: no lower-cased copy of the properties needed
        if props.get(key) not in (None, ""):
            return props[key]
    lowered = {str(k).lower(): v for k, v in props.items()}
    for key in keys:
        if lowered.get(key.lower()) not in (None, ""):
            return lowered[key.lower()]
    return None


def _category(props: Mapping[str, Any], default: str | None) -> str | None:
    """The category an OSM-style tag or a category column gives, else `default`."""
    scalars = {k: str(v) for k, v in props.items() if isinstance(v, str | int) and not isinstance(v, bool)}
    tagged = normalise_tags(scalars)
    if tagged:
        return tagged
    value = _pick(scalars, _CATEGORY_KEYS)
    if value not in (None, ""):
        return normalise_name(str(value))
    return normalise_name(default) if default else None


def category_of_file(dataset: str) -> str:
    """The category of features no property categorises: the kind of place the file name
    names ("recife_escolas_municipais" -> school), else the file name itself, else
    "feature"."""
    from graph.parser import find_categories  # the question words: one vocabulary for both

    found = find_categories(dataset.replace("_", " ").replace("-", " "))
    if found:
        return found[0][1]
    return normalise_name(dataset.replace("_", " ")) if any(ch.isalpha() for ch in dataset) else "feature"


_GEOGRAPHIC_CRS = ("crs84", "4326", "4674", "4258", "4979", "wgs84", "wgs 84")


def _crs_name(doc: Mapping[str, Any]) -> str | None:
    """The CRS a (pre-RFC 7946) GeoJSON declares when it is not a geographic lon/lat one."""
    crs = doc.get("crs")
    if not isinstance(crs, Mapping):
        return None
    props = crs.get("properties")
    name = str(props.get("name") or props.get("code") or "") if isinstance(props, Mapping) else ""
    return None if not name or any(g in name.lower() for g in _GEOGRAPHIC_CRS) else name


def _polygonal(geom: Any) -> Any:
    """A valid 2-D version of a (multi)polygon: invalid rings repaired (make_valid), only
    the polygonal parts kept; None when nothing polygonal is left."""
    import shapely
    from shapely.geometry import MultiPolygon, Polygon

    geom = shapely.force_2d(geom)
    if not geom.is_valid:
        geom = shapely.make_valid(geom)
    if isinstance(geom, Polygon | MultiPolygon):
        return None if geom.is_empty else geom
    parts = [g for g in getattr(geom, "geoms", ()) if isinstance(g, Polygon | MultiPolygon)]
    if not parts:
        return None
    union = shapely.unary_union(parts)
    return None if union.is_empty else union


def _feature_poi(i: int, feature: Any, dataset: str, category_default: str) -> Poi | None:
    """One GeoJSON feature as a POI (None when it has no usable location). Points sit at
    their position, polygons at a point inside them (their centroid when it is inside) and
    keep their repaired geometry, other geometries at their centroid."""
    from shapely.errors import ShapelyError
    from shapely.geometry import mapping, shape

    if not isinstance(feature, Mapping):
        return None
    raw = feature.get("properties")
    attrs = flatten(raw) if isinstance(raw, Mapping) else {}
    geom = feature.get("geometry")
    if not isinstance(geom, Mapping) or not geom.get("type"):
        return None
    point_xy = _point_coords(geom)
    try:
        if point_xy is not None:  # the common case, without building a shapely geometry
            return _poi_at(i, feature, attrs, dataset, category_default, point_xy[1], point_xy[0], None)
        shaped = shape(geom)
        if shaped.is_empty:
            return None
        geometry = None
        if shaped.geom_type in ("Polygon", "MultiPolygon"):
            shaped = _polygonal(shaped)
            if shaped is None:
                return None
            geometry = mapping(shaped)
            point = shaped.centroid if shaped.covers(shaped.centroid) else shaped.representative_point()
        elif shaped.geom_type == "Point":
            point = shaped
        else:
            point = shaped.centroid
        lon, lat = float(point.x), float(point.y)
    # ShapelyError: GEOS errors, and an unknown geometry type or an empty part (both were 500s)
    except (ValueError, TypeError, AttributeError, IndexError, KeyError, ShapelyError):
        return None
    return _poi_at(i, feature, attrs, dataset, category_default, lat, lon, geometry)


def _point_coords(geom: Mapping[str, Any]) -> tuple[float, float] | None:
    """(lon, lat) of a plain Point geometry (2-D or 3-D), None for anything else."""
    if geom.get("type") != "Point":
        return None
    coords = geom.get("coordinates")
    if not isinstance(coords, list | tuple) or len(coords) not in (2, 3):
        return None
    x, y = coords[0], coords[1]
    if (
        isinstance(x, bool)
        or isinstance(y, bool)
        or not isinstance(x, int | float)
        or not isinstance(y, int | float)
    ):
        return None
    return float(x), float(y)


def _poi_at(
    i: int,
    feature: Mapping[str, Any],
    attrs: dict[str, Any],
    dataset: str,
    category_default: str,
    lat: float,
    lon: float,
    geometry: dict[str, Any] | None,
) -> Poi | None:
    if not _valid(lat, lon):
        return None
    category = _category(attrs, None) or category_default
    ident = feature.get("id")
    if not isinstance(ident, str | int) or isinstance(ident, bool):
        ident = _pick(attrs, _ID_KEYS)
    texts = {k: v for k, v in attrs.items() if isinstance(v, str)}
    name = _pick(texts, _NAME_KEYS) or next(
        (
            v
            for k, v in texts.items()
            if k.lower().startswith(("nm_", "nome_")) or k.lower().endswith("_name")
        ),
        None,
    )
    return Poi(
        f"{dataset}:{ident if ident is not None else i}", str(name or ""), category, lat, lon, attrs, geometry
    )


def read_geojson(doc: dict[str, Any], dataset: str, default_category: str | None = None) -> Parsed:
    """Every feature with a usable geometry, with its typed properties; features no
    property categorises get `default_category`, else the file's category
    (`category_of_file`). A projected CRS is refused (the coordinates are not lon/lat)."""
    try:
        features = raw_features(doc)
    except CorruptDocument as exc:
        raise PoiFormatError(str(exc)) from exc
    fallback = normalise_name(default_category) if default_category else category_of_file(dataset)
    pois = _within_values(_feature_poi(i, f, dataset, fallback) for i, f in enumerate(features))
    crs = _crs_name(doc)
    if crs and not any(pois):
        raise PoiFormatError(f"the GeoJSON declares the CRS {crs!r}: reproject it to WGS 84 (EPSG:4326)")
    return _collect(pois)


def read_csv(text: str, dataset: str, default_category: str | None = None) -> Parsed:
    """Rows with lat/lon columns (comma or semicolon separated, decimal point or comma);
    every other column is kept as a typed attribute. TooManyPois for more than
    MAX_CSV_COLUMNS columns (counted on the header line, before the csv module reads it) or
    MAX_DATASET_VALUES property values."""
    end = text.find("\n")
    columns = 1 + max(text.count(d, 0, end if end >= 0 else len(text)) for d in DELIMITERS)
    if columns > MAX_CSV_COLUMNS:
        raise TooManyPois(
            f"the CSV has {columns:,} columns; a dataset may have at most {MAX_CSV_COLUMNS:,}: "
            "keep the columns questions need"
        )
    if (longest := _longest_line(text)) > MAX_CSV_LINE_CHARS:  # a row with millions of extra fields
        raise TooManyPois(
            f"a line of the CSV has {longest:,} characters; the limit is {MAX_CSV_LINE_CHARS:,}"
        )
    try:
        return _collect(_within_values(_csv_pois(text, dataset, default_category)))
    except csv.Error as exc:  # a field over the csv module's limit, an unclosed quote at the end
        raise PoiFormatError(f"the CSV cannot be read ({exc})") from exc


def _longest_line(text: str) -> int:
    """The length of the longest line, found without copying any."""
    longest = start = 0
    while (end := text.find("\n", start)) >= 0:
        longest, start = max(longest, end - start), end + 1
    return max(longest, len(text) - start)


def _csv_pois(text: str, dataset: str, default_category: str | None) -> Iterator[Poi | None]:
    fallback = normalise_name(default_category) if default_category else category_of_file(dataset)
    lat_keys, lon_keys = {k.lower() for k in _LAT_KEYS}, {k.lower() for k in _LON_KEYS}
    for i, row in enumerate(read_rows(text), start=1):
        lat_raw, lon_raw = _pick(row, _LAT_KEYS), _pick(row, _LON_KEYS)
        category = (
            _category({k: v for k, v in row.items() if k and k.lower() in _CATEGORY_KEYS}, None) or fallback
        )
        try:
            lat, lon = float(str(lat_raw).replace(",", ".")), float(str(lon_raw).replace(",", "."))
        except ValueError:
            yield None
            continue
        if not _valid(lat, lon):
            yield None
            continue
        attrs = flatten(
            {
                k: v
                for k, v in row.items()
                if k and k.lower() not in lat_keys | lon_keys and isinstance(v, str)
            }
        )
        ident = _pick(row, _ID_KEYS)
        name = _pick(row, _NAME_KEYS) or (ident if ident and not str(ident).isdigit() else "")
        yield Poi(f"{dataset}:{ident or i}", str(name), category, lat, lon, attrs)


def _within_values(pois: Iterable[Poi | None]) -> list[Poi | None]:
    """The POIs, or TooManyPois as soon as their property values pass MAX_DATASET_VALUES."""
    out: list[Poi | None] = []
    values = 0
    for poi in pois:
        values += len(poi.attrs) if poi is not None else 0
        if values > MAX_DATASET_VALUES:
            raise TooManyPois(
                f"the file holds more than {MAX_DATASET_VALUES:,} property values (features x "
                "properties): split it, or keep the properties questions need"
            )
        out.append(poi)
    return out


def read_path(path: Path, default_category: str | None = None) -> Parsed:
    """A file on disk; its stem names the dataset in non-OSM ids."""
    return parse(path.read_bytes(), dataset_name(path.name), default_category)


def dataset_name(filename: str) -> str:
    """A short dataset name from a file name (no suffixes, no characters outside [A-Za-z0-9_.-])."""
    stem = Path(filename).name
    for suffix in (".osm.pbf", ".pbf", ".osm", ".geojson", ".json", ".csv"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return "".join(ch if ch.isalnum() or ch in "_.-" else "_" for ch in stem)[:80] or "dataset"
