"""Map cards (ingest/map_card.py) and the reverse gazetteer lookup under them (geo/reverse.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from geo.gazetteer import Gazetteer
from ingest.loaders import LoadOptions
from ingest.map_card import MapCard, map_card
from ingest.upload import IngestRequest, open_upload, sniff_upload
from tests.conftest import corpus_path


@pytest.fixture(scope="module")
def gazetteer() -> Gazetteer:
    found = Gazetteer.from_geonames(15000)
    found.add_geojson(corpus_path("poi", "recife_bairros.geojson"))
    return found


def card_of(request: IngestRequest, gazetteer: Gazetteer | None) -> MapCard | None:
    upload = open_upload(request, sniff_upload(request, 10**9), LoadOptions(ocr_enabled=False))
    try:
        return map_card(request, upload, gazetteer)
    finally:
        upload.document.close()


def test_the_landsat_card_says_what_and_where_in_both_languages(gazetteer: Gazetteer) -> None:
    path = corpus_path("raster", "olinda_L7_ETMs.tif")
    card = card_of(IngestRequest(path.read_bytes(), path.name, "t", source_path=path), gazetteer)
    assert card is not None
    en, pt = card.english, card.portuguese
    for text in (en, pt):
        assert "GeoTIFF" in text and "349 x 352 pixels" in text and "uint8" in text
        assert "SIRGAS 2000 / UTM zone 25S (EPSG:31985)" in text
        assert "Olinda" in text and "Pernambuco" in text and "Brazil" in text
        assert "Beberibe" in text  # a Recife bairro (the tenant's gazetteer) under the footprint
        assert "Landsat 7" in text
    assert "pixel size 28.5 m" in en and "6 bands" in en and "west -34.9166" in en and "north -7.9498" in en
    assert "tamanho do pixel 28,5 m" in pt and "6 bandas" in pt and "oeste -34.9166" in pt
    assert {t.label: t.kind for t in card.region_tags} == {"Pernambuco": "state", "Brazil": "country"}
    assert all(not t.is_local for t in card.region_tags)  # regions add countries, not locations


def test_a_png_with_world_file_and_a_degree_grid(gazetteer: Gazetteer) -> None:
    png = corpus_path("raster", "olinda_L7_truecolor.png")
    card = card_of(IngestRequest(png.read_bytes(), png.name, "t", source_path=png), gazetteer)
    assert card is not None and "PNG with a world file" in card.english and "EPSG:31985" in card.english
    lux = corpus_path("raster", "terra_lux_elev.tif")
    card = card_of(IngestRequest(lux.read_bytes(), lux.name, "t", source_path=lux), gazetteer)
    assert card is not None
    assert "pixel size 0.00833333 degrees (about 763.31 m on the ground)" in card.english
    assert "minimum 141, maximum 547" in card.english and "nodata -32768" in card.english
    assert "Luxembourg" in card.english and "int16" in card.english
    # the Portuguese card names countries in Portuguese, with the English name after
    assert "Luxemburgo (Luxembourg)" in card.portuguese and "Luxemburgo" not in card.english


def test_vector_files_get_a_card_and_photos_do_not(gazetteer: Gazetteer) -> None:
    geojson = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"name": "Escola A"},
                "geometry": {"type": "Point", "coordinates": [-34.85, -8.0]},
            },
            {
                "type": "Feature",
                "properties": {"name": "Escola B"},
                "geometry": {"type": "Point", "coordinates": [-34.86, -8.01]},
            },
        ],
    }
    request = IngestRequest(json.dumps(geojson).encode(), "escolas.geojson", "t")
    card = card_of(request, gazetteer)
    assert card is not None
    assert "Vector map (GeoJSON) with 2 features (2 Point)" in card.english
    assert "Mapa vetorial (GeoJSON) com 2 feições" in card.portuguese and "EPSG:4326" in card.english
    assert "Olinda" in card.english
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), "white").save(buf, "PNG")
    assert (
        card_of(
            IngestRequest(buf.getvalue(), "photo.png", "t", source_path=Path("/nonexistent/photo.png")), None
        )
        is None
    )


def test_without_a_gazetteer_the_card_still_has_the_grid() -> None:
    path = corpus_path("raster", "rasterio_RGB.byte.tif")
    card = card_of(IngestRequest(path.read_bytes(), path.name, "t", source_path=path), None)
    assert card is not None and "EPSG:32618" in card.english and "pixel size 300.04 m" in card.english
    assert "none found" in card.english and card.region_tags == []


def test_a_projected_grid_gives_its_corners_in_its_own_crs() -> None:
    path = corpus_path("raster", "rasterio_RGB.byte.tif")
    card = card_of(IngestRequest(path.read_bytes(), path.name, "t", source_path=path), None)
    assert card is not None
    # the GeoTIFF's tie point (101985, 2826915) and 791 x 718 pixels of 300.04 m
    assert "Corners in its CRS (m): upper-left x 101985, y 2826915; lower-right x 339315" in card.english
    assert "Cantos no SRC (m): superior esquerdo x 101985, y 2826915" in card.portuguese
    lux = corpus_path("raster", "terra_lux_elev.tif")  # a degree grid: its extent says it
    card = card_of(IngestRequest(lux.read_bytes(), lux.name, "t", source_path=lux), None)
    assert card is not None and "Corners in its CRS" not in card.english
