"""Retrieval over the generated sample corpus: every ground-truth fact's page must be
in the top 3, and filters must act inside the engine (tenant, documents, kinds)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ingest.upload import IngestRequest
from service.carta import Carta
from service.query.channels.bm25 import Bm25Channel
from service.query.channels.dense import DenseChannel
from service.query.channels.pages import PagesChannel
from service.query.retrieval import bound_readers
from service.query.types import SearchQuery


def _doc_ids(carta: Carta) -> dict[str, str]:
    return {d.filename: d.id for d in carta.registry.list("default")}


def test_every_ground_truth_page_is_in_top_3(sample_carta: Carta, ground_truth: list[dict[str, Any]]) -> None:
    ids = _doc_ids(sample_carta)
    misses = []
    for fact in ground_truth:
        result = sample_carta.search(SearchQuery(fact["question"], "default", top_k=3))
        pages = [(p.doc_id, p.page_no) for p in result.pages]
        if (ids[fact["doc"]], fact["page"]) not in pages:
            misses.append((fact["id"], pages))
    assert not misses, misses


def test_results_keep_channel_provenance(sample_carta: Carta) -> None:
    result = sample_carta.search(SearchQuery("SKU NW-4471 revenue", "default", top_k=3))
    top = result.pages[0]
    assert top.page_no == 4
    assert set(top.channels) <= {"dense", "bm25_pt", "bm25_en", "pages"} and "bm25_en" in top.channels
    assert all(c.rank >= 1 for c in top.channels.values())
    assert top.chunks and "NW-4471" in " ".join(c.text for c in top.chunks)
    assert len(top.chunks[0].bbox) == 4 and top.chunks[0].page_size[0] > 0
    assert set(result.timings_ms) == {"encode", "channels", "fusion"}


def test_doc_and_kind_filters_apply_before_top_k(sample_carta: Carta) -> None:
    ids = _doc_ids(sample_carta)
    only_png = sample_carta.search(SearchQuery("precipitação mensal", "default", top_k=5, kinds=["image"]))
    assert only_png.pages and {p.doc_id for p in only_png.pages} == {ids["grafico_chuvas_2024.png"]}
    quarterly = ids["quarterly_report_q3_2024.pdf"]
    # a Portuguese query about Recife, restricted to the English report, still fills its top-k from it
    restricted = sample_carta.search(
        SearchQuery("alagamento Recife", "default", top_k=3, doc_ids=[quarterly])
    )
    assert len(restricted.pages) == 3 and {p.doc_id for p in restricted.pages} == {quarterly}


def test_tenants_are_isolated(make_carta: Callable[..., Carta], samples_dir: Path) -> None:
    carta = make_carta()
    carta.ingest(IngestRequest((samples_dir / "quarterly_report_q3_2024.pdf").read_bytes(), "q.pdf", "alpha"))
    assert carta.search(SearchQuery("Northwind revenue", "alpha", top_k=3)).pages
    assert carta.search(SearchQuery("Northwind revenue", "beta", top_k=3)).pages == []
    assert carta.registry.list("beta") == []


@pytest.mark.parametrize("query", ["", "   "])
def test_blank_query_has_no_sparse_branch_but_does_not_fail(sample_carta: Carta, query: str) -> None:
    result = sample_carta.search(SearchQuery(query, "default", top_k=2))
    assert len(result.pages) <= 2


@pytest.mark.parametrize(
    "question",
    [
        "Qual foi a receita do produto Pipeline Connect?",
        "Qual foi o crescimento anual do DataVault Enterprise?",
    ],
)
def test_a_portuguese_question_finds_the_english_table_page(sample_carta: Carta, question: str) -> None:
    # the English report's product table (page 4) names the product; MiniLM's lists for a
    # Portuguese question hold the Portuguese reports only, and no longer outvote BM25
    assert sample_carta.retriever.text_language == "en"
    top = sample_carta.search(SearchQuery(question, "default", top_k=3)).pages[0]
    assert (_doc_ids(sample_carta)["quarterly_report_q3_2024.pdf"], 4) == (top.doc_id, top.page_no)
    assert top.channels["bm25_pt"].rank == 1 and top.channels["bm25_en"].rank == 1


def test_only_the_text_encoders_lists_are_bound_and_only_for_a_question_it_does_not_read() -> None:
    store: Any = None  # bound_readers reads the channels' names, never their store
    channels = [
        DenseChannel(store, "c"),
        Bm25Channel(store, "c", "bm25_pt"),
        PagesChannel(store, "p", False, 10),
    ]
    portuguese = "Qual foi a taxa de crescimento da população de Nagaland entre 2001 e 2011?"
    assert bound_readers(portuguese, channels, "en") == {"dense": "pt", "pages": "pt"}
    assert bound_readers("What was the growth rate of Nagaland in 2001-2011?", channels, "en") is None
    assert bound_readers(portuguese, channels, None) is None  # a multilingual encoder reads every page
