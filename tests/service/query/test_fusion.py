"""Page-level reciprocal rank fusion (service/query/fusion.py)."""

from __future__ import annotations

import pytest

from index.types import Hit
from service.query.fusion import fuse_pages


def _chunk(doc: str, page: int, chunk: int, score: float = 1.0) -> Hit:
    payload = {"doc_id": doc, "page_no": page, "chunk_no": chunk, "text": f"{doc} {page} {chunk}"}
    return Hit(f"{doc}-{page}-{chunk}", score, payload)


def _page(doc: str, page: int, score: float = 1.0) -> Hit:
    return Hit(f"{doc}-{page}", score, {"doc_id": doc, "page_no": page, "text": f"page {doc} {page}"})


def test_a_page_ranks_by_its_best_chunk_and_keeps_provenance() -> None:
    lists = {
        "dense": [_chunk("a", 1, 0), _chunk("a", 1, 1), _chunk("b", 2, 0)],
        "pages": [_page("b", 2), _page("a", 1)],
    }
    pages = fuse_pages(lists, top_k=5, k=60)
    by_key = {(p.doc_id, p.page_no): p for p in pages}
    a, b = by_key[("a", 1)], by_key[("b", 2)]
    # a's second chunk does not count as a second page rank in "dense"
    assert a.channels["dense"].rank == 1 and b.channels["dense"].rank == 2
    assert a.channels["pages"].rank == 2 and b.channels["pages"].rank == 1
    assert a.score == pytest.approx(1 / 61 + 1 / 62) and b.score == pytest.approx(1 / 62 + 1 / 61)
    assert [c.chunk_no for c in a.chunks] == [0, 1] and a.chunks[0].rank == 1
    assert b.excerpt == "page b 2"  # the page list's text is the excerpt


def test_ties_break_by_document_and_page_and_top_k_cuts() -> None:
    pages = fuse_pages({"dense": [_chunk("b", 1, 0)], "bm25_en": [_chunk("a", 3, 0)]}, top_k=1)
    assert [(p.doc_id, p.page_no) for p in pages] == [("a", 3)]
