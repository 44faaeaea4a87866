"""How a question was understood: the place it named with its country, the other places
that name could be ("did you mean"), the filters applied and the geodata path's reading."""

from __future__ import annotations

import pytest

from geo.gazetteer import Gazetteer
from service.query.geo_filter import GeoSpec, resolve, resolve_place
from service.query.types import SearchQuery
from service.query.understood import understood


@pytest.fixture(scope="module")
def gazetteer() -> Gazetteer:
    return Gazetteer.from_geonames(15000)


def prior_query(text: str, gazetteer: Gazetteer) -> SearchQuery:
    confident = [m for m in gazetteer.find_places(text) if m.confidence >= 0.6]
    best = max(confident, key=lambda m: m.confidence) if confident else None
    return SearchQuery(text, "t", prior=resolve_place(best) if best else None)


@pytest.mark.parametrize(
    ("question", "country"),
    [("Which cafes are within 100 m of a pharmacy in Helsinki?", "FI"), ("Parques em Recife", "BR")],
)
def test_a_confident_place_is_reported_with_its_country(
    gazetteer: Gazetteer, question: str, country: str
) -> None:
    u = understood(prior_query(question, gazetteer), gazetteer)
    assert u["place"]["country"] == country and u["place"]["id"].startswith("geonames:")
    assert u["place_use"] == "prior"
    assert {"kind": "geo_prior", "value": "filter"} in u["filters"]
    assert all(a["id"] != u["place"]["id"] for a in u["alternatives"])


def test_an_ambiguous_name_offers_did_you_mean(gazetteer: Gazetteer) -> None:
    u = understood(prior_query("Onde fica Santa Cruz?", gazetteer), gazetteer)
    assert u["place"] is None and u["place_use"] is None
    countries = {a["country"] for a in u["alternatives"]}
    assert len(u["alternatives"]) >= 2 and len(countries) >= 2
    assert {a["name"] for a in u["alternatives"]} == {"Santa Cruz"}


def test_filters_and_a_geodata_plan(gazetteer: Gazetteer) -> None:
    q = SearchQuery(
        "Quantas escolas há no Recife?",
        "t",
        doc_ids=["d1"],
        kinds=["pdf_page"],
        geo=resolve(GeoSpec(place="Recife"), gazetteer),
    )
    graph = {
        "plan": {
            "operation": "count",
            "target": {"category": "school"},
            "area": {"kind": "place", "name": "Recife"},
        },
        "notes": ["area: Recife (gazetteer)"],
    }
    u = understood(q, gazetteer, graph)
    assert u["place_use"] == "filter" and u["place"]["name"] == "Recife"
    kinds = [f["kind"] for f in u["filters"]]
    assert kinds == ["documents", "page_kinds", "geo_place"]
    assert u["geodata"]["operation"] == "count" and u["geodata"]["target"] == "school"
    assert u["geodata"]["area"] == "Recife" and u["geodata"]["notes"] == ["area: Recife (gazetteer)"]


def test_a_relational_reading_and_no_place(gazetteer: Gazetteer) -> None:
    graph = {
        "constraints": {"categories": ["cafe", "pharmacy"], "radius_m": 100.0, "place": "Helsinki"},
        "area": {"kind": "polygon", "place": "Helsinki"},
        "notes": [],
    }
    u = understood(SearchQuery("Quanto choveu em 2024?", "t"), gazetteer, graph)
    assert u["place"] is None and u["alternatives"] == [] and u["filters"] == []
    assert u["geodata"]["kind"] == "relational" and u["geodata"]["radius_m"] == 100.0
    assert u["geodata"]["target"] == "cafe, pharmacy"
