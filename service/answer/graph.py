"""Relational answers: the graph's verified pairs become the answer, and the pages that
mention those places become its citations (the graph channel of /v1/ask)."""

from __future__ import annotations

from graph.channel import GraphChannel, MentioningPage
from graph.communities import global_block
from graph.evidence import answer_text, graph_block
from index.registry import Registry
from service.answer.extractive import Answer, Citation, question_language
from service.query.retrieval import SearchResult

QUOTE_CHARS = 240


def graph_answer(
    question: str,
    result: SearchResult,
    graph: GraphChannel,
    registry: Registry,
    tenant: str,
    acl: list[str] | None = None,
) -> Answer | None:
    """The answer from graph evidence when the question is relational or corpus-wide ("which
    areas have the most schools?") here; None otherwise (the question goes to the documents).
    Only documents the caller's ACL tokens (`acl`, None = all of the tenant) allow are cited."""
    language = question_language(question)
    overview = graph.answer_global(question, tenant, language)
    if overview is not None:
        pages = graph.pages_mentioning_zones(tenant, [z["h3"] for z in overview.zones])
        citations = _citations(pages, registry, tenant, acl)
        return _answer(question, result, language, overview.text, citations, global_block(overview))
    relational = graph.answer(question, tenant)
    if relational is None:
        return None
    pages = graph.mentioning_pages(tenant, relational) if relational.pairs else []
    citations = _citations(pages, registry, tenant, acl)
    text = answer_text(relational, language)
    if citations:
        head = (
            "Documentos que mencionam esses lugares"
            if language == "pt"
            else "Documents that mention these places"
        )
        text += f"\n{head}: " + "; ".join(f"{c.title} [{c.doc_id} p.{c.page_no}]" for c in citations)
    return _answer(question, result, language, text, citations, graph_block(relational))


def _answer(
    question: str,
    result: SearchResult,
    language: str,
    text: str,
    citations: list[Citation],
    block: dict,
) -> Answer:
    return Answer(
        question=question,
        answer=text,
        language=language,
        grounded=True,  # every pair and count is computed from the loaded data
        refused=False,
        citations=citations,
        evidence=result.pages,
        timings_ms=dict(result.timings_ms),
        graph=block,
    )


def _citations(
    pages: list[MentioningPage], registry: Registry, tenant: str, acl: list[str] | None
) -> list[Citation]:
    citations = []
    for page in pages:
        doc = registry.get(tenant, page.doc_id)
        if doc is None or doc.status != "ready":
            continue
        if acl is not None and doc.acl and not set(doc.acl) & set(acl):
            continue
        size = next((p for p in registry.pages(tenant, page.doc_id) if p.page_no == page.page_no), None)
        bbox = [0.0, 0.0, float(size.width), float(size.height)] if size else [0.0, 0.0, 0.0, 0.0]
        citations.append(Citation(page.doc_id, page.page_no, doc.title, bbox, page.excerpt[:QUOTE_CHARS]))
    return citations
