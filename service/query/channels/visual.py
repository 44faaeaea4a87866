"""Channel "visual" (visual profile): the question's ColPali-family token vectors against
the page images' multivectors, a pooled prefetch (CARTA_VISUAL_PREFETCH wide) then exact
MaxSim on the full multivectors, inside the engine."""

from __future__ import annotations

from index.collections import POOLED_VECTOR, VISUAL_VECTOR
from index.types import Branch, Filter, Hit
from index.vector_store import VectorStore
from service.query.channels.base import BaseChannel, ChannelContext, EncodedQuery
from service.query.visual import VisualProfile


class VisualProfileChannel(BaseChannel):
    """A channel of the visual profile: present only when the profile's models are loaded,
    run when the query selects it."""

    def __init__(self, store: VectorStore, visual: VisualProfile) -> None:
        self.store = store
        self.visual = visual

    @classmethod
    def build(cls, ctx: ChannelContext) -> list[BaseChannel]:
        return [cls(ctx.store, ctx.visual)] if ctx.visual else []

    def applies(self, q: EncodedQuery) -> bool:
        return q.query.selects(self.selector)


class VisualChannel(VisualProfileChannel):
    """Late interaction over the page images (ColPali family)."""

    selector = "visual"
    name = "visual"

    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        tokens = self.visual.page.embed_queries([q.query.text])[0].tolist()
        limit = q.page_limit
        return self.store.two_stage_search(
            self.visual.collection.name,
            Branch(POOLED_VECTOR, tokens),
            Branch(VISUAL_VECTOR, tokens),
            flt,
            limit,
            max(self.visual.prefetch, limit),
        )
