"""Page-level retrieval: encode the question once, build the engine filter once, run every
channel that applies concurrently, fuse their ranked lists by reciprocal rank.

The channels are in service/query/channels/ (one file each, registered in one list), the
filter in filters.py and the fusion in fusion.py; this module only orchestrates them and
times each stage. A question in a language the text encoder does not read has that
encoder's lists bound to the question's language in the fusion (`readers`). Under a geo
filter, the chunks read on the chosen pages are ranked again without it (`_read_on_pages`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from geo.folding import fold
from index.types import Filter
from models.query_batcher import QueryBatcher
from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEmbedding, TextEncoder
from service.answer.gate import key_terms, question_language
from service.query.channels import BaseChannel, EncodedQuery
from service.query.channels.maps import MAP_CHANNEL, maps_first
from service.query.filters import engine_filter
from service.query.fusion import fuse_pages
from service.query.types import PageEvidence, SearchQuery, SearchResult


class Retriever:
    """Runs the channels for a query and fuses their lists into page evidence."""

    def __init__(
        self,
        text: TextEncoder,
        sparse: SparseEncoder,
        channels: Sequence[BaseChannel],
        text_language: str | None = None,
    ) -> None:
        self.text = text
        self.sparse = sparse
        self.channels = list(channels)  # in fusion order (service.query.channels.build_channels)
        self.text_language = text_language  # the one language the text encoder reads; None: any
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="carta-channel")
        # questions asked at the same time are encoded in one forward pass (models/query_batcher.py)
        self._queries: QueryBatcher[TextEmbedding] = QueryBatcher(text.embed_with_tokens)

    def channel(self, name: str) -> BaseChannel | None:
        """The channel whose list is called `name` (e.g. "pages"), if it is built."""
        return next((c for c in self.channels if c.name == name), None)

    def search(self, q: SearchQuery) -> SearchResult:
        t0 = time.perf_counter()
        emb = self._queries.one(q.text)
        encoded = EncodedQuery(q, emb.dense, emb.tokens, self.sparse.embed_query(q.text))
        t1 = time.perf_counter()
        flt = engine_filter(q)
        running = [c for c in self.channels if c.applies(encoded)]
        futures = {c.name: self._pool.submit(c.run, encoded, flt) for c in running}
        lists = {name: future.result() for name, future in futures.items()}
        t2 = time.perf_counter()
        maps = lists.get(MAP_CHANNEL)  # map intent: the maps covering the place come first
        readers = bound_readers(q.text, running, self.text_language)
        selections = {"geo"} if q.prior_mode == "filter" else set()  # only chunks within the place
        fused = fuse_pages(lists, q.top_k + len(maps or []), readers=readers, selections=selections)
        pages = maps_first(fused, maps)[: q.top_k]
        if q.geo is not None:
            self._read_on_pages(encoded, flt, running, pages)
        t3 = time.perf_counter()
        timings = {"encode": (t1 - t0) * 1e3, "channels": (t2 - t1) * 1e3, "fusion": (t3 - t2) * 1e3}
        return SearchResult(
            q.text,
            pages,
            emb.dense,
            {k: round(v, 2) for k, v in timings.items()},
            geo_filter=q.geo.description if q.geo else None,
            geo_prior={**q.prior.description, "mode": q.prior_mode} if q.prior else None,
            named_place=q.named.description if q.named else None,
        )

    def _read_on_pages(
        self, encoded: EncodedQuery, flt: Filter, running: Sequence[BaseChannel], pages: list[PageEvidence]
    ) -> None:
        """The chunks of the pages a geo filter chose, ranked by the question without the filter.
        The filter keeps the chunks that carry a place in the area, so a located table page
        came with its heading's chunk but not the row of "Médio-Norte" (no place of its own)
        that answers. The chunks in the area stay first; the page's others follow as the
        question ranks them."""
        chunk_channels = [c for c in running if c.ranks_chunks]
        terms = [fold(t) for t in key_terms(encoded.query.text)]
        # only pages whose chunks in the area miss a name, number or code the question asks about
        # ("Médio-Norte", "16/17"); a question naming none keeps what the area chose
        pages = [p for p in pages if any(t not in fold(" ".join(c.text for c in p.chunks)) for t in terms)]
        if not pages or not chunk_channels:
            return
        on_pages = Filter(
            {
                **flt.match,
                "doc_id": sorted({p.doc_id for p in pages}),
                "page_no": sorted({p.page_no for p in pages}),
            }
        )
        futures = {c.name: self._pool.submit(c.run, encoded, on_pages) for c in chunk_channels}
        lists = {name: future.result() for name, future in futures.items()}
        read = {(p.doc_id, p.page_no): p for p in fuse_pages(lists, top_k=len(pages) * 4)}
        for page in pages:
            fresh = read.get((page.doc_id, page.page_no))
            if fresh is None:
                continue
            held = {c.chunk_no for c in page.chunks}  # the chunks in the area stay first
            added = [c for c in fresh.chunks if c.chunk_no not in held]
            page.chunks = page.chunks + [
                replace(c, rank=len(page.chunks) + i + 1) for i, c in enumerate(added)
            ]


def bound_readers(
    question: str, channels: Sequence[BaseChannel], text_language: str | None
) -> dict[str, str] | None:
    """The text encoder's lists bound to the question's language, when the encoder reads
    one language (`text_language`) and the question is in another. Measured on the eval
    sets (docs/evaluation.md): all-MiniLM finds Portuguese pages for English questions about
    as well as BM25 does, but English pages for Portuguese questions almost never, so only
    a question in another language than the encoder's is bound."""
    language = question_language(question)
    if text_language is None or language == text_language:
        return None
    return {c.name: language for c in channels if c.reads_text}


# SearchQuery, SearchResult, engine_filter and fuse_pages live in types.py, filters.py and
# fusion.py; modules that still import them from here keep working until they move.
__all__ = ["Retriever", "bound_readers"]
