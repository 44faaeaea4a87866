"""Channel "graph": relational evidence from the geospatial graph, for questions that ask
for pairs of places ("recycling points near parks") or for a corpus-wide overview ("which
areas have the most schools?"), with the pages, visible to the caller, that mention those
places.

It is not one of the fused channels (BaseChannel): its evidence is computed pairs and
zone counts that answer the question directly (service/answer/graph.py), not a ranked
list of pages; fusing the mentioning pages into the page ranking would change every
other answer's evidence.

Everything the evidence says about documents is the caller's: the graph is asked with a
`DocFilter` built here from the registry and index/acl.py's rule, so zones' document
lists, the counts in rankings and community summaries, and the cited pages name only
ready documents the caller may see (the graph store itself keeps the tenant-wide view).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graph.analytics import AnalyticResult
from graph.area_view import Within
from graph.channel import GraphChannel, MentioningPage
from graph.communities import GlobalResult
from graph.retrieval import RelationalResult
from graph.store import DocFilter
from index.acl import is_visible
from index.registry import Registry


@dataclass
class GraphPage:
    """A ready page the caller may see that mentions a place of the evidence."""

    doc_id: str
    page_no: int
    title: str  # the document's title
    bbox: list[float]  # the whole page, [0, 0, width, height] in page points (zeros if unknown)
    excerpt: str


@dataclass
class GraphEvidence:
    """What the graph found: an overview (corpus-wide question) or relational pairs."""

    overview: GlobalResult | None = None
    relational: RelationalResult | None = None
    analytic: AnalyticResult | None = None  # an analytical plan's result (count, argmax, group by, ...)
    pages: list[GraphPage] = field(default_factory=list)


class GraphEvidenceChannel:
    """The graph's evidence for a question, restricted to what the caller may see."""

    name = "graph"

    def __init__(self, graph: GraphChannel, registry: Registry) -> None:
        self.graph = graph
        self.registry = registry

    def run(
        self,
        question: str,
        tenant: str,
        acl: list[str] | None,
        language: str,
        within: Within | None = None,
    ) -> GraphEvidence | None:
        """The evidence when the question is corpus-wide or relational here, else None (the
        question goes to the documents). `acl`: the caller's tokens (index.acl); `within`:
        the request's geo filter as a point test (geo_filter.point_test), the only POIs and
        zones the evidence counts, ranks or pairs."""
        visible = self.doc_filter(tenant, acl)
        analytic = self.graph.analyze(question, tenant, within)
        # a zone ranking by H3 stays the overview's (GraphRAG global search); by a polygon
        # layer, a property or any other operation it is the plan's
        by_h3 = (
            analytic is not None and analytic.plan.operation == "group_by" and analytic.plan.group_by == "h3"
        )
        overview = (
            None
            if analytic is not None and not by_h3
            else self.graph.answer_global(question, tenant, language, visible, within)
        )
        if overview is None and analytic is not None:
            mentioning = self.graph.pages_mentioning_rows(tenant, analytic, visible)
            return GraphEvidence(analytic=analytic, pages=self._pages(mentioning, tenant))
        if overview is not None:
            cells = [z["h3"] for z in overview.zones]
            mentioning = self.graph.pages_mentioning_zones(tenant, cells, visible)
            return GraphEvidence(overview=overview, pages=self._pages(mentioning, tenant))
        relational = self.graph.answer(question, tenant, visible, within)
        if relational is None:
            return None
        mentioning = self.graph.mentioning_pages(tenant, relational, visible) if relational.pairs else []
        return GraphEvidence(relational=relational, pages=self._pages(mentioning, tenant))

    def doc_filter(self, tenant: str, acl: list[str] | None) -> DocFilter:
        """Whether a document id is a ready document of `tenant` the caller holding `acl` may
        see (one registry read per id and question)."""
        seen: dict[str, bool] = {}

        def visible(doc_id: str) -> bool:
            if doc_id not in seen:
                doc = self.registry.get(tenant, doc_id)
                seen[doc_id] = doc is not None and doc.status == "ready" and is_visible(doc.acl, acl)
            return seen[doc_id]

        return visible

    def _pages(self, pages: list[MentioningPage], tenant: str) -> list[GraphPage]:
        """The mentioning pages (already restricted to visible documents) with their sizes."""
        out = []
        for page in pages:
            doc = self.registry.get(tenant, page.doc_id)
            if doc is None:  # deleted meanwhile
                continue
            records = self.registry.pages(tenant, page.doc_id)
            size = next((p for p in records if p.page_no == page.page_no), None)
            bbox = [0.0, 0.0, float(size.width), float(size.height)] if size else [0.0, 0.0, 0.0, 0.0]
            out.append(GraphPage(page.doc_id, page.page_no, doc.title, bbox, page.excerpt))
        return out
