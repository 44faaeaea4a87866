"""Channel "dense": the question's text vector against the chunks' dense vectors."""

from __future__ import annotations

from index.collections import CHUNK_VECTOR
from index.types import Branch, Filter, Hit
from index.vector_store import VectorStore
from service.query.channels.base import BaseChannel, ChannelContext, EncodedQuery


def dense_branch(q: EncodedQuery) -> Branch | None:
    """The dense chunk branch when the query selects it (the geo prior fuses it too)."""
    return Branch(CHUNK_VECTOR, q.dense.tolist()) if q.query.selects(DenseChannel.selector) else None


class DenseChannel(BaseChannel):
    """Dense (MiniLM) nearest chunks."""

    selector = "dense"
    name = CHUNK_VECTOR
    reads_text = True
    ranks_chunks = True

    def __init__(self, store: VectorStore, chunks: str) -> None:
        self.store = store
        self.chunks = chunks  # the chunk collection's name

    @classmethod
    def build(cls, ctx: ChannelContext) -> list[BaseChannel]:
        return [cls(ctx.store, ctx.collections.chunks.name)]

    def applies(self, q: EncodedQuery) -> bool:
        return dense_branch(q) is not None

    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        branch = dense_branch(q)
        assert branch is not None
        return self.store.search(self.chunks, branch.using, branch.vector, flt, q.chunk_limit)
