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


EN_TABLE = "Table 3 shows the decadal growth rate of the population of the states, by census year."
PT_TEXT = "A população do município cresceu na década, segundo os dados do censo para o estado."


def _text_chunk(doc: str, page: int, text: str) -> Hit:
    payload = {"doc_id": doc, "page_no": page, "chunk_no": 0, "text": text}
    return Hit(f"{doc}-{page}-0", 1.0, payload)


def _cross_language_lists() -> dict[str, list[Hit]]:
    """A Portuguese question over an English table: BM25 (both stemmers) ranks the English
    page first on its names and numbers; the text encoder's lists, blind to English for a
    Portuguese question, hold the Portuguese pages only."""
    en = _text_chunk("census", 4, EN_TABLE)
    pt = [_text_chunk(f"pt{i}", 1, PT_TEXT) for i in range(3)]
    return {
        "dense": pt,
        "bm25_pt": [en, pt[1], pt[0]],
        "bm25_en": [en, pt[2], pt[0]],
        "pages": [_page_hit(h) for h in pt],
    }


def _page_hit(chunk: Hit) -> Hit:
    payload = {k: v for k, v in chunk.payload.items() if k != "chunk_no"}
    return Hit(chunk.id, chunk.score, payload)


def test_plain_rrf_lets_the_blind_lists_outvote_bm25() -> None:
    top = fuse_pages(_cross_language_lists(), top_k=3)[0]
    assert top.doc_id.startswith("pt")


def test_lists_bound_to_the_question_language_do_not_count_against_other_pages() -> None:
    readers = {"dense": "pt", "pages": "pt"}
    pages = fuse_pages(_cross_language_lists(), top_k=4, readers=readers)
    top = pages[0]
    assert (top.doc_id, top.page_no) == ("census", 4)
    # judged by the two BM25 lists that could read it, scaled to the four lists
    assert top.score == pytest.approx(4 / 2 * (1 / 61 + 1 / 61))
    # the Portuguese pages keep their plain RRF score (every list reads Portuguese)
    plain = {p.doc_id: p.score for p in fuse_pages(_cross_language_lists(), top_k=4)}
    assert all(p.score == pytest.approx(plain[p.doc_id]) for p in pages[1:])
    assert set(top.channels) == {"bm25_pt", "bm25_en"}  # provenance unchanged


def test_readers_change_nothing_when_every_page_is_in_their_language_or_says_none() -> None:
    lists = {
        "dense": [_text_chunk("a", 1, PT_TEXT), _chunk("b", 2, 0)],  # "b 2 0": no language
        "bm25_pt": [_chunk("b", 2, 0), _text_chunk("a", 1, PT_TEXT)],
    }
    plain = fuse_pages(lists, top_k=2)
    bound = fuse_pages(lists, top_k=2, readers={"dense": "pt"})
    assert [(p.doc_id, p.score) for p in bound] == [(p.doc_id, p.score) for p in plain]


def test_a_page_no_list_can_read_is_scored_as_plain_rrf() -> None:
    lists = {"dense": [_text_chunk("pt", 1, PT_TEXT), _text_chunk("en", 1, EN_TABLE)]}
    pages = fuse_pages(lists, top_k=2, readers={"dense": "pt"})
    assert [(p.doc_id, p.score) for p in pages] == [
        ("pt", pytest.approx(1 / 61)),
        ("en", pytest.approx(1 / 62)),
    ]


def test_an_empty_list_does_not_scale_the_other_pages() -> None:
    lists = _cross_language_lists()
    readers = {"dense": "pt", "pages": "pt"}
    with_empty = fuse_pages({**lists, "entities": []}, top_k=4, readers=readers)
    assert [(p.doc_id, p.score) for p in with_empty] == [
        (p.doc_id, p.score) for p in fuse_pages(lists, top_k=4, readers=readers)
    ]


def test_a_page_whose_text_does_not_say_takes_its_documents_language() -> None:
    lists = _cross_language_lists()
    row = _text_chunk("census", 5, "Nagaland 14.07 39.88 50.05 56.08 64.53 -0.47")  # a bare table row
    lists["bm25_pt"].insert(0, row)
    lists["bm25_en"].insert(0, row)
    pages = fuse_pages(lists, top_k=5, readers={"dense": "pt", "pages": "pt"})
    # English like the document's other page: judged by the BM25 lists alone
    assert [(p.doc_id, p.page_no) for p in pages[:2]] == [("census", 5), ("census", 4)]


def test_a_page_left_out_of_a_cut_list_ranks_after_its_last_page() -> None:
    """First in three lists and past the dense list's cut, the page of coordinates that names
    "Marco Zero" outranks the pages second to fifth in all four (plain RRF put it last): the
    dense list ranks it below the five it holds, not nowhere. A list that selects (the geo
    prior's "filter" mode: only pages in the named place) gives nothing to those it left out."""
    others = [("r", n) for n in range(1, 6)]
    lists = {name: [_chunk(d, n, 0) for d, n in others] for name in ("dense", "bm25_pt", "bm25_en", "pages")}
    for name in ("bm25_pt", "bm25_en", "pages"):
        lists[name].insert(0, _chunk("r", 9, 0))
    pages = fuse_pages(lists, top_k=6)
    assert [p.page_no for p in pages] == [1, 9, 2, 3, 4, 5]
    assert pages[1].score == pytest.approx(3 / 61 + 1 / 66)  # dense: after its 5 pages
    geo = {"geo": [_chunk("s", 1, 0)], "dense": [_chunk("r", 1, 0), _chunk("s", 1, 0)]}
    scores = {p.doc_id: p.score for p in fuse_pages(geo, top_k=2, selections={"geo"})}
    assert scores["r"] == pytest.approx(1 / 61)  # not in the place: nothing from "geo"
    assert scores["s"] == pytest.approx(1 / 61 + 1 / 62)
