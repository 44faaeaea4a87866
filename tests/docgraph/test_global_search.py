"""Global search over the document graph's communities: ranking (named entities, topic
words, an asked kind, size), the "global" channel in the search trace, the extractive
answer citing the chunks behind each summary (pt and en), the LLM's map-reduce against the
loopback OpenAI-protocol server (bounded by the token limit), and its fallback."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

import pytest

from docgraph.global_search import asked_kinds, rank_communities, topic_terms
from docgraph.store import CommunityEvidence, Said
from index.acl import caller_tokens
from ingest.upload import IngestRequest
from models.llm_client import LLMClient, LLMConfig
from service.answer.global_answer import global_answer, global_sources
from service.api.schemas import ask_response
from service.carta import Carta
from service.observability import ask_trace
from service.query.router import asks_global
from tests.openai_protocol import OpenAIProtocolServer, Step, part_texts
from tests.utils.documents import make_pdf

TENANT = "acme"
AMAZONAS = (
    "O Instituto Brasileiro do Meio Ambiente (IBAMA) e a Fundação Nacional do Índio (FUNAI) "
    "fiscalizaram o garimpo no Amazonas. O IBAMA lavrou autos de infração e a FUNAI acompanhou."
)
SALVADOR = (
    "A Agência Nacional de Águas (ANA) e o Conselho Nacional do Meio Ambiente (CONAMA) definem a "
    "balneabilidade das praias de Salvador. A ANA publica o boletim semanal."
)


def _community(
    cid: int, names: list[str], kinds: dict[str, int], words: str, doc: str = "d1"
) -> CommunityEvidence:
    said = [Said(f"{n} {words}.", doc, 1, 0, n) for n in names]
    return CommunityEvidence(
        cid, list(range(cid * 10, cid * 10 + len(names))), names, kinds, len(names) * 2, [doc], "", said
    )


def test_ranking_by_named_entities_topic_words_kinds_and_size() -> None:
    water = _community(1, ["INEMA", "CONAMA"], {"org": 2}, "balneabilidade das praias")
    mining = _community(
        2, ["IBAMA", "FUNAI", "Lei 9605/1998"], {"org": 2, "law": 1}, "garimpo autos de infração"
    )
    both = [water, mining]
    named = rank_communities("O que os documentos dizem sobre o IBAMA?", both, named=[20])
    assert [r.community.id for r in named.communities] == [2] and named.terms == ["ibama"]
    words = rank_communities("What do the documents say about balneabilidade?", both)
    assert [r.community.id for r in words.communities] == [1]
    themes = rank_communities("What are the main themes across the documents?", both)
    assert [r.community.id for r in themes.communities] == [2, 1]  # the larger first
    laws = rank_communities("Quais leis aparecem nos documentos?", both)
    assert asked_kinds("Quais leis aparecem nos documentos?") == ["law"]
    assert [r.community.id for r in laws.communities] == [2]
    assert rank_communities("What do the documents say about volcanoes?", both).communities == []
    assert topic_terms("Which organisations appear across the documents?") == []


def test_the_router_sends_questions_across_the_documents_to_global() -> None:
    for question in (
        "What are the main themes?",
        "Which organisations appear across the documents?",
        "O que os documentos dizem sobre o IBAMA?",
        "Quais organizações aparecem em todos os documentos?",
        "Quais são os principais temas?",
    ):
        assert asks_global(question), question
    for question in (
        "Qual a precipitação acumulada no Recife em 2024?",
        "How many deaths per year does HCV cause?",
    ):
        assert not asks_global(question), question


def _two_documents(carta: Carta) -> dict[str, str]:
    ids = {}
    for name, text in (("amazonas.pdf", AMAZONAS), ("salvador.pdf", SALVADOR)):
        ids[name] = carta.ingest(IngestRequest(make_pdf([text]), name, TENANT)).document.id
    return ids


def test_a_global_question_is_answered_from_the_communities_citing_their_chunks(
    make_carta: Callable[..., Carta],
) -> None:
    carta = make_carta()
    ids = _two_documents(carta)
    result = carta.search(carta.query("O que os documentos dizem sobre o IBAMA?", TENANT))
    assert result.pages and "global" in result.pages[0].channels  # in the search trace
    assert result.pages[0].doc_id == ids["amazonas.pdf"]
    answer = carta.ask(carta.query("O que os documentos dizem sobre o IBAMA?", TENANT))
    assert answer.communities is not None and answer.communities["llm"] is False
    assert answer.answer.startswith("Nos documentos") and "IBAMA" in answer.answer
    assert [(c.doc_id, c.page_no) for c in answer.citations] == [(ids["amazonas.pdf"], 1)]
    assert answer.grounded and not answer.invalid_citations
    assert answer.communities["communities"][0]["chunks"][0]["doc_id"] == ids["amazonas.pdf"]
    wire = ask_response(answer).communities  # the API's typed shape, and the ask trace
    assert wire is not None and wire.communities[0].chunks[0].doc_id == ids["amazonas.pdf"] and not wire.llm
    assert ask_trace("r1", answer, 0.0)["communities"]["terms"] == ["ibama"]

    themes = carta.ask(carta.query("Which organisations appear across the documents?", TENANT))
    assert themes.answer.startswith("Across the documents")
    assert {c.doc_id for c in themes.citations} == set(ids.values())  # both documents' communities
    assert "CONAMA" in themes.answer and "FUNAI" in themes.answer
    orgs = carta.ask(carta.query("Quais organizações aparecem nos documentos?", TENANT))
    assert orgs.answer.startswith("Nos documentos") and "CONAMA" in orgs.answer

    plain = carta.ask(carta.query("Quem lavrou autos de infração no Amazonas?", TENANT))
    assert plain.communities is None  # not a question across the documents


def test_global_answers_only_use_documents_the_caller_may_see(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    carta.ingest(IngestRequest(make_pdf([AMAZONAS]), "amazonas.pdf", TENANT, acl=["fiscal"]))
    carta.ingest(IngestRequest(make_pdf([SALVADOR]), "salvador.pdf", TENANT))
    answer = carta.ask(
        carta.query("Which organisations appear across the documents?", TENANT, acl=caller_tokens(["x"]))
    )
    assert "CONAMA" in answer.answer and "IBAMA" not in answer.answer and "FUNAI" not in answer.answer


def _mapping_model(body: dict[str, Any]) -> str:
    """A model that maps each community to its first sentence's label, and reduces by joining."""
    text = part_texts(body)[-1]
    if (body.get("response_format") or {}).get("json_schema", {}).get("name") == "partial_answer":
        label = re.search(r"\[[^\]]+ p\.\d+\]", text)
        return json.dumps({"answer": f"Os órgãos fiscalizam {label[0] if label else ''}", "score": 70})
    return " ".join(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("- group"))


def test_the_llm_maps_and_reduces_within_the_token_limit(
    make_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer, caplog: pytest.LogCaptureFixture
) -> None:
    carta = make_carta()
    ids = _two_documents(carta)
    assert carta.global_channel is not None
    question = "Which organisations appear across the documents?"
    found = carta.global_channel.ranked(TENANT, question, None, None)
    assert len(found.communities) == 2
    sent = global_sources(found, lambda d, p: carta.page_chunks(TENANT, d, p), lambda d: d)
    result = carta.search(carta.query(question, TENANT))
    llm = LLMClient(LLMConfig(base_url=llm_server.url, model="test-model", timeout_s=5.0, max_retries=0))
    llm_server.responder = _mapping_model

    answer = global_answer(question, result, found, sent, llm, max_tokens=6000)
    assert answer.answerer == "llm" and answer.usage is not None and answer.usage["llm_calls"] == 3
    assert {c.doc_id for c in answer.citations} == set(ids.values()) and not answer.invalid_citations
    assert len(llm_server.requests) == 3  # two maps, one reduce

    llm_server.reset()
    llm_server.responder = _mapping_model
    small = global_answer(question, result, found, sent, llm, max_tokens=700)  # room for one map only
    assert small.usage is not None and small.usage["llm_calls"] == 2 and len(small.citations) == 1

    llm_server.reset()
    llm_server.script(Step(text="not json"))
    with caplog.at_level(logging.WARNING, logger="service.answer.global_answer"):
        fallback = global_answer(question, result, found, sent, llm)
    assert fallback.answerer == "extractive" and fallback.answer.startswith("Across the documents")
    assert [r for r in caplog.records if "map-reduce failed" in r.getMessage()]
