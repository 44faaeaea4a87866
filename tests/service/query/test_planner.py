"""The query planner (service/query/planner.py) over a small synthetic index: pages scored by
the query words they contain, so each sub-question really retrieves its own page."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from geo.folding import fold
from service.query.planner import PlannerLimits, QueryPlanner, fuse_wordings, merge_steps
from service.query.types import PageEvidence, SearchQuery, SearchResult

PAGES = {
    ("relatorio", 1): "Foram registrados 214 pontos de alagamento no Recife em 2024.",
    ("recife_a", 1): "Quantos pontos de alagamento o Recife registrou em 2024? Veja o mapa.",
    ("recife_b", 1): "Quantos pontos de alagamento o Recife registrou em 2024, por bairro.",
    ("nota", 1): "A EMLURB removeu 132.280 metros cúbicos de lodo dos canais.",
    ("a_seedlings", 1): "How many seedlings were planted: seedlings planted in many parks.",
    ("b_olinda", 1): "Many seedlings were planted in Olinda.",
    ("flood", 1): "How many flooding points did Recife have in 2024? It had 214.",
    ("q3_report", 1): "Total revenue in Q3 2024 was 48.6 million dollars.",
    ("q3_report", 2): "Cash and equivalents totalled 71.3 million at September 30.",
}
ALL_CHANNELS = frozenset({"dense", "bm25", "pages", "entities"})


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", fold(text)) if len(w) > 2]


class WordIndex:
    """A tiny index: a page scores one per query word (repeats count) it contains."""

    def __init__(self) -> None:
        self.queries: list[SearchQuery] = []

    def search(self, q: SearchQuery) -> SearchResult:
        self.queries.append(q)
        query = _words(q.text)
        scored = []
        for (doc, page), text in PAGES.items():
            words = set(_words(text))
            score = sum(w in words for w in query)
            if score:
                scored.append((-score, doc, page, text))
        pages = [
            PageEvidence(doc, page, doc, f"{doc}.pdf", "pdf", -score, excerpt=text)
            for score, doc, page, text in sorted(scored)[: q.top_k]
        ]
        return SearchResult(q.text, pages, np.zeros(4), {"channels": 1.0})


def _keys(result: SearchResult) -> list[tuple[str, int]]:
    return [(p.doc_id, p.page_no) for p in result.pages]


QUESTION = (
    "Quantos pontos de alagamento o Recife registrou em 2024 "
    "e quantos metros cúbicos a EMLURB removeu dos canais?"
)


def test_single_shot_misses_the_second_document_the_plan_finds_it() -> None:
    index = WordIndex()
    single = index.search(SearchQuery(QUESTION, "t", top_k=2))
    assert ("nota", 1) not in _keys(single)  # the Recife pages crowd it out

    planned = QueryPlanner(index.search, ALL_CHANNELS).search(SearchQuery(QUESTION, "t", top_k=2))
    assert _keys(planned) == [("recife_a", 1), ("nota", 1)]
    plan = planned.plan
    assert plan is not None and plan["multi_hop"] and plan["router"] == "rules"
    kinds = ["question", "sub-question", "sub-question", "translation", "translation"]
    assert [s["kind"] for s in plan["steps"]] == kinds  # each sub-question translated
    # glossary words, then the dictionary's ("registrou": record, register)
    assert plan["steps"][3]["query"] == "points flooding Recife record register 2024"
    nota = plan["steps"][2]
    assert nota["query"].startswith("quantos metros cúbicos")
    assert nota["pages"][0] == {"doc_id": "nota", "page_no": 1}
    assert plan["stopped"] == "covered" and plan["missing"] == []
    assert planned.query == QUESTION and "plan" in planned.timings_ms


OLINDA = "How many flooding points did Recife have in 2024 and how many seedlings were planted in Olinda?"


def test_a_term_no_page_covers_is_searched_again() -> None:
    index = WordIndex()
    planned = QueryPlanner(index.search, ALL_CHANNELS).search(SearchQuery(OLINDA, "t", top_k=2))
    plan = planned.plan
    assert plan is not None
    kinds = [s["kind"] for s in plan["steps"]]
    assert kinds == ["question", "sub-question", "sub-question", "translation", "missing terms"]
    assert plan["steps"][3]["missing"] == ["olinda"]  # after the parts, Olinda's page is not in the top 2
    refine = plan["steps"][4]
    assert "Olinda" in refine["query"] and refine["pages"][0] == {"doc_id": "b_olinda", "page_no": 1}
    assert ("b_olinda", 1) in _keys(planned) and plan["stopped"] == "covered"


def test_a_portuguese_question_over_an_english_report_is_searched_in_english_too() -> None:
    question = "Qual era o caixa da Northwind em setembro e qual a receita total do 3º trimestre de 2024?"
    index = WordIndex()
    single = index.search(SearchQuery(question, "t", top_k=2))
    assert ("q3_report", 2) not in _keys(single)  # "caixa", "setembro": no English page has them
    planned = QueryPlanner(index.search, ALL_CHANNELS).search(SearchQuery(question, "t", top_k=2))
    assert planned.plan is not None
    translations = [s["query"] for s in planned.plan["steps"] if s["kind"] == "translation"]
    assert translations == ["cash Northwind september", "revenue total Q3 2024"]
    assert set(_keys(planned)) == {("q3_report", 1), ("q3_report", 2)}


def test_step_and_token_limits_stop_the_loop() -> None:
    index = WordIndex()
    one = QueryPlanner(index.search, ALL_CHANNELS, PlannerLimits(max_steps=1)).search(
        SearchQuery(OLINDA, "t", top_k=2)
    )
    assert one.plan is not None and len(one.plan["steps"]) == 1 and one.plan["stopped"] == "step limit"
    assert len(index.queries) == 1
    broke = QueryPlanner(index.search, ALL_CHANNELS, PlannerLimits(max_tokens=0)).search(
        SearchQuery(OLINDA, "t", top_k=2)
    )
    assert broke.plan is not None and broke.plan["stopped"] == "token limit"
    assert [s["kind"] for s in broke.plan["steps"]] == [
        "question",
        "sub-question",
        "sub-question",
        "translation",
    ]


def test_a_single_question_is_one_search_with_routed_channels() -> None:
    index = WordIndex()
    result = QueryPlanner(index.search, ALL_CHANNELS).search(
        SearchQuery("Qual o gráfico de chuvas do Recife?", "t")
    )
    assert result.plan is not None and not result.plan["multi_hop"] and len(result.plan["steps"]) == 1
    assert result.plan["routes"] == ["text", "visual"]
    assert index.queries[0].channels == frozenset(
        {"dense", "bm25", "pages"}
    )  # visual/clip are not built here
    chosen = QueryPlanner(index.search, ALL_CHANNELS).search(
        SearchQuery("chuvas", "t", channels=frozenset({"bm25"}))
    )
    assert (
        index.queries[-1].channels == frozenset({"bm25"}) and chosen.plan is not None
    )  # the caller's choice wins


def test_merge_steps_keeps_the_questions_ranking_and_weaves_in_each_steps_best() -> None:
    def pages(*docs: str) -> list[PageEvidence]:
        return [PageEvidence(doc, 1, doc, doc, "pdf", 0.0) for doc in docs]

    question = pages("q1", "q2", "q3", "q4", "q5", "q6")
    merged = merge_steps(question, [pages("q2", "s1", "s2"), pages("t1", "t2")], 6)
    # 6 // 2 = 3 slots for the two steps: one page each, rank by rank with the question's
    assert [p.doc_id for p in merged] == ["q1", "q2", "t1", "q3", "q4", "q5"]
    merged = merge_steps(question, [pages("s1", "s2", "s3")], 6)
    assert [p.doc_id for p in merged] == ["q1", "s1", "q2", "s2", "q3", "s3"]
    assert [p.doc_id for p in merge_steps(pages("a"), [pages("b", "c")], 4)] == ["a", "b", "c"]


def test_one_portuguese_question_is_searched_translated_when_the_encoder_reads_english() -> None:
    """A single (not multi-hop) Portuguese question over an English report: with an
    English-only text encoder the planner searches its translation too; with a multilingual
    one (text_language None) or an English question, one search."""
    question = "Qual era o caixa e equivalentes da Northwind em setembro?"
    index = WordIndex()
    planned = QueryPlanner(index.search, ALL_CHANNELS, text_language="en").search(SearchQuery(question, "t"))
    assert planned.plan is not None and not planned.plan["multi_hop"]
    assert [s["kind"] for s in planned.plan["steps"]] == ["question", "translation"]
    assert ("q3_report", 2) in _keys(planned)
    multilingual = QueryPlanner(index.search, ALL_CHANNELS).search(SearchQuery(question, "t"))
    assert multilingual.plan is not None and len(multilingual.plan["steps"]) == 1
    english = QueryPlanner(index.search, ALL_CHANNELS, text_language="en").search(
        SearchQuery("What was Northwind's cash in September?", "t")
    )
    assert english.plan is not None and len(english.plan["steps"]) == 1


def test_unrouted_planner_only_adds_the_translation_search() -> None:
    """CARTA_PLANNER=translate: no routing, no parts, the single-shot search's channels; a
    Portuguese question over an English-only encoder is searched translated too, a multi-hop
    question is searched once, as asked."""
    index = WordIndex()
    planner = QueryPlanner(index.search, ALL_CHANNELS, text_language="en", route_questions=False)
    planned = planner.search(SearchQuery("Qual era o caixa e equivalentes da Northwind em setembro?", "t"))
    assert planned.plan is not None and planned.plan["router"] == "none"
    assert [s["kind"] for s in planned.plan["steps"]] == ["question", "translation"]
    assert ("q3_report", 2) in _keys(planned)
    # the question with the single-shot search's own channels, its translation with the text ones
    assert [q.channels for q in index.queries] == [None, frozenset({"dense", "bm25"})]
    english = planner.search(SearchQuery("What was Northwind's cash in September?", "t"))
    assert english.plan is None  # nothing to translate: the single-shot search as it is
    once = planner.search(SearchQuery(QUESTION, "t"))
    assert once.plan is not None and not once.plan["multi_hop"]
    assert [s["kind"] for s in once.plan["steps"]] == ["question", "translation"]  # no sub-questions
    assert once.plan["sub_questions"] == []


def test_wordings_are_fused_by_reciprocal_rank() -> None:
    """The question's and its translation's rankings: a page both find rises over one only
    the question ranks second; a page only the translation finds comes in after the pages
    the question ranks as high; ties keep the question's order."""

    def pages(*docs: str) -> list[PageEvidence]:
        return [PageEvidence(doc, 1, doc, doc, "pdf", 0.0) for doc in docs]

    fused = fuse_wordings([pages("q1", "q2", "both"), pages("both", "t1")], 4)
    assert [p.doc_id for p in fused] == ["both", "q1", "q2", "t1"]
    assert [p.doc_id for p in fuse_wordings([pages("q1", "q2"), pages("t1", "t2")], 3)] == ["q1", "t1", "q2"]


def test_a_translated_question_carries_its_translation_s_vector() -> None:
    """The relevance gate compares a foreign question in its translation too; the planner
    hands it the vector the translation step searched with, so it is not encoded twice."""
    index = WordIndex()

    def search(q: SearchQuery) -> SearchResult:
        found = index.search(q)
        return dataclasses.replace(found, query_vector=np.full(4, float(len(q.text))))

    question = "Quantos pontos de alagamento o Recife registrou em 2024?"
    planned = QueryPlanner(search, ALL_CHANNELS, text_language="en", route_questions=False).search(
        SearchQuery(question, "t", top_k=2)
    )
    assert planned.plan is not None and [s["kind"] for s in planned.plan["steps"]] == [
        "question",
        "translation",
    ]
    translated = planned.plan["steps"][1]["query"]
    assert planned.translation_vector is not None
    assert planned.translation_vector.tolist() == [float(len(translated))] * 4
    assert planned.query_vector.tolist() == [float(len(question))] * 4
    english = QueryPlanner(search, ALL_CHANNELS, text_language="en", route_questions=False).search(
        SearchQuery("How many flooding points did Recife record?", "t", top_k=2)
    )
    assert english.translation_vector is None
