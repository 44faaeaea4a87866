"""Read points of interest (and roads) from OSM PBF/XML, Overpass JSON, GeoJSON and CSV.

Every reader returns a `Parsed` with POIs keyed by a stable source id (`osm:n123`,
`osm:w45`, or `<dataset>:<feature id or row>`), already normalised to one category and
deduplicated by that id. The file type is sniffed from the content, not the name. The
files are parsed by the readers the document formats use too (ingest/readers/); this
module turns their records into POIs and roads.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.categories import normalise_name, normalise_tags
from graph.errors import PoiFormatError
from ingest.errors import CorruptDocument, JsonTooDeep
from ingest.readers.delimited import read_rows
from ingest.readers.geojson import load_json, raw_features
from ingest.readers.osm import read_osm_elements

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
    id: str
    name: str
    category: str
    lat: float
    lon: float


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
    skipped: int = 0  # features without a usable location or category


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
    try:
        first = data[:4096].decode("utf-8-sig").splitlines()[0]
    except (UnicodeDecodeError, IndexError) as exc:
        raise PoiFormatError("not a POI file: expected OSM PBF/XML, Overpass JSON, GeoJSON or CSV") from exc
    cols = {c.strip().strip('"').lower() for c in first.replace(";", ",").split(",")}
    if cols & set(_LAT_KEYS) and cols & set(_LON_KEYS):
        return "csv"
    raise PoiFormatError("not a POI file: expected OSM PBF/XML, Overpass JSON, GeoJSON or CSV with lat/lon")


def parse(data: bytes, dataset: str, default_category: str | None = None) -> Parsed:
    """POIs (and roads, for OSM) of one upload."""
    kind = sniff(data)
    if kind in ("pbf", "osm-xml"):
        return read_osm(data, kind)
    if kind == "overpass":
        return read_overpass(load_json(data))
    if kind == "geojson":
        return read_geojson(load_json(data), dataset, default_category)
    return read_csv(data.decode("utf-8-sig"), dataset, default_category)


# --------------------------------------------------------------------------- OSM


def _osm_poi(prefix: str, ident: int, tags: Mapping[str, str], lat: float, lon: float) -> Poi | None:
    category = normalise_tags(tags)
    if category is None or not _valid(lat, lon):
        return None
    return Poi(f"osm:{prefix}{ident}", tags.get("name", ""), category, lat, lon)


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
    """Overpass API JSON: nodes (lat/lon), ways/relations with `center` or `geometry`."""
    pois: list[Poi | None] = []
    roads: list[Road] = []
    prefixes = {"node": "n", "way": "w", "relation": "r"}
    for el in doc.get("elements", ()):
        tags = el.get("tags") or {}
        prefix = prefixes.get(el.get("type"))
        if prefix is None or not tags:
            continue
        geometry = [(g["lat"], g["lon"]) for g in el.get("geometry") or () if g]
        if prefix == "w" and tags.get("highway") in ROAD_KINDS and geometry:
            roads.append(Road(f"osm:w{el['id']}", tags.get("name", ""), tags["highway"], tuple(geometry)))
            continue
        if normalise_tags(tags) is None:
            continue
        if "lat" in el and "lon" in el:
            lat, lon = el["lat"], el["lon"]
        elif el.get("center"):
            lat, lon = el["center"]["lat"], el["center"]["lon"]
        elif geometry:
            lat, lon = (
                sum(g[0] for g in geometry) / len(geometry),
                sum(g[1] for g in geometry) / len(geometry),
            )
        else:
            pois.append(None)
            continue
        pois.append(_osm_poi(prefix, el["id"], tags, float(lat), float(lon)))
    return _collect(pois, roads)


# --------------------------------------------------------------------------- GeoJSON / CSV


def _pick(props: Mapping[str, Any], keys: Iterable[str]) -> Any:
    lowered = {str(k).lower(): v for k, v in props.items()}
    for key in keys:
        if props.get(key) not in (None, ""):
            return props[key]
        if lowered.get(key.lower()) not in (None, ""):
            return lowered[key.lower()]
    return None


def _category(props: Mapping[str, Any], default: str | None) -> str | None:
    tagged = normalise_tags({k: str(v) for k, v in props.items() if isinstance(v, str | int)})
    if tagged:
        return tagged
    value = _pick(props, _CATEGORY_KEYS)
    if value not in (None, ""):
        return normalise_name(str(value))
    return normalise_name(default) if default else None


def read_geojson(doc: dict[str, Any], dataset: str, default_category: str | None = None) -> Parsed:
    """Point features (other geometries at their centroid)."""
    from shapely.geometry import shape

    try:
        features = raw_features(doc)
    except CorruptDocument as exc:
        raise PoiFormatError(str(exc)) from exc
    pois: list[Poi | None] = []
    for i, feature in enumerate(features):
        props = feature.get("properties") or {}
        geom = feature.get("geometry")
        category = _category(props, default_category)
        if not geom or category is None:
            pois.append(None)
            continue
        try:
            point = shape(geom) if geom.get("type") == "Point" else shape(geom).centroid
            lon, lat = float(point.x), float(point.y)
        except (ValueError, TypeError, AttributeError, IndexError):
            pois.append(None)
            continue
        ident = feature.get("id", _pick(props, _ID_KEYS))
        name = _pick(props, _NAME_KEYS)
        valid = _valid(lat, lon)
        pois.append(
            Poi(f"{dataset}:{ident if ident is not None else i}", str(name or ""), category, lat, lon)
            if valid
            else None
        )
    return _collect(pois)


def read_csv(text: str, dataset: str, default_category: str | None = None) -> Parsed:
    """Rows with lat/lon columns (comma or semicolon separated, decimal point)."""
    pois: list[Poi | None] = []
    for i, row in enumerate(read_rows(text), start=1):
        lat_raw, lon_raw = _pick(row, _LAT_KEYS), _pick(row, _LON_KEYS)
        category = _category(
            {k: v for k, v in row.items() if k and k.lower() in _CATEGORY_KEYS}, default_category
        )
        try:
            lat, lon = float(str(lat_raw).replace(",", ".")), float(str(lon_raw).replace(",", "."))
        except ValueError:
            pois.append(None)
            continue
        if category is None or not _valid(lat, lon):
            pois.append(None)
            continue
        ident = _pick(row, _ID_KEYS)
        name = _pick(row, _NAME_KEYS) or (ident if ident and not str(ident).isdigit() else "")
        pois.append(Poi(f"{dataset}:{ident or i}", str(name), category, lat, lon))
    return _collect(pois)


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
