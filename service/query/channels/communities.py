"""Channel "global" (document-graph global search): the community summaries ranked against
the question (docgraph/global_search.py), then the chunks behind each top community's
sentences, as one more ranked list: the best community's summary chunks first, rank by rank
across communities, so several communities reach the top k.

Only questions across the documents run it ("what are the main themes", "which
organisations appear across the documents", "o que os documentos dizem sobre X":
service/query/router.py asks_global), or a query selecting it by name. Communities are
summarised over the documents the caller may see (the registry's ACL and status, as the
graph channel does), and every chunk is read back through the engine filter.

Built by Carta (it holds the docgraph store and the registry): `build` gives nothing."""

from __future__ import annotations

from collections.abc import Callable

from docgraph.global_search import GlobalResult, GlobalSearch
from docgraph.store import DocFilter
from index.acl import is_visible
from index.registry import Registry
from index.types import Filter, Hit
from index.vector_store import VectorStore
from service.query.channels.base import BaseChannel, ChannelContext, EncodedQuery

CHUNKS_PER_COMMUNITY = 4


def doc_filter(
    registry: Registry, tenant: str, acl: list[str] | None, doc_ids: list[str] | None
) -> DocFilter:
    """Whether a document id is a ready document of `tenant` the caller holding `acl` may see
    (and one of `doc_ids` when the query names some); one registry read per id."""
    seen: dict[str, bool] = {}

    def visible(doc_id: str) -> bool:
        if doc_id not in seen:
            doc = registry.get(tenant, doc_id)
            seen[doc_id] = (
                doc is not None
                and doc.status == "ready"
                and is_visible(doc.acl, acl)
                and (not doc_ids or doc_id in doc_ids)
            )
        return seen[doc_id]

    return visible


class GlobalChannel(BaseChannel):
    """Chunks behind the community summaries that best answer a corpus-wide question."""

    selector = "global"
    name = "global"

    def __init__(
        self,
        store: VectorStore,
        chunks: str,
        search: GlobalSearch,
        registry: Registry,
        asks_global: Callable[[str], bool],
    ) -> None:
        self.store = store
        self.chunks = chunks  # the chunk collection's name
        self.global_search = search
        self.registry = registry
        self.asks_global = asks_global

    @classmethod
    def build(cls, ctx: ChannelContext) -> list[BaseChannel]:
        return []  # Carta adds it with its docgraph store (service/carta.py)

    def applies(self, q: EncodedQuery) -> bool:
        selected = q.query.channels
        if selected is not None:
            return self.selector in selected
        return self.asks_global(q.query.text)

    def ranked(
        self, tenant: str, question: str, acl: list[str] | None, doc_ids: list[str] | None
    ) -> GlobalResult:
        return self.global_search.search(tenant, question, doc_filter(self.registry, tenant, acl, doc_ids))

    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        result = self.ranked(q.query.tenant, q.query.text, q.query.acl, q.query.doc_ids)
        wanted: dict[tuple[str, int, int], float] = {}
        per = [
            list(dict.fromkeys((s.doc_id, s.page_no, s.chunk_no) for s in r.community.said))[
                :CHUNKS_PER_COMMUNITY
            ]
            for r in result.communities
        ]
        order = 0
        for rank in range(CHUNKS_PER_COMMUNITY):  # rank by rank across communities
            for chunks in per:
                if rank < len(chunks) and chunks[rank] not in wanted:
                    wanted[chunks[rank]] = 1.0 / (1 + order)
                    order += 1
        hits: list[Hit] = []
        for doc_id in dict.fromkeys(d for d, _, _ in wanted):
            pages = sorted({p for d, p, _ in wanted if d == doc_id})
            scoped = Filter(
                {**flt.match, "doc_id": doc_id, "page_no": pages}, flt.exclude, flt.geo_radius, flt.any_of
            )
            allowed = flt.match.get("doc_id")
            if allowed is not None and doc_id not in (allowed if isinstance(allowed, list) else [allowed]):
                continue
            for hit in self.store.scroll(self.chunks, scoped):
                key = (doc_id, hit.payload.get("page_no"), hit.payload.get("chunk_no"))
                if key in wanted:
                    hits.append(Hit(hit.id, wanted[key], hit.payload))  # type: ignore[index]
        return sorted(hits, key=lambda h: -h.score)
