"""Channel "geo": when the question names a place (SearchQuery.prior), the chunks near it,
as one list fused inside the engine from the selected chunk branches (dense + BM25), by
one of three priors (PriorMode):

- "filter": the fused list over the chunks within the place only;
- "decay": the fused list over all chunks, re-scored by a distance-decay formula;
- "h3vector": the seed's hashed H3 vector of the place as one more RRF branch.

Countries have no centre, so every mode falls back to the filter for them.
docs/evaluation.md compares the modes.
"""

from __future__ import annotations

from collections.abc import Sequence

from geo.h3tags import GEO_POINT_FIELD, hashed_h3_sparse, point_tokens
from index.collections import GEO_VECTOR
from index.types import Branch, Filter, GeoDecay, Hit, SparseVec
from index.vector_store import VectorStore
from service.query.channels.base import BaseChannel, ChannelContext, EncodedQuery
from service.query.channels.bm25 import bm25_branch
from service.query.channels.dense import dense_branch
from service.query.filters import within_place


class GeoPriorChannel(BaseChannel):
    """Chunks near the place the question names."""

    selector = None  # runs whenever the query carries a prior and a chunk branch is selected
    name = "geo"

    def __init__(self, store: VectorStore, chunks: str, sparse_names: Sequence[str], prefetch: int) -> None:
        self.store = store
        self.chunks = chunks  # the chunk collection's name
        self.sparse_names = tuple(sparse_names)
        self.prefetch = prefetch  # per-branch candidates of the engine-fused query

    @classmethod
    def build(cls, ctx: ChannelContext) -> list[BaseChannel]:
        return [cls(ctx.store, ctx.collections.chunks.name, ctx.sparse_names, ctx.prefetch_limit)]

    def branches(self, q: EncodedQuery) -> list[Branch]:
        """The chunk branches the query selects, in the order of their own lists."""
        found = [dense_branch(q), *(bm25_branch(q, name) for name in self.sparse_names)]
        return [b for b in found if b is not None]

    def applies(self, q: EncodedQuery) -> bool:
        return q.query.prior is not None and bool(self.branches(q))

    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        prior = q.query.prior
        assert prior is not None
        branches, limit, center = self.branches(q), q.chunk_limit, prior.center
        if q.query.prior_mode == "decay" and center:
            decay = GeoDecay(GEO_POINT_FIELD, center[0], center[1], prior.reach_m)
            return self.store.decayed_search(self.chunks, branches, flt, limit, self.prefetch, decay)
        if q.query.prior_mode == "h3vector" and center:
            located = Branch(GEO_VECTOR, SparseVec(*hashed_h3_sparse(point_tokens(*center))))
            return self.store.fused_search(self.chunks, [*branches, located], flt, limit, self.prefetch)
        return self.store.fused_search(self.chunks, branches, within_place(flt, prior), limit, self.prefetch)
