"""Community reports by the LLM, against the loopback OpenAI-protocol server scripted as a
summarising model: written through the strict schema at ingestion, cached by the community's
content (an unchanged community costs no call, a changed one is written again and its old
report pruned), erased with any document it read (no byte left), budgeted, extractive on a
bad reply with one log line; read by the global answer's map calls (its findings cited by
their pages), streamed as token events; a caller who may not see every document of a
community gets its extractive summary."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from docgraph.llm_summaries import CommunitySummariser, summary_input, written
from docgraph.store import ChunkText, DocGraphStore
from index.acl import caller_tokens
from ingest.upload import IngestRequest
from models.llm_client import LLMClient, LLMConfig
from service.carta import Carta
from service.erasure import verify
from tests.openai_protocol import OpenAIProtocolServer, Step, part_texts
from tests.utils.documents import make_pdf

TENANT = "acme"
MARK = "ZQXREPORTMARK3"
AMAZONAS = (
    "O Instituto Brasileiro do Meio Ambiente (IBAMA) e a Fundação Nacional do Índio (FUNAI) "
    "fiscalizaram o garimpo no Amazonas."
)
SALVADOR = (
    "A Agência Nacional de Águas (ANA) e o Conselho Nacional do Meio Ambiente (CONAMA) avaliam as praias."
)
MORE = f"O IBAMA e a FUNAI assinaram o acordo {MARK} em Manaus."


def _schema(body: dict[str, Any]) -> str:
    return (body.get("response_format") or {}).get("json_schema", {}).get("name", "")


def reporting_model(body: dict[str, Any]) -> str:
    """Reports: a title from the first entity, a finding quoting sentence 1 (and one citing a
    sentence it was not given, which must be dropped); maps: the label of the report's first
    finding; reduce: the partial answers joined."""
    text = part_texts(body)[-1]
    if _schema(body) == "community_report":
        first = re.search(r"^- (.+?) \(", text, re.MULTILINE)
        sentence = re.search(r"^\[1\] (.+)$", text, re.MULTILINE)
        quoted = sentence[1] if sentence else ""
        report = {
            "title": f"Grupo de {first[1] if first else '?'}",
            "summary": f"Relatório: {quoted}",
            "findings": [
                {"text": f"Achado: {quoted}", "sentences": [1]},
                {"text": "Inventado.", "sentences": [99]},
            ],
        }
        return json.dumps(report)
    if _schema(body) == "partial_answer":
        finding = re.search(r"^- Achado: .*?(\[[^\]]+ p\.\d+\])$", text, re.MULTILINE)
        return json.dumps({"answer": f"Os órgãos atuam {finding[1]}" if finding else "", "score": 80})
    return " ".join(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("- group"))


def _reports(server: OpenAIProtocolServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if _schema(r) == "community_report"]


@pytest.fixture
def reporting_carta(
    make_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer, tmp_path: Path
) -> Callable[..., Carta]:
    llm_server.responder = reporting_model

    def build(**overrides: Any) -> Carta:
        # offline extraction: the server's requests are the reports
        llm = llm_server.settings() | {"docgraph_llm_chunks": 0}
        return make_carta(tmp_path / "data", **(llm | overrides))

    return build


def _ingest(carta: Carta, text: str, name: str, acl: list[str] | None = None) -> str:
    return carta.ingest(IngestRequest(make_pdf([text]), name, TENANT, acl=acl or [])).document.id


def test_reports_are_written_once_per_content_refreshed_when_it_changes_and_erased(
    reporting_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer, tmp_path: Path
) -> None:
    carta = reporting_carta(erasure="immediate")
    assert carta.docgraph is not None and carta.community_llm is not None
    _ingest(carta, AMAZONAS, "amazonas.pdf")
    reports = _reports(llm_server)
    assert len(reports) == 1 and reports[0]["response_format"]["json_schema"]["strict"] is True
    assert "IBAMA (org)" in part_texts(reports[0])[-1] and "[1] O Instituto" in part_texts(reports[0])[-1]
    _ingest(carta, SALVADOR, "salvador.pdf")
    assert len(_reports(llm_server)) == 2  # the new community only: the IBAMA one is unchanged
    assert carta.docgraph.counts(TENANT)["llm_summaries"] == 2

    more = _ingest(carta, MORE, "acordo.pdf")  # a new mention of IBAMA and FUNAI: their community changed
    assert len(_reports(llm_server)) == 3
    assert carta.docgraph.counts(TENANT)["llm_summaries"] == 2  # the old report pruned
    markers = [MARK]
    assert any(h.path.startswith("docgraph") for h in verify(tmp_path / "data", more, markers).hits)

    carta.delete(TENANT, more)
    assert len(_reports(llm_server)) == 4  # the community it changed, written again without it
    counts = carta.docgraph.counts(TENANT)
    assert counts["llm_summaries"] == 2 and counts["llm_summary_sources"] == 2
    left = [h for h in verify(tmp_path / "data", more, markers).hits if h.path.startswith("docgraph")]
    assert left == []
    carta._index_docgraph(carta.registry.get(TENANT, _ids(carta)["salvador.pdf"]))  # reindexed: cached
    assert len(_reports(llm_server)) == 4


def _ids(carta: Carta) -> dict[str, str]:
    return {d.filename: d.id for d in carta.registry.list(TENANT)}


def test_the_global_answer_maps_the_reports_and_streams_its_reduce(
    reporting_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    carta = reporting_carta()
    _ingest(carta, AMAZONAS, "amazonas.pdf")
    _ingest(carta, SALVADOR, "salvador.pdf")
    llm_server.requests.clear()
    query = carta.query("Which organisations appear across the documents?", TENANT)
    events = list(carta.ask_events(query))
    maps = [r for r in llm_server.requests if _schema(r) == "partial_answer"]
    assert len(maps) == 2
    assert all("Findings:\n- Achado:" in part_texts(r)[-1] for r in maps)
    assert all("Inventado" not in part_texts(r)[-1] for r in maps)  # rests on no sentence given
    assert [e.kind for e in events][0] == "evidence" and [e.kind for e in events][-2:] == [
        "citations",
        "done",
    ]
    tokens = [e.data for e in events if e.kind == "token"]
    assert len(tokens) > 1  # the reduce streamed piece by piece
    answer = events[-1].data
    assert answer.answerer == "llm" and answer.answer == "".join(tokens).strip()
    assert {c.doc_id for c in answer.citations} == set(_ids(carta).values()) and not answer.invalid_citations
    assert [c["summary"] for c in answer.communities["communities"]] == ["llm", "llm"]


def test_a_caller_who_may_not_see_every_document_gets_the_extractive_summary(
    reporting_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    carta = reporting_carta()
    _ingest(carta, AMAZONAS, "amazonas.pdf")
    _ingest(carta, MORE, "acordo.pdf", acl=["fiscal"])
    assert carta.global_channel is not None
    question = "O que os documentos dizem sobre o IBAMA?"
    everyone = carta.global_channel.ranked(TENANT, question, caller_tokens(["fiscal"]), None)
    assert everyone.communities[0].written is not None  # the whole community: its report
    outsider = carta.global_channel.ranked(TENANT, question, caller_tokens(["x"]), None)
    assert outsider.communities and outsider.communities[0].written is None
    assert all(MARK not in s.sentence for s in outsider.communities[0].community.said)


def _store_with_two_communities(tmp_path: Path) -> DocGraphStore:
    store = DocGraphStore(tmp_path / "g.sqlite3")
    store.add_document(TENANT, [ChunkText("d1", 1, 0, AMAZONAS), ChunkText("d1", 2, 0, SALVADOR)])
    return store


def _client(server: OpenAIProtocolServer) -> LLMClient:
    return LLMClient(LLMConfig(base_url=server.url, model="test-model", timeout_s=5.0, max_retries=0))


def test_the_budget_and_a_bad_reply_leave_communities_extractive(
    llm_server: OpenAIProtocolServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _store_with_two_communities(tmp_path)
    llm_server.responder = reporting_model
    stats = CommunitySummariser(_client(llm_server), store, max_communities=1).refresh(TENANT)
    assert (stats.communities, stats.sent, stats.over_budget) == (2, 1, 1)
    assert store.counts(TENANT)["llm_summaries"] == 1
    again = CommunitySummariser(_client(llm_server), store, max_communities=1).refresh(TENANT)
    assert (again.cached, again.sent) == (1, 1) and store.counts(TENANT)["llm_summaries"] == 2

    fresh = DocGraphStore(tmp_path / "h.sqlite3")
    fresh.add_document(TENANT, [ChunkText("d1", 1, 0, AMAZONAS)])
    llm_server.script(Step(text='{"title": "x", "summary": 3, "findings": []}'))
    with caplog.at_level(logging.WARNING, logger="docgraph.llm_summaries"):
        bad = CommunitySummariser(_client(llm_server), fresh, max_communities=4).refresh(TENANT)
    assert (bad.sent, bad.failed) == (1, 1) and fresh.counts(TENANT)["llm_summaries"] == 0
    assert len([r for r in caplog.records if "LLM community summaries" in r.getMessage()]) == 1
    store.close()
    fresh.close()


def test_findings_keep_only_the_sentences_they_were_given(tmp_path: Path) -> None:
    store = _store_with_two_communities(tmp_path)
    community = store.community_evidence(TENANT)[0]
    assert "[1] " in summary_input(community) and "[9] " not in summary_input(community)
    reply = {
        "title": " Fiscalização ",
        "summary": "Resumo.",
        "findings": [
            {"text": "Um achado.", "sentences": [1, 1, 0]},
            {"text": "Sem base.", "sentences": [42]},
            {"text": " ", "sentences": [1]},
        ],
    }
    report = written(community, json.dumps(reply))
    assert report.title == "Fiscalização" and [f.text for f in report.findings] == ["Um achado."]
    assert report.findings[0].said == [community.said[0]] and report.cited() == [community.said[0]]
    store.close()
