"""The language of a retrieved text (service/query/language.py)."""

from __future__ import annotations

import pytest

from service.query.language import text_language


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("The decadal growth rate of the population of the states is shown in the table below.", "en"),
        ("A precipitação acumulada no município foi de 2.345 mm, acima da média para o período.", "pt"),
        ("La puissance raccordée dans la région est de 2 753 MW au 31 décembre 2020 pour les parcs.", "fr"),
        ("El número de estaciones y la precipitación del año están en la tabla con los datos.", "es"),
    ],
)
def test_running_text_says_its_language(text: str, language: str) -> None:
    assert text_language(text) == language


@pytest.mark.parametrize(
    "text",
    [
        "Nagaland 14.07 39.88 50.05 56.08 64.53 -0.47",  # a table row: names and numbers only
        "",
        # a card written in both languages says neither
        "Mapa do Recife e da costa. Map of Recife and the coast.",
    ],
)
def test_text_without_a_clear_language_says_none(text: str) -> None:
    assert text_language(text) is None
