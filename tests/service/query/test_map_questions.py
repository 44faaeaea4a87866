"""Map questions over the corpus rasters (issue 15): every raster is at rank 1 for a
"maps of <a place it covers>" question, in English and Portuguese, with and without the
place filter, among the rasters and a few corpus PDFs; and the CRS / pixel size of the
Olinda Landsat image is answered from its map card."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from shapely.geometry import box

from geo.reverse import circle
from ingest.upload import IngestRequest
from models.text_encoder import TextEncoder
from service.carta import Carta
from service.query.channels.maps import has_map_intent, map_score
from service.query.geo_filter import GeoSpec
from tests.conftest import CORPUS, settings_for

RASTERS = [
    "olinda_L7_ETMs.tif",
    "olinda_dem_utm25s.tif",
    "olinda_L7_truecolor.png",
    "rasterio_RGB.byte.tif",
    "rasterio_world.rgb.tif",
    "terra_lux_elev.tif",
    "poa_elevation.tif",
]
PDFS = ["br_balneabilidade_salvador_26-2010.pdf", "in_decadal_population_growth.pdf"]
# (raster expected at rank 1, question, the place filter's name)
QUESTIONS = [
    ("olinda_L7_ETMs.tif", "Which multispectral satellite images cover Olinda?", "Olinda"),
    ("olinda_L7_ETMs.tif", "Quais imagens de satélite multiespectrais cobrem Olinda?", "Olinda"),
    ("olinda_dem_utm25s.tif", "Which elevation maps cover Olinda?", "Olinda"),
    ("olinda_dem_utm25s.tif", "Quais mapas de elevação cobrem Olinda?", "Olinda"),
    ("olinda_L7_truecolor.png", "Which true colour maps cover Olinda?", "Olinda"),
    ("olinda_L7_truecolor.png", "Mapas em cor verdadeira de Olinda", "Olinda"),
    ("rasterio_RGB.byte.tif", "Which maps cover the Bahamas?", "Bahamas"),
    ("rasterio_RGB.byte.tif", "Mapas das Bahamas", "Bahamas"),
    ("rasterio_world.rgb.tif", "What maps show Brazil?", "Brazil"),
    ("rasterio_world.rgb.tif", "Mapas do Brasil", "Brasil"),
    ("terra_lux_elev.tif", "Which maps cover Luxembourg?", "Luxembourg"),
    ("terra_lux_elev.tif", "Mapas de Luxemburgo", "Luxemburgo"),
    ("poa_elevation.tif", "Which maps cover Porto Alegre?", "Porto Alegre"),
    ("poa_elevation.tif", "Imagem de satélite de Porto Alegre", "Porto Alegre"),
]


@pytest.fixture(scope="module")
def map_carta(
    tmp_path_factory: pytest.TempPathFactory, text_encoder: TextEncoder
) -> Iterator[tuple[Carta, dict]]:
    files = [CORPUS / "raster" / r for r in RASTERS] + [CORPUS / "pdf" / p for p in PDFS]
    bairros = CORPUS / "poi" / "recife_bairros.geojson"
    if not all(p.exists() for p in [*files, bairros]):
        pytest.skip(f"shared corpus not found under {CORPUS} (set CARTA_CORPUS_DIR)")
    data_dir = tmp_path_factory.mktemp("maps")
    # OCR off: the rasters' OCR is junk that ingest/readable.py drops (tests/ingest/test_readable.py)
    settings = settings_for(data_dir, gazetteers=[bairros], ocr_enabled=False)
    carta = Carta(settings, text_encoder=text_encoder)
    names = {}
    for path in files:
        result = carta.ingest(IngestRequest(path.read_bytes(), path.name, "default", source_path=path))
        names[result.document.id] = path.name
    yield carta, names
    carta.close()


@pytest.mark.parametrize("filtered", [False, True], ids=["prior", "place-filter"])
@pytest.mark.parametrize(("expected", "question", "place"), QUESTIONS)
def test_each_raster_ranks_first_for_maps_of_a_place_it_covers(
    map_carta: tuple[Carta, dict], expected: str, question: str, place: str, filtered: bool
) -> None:
    carta, names = map_carta
    geo = GeoSpec(place=place) if filtered else None
    result = carta.search(carta.query(question, "default", geo=geo))
    ranked = [names[p.doc_id] for p in result.pages]
    assert ranked[0] == expected, ranked
    if filtered or result.geo_prior:  # the maps channel ranks once a place is known
        assert "maps" in result.pages[0].channels


def test_maps_of_a_country_asked_under_a_filter_on_one_of_its_cities(map_carta: tuple[Carta, dict]) -> None:
    """The filter (Sydney) is not the place asked about (Australia): the answer still reads
    the place the question names, and the world map's extent holds it."""
    carta, names = map_carta
    for question in ("Which maps cover Australia?", "Quais mapas cobrem a Austrália?"):
        answer = carta.ask(carta.query(question, "default", geo=GeoSpec(place="Sydney")))
        assert not answer.refused, answer.answer
        assert {names[c.doc_id] for c in answer.citations} == {"rasterio_world.rgb.tif"}


def test_the_crs_and_pixel_size_come_from_the_card(map_carta: tuple[Carta, dict]) -> None:
    carta, _ = map_carta
    q = "What coordinate reference system and pixel size does the Olinda Landsat image use?"
    answer = carta.ask(carta.query(q, "default"))
    assert not answer.refused
    assert "EPSG:31985" in answer.answer and "28.5 m" in answer.answer
    pt = carta.ask(
        carta.query(
            "Qual o sistema de referência de coordenadas e o tamanho do pixel da imagem Landsat de Olinda?",
            "default",
        )
    )
    assert not pt.refused and "EPSG:31985" in pt.answer


def test_map_intent_in_both_languages() -> None:
    for question in [
        "Which maps cover Olinda?",
        "mapas de Recife",
        "imagem de satélite de Olinda",
        "What maps show X",
    ]:
        assert has_map_intent(question), question
    assert not has_map_intent("What was the population growth of Nagaland?")
    # a fact read off one map of a report is not a request for maps
    assert not has_map_intent(
        "Segundo o mapa Carte 1 do estudo de Séranon, quantos MW a França conectou em 2018?"
    )
    assert not has_map_intent("Which major cities are marked on the Florida Power Plant Location Map?")
    assert not has_map_intent("Qual a área de milho em Mato Grosso?")


def test_a_world_map_is_not_a_map_of_a_city() -> None:
    city = circle(-8.0, -34.85, 10_000)
    local = box(-34.92, -8.04, -34.83, -7.95)
    world = box(-180, -90, 180, 90)
    assert map_score(local, city) > 10 * map_score(world, city) > 0
    assert map_score(box(10, 10, 11, 11), city) == 0.0


def test_a_map_is_indexed_with_its_card_and_the_countries_it_covers(map_carta: tuple[Carta, dict]) -> None:
    carta, names = map_carta
    world = next(doc_id for doc_id, name in names.items() if name == "rasterio_world.rgb.tif")
    chunks = carta.page_chunks("default", world, 1)
    text = "\n".join(c["text"] for c in chunks)
    assert "Map card of rasterio_world.rgb.tif" in text and "Ficha do mapa" in text
    assert {"BR", "LU", "BS"} <= set(chunks[0]["countries"])
    assert carta.registry.get("default", world).footprint  # what the maps channel measures
