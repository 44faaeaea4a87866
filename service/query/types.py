"""The read path's data: a search query, and the page-level evidence it returns.

Shared by the channels, fusion, the retriever and the answerers; it holds no logic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from service.query.geo_filter import ResolvedGeo

# How the geo prior ranks (service/query/channels/geo_prior.py; docs/evaluation.md compares them).
# The one definition: the API schemas and Settings use this Literal.
PriorMode = Literal["filter", "decay", "h3vector"]
PRIOR_MODES: tuple[PriorMode, ...] = ("filter", "decay", "h3vector")


@dataclass
class SearchQuery:
    """What to search for, for whom, and how.

    Example: ``SearchQuery("flooding near schools", "default", top_k=5, acl=["_public"])``.
    """

    text: str
    tenant: str
    top_k: int = 5
    doc_ids: list[str] | None = None
    kinds: list[str] | None = None
    # the channels to run, by the names in service.query.channels.CHANNELS ("dense", "bm25",
    # "pages", "visual", "clip"); None runs them all, a subset gives the evaluation's baselines
    channels: frozenset[str] | None = None
    geo: ResolvedGeo | None = None  # a hard geo filter, applied in every channel before top-k
    prior: ResolvedGeo | None = None  # a place named in the question: boosts pages there (channel "geo")
    prior_mode: PriorMode = "filter"
    # the place the question names when a filter is given instead (no prior then): the
    # answer reads it ("Which maps cover Australia?" filtered to Sydney), the search does not
    named: ResolvedGeo | None = None
    acl: list[str] | None = None  # the caller's ACL tokens (index.acl; None: every document of the tenant)

    def selects(self, channel: str) -> bool:
        """Whether the channel named `channel` is asked for."""
        return self.channels is None or channel in self.channels


@dataclass
class ChunkEvidence:
    """One chunk of a page, with where it sits on the page (bbox in page points)."""

    doc_id: str
    page_no: int
    chunk_no: int
    text: str
    bbox: list[float]
    page_size: list[float]
    rank: int  # 1-based position among its page's chunks (by fused score)
    score: float
    # A chunk cut from a table: its cell grid (see TABLE_FIELDS in index/payloads.py).
    table: dict | None = None


@dataclass
class ChannelScore:
    """A page's place in one channel's ranked list."""

    rank: int  # 1-based
    score: float


@dataclass
class PageEvidence:
    """One evidence unit: a page, its fused score and its provenance per channel."""

    doc_id: str
    page_no: int
    title: str
    filename: str
    kind: str
    score: float  # fused RRF score
    channels: dict[str, ChannelScore] = field(default_factory=dict)
    chunks: list[ChunkEvidence] = field(default_factory=list)
    excerpt: str = ""
    locations: list[dict] = field(default_factory=list)  # {"lat", "lon"} points the page is tagged with


@dataclass
class SearchResult:
    """Ranked pages for a query, with the timings of each stage (ms)."""

    query: str
    pages: list[PageEvidence]
    query_vector: np.ndarray  # (dim,) the question's dense vector; empty for image queries
    timings_ms: dict[str, float]
    geo_filter: dict | None = None
    geo_prior: dict | None = None
    named_place: dict | None = None  # SearchQuery.named's description
    plan: dict | None = None  # the query planner's trace (service/query/planner.py), when it ran
    # the dense vector of the question's word-for-word translation, when the planner searched it
    # (the relevance gate compares a foreign question in it too, without encoding it again)
    translation_vector: np.ndarray | None = None
