"""Map card answers: the card line holding the asked fact (CRS, extent, size), for the map the
question names, in the question's language; nothing when no card fact is asked or the map
named is not the one in the evidence."""

from __future__ import annotations

from service.answer.map_cards import MapCardAnswerer, asked_field, asked_fields
from service.query.types import ChunkEvidence, PageEvidence

LUX_EN = "\n".join(
    [
        "Map card of terra_lux_elev.tif.",
        "Raster map: single-band grid (elevation).",
        "Format: GeoTIFF; size 95 x 90 pixels; 1 band; data type int16.",
        "terra_lux_elev.tif (elevation): coordinate reference system (CRS) WGS 84 (EPSG:4326); "
        "pixel size 0.00833333 degrees (about 763.31 m on the ground).",
        "Extent in degrees (WGS84): west 5.7417, east 6.5333, south 49.4417, north 50.1917.",
        "Places covered: municipalities: Luxembourg, Esch-sur-Alzette; country: Luxembourg.",
    ]
)
LUX_PT = (  # a card whose lines were joined into one
    "Ficha do mapa terra_lux_elev.tif. Mapa raster: grade de banda única (elevação). Formato: GeoTIFF; "
    "tamanho 95 x 90 pixels; 1 banda; tipo de dado int16. Extensão em graus (WGS84): oeste 5.7417, "
    "leste 6.5333, sul 49.4417, norte 50.1917. Lugares cobertos: país: Luxembourg."
)


def _page(*texts: str) -> PageEvidence:
    chunks = [
        ChunkEvidence("lux", 1, n, text, [0, 0, 100, 20 * (n + 1)], [600, 800], n + 1, 1.0)
        for n, text in enumerate(texts)
    ]
    return PageEvidence("lux", 1, "terra_lux_elev", "terra_lux_elev.tif", "image", 1.0, chunks=chunks)


def test_the_asked_fact_is_read_from_its_line() -> None:
    answerer = MapCardAnswerer()
    page = _page(LUX_EN, LUX_PT)
    extent = answerer.answer("What is the bounding box of the Luxembourg elevation raster?", "en", [page])
    assert extent is not None and extent.text.startswith("Extent in degrees (WGS84): west 5.7417")
    assert "[lux p.1]" in extent.text and extent.citations[0].bbox == [0, 0, 100, 20]
    crs = answerer.answer("Which EPSG code does the Luxembourg elevation raster use?", "en", [page])
    assert crs is not None and "EPSG:4326" in crs.text and "Extent" not in crs.text
    size = answerer.answer(
        "Quantas bandas e quantos pixels tem o raster de elevação de Luxembourg?", "pt", [page]
    )
    assert size is not None and size.text.startswith("Formato: GeoTIFF; tamanho 95 x 90 pixels; 1 banda")
    assert size.citations[0].bbox == [0, 0, 100, 40]  # the Portuguese card


def test_no_card_answer_without_a_card_fact_or_for_another_map() -> None:
    answerer = MapCardAnswerer()
    page = _page(LUX_EN)
    towns = "Who made the Luxembourg elevation raster?"
    assert answerer.answer(towns, "en", [page]) is None
    assert answerer.answer("What is the extent of the Recife flood map?", "en", [page]) is None
    assert (
        answerer.answer("What is the extent of the Luxembourg map?", "en", [_page("A plain page.")]) is None
    )


def test_which_maps_cover_a_place_lists_each_with_what_it_covers() -> None:
    other = PageEvidence("bah", 1, "bahamas", "rgb.tif", "image", 0.9, chunks=[])
    answer = MapCardAnswerer().answer("Quais mapas cobrem Esch-sur-Alzette?", "pt", [other, _page(LUX_EN)])
    assert answer is not None and answer.text.startswith("terra_lux_elev.tif: Places covered: municipalities")
    assert [c.doc_id for c in answer.citations] == ["lux"]


def test_asked_field_in_both_languages() -> None:
    assert asked_field("What is the pixel size of the Porto Alegre raster?") == "crs"
    assert asked_field("Qual a extensão em graus do mapa?") == "extent"
    assert asked_field("What area, in degrees of longitude and latitude, does it cover?") == "extent"
    assert asked_field("Qual o tamanho em pixels do modelo de elevação?") == "format"
    assert asked_field("Who wrote this report?") is None


def test_a_map_covers_the_resolved_place_its_extent_holds_though_its_card_does_not_name_it() -> None:
    """A question "which maps cover Dudelange?": the card's list of places stops before Dudelange, but
    the place the search resolved lies inside the card's extent, which the answer quotes. A
    place outside the extent, one with no coordinates, or a subject the place's name does not
    account for ("elevation maps of Trier" and no elevation in the place) gives no answer."""
    answerer = MapCardAnswerer()
    page = _page(LUX_EN, LUX_PT)
    dudelange = {"place": "Dudelange", "lat": 49.48, "lon": 6.0875}
    assert answerer.answer("Which maps cover Dudelange?", "en", [page]) is None  # no place resolved
    answer = answerer.answer("Which maps cover Dudelange?", "en", [page], dudelange)
    assert answer is not None and answer.text.startswith("terra_lux_elev.tif: Extent in degrees (WGS84)")
    assert "[lux p.1]" in answer.text
    pt = answerer.answer("Quais mapas cobrem Dudelange?", "pt", [page], dudelange)
    assert pt is not None and "Extensão em graus (WGS84): oeste 5.7417" in pt.text
    trier = {"place": "Trier", "lat": 49.7596, "lon": 6.6439}  # east of 6.5333
    assert answerer.answer("Which maps cover Trier?", "en", [page], trier) is None
    assert answerer.answer("Which maps cover Dudelange?", "en", [page], {"place": "Dudelange"}) is None
    assert answerer.answer("Which roman ruins maps cover Dudelange?", "en", [page], dudelange) is None


def test_every_fact_asked_is_read() -> None:
    """A question asking for two facts gets both card lines; a cue one fact takes ("pixel
    size") asks for no other ("size")."""
    question = "Quantos pixels de largura e de altura tem o raster, e que valor ele usa como NoData?"
    assert asked_fields(question) == ["values", "format"]
    assert asked_fields("What is the pixel size of the Porto Alegre raster?") == ["crs"]
    assert asked_fields("Quelle est la taille des pixels et l'étendue de la carte ?") == ["crs", "extent"]


def test_a_question_for_two_facts_gets_both_lines() -> None:
    both = MapCardAnswerer().answer(
        "What is the EPSG code and the bounding box of the Luxembourg elevation raster?",
        "en",
        [_page(LUX_EN)],
    )
    assert both is not None and "EPSG:4326" in both.text and "west 5.7417" in both.text


def test_a_map_named_by_its_file_and_a_minimum_asked_in_portuguese() -> None:
    answerer = MapCardAnswerer()
    page = _page(LUX_EN)
    size = answerer.answer(
        "Combien de bandes et quelles dimensions a le planisphère terra_lux_elev.tif ?", "fr", [page]
    )
    assert size is not None and size.text.startswith("Format: GeoTIFF; size 95 x 90 pixels")
    assert asked_fields("Qual é a altitude mínima registrada no raster de elevação, em metros?") == ["values"]
    assert asked_fields("What are the projected coordinates of the upper-left corner of the image?") == [
        "corners"
    ]


def test_a_satellite_image_is_named_by_its_place_not_by_the_word_satellite() -> None:
    """ "the Luxembourg satellite image": "satellite" says what kind of map is meant (its card
    writes "Raster map"), as "map" and "image" do; the card still answers."""
    answer = MapCardAnswerer().answer(
        "What is the bounding box of the Luxembourg satellite image?", "en", [_page(LUX_EN)]
    )
    assert answer is not None and answer.text.startswith("Extent in degrees (WGS84): west 5.7417")
