"""Relational answers: the graph's verified pairs become the answer, and the pages that
mention those places become its citations (the graph channel of /v1/ask)."""

from __future__ import annotations

from graph.channel import GraphChannel, MentioningPage
from graph.communities import global_block
from graph.evidence import answer_text, graph_block
from index.registry import Registry
from service.answer import Answer, Citation, question_language

QUOTE_CHARS = 240


def with_graph(
    answer: Answer, graph: GraphChannel, registry: Registry, tenant: str, acl: list[str] | None = None
) -> Answer:
    """`answer` with graph evidence when the question is relational or corpus-wide ("which areas
    have the most schools?") here; unchanged otherwise.
    Only documents the caller's ACL tokens (`acl`, None = all of the tenant) allow are cited."""
    language = question_language(answer.question)
    overview = graph.answer_global(answer.question, tenant, language)
    if overview is not None:
        pages = graph.pages_mentioning_zones(tenant, [z["h3"] for z in overview.zones])
        answer.answer = overview.text
        answer.language, answer.refused, answer.grounded = language, False, True
        answer.citations = _citations(pages, registry, tenant, acl)
        answer.graph = global_block(overview)
        return answer
    result = graph.answer(answer.question, tenant)
    if result is None:
        return answer
    pages = graph.mentioning_pages(tenant, result) if result.pairs else []
    citations = _citations(pages, registry, tenant, acl)
    text = answer_text(result, language)
    if citations:
        head = (
            "Documentos que mencionam esses lugares"
            if language == "pt"
            else "Documents that mention these places"
        )
        text += f"\n{head}: " + "; ".join(f"{c.title} [{c.doc_id} p.{c.page_no}]" for c in citations)
    answer.answer = text
    answer.language = language
    answer.refused = False
    answer.grounded = True
    answer.citations = citations
    answer.graph = graph_block(result)
    return answer


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
