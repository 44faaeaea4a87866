"""Geo tags from text: coordinates and places, regions are mentions not locations,
far small-town name matches dropped around the document's anchor, payload fields."""

from __future__ import annotations

import json

import h3
import pytest

from geo.gazetteer import Gazetteer
from ingest.geotagging import (
    GeoTag,
    GeoTagger,
    choose_anchor,
    coherent,
    footprint_geojson,
    geo_payload,
    hashed_location,
)


@pytest.fixture(scope="module")
def tagger() -> GeoTagger:
    return GeoTagger(Gazetteer.from_geonames(15000))


def test_coordinates_and_places_are_tagged(tagger: GeoTagger) -> None:
    tags = tagger.tags("Marco Zero: lat -8.0631, lon -34.8711. O Recife fica em Pernambuco, no Brasil.", "BR")
    by_source = {t.source for t in tags}
    assert by_source == {"text-coordinate", "gazetteer"}
    coord = next(t for t in tags if t.source == "text-coordinate")
    assert (coord.lat, coord.lon) == pytest.approx((-8.0631, -34.8711))
    kinds = {t.label: t.kind for t in tags if t.source == "gazetteer"}
    assert kinds.get("Recife") == "city" and kinds.get("Pernambuco") == "state"
    assert tags == sorted(tags, key=lambda t: -t.confidence)


def test_regions_are_mentions_not_locations(tagger: GeoTagger) -> None:
    payload = geo_payload(tagger.tags("Relatório sobre o Brasil e a Bahia.", "BR"))
    assert payload["geo_tags"] and "location" not in payload and "h3_r7" not in payload


def test_payload_has_points_tokens_and_area_cells() -> None:
    ring = [(-34.92, -8.04), (-34.83, -8.04), (-34.83, -7.95), (-34.92, -7.95), (-34.92, -8.04)]
    tags = [
        GeoTag(-8.0631, -34.8711, "text-coordinate", "x", 0.9),
        GeoTag(-7.995, -34.875, "raster", "worldfile", 1.0, ring=ring),
    ]
    payload = geo_payload(tags)
    assert payload["location"] == [{"lat": -8.0631, "lon": -34.8711}, {"lat": -7.995, "lon": -34.875}]
    assert h3.latlng_to_cell(-8.0631, -34.8711, 7) in payload["h3_r7"]
    assert payload["h3_area"] and set(payload["h3_area"]) <= set(payload["h3_area_up"])
    assert geo_payload([]) == {}
    # one point for decay ranking: the most confident tag; the hashed H3 vector of the tokens
    assert payload["geo_point"] == {"lat": -7.995, "lon": -34.875}
    indices, values = hashed_location(payload) or ([], [])
    assert indices and sum(v * v for v in values) == pytest.approx(1.0)
    country = GeoTag(-10.0, -55.0, "gazetteer", "Brasil", 0.9, kind="country", country="BR")
    assert hashed_location(geo_payload([country])) is None  # a region mention has no location
    hull = json.loads(footprint_geojson(tags) or "{}")
    assert hull["type"] == "Polygon"
    assert footprint_geojson([GeoTag(0, 0, "gazetteer", "x", 0.3)]) is None  # not confident enough


def test_anchor_keeps_local_and_major_places_and_drops_far_towns() -> None:
    recife = [
        GeoTag(-8.05, -34.88, "gazetteer", "Recife", 0.8, kind="city", population=1_600_000),
        GeoTag(-8.0631, -34.8711, "text-coordinate", "lat/lon", 0.9),
    ]
    far_town = GeoTag(-5.13, -39.73, "gazetteer", "Boa Viagem", 1.0, kind="city", population=50_000)
    sao_paulo = GeoTag(-23.55, -46.63, "gazetteer", "São Paulo", 0.9, kind="city", population=12_000_000)
    anchor = choose_anchor([recife])
    assert anchor is not None and anchor == pytest.approx((-8.06, -34.87), abs=0.02)
    kept = coherent([*recife, far_town, sao_paulo], anchor)
    assert far_town not in kept and sao_paulo in kept and all(t in kept for t in recife)
    assert coherent([far_town], None) == [far_town]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("A lama chegou ao rio Paraopeba em janeiro.", "Paraopeba"),
        ("O rompimento da barragem de Fundão afetou a região.", "Fundão"),
        ("Segundo o vereador Carlos Chagas, a obra atrasou.", "Carlos Chagas"),
        ("Water levels in Lake Guaíba rose again.", "Guaíba"),
    ],
)
def test_rivers_dams_and_people_named_like_towns_are_not_places(
    tagger: GeoTagger, text: str, name: str
) -> None:
    assert name not in {t.label for t in tagger.tags(text, "BR")}


def test_a_town_after_an_ordinary_word_is_still_a_place(tagger: GeoTagger) -> None:
    assert "Salvador" in {t.label for t in tagger.tags("As praias de Salvador estão impróprias.", "BR")}


def test_treaties_water_bodies_and_a_metropolis_bairro_are_not_far_towns(tagger: GeoTagger) -> None:
    labels = lambda text: {t.label for t in tagger.tags(text, "BR")}  # noqa: E731
    assert "Paris" not in labels("L'accord de Paris en 2015 et le protocole de Kyoto de 1997.")
    assert "Guaíba" not in labels("Porto Alegre's Guaíba lake rose to 5.3 m in May 2024.")
    assert "Paraíba do Sul" not in labels(
        "Em Campos dos Goytacazes, a cheia do Paraíba do Sul desalojou famílias."
    )
    # Penha (SC) is 1,800 km from Salvador: here it is a Salvador beach
    assert labels("Em Salvador, as praias da Penha e da Ribeira estavam impróprias.") == {"Salvador"}
    # a far town next to a small place stays: both may be meant
    assert {"Campos dos Goytacazes", "Macaé"} <= labels(
        "Em Campos dos Goytacazes houve cheia; em Macaé, não."
    )


def test_footprint_keeps_the_document_cluster_and_strong_far_places() -> None:
    recife = [GeoTag(-8.05, -34.88, "gazetteer", "Recife", 0.9, kind="city", population=1_600_000)] * 4
    olinda = [GeoTag(-8.01, -34.85, "gazetteer", "Olinda", 0.9, kind="city", population=390_000)]
    sydney = [GeoTag(-33.87, 151.21, "gazetteer", "Sydney", 0.9, kind="city", population=5_000_000)]
    from shapely.geometry import shape

    hull = shape(json.loads(footprint_geojson(recife + olinda + sydney) or "{}"))
    assert hull.bounds[2] < -34  # one mention of Sydney does not stretch the footprint
    hull = shape(json.loads(footprint_geojson(recife + olinda + sydney * 4) or "{}"))
    assert hull.bounds[2] > 150  # named often: kept


def test_addresses_and_affiliations_are_weak_evidence(tagger: GeoTagger) -> None:
    labels = lambda text: {t.label for t in tagger.tags(text, None)}  # noqa: E731
    # the consultant's office, the contributors' universities: not what the document is about
    assert "Nîmes" not in labels("Dossier réalisé par :\n165 rue Ph. Maupas - 30900 NIMES\nTél. : 04.66")
    assert "Sydney" not in labels(
        "Jason Grebely (Kirby Institute, University of New South\nWales), Sydney, Australia"
    )
    # the same names in running text stay
    assert "Nîmes" in labels("Le projet est situé près de Nîmes, dans le Gard.")
    assert "Sydney" in labels("The clinic in Sydney treated 300 children in 2019.")


def test_the_anchor_is_the_place_with_the_most_support() -> None:
    def city(name: str, lat: float, lon: float, conf: float, admin1: str) -> GeoTag:
        return GeoTag(lat, lon, "gazetteer", name, conf, kind="city", country="BR", admin1=admin1)

    # a beach of Salvador that is also a town in Ceará, named in two table chunks
    boa_viagem = [city("Boa Viagem", -5.13, -39.73, 1.0, "06")] * 2
    salvador = [city("Salvador", -12.98, -38.49, 0.75, "05")] * 2
    around = [city("Dias d'Ávila", -12.61, -38.30, 0.9, "05")]
    bahia = [GeoTag(-12.5, -41.7, "gazetteer", "Bahia", 1.0, kind="state", country="BR", admin1="05")]
    assert choose_anchor([boa_viagem, salvador + around, bahia]) == (-12.98, -38.49)
    hull = footprint_geojson(boa_viagem + salvador + around + bahia)
    assert hull is not None and "-39.73" not in hull


def test_a_document_about_the_world_has_no_anchor_or_footprint() -> None:
    capitals = [("GB", 51.51, -0.13), ("MM", 16.81, 96.16), ("EG", 30.06, 31.25), ("IN", 28.62, 77.21)]
    capitals += [("AU", -33.87, 151.21), ("TH", 13.75, 100.5)]
    tags = [GeoTag(lat, lon, "gazetteer", c, 1.0, kind="city", country=c) for c, lat, lon in capitals] * 4
    assert choose_anchor([tags]) is None and footprint_geojson(tags) is None
    # a report naming a few other countries around its own city keeps its footprint
    recife = [GeoTag(-8.05, -34.88, "gazetteer", "Recife", 0.9, kind="city", country="BR")] * 8
    assert footprint_geojson(recife + tags[:4]) is not None
