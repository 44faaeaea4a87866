"""Relational answers: the graph's verified pairs (or its corpus-wide overview) become the
answer, and the pages that mention those places become its citations. The evidence comes
from the graph channel (service/query/channels/graph.py)."""

from __future__ import annotations

from graph.analytics_text import answer_sentence
from graph.communities import global_block
from graph.evidence import answer_text, graph_block
from service.answer.gate import question_language
from service.answer.markers import cite_label, neutralise
from service.answer.types import Answer, Citation
from service.query.channels.graph import GraphEvidence, GraphPage
from service.query.types import SearchResult

QUOTE_CHARS = 240


def graph_answer(question: str, result: SearchResult, evidence: GraphEvidence) -> Answer:
    """The answer from the graph's evidence; every pair and count in it is computed from
    the loaded data, and only pages the caller may see are cited."""
    language = question_language(question)
    citations = [_citation(page) for page in evidence.pages]
    if evidence.analytic is not None:
        return _answer(
            question,
            result,
            language,
            _analytic_text(evidence, language, citations),
            citations,
            evidence.analytic.block(),
            # "the loaded data has no flooding points; categories available: ...": the asked
            # category or attribute is not in the data, so nothing was answered
            refused=evidence.analytic.unknown is not None,
        )
    if evidence.overview is not None:
        overview = evidence.overview
        text = neutralise(overview.text)  # community summaries name places from the data
        return _answer(question, result, language, text, citations, global_block(overview))
    relational = evidence.relational
    assert relational is not None, "graph evidence holds an overview or a relational result"
    text = neutralise(answer_text(relational, language))  # POI and place names are data
    if citations:
        head = (
            "Documentos que mencionam esses lugares"
            if language == "pt"
            else "Documents that mention these places"
        )
        text += f"\n{head}: " + "; ".join(
            f"{neutralise(c.title)} {cite_label(c.doc_id, c.page_no)}" for c in citations
        )
    return _answer(question, result, language, text, citations, graph_block(relational))


def _analytic_text(evidence: GraphEvidence, language: str, citations: list[Citation]) -> str:
    """The result's sentence, the datasets it was computed from, the pages citing its places."""
    analytic = evidence.analytic
    assert analytic is not None
    text = neutralise(answer_sentence(analytic, language))  # feature names are data
    names = [n for n in analytic.dataset_names if n]
    if names:
        head = "Fonte: conjunto de dados" if language == "pt" else "Source: dataset"
        text += f"\n{head} " + ", ".join(neutralise(n) for n in names) + "."
    if citations:
        head = (
            "Documentos que mencionam esses lugares"
            if language == "pt"
            else "Documents that mention these places"
        )
        text += f"\n{head}: " + "; ".join(
            f"{neutralise(c.title)} {cite_label(c.doc_id, c.page_no)}" for c in citations
        )
    return text


def _answer(
    question: str,
    result: SearchResult,
    language: str,
    text: str,
    citations: list[Citation],
    block: dict,
    refused: bool = False,
) -> Answer:
    return Answer(
        question=question,
        answer=text,
        language=language,
        grounded=True,  # every pair and count is computed from the loaded data
        refused=refused,
        citations=citations,
        evidence=result.pages,
        timings_ms=dict(result.timings_ms),
        graph=block,
    )


def _citation(page: GraphPage) -> Citation:
    return Citation(page.doc_id, page.page_no, page.title, page.bbox, page.excerpt[:QUOTE_CHARS])
