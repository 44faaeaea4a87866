"""The lite page channel with a pooled first stage (CARTA_PAGE_POOLING): the pooled prefetch
then exact MaxSim rerank finds the same pages as exact MaxSim over every page on the sample
corpus, and the setting is part of the pages collection's spec."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from index.collections import PAGE_VECTOR, POOLED_VECTOR, lite_collections
from index.vector_store import StoreError
from ingest.upload import IngestRequest
from models.text_encoder import TextEncoder
from service.carta import Carta
from service.query.channels.pages import PagesChannel
from service.query.types import SearchQuery
from tests.conftest import settings_for

PAGES = frozenset({"pages"})


def _ingest(carta: Carta, samples_dir: Path) -> Carta:
    for path in sorted(samples_dir.iterdir()):
        if path.suffix in {".pdf", ".png"}:
            carta.ingest(IngestRequest(path.read_bytes(), path.name, "default"))
    return carta


@pytest.fixture(scope="module")
def pooled_carta(
    tmp_path_factory: pytest.TempPathFactory, text_encoder: TextEncoder, samples_dir: Path
) -> Iterator[Carta]:
    """The sample corpus with sequential pooling and the narrowest first stage (prefetch 1:
    the retriever widens it to the page limit, top_k * 2)."""
    settings = settings_for(
        tmp_path_factory.mktemp("pooled-pages"),
        page_pooling="sequential",
        page_pool_factor=4,
        page_prefetch=1,
    )
    carta = _ingest(Carta(settings, text_encoder=text_encoder), samples_dir)
    yield carta
    carta.close()


def _pages(carta: Carta, question: str, top_k: int) -> list[tuple[str, int]]:
    result = carta.search(SearchQuery(question, "default", top_k=top_k, channels=PAGES))
    return [(p.doc_id, p.page_no) for p in result.pages]


def test_pooled_page_channel_finds_the_exact_top_page(
    sample_carta: Carta, pooled_carta: Carta, ground_truth: list[dict[str, Any]]
) -> None:
    pooled, exact = pooled_carta.retriever.channel("pages"), sample_carta.retriever.channel("pages")
    assert isinstance(pooled, PagesChannel) and isinstance(exact, PagesChannel)
    assert pooled.pooled and not exact.pooled
    ids = {d.filename: d.id for d in pooled_carta.registry.list("default")}
    assert ids == {d.filename: d.id for d in sample_carta.registry.list("default")}  # same content ids
    questions = [f for f in ground_truth if f.get("question")][:6]
    assert len(questions) >= 3
    for fact in questions:
        exact = _pages(sample_carta, fact["question"], 3)
        pooled = _pages(pooled_carta, fact["question"], 3)
        assert exact and pooled[0] == exact[0], (fact["id"], exact, pooled)


def test_a_prefetch_covering_every_page_reranks_to_the_exact_ranking(
    make_carta: Callable[..., Carta], sample_carta: Carta, samples_dir: Path
) -> None:
    # every page survives the first stage, so the second (exact MaxSim on `late`) decides alone
    wide = make_carta(page_pooling="sequential", page_pool_factor=8, page_prefetch=10_000)
    _ingest(wide, samples_dir)
    for question in ("SKU NW-4471 revenue", "precipitação mensal Recife", "flood risk by neighbourhood"):
        assert _pages(wide, question, 8) == _pages(sample_carta, question, 8), question


def test_collection_spec_holds_the_pooled_vector_only_when_on() -> None:
    off = lite_collections("m", 8, ("bm25_en",)).pages
    on = lite_collections("m", 8, ("bm25_en",), page_pooled=True).pages
    assert [d.name for d in off.dense] == [PAGE_VECTOR]
    assert [d.name for d in on.dense] == [PAGE_VECTOR, POOLED_VECTOR]
    assert all(d.multivector and not d.hnsw for d in on.dense) and on.name == off.name


def test_switching_pooling_on_an_old_data_dir_asks_for_a_reindex(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    make_carta(tmp_path / "d").close()
    with pytest.raises(StoreError, match="CARTA_PAGE_POOLING") as err:
        make_carta(tmp_path / "d", page_pooling="sequential")
    assert "ingest the documents again" in str(err.value)
