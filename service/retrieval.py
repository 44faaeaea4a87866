"""Page-level retrieval over two channels, fused by reciprocal rank.

- chunks: dense + BM25 (pt, en) prefetches fused by RRF (k=60) inside the engine;
- pages: late interaction (MaxSim) of the query's token vectors against each page's
  multivector.
Filters (tenant, ready state, doc ids, kinds) go into every engine query, so they act
before top-k. The two channels run concurrently.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from index.collections import CHUNK_VECTOR, PAGE_VECTOR, Collections
from index.types import Branch, Filter, Hit, SparseVec
from index.vector_store import RRF_K, VectorStore
from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder
from service.geo_query import ResolvedGeo

CHANNELS = frozenset({"dense", "bm25", "pages"})


@dataclass
class SearchQuery:
    text: str
    tenant: str
    top_k: int = 5
    doc_ids: list[str] | None = None
    kinds: list[str] | None = None
    # which channels run: "dense" and "bm25" (chunk channel branches), "pages" (MaxSim);
    # a subset gives the single-channel baselines of the evaluation
    channels: frozenset[str] = CHANNELS
    geo: ResolvedGeo | None = None  # a hard geo filter, applied in every channel before top-k
    prior: ResolvedGeo | None = None  # a place named in the question: boosts pages there (channel "geo")


@dataclass
class ChunkEvidence:
    doc_id: str
    page_no: int
    chunk_no: int
    text: str
    bbox: list[float]
    page_size: list[float]
    rank: int  # 1-based rank in the chunk channel
    score: float


@dataclass
class ChannelScore:
    rank: int  # 1-based
    score: float


@dataclass
class PageEvidence:
    doc_id: str
    page_no: int
    title: str
    filename: str
    kind: str
    score: float  # fused RRF score
    channels: dict[str, ChannelScore] = field(default_factory=dict)
    chunks: list[ChunkEvidence] = field(default_factory=list)
    excerpt: str = ""
    locations: list[dict] = field(default_factory=list)  # {"lat", "lon"} points the page is tagged with


@dataclass
class SearchResult:
    query: str
    pages: list[PageEvidence]
    query_vector: np.ndarray
    timings_ms: dict[str, float]
    geo_filter: dict | None = None
    geo_prior: dict | None = None


def engine_filter(q: SearchQuery) -> Filter:
    match: dict = {"tenant": q.tenant, "state": "ready"}
    if q.doc_ids:
        match["doc_id"] = list(q.doc_ids)
    if q.kinds:
        match["kind"] = list(q.kinds)
    return Filter(match, any_of=list(q.geo.conditions) if q.geo else [])


class Retriever:
    def __init__(
        self,
        store: VectorStore,
        collections: Collections,
        text: TextEncoder,
        sparse: SparseEncoder,
        prefetch_limit: int = 50,
    ) -> None:
        self.store = store
        self.collections = collections
        self.text = text
        self.sparse = sparse
        self.prefetch_limit = prefetch_limit
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="carta-channel")

    def search(self, q: SearchQuery) -> SearchResult:
        t0 = time.perf_counter()
        emb = self.text.embed_with_tokens([q.text])[0]
        sparse = self.sparse.embed_query(q.text)
        t1 = time.perf_counter()
        flt = engine_filter(q)
        chunk_limit = max(q.top_k * 4, 20)
        branches = []
        if "dense" in q.channels:
            branches.append(Branch(CHUNK_VECTOR, emb.dense.tolist()))
        if "bm25" in q.channels:
            branches += [Branch(name, SparseVec(*terms)) for name, terms in sparse.items() if terms[0]]
        chunks_future = (
            self._pool.submit(
                self.store.fused_search,
                self.collections.chunks.name,
                branches,
                flt,
                chunk_limit,
                self.prefetch_limit,
            )
            if branches
            else None
        )
        pages_future = (
            self._pool.submit(
                self.store.search,
                self.collections.pages.name,
                PAGE_VECTOR,
                emb.tokens.tolist(),
                flt,
                q.top_k * 2,
            )
            if "pages" in q.channels
            else None
        )
        prior_future = None
        if q.prior and branches:
            prior_filter = Filter(flt.match, any_of=list(q.prior.conditions))
            prior_future = self._pool.submit(
                self.store.fused_search,
                self.collections.chunks.name,
                branches,
                prior_filter,
                chunk_limit,
                self.prefetch_limit,
            )
        chunk_hits = chunks_future.result() if chunks_future else []
        page_hits = pages_future.result() if pages_future else []
        prior_hits = prior_future.result() if prior_future else []
        t2 = time.perf_counter()
        pages = fuse_pages(chunk_hits, page_hits, q.top_k, prior_hits=prior_hits)
        t3 = time.perf_counter()
        timings = {"encode": (t1 - t0) * 1e3, "channels": (t2 - t1) * 1e3, "fusion": (t3 - t2) * 1e3}
        return SearchResult(
            q.text,
            pages,
            emb.dense,
            {k: round(v, 2) for k, v in timings.items()},
            geo_filter=q.geo.description if q.geo else None,
            geo_prior=q.prior.description if q.prior else None,
        )


def fuse_pages(
    chunk_hits: list[Hit],
    page_hits: list[Hit],
    top_k: int,
    k: int = RRF_K,
    prior_hits: list[Hit] | None = None,
) -> list[PageEvidence]:
    """RRF at page level: a page's chunk-channel rank is the rank of its best chunk
    among pages; its page-channel rank comes from MaxSim; the geo prior channel ranks
    the pages of the chunks found near the place the question names. Provenance is kept."""
    pages: dict[tuple[str, int], PageEvidence] = {}

    def page_of(hit: Hit) -> PageEvidence:
        key = (hit.payload["doc_id"], int(hit.payload["page_no"]))
        if key not in pages:
            pages[key] = PageEvidence(
                doc_id=key[0],
                page_no=key[1],
                title=hit.payload.get("title", ""),
                filename=hit.payload.get("filename", ""),
                kind=hit.payload.get("kind", ""),
                score=0.0,
            )
        page = pages[key]
        if not page.locations and hit.payload.get("location"):
            page.locations = list(hit.payload["location"])[:20]
        return page

    for rank, hit in enumerate(page_hits, start=1):
        page = page_of(hit)
        page.channels["pages"] = ChannelScore(rank, hit.score)
        page.excerpt = hit.payload.get("text", "")[:400]
    chunk_page_rank = 0
    for rank, hit in enumerate(chunk_hits, start=1):
        page = page_of(hit)
        if "chunks" not in page.channels:
            chunk_page_rank += 1
            page.channels["chunks"] = ChannelScore(chunk_page_rank, hit.score)
        page.chunks.append(
            ChunkEvidence(
                doc_id=page.doc_id,
                page_no=page.page_no,
                chunk_no=int(hit.payload.get("chunk_no", 0)),
                text=hit.payload.get("text", ""),
                bbox=list(hit.payload.get("bbox", [])),
                page_size=list(hit.payload.get("page_size", [])),
                rank=rank,
                score=hit.score,
            )
        )
    prior_rank = 0
    for hit in prior_hits or []:
        page = page_of(hit)
        if "geo" not in page.channels:
            prior_rank += 1
            page.channels["geo"] = ChannelScore(prior_rank, hit.score)
    for page in pages.values():
        page.score = sum(1.0 / (k + c.rank) for c in page.channels.values())
        if not page.excerpt and page.chunks:
            page.excerpt = page.chunks[0].text[:400]
    ranked = sorted(pages.values(), key=lambda p: (-p.score, p.doc_id, p.page_no))
    return ranked[:top_k]
