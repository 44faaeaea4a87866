"""LLM extraction at ingestion, against the loopback OpenAI-protocol server scripted as an
extracting model: entities and relations per chunk (strict json_schema), merged with the
offline mentions; the reply cached by chunk hash (no second call); the per-document budget;
a malformed reply falls back to offline extraction with one log line; the job's progress;
deleting the document leaves no row and no byte of it in the docgraph file."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from docgraph.extract import extract
from docgraph.llm_extract import ChunkExtraction, ChunkGraph, to_extraction
from docgraph.store import merge_llm
from ingest.pipeline import Progress
from ingest.upload import IngestRequest
from service.carta import Carta
from service.erasure import verify
from tests.openai_protocol import OpenAIProtocolServer, Step, part_texts
from tests.utils.documents import make_pdf

TENANT = "acme"
PAGE = "A coordenadora Joana Quixabeira dirige a Fundação Nacional do Índio (FUNAI) em Manaus."
# what the scripted model knows: (name, kind, acronym); it names those the passage holds
KNOWN = [
    ("Joana Quixabeira", "person", None),
    ("Fundação Nacional do Índio", "org", "FUNAI"),
    ("Hidrovia Tapajós", "programme", None),
    ("Yara Pindorama", "person", None),  # never in any passage: must not be stored
]


def extracting_model(body: dict[str, Any]) -> str:
    """The reply of a model that extracts the KNOWN entities its passage names, and says
    that every person there directs every organisation there."""
    passage = part_texts(body)[-1]
    entities = [
        {"name": n, "kind": k, "acronym": a, "description": f"{n} is named."}
        for n, k, a in KNOWN
        if n in passage or n.startswith("Yara")
    ]
    people = [e["name"] for e in entities if e["kind"] == "person" and e["name"] in passage]
    orgs = [e["name"] for e in entities if e["kind"] == "org"]
    relations = [
        {"source": p, "target": o, "type": "directs", "description": f"{p} directs {o}."}
        for p in people
        for o in orgs
    ]
    return json.dumps({"entities": entities, "relations": relations})


@pytest.fixture
def llm_carta(
    make_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer, tmp_path: Path
) -> Callable[..., Carta]:
    llm_server.responder = extracting_model

    def build(**overrides: Any) -> Carta:
        return make_carta(tmp_path / "data", **(llm_server.settings() | overrides))

    return build


def _extraction_requests(server: OpenAIProtocolServer) -> list[dict[str, Any]]:
    return [
        r
        for r in server.requests
        if (r.get("response_format") or {}).get("json_schema", {}).get("name") == "chunk_graph"
    ]


def test_llm_entities_and_relations_are_stored_with_their_chunk(
    llm_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    carta = llm_carta()
    events: list[Progress] = []
    doc = carta.ingest(IngestRequest(make_pdf([PAGE]), "funai.pdf", TENANT), events.append).document
    requests = _extraction_requests(llm_server)
    assert len(requests) == 1
    assert requests[0]["response_format"]["json_schema"]["strict"] is True
    assert carta.docgraph is not None
    person = carta.docgraph.search(TENANT, "joana quixabeira")
    assert [(e.name, e.kind) for e in person] == [("Joana Quixabeira", "person")]
    assert carta.docgraph.search(TENANT, "yara") == []  # named by the model, not by the text
    entity = carta.docgraph.entity(TENANT, person[0].id)
    assert entity is not None
    assert [(m["doc_id"], m["page_no"], m["extractor"]) for m in entity["mentions"]] == [(doc.id, 1, "llm")]
    assert [
        (r["name"], r["type"], r["description"]) for r in entity["relations"] if r["type"] != "co-occurs"
    ] == [("FUNAI", "directs", "Joana Quixabeira directs Fundação Nacional do Índio.")]
    community = entity["community"]  # the LLM's relation joins them in one community
    assert community is not None and {"Joana Quixabeira", "FUNAI"} <= set(community["entities"])
    funai = carta.docgraph.search(TENANT, "funai")
    assert [e.name for e in funai] == ["FUNAI"]  # the LLM's and the offline mention: one entity
    assert [(p.stage, p.done, p.total) for p in events if p.stage == "entities"] == [("entities", 1, 1)]
    assert events[-1].stage == "done"


def test_a_cached_chunk_is_not_sent_again(
    llm_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    carta = llm_carta()
    doc = carta.ingest(IngestRequest(make_pdf([PAGE]), "funai.pdf", TENANT)).document
    assert carta.docgraph is not None
    before = carta.docgraph.counts(TENANT)
    assert len(_extraction_requests(llm_server)) == 1 and before["llm_extractions"] == 1
    carta._index_docgraph(doc)  # the document indexed again (reindex): its chunk is cached
    assert len(_extraction_requests(llm_server)) == 1
    assert carta.docgraph.counts(TENANT) == before
    assert carta.docgraph.search(TENANT, "joana quixabeira")  # the cached reply still gives them


def test_the_budget_leaves_the_other_chunks_to_the_offline_extractors(
    llm_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    carta = llm_carta(docgraph_llm_chunks=1)
    pages = [PAGE, "Joana Quixabeira visitou a Hidrovia Tapajós.", "O Ibama (IBAMA) fiscalizou a obra."]
    pages[2] = "O Instituto Brasileiro do Meio Ambiente (IBAMA) fiscalizou a obra da Hidrovia Tapajós."
    carta.ingest(IngestRequest(make_pdf(pages), "tres.pdf", TENANT))
    assert len(_extraction_requests(llm_server)) == 1  # page 1 only
    assert carta.docgraph is not None
    assert carta.docgraph.search(TENANT, "hidrovia tapajos") == []  # pages 2 and 3: offline only
    assert [e.name for e in carta.docgraph.search(TENANT, "ibama")] == ["IBAMA"]  # offline still runs
    assert carta.docgraph.search(TENANT, "joana quixabeira")[0].mentions == 1


def test_a_malformed_reply_falls_back_to_offline_with_one_log_line(
    llm_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer, caplog: pytest.LogCaptureFixture
) -> None:
    carta = llm_carta()
    llm_server.script(Step(text='{"entities": [{"name": "Joana"'), Step(text='{"entities": "none"}'))
    with caplog.at_level(logging.WARNING, logger="docgraph.llm_extract"):
        carta.ingest(IngestRequest(make_pdf([PAGE, "A FUNAI atua em Manaus."]), "funai.pdf", TENANT))
    assert len(_extraction_requests(llm_server)) == 2
    assert carta.docgraph is not None
    assert carta.docgraph.search(TENANT, "joana quixabeira") == []
    funai = carta.docgraph.search(TENANT, "funai")
    assert [(e.name, e.mentions) for e in funai] == [("FUNAI", 2)]  # the offline mentions
    lines = [r for r in caplog.records if "LLM entity extraction" in r.getMessage()]
    assert len(lines) == 1 and "2 of 2 chunks failed" in lines[0].getMessage()
    assert carta.docgraph.counts(TENANT)["llm_extractions"] == 0  # nothing cached of a bad reply


def test_an_unreachable_endpoint_stops_asking_for_the_document(
    llm_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    carta = llm_carta()
    llm_server.script(Step(status=500))
    carta.ingest(IngestRequest(make_pdf([PAGE, "A FUNAI atua em Manaus.", "Outra FUNAI."]), "f.pdf", TENANT))
    assert len(_extraction_requests(llm_server)) == 1  # the first failure ends the LLM's part
    assert carta.docgraph is not None and [e.name for e in carta.docgraph.search(TENANT, "funai")] == [
        "FUNAI"
    ]


def test_deleting_the_document_leaves_no_residue(
    llm_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer, tmp_path: Path
) -> None:
    carta = llm_carta(erasure="immediate")
    doc = carta.ingest(IngestRequest(make_pdf([PAGE]), "funai.pdf", TENANT)).document
    assert carta.docgraph is not None and carta.docgraph.counts(TENANT)["llm_extractions"] == 1
    markers = ["Joana Quixabeira", "directs"]
    assert any(h.path.startswith("docgraph") for h in verify(tmp_path / "data", doc.id, markers).hits)
    carta.delete(TENANT, doc.id)
    assert set(carta.docgraph.counts(TENANT).values()) == {0}
    left = [h for h in verify(tmp_path / "data", doc.id, markers).hits if h.path.startswith("docgraph")]
    assert left == []


def test_llm_mentions_defer_to_the_offline_spans() -> None:
    text = (
        "O Instituto Brasileiro do Meio Ambiente (IBAMA) multou a Mineradora Taboca em Presidente Figueiredo."
    )
    graph = ChunkGraph.model_validate(
        {
            "entities": [
                {"name": "IBAMA", "kind": "org", "acronym": "IBAMA", "description": ""},
                {"name": "Mineradora Taboca", "kind": "org", "acronym": None, "description": ""},
                {"name": "Vale", "kind": "org", "acronym": None, "description": ""},
            ],
            "relations": [
                {"source": "IBAMA", "target": "Mineradora Taboca", "type": "Fined", "description": ""},
                {"source": "IBAMA", "target": "Vale", "type": "fined", "description": ""},
            ],
        }
    )
    found = to_extraction(text, graph)
    assert [m.text for m in found.mentions] == ["IBAMA", "Mineradora Taboca"]  # Vale is not in the text
    assert found.relations == [(0, 1, "fined")]
    offline = extract(text)
    merged, relations = merge_llm(offline, found)
    assert [m.rule for m in merged] == ["acronym(long)", "llm"]  # IBAMA: the offline definition
    assert relations == [(0, 1, "fined", "")]
    assert merge_llm(offline, ChunkExtraction([], [])) == (offline, [])


def test_a_second_document_adds_its_rows_resolved_to_the_first_documents_entities(
    llm_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    carta = llm_carta(docgraph_llm_summaries=0)
    first = carta.ingest(IngestRequest(make_pdf([PAGE]), "funai.pdf", TENANT)).document
    assert carta.docgraph is not None
    joana = carta.docgraph.search(TENANT, "joana quixabeira")[0]
    before = carta.docgraph.entity(TENANT, joana.id)
    assert before is not None
    second = "A Fundação Nacional do Índio acompanhou Joana Quixabeira na Hidrovia Tapajós."
    other = carta.ingest(IngestRequest(make_pdf([second]), "tapajos.pdf", TENANT)).document
    requests = _extraction_requests(llm_server)
    assert len(requests) == 2 and "Hidrovia" in part_texts(requests[1])[-1]  # only the new chunk sent
    funai = carta.docgraph.search(TENANT, "funai")
    # the expansion without its acronym (offline: the known expansion; the LLM: its acronym) is FUNAI
    assert [(e.name, e.documents) for e in funai] == [("FUNAI", 2)]
    after = carta.docgraph.entity(TENANT, joana.id)  # the same entity, the first document's rows kept
    assert (
        after is not None and [m for m in after["mentions"] if m["doc_id"] == first.id] == before["mentions"]
    )
    assert {m["doc_id"] for m in after["mentions"]} == {first.id, other.id}
    hidrovia = carta.docgraph.search(TENANT, "hidrovia tapajos")
    assert [(e.kind, e.documents) for e in hidrovia] == [("programme", 1)]
