"""The channel interface: one ranked list of engine hits per channel, fused by
service/query/fusion.py. Each hit's payload is its provenance (doc_id, page_no, chunk_no,
bbox); the channel's `name` labels its list in PageEvidence.channels."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from geo.gazetteer import Gazetteer
from index.collections import Collections
from index.registry import Registry
from index.types import Filter, Hit
from index.vector_store import VectorStore
from models.sparse_encoder import SparseTerms
from service.query.types import SearchQuery
from service.query.visual import VisualProfile


@dataclass(frozen=True)
class EncodedQuery:
    """A query with its text encoded once for every channel."""

    query: SearchQuery
    dense: np.ndarray  # (dim,) the question's pooled text vector
    tokens: np.ndarray  # (n_tokens, dim) its token vectors, for late interaction
    sparse: dict[str, SparseTerms]  # BM25 terms per sparse vector name (bm25_pt, bm25_en)

    @property
    def chunk_limit(self) -> int:
        """How many chunks a chunk list holds (several chunks may share a page)."""
        return max(self.query.top_k * 4, 20)

    @property
    def page_limit(self) -> int:
        """How many pages a page list holds."""
        return self.query.top_k * 2


@dataclass(frozen=True)
class ChannelContext:
    """What channels are built from: the store, its collections and the loaded encoders."""

    store: VectorStore
    collections: Collections
    sparse_names: Sequence[str]  # the BM25 vectors of the chunk collection
    visual: VisualProfile | None = None  # the visual profile's encoders (None in lite)
    prefetch_limit: int = 50  # per-branch candidates of an engine-fused query
    page_prefetch: int = 100  # the pooled first stage of the page channel
    page_two_stage: bool = False  # pages hold pooled vectors and CARTA_PAGE_POOLING is on
    registry: Registry | None = None  # document footprints (the maps channel)
    gazetteer: Gazetteer | None = None  # where countries are (the maps channel)


class BaseChannel(ABC):
    """One retrieval channel. Register a new one in service/query/channels/__init__.py."""

    # the name SearchQuery.channels selects it by; None: it runs whenever it applies
    selector: ClassVar[str | None] = None
    # its list ranks by the text encoder's vectors of the question, so it matches pages only
    # in the languages that encoder reads (fusion's blind lists, service/query/fusion.py)
    reads_text: ClassVar[bool] = False
    # its list ranks the chunk collection's texts (dense, BM25), so it can rank the chunks of
    # chosen pages again (service/query/retrieval.py, `_read_on_pages`)
    ranks_chunks: ClassVar[bool] = False
    name: str  # its ranked list's name in the evidence (PageEvidence.channels)

    @classmethod
    @abstractmethod
    def build(cls, ctx: ChannelContext) -> list[BaseChannel]:
        """The instances this channel contributes (none when its encoder is not loaded)."""

    @abstractmethod
    def applies(self, q: EncodedQuery) -> bool:
        """Whether this channel has anything to run for `q`."""

    @abstractmethod
    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        """Its ranked list for `q`, searched under the engine filter `flt`, best first."""
