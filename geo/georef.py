"""Where on Earth a map raster or a photo is.

Three sources, tried in this order because the earlier ones are more precise:
GeoTIFF tags (the raster's own georeference), a world file (or a GDAL .aux.xml
GeoTransform) with its CRS from a .prj / .aux.xml sidecar, and finally EXIF GPS for
photos, which only gives the camera position. Everything is reprojected to WGS84 so that
callers can index footprints without knowing any CRS.
"""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tifffile
from PIL import Image
from pyproj import CRS, Geod, Transformer
from pyproj.crs import CoordinateOperation, GeographicCRS, ProjectedCRS
from pyproj.crs.coordinate_system import Cartesian2DCS
from pyproj.crs.datum import CustomDatum, CustomEllipsoid
from pyproj.crs.enums import Cartesian2DCSAxis
from pyproj.exceptions import CRSError

__all__ = ["Footprint", "exif_location", "georeference_raster"]

WGS84 = CRS.from_epsg(4326)
_GEOD = Geod(ellps="WGS84")

# Points per side of the footprint ring for projected sources: a UTM edge is a curve in
# lon/lat, and 8 samples keep it within a small fraction of a pixel for map-sized rasters.
DENSIFY_PER_SIDE = 8
# Half-side of the box drawn around a photo's GPS fix: a typical phone GPS accuracy, used
# when the EXIF carries no GPSHPositioningError. Keeps photo footprints real polygons.
PHOTO_RADIUS_M = 10.0
_METRES_PER_DEGREE = 111_320.0
_RANGE_EPS = 1e-7

# GeoTIFF tags and GeoKeys (GeoTIFF 1.1, OGC 19-008r4).
_TAG_PIXEL_SCALE = 33550
_TAG_TIEPOINT = 33922
_TAG_TRANSFORMATION = 34264
_TAG_GEOKEYS = 34735
_TAG_DOUBLES = 34736
_TAG_ASCII = 34737
_KEY_MODEL_TYPE = 1024
_KEY_RASTER_TYPE = 1025
_KEY_CITATION = 1026
_KEY_GEOGRAPHIC = 2048
_KEY_GEOG_CITATION = 2049
_KEY_GEOG_DATUM = 2050
_KEY_ELLIPSOID = 2056
_KEY_SEMI_MAJOR = 2057
_KEY_SEMI_MINOR = 2058
_KEY_INV_FLATTENING = 2059
_KEY_PROJECTED = 3072
_KEY_PROJECTION = 3074
_KEY_LINEAR_UNITS = 3076
_MODEL_PROJECTED, _MODEL_GEOGRAPHIC, _MODEL_GEOCENTRIC = 1, 2, 3
_PIXEL_IS_POINT = 2
_USER_DEFINED = 32767
_FOOT_UNITS = {9002: Cartesian2DCSAxis.EASTING_NORTHING_FT, 9003: Cartesian2DCSAxis.EASTING_NORTHING_US_FT}

_GPS_IFD = 0x8825
_GPS_LAT_REF, _GPS_LAT, _GPS_LON_REF, _GPS_LON, _GPS_STATUS, _GPS_H_ERROR = 1, 2, 3, 4, 9, 31

_TIFF_MAGIC = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")
# Explicit world-file names beyond the generic first+last+"w" / ext+"w" / "wld" rules.
_WORLD_ALIASES = {
    "tif": ("tfw", "tifw"),
    "tiff": ("tfw", "tifw", "tiffw"),
    "jpg": ("jgw", "jpgw"),
    "jpeg": ("jgw", "jpgw", "jpegw"),
    "png": ("pgw", "pngw"),
}


@dataclass(frozen=True)
class Footprint:
    """A raster's (or photo's) place on Earth, in WGS84, ready for spatial indexing."""

    polygon: list[tuple[float, float]]  # (lon, lat) ring, closed, counter-clockwise
    center: tuple[float, float]  # (lat, lon)
    crs: str  # source CRS: "EPSG:xxxx" or the CRS name
    source: str  # "geotiff", "worldfile", "aux.xml" or "exif"
    pixel_size_m: float | None  # approximate ground resolution at the centre
    # The source grid as its CRS states it (map cards quote these; None for photos).
    crs_name: str | None = None  # e.g. "SIRGAS 2000 / UTM zone 25S"
    epsg: int | None = None  # the EPSG code of the CRS when it has one
    pixel_size: tuple[float, float] | None = None  # (x, y) in `pixel_unit`
    pixel_unit: str | None = None  # "metre", "degree", "US survey foot", ...
    # a projected grid's upper-left and lower-right outer corners (x, y) in its CRS (None when
    # the CRS is geographic: the extent in degrees says it)
    corners: tuple[tuple[float, float], tuple[float, float]] | None = None

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(min_lon, min_lat, max_lon, max_lat), the box most indexes want."""
        lons = [p[0] for p in self.polygon]
        lats = [p[1] for p in self.polygon]
        return min(lons), min(lats), max(lons), max(lats)


@dataclass(frozen=True)
class _Affine:
    """Pixel-corner (col, row) -> CRS (x, y); (0, 0) is the outer corner of the UL pixel."""

    a: float
    b: float
    c: float
    d: float
    e: float
    f: float

    def apply(self, col: np.ndarray | float, row: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        col, row = np.asarray(col, dtype=float), np.asarray(row, dtype=float)
        return self.a * col + self.b * row + self.c, self.d * col + self.e * row + self.f

    def shifted(self, dcol: float, drow: float) -> _Affine:
        """The same mapping with pixel coordinates offset, e.g. centre- vs corner-based."""
        x, y = self.apply(dcol, drow)
        return _Affine(self.a, self.b, float(x), self.d, self.e, float(y))

    def validate(self, what: str) -> _Affine:
        values = (self.a, self.b, self.c, self.d, self.e, self.f)
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"{what}: non-finite transform coefficients {values}")
        if abs(self.a * self.e - self.b * self.d) < 1e-300:
            raise ValueError(f"{what}: degenerate transform (zero pixel size) {values}")
        return self


@dataclass(frozen=True)
class _Georef:
    affine: _Affine
    crs: CRS
    source: str


# --------------------------------------------------------------------------- public API


def georeference_raster(
    path: Path,
    data: bytes | None = None,
    sidecars: dict[str, bytes] | None = None,
    *,
    epsg: int | None = None,
) -> Footprint | None:
    """The WGS84 footprint of a map raster or photo, or None when it carries no georeference.

    `data` are the file's bytes (read from `path` when omitted). `sidecars` maps a sidecar
    suffix (".pgw", ".prj", ".aux.xml", ...) to its bytes for uploads; when None the
    sidecars are looked up next to `path` on disk. `epsg` is the CRS of last resort for
    world files / GeoTIFFs whose CRS is given nowhere else. Raises ValueError when a
    georeference is present but unusable (malformed world file, unknown EPSG, missing CRS,
    footprint outside the globe).
    """
    path = Path(path)
    if data is None:
        data = path.read_bytes()
    side = _Sidecars(path, sidecars)
    fallback_crs = _crs_from_epsg(epsg) if epsg is not None else None

    size, georef = _geotiff_georef(data, side, fallback_crs) if _is_tiff(data) else (None, None)
    if georef is None:
        georef = _sidecar_georef(side, fallback_crs)
    if georef is not None:
        width, height = size or _image_size(data)
        return _raster_footprint(georef, width, height)
    return _photo_footprint(data)


def exif_location(data: bytes) -> tuple[float, float] | None:
    """(lat, lon) of the EXIF GPS fix, or None when absent, void or out of range."""
    gps = _gps_ifd(data)
    if not gps or _text(gps.get(_GPS_STATUS)) == "V":
        return None
    lat = _signed_degrees(gps.get(_GPS_LAT), gps.get(_GPS_LAT_REF), "NS", 90.0)
    lon = _signed_degrees(gps.get(_GPS_LON), gps.get(_GPS_LON_REF), "EW", 180.0)
    if lat is None or lon is None or (lat == 0.0 and lon == 0.0):  # 0,0 = receiver without fix
        return None
    return lat, lon


# --------------------------------------------------------------------------- sidecars


class _Sidecars:
    """Sidecar lookup over an upload's dict, or next to the file on disk."""

    def __init__(self, path: Path, given: dict[str, bytes] | None) -> None:
        self.path = path
        self.given = None if given is None else {_normalise_suffix(k): v for k, v in given.items()}

    def get(self, suffix: str) -> bytes | None:
        """Bytes of the sidecar with this normalised suffix ("pgw", "prj", "aux.xml")."""
        if self.given is not None:
            return self.given.get(suffix)
        for candidate in self._disk_names(suffix):
            if candidate.is_file():
                return candidate.read_bytes()
        return None

    def _disk_names(self, suffix: str) -> list[Path]:
        if suffix == "aux.xml":  # GDAL writes name.ext.aux.xml, and reads name.aux.xml too
            return [self.path.with_name(self.path.name + ".aux.xml"), self.path.with_suffix(".aux.xml")]
        return [self.path.with_suffix("." + suffix), self.path.with_suffix("." + suffix.upper())]

    def world_file(self) -> tuple[str, bytes] | None:
        for suffix in _world_suffixes(self.path.suffix):
            content = self.get(suffix)
            if content is not None:
                return suffix, content
        return None


def _normalise_suffix(key: str) -> str:
    """'.PGW', 'pgw', 'map.pgw' -> 'pgw'; '.png.aux.xml' -> 'aux.xml'."""
    key = key.strip().lower()
    if key.endswith("aux.xml"):
        return "aux.xml"
    return key.rsplit(".", 1)[-1]


def _world_suffixes(image_suffix: str) -> list[str]:
    ext = image_suffix.lower().lstrip(".")
    names = list(_WORLD_ALIASES.get(ext, ()))
    if ext:
        names += [ext[0] + ext[-1] + "w", ext + "w"]
    names.append("wld")
    return list(dict.fromkeys(names))


# --------------------------------------------------------------------------- GeoTIFF


def _is_tiff(data: bytes) -> bool:
    return data[:4] in _TIFF_MAGIC


def _geotiff_georef(
    data: bytes, side: _Sidecars, fallback_crs: CRS | None
) -> tuple[tuple[int, int] | None, _Georef | None]:
    """(size, georef) from the TIFF's own tags; georef None when it has no transform."""
    try:
        with tifffile.TiffFile(io.BytesIO(data)) as tif:
            page = tif.pages[0]
            size = (int(page.imagewidth), int(page.imagelength))
            tags = {code: page.tags[code].value for code in _geotiff_tag_codes() if code in page.tags}
    except (tifffile.TiffFileError, ValueError, OSError, IndexError, KeyError):
        return None, None  # not readable as TIFF: let the other sources decide
    keys = _parse_geokeys(tags)
    affine = _affine_from_tags(tags)
    if affine is None:
        return size, None
    if keys.get(_KEY_RASTER_TYPE) == _PIXEL_IS_POINT:  # tiepoints address pixel centres
        affine = affine.shifted(-0.5, -0.5)
    try:
        crs = _crs_from_geokeys(keys) or _sidecar_crs(side) or fallback_crs
    except CRSError as exc:  # GeoKeys naming a datum or ellipsoid code PROJ lacks (EPSG:9999): was a 500
        raise ValueError(f"GeoTIFF GeoKeys describe a CRS PROJ cannot build ({exc})") from exc
    if crs is None:
        raise ValueError("GeoTIFF has a transform but no usable CRS (GeoKeys, .aux.xml, .prj or epsg)")
    return size, _Georef(affine.validate("GeoTIFF"), crs, "geotiff")


def _geotiff_tag_codes() -> tuple[int, ...]:
    return (_TAG_PIXEL_SCALE, _TAG_TIEPOINT, _TAG_TRANSFORMATION, _TAG_GEOKEYS, _TAG_DOUBLES, _TAG_ASCII)


def _affine_from_tags(tags: dict[int, object]) -> _Affine | None:
    """GeoTIFF model transform, from ModelTransformation, or tiepoint + scale, or >= 3 GCPs."""
    matrix = tags.get(_TAG_TRANSFORMATION)
    if matrix is not None:
        m = [float(v) for v in matrix]  # type: ignore[union-attr]
        if len(m) != 16:
            raise ValueError(f"GeoTIFF ModelTransformation has {len(m)} values, expected 16")
        return _Affine(m[0], m[1], m[3], m[4], m[5], m[7])
    ties = [float(v) for v in tags.get(_TAG_TIEPOINT) or ()]  # type: ignore[union-attr]
    scale = [float(v) for v in tags.get(_TAG_PIXEL_SCALE) or ()]  # type: ignore[union-attr]
    if not ties:
        if scale:
            raise ValueError("GeoTIFF has ModelPixelScale but no ModelTiepoint")
        return None
    if len(ties) % 6:
        raise ValueError(f"GeoTIFF ModelTiepoint has {len(ties)} values, not a multiple of 6")
    if len(scale) >= 2:
        i, j, _, x, y, _ = ties[:6]
        return _Affine(scale[0], 0.0, x - i * scale[0], 0.0, -scale[1], y + j * scale[1])
    return _affine_from_gcps(np.asarray(ties).reshape(-1, 6))


def _affine_from_gcps(gcps: np.ndarray) -> _Affine:
    """Least-squares affine through tiepoints, for GCP-only GeoTIFFs. Non-finite tiepoints
    are refused first: LAPACK's least squares never returns on an inf in the design matrix
    (a GeoTIFF whose third tiepoint sat at pixel column inf hung its upload request)."""
    if len(gcps) < 3:
        raise ValueError(f"GeoTIFF has {len(gcps)} tiepoint(s) and no ModelPixelScale: cannot place it")
    if not np.all(np.isfinite(gcps)):
        raise ValueError("GeoTIFF ModelTiepoint holds non-finite values (inf or NaN)")
    design = np.column_stack([gcps[:, 0], gcps[:, 1], np.ones(len(gcps))])
    (a, b, c), *_ = np.linalg.lstsq(design, gcps[:, 3], rcond=None)
    (d, e, f), *_ = np.linalg.lstsq(design, gcps[:, 4], rcond=None)
    return _Affine(float(a), float(b), float(c), float(d), float(e), float(f))


def _parse_geokeys(tags: dict[int, object]) -> dict[int, object]:
    """GeoKeyDirectory -> {key id: int, tuple of doubles or citation string}."""
    directory = [int(v) for v in tags.get(_TAG_GEOKEYS) or ()]  # type: ignore[union-attr]
    doubles = [float(v) for v in tags.get(_TAG_DOUBLES) or ()]  # type: ignore[union-attr]
    ascii_params = tags.get(_TAG_ASCII) or ""
    if isinstance(ascii_params, bytes):
        ascii_params = ascii_params.decode("latin-1")
    keys: dict[int, object] = {}
    count = directory[3] if len(directory) >= 4 else 0
    for n in range(count):
        entry = directory[4 + 4 * n : 8 + 4 * n]
        if len(entry) < 4:
            break
        key, location, length, offset = entry
        if location == 0:
            keys[key] = offset
        elif location == _TAG_DOUBLES:
            values = tuple(doubles[offset : offset + length])
            keys[key] = values[0] if length == 1 and values else values
        elif location == _TAG_ASCII:
            keys[key] = str(ascii_params)[offset : offset + length].rstrip("|\x00 ")
    return keys


def _epsg_code(value: object) -> int | None:
    """A GeoKey value that names an EPSG code (not 0 'undefined' nor 32767 'user-defined')."""
    return value if isinstance(value, int) and 0 < value < _USER_DEFINED else None


def _crs_from_geokeys(keys: dict[int, object]) -> CRS | None:
    """The CRS the GeoKeys describe; None when they describe none we can build."""
    model = keys.get(_KEY_MODEL_TYPE)
    if model == _MODEL_GEOCENTRIC:
        raise ValueError("GeoTIFF uses a geocentric model, which has no map footprint")
    projected = _epsg_code(keys.get(_KEY_PROJECTED))
    if projected is not None:
        return _crs_from_epsg(projected)
    if model == _MODEL_PROJECTED or keys.get(_KEY_PROJECTED) == _USER_DEFINED:
        return _user_projected(keys)
    if _KEY_GEOGRAPHIC in keys or _KEY_SEMI_MAJOR in keys or _KEY_ELLIPSOID in keys:
        return _geographic_from_geokeys(keys)
    return None


def _user_projected(keys: dict[int, object]) -> CRS | None:
    """User-defined projected CRS from an EPSG conversion code (e.g. 16125 = UTM 25S)."""
    conversion = _epsg_code(keys.get(_KEY_PROJECTION))
    if conversion is None:
        return None  # fully custom projection parameters: left to sidecars
    try:
        operation = CoordinateOperation.from_epsg(conversion)
    except CRSError as exc:
        raise ValueError(f"GeoTIFF names unknown EPSG projection {conversion}") from exc
    axis = _FOOT_UNITS.get(keys.get(_KEY_LINEAR_UNITS), Cartesian2DCSAxis.EASTING_NORTHING)  # type: ignore[arg-type]
    return ProjectedCRS(
        conversion=operation,
        geodetic_crs=_geographic_from_geokeys(keys),
        cartesian_cs=Cartesian2DCS(axis=axis),
        name=str(keys.get(_KEY_CITATION) or operation.name),
    )


def _geographic_from_geokeys(keys: dict[int, object]) -> CRS:
    """The geodetic base: EPSG code, EPSG datum, or an ellipsoid; WGS84 when unspecified."""
    code = _epsg_code(keys.get(_KEY_GEOGRAPHIC))
    if code is not None:
        return _crs_from_epsg(code)
    name = str(keys.get(_KEY_GEOG_CITATION) or "unknown").split("|")[0]
    datum = _epsg_code(keys.get(_KEY_GEOG_DATUM))
    if datum is not None:
        return GeographicCRS(name=name, datum=f"EPSG:{datum}")
    ellipsoid = _epsg_code(keys.get(_KEY_ELLIPSOID))
    if ellipsoid is not None:
        return GeographicCRS(name=name, datum=CustomDatum(ellipsoid=f"EPSG:{ellipsoid}"))
    semi_major = keys.get(_KEY_SEMI_MAJOR)
    if isinstance(semi_major, float) and semi_major > 0:
        inv_f, semi_minor = keys.get(_KEY_INV_FLATTENING), keys.get(_KEY_SEMI_MINOR)
        shape = CustomEllipsoid(
            semi_major_axis=semi_major,
            inverse_flattening=inv_f if isinstance(inv_f, float) and inv_f > 0 else None,
            semi_minor_axis=semi_minor if isinstance(semi_minor, float) and semi_minor > 0 else None,
        )
        return GeographicCRS(name=name, datum=CustomDatum(ellipsoid=shape))
    return WGS84


# --------------------------------------------------------------------------- world files, .prj, .aux.xml


def _sidecar_georef(side: _Sidecars, fallback_crs: CRS | None) -> _Georef | None:
    """Georeference from a world file, else from an .aux.xml GeoTransform."""
    world = side.world_file()
    if world is not None:
        suffix, content = world
        affine, source = _parse_world_file(content, suffix), "worldfile"
    else:
        affine, source = _aux_geotransform(side.get("aux.xml")), "aux.xml"
        if affine is None:
            return None
    crs = _sidecar_crs(side) or fallback_crs
    if crs is None:
        raise ValueError(f"{source} georeference has no CRS: add a .prj or .aux.xml sidecar, or pass epsg")
    return _Georef(affine, crs, source)


def _parse_world_file(content: bytes, suffix: str) -> _Affine:
    """Six lines A D B E C F; C, F locate the CENTRE of the upper-left pixel."""
    lines = [line.strip() for line in content.decode("latin-1").splitlines() if line.strip()]
    if len(lines) != 6:
        raise ValueError(f".{suffix} world file has {len(lines)} non-empty lines, expected 6")
    try:
        a, d, b, e, c, f = (float(line) for line in lines)
    except ValueError as exc:
        raise ValueError(f".{suffix} world file has a non-numeric line: {exc}") from exc
    centre_based = _Affine(a, b, c, d, e, f).validate(f".{suffix} world file")
    return centre_based.shifted(-0.5, -0.5)  # the half-pixel rule: move to the pixel corner


def _aux_root(content: bytes | None) -> ET.Element | None:
    if content is None:
        return None
    try:
        return ET.fromstring(content)
    except ET.ParseError:
        return None  # GDAL also ignores an unreadable PAM file


def _aux_geotransform(content: bytes | None) -> _Affine | None:
    """GDAL PAM <GeoTransform>c, a, b, f, d, e</GeoTransform> (already corner-based)."""
    root = _aux_root(content)
    node = root.find("GeoTransform") if root is not None else None
    if node is None or not (node.text or "").strip():
        return None
    try:
        c, a, b, f, d, e = (float(v) for v in node.text.replace(",", " ").split())  # type: ignore[union-attr]
    except ValueError as exc:
        raise ValueError(f".aux.xml GeoTransform is not six numbers: {node.text!r}") from exc
    return _Affine(a, b, c, d, e, f).validate(".aux.xml GeoTransform")


def _sidecar_crs(side: _Sidecars) -> CRS | None:
    """CRS from .aux.xml <SRS> (carries EPSG authority) or else the .prj WKT (often ESRI)."""
    root = _aux_root(side.get("aux.xml"))
    node = root.find("SRS") if root is not None else None
    if node is not None and (node.text or "").strip():
        return _parse_crs(node.text.strip(), ".aux.xml SRS")  # type: ignore[union-attr]
    prj = side.get("prj")
    if prj is not None and prj.strip():
        return _parse_crs(prj.decode("utf-8", errors="replace").strip().lstrip("\ufeff"), ".prj")
    return None


def _parse_crs(text: str, what: str) -> CRS:
    try:
        return CRS.from_user_input(text)
    except CRSError as exc:
        raise ValueError(f"{what} is not a CRS pyproj understands: {text[:80]!r}") from exc


def _crs_from_epsg(code: int) -> CRS:
    try:
        return CRS.from_epsg(code)
    except CRSError as exc:
        raise ValueError(f"unknown EPSG code {code}") from exc


# --------------------------------------------------------------------------- footprints


def _image_size(data: bytes) -> tuple[int, int]:
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.size
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ValueError(f"georeferenced image whose size cannot be read: {exc}") from exc


def _raster_footprint(georef: _Georef, width: int, height: int) -> Footprint:
    if width <= 0 or height <= 0:
        raise ValueError(f"raster has no pixels ({width}x{height})")
    to_wgs84 = Transformer.from_crs(georef.crs, WGS84, always_xy=True)
    per_side = DENSIFY_PER_SIDE if not georef.crs.is_geographic else 1
    cols, rows = _pixel_ring(width, height, per_side)
    lons, lats = _to_wgs84(to_wgs84, georef.affine, cols, rows)
    centre_lon, centre_lat = _to_wgs84(to_wgs84, georef.affine, np.array([width / 2]), np.array([height / 2]))
    return Footprint(
        polygon=_ccw_closed(lons, lats),
        center=(float(centre_lat[0]), float(centre_lon[0])),
        crs=_crs_label(georef.crs),
        source=georef.source,
        pixel_size_m=_pixel_size_m(to_wgs84, georef.affine, width, height),
        crs_name=georef.crs.name,
        epsg=georef.crs.to_epsg(),
        pixel_size=_native_pixel_size(georef.affine),
        pixel_unit=georef.crs.axis_info[0].unit_name if georef.crs.axis_info else None,
        corners=None if georef.crs.is_geographic else _corners(georef.affine, width, height),
    )


def _corners(affine: _Affine, width: int, height: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """The grid's upper-left and lower-right outer corners in its CRS."""
    x1, y1 = affine.apply(width, height)
    return (affine.c, affine.f), (float(x1), float(y1))


def _native_pixel_size(affine: _Affine) -> tuple[float, float]:
    """The pixel's width and height in CRS units (rotation-safe lengths of its sides)."""
    return math.hypot(affine.a, affine.d), math.hypot(affine.b, affine.e)


def _pixel_ring(width: int, height: int, per_side: int) -> tuple[np.ndarray, np.ndarray]:
    """Open ring of pixel-corner coordinates, UL -> LL -> LR -> UR, per_side points a side."""
    t = np.arange(per_side) / per_side
    cols = np.concatenate([np.zeros(per_side), t * width, np.full(per_side, width), (1 - t) * width])
    rows = np.concatenate([t * height, np.full(per_side, height), (1 - t) * height, np.zeros(per_side)])
    return cols, rows


def _to_wgs84(
    transformer: Transformer, affine: _Affine, cols: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pixel corners -> (lon, lat), rejecting anything that is not on the globe."""
    xs, ys = affine.apply(cols, rows)
    lons, lats = (np.asarray(v, dtype=float) for v in transformer.transform(xs, ys))
    if not (np.all(np.isfinite(lons)) and np.all(np.isfinite(lats))):
        raise ValueError("georeference does not reproject to WGS84 (coordinates outside the CRS's area?)")
    lon_ok = np.all(np.abs(lons) <= 180.0 + _RANGE_EPS)
    lat_ok = np.all(np.abs(lats) <= 90.0 + _RANGE_EPS)
    if not (lon_ok and lat_ok):
        raise ValueError(
            f"footprint outside the globe: lon {lons.min():.6g}..{lons.max():.6g}, "
            f"lat {lats.min():.6g}..{lats.max():.6g} (wrong CRS or world file?)"
        )
    return np.clip(lons, -180.0, 180.0), np.clip(lats, -90.0, 90.0)


def _ccw_closed(lons: np.ndarray, lats: np.ndarray) -> list[tuple[float, float]]:
    """Closed (lon, lat) ring, counter-clockwise as GeoJSON (RFC 7946) wants exteriors."""
    ring = [(float(x), float(y)) for x, y in zip(lons, lats, strict=True)]
    if _signed_area(ring) < 0:
        ring = [ring[0], *reversed(ring[1:])]
    return [*ring, ring[0]]


def _signed_area(ring: list[tuple[float, float]]) -> float:
    return 0.5 * sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(ring, ring[1:] + ring[:1], strict=True))


def _pixel_size_m(transformer: Transformer, affine: _Affine, width: int, height: int) -> float | None:
    """Mean geodesic width/height of the centre pixel: comparable across CRSs."""
    cols = np.array([width / 2, width / 2 + 1, width / 2])
    rows = np.array([height / 2, height / 2, height / 2 + 1])
    lons, lats = transformer.transform(*affine.apply(cols, rows))
    _, _, dx = _GEOD.inv(lons[0], lats[0], lons[1], lats[1])
    _, _, dy = _GEOD.inv(lons[0], lats[0], lons[2], lats[2])
    size = (dx + dy) / 2
    return float(size) if math.isfinite(size) and size > 0 else None


def _crs_label(crs: CRS) -> str:
    code = crs.to_epsg()
    return f"EPSG:{code}" if code else crs.name


def _photo_footprint(data: bytes) -> Footprint | None:
    """A small box around the camera's GPS fix: photos have a position, not an extent."""
    location = exif_location(data)
    if location is None:
        return None
    lat, lon = location
    radius = _gps_error_m(data) or PHOTO_RADIUS_M
    dlat = radius / _METRES_PER_DEGREE
    dlon = radius / (_METRES_PER_DEGREE * max(math.cos(math.radians(lat)), 1e-6))
    west, east = max(lon - dlon, -180.0), min(lon + dlon, 180.0)
    south, north = max(lat - dlat, -90.0), min(lat + dlat, 90.0)
    ring = [(west, south), (east, south), (east, north), (west, north), (west, south)]
    return Footprint(polygon=ring, center=(lat, lon), crs="EPSG:4326", source="exif", pixel_size_m=None)


# --------------------------------------------------------------------------- EXIF


def _gps_ifd(data: bytes) -> dict[int, object]:
    try:
        with Image.open(io.BytesIO(data)) as image:
            return dict(image.getexif().get_ifd(_GPS_IFD))
    except (OSError, ValueError, SyntaxError, TypeError, KeyError, Image.DecompressionBombError):
        return {}  # unreadable or EXIF-less image: no location


def _gps_error_m(data: bytes) -> float | None:
    value = _gps_ifd(data).get(_GPS_H_ERROR)
    error = _number(value)
    return error if error is not None and 0 < error < 10_000 else None


def _text(value: object) -> str:
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return str(value).strip("\x00 ").upper() if value is not None else ""


def _number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]  # IFDRational, int, float
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return number if math.isfinite(number) else None


def _signed_degrees(value: object, ref: object, hemispheres: str, limit: float) -> float | None:
    """EXIF (deg, min, sec) rationals + 'N'/'S' or 'E'/'W' -> signed decimal degrees."""
    ref_text = _text(ref)[:1]
    if ref_text not in hemispheres or not ref_text:
        return None  # without its reference the hemisphere is a guess
    parts = value if isinstance(value, tuple | list) else (value,)
    numbers = [_number(p) for p in parts]
    if not 1 <= len(numbers) <= 3 or any(n is None or n < 0 for n in numbers):
        return None
    deg, minutes, seconds = ([*numbers, 0.0, 0.0])[:3]
    if minutes >= 60 or seconds >= 60:  # type: ignore[operator]
        return None
    degrees = deg + minutes / 60 + seconds / 3600  # type: ignore[operator]
    if degrees > limit:
        return None
    return -degrees if ref_text == hemispheres[1] else degrees
