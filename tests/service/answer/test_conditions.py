"""service/answer/conditions.py: the condition a question puts on values, in en/pt/fr, and
whether it asks for the first row to meet it."""

from __future__ import annotations

import pytest

from service.answer.conditions import count_condition, first_asked


@pytest.mark.parametrize(
    ("question", "comparison", "threshold", "percent"),
    [
        ("How many states reported zero permit checks?", "eq", 0.0, False),
        ("Quantos estados têm gasto diferente de zero?", "ne", 0.0, False),
        ("Combien de régions à plus de 50 % ?", "gt", 50.0, True),
        ("In which week did the harvest first exceed 90%?", "gt", 90.0, True),
        ("Quando a colheita passou de 50% pela primeira vez?", "gt", 50.0, True),
        ("Quand la récolte a-t-elle dépassé 50 % pour la première fois ?", "gt", 50.0, True),
        ("How many weeks were below 10?", "lt", 10.0, False),
        ("How many regions had finished harvesting (100%)?", "eq", 100.0, True),
        ("Quantas regiões estavam a 100%?", "eq", 100.0, True),
    ],
)
def test_the_condition_is_read_in_each_language(
    question: str, comparison: str, threshold: float, percent: bool
) -> None:
    condition = count_condition(question)
    assert condition is not None
    assert (condition.comparison, condition.threshold, condition.percent) == (comparison, threshold, percent)


def test_a_first_time_is_asked_only_by_its_phrases() -> None:
    for asked in (
        "When did the share pass 50% for the first time?",
        "Em qual levantamento passou de 50% pela primeira vez?",
        "In which week did the harvest first exceed 90%?",
        "Quand a-t-elle dépassé 50 % pour la première fois ?",
    ):
        assert first_asked(asked) is not None, asked
    for plain in ("What was the first quarter's revenue?", "How many regions are above 50%?"):
        assert first_asked(plain) is None, plain


def test_a_ranking_is_no_threshold() -> None:
    assert count_condition("Which are the top 10 countries?") is None
