"""Relational questions through the HTTP API: POI datasets in, pairs with distances and
the documents that mention those places out; deletion reaches the graph."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator

import httpx
import pytest

from geo.distance import haversine_m
from graph.llm_parser import LLMConstraintParser
from service.carta import Carta
from service.query.types import SearchQuery
from tests.conftest import corpus_path
from tests.openai_protocol import OpenAIProtocolServer, Step
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer

QUESTION = "Quais escolas ficam a menos de 300 metros uma da outra no Recife?"


@pytest.fixture
def served(serve: Callable[..., LiveServer]) -> Iterator[tuple[LiveServer, httpx.Client]]:
    live = serve(gazetteers=[corpus_path("poi", "recife_bairros.geojson")])
    with httpx.Client(base_url=live.url, timeout=120) as c:
        yield live, c


def report_pdf() -> bytes:
    lines = [
        "Relatório de alagamentos no Recife, 2024.",
        "As ruas de Boa Viagem e do Pina alagaram perto das escolas municipais.",
    ]
    return make_pdf([lines], origin=(72, 72), line_step=24, fontsize=11)


def wait_for_document(client: httpx.Client, upload: dict, timeout_s: float = 300) -> str:
    """The document id once the ingestion job is ready (uploads are 202 + a job)."""
    job = upload.get("job")
    if job is None:
        return upload["document"]["id"]
    deadline = time.time() + timeout_s
    while job["status"] not in ("ready", "failed"):
        assert time.time() < deadline, f"job {job['id']} still {job['status']}"
        time.sleep(0.2)
        job = client.get(f"/v1/jobs/{job['id']}").json()
    assert job["status"] == "ready", job
    return job["document_id"]


def test_datasets_relational_ask_and_deletion(served: tuple[LiveServer, httpx.Client]) -> None:
    live, client = served
    schools = corpus_path("poi", "recife_escolas_municipais.geojson").read_bytes()
    up = client.post(
        "/v1/datasets", files={"file": ("escolas.geojson", schools)}, data={"category": "escola"}
    )
    assert up.status_code == 201, up.text
    dataset = up.json()["dataset"]
    assert dataset["pois"] == 223 and dataset["kind"] == "geojson"
    again = client.post("/v1/datasets", files={"file": ("x.geojson", schools)}, data={"category": "escola"})
    assert again.status_code == 200 and again.json() == {"dataset": dataset, "created": False}
    assert [d["id"] for d in client.get("/v1/datasets").json()] == [dataset["id"]]
    assert client.get(f"/v1/datasets/{dataset['id']}").json()["pois"] == 223

    doc = client.post("/v1/documents", files={"file": ("alagamentos.pdf", report_pdf())})
    assert doc.status_code in (201, 202), doc.text
    doc_id = wait_for_document(client, doc.json())

    body = client.post("/v1/ask", json={"question": QUESTION}).json()
    graph = body["graph"]
    assert graph is not None and graph["constraints"]["radius_m"] == 300
    assert len(graph["pairs"]) == 62  # eval/questions/relational.yaml rel-09, brute force
    pois = {p["id"]: p for p in graph["pois"]}
    for pair in graph["pairs"]:
        a, b = pois[pair["a"]], pois[pair["b"]]
        assert pair["dist_m"] <= 300
        assert pair["dist_m"] == pytest.approx(haversine_m(a["lat"], a["lon"], b["lat"], b["lon"]), abs=0.01)
    assert graph["geojson"]["type"] == "FeatureCollection"
    assert body["answer"].startswith("62 par(es)") and not body["refused"]
    assert doc_id in {c["doc_id"] for c in body["citations"]}  # the report mentions Recife
    assert f"[{doc_id} p.1]" in body["answer"]

    # a corpus-wide question: zones ranked by the count of schools (GraphRAG global search)
    overview = client.post("/v1/ask", json={"question": "Quais zonas têm mais escolas?"}).json()
    cells = Counter(r.h3 for r in live.carta.graph.store.pois("default", ["school"]))
    zones = overview["graph"]["zones"]
    assert overview["graph"]["kind"] == "global" and overview["graph"]["pairs"] == []
    assert [(z["h3"], z["score"]) for z in zones][0] == cells.most_common(1)[0]
    assert [z["score"] for z in zones] == sorted(cells.values(), reverse=True)[: len(zones)]
    assert overview["answer"].startswith("Zonas com mais escolas") and not overview["refused"]
    # zones are named by the gazetteer: here a Recife bairro polygon covering the zone's centre;
    # the name leads, the H3 id is the detail, the count is singular or plural (issue 16)
    assert isinstance(zones[0]["place"], str)
    assert f"1. {zones[0]['place']} (H3 {zones[0]['h3']}): {zones[0]['score']} escolas" in overview["answer"]

    # a question that is not relational keeps the document answer path
    plain = client.post("/v1/ask", json={"question": "O que alagou em 2024?"}).json()
    assert plain["graph"] is None

    assert client.delete(f"/v1/documents/{doc_id}").status_code == 200
    assert live.carta.graph.store.edges("default", "MENTIONS") == []
    assert client.delete(f"/v1/datasets/{dataset['id']}").json() == {"deleted": dataset["id"]}
    assert client.get("/v1/datasets").json() == []
    assert live.carta.graph.store.nodes("default") == []
    assert client.post("/v1/ask", json={"question": QUESTION}).json()["graph"] is None


@pytest.mark.parametrize(
    ("name", "data", "form", "status", "code"),
    [
        ("x.pdf", b"%PDF-1.7 not pois", {}, 415, "unsupported_poi_file"),
        ("x.json", b"{broken", {}, 415, "unsupported_poi_file"),
        (
            "x.geojson",
            json.dumps({"type": "FeatureCollection", "features": []}).encode(),
            {},
            422,
            "empty_dataset",
        ),
    ],
)
def test_bad_uploads_are_clear_4xx(
    served: tuple[LiveServer, httpx.Client], name: str, data: bytes, form: dict, status: int, code: str
) -> None:
    _, client = served
    r = client.post("/v1/datasets", files={"file": (name, data)}, data=form)
    assert r.status_code == status and r.json()["error"]["code"] == code
    assert client.get("/v1/datasets").json() == []
    missing = client.delete("/v1/datasets/nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_a_carta_with_an_llm_parses_graph_questions_by_schema(
    make_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    """CARTA_LLM_BASE_URL set: the graph's constraints come from the LLM's structured reply
    (here a 1 km radius the question does not state), and the request carries the schema."""
    carta = make_carta(geotag=False, llm_base_url=llm_server.url, llm_model="test-model", llm_max_retries=0)
    assert isinstance(carta.graph.parser, LLMConstraintParser)
    csv = b"id,name,category,lat,lon\n1,School A,school,-8.0600,-34.9000\n2,Park B,park,-8.0660,-34.9000\n"
    carta.graph.add_dataset(csv, "pois.csv", "default")
    constraints = {
        "categories": ["school", "park"],
        "pairs": [["school", "park"]],
        "radius_m": 1000,
        "place": None,
        "zones": None,
    }
    llm_server.script(Step(text=json.dumps(constraints)))
    answer = carta.ask(SearchQuery("Which schools are close to a park?", "default"))
    assert answer.graph is not None and answer.graph["constraints"]["radius_m"] == 1000
    # ~667 m apart: only the LLM's 1 km keeps the pair (the rules' default is 500 m)
    assert [(p["a"], p["b"]) for p in answer.graph["pairs"]] == [("pois:1", "pois:2")]
    assert llm_server.requests[0]["response_format"]["json_schema"]["strict"] is True
