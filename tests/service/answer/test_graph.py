"""Answers from the graph's analytical result: a category or attribute the loaded data does
not have is a refusal (the reply names what the data has), not an answer."""

from __future__ import annotations

import numpy as np

from graph.analytics import AnalyticResult
from graph.plan import GeoPlan
from service.answer.graph import graph_answer
from service.query.channels.graph import GraphEvidence
from service.query.types import SearchResult


def analytic_answer(question: str, result: AnalyticResult):  # noqa: ANN201 - an Answer
    search = SearchResult(question, [], np.zeros(0, dtype=np.float32), {})
    return graph_answer(question, search, GraphEvidence(analytic=result))


def test_an_unknown_category_is_refused_with_the_categories_the_data_has() -> None:
    unknown = {"kind": "category", "name": "flooding", "available": ["school", "cafe"]}
    answer = analytic_answer(
        "Quantos pontos de alagamento Olinda registrou em 2024?",
        AnalyticResult(GeoPlan(operation="count"), unknown=unknown),
    )
    assert answer.refused and answer.status == "refused"
    assert "school, cafe" in answer.answer and answer.language == "pt"


def test_a_count_of_a_known_category_is_an_answer() -> None:
    answer = analytic_answer(
        "How many schools are there?",
        AnalyticResult(GeoPlan(operation="count"), value=3, total=3, target_label="school"),
    )
    assert not answer.refused and answer.status == "answer"
