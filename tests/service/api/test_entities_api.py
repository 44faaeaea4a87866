"""GET /v1/entities and /v1/entities/{id}: the document graph over HTTP, with clear 4xx
answers for bad input and a graph that forgets a deleted document."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from service.api.streaming import parse_sse
from tests.conftest import corpus_path
from tests.docgraph.test_global_search import AMAZONAS, SALVADOR
from tests.utils.api import ingest_via_api
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer


def test_entities_list_detail_errors_and_deletion(serve: Callable[..., LiveServer]) -> None:
    live = serve()
    pdf = corpus_path("pdf", "br_ibama_autuacoes_amazonas_2010_p2.pdf")
    with httpx.Client(base_url=live.url, timeout=120) as client:
        doc = ingest_via_api(client, pdf.name, pdf.read_bytes())
        listed = client.get("/v1/entities", params={"q": "Ibama"})
        assert listed.status_code == 200, listed.text
        ibama = next(e for e in listed.json() if e["name"] == "IBAMA")
        assert ibama["kind"] == "org" and ibama["mentions"] >= 2 and ibama["documents"] == 1
        assert "instituto brasileiro do meio ambiente e dos recursos naturais renovaveis" in ibama["aliases"]
        # the expansion finds the same entity (folded: accents and case do not matter)
        by_name = client.get("/v1/entities", params={"q": "RENOVÁVEIS"}).json()
        assert [e["id"] for e in by_name] == [ibama["id"]]
        # % and _ are text, not SQL LIKE wildcards: "%" once listed every entity
        for pattern in ("%", "ib%ma", "ib_ma"):
            assert client.get("/v1/entities", params={"q": pattern}).json() == [], pattern

        detail = client.get(f"/v1/entities/{ibama['id']}")
        assert detail.status_code == 200, detail.text
        body = detail.json()
        assert {m["doc_id"] for m in body["mentions"]} == {doc["id"]}
        assert all(m["page_no"] == 1 for m in body["mentions"])
        assert any(m["rule"] == "acronym" and m["extractor"] == "acronym(dash)" for m in body["mentions"])
        assert body["merges"][0]["rule"] == "acronym"
        assert "Lei 9605/1998" in {r["name"] for r in body["relations"]}
        assert all(c["doc_id"] == doc["id"] for r in body["relations"] for c in r["chunks"])
        assert body["community"] is not None and body["community"]["summary"]

        assert client.get("/v1/entities/999999").status_code == 404
        assert client.get("/v1/entities/abc").status_code == 422
        assert client.get("/v1/entities", params={"q": "x" * 201}).status_code == 422
        assert client.get("/v1/entities", params={"limit": 0}).status_code == 422

        assert client.delete(f"/v1/documents/{doc['id']}").status_code in (200, 204)
        assert client.get("/v1/entities").json() == []
        assert client.get(f"/v1/entities/{ibama['id']}").status_code == 404


def test_entities_answer_409_when_the_document_graph_is_off(serve: Callable[..., LiveServer]) -> None:
    live = serve(docgraph=False)
    with httpx.Client(base_url=live.url, timeout=60) as client:
        response = client.get("/v1/entities")
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "docgraph_disabled"


def test_the_answer_names_its_entities_as_json_and_streamed(serve: Callable[..., LiveServer]) -> None:
    """AskResponse.entities: the document-graph entities the answer (then the question)
    names, with their mention counts, the same in the JSON body and the stream's `done`."""
    live = serve()
    question = "O que os documentos dizem sobre o IBAMA?"
    with httpx.Client(base_url=live.url, timeout=120) as client:
        for name, text in (("amazonas.pdf", AMAZONAS), ("salvador.pdf", SALVADOR)):
            ingest_via_api(client, name, make_pdf([text]))
        answer = client.post("/v1/ask", json={"question": question})
        assert answer.status_code == 200, answer.text
        chips = answer.json()["entities"]
        ibama = next(e for e in chips if e["name"] == "IBAMA")
        assert ibama["kind"] == "org" and ibama["documents"] == 1
        assert ibama["mentions"] == len(client.get(f"/v1/entities/{ibama['id']}").json()["mentions"])
        assert "FUNAI" in {e["name"] for e in chips}  # named by the answer, not the question
        assert len({e["id"] for e in chips}) == len(chips)
        with client.stream("POST", "/v1/ask", json={"question": question, "stream": True}) as stream:
            done = [data for event, data in parse_sse(stream.iter_lines()) if event == "done"]
        assert [e["id"] for e in done[0]["entities"]] == [e["id"] for e in chips]


def test_no_entities_in_the_answer_when_the_document_graph_is_off(serve: Callable[..., LiveServer]) -> None:
    live = serve(docgraph=False)
    with httpx.Client(base_url=live.url, timeout=120) as client:
        ingest_via_api(client, "amazonas.pdf", make_pdf([AMAZONAS]))
        answer = client.post("/v1/ask", json={"question": "Quem lavrou autos de infração no Amazonas?"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["entities"] == []
