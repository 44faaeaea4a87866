"""The offline pt <-> en query glossary (service/query/translate.py)."""

from __future__ import annotations

from service.query.translate import translate


def test_portuguese_to_english_keeps_names_codes_and_numbers() -> None:
    assert (
        translate("Qual era o caixa da Northwind em 30 de setembro de 2024?", "pt")
        == "cash Northwind 30 september 2024"
    )
    assert translate("qual foi a receita total no 3º trimestre de 2024", "pt") == "revenue total Q3 2024"


def test_english_to_portuguese() -> None:
    assert (
        translate("How many flooding points did Recife have in Q2?", "en")
        == "alagamento pontos Recife have 2º trimestre"
    )


def test_too_few_glossary_words_or_another_language_give_nothing() -> None:
    assert translate("Quem é Marina Albuquerque Lins?", "pt") is None
    assert translate("Quién es Marina Albuquerque Lins?", "es") is None


def test_a_french_question_is_translated_to_english() -> None:
    """French -> English from the glossary, its cognate endings ("polarisation" ->
    "polarization") and CLDR country names ("Inde" -> "India")."""
    assert translate("Quelle puissance solaire était installée ?", "fr") == "capacity power solar installed"
    assert translate("La résistance de polarisation de l'acier inoxydable ?", "fr") == (
        "resistance polarization steel stainless"
    )
    assert translate("Quelle est la croissance de la population en Inde ?", "fr") == "growth population India"


def test_a_word_outside_the_glossary_becomes_its_english_cognate_by_its_ending() -> None:
    """ "eliminação" -> "elimination", "detecção" -> "detection", "cirrose" -> "cirrosis"
    (BM25 stems meet), and OMS -> WHO; names (capitalised) and short stems stay as written."""
    # (the dictionary, when installed, adds its words: tests/service/query/test_dictionary.py)
    words = str(translate("Como a OMS define a eliminação da hepatite?", "pt")).split()
    assert words[:2] == ["WHO", "define"] and "elimination" in words
    words = str(translate("Qual a frequência de detecção em pessoas com cirrose?", "pt")).split()
    assert {"detection", "cirrosis"} <= set(words)
    assert translate("A Nação e a Vitória", "pt") is None  # names, and "nação" is too short a stem


def test_a_country_is_named_in_the_other_language() -> None:
    """CLDR's names (geo/country_names.py), a multi-word name as one: a page written in
    English names "India" and "the United States", never "Índia" or "Estados Unidos"."""
    pt = translate("Qual foi a capacidade solar instalada na Índia e nos Estados Unidos em 2020?", "pt")
    assert pt is not None and "India" in pt.split() and "United States" in pt
    assert "Estados" not in pt
    en = translate("What was the solar capacity installed in Germany in 2020?", "en")
    assert en is not None and "Alemanha" in en.split()


def test_the_words_of_a_chart_question_are_translated() -> None:
    """ "gráfico de pizza", "barres empilées": the lite chart reader indexes its charts in English."""
    assert translate("Qual fatia é a maior no gráfico de pizza?", "pt") == "slice largest highest chart pie"
    assert translate("Dans le graphique en barres empilées, quel mois ?", "fr") == "chart bars stacked month"


def test_an_authors_background_is_translated() -> None:
    """An English author bio ("a Master's degree in Computer Science") asked in Portuguese."""
    translated = translate("Em que universidade o autor fez o mestrado em Ciência da Computação?", "pt")
    assert translated is not None
    assert {"university", "author", "master", "science", "computer"} <= set(translated.split())


def test_a_name_of_several_capitalised_words_is_kept_as_written() -> None:
    """ "Marco Zero" is a square of Recife, not "march Zero"; "março" alone is a month."""
    assert "march" not in (translate("Qual a longitude e a latitude do Marco Zero do Recife?", "pt") or "")
    assert "march" in (translate("Qual foi a precipitação em março de 2020 no Recife?", "pt") or "")
    # a letter beside a capitalised word makes no name: "Produto D" is a product
    assert "product" in (translate("Em que mês o Produto D teve a menor receita mensal?", "pt") or "")
