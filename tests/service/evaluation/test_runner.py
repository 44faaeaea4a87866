"""The evaluation runner on the sample corpus, in-process and over HTTP (same numbers)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ingest.upload import IngestRequest
from service.carta import Carta
from service.cli.http_client import HttpClient
from service.cli.local_client import LocalClient
from service.evaluation import runner
from service.evaluation.questions import Evidence, NumberFact, Question, load_peer_qa, load_questions
from tests.conftest import corpus_path
from tests.utils.servers import LiveServer

QUESTIONS = [
    Question(
        id="sku",
        question="What was the Q3 2024 revenue of SKU NW-4471?",
        language="en",
        type="exact-code",
        evidence=[Evidence(doc="quarterly_report_q3_2024.pdf", pages=[4])],
        facts=[NumberFact(number=9.8, tolerance=0.01)],
    ),
    Question(id="mongolia", question="What is the capital of Mongolia?", language="en", type="unanswerable"),
    Question(
        id="hop",
        question="Afogados flooding points and Northwind churn peak",
        language="en",
        type="multi-hop",
        evidence=[
            Evidence(doc="relatorio_ambiental_recife_2024.pdf", pages=[2]),
            Evidence(doc="quarterly_report_q3_2024.pdf", pages=[2]),
        ],
    ),
    Question(
        id="missing",
        question="anything",
        language="en",
        type="text",
        evidence=[Evidence(doc="not_indexed.pdf", pages=[1])],
    ),
    Question(
        id="geo",
        question="relatórios sobre Boa Viagem",
        language="pt",
        type="geo-filtered",
        evidence=[Evidence(doc="relatorio_ambiental_recife_2024.pdf", pages=[4])],
        geo={"lat": -8.12, "lon": -34.9, "radius_m": 3000},
    ),
]


def test_runner_scores_and_skips_honestly(sample_carta: Carta) -> None:
    results = {r.id: r for r in runner.run({"unit": QUESTIONS}, LocalClient(sample_carta, "default"))}
    sku = results["sku"]
    assert sku.retrieval["carta"]["recall@1"] == 1.0 and sku.retrieval["carta"]["mrr"] == 1.0
    assert set(sku.retrieval) == {*runner.SYSTEMS, *runner.PRIOR_VARIANTS}
    # the configured default mode is one of the variants, measured the same way
    assert sku.retrieval["carta prior=decay"]["mrr"] == sku.retrieval["carta"]["mrr"]
    assert sku.answer["fact_accuracy"] == 1.0 and sku.answer["citation_validity"] == 1.0
    assert sku.answer["refusal_correct"] is True and sku.answer["cited_expected_page"] is True
    mongolia = results["mongolia"]
    assert mongolia.retrieval["carta"]["recall@5"] is None  # not applicable, not 0
    assert mongolia.answer["refused"] and mongolia.answer["refusal_correct"]
    hop = results["hop"]
    assert hop.retrieval["carta"]["recall@10"] is not None
    assert 0.0 <= hop.retrieval["carta"]["recall@10"] <= 1.0
    assert results["missing"].skipped == "not indexed: not_indexed.pdf"
    assert results["geo"].skipped is None and results["geo"].retrieval["carta"]["recall@10"] is not None

    summary = runner.summarize(list(results.values()))
    assert summary["scored"] == 4 and set(summary["skipped"]) == {"missing"}
    assert summary["by_type"]["unanswerable"]["refusal_correct"] == 1.0
    assert summary["by_type"]["unanswerable"]["fact_accuracy"] is None
    report = runner.markdown(summary)
    assert "| unit | carta | 3 |" in report  # unanswerable excluded from retrieval means
    assert "n/a" in report


def test_http_client_gives_the_same_rankings(make_carta: Callable[..., Carta], samples_dir: Path) -> None:
    carta = make_carta()
    carta.ingest(
        IngestRequest(
            (samples_dir / "quarterly_report_q3_2024.pdf").read_bytes(),
            "quarterly_report_q3_2024.pdf",
            "default",
        )
    )
    local = LocalClient(carta, "default")
    with LiveServer(carta) as live:
        remote = HttpClient(live.url)
        assert runner.indexed_files(remote) == runner.indexed_files(local)
        for channels in runner.SYSTEMS.values():
            for mode in (None, *runner.PRIOR_VARIANTS.values()):
                assert runner.ranked_pages(remote, "churn peak July", channels, None, mode) == (
                    runner.ranked_pages(local, "churn peak July", channels, None, mode)
                )
        doc_id = runner.indexed_files(local)["quarterly_report_q3_2024.pdf"]
        assert remote.page_text(doc_id, 4) == local.page_text(doc_id, 4)
        assert "NW-4471" in remote.page_text(doc_id, 4)
        remote.close()


def test_question_files_validate(tmp_path: Path) -> None:
    good = tmp_path / "q.yaml"
    good.write_text("- {id: a, question: q, language: pt, type: unanswerable}\n")
    assert load_questions(good)[0].type == "unanswerable"
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": "a", "question": "q", "language": "en", "type": "unanswerable"}\n' * 2)
    with pytest.raises(ValueError, match="duplicate"):
        load_questions(dup)
    bad = tmp_path / "bad.yaml"
    bad.write_text("- {id: a, question: q, language: en, type: text}\n")
    with pytest.raises(ValueError, match="needs evidence"):
        load_questions(bad)


def test_peer_qa_pages_are_labelled_by_answer_overlap() -> None:
    qa = corpus_path("qa", "Understanding_Climate_Change_q_a.json")
    pdf = corpus_path("qa", "Understanding_Climate_Change.pdf")
    questions = load_peer_qa(qa, pdf)
    assert len(questions) == 44
    glacial = next(q for q in questions if "glacial" in q.question.lower())
    import pymupdf

    with pymupdf.open(pdf) as doc:
        texts = [doc[p - 1].get_text().lower() for p in glacial.evidence[0].pages]
    assert any("glacial" in t for t in texts)
    assert all(q.reference for q in questions)


class _GraphClient:
    """The part of a CartaClient the runner uses, with answers that carry graph pairs."""

    def documents(self) -> list[dict]:
        return []

    def search(self, query: str, *, top_k: int, **_: object) -> dict:
        return {"results": []}

    def ask(self, question: str, *, top_k: int, geo: dict | None = None, geo_prior: bool = True) -> dict:
        pairs = [{"a": "poi:1", "b": "poi:2", "dist_m": 120.0}, {"a": "poi:3", "b": "poi:9", "dist_m": 480.0}]
        return {
            "answer": "two pairs",
            "refused": False,
            "citations": [],
            "evidence": [],
            "graph": {"pairs": pairs},
        }

    def page_text(self, doc_id: str, page_no: int) -> str:
        return ""


def test_relational_questions_are_scored_from_graph_pairs(sample_carta: Carta) -> None:
    q = Question(
        id="rel",
        question="recycling points within 300 m of a park",
        language="en",
        type="relational",
        pairs=[{"a": "poi:2", "b": "poi:1"}, {"a": "poi:5", "b": "poi:6"}],
    )
    scored = runner.run({"rel": [q]}, _GraphClient())[0]
    assert scored.skipped is None
    assert scored.answer["pairs_precision"] == 0.5 and scored.answer["pairs_recall"] == 0.5
    summary = runner.summarize([scored])
    assert summary["by_type"]["relational"]["pairs_f1"] == 0.5
    assert "| relational | 1 |" in runner.markdown(summary)
    # against today's Carta, whose answers have no graph evidence yet, it is skipped, not scored 0
    skipped = runner.run({"rel": [q]}, LocalClient(sample_carta, "default"))[0]
    assert skipped.skipped and "graph" in skipped.skipped
