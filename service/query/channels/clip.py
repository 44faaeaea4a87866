"""Channel "clip" (visual profile): the question's CLIP text vector against the CLIP
vectors of pages, images and maps."""

from __future__ import annotations

from index.collections import CLIP_VECTOR
from index.types import Filter, Hit
from index.vector_store import VectorStore
from service.query.channels.base import BaseChannel, ChannelContext, EncodedQuery
from service.query.visual import VisualProfile


class ClipChannel(BaseChannel):
    """CLIP text-to-image neighbours."""

    selector = "clip"
    name = "clip"

    def __init__(self, store: VectorStore, visual: VisualProfile) -> None:
        self.store = store
        self.visual = visual

    @classmethod
    def build(cls, ctx: ChannelContext) -> list[BaseChannel]:
        return [cls(ctx.store, ctx.visual)] if ctx.visual else []

    def applies(self, q: EncodedQuery) -> bool:
        return q.query.selects(self.selector)

    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        vector = self.visual.clip.embed_texts([q.query.text])[0].tolist()
        return self.store.search(self.visual.collection.name, CLIP_VECTOR, vector, flt, q.page_limit)
