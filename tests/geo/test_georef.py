"""georeference_raster / exif_location on the real corpus rasters and on synthetic cases
whose answer is known exactly (half-pixel rule, broken world files, EXIF GPS)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import tifffile
from PIL import Image
from pyproj import CRS

from geo.georef import Footprint, exif_location, georeference_raster
from tests.utils.documents import image_bytes, world_file, write_world_filed_raster

RASTERS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "raster"
WGS84_WKT = CRS.from_epsg(4326).to_wkt()


def corpus_raster(name: str) -> Path:
    path = RASTERS / name
    if not path.exists():
        pytest.skip(f"shared corpus raster {path} not found (corpus not mounted here)")
    return path


def png_bytes(width: int = 4, height: int = 2) -> bytes:
    return image_bytes(width, height)


def jpeg_bytes(gps: dict[int, object] | None = None) -> bytes:
    exif = Image.Exif()
    if gps is not None:
        exif[0x8825] = gps
    return image_bytes(16, 16, color="gray", fmt="JPEG", exif=exif)


def signed_area(ring: list[tuple[float, float]]) -> float:
    return 0.5 * sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(ring, ring[1:], strict=False))


def assert_valid_ring(fp: Footprint) -> None:
    assert fp.polygon[0] == fp.polygon[-1], "ring must be closed"
    assert signed_area(fp.polygon) > 0, "ring must be counter-clockwise"


# --------------------------------------------------------------------------- real corpus

# name -> (west, south, east, north) from MANIFEST.tsv, expected crs, tolerance in degrees.
# RGB.byte.tif's latitudes are given to one decimal only in the MANIFEST (23.6 / 25.5),
# hence the wider tolerance there; test_bahamas_matches_rasterio pins them precisely.
SAMPLES = {
    "olinda_L7_ETMs.tif": ((-34.92, -8.04, -34.83, -7.95), "EPSG:31985", 0.01),
    "olinda_dem_utm25s.tif": ((-34.92, -8.04, -34.83, -7.95), None, 0.01),
    "olinda_L7_truecolor.png": ((-34.92, -8.04, -34.83, -7.95), "EPSG:31985", 0.01),
    "rasterio_RGB.byte.tif": ((-78.96, 23.6, -76.57, 25.5), "EPSG:32618", 0.06),
    "rasterio_world.rgb.tif": ((-180.0, -90.0, 180.0, 90.0), "EPSG:4326", 0.01),
    "terra_lux_elev.tif": ((5.74, 49.44, 6.53, 50.19), "EPSG:4326", 0.01),
    "poa_elevation.tif": ((-51.255, -30.110, -51.140, -29.998), "EPSG:4326", 0.01),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_corpus_raster_bounds(name: str) -> None:
    expected, crs, tol = SAMPLES[name]
    fp = georeference_raster(corpus_raster(name))
    assert fp is not None
    assert fp.bounds == pytest.approx(expected, abs=tol)
    if crs is not None:
        assert fp.crs == crs
    assert fp.source == ("worldfile" if name.endswith(".png") else "geotiff")
    assert_valid_ring(fp)
    west, south, east, north = fp.bounds
    assert west <= fp.center[1] <= east and south <= fp.center[0] <= north


def test_projected_rasters_are_densified_geographic_are_not() -> None:
    utm = georeference_raster(corpus_raster("olinda_L7_ETMs.tif"))
    geographic = georeference_raster(corpus_raster("terra_lux_elev.tif"))
    assert utm is not None and geographic is not None
    assert len(utm.polygon) == 4 * 8 + 1
    assert len(geographic.polygon) == 5


def test_pixel_sizes() -> None:
    sizes = {name: georeference_raster(corpus_raster(name)).pixel_size_m for name in SAMPLES}  # type: ignore[union-attr]
    assert sizes["olinda_L7_ETMs.tif"] == pytest.approx(28.5, rel=0.01)
    assert sizes["olinda_dem_utm25s.tif"] == pytest.approx(90.0, rel=0.01)
    assert sizes["rasterio_RGB.byte.tif"] == pytest.approx(300.0, rel=0.01)
    # 1/120 degree: ~599 m east-west at 49.8 N, ~927 m north-south; the size is their mean
    lux_deg_m = 0.008333 * 111_320
    assert sizes["terra_lux_elev.tif"] == pytest.approx(
        lux_deg_m * (math.cos(math.radians(49.82)) + 1) / 2, rel=0.02
    )


def test_bahamas_matches_rasterio() -> None:
    # rasterio's documented transform_bounds of RGB.byte.tif to EPSG:4326
    fp = georeference_raster(corpus_raster("rasterio_RGB.byte.tif"))
    assert fp is not None
    assert fp.bounds == pytest.approx((-78.95865, 23.56499, -76.57492, 25.55087), abs=1e-3)


def test_dem_user_defined_utm_crs_from_geokeys() -> None:
    # ProjectedCSTypeGeoKey = user-defined, ProjectionGeoKey 16125 (UTM 25S) on GRS80
    fp = georeference_raster(corpus_raster("olinda_dem_utm25s.tif"))
    tif = georeference_raster(corpus_raster("olinda_L7_ETMs.tif"))
    assert fp is not None and tif is not None
    assert "25" in fp.crs
    assert fp.polygon[0] == pytest.approx(tif.polygon[0], abs=1e-6)  # same upper-left tiepoint


def test_png_worldfile_equals_tiff_within_a_pixel() -> None:
    png = georeference_raster(corpus_raster("olinda_L7_truecolor.png"))
    tif = georeference_raster(corpus_raster("olinda_L7_ETMs.tif"))
    assert png is not None and tif is not None
    one_pixel_deg = 28.5 / 111_320
    assert len(png.polygon) == len(tif.polygon)
    assert np.abs(np.array(png.polygon) - np.array(tif.polygon)).max() < one_pixel_deg
    assert png.center == pytest.approx(tif.center, abs=one_pixel_deg)


@pytest.mark.parametrize("crs_sidecar", [".prj", ".png.aux.xml"])
def test_uploaded_sidecars_dict(tmp_path: Path, crs_sidecar: str) -> None:
    png = corpus_raster("olinda_L7_truecolor.png")
    on_disk = georeference_raster(png)
    stem = "olinda_L7_truecolor"
    sidecars = {
        ".pgw": (RASTERS / f"{stem}.pgw").read_bytes(),
        crs_sidecar: (RASTERS / f"{stem}{crs_sidecar}").read_bytes(),
    }
    uploaded = georeference_raster(tmp_path / "upload.png", data=png.read_bytes(), sidecars=sidecars)
    assert uploaded == on_disk
    assert uploaded is not None and uploaded.crs == "EPSG:31985"  # ESRI WKT .prj too


def test_uploaded_without_sidecars_ignores_disk(tmp_path: Path) -> None:
    png = corpus_raster("olinda_L7_truecolor.png")
    assert georeference_raster(png, data=png.read_bytes(), sidecars={}) is None


# --------------------------------------------------------------------------- world files


def test_half_pixel_rule(tmp_path: Path) -> None:
    # 4x2 pixels of 0.5 deg; the world file names the CENTRE of the UL pixel (10.25, 50.75)
    world = world_file(0.5, 0.0, 0.0, -0.5, 10.25, 50.75)
    image = write_world_filed_raster(tmp_path / "grid.png", png_bytes(4, 2), world, WGS84_WKT)
    fp = georeference_raster(image)
    assert fp is not None
    assert fp.source == "worldfile" and fp.crs == "EPSG:4326"
    assert fp.polygon[0] == pytest.approx((10.0, 51.0), abs=1e-12)  # UL outer corner
    assert fp.bounds == pytest.approx((10.0, 50.0, 12.0, 51.0), abs=1e-12)
    assert fp.center == pytest.approx((50.5, 11.0), abs=1e-12)
    assert len(fp.polygon) == 5
    assert_valid_ring(fp)
    assert fp.pixel_size_m is not None and 35_000 < fp.pixel_size_m < 56_000


def test_world_file_crs_from_epsg_argument(tmp_path: Path) -> None:
    sidecars = {"wld": world_file(0.5, 0.0, 0.0, -0.5, 10.25, 50.75)}
    fp = georeference_raster(tmp_path / "grid.png", data=png_bytes(4, 2), sidecars=sidecars, epsg=4326)
    assert fp is not None
    assert fp.bounds == pytest.approx((10.0, 50.0, 12.0, 51.0), abs=1e-12)


def test_world_file_without_crs_is_an_error(tmp_path: Path) -> None:
    sidecars = {".pgw": world_file(0.5, 0.0, 0.0, -0.5, 10.25, 50.75)}
    with pytest.raises(ValueError, match="no CRS"):
        georeference_raster(tmp_path / "grid.png", data=png_bytes(), sidecars=sidecars)


def test_png_without_sidecar_is_none(tmp_path: Path) -> None:
    image = tmp_path / "olinda.png"
    image.write_bytes(corpus_raster("olinda_L7_truecolor.png").read_bytes())
    assert georeference_raster(image) is None
    plain = tmp_path / "plain.png"
    plain.write_bytes(png_bytes())
    assert georeference_raster(plain) is None


@pytest.mark.parametrize(
    "content",
    [
        b"0.5\n0.0\n0.0\n-0.5\n10.25\n",  # five lines
        b"0.5\n0.0\n0.0\n-0.5\nten\n50.75\n",  # a non-number
        b"0.0\n0.0\n0.0\n0.0\n10.25\n50.75\n",  # zero pixel size
    ],
    ids=["five-lines", "non-number", "degenerate"],
)
def test_broken_world_file_raises(tmp_path: Path, content: bytes) -> None:
    image = write_world_filed_raster(tmp_path / "broken.png", png_bytes(), content, WGS84_WKT)
    with pytest.raises(ValueError, match="world file"):
        georeference_raster(image)


def test_footprint_off_the_globe_raises(tmp_path: Path) -> None:
    sidecars = {".pgw": world_file(0.5, 0.0, 0.0, -0.5, 500.25, 50.75), ".prj": WGS84_WKT.encode()}
    with pytest.raises(ValueError, match="outside the globe"):
        georeference_raster(tmp_path / "far.png", data=png_bytes(), sidecars=sidecars)


def test_unknown_epsg_raises(tmp_path: Path) -> None:
    sidecars = {".pgw": world_file(0.5, 0.0, 0.0, -0.5, 10.25, 50.75)}
    with pytest.raises(ValueError, match="unknown EPSG code 999999"):
        georeference_raster(tmp_path / "grid.png", data=png_bytes(), sidecars=sidecars, epsg=999999)


def test_invalid_prj_raises(tmp_path: Path) -> None:
    sidecars = {".pgw": world_file(0.5, 0.0, 0.0, -0.5, 10.25, 50.75), ".prj": b"PROJCS[garbage"}
    with pytest.raises(ValueError, match=r"\.prj"):
        georeference_raster(tmp_path / "grid.png", data=png_bytes(), sidecars=sidecars)


def test_aux_xml_geotransform_without_world_file(tmp_path: Path) -> None:
    aux = (
        "<PAMDataset><SRS>EPSG:4326</SRS>"
        "<GeoTransform>10.0, 0.5, 0.0, 51.0, 0.0, -0.5</GeoTransform></PAMDataset>"
    )
    fp = georeference_raster(
        tmp_path / "g.png", data=png_bytes(4, 2), sidecars={".png.aux.xml": aux.encode()}
    )
    assert fp is not None and fp.source == "aux.xml"
    assert fp.bounds == pytest.approx((10.0, 50.0, 12.0, 51.0), abs=1e-12)


# --------------------------------------------------------------------------- synthetic GeoTIFFs


def write_geotiff(path: Path, geokeys: list[int], **tags: tuple[float, ...]) -> None:
    codes = {"scale": 33550, "tiepoint": 33922, "matrix": 34264}
    extratags = [(codes[k], "d", len(v), v, False) for k, v in tags.items()]
    extratags.append((34735, "H", len(geokeys), geokeys, False))
    tifffile.imwrite(path, np.zeros((2, 4), dtype=np.uint8), extratags=extratags)


def geokeys(*entries: tuple[int, int]) -> list[int]:
    flat = [1, 1, 0, len(entries)]
    for key, value in entries:
        flat += [key, 0, 1, value]
    return flat


def test_geotiff_model_transformation(tmp_path: Path) -> None:
    path = tmp_path / "m.tif"
    matrix = (0.5, 0.0, 0.0, 10.0, 0.0, -0.5, 0.0, 51.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    write_geotiff(path, geokeys((1024, 2), (1025, 1), (2048, 4326)), matrix=matrix)
    fp = georeference_raster(path)
    assert fp is not None and fp.source == "geotiff" and fp.crs == "EPSG:4326"
    assert fp.bounds == pytest.approx((10.0, 50.0, 12.0, 51.0), abs=1e-12)


def test_geotiff_pixel_is_point_shifts_half_pixel(tmp_path: Path) -> None:
    path = tmp_path / "p.tif"
    keys = geokeys((1024, 2), (1025, 2), (2048, 4326))
    write_geotiff(path, keys, scale=(0.5, 0.5, 0.0), tiepoint=(0.0, 0.0, 0.0, 10.25, 50.75, 0.0))
    fp = georeference_raster(path)
    assert fp is not None
    assert fp.bounds == pytest.approx((10.0, 50.0, 12.0, 51.0), abs=1e-12)


def test_geotiff_unknown_epsg_raises(tmp_path: Path) -> None:
    path = tmp_path / "u.tif"
    keys = geokeys((1024, 1), (1025, 1), (3072, 20999))
    write_geotiff(path, keys, scale=(30.0, 30.0, 0.0), tiepoint=(0.0, 0.0, 0.0, 500000.0, 9000000.0, 0.0))
    with pytest.raises(ValueError, match="unknown EPSG code 20999"):
        georeference_raster(path)


@pytest.mark.timeout(30)
def test_geotiff_non_finite_tiepoints_raise_instead_of_hanging(tmp_path: Path) -> None:
    """Three tiepoints and no pixel scale are fitted by least squares, and LAPACK never
    returned on an inf pixel column: the upload request hung at full CPU."""
    path = tmp_path / "gcp.tif"
    ties = (
        0.0,
        0.0,
        0.0,
        -34.9,
        -8.0,
        0.0,
        4.0,
        0.0,
        0.0,
        -34.8,
        -8.0,
        0.0,
        math.inf,
        2.0,
        0.0,
        -34.8,
        -8.1,
        0.0,
    )
    write_geotiff(path, geokeys((1024, 2), (2048, 4326)), tiepoint=ties)
    with pytest.raises(ValueError, match="non-finite"):
        georeference_raster(path)
    fine = (*ties[:12], 0.0, 2.0, 0.0, -34.9, -8.1, 0.0)  # the same three GCPs, finite: placed
    write_geotiff(path, geokeys((1024, 2), (2048, 4326)), tiepoint=fine)
    fp = georeference_raster(path)
    assert fp is not None and fp.bounds == pytest.approx((-34.9, -8.1, -34.8, -8.0), abs=1e-9)


@pytest.mark.parametrize("key", [2050, 2056])  # GeogGeodeticDatum, GeogEllipsoid
def test_geotiff_unknown_datum_or_ellipsoid_raises_value_error(tmp_path: Path, key: int) -> None:
    """pyproj's CRSError (not a ValueError) escaped the callers' handling: a 500."""
    path = tmp_path / "d.tif"
    write_geotiff(
        path,
        geokeys((1024, 2), (2048, 32767), (key, 9999)),
        scale=(0.5, 0.5, 0.0),
        tiepoint=(0.0,) * 3 + (10.0, 51.0, 0.0),
    )
    with pytest.raises(ValueError, match="PROJ cannot build"):
        georeference_raster(path)


def test_plain_tiff_is_none(tmp_path: Path) -> None:
    path = tmp_path / "plain.tif"
    tifffile.imwrite(path, np.zeros((2, 4), dtype=np.uint8))
    assert georeference_raster(path) is None


# --------------------------------------------------------------------------- EXIF

MARCO_ZERO_GPS = {1: "S", 2: (8.0, 3.0, 47.0), 3: "W", 4: (34.0, 52.0, 16.0)}  # 8°3'47"S 34°52'16"W


def test_exif_marco_zero_recife() -> None:
    location = exif_location(jpeg_bytes(MARCO_ZERO_GPS))
    assert location is not None
    assert location == pytest.approx((-8.063, -34.871), abs=1e-3)


def test_photo_footprint_from_exif(tmp_path: Path) -> None:
    fp = georeference_raster(tmp_path / "photo.jpg", data=jpeg_bytes(MARCO_ZERO_GPS))
    assert fp is not None and fp.source == "exif" and fp.crs == "EPSG:4326"
    assert fp.center == pytest.approx((-8.063, -34.871), abs=1e-3)
    assert fp.pixel_size_m is None
    assert_valid_ring(fp)
    west, south, east, north = fp.bounds
    assert west < fp.center[1] < east and south < fp.center[0] < north
    assert (north - south) * 111_320 < 100  # a small box around the camera, not an extent


def test_jpeg_without_gps_is_none(tmp_path: Path) -> None:
    data = jpeg_bytes()
    assert exif_location(data) is None
    assert georeference_raster(tmp_path / "photo.jpg", data=data) is None


@pytest.mark.parametrize(
    "gps",
    [
        {2: (8.0, 3.0, 47.0), 4: (34.0, 52.0, 16.0)},  # no N/S/E/W refs
        {1: "S", 2: (8.0, 75.0, 47.0), 3: "W", 4: (34.0, 52.0, 16.0)},  # 75 minutes
        {1: "S", 2: (98.0, 0.0, 0.0), 3: "W", 4: (34.0, 52.0, 16.0)},  # latitude > 90
        {1: "X", 2: (8.0, 3.0, 47.0), 3: "W", 4: (34.0, 52.0, 16.0)},  # bad ref
        {1: "N", 2: (0.0, 0.0, 0.0), 3: "E", 4: (0.0, 0.0, 0.0)},  # receiver without fix
        {**MARCO_ZERO_GPS, 9: "V"},  # GPSStatus void
    ],
    ids=["no-refs", "minutes", "lat-range", "bad-ref", "null-island", "void"],
)
def test_invalid_exif_gps_is_none(gps: dict[int, object]) -> None:
    assert exif_location(jpeg_bytes(gps)) is None


def test_exif_location_of_non_image_is_none() -> None:
    assert exif_location(b"not an image") is None
    assert math.isfinite(exif_location(jpeg_bytes(MARCO_ZERO_GPS))[0])  # type: ignore[index]
