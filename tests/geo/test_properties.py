"""Property tests (hypothesis) for coordinate parsing and every lat/lng order boundary outside the
vector store: H3 (point tokens, GeoJSON rings, circles), pyproj (world-file rasters, UTM text) and
the geo filters of the API. The store backends (Qdrant) have their own file:
tests/index/test_geo_order_properties.py.

Generated points stay off the lat == lon diagonal wherever a swapped order would go unnoticed."""

from __future__ import annotations

import math
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import h3
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from pyproj import CRS, Transformer

from geo.coordinates import find_coordinates
from geo.distance import haversine_m
from geo.georef import georeference_raster
from geo.h3tags import (
    AREA_FIELD,
    AREA_UP_FIELD,
    area_cells,
    area_query,
    area_tokens,
    circle_cells,
    point_tokens,
)
from index.types import Filter, GeoBox, GeoPolygon, GeoRadius
from service.query.geo_filter import GeoSpec, resolve
from tests.utils.documents import image_bytes, world_file, write_world_filed_raster

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
M_PER_DEG = 111_320.0

# --------------------------------------------------------------------------- strategies


def _signed(magnitude: st.SearchStrategy[float]) -> st.SearchStrategy[float]:
    return st.tuples(magnitude, st.booleans()).map(lambda t: -t[0] if t[1] else t[0])


# |lat| < 0.01 and |lon| < 0.01 are left out: there the written sign / hemisphere can round away.
LATS = _signed(st.floats(min_value=0.01, max_value=89.9, allow_nan=False))
LONS = _signed(st.floats(min_value=0.01, max_value=180.0, allow_nan=False))


def _off_diagonal(lat: float, lon: float, min_deg: float = 0.5) -> bool:
    """True when reading (lat, lon) as (lon, lat) would land somewhere else (or off the globe)."""
    return abs(lat - lon) >= min_deg


EN_SENTENCES = (
    "The monitoring station is located at {c} according to the 2019 survey.",
    "Sampling point: {c}.",
    "We drilled the well at {c}, near the river bank.",
)
PT_SENTENCES = (
    "A estação de monitoramento fica em {c}, segundo o levantamento.",
    "Ponto de coleta: {c}.",
    "O poço foi perfurado em {c} perto da margem do rio.",
)


def _embed(coord: str, pt: bool, which: int) -> tuple[str, int]:
    """(sentence, offset of the coordinate text in it)."""
    template = (PT_SENTENCES if pt else EN_SENTENCES)[which % 3]
    return template.format(c=coord), template.index("{c}")


def _comma(text: str, pt: bool) -> str:
    return text.replace(".", ",") if pt else text


def _lat_hemi(lat: float) -> str:
    return "N" if lat > 0 else "S"


def _lon_hemi(lon: float, pt: bool, east_pt: str = "L") -> str:
    if lon > 0:
        return east_pt if pt else "E"
    return "O" if pt else "W"


def _dms(value: float, sec_decimals: int, pt: bool, deg: str, mins: str, secs: str) -> str:
    """|value| as D°MM'SS[.s]" (rounded to the written precision)."""
    scale = 10**sec_decimals
    total = round(abs(value) * 3600 * scale)
    d, rest = divmod(total, 3600 * scale)
    m, s = divmod(rest, 60 * scale)
    width = 3 + sec_decimals if sec_decimals else 2
    sec_text = _comma(f"{s / scale:0{width}.{sec_decimals}f}", pt)
    return f"{d}{deg}{m:02d}{mins}{sec_text}{secs}"


def _check_single(
    sentence: str, offset: int, coord: str, lat: float, lon: float, tol: float, fmt: str
) -> None:
    matches = find_coordinates(sentence)
    assert len(matches) == 1, (sentence, matches)
    m = matches[0]
    assert m.format == fmt, (sentence, m)
    assert abs(m.lat - lat) <= tol and abs(m.lon - lon) <= tol, (sentence, m, (lat, lon))
    assert sentence[m.start : m.end] == m.text
    assert offset - 1 <= m.start and m.end <= offset + len(coord) + 1, (sentence, m)


# --------------------------------------------------------------------------- coordinate parsing


@FAST
@given(lat=LATS, lon=LONS, pt=st.booleans(), which=st.integers(0, 2), style=st.integers(0, 3))
def test_labelled_decimal_round_trip(lat: float, lon: float, pt: bool, which: int, style: int) -> None:
    lat_t, lon_t = _comma(f"{lat:.5f}", pt), _comma(f"{lon:.5f}", pt)
    sep = "; " if pt else ", "
    coord = [
        f"lat {lat_t}{sep}lon {lon_t}",
        f"Latitude: {lat_t}{sep}Longitude: {lon_t}",
        f"latitude {lat_t} e longitude {lon_t}" if pt else f"latitude {lat_t} and longitude {lon_t}",
        f"Lat/Lon: {lat_t}{sep}{lon_t}",
    ][style]
    sentence, offset = _embed(coord, pt, which)
    _check_single(sentence, offset, coord, lat, lon, 5e-6 + 1e-12, "labelled")


@FAST
@given(lat=LATS, lon=LONS, pt=st.booleans(), which=st.integers(0, 2), style=st.integers(0, 4))
def test_swapped_labels_still_give_lat_from_the_lat_label(
    lat: float, lon: float, pt: bool, which: int, style: int
) -> None:
    lat_t, lon_t = _comma(f"{lat:.5f}", pt), _comma(f"{lon:.5f}", pt)
    sep = "; " if pt else ", "
    coord = [
        f"lon {lon_t}{sep}lat {lat_t}",
        f"Longitude: {lon_t}{sep}Latitude: {lat_t}",
        f"lng {lon_t} lat {lat_t}",
        f"long. {lon_t}{sep}lat. {lat_t}",
        f"Lon/Lat: {lon_t}{sep}{lat_t}",
    ][style]
    sentence, offset = _embed(coord, pt, which)
    _check_single(sentence, offset, coord, lat, lon, 5e-6 + 1e-12, "labelled")


@FAST
@given(lat=LATS, lon=LONS, which=st.integers(0, 2), brackets=st.sampled_from(["()", "[]"]))
def test_pt_decimal_comma_bracketed_pair_round_trip(
    lat: float, lon: float, which: int, brackets: str
) -> None:
    assume(abs(lat) >= 1 or abs(lon) >= 1)  # "null island" pairs are read as statistics by design
    coord = f"{brackets[0]}{lat:.4f}; {lon:.4f}{brackets[1]}".replace(".", ",")
    sentence, offset = _embed(coord, True, which)
    _check_single(sentence, offset, coord, lat, lon, 5e-5 + 1e-12, "decimal")


@FAST
@given(lat=LATS, lon=LONS, which=st.integers(0, 2))
def test_en_bracketed_pair_round_trip(lat: float, lon: float, which: int) -> None:
    assume(abs(lat) >= 1 or abs(lon) >= 1)
    coord = f"({lat:.5f}, {lon:.5f})"
    sentence, offset = _embed(coord, False, which)
    _check_single(sentence, offset, coord, lat, lon, 5e-6 + 1e-12, "decimal")


@FAST
@given(
    lat=LATS,
    lon=LONS,
    pt=st.booleans(),
    which=st.integers(0, 2),
    deg=st.sampled_from(["°", "º", ""]),
    space=st.sampled_from(["", " "]),
    sep=st.sampled_from([" ", ", ", "; "]),
    east_pt=st.sampled_from(["L", "E"]),
    lon_first=st.booleans(),
    prefix=st.booleans(),
)
def test_hemisphere_decimal_round_trip(
    lat: float,
    lon: float,
    pt: bool,
    which: int,
    deg: str,
    space: str,
    sep: str,
    east_pt: str,
    lon_first: bool,
    prefix: bool,
) -> None:
    """Hemispheres: 8.0631°S 34.8711°W, PT 8,0631° S; 34,8711° O, hemisphere first, longitude first."""
    lat_v, lon_v = _comma(f"{abs(lat):.4f}", pt), _comma(f"{abs(lon):.4f}", pt)
    if pt and sep == ", ":
        sep = "; "
    h_lat, h_lon = _lat_hemi(lat), _lon_hemi(lon, pt, east_pt)
    if prefix:
        parts = [f"{h_lat}{space}{lat_v}{deg}", f"{h_lon}{space}{lon_v}{deg}"]
    else:
        parts = [f"{lat_v}{deg}{space}{h_lat}", f"{lon_v}{deg}{space}{h_lon}"]
    if lon_first:
        parts.reverse()
    coord = sep.join(parts)
    sentence, offset = _embed(coord, pt, which)
    _check_single(sentence, offset, coord, lat, lon, 5e-5 + 1e-12, "decimal")


@FAST
@given(
    lat=LATS,
    lon=LONS,
    pt=st.booleans(),
    which=st.integers(0, 2),
    sec_decimals=st.sampled_from([0, 0, 1]),
    deg=st.sampled_from(["°", "º"]),
    mins=st.sampled_from(["'", "′", "’"]),
    secs=st.sampled_from(['"', "″", "''", "”"]),
    sep=st.sampled_from([" ", ", "]),
    lon_first=st.booleans(),
)
def test_dms_round_trip(
    lat: float,
    lon: float,
    pt: bool,
    which: int,
    sec_decimals: int,
    deg: str,
    mins: str,
    secs: str,
    sep: str,
    lon_first: bool,
) -> None:
    """8°07'11"S 34°53'49"W (O for oeste in Portuguese), within the written seconds' rounding."""
    parts = [
        _dms(lat, sec_decimals, pt, deg, mins, secs) + _lat_hemi(lat),
        _dms(lon, sec_decimals, pt, deg, mins, secs) + _lon_hemi(lon, pt),
    ]
    if lon_first:
        parts.reverse()
    coord = sep.join(parts)
    sentence, offset = _embed(coord, pt, which)
    tol = 0.5 / 3600 / 10**sec_decimals + 1e-9
    _check_single(sentence, offset, coord, lat, lon, tol, "dms")


@FAST
@given(lat=LATS, lon=LONS, which=st.integers(0, 2))
def test_signed_degree_pair_round_trip(lat: float, lon: float, which: int) -> None:
    """Signed degrees, -8.0631°, -34.8711°: no hemispheres, so the written order (lat, lon) decides."""
    coord = f"{lat:.4f}°, {lon:.4f}°"
    sentence, offset = _embed(coord, False, which)
    _check_single(sentence, offset, coord, lat, lon, 5e-5 + 1e-12, "decimal")


@SLOW
@given(
    zone=st.integers(1, 60),
    south=st.booleans(),
    easting=st.integers(160_000, 840_000),
    northing_km=st.integers(1_200, 9_300),
    labelled=st.booleans(),
)
def test_utm_round_trip_matches_pyproj_order(
    zone: int, south: bool, easting: int, northing_km: int, labelled: bool
) -> None:
    """UTM text -> (lat, lon) equals pyproj's always_xy (lon, lat), not its swap."""
    northing = northing_km * 1000 + 123
    en = f"{easting} mE {northing} mN" if labelled else f"{easting} {northing}"
    coord = f"UTM {zone}{'S' if south else 'N'} {en}"
    lon, lat = Transformer.from_crs(
        f"EPSG:{(32700 if south else 32600) + zone}", "EPSG:4326", always_xy=True
    ).transform(easting, northing)
    sentence, offset = _embed(coord, False, 1)
    _check_single(sentence, offset, coord, lat, lon, 1e-9, "utm")


_NO_DIGIT_TOKENS = st.sampled_from(
    [
        "lat", "lon", "Latitude", "longitude", "Lat/Lon:", "coordenadas", "UTM", "zona", "fuso",
        "°", "º", "'", '"', "″", "N", "S", "E", "W", "O", "L", "sul", "norte", "oeste",
        ",", ";", ".", "-", "−", "(", ")", "[", "]", " ", " ", "\n", "mE", "mN", "e", "and", "R$", "%",
    ]
)  # fmt: skip


@FAST
@given(
    tokens=st.lists(_NO_DIGIT_TOKENS, max_size=30),
    noise=st.text(st.characters(exclude_categories=("Nd",)), max_size=60),
)
def test_text_without_digits_has_no_coordinates(tokens: list[str], noise: str) -> None:
    assert find_coordinates("".join(tokens) + noise) == []
    assert find_coordinates(" ".join(tokens)) == []


def _pt_thousands(value: float, decimals: int) -> str:
    return f"{value:,.{decimals}f}".replace(",", "_").replace(".", ",").replace("_", ".")


_NOT_COORDINATES = st.one_of(
    st.dates().map(lambda d: d.strftime("%d/%m/%Y")),
    st.dates().map(lambda d: d.strftime("%d/%m/%y")),
    st.dates().map(lambda d: d.isoformat()),
    st.floats(0, 10_000_000, allow_nan=False).map(lambda v: "R$ " + _pt_thousands(v, 2)),
    st.floats(0, 10_000_000, allow_nan=False).map(lambda v: "US$ " + f"{v:,.2f}"),
    st.floats(-100, 100, allow_nan=False).map(lambda v: f"{v:.1f}%".replace(".", ",")),
    st.floats(-100, 100, allow_nan=False).map(lambda v: f"{v:.2f}%"),
    st.integers(-(10**9), 10**9).map(str),
    st.integers(0, 10**9).map(lambda v: _pt_thousands(v, 0)),
    st.integers(0, 10**9).map(lambda v: f"{v:,}"),
)
_FILLERS = st.sampled_from([" ", ", ", "; ", " em ", " de ", " com ", " on ", " the ", " total ", " até "])


@FAST
@given(parts=st.lists(st.tuples(_NOT_COORDINATES, _FILLERS), min_size=1, max_size=8))
def test_dates_money_percentages_and_integers_are_not_coordinates(parts: list[tuple[str, str]]) -> None:
    text = "".join(value + filler for value, filler in parts)
    assert find_coordinates(text) == [], text
    assert find_coordinates(f"No relatório de {text} foram gastos.") == []


# --------------------------------------------------------------------------- H3 order


def _circumradius_m(cell: str) -> float:
    c_lat, c_lon = h3.cell_to_latlng(cell)
    return max(haversine_m(c_lat, c_lon, v_lat, v_lon) for v_lat, v_lon in h3.cell_to_boundary(cell))


@FAST
@given(lat=_signed(st.floats(0, 89.9)), lon=_signed(st.floats(0, 180)))
def test_point_tokens_cells_contain_the_point(lat: float, lon: float) -> None:
    """Each resolution's cell centre is within one cell radius (<~30 m at r11) of (lat, lon)."""
    assume(_off_diagonal(lat, lon, 0.01))
    tokens = point_tokens(lat, lon)
    for name in ("h3_r7", "h3_r9", "h3_r11"):
        cell = tokens[name][0]
        c_lat, c_lon = h3.cell_to_latlng(cell)
        assert haversine_m(lat, lon, c_lat, c_lon) <= _circumradius_m(cell) * 1.001 + 0.01, name
    r11_lat, r11_lon = h3.cell_to_latlng(tokens["h3_r11"][0])
    assert haversine_m(lat, lon, r11_lat, r11_lon) < 40
    assert set(tokens["h3_r9"]) == set(h3.grid_disk(tokens["h3_r9"][0], 1))


def _square(lat: float, lon: float, half_m: float) -> list[tuple[float, float]]:
    """A GeoJSON (lon, lat) ring, closed, about 2*half_m metres a side."""
    dlat = half_m / M_PER_DEG
    dlon = half_m / (M_PER_DEG * math.cos(math.radians(lat)))
    return [
        (lon - dlon, lat - dlat),
        (lon + dlon, lat - dlat),
        (lon + dlon, lat + dlat),
        (lon - dlon, lat + dlat),
        (lon - dlon, lat - dlat),
    ]


@FAST
@given(
    lat=_signed(st.floats(0, 70)),
    lon=_signed(st.floats(0, 175)),
    half_m=st.floats(100, 50_000),
)
def test_area_cells_reads_geojson_lon_lat(lat: float, lon: float, half_m: float) -> None:
    assume(_off_diagonal(lat, lon))
    ring = _square(lat, lon, half_m)
    cells = area_cells(ring)
    assert cells
    res = h3.get_resolution(cells[0])
    assert all(h3.get_resolution(c) == res for c in cells)
    min_lon, min_lat = ring[0]
    max_lon, max_lat = ring[2]
    for cell in cells:
        c_lat, c_lon = h3.cell_to_latlng(cell)
        pad_lat = _circumradius_m(cell) / M_PER_DEG * 1.01
        pad_lon = pad_lat / math.cos(math.radians(max(abs(min_lat), abs(max_lat))))
        assert min_lat - pad_lat <= c_lat <= max_lat + pad_lat, (cell, ring)
        assert min_lon - pad_lon <= c_lon <= max_lon + pad_lon, (cell, ring)
    assert h3.latlng_to_cell(lat, lon, res) in cells


@FAST
@given(
    lat=_signed(st.floats(0, 70)),
    lon=_signed(st.floats(0, 175)),
    radius_m=st.floats(100, 50_000),
)
def test_circle_cells_surround_lat_lon(lat: float, lon: float, radius_m: float) -> None:
    assume(_off_diagonal(lat, lon))
    cells = circle_cells(lat, lon, radius_m)
    res = h3.get_resolution(cells[0])
    assert h3.latlng_to_cell(lat, lon, res) in cells
    for cell in cells:
        c_lat, c_lon = h3.cell_to_latlng(cell)
        # the 24-gon is drawn with a flat-earth step: allow 1% on top of one cell radius
        assert haversine_m(lat, lon, c_lat, c_lon) <= radius_m * 1.01 + _circumradius_m(cell) * 1.01


@FAST
@given(
    lat=_signed(st.floats(0, 85)),
    lon=_signed(st.floats(0, 180)),
    res=st.integers(0, 9),
    extra=st.integers(1, 3),
)
def test_area_tokens_and_query_match_across_resolutions(lat: float, lon: float, res: int, extra: int) -> None:
    """An area stored at one resolution is found by a query covering at a finer or coarser one."""
    coarse = h3.latlng_to_cell(lat, lon, res)
    fine = h3.latlng_to_cell(lat, lon, res + extra)
    fine = fine if h3.cell_to_parent(fine, res) == coarse else h3.cell_to_center_child(coarse, res + extra)

    def matches(stored: list[str], query_cells: list[str]) -> bool:
        tokens, query = area_tokens(stored), area_query(query_cells)
        return bool(set(tokens[AREA_FIELD]) & set(query[AREA_FIELD])) or bool(
            set(tokens[AREA_UP_FIELD]) & set(query[AREA_UP_FIELD])
        )

    assert matches([coarse], [fine]) and matches([fine], [coarse]) and matches([fine], [fine])
    far = h3.latlng_to_cell(-lat if abs(lat) > 30 else lat + 45, lon, res)
    assert not matches([far], [fine]) and not matches([fine], [far])


# --------------------------------------------------------------------------- pyproj order


@pytest.fixture(scope="module")
def raster_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="carta-georef-props-") as tmp:
        yield Path(tmp)


_PNG10 = image_bytes(10, 10, color=128, mode="L")
_PRJ = {
    32725: CRS.from_epsg(32725).to_wkt("WKT1_ESRI").encode(),
    31985: CRS.from_epsg(31985).to_wkt("WKT1_ESRI").encode(),
}


@SLOW
@given(
    epsg=st.sampled_from(sorted(_PRJ)),
    x=st.floats(170_000, 830_000),
    y=st.floats(1_200_000, 9_990_000),
    pixel=st.floats(0.5, 200),
    on_disk=st.booleans(),
)
def test_world_file_raster_center_matches_pyproj_lon_lat(
    raster_dir: Path, epsg: int, x: float, y: float, pixel: float, on_disk: bool
) -> None:
    """Footprint.center is (lat, lon), Footprint.polygon is (lon, lat), both as pyproj says."""
    # world file: A D B E C F, (C, F) the centre of the upper-left pixel
    world = world_file(pixel, 0.0, 0.0, -pixel, x, y)
    if on_disk:
        path = raster_dir / f"map-{uuid.uuid4().hex}.png"
        fp = georeference_raster(write_world_filed_raster(path, _PNG10, world, _PRJ[epsg]))
    else:
        fp = georeference_raster(Path("map.png"), _PNG10, {".pgw": world, ".prj": _PRJ[epsg]})
    assert fp is not None
    to_wgs84 = Transformer.from_crs(f"EPSG:{epsg}", "EPSG:4326", always_xy=True)
    c_lon, c_lat = to_wgs84.transform(x + 4.5 * pixel, y - 4.5 * pixel)
    assert fp.center == pytest.approx((c_lat, c_lon), abs=1e-9)
    ul_lon, ul_lat = to_wgs84.transform(x - 0.5 * pixel, y + 0.5 * pixel)
    assert fp.polygon[0] == pytest.approx((ul_lon, ul_lat), abs=1e-9)
    min_lon, min_lat, max_lon, max_lat = fp.bounds
    assert min_lon < c_lon < max_lon and min_lat < c_lat < max_lat
    assert -80 < c_lat < 0 and -90 < c_lon < 0  # UTM 25S: south-western quadrant
    if y >= 7_000_000:  # near the equator the zone's 36°W..30°W holds within a degree
        assert -37.0 <= c_lon <= -29.0


# --------------------------------------------------------------------------- API geo filters


@SLOW
@given(lat=_signed(st.floats(0, 90)), lon=_signed(st.floats(0, 180)), radius_m=st.floats(1, 2_000_000))
def test_resolve_radius_keeps_lat_lon(lat: float, lon: float, radius_m: float) -> None:
    assume(_off_diagonal(lat, lon, 1e-6))
    assume(abs(lat) + radius_m / M_PER_DEG < 90)  # circles over a pole: see the xfail test below
    resolved = resolve(GeoSpec(lat=lat, lon=lon, radius_m=radius_m), None)
    assert resolved.kind == "radius"
    assert resolved.conditions[0] == GeoRadius("location", lat, lon, radius_m)
    assert resolved.description == {"lat": lat, "lon": lon, "radius_m": radius_m}


@settings(max_examples=10, deadline=None)
@example(lat=89.0, lon=10.0, radius_m=200_000.0)
@given(lat=_signed(st.floats(80, 90)), lon=_signed(st.floats(0, 180)), radius_m=st.floats(1, 2_000_000))
def test_resolve_radius_over_a_pole(lat: float, lon: float, radius_m: float) -> None:
    """A valid circle (radius_m <= 2,000,000) that reaches over a pole still resolves around (lat, lon)."""
    assume(abs(lat) + radius_m / M_PER_DEG > 90.5)
    resolved = resolve(GeoSpec(lat=lat, lon=lon, radius_m=radius_m), None)
    assert resolved.conditions[0] == GeoRadius("location", lat, lon, radius_m)
    cells = resolved.conditions[2].match[AREA_UP_FIELD]
    assert h3.latlng_to_cell(lat, lon, h3.get_resolution(cells[0])) in cells


@FAST
@given(
    lat=_signed(st.floats(0, 60)),
    lon=_signed(st.floats(0, 170)),
    radius_m=st.floats(100, 50_000),
)
def test_resolve_radius_area_covering_is_around_lat_lon(lat: float, lon: float, radius_m: float) -> None:
    assume(_off_diagonal(lat, lon))
    resolved = resolve(GeoSpec(lat=lat, lon=lon, radius_m=radius_m), None)
    area_up = resolved.conditions[2]
    assert isinstance(area_up, Filter) and set(area_up.match) == {AREA_UP_FIELD}
    cells = area_up.match[AREA_UP_FIELD]
    assert h3.latlng_to_cell(lat, lon, h3.get_resolution(cells[0])) in cells


_BBOXES = st.tuples(st.floats(-180, 179), st.floats(-90, 89), st.floats(0.001, 1), st.floats(0.001, 1)).map(
    lambda t: [t[0], t[1], min(t[0] + t[2], 180.0), min(t[1] + t[3], 90.0)]
)


@SLOW
@given(bbox=_BBOXES)
def test_resolve_bbox_keeps_lon_lat_fields(bbox: list[float]) -> None:
    min_lon, min_lat, max_lon, max_lat = bbox
    resolved = resolve(GeoSpec(bbox=bbox), None)
    assert resolved.kind == "bbox"
    assert resolved.conditions[0] == GeoBox("location", min_lon, min_lat, max_lon, max_lat)
    assert resolved.description == {"bbox": [min_lon, min_lat, max_lon, max_lat]}


@SLOW
@given(lat=_signed(st.floats(0, 70)), lon=_signed(st.floats(0, 175)), half_m=st.floats(100, 20_000))
def test_resolve_polygon_keeps_geojson_ring(lat: float, lon: float, half_m: float) -> None:
    assume(_off_diagonal(lat, lon))
    ring = _square(lat, lon, half_m)
    geometry = {"type": "Polygon", "coordinates": [[list(p) for p in ring]]}
    resolved = resolve(GeoSpec(polygon=geometry), None)
    assert resolved.kind == "polygon"
    assert resolved.conditions[0] == GeoPolygon("location", tuple(ring))
    cells = resolved.conditions[2].match[AREA_UP_FIELD]
    assert h3.latlng_to_cell(lat, lon, h3.get_resolution(cells[0])) in cells
