"""Channel "entities" (document-graph local search): the entities the question names (by
acronym, name or alias, folded), their strongest neighbours, then the chunks mentioning
them, as one more ranked list. A chunk naming a recognised entity ranks above one naming
only a neighbour; more mentions rank higher.

Built by Carta (it holds the docgraph store), not from ChannelContext: `build` gives
nothing, so the channel exists only where CARTA_DOCGRAPH is on."""

from __future__ import annotations

from docgraph.store import DocGraphStore
from index.types import Filter, Hit
from index.vector_store import VectorStore
from service.query.channels.base import BaseChannel, ChannelContext, EncodedQuery

NEIGHBOURS = 5  # per recognised entity
NEIGHBOUR_WEIGHT = 0.5  # a neighbour's mention counts half a named entity's


class EntitiesChannel(BaseChannel):
    """Chunks mentioning the question's entities and their neighbours."""

    selector = "entities"
    name = "entities"

    def __init__(self, store: VectorStore, chunks: str, graph: DocGraphStore) -> None:
        self.store = store
        self.chunks = chunks  # the chunk collection's name
        self.graph = graph

    @classmethod
    def build(cls, ctx: ChannelContext) -> list[BaseChannel]:
        return []  # Carta adds it with its docgraph store (service/carta.py)

    def applies(self, q: EncodedQuery) -> bool:
        return q.query.selects(self.selector)

    def ranked_chunks(self, tenant: str, question: str) -> list[tuple[str, int, int, float]]:
        """(doc_id, page_no, chunk_no, score) for the question, best first."""
        named = self.graph.recognise(tenant, question)
        if not named:
            return []
        neighbours = [
            n["entity_id"]
            for e in named
            for n in self.graph.neighbours(tenant, e, NEIGHBOURS)
            if n["kind"] in ("org", "programme", "place", "law") and n["entity_id"] not in named
        ]
        scores: dict[tuple[str, int, int], float] = {}
        for weight, ids in ((1.0, named), (NEIGHBOUR_WEIGHT, neighbours)):
            for doc_id, page_no, chunk_no, count in self.graph.mention_chunks(tenant, ids):
                key = (doc_id, page_no, chunk_no)
                scores[key] = scores.get(key, 0.0) + weight * count
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return [(d, p, c, s) for (d, p, c), s in ranked]

    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        ranked = self.ranked_chunks(q.query.tenant, q.query.text)[: q.chunk_limit]
        hits: list[Hit] = []
        for doc_id in dict.fromkeys(d for d, _, _, _ in ranked):
            wanted = {(p, c): s for d, p, c, s in ranked if d == doc_id}
            allowed = flt.match.get("doc_id")
            if allowed is not None and doc_id not in (allowed if isinstance(allowed, list) else [allowed]):
                continue
            pages = sorted({p for p, _ in wanted})
            scoped = Filter(
                {**flt.match, "doc_id": doc_id, "page_no": pages}, flt.exclude, flt.geo_radius, flt.any_of
            )
            for hit in self.store.scroll(self.chunks, scoped):
                score = wanted.get((hit.payload.get("page_no"), hit.payload.get("chunk_no")))
                if score is not None:
                    hits.append(Hit(hit.id, score, hit.payload))
        return sorted(hits, key=lambda h: -h.score)
