from __future__ import annotations

import pytest

from geo.gazetteer import Gazetteer
from graph.parser import DEFAULT_PAIR, MAX_RADIUS_M, MIN_RADIUS_M, Constraints, RuleParser, constraints_schema


@pytest.fixture(scope="module")
def parser() -> RuleParser:
    return RuleParser(Gazetteer.from_geonames(15000))


@pytest.mark.parametrize(
    ("question", "pair", "radius", "place"),
    [
        ("Which recycling points are within 300 m of a park?", ("recycling", "park"), 300, None),
        (
            "Quais escolas ficam a menos de 1,5 km de um hospital em Porto Alegre?",
            ("school", "hospital"),
            1500,
            "Porto Alegre",
        ),
        (
            "Farmácias a até 200 metros de paradas de ônibus em Helsinki",
            ("pharmacy", "bus_stop"),
            200,
            "Helsinki",
        ),
        (
            "Which drinking fountains are within 0.5 kilometres of a bus stop in Recife?",
            ("water_point", "bus_stop"),
            500,
            "Recife",
        ),
        ("Bebedouros perto de banheiros públicos", ("water_point", "toilets"), 500, None),
        ("Lixeiras a 20 m de bancos de praça", ("waste_basket", "bench"), 20, None),
        ("Caixas eletrônicos a menos de 100 m de um banco", ("atm", "bank"), 100, None),
    ],
)
def test_pt_and_en_questions(
    parser: RuleParser, question: str, pair: tuple, radius: float, place: str | None
) -> None:
    c = parser.parse(question)
    assert c.relational
    assert c.pairs == (pair,)
    assert c.radius_m == radius
    assert c.place == place


def test_same_category_pairs(parser: RuleParser) -> None:
    assert parser.parse("pharmacies within 200 m of each other").pairs == (("pharmacy", "pharmacy"),)
    assert parser.parse("escolas a menos de 300 metros umas das outras").pairs == (("school", "school"),)


def test_zones_and_clamping(parser: RuleParser) -> None:
    c = parser.parse("schools within 50 km of a park, top 3 zones")
    assert c.zones == 3 and c.radius_m == MAX_RADIUS_M and "radius clamped to 5000 m" in c.defaulted
    assert parser.parse("parks within 1 m of a school").radius_m == MIN_RADIUS_M
    assert parser.parse("escolas perto de parques, 500 zonas").zones == 50


def test_default_radius_and_pair(parser: RuleParser) -> None:
    c = parser.parse("Which schools are near a park?")
    assert c.radius_m == 500 and "no radius given: 500 m" in c.defaulted
    empty = Constraints().clamped()
    assert empty.pairs == (DEFAULT_PAIR,) and empty.categories == DEFAULT_PAIR


def test_not_relational(parser: RuleParser) -> None:
    assert not parser.parse("What was the rainfall in Recife in 2024?").relational
    assert not parser.parse("Qual foi a receita no terceiro trimestre?").relational


def test_categories_the_tenant_holds_are_recognised_by_name(parser: RuleParser) -> None:
    c = parser.parse("post boxes within 80 m of a bus stop", known=["post_box", "bus_stop"])
    assert c.pairs == (("post_box", "bus_stop"),)


def test_llm_schema_is_strict() -> None:
    schema = constraints_schema()
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"categories", "pairs", "radius_m", "place", "zones"}
    assert "water_point" in schema["properties"]["categories"]["items"]["enum"]
