"""Channel "pages" (lite late interaction): MaxSim of the question's token vectors against
each page's text-token multivector: by default a pooled first stage (CARTA_PAGE_POOLING, a
few vectors a page) then exact MaxSim on the survivors; exact over every page when pooling
is off or the pages were stored without pooled vectors (before `carta reindex`)."""

from __future__ import annotations

from index.collections import PAGE_VECTOR, POOLED_VECTOR
from index.types import Branch, Filter, Hit
from index.vector_store import VectorStore
from service.query.channels.base import BaseChannel, ChannelContext, EncodedQuery


class PagesChannel(BaseChannel):
    """Late interaction over the lite page multivectors."""

    selector = "pages"
    name = "pages"
    reads_text = True

    def __init__(self, store: VectorStore, pages: str, two_stage: bool, prefetch: int) -> None:
        self.store = store
        self.pages = pages  # the page collection's name
        self.two_stage = two_stage  # pooled first stage, then exact MaxSim; else exact alone
        self.prefetch = prefetch  # the first stage's width (at least the page limit)

    @classmethod
    def build(cls, ctx: ChannelContext) -> list[BaseChannel]:
        pages = ctx.collections.pages
        pooled = any(d.name == POOLED_VECTOR for d in pages.dense)
        return [cls(ctx.store, pages.name, pooled and ctx.page_two_stage, ctx.page_prefetch)]

    def applies(self, q: EncodedQuery) -> bool:
        return q.query.selects(self.selector)

    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        tokens = q.tokens.tolist()
        limit = q.page_limit
        if not self.two_stage:
            return self.store.search(self.pages, PAGE_VECTOR, tokens, flt, limit)
        first, second = Branch(POOLED_VECTOR, tokens), Branch(PAGE_VECTOR, tokens)
        return self.store.two_stage_search(self.pages, first, second, flt, limit, max(self.prefetch, limit))
