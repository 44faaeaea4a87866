"""Page-level retrieval: ranked lists from several channels, fused by reciprocal rank.

- chunk lists: dense, BM25 Portuguese, BM25 English (one engine query each);
- pages: late interaction (MaxSim) of the query's token vectors against each page's
  multivector;
- geo: when the question names a place, the chunks near it, by one of three priors
  (PRIOR_MODES): "filter" (dense + BM25 fused by RRF inside the engine, only chunks
  within the place), "decay" (the same fusion over all chunks, re-scored by a
  distance-decay formula inside the engine) or "h3vector" (the seed's hashed H3 vector
  as one more RRF branch). docs/evaluation.md compares them.
Filters (tenant, ready state, doc ids, kinds, geo) go into every engine query, so they
act before top-k. The queries run concurrently.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from geo.h3tags import GEO_POINT_FIELD, hashed_h3_sparse, point_tokens
from index.collections import CHUNK_VECTOR, GEO_VECTOR, PAGE_VECTOR, POOLED_VECTOR, Collections
from index.types import Branch, Filter, GeoDecay, Hit, SparseVec
from index.vector_store import RRF_K, VectorStore
from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder
from service.query.geo_filter import ResolvedGeo
from service.query.visual import VisualProfile

CHANNELS = frozenset({"dense", "bm25", "pages", "visual", "clip"})  # visual, clip: visual profile
PriorMode = Literal["filter", "decay", "h3vector"]
PRIOR_MODES: tuple[PriorMode, ...] = ("filter", "decay", "h3vector")


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
    prior_mode: PriorMode = "filter"
    acl: list[str] | None = None  # the caller's ACL tokens (None: every document of the tenant)


@dataclass
class ChunkEvidence:
    doc_id: str
    page_no: int
    chunk_no: int
    text: str
    bbox: list[float]
    page_size: list[float]
    rank: int  # 1-based position among its page's chunks (by fused score)
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
    if q.acl is not None:
        match["acl"] = list(q.acl)
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
        visual: VisualProfile | None = None,
        page_prefetch: int = 100,
    ) -> None:
        self.visual = visual
        # pages stored with a pooled multivector (CARTA_PAGE_POOLING): a first stage this wide
        self.page_prefetch = page_prefetch
        self.page_pooled = any(d.name == POOLED_VECTOR for d in collections.pages.dense)
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
        chunks = self.collections.chunks.name
        branches = []
        if "dense" in q.channels:
            branches.append(Branch(CHUNK_VECTOR, emb.dense.tolist()))
        if "bm25" in q.channels:
            branches += [Branch(name, SparseVec(*terms)) for name, terms in sparse.items() if terms[0]]
        futures = {
            b.using: self._pool.submit(self.store.search, chunks, b.using, b.vector, flt, chunk_limit)
            for b in branches
        }
        if "pages" in q.channels:
            futures["pages"] = self._pool.submit(self._page_list, emb.tokens.tolist(), flt, q.top_k * 2)
        if self.visual:
            calls = self.visual.channel_calls(self.store, q.text, flt, q.top_k * 2, q.channels)
            futures.update({name: self._pool.submit(call) for name, call in calls.items()})
        if q.prior and branches:  # near the place the question names: one engine-fused list
            futures["geo"] = self._pool.submit(self._prior_list, q, branches, flt, chunk_limit)
        lists = {name: future.result() for name, future in futures.items()}
        t2 = time.perf_counter()
        pages = fuse_pages(lists, q.top_k)
        t3 = time.perf_counter()
        timings = {"encode": (t1 - t0) * 1e3, "channels": (t2 - t1) * 1e3, "fusion": (t3 - t2) * 1e3}
        return SearchResult(
            q.text,
            pages,
            emb.dense,
            {k: round(v, 2) for k, v in timings.items()},
            geo_filter=q.geo.description if q.geo else None,
            geo_prior={**q.prior.description, "mode": q.prior_mode} if q.prior else None,
        )

    def _page_list(self, tokens: list[list[float]], flt: Filter, limit: int) -> list[Hit]:
        """The page channel: exact MaxSim over every page, or pooled prefetch then exact MaxSim."""
        pages = self.collections.pages.name
        if not self.page_pooled:
            return self.store.search(pages, PAGE_VECTOR, tokens, flt, limit)
        first, second = Branch(POOLED_VECTOR, tokens), Branch(PAGE_VECTOR, tokens)
        return self.store.two_stage_search(pages, first, second, flt, limit, max(self.page_prefetch, limit))

    def _prior_list(self, q: SearchQuery, branches: list[Branch], flt: Filter, limit: int) -> list[Hit]:
        """The geo prior's ranked chunk list (see the module docstring). Countries have
        no centre, so every mode falls back to the filter for them."""
        assert q.prior is not None
        chunks = self.collections.chunks.name
        center = q.prior.center
        if q.prior_mode == "decay" and center:
            decay = GeoDecay(GEO_POINT_FIELD, center[0], center[1], q.prior.reach_m)
            return self.store.decayed_search(chunks, branches, flt, limit, self.prefetch_limit, decay)
        if q.prior_mode == "h3vector" and center:
            located = Branch(GEO_VECTOR, SparseVec(*hashed_h3_sparse(point_tokens(*center))))
            return self.store.fused_search(chunks, [*branches, located], flt, limit, self.prefetch_limit)
        prior_filter = Filter(flt.match, any_of=list(q.prior.conditions))
        return self.store.fused_search(chunks, branches, prior_filter, limit, self.prefetch_limit)


def fuse_pages(lists: dict[str, list[Hit]], top_k: int, k: int = RRF_K) -> list[PageEvidence]:
    """Reciprocal rank fusion at page level over every ranked list (dense, bm25_pt,
    bm25_en chunk lists, the page MaxSim list, the geo prior list): a page's rank in a
    chunk list is the rank of its best chunk among pages. One flat fusion measured better
    than fusing the chunk lists first (docs/evaluation.md). Provenance is kept per list;
    each page's chunks are ordered by their own fused score."""
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
            )
        )
    for page in pages.values():
        page.score = sum(1.0 / (k + c.rank) for c in page.channels.values())
        if not page.excerpt and page.chunks:
            page.excerpt = page.chunks[0].text[:400]
    ranked = sorted(pages.values(), key=lambda p: (-p.score, p.doc_id, p.page_no))
    return ranked[:top_k]
