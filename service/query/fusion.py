"""Fusion: every channel's ranked list becomes page-level evidence units, by reciprocal
rank fusion (RRF), keeping each page's provenance (channel ranks, chunks, bbox).

Blind lists: the lite text encoder (all-MiniLM) reads English. A Portuguese question's
vector matches Portuguese pages by their shared words but not English ones, so its dense and
pages lists hold only Portuguese pages, and plain RRF lets them outvote BM25, the channel
that matched the English page's names and numbers. A caller may therefore bind lists to the
one language they can match (`readers`): such a list does not count for a page written in
another language, and that page's score is the RRF sum over the lists that do count, scaled
to the number of (non-empty) lists, so it is judged by the channels that could have seen it.
"""

from __future__ import annotations

from collections.abc import Collection

from index.types import Hit
from index.vector_store import RRF_K
from service.query.language import text_language
from service.query.types import ChannelScore, ChunkEvidence, PageEvidence

LANGUAGE_CHARS = 1000  # of each hit's text, read to tell its page's language


def fuse_pages(
    lists: dict[str, list[Hit]],
    top_k: int,
    k: int = RRF_K,
    readers: dict[str, str] | None = None,
    selections: Collection[str] = (),
) -> list[PageEvidence]:
    """Reciprocal rank fusion at page level over every ranked list (dense, bm25_pt,
    bm25_en chunk lists, the page MaxSim list, the geo prior list): a page's rank in a
    chunk list is the rank of its best chunk among pages. One flat fusion measured better
    than fusing the chunk lists first (docs/evaluation.md). Provenance is kept per list;
    each page's chunks are ordered by their own fused score. Ties keep the order of
    `lists`, so callers pass the lists in channel-registry order. `readers` (list name ->
    the one language it matches): such a list counts only for the pages written in that
    language or whose hits (nor their document's) do not say one (service/query/language.py).
    `selections`: the lists that hold only the pages meeting a condition, not a ranking cut
    at its limit."""
    pages: dict[tuple[str, int], PageEvidence] = {}
    chunk_score: dict[tuple[str, int, int], float] = {}
    chunk_hit: dict[tuple[str, int, int], Hit] = {}
    for name, hits in lists.items():
        page_rank = 0
        for rank, hit in enumerate(hits, start=1):
            key = (hit.payload["doc_id"], int(hit.payload["page_no"]))
            page = pages.get(key)
            if page is None:
                page = pages[key] = PageEvidence(
                    doc_id=key[0],
                    page_no=key[1],
                    title=hit.payload.get("title", ""),
                    filename=hit.payload.get("filename", ""),
                    kind=hit.payload.get("kind", ""),
                    score=0.0,
                )
            if not page.locations and hit.payload.get("location"):
                page.locations = list(hit.payload["location"])[:20]
            if name not in page.channels:
                page_rank += 1
                page.channels[name] = ChannelScore(page_rank, hit.score)
            if name == "pages" or ("chunk_no" not in hit.payload and not page.excerpt):
                page.excerpt = hit.payload.get("text", "")[:400]
            elif "chunk_no" in hit.payload:
                ckey = (*key, int(hit.payload["chunk_no"]))
                chunk_score[ckey] = chunk_score.get(ckey, 0.0) + 1.0 / (k + rank)
                chunk_hit.setdefault(ckey, hit)
    for ckey in sorted(chunk_score, key=lambda c: -chunk_score[c]):
        hit, page = chunk_hit[ckey], pages[ckey[:2]]
        page.chunks.append(
            ChunkEvidence(
                doc_id=page.doc_id,
                page_no=page.page_no,
                chunk_no=ckey[2],
                text=hit.payload.get("text", ""),
                bbox=list(hit.payload.get("bbox", [])),
                page_size=list(hit.payload.get("page_size", [])),
                rank=len(page.chunks) + 1,
                score=round(chunk_score[ckey], 6),
                table=hit.payload.get("table"),
            )
        )
    languages = page_languages(lists) if readers else {}
    ranked_lists = [name for name, hits in lists.items() if hits]  # an empty list says nothing
    # a list is cut at its limit: a page it left out ranks below all it holds, not nowhere,
    # and counts as the next rank after its last page. Plain RRF scores a page first in three
    # lists and past the cut of the dense one under pages fifth to tenth in all four ("Marco
    # Zero" on the report's page of coordinates). A list that selects (`selections`: the
    # geo prior's list in its "filter" mode holds only pages in the named place) says the
    # pages it left out are not of it
    past_end = {
        name: 1 + sum(1 for p in pages.values() if name in p.channels)
        for name in ranked_lists
        if name not in selections
    }
    for key, page in pages.items():
        language = languages.get(key)
        # no list can read the page (a dense-only search): every list counts, as plain RRF
        counting = [name for name in ranked_lists if _counts(readers, name, language)] or ranked_lists
        scale = len(ranked_lists) / len(counting)
        page.score = scale * sum(
            1.0 / (k + (page.channels[name].rank if name in page.channels else past_end[name]))
            for name in counting
            if name in page.channels or name in past_end
        )
        if not page.excerpt and page.chunks:
            page.excerpt = page.chunks[0].text[:400]
    ranked = sorted(pages.values(), key=lambda p: (-p.score, p.doc_id, p.page_no))
    return ranked[:top_k]


def _counts(readers: dict[str, str] | None, name: str, language: str | None) -> bool:
    """Whether list `name` could have matched a page written in `language`."""
    read = readers.get(name) if readers else None
    return read is None or language is None or read == language


def page_languages(lists: dict[str, list[Hit]]) -> dict[tuple[str, int], str | None]:
    """Each retrieved page's language, read from the text of its hits in every list; a page
    whose text does not say (a table of names and numbers) takes its document's language,
    read from all the document's hits."""
    texts: dict[tuple[str, int], dict[str, None]] = {}
    for hits in lists.values():
        for hit in hits:
            key = (hit.payload["doc_id"], int(hit.payload["page_no"]))
            texts.setdefault(key, {})[hit.payload.get("text", "")[:LANGUAGE_CHARS]] = None
    pages = {key: text_language(" ".join(parts)) for key, parts in texts.items()}
    unsaid = {doc_id for (doc_id, _), language in pages.items() if language is None}
    documents = {
        doc_id: text_language(" ".join(t for key, parts in texts.items() if key[0] == doc_id for t in parts))
        for doc_id in unsaid
    }
    return {key: language or documents.get(key[0]) for key, language in pages.items()}
