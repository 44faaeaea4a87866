"""Zone profiles and communities follow datasets and documents; corpus-wide questions rank
the zones by the asked categories (checked against a direct count), offline and with an
LLM map-reduce over the OpenAI-protocol test server."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import h3
import numpy as np
import pytest

from geo.gazetteer import Gazetteer
from graph.channel import GraphChannel
from graph.communities import global_block, global_query
from graph.sources import Parsed, Poi
from graph.store import GraphStore
from models.llm_client import LLMClient, LLMConfig
from tests.openai_protocol import OpenAIProtocolServer, Step

CENTRE = (-30.03, -51.22)  # Porto Alegre


def scatter(n: int, seed: int, prefix: str, cats: tuple[str, ...], spread: float = 0.08) -> list[Poi]:
    rng = np.random.default_rng(seed)
    lat, lon = CENTRE[0] + rng.normal(0, spread, n), CENTRE[1] + rng.normal(0, spread, n)
    return [
        Poi(f"{prefix}:{i}", f"{prefix} {i}", cats[i % len(cats)], float(lat[i]), float(lon[i]))
        for i in range(n)
    ]


def add(store: GraphStore, items: list[Poi], tag: bytes) -> str:
    info, created = store.add_dataset("t", Parsed(items), "f.csv", "csv", tag)
    assert created
    return info.id


def direct_counts(items: list[Poi], category: str, res: int) -> Counter[str]:
    return Counter(h3.latlng_to_cell(p.lat, p.lon, res) for p in items if p.category == category)


@pytest.fixture
def store(tmp_path: Path) -> GraphStore:
    s = GraphStore(tmp_path / "g.sqlite3", resolution=7, community_resolution=5)
    yield s
    s.close()


def community_schools(store: GraphStore) -> dict[str, int]:
    return {c: p["categories"].get("school", 0) for c, p in store.communities("t").items()}


def test_profiles_and_communities_follow_datasets_and_documents(store: GraphStore) -> None:
    first = scatter(400, 1, "a", ("school", "park"))
    ds1 = add(store, first, b"1")
    zones = store.zones("t")
    schools = {c: p["categories"]["school"] for c, p in zones.items() if "school" in p["categories"]}
    assert schools == dict(direct_counts(first, "school", 7))
    before = community_schools(store)
    expected = Counter(h3.cell_to_parent(c, 5) for c in direct_counts(first, "school", 7).elements())
    assert {c: n for c, n in before.items() if n} == dict(expected)
    for cell, p in store.communities("t").items():
        assert h3.get_resolution(cell) == 5 and "open-data reading" in p["summary"]
        assert p["zones"] == sum(1 for z in zones if h3.cell_to_parent(z, 5) == cell)

    second = scatter(200, 2, "b", ("school",))
    ds2 = add(store, second, b"2")
    after = community_schools(store)
    added = Counter(h3.cell_to_parent(h3.latlng_to_cell(p.lat, p.lon, 7), 5) for p in second)
    assert after == {c: before.get(c, 0) + added.get(c, 0) for c in set(before) | set(added)}
    assert sum(p["total"] for p in store.communities("t").values()) == 600

    # a document mentioning a zone shows up in that zone's and its community's profile
    cell = h3.latlng_to_cell(second[0].lat, second[0].lon, 7)
    store.index_document("t", "doc1", "Report", [{"page_no": 1, "text": "x", "h3_area": [cell]}])
    assert store.zones("t")[cell]["documents"] == ["doc1"]
    assert store.communities("t")[h3.cell_to_parent(cell, 5)]["documents"] == ["doc1"]
    store.delete_document("t", "doc1")
    assert store.communities("t")[h3.cell_to_parent(cell, 5)]["documents"] == []

    assert store.delete_dataset("t", ds2)
    assert community_schools(store) == before
    assert store.delete_dataset("t", ds1)
    assert store.communities("t") == {} and store.zones("t") == {}


def test_communities_are_rebuilt_for_another_resolution(tmp_path: Path) -> None:
    items = scatter(300, 3, "a", ("school", "park"))
    s = GraphStore(tmp_path / "g.sqlite3", community_resolution=5)
    add(s, items, b"1")
    s.close()
    s = GraphStore(tmp_path / "g.sqlite3", community_resolution=4)
    try:
        got = s.communities("t")
        assert got and all(h3.get_resolution(c) == 4 for c in got)
        assert sum(p["total"] for p in got.values()) == 300
    finally:
        s.close()


@pytest.mark.parametrize(
    ("question", "categories"),
    [
        ("Which areas have the most schools?", ("school",)),
        ("quais zonas têm mais farmácias?", ("pharmacy",)),
        ("Onde há mais escolas e hospitais?", ("school", "hospital")),
        ("What are the 3 zones with the highest number of parks?", ("park",)),
    ],
)
def test_global_questions_are_recognised(question: str, categories: tuple[str, ...]) -> None:
    query = global_query(question)
    assert query is not None and query.categories == categories


@pytest.mark.parametrize(
    "question",
    [
        "Which schools are within 300 m of a park?",
        "How many schools does Recife have?",
        "which areas are safe?",
        "Which areas have the most rain?",  # no category
    ],
)
def test_other_questions_are_not_global(question: str) -> None:
    assert global_query(question) is None


def test_the_zone_with_the_most_pois_of_a_category_ranks_first(tmp_path: Path) -> None:
    channel = GraphChannel(tmp_path / "g.sqlite3", Gazetteer.from_geonames(15000))
    try:
        items = scatter(1500, 4, "a", ("school", "park", "pharmacy"))
        # a dense cluster of pharmacies in one zone, away from the centre
        rng = np.random.default_rng(5)
        items += [
            Poi(f"c:{i}", "", "pharmacy", -29.95 + rng.normal(0, 0.002), -51.10 + rng.normal(0, 0.002))
            for i in range(60)
        ]
        channel.store.add_dataset("t", Parsed(items), "f.csv", "csv", b"x")
        counts = direct_counts(items, "pharmacy", 7)
        result = channel.answer_global("quais zonas têm mais farmácias?", "t", "pt")
        assert result is not None
        ranked = [(z["h3"], z["score"]) for z in result.zones]
        assert ranked[0] == counts.most_common(1)[0]
        assert [s for _, s in ranked] == sorted(counts.values(), reverse=True)[: len(ranked)]
        assert len(ranked) == 5 and "Zonas com mais farmácias" in result.text
        assert ranked[0][0] in result.text.splitlines()[1]
        assert {z["place"] for z in result.zones} <= {
            "Porto Alegre",
            "Canoas",
            "Alvorada",
            "Viamão",
            "Gravataí",
            "Cachoeirinha",
            "Guaíba",
            "Esteio",
        }
        comm = {h3.cell_to_parent(c, 5) for c in counts.elements()}
        assert result.communities[0]["score"] == max(
            sum(n for c, n in counts.items() if h3.cell_to_parent(c, 5) == p) for p in comm
        )
        # relational and non-global questions stay with the relational path
        assert channel.answer_global("which pharmacies are near schools?", "t") is None
        assert channel.answer_global("which areas have the most hospitals?", "t") is None  # none held
        three = channel.answer_global("Which are the 3 areas with the most schools?", "t")
        assert three is not None and len(three.zones) == 3
        assert three.zones[0]["score"] == direct_counts(items, "school", 7).most_common(1)[0][1]
    finally:
        channel.close()


def test_llm_map_reduce_over_community_summaries(tmp_path: Path, llm_server: OpenAIProtocolServer) -> None:
    client = LLMClient(LLMConfig(llm_server.url, "test-model", timeout_s=5.0, max_retries=0))
    channel = GraphChannel(tmp_path / "g.sqlite3", llm=client, llm_summaries=True)
    try:
        items = scatter(600, 6, "a", ("school", "park"), spread=0.3)
        channel.store.add_dataset("t", Parsed(items), "f.csv", "csv", b"x")

        def responder(body: dict) -> str:
            system = body["messages"][0]["content"]
            if body.get("response_format"):  # map
                return json.dumps({"answer": "this area has schools", "score": 50})
            if system.startswith("Summarise"):
                return "Many schools here."
            return "REDUCED: the areas with most schools are listed."

        llm_server.responder = responder
        result = channel.answer_global("Which areas have the most schools?", "t")
        assert result is not None and result.llm and result.text.startswith("REDUCED")
        mapped = [r for r in llm_server.requests if r.get("response_format")]
        assert len(mapped) == min(8, len(result.communities)) and len(result.communities) >= 2
        assert mapped[0]["response_format"]["json_schema"]["schema"]["required"] == ["answer", "score"]
        # the map step saw the LLM summary, which is cached in the community node
        assert "Many schools here." in mapped[0]["messages"][-1]["content"]
        top = result.communities[0]["h3"]
        cached = channel.store.communities("t")[top]["llm_summaries"]
        assert ["Many schools here." in text for text in cached.values()] == [True]
        # zones stay the counted ones
        counts = direct_counts(items, "school", 7)
        assert result.zones[0]["score"] == counts.most_common(1)[0][1]

        # an unusable map reply: the counted answer, with a note
        llm_server.reset()
        llm_server.script(Step(text="not json"))
        again = channel.answer_global("Which areas have the most schools?", "t")
        assert again is not None and not again.llm
        assert again.text.startswith("Zones with the most schools") and again.notes
    finally:
        channel.close()


def acl_channel(tmp_path: Path, **kwargs: object) -> tuple[GraphChannel, list[Poi], str, str]:
    """Schools in two zones of one community; a public document mentions the first zone, a
    hidden one mentions both and a third zone without POIs. Returns (channel, POIs, the
    zone both mention, the zone only the hidden document mentions)."""
    channel = GraphChannel(tmp_path / "g.sqlite3", **kwargs)  # type: ignore[arg-type]
    shared = h3.latlng_to_cell(*CENTRE, 7)
    parent = h3.cell_to_parent(shared, 5)
    other, empty = [c for c in h3.grid_ring(shared, 2) if h3.cell_to_parent(c, 5) == parent][:2]
    lat, lon = h3.cell_to_latlng(shared)
    items = [Poi(f"s:{i}", f"Escola {i}", "school", lat + 0.0002 * i, lon) for i in range(6)]
    items += [Poi("s:far", "Escola longe", "school", *h3.cell_to_latlng(other))]
    channel.store.add_dataset("t", Parsed(items), "f.csv", "csv", b"x")
    assert {h3.latlng_to_cell(p.lat, p.lon, 7) for p in items} == {shared, other}
    page = lambda cells: [{"page_no": 1, "text": "escolas", "h3_area": cells}]  # noqa: E731
    channel.index_document("t", "pub", "Public", page([shared]))
    channel.index_document("t", "fin", "Finance", page([shared, other, empty]))
    return channel, items, shared, empty


def test_global_answers_name_and_count_only_the_callers_documents(tmp_path: Path) -> None:
    channel, _, shared, _ = acl_channel(tmp_path)
    question = "Which areas have the most schools?"
    try:
        full = channel.answer_global(question, "t")
        plain = channel.answer_global(question, "t", visible=lambda d: d == "pub")
        assert full is not None and plain is not None
        by_cell = {z["h3"]: z for z in full.zones}
        assert by_cell[shared]["documents"] == ["fin", "pub"] and "(2 doc.)" in full.text
        assert "mentioned by 2 document(s)" in full.communities[0]["summary"]
        assert full.communities[0]["zones"] == 3  # two with schools, one only "fin" mentions

        # the same ranking for the caller, with only its document named and counted
        assert [(z["h3"], z["score"]) for z in plain.zones] == [(z["h3"], z["score"]) for z in full.zones]
        assert {d for z in plain.zones for d in z["documents"]} == {"pub"}
        assert "fin" not in json.dumps(global_block(plain))
        assert "(2 doc.)" not in plain.text and "(1 doc.)" in plain.text
        summary = plain.communities[0]["summary"]
        assert "mentioned by 1 document(s)" in summary and plain.communities[0]["zones"] == 2
        nobody = channel.answer_global(question, "t", visible=lambda d: False)
        assert nobody is not None and "doc." not in nobody.text
        assert "mentioned by 0 document(s)" in nobody.communities[0]["summary"]
        mentioning = channel.pages_mentioning_zones("t", [shared], lambda d: d == "pub")
        assert [p.doc_id for p in mentioning] == ["pub"]
        assert {p.doc_id for p in channel.pages_mentioning_zones("t", [shared])} == {"pub", "fin"}
    finally:
        channel.close()


def test_cached_llm_summaries_do_not_cross_callers(tmp_path: Path, llm_server: OpenAIProtocolServer) -> None:
    client = LLMClient(LLMConfig(llm_server.url, "test-model", timeout_s=5.0, max_retries=0))
    channel, _, _, _ = acl_channel(tmp_path, llm=client, llm_summaries=True)

    def responder(body: dict) -> str:
        if body.get("response_format"):
            return json.dumps({"answer": "schools here", "score": 50})
        if body["messages"][0]["content"].startswith("Summarise"):  # echoes what it was given
            return "LLM SUMMARY OF: " + body["messages"][-1]["content"]
        return "REDUCED"

    llm_server.responder = responder
    question = "Which areas have the most schools?"
    try:

        def mapped_summaries() -> list[str]:
            return [r["messages"][-1]["content"] for r in llm_server.requests if r.get("response_format")]

        assert channel.answer_global(question, "t") is not None  # an admin first: its summary is cached
        assert any("mentioned by 2 document(s)" in m for m in mapped_summaries())
        llm_server.reset()
        llm_server.responder = responder
        assert channel.answer_global(question, "t", visible=lambda d: d == "pub") is not None
        seen = mapped_summaries()
        assert seen and not any("2 document(s)" in m for m in seen)
        assert any("LLM SUMMARY OF" in m and "mentioned by 1 document(s)" in m for m in seen)
        # both callers' summaries stay cached, each under its own text
        llm_server.reset()
        llm_server.responder = responder
        assert channel.answer_global(question, "t") is not None
        assert not [r for r in llm_server.requests if r["messages"][0]["content"].startswith("Summarise")]
        assert any("mentioned by 2 document(s)" in m for m in mapped_summaries())
    finally:
        channel.close()
