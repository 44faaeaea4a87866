"""Channel "bm25": one BM25 list per language of the sparse encoder (bm25_pt, bm25_en),
each with its own stemming and stopwords."""

from __future__ import annotations

from index.types import Branch, Filter, Hit, SparseVec
from index.vector_store import VectorStore
from service.query.channels.base import BaseChannel, ChannelContext, EncodedQuery


def bm25_branch(q: EncodedQuery, sparse_name: str) -> Branch | None:
    """The BM25 branch of one language when the query selects BM25 and has terms in it
    (the geo prior fuses it too)."""
    indices, values = q.sparse.get(sparse_name, ([], []))
    if not q.query.selects(Bm25Channel.selector) or not indices:
        return None
    return Branch(sparse_name, SparseVec(indices, values))


class Bm25Channel(BaseChannel):
    """BM25 over the chunks in one language."""

    selector = "bm25"
    ranks_chunks = True

    def __init__(self, store: VectorStore, chunks: str, sparse_name: str) -> None:
        self.store = store
        self.chunks = chunks  # the chunk collection's name
        self.name = sparse_name  # e.g. "bm25_pt": the list is named after its sparse vector

    @classmethod
    def build(cls, ctx: ChannelContext) -> list[BaseChannel]:
        return [cls(ctx.store, ctx.collections.chunks.name, name) for name in ctx.sparse_names]

    def applies(self, q: EncodedQuery) -> bool:
        return bm25_branch(q, self.name) is not None

    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        branch = bm25_branch(q, self.name)
        assert branch is not None
        return self.store.search(self.chunks, branch.using, branch.vector, flt, q.chunk_limit)
