"""The query planner (service/query/planner.py) over a small synthetic index: pages scored by
the query words they contain, so each sub-question really retrieves its own page."""

from __future__ import annotations

import re

import numpy as np

from geo.folding import fold
from service.query.planner import PlannerLimits, QueryPlanner, merge_by_rank
from service.query.types import PageEvidence, SearchQuery, SearchResult

PAGES = {
    ("relatorio", 1): "Foram registrados 214 pontos de alagamento no Recife em 2024.",
    ("recife_a", 1): "Quantos pontos de alagamento o Recife registrou em 2024? Veja o mapa.",
    ("recife_b", 1): "Quantos pontos de alagamento o Recife registrou em 2024, por bairro.",
    ("nota", 1): "A EMLURB removeu 132.280 metros cúbicos de lodo dos canais.",
    ("a_seedlings", 1): "How many seedlings were planted: seedlings planted in many parks.",
    ("b_olinda", 1): "Many seedlings were planted in Olinda.",
    ("flood", 1): "How many flooding points did Recife have in 2024? It had 214.",
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
    assert [s["kind"] for s in plan["steps"]] == ["question", "sub-question", "sub-question"]
    assert plan["steps"][2]["query"].startswith("quantos metros cúbicos") and plan["steps"][2]["pages"][
        0
    ] == {"doc_id": "nota", "page_no": 1}
    assert plan["stopped"] == "covered" and plan["missing"] == []
    assert planned.query == QUESTION and "plan" in planned.timings_ms


def test_a_term_no_page_covers_is_searched_again() -> None:
    question = (
        "How many flooding points did Recife have in 2024 and how many seedlings were planted in Olinda?"
    )
    index = WordIndex()
    planned = QueryPlanner(index.search, ALL_CHANNELS).search(SearchQuery(question, "t", top_k=2))
    plan = planned.plan
    assert plan is not None
    kinds = [s["kind"] for s in plan["steps"]]
    assert kinds == ["question", "sub-question", "sub-question", "missing terms"]
    assert plan["steps"][2]["missing"] == [
        "olinda"
    ]  # after the sub-questions, Olinda's page is not in the top 2
    assert "Olinda" in plan["steps"][3]["query"] and plan["steps"][3]["pages"][0] == {
        "doc_id": "b_olinda",
        "page_no": 1,
    }
    assert ("b_olinda", 1) in _keys(planned) and plan["stopped"] == "covered"


def test_step_and_token_limits_stop_the_loop() -> None:
    question = (
        "How many flooding points did Recife have in 2024 and how many seedlings were planted in Olinda?"
    )
    index = WordIndex()
    one = QueryPlanner(index.search, ALL_CHANNELS, PlannerLimits(max_steps=1)).search(
        SearchQuery(question, "t", top_k=2)
    )
    assert one.plan is not None and len(one.plan["steps"]) == 1 and one.plan["stopped"] == "step limit"
    assert len(index.queries) == 1
    broke = QueryPlanner(index.search, ALL_CHANNELS, PlannerLimits(max_tokens=0)).search(
        SearchQuery(question, "t", top_k=2)
    )
    assert broke.plan is not None and broke.plan["stopped"] == "token limit"
    assert [s["kind"] for s in broke.plan["steps"]] == ["question", "sub-question", "sub-question"]


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


def test_merge_by_rank_takes_each_lists_best_first() -> None:
    def page(doc: str) -> PageEvidence:
        return PageEvidence(doc, 1, doc, doc, "pdf", 0.0)

    merged = merge_by_rank([[page("a"), page("b"), page("c")], [page("b"), page("d")], [page("e")]], 4)
    assert [p.doc_id for p in merged] == ["a", "b", "e", "d"]
