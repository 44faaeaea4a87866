"""The lite page channel with a pooled first stage (CARTA_PAGE_POOLING, on by default): the
pooled prefetch then exact MaxSim rerank finds the same pages as exact MaxSim over every page
on the sample corpus; a data dir from before the pooled vectors still answers (exactly) and
`carta reindex` adds them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from index.collections import PAGE_VECTOR, POOLED_VECTOR, lite_collections
from ingest.upload import IngestRequest
from models.text_encoder import TextEncoder
from service.carta import Carta, page_pooler
from service.query.channels.pages import PagesChannel
from service.query.types import SearchQuery
from service.reindex import MIGRATION_SUFFIX, add_pooled_vectors, reindex
from service.settings import Settings
from tests.conftest import settings_for

PAGES = frozenset({"pages"})
ONE_FILE = "quarterly_report_q3_2024.pdf"  # the data dirs the migration tests build: one file, fast
QUESTIONS = ("SKU NW-4471 revenue", "quarterly revenue by region", "receita do trimestre")


def _ingest(carta: Carta, samples_dir: Path, only: str | None = None) -> Carta:
    for path in sorted(samples_dir.iterdir()):
        if path.suffix in {".pdf", ".png"} and only in (None, path.name):
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


def _channel(carta: Carta) -> PagesChannel:
    channel = carta.retriever.channel("pages")
    assert isinstance(channel, PagesChannel)
    return channel


def _two_stage(carta: Carta) -> bool:
    return _channel(carta).two_stage


def _exact_pages(carta: Carta, question: str, top_k: int) -> list[tuple[str, int]]:
    """The same index searched by exact MaxSim over every page (what CARTA_PAGE_POOLING=off runs)."""
    channel = _channel(carta)
    saved, channel.two_stage = channel.two_stage, False
    try:
        return _pages(carta, question, top_k)
    finally:
        channel.two_stage = saved


def test_the_pooled_first_stage_is_the_default() -> None:
    settings = Settings(_env_file=None)
    assert settings.page_pooling == "sequential"


@pytest.mark.parametrize("fast", ["default", "narrowest"])
def test_pooled_page_channel_finds_the_exact_top_page(
    fast: str, sample_carta: Carta, pooled_carta: Carta, ground_truth: list[dict[str, Any]]
) -> None:
    # the session's sample corpus runs on the default settings; pooled_carta on a first stage of 1
    carta = sample_carta if fast == "default" else pooled_carta
    assert _two_stage(carta)
    questions = [f for f in ground_truth if f.get("question")][:6]
    assert len(questions) >= 3
    for fact in questions:
        exact = _exact_pages(carta, fact["question"], 3)
        pooled = _pages(carta, fact["question"], 3)
        assert exact and pooled[0] == exact[0], (fact["id"], exact, pooled)


def test_a_prefetch_covering_every_page_reranks_to_the_exact_ranking(pooled_carta: Carta) -> None:
    # every page survives the first stage, so the second (exact MaxSim on `late`) decides alone
    channel = _channel(pooled_carta)
    saved, channel.prefetch = channel.prefetch, 10_000
    try:
        for question in QUESTIONS + ("precipitação mensal Recife",):
            assert _pages(pooled_carta, question, 8) == _exact_pages(pooled_carta, question, 8), question
    finally:
        channel.prefetch = saved


def test_collection_spec_holds_the_pooled_vector_only_when_on() -> None:
    off = lite_collections("m", 8, ("bm25_en",)).pages
    on = lite_collections("m", 8, ("bm25_en",), page_pooled=True).pages
    assert [d.name for d in off.dense] == [PAGE_VECTOR]
    assert [d.name for d in on.dense] == [PAGE_VECTOR, POOLED_VECTOR]
    assert all(d.multivector and not d.hnsw for d in on.dense) and on.name == off.name


def test_an_old_data_dir_without_pooled_vectors_answers_exactly_until_reindex(
    make_carta: Callable[..., Carta], tmp_path: Path, samples_dir: Path
) -> None:
    data = tmp_path / "old"
    old = _ingest(make_carta(data, page_pooling="off"), samples_dir, ONE_FILE)  # before the default
    before = {q: _pages(old, q, 5) for q in QUESTIONS}
    pages = old.store.count(old.collections.pages.name)
    old.close()

    opened = make_carta(data)  # the default settings: pooling on, the pages lack the vectors
    assert not opened.page_pooled and not _two_stage(opened)
    assert "carta reindex" in (opened.reindex_needed() or "")
    assert {q: _pages(opened, q, 5) for q in QUESTIONS} == before  # exact MaxSim, as before

    report = reindex(opened)
    assert report.pooled_pages == pages and not report.needs_upload
    assert add_pooled_vectors(opened) == 0  # done once
    opened.close()

    migrated = make_carta(data)
    assert migrated.page_pooled and _two_stage(migrated) and migrated.reindex_needed() is None
    name = migrated.collections.pages.name
    assert migrated.store.stored_vectors(name) == (PAGE_VECTOR, POOLED_VECTOR)
    assert migrated.store.count(name) == pages
    assert migrated.store.stored_vectors(name + MIGRATION_SUFFIX) is None  # the copy is gone
    for q in QUESTIONS:
        assert _pages(migrated, q, 5)[0] == before[q][0], q


def test_an_interrupted_migration_resumes_from_its_copy(
    make_carta: Callable[..., Carta], tmp_path: Path, samples_dir: Path
) -> None:
    data = tmp_path / "old"
    old = _ingest(make_carta(data, page_pooling="off"), samples_dir, ONE_FILE)
    pages = old.store.count(old.collections.pages.name)
    name = old.collections.pages.name
    # the state after a crash between dropping the old pages and copying them back: the
    # copy holds every page with its pooled vector, the old collection is gone
    spec = lite_collections(old.text.slug, old.text.dim, old.sparse.names, page_pooled=True).pages
    copy = replace(spec, name=name + MIGRATION_SUFFIX)
    old.store.ensure_collection(copy)
    points, offset = old.store.scroll_points(name, 1000)
    assert offset is None
    pool = page_pooler(old.settings)
    for p in points:
        p.vectors[POOLED_VECTOR] = pool(np.asarray(p.vectors[PAGE_VECTOR], np.float32)).tolist()
    old.store.upsert(copy.name, points)
    old.store.drop_collection(name)
    old.close()

    resumed = make_carta(data)  # a new, empty pooled page collection: the pages are in the copy
    assert resumed.store.count(name) == 0
    assert add_pooled_vectors(resumed) == pages
    assert resumed.store.count(name) == pages and resumed.store.stored_vectors(copy.name) is None
    assert _pages(resumed, QUESTIONS[0], 3)  # answers again


def test_pooling_off_on_a_pooled_data_dir_searches_exactly(
    make_carta: Callable[..., Carta], tmp_path: Path, samples_dir: Path
) -> None:
    data = tmp_path / "pooled"
    pooled = _ingest(make_carta(data), samples_dir, ONE_FILE)
    top = {q: _pages(pooled, q, 3) for q in QUESTIONS}
    pooled.close()
    exact = make_carta(data, page_pooling="off")  # CARTA_PAGE_POOLING=off: no re-index needed
    assert exact.page_pooled and not _two_stage(exact) and exact.reindex_needed() is None
    for q in QUESTIONS:
        assert _pages(exact, q, 3)[0] == top[q][0], q
