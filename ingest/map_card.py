"""Map cards: a searchable text, in English and Portuguese, for every map document.

A satellite scene or a DEM has no words of its own, so a lite index would never find it
and nothing could answer "which CRS does it use?". Its card says what the file is and
where: format, size in pixels, bands, data type, CRS name and EPSG code, pixel size with
its unit, extent in degrees (W/E/S/N), value range of a single-band grid, and the places
its footprint covers (geo/reverse.py: municipalities, state, country and the tenant's
own gazetteer polygons). The card becomes the first text of the map's page, so it is
chunked, embedded and BM25-indexed like any text; its countries and states become
document tags, so a place filter on a country finds the map.

Maps are the georeferenced pictures (GeoTIFF, PNG/JPEG + world file) and the vector
files (GeoJSON, KML/KMZ, OpenStreetMap); photos and PDFs get no card.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import tifffile
from PIL import Image

from geo.folding import fold
from geo.gazetteer import Gazetteer, Place, portuguese_country_name
from geo.georef import Footprint, georeference_raster
from geo.reverse import CoveredPlaces, covered_places
from ingest.formats.vector import VectorDocument
from ingest.geotagging import GeoTag
from ingest.loaders import LoadedPage, TextBlock
from ingest.upload import IngestRequest, OpenedUpload

CARD_SOURCE = "map-card"  # the source of the region tags a card adds
MAX_NAMES = 12  # places named per list (the rest are counted)
MAX_AREAS = 25
MAX_HULL_POSITIONS = 200_000
_VECTOR_FORMATS = {
    "geojson": "GeoJSON",
    "kml": "KML",
    "kmz": "KMZ (zipped KML)",
    "osm": "OpenStreetMap XML",
    "osm-pbf": "OpenStreetMap PBF",
}
_IMAGE_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/tiff": "TIFF", "image/webp": "WebP"}
# Words of raster file names that say what the picture is (en, pt), e.g. olinda_dem_utm25s.
_NAME_WORDS: dict[str, tuple[str, str]] = {
    "l5": ("Landsat 5 satellite image", "imagem de satélite Landsat 5"),
    "l7": ("Landsat 7 satellite image", "imagem de satélite Landsat 7"),
    "l8": ("Landsat 8 satellite image", "imagem de satélite Landsat 8"),
    "landsat": ("Landsat satellite image", "imagem de satélite Landsat"),
    "sentinel": ("Sentinel satellite image", "imagem de satélite Sentinel"),
    "etm": ("ETM+ sensor", "sensor ETM+"),
    "etms": ("ETM+ sensor", "sensor ETM+"),
    "dem": ("digital elevation model (DEM)", "modelo digital de elevação (MDE)"),
    "mde": ("digital elevation model (DEM)", "modelo digital de elevação (MDE)"),
    "dtm": ("digital terrain model (DTM)", "modelo digital de terreno (MDT)"),
    "dsm": ("digital surface model (DSM)", "modelo digital de superfície (MDS)"),
    "srtm": ("SRTM elevation", "elevação SRTM"),
    "elev": ("elevation", "elevação"),
    "elevation": ("elevation", "elevação"),
    "altitude": ("elevation", "elevação"),
    "truecolor": ("true colour", "cor verdadeira"),
    "truecolour": ("true colour", "cor verdadeira"),
    "ndvi": ("vegetation index (NDVI)", "índice de vegetação (NDVI)"),
    "ortho": ("orthophoto", "ortofoto"),
    "orthophoto": ("orthophoto", "ortofoto"),
}
_NAME_TOKEN = re.compile(r"[a-z]+\d*|\d+")


@dataclass
class MapFacts:
    """What a map file is, read from its content (None where it does not apply)."""

    format: tuple[str, str]  # its name in English and Portuguese
    filename: str
    extent: tuple[float, float, float, float]  # west, south, east, north in degrees (WGS84)
    ring: list[tuple[float, float]]  # the footprint's (lon, lat) ring, for the reverse lookup
    width: int | None = None
    height: int | None = None
    bands: int | None = None
    dtype: str | None = None
    footprint: Footprint | None = None  # a raster's georeference (CRS, pixel size)
    values: tuple[float, float, float] | None = None  # min, max, mean of a single-band grid
    nodata: float | None = None
    features: int | None = None
    geometries: dict[str, int] = field(default_factory=dict)  # geometry type -> count


@dataclass
class MapCard:
    """The card's two texts (en, pt) and the region tags it adds to the document."""

    english: str
    portuguese: str
    region_tags: list[GeoTag]

    def on(self, page: LoadedPage) -> LoadedPage:
        """The first page with the card as its first text blocks (boxed on the whole map);
        other pages unchanged. A page that had no text now has the card's."""
        if page.page_no != 1:
            return page
        whole = (0.0, 0.0, float(page.width), float(page.height))
        blocks = [TextBlock(whole, self.english), TextBlock(whole, self.portuguese), *page.blocks]
        return replace(
            page, blocks=blocks, text_source="card" if page.text_source == "none" else page.text_source
        )


def map_card(request: IngestRequest, upload: OpenedUpload, gazetteer: Gazetteer | None) -> MapCard | None:
    """The card of a map upload (None for PDFs, photos and unreferenced pictures)."""
    facts = map_facts(request, upload)
    if facts is None:
        return None
    places = covered_places(gazetteer, facts.ring) if gazetteer is not None else CoveredPlaces()
    return MapCard(card_text(facts, places, "en"), card_text(facts, places, "pt"), region_tags(places))


def map_facts(request: IngestRequest, upload: OpenedUpload) -> MapFacts | None:
    """The facts of a georeferenced picture or a vector file, else None."""
    if isinstance(upload.document, VectorDocument):
        return vector_facts(upload.document, request.safe_filename)
    if upload.ftype.kind != "image" or not any(t.source == "raster" for t in upload.document_tags):
        return None
    footprint = georeference_raster(
        request.source_path or Path(request.safe_filename), request.data, request.sidecars
    )
    if footprint is None or footprint.source == "exif":
        return None
    return raster_facts(request.data, upload.ftype.mime, request.safe_filename, footprint)


def raster_facts(data: bytes, mime: str, filename: str, footprint: Footprint) -> MapFacts:
    """Size, bands, data type and (single band) value range of a georeferenced picture."""
    west, south, east, north = footprint.bounds
    image_format = _IMAGE_FORMATS.get(mime, mime)
    fmt = {
        "geotiff": ("GeoTIFF", "GeoTIFF"),
        "worldfile": (
            f"{image_format} with a world file",
            f"{image_format} com arquivo de georreferência (world file)",
        ),
        "aux.xml": (
            f"{image_format} with a GDAL .aux.xml georeference",
            f"{image_format} georreferenciado por .aux.xml",
        ),
    }.get(footprint.source, (image_format, image_format))
    facts = MapFacts(fmt, filename, (west, south, east, north), list(footprint.polygon), footprint=footprint)
    if data[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        _read_tiff(data, facts)
    else:
        with Image.open(io.BytesIO(data)) as image:
            facts.width, facts.height = image.size
            facts.bands = len(image.getbands())
            facts.dtype = "uint16" if image.mode.startswith("I;16") else "uint8"
    return facts


def _read_tiff(data: bytes, facts: MapFacts) -> None:
    with tifffile.TiffFile(io.BytesIO(data)) as tif:
        page = tif.pages[0]
        facts.width, facts.height = int(page.imagewidth), int(page.imagelength)
        facts.bands = int(page.samplesperpixel)
        facts.dtype = str(page.dtype)
        nodata_tag = page.tags.get("GDAL_NODATA")
        if nodata_tag is not None:
            try:
                facts.nodata = float(str(nodata_tag.value).strip("\x00 "))
            except ValueError:
                facts.nodata = None
        if facts.bands == 1:
            values = page.asarray().astype(np.float64).ravel()
            valid = values[np.isfinite(values)]
            if facts.nodata is not None:
                valid = valid[valid != facts.nodata]
            if valid.size:
                facts.values = (float(valid.min()), float(valid.max()), float(valid.mean()))


def vector_facts(document: VectorDocument, filename: str) -> MapFacts | None:
    """Feature count, geometry types and extent of a GeoJSON, KML/KMZ or OSM layer."""
    from shapely.geometry import MultiPoint

    kinds: dict[str, int] = {}
    positions: list[tuple[float, float]] = []
    for feature in document.layer.features:
        if feature.geometry is None:
            continue
        kind = str(feature.geometry.get("type", "?"))
        kinds[kind] = kinds.get(kind, 0) + 1
        if len(positions) < MAX_HULL_POSITIONS:
            positions.extend(_positions(feature.geometry.get("coordinates")))
    if not positions:
        return None
    hull = MultiPoint(positions).convex_hull
    if hull.area == 0:
        hull = hull.buffer(0.001)
    west, south, east, north = (float(v) for v in hull.bounds)
    return MapFacts(
        (_VECTOR_FORMATS.get(document.layer.kind, document.layer.kind),) * 2,
        filename,
        (west, south, east, north),
        [(float(x), float(y)) for x, y in hull.exterior.coords],
        features=len(document.layer.features),
        geometries=kinds,
    )


def _positions(coords: object) -> list[tuple[float, float]]:
    """Every [lon, lat] position in nested GeoJSON coordinates."""
    if (
        isinstance(coords, list | tuple)
        and len(coords) >= 2
        and all(isinstance(c, int | float) for c in coords[:2])
    ):
        return [(float(coords[0]), float(coords[1]))]
    if isinstance(coords, list | tuple):
        return [p for c in coords for p in _positions(c)]
    return []


def region_tags(places: CoveredPlaces) -> list[GeoTag]:
    """Tags for the states and countries a map covers: regions are mentions, not
    locations (ingest/geotagging.py), so they add `countries` to the map's points."""
    return [
        GeoTag(p.lat, p.lon, CARD_SOURCE, p.name, 1.0, place_id=p.id, kind=p.kind, country=p.country)
        for p in [*places.states, *places.countries]
    ]


# --- the texts -------------------------------------------------------------------------


def _name_words(filename: str) -> list[tuple[str, str]]:
    """The (en, pt) meanings of known words in a raster's file name, once each."""
    found: list[tuple[str, str]] = []
    for token in _NAME_TOKEN.findall(Path(filename).stem.lower().replace("_", " ")):
        meaning = _NAME_WORDS.get(token)
        if meaning and meaning not in found:
            found.append(meaning)
    return found


def _number(value: float, decimal: str, significant: int | None = None) -> str:
    """A measure without float noise: 28.4999999 -> 28.5 (2 decimals), or to `significant`
    digits for small values such as degrees (0.000277777778 -> 0.000277778)."""
    if significant is not None and value != 0 and math.isfinite(value):
        text = f"{value:.{significant}g}"
    else:
        text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return text.replace(".", decimal)


def _unit(unit: str | None, lang: str) -> str:
    names = {
        "metre": ("m", "m"),
        "meter": ("m", "m"),
        "degree": ("degrees", "graus"),
        "US survey foot": ("US survey feet", "pés (US survey)"),
        "foot": ("feet", "pés"),
    }
    en, pt = names.get(unit or "", (unit or "CRS units", unit or "unidades do SRC"))
    return en if lang == "en" else pt


def _pixel(fp: Footprint, lang: str) -> str:
    decimal = "." if lang == "en" else ","
    if fp.pixel_size is None:
        return ""
    degrees = fp.pixel_unit == "degree"
    x, y = (_number(v, decimal, 6 if degrees else None) for v in fp.pixel_size)
    unit = _unit(fp.pixel_unit, lang)
    size = f"{x} {unit}" if x == y else f"{x} x {y} {unit}"
    if degrees and fp.pixel_size_m:
        metres = fp.pixel_size_m
        ground = (
            f"{_number(metres / 1000, decimal)} km" if metres >= 1000 else f"{_number(metres, decimal)} m"
        )
        size += f" (about {ground} on the ground)" if lang == "en" else f" (cerca de {ground} no terreno)"
    return size


def _crs(fp: Footprint) -> str:
    name = fp.crs_name or fp.crs
    return f"{name} (EPSG:{fp.epsg})" if fp.epsg else f"{name} (no EPSG code)"


def _extent(facts: MapFacts, lang: str) -> str:
    west, south, east, north = (f"{v:.4f}" for v in facts.extent)
    if lang == "en":
        return f"Extent in degrees (WGS84): west {west}, east {east}, south {south}, north {north}."
    return f"Extensão em graus (WGS84): oeste {west}, leste {east}, sul {south}, norte {north}."


def _names(places: list[Place], limit: int = MAX_NAMES) -> str:
    shown = ", ".join(p.name for p in places[:limit])
    return shown + (f" (+{len(places) - limit})" if len(places) > limit else "")


def _in_portuguese(country: Place) -> Place:
    """A country named in Portuguese, with its English name after it: "Luxemburgo (Luxembourg)"."""
    name = portuguese_country_name(country.country or "")
    if not name or fold(name) == fold(country.name):
        return country
    return replace(country, name=f"{name} ({country.name})")


def _places(places: CoveredPlaces, lang: str) -> list[str]:
    en = lang == "en"
    if places.empty:
        return [
            "Places covered: none found in the gazetteers."
            if en
            else "Lugares cobertos: nenhum nos gazetteers."
        ]
    parts = []
    if places.cities:
        parts.append(("municipalities: " if en else "municípios: ") + _names(places.cities))
    if places.nearby:
        parts.append(("nearby: " if en else "arredores: ") + _names(places.nearby))
    if places.states:
        parts.append(("state: " if en else "estado: ") + _names(places.states))
    if places.countries:
        countries = places.countries if en else [_in_portuguese(p) for p in places.countries]
        parts.append(("country: " if en else "país: ") + _names(countries, 30))
    lines = [("Places covered: " if en else "Lugares cobertos: ") + "; ".join(parts) + "."] if parts else []
    if places.areas:
        shown = ", ".join(f"{p.name} ({share:.0%})" for p, share in places.areas[:MAX_AREAS])
        more = len(places.areas) - MAX_AREAS
        shown += f" (+{more})" if more > 0 else ""
        sources = ", ".join(sorted({p.source for p, _ in places.areas}))
        label = f"Areas covered ({sources}): " if en else f"Áreas cobertas ({sources}): "
        lines.append(label + shown + ".")
    return lines


def _what(facts: MapFacts, lang: str) -> str:
    """The card's headline: what kind of map this is."""
    en = lang == "en"
    if facts.features is not None:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(facts.geometries.items()))
        if en:
            return f"Vector map ({facts.format[0]}) with {facts.features} features ({kinds})."
        return f"Mapa vetorial ({facts.format[1]}) com {facts.features} feições ({kinds})."
    words = [w[0 if en else 1] for w in _name_words(facts.filename)]
    bands = facts.bands or 0
    if bands >= 4:
        kind = (
            f"multispectral image with {bands} bands" if en else f"imagem multiespectral com {bands} bandas"
        )
    elif bands == 3:
        kind = "colour image (RGB)" if en else "imagem colorida (RGB)"
    elif bands == 1:
        kind = "single-band grid" if en else "grade de banda única"
    else:
        kind = f"image with {bands} bands" if en else f"imagem com {bands} bandas"
    about = f" ({', '.join(words)})" if words else ""
    return f"Raster map: {kind}{about}." if en else f"Mapa raster: {kind}{about}."


def _subject(facts: MapFacts, lang: str) -> str:
    """Who a fact line is about, so the line stands alone as an answer: the file and what
    its name says it is ("olinda_L7_ETMs.tif (Landsat 7 satellite image, ETM+ sensor)")."""
    words = [w[0 if lang == "en" else 1] for w in _name_words(facts.filename)]
    return f"{facts.filename} ({', '.join(words)})" if words else facts.filename


# The card's fixed phrases per language; the facts and their formatting are shared.
CARD_PHRASES: dict[str, dict[str, str]] = {
    "en": {
        "title": "Map card of {name}.",
        "format": "Format: {fmt}; size {w} x {h} pixels; {bands} band{s}; data type {dtype}.",
        "crs": "{subject}: coordinate reference system (CRS) {crs}; pixel size {pixel}.",
        "crs_default": "Coordinate reference system (CRS): WGS 84 longitude/latitude (EPSG:4326).",
        "values": "Values: minimum {low}, maximum {high}, mean {mean}{nodata}.",
        "corners": "Corners in its CRS ({unit}): upper-left x {x0}, y {y0}; lower-right x {x1}, y {y1}.",
        "nodata": " (nodata {value})",
        "decimal": ".",
    },
    "pt": {
        "title": "Ficha do mapa {name}.",
        "format": "Formato: {fmt}; tamanho {w} x {h} pixels; {bands} banda{s}; tipo de dado {dtype}.",
        "crs": "{subject}: sistema de referência de coordenadas (SRC) {crs}; tamanho do pixel {pixel}.",
        "crs_default": "Sistema de referência de coordenadas (SRC): WGS 84 longitude/latitude (EPSG:4326).",
        "values": "Valores: mínimo {low}, máximo {high}, média {mean}{nodata}.",
        "corners": (
            "Cantos no SRC ({unit}): superior esquerdo x {x0}, y {y0}; inferior direito x {x1}, y {y1}."
        ),
        "nodata": " (sem dado {value})",
        "decimal": ",",
    },
}


def card_text(facts: MapFacts, places: CoveredPlaces, lang: str) -> str:
    """The card in one language: one line per fact, so each is a sentence an answer can quote."""
    words = CARD_PHRASES[lang]
    lines = [words["title"].format(name=facts.filename), _what(facts, lang)]
    if facts.width is not None:
        fmt = facts.format[0 if lang == "en" else 1]
        plural = "s" if facts.bands != 1 else ""
        lines.append(
            words["format"].format(
                fmt=fmt, w=facts.width, h=facts.height, bands=facts.bands, s=plural, dtype=facts.dtype
            )
        )
    if facts.footprint is not None:
        fp = facts.footprint
        lines.append(words["crs"].format(subject=_subject(facts, lang), crs=_crs(fp), pixel=_pixel(fp, lang)))
    else:
        lines.append(words["crs_default"])
    if facts.footprint is not None and facts.footprint.corners is not None:
        (x0, y0), (x1, y1) = facts.footprint.corners
        point = words["decimal"]
        unit = _unit(facts.footprint.pixel_unit, lang)
        x0s, y0s, x1s, y1s = (_number(v, point) for v in (x0, y0, x1, y1))
        lines.append(words["corners"].format(unit=unit, x0=x0s, y0=y0s, x1=x1s, y1=y1s))
    lines.append(_extent(facts, lang))
    if facts.values is not None:
        point = words["decimal"]
        low, high, mean = (_number(v, point) for v in facts.values)
        nodata = (
            words["nodata"].format(value=_number(facts.nodata, point)) if facts.nodata is not None else ""
        )
        lines.append(words["values"].format(low=low, high=high, mean=mean, nodata=nodata))
    return "\n".join(lines + _places(places, lang))
