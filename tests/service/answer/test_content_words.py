"""The question's content words and how evidence text holds them: plural and gender
endings, cognates across pt / en / fr, the query glossary, units written as symbols."""

from __future__ import annotations

import pytest

from service.answer.content_words import (
    WordIndex,
    absent_content_words,
    asked_words,
    function_word,
    question_content_words,
    singular,
)
from service.answer.gate import key_terms


def test_content_words_leave_out_function_words_frames_verbs_months_and_key_terms() -> None:
    words = question_content_words(
        "Quantos metros cúbicos de sedimentos foram retirados do Canal do Jordão em agosto de 2024?",
        skip=["canal", "jordao"],
    )
    assert words == ["metros", "cubicos", "sedimentos"]
    assert question_content_words(
        "What was Northwind Analytics' net income in Q3 2024?", ["northwind", "analytics"]
    ) == [
        "net",
        "income",
    ]
    assert question_content_words("How many employees did Acme have?", ["acme"]) == ["employees"]
    # the document's genre and its citing ("o guia ... cita") are how the question points at
    # the source, not what it asks about
    assert question_content_words(
        "Além do Fridays for Future, que outros movimentos o guia cita?", ["fridays", "future"]
    ) == ["movimentos"]


@pytest.mark.parametrize(
    ("word", "stem"),
    [("sedimentos", "sediment"), ("regioes", "regiao"), ("anuais", "anual"), ("companies", "company")],
)
def test_singular(word: str, stem: str) -> None:
    assert singular(word) == stem


@pytest.mark.parametrize(
    ("word", "text"),
    [
        ("receita", "Northwind delivered total revenue of $48.6 million"),  # the glossary, pt -> en
        ("rainfall", "Precipitação mensal em Recife 2024 (mm)"),  # every pt word of the glossary
        ("precipitacao", "Monthly precipitation in Recife"),  # a cognate: a long shared prefix
        ("populacional", "decadal growth rate of population"),
        ("thermotolerant", "coliformes termotolerantes (NMP/100 mL)"),  # th = t
        ("solar", "le parc solaire français"),
        ("metros", "41.200 m³ removidos"),  # a unit written as its symbol
        ("sedimentos", "o sedimento retirado"),
        ("paises", "Some 210 people in 49 countries participated"),  # país + es, through the glossary
    ],
)
def test_a_word_is_found_in_its_forms_translations_and_cognates(word: str, text: str) -> None:
    assert WordIndex(text).contains(word)


def test_a_word_that_only_looks_like_another_is_not_found_in_it() -> None:
    assert not WordIndex("Capital / Medical & Public Health: 330,053").contains("capita")
    assert WordIndex("public health spending per capita").contains("capita")


def test_the_subject_on_no_page_is_absent() -> None:
    report = "Northwind Analytics delivered total revenue of $48.6 million in Q3 2024. Operating margin 18%."
    assert absent_content_words("What was Northwind Analytics' net income in Q3 2024?", [report]) == [
        "net",
        "income",
    ]
    assert absent_content_words("What was Northwind Analytics' total revenue in Q3 2024?", [report]) == []
    assert (
        absent_content_words("Qual foi a receita total da Northwind no 3º trimestre de 2024?", [report]) == []
    )
    milho = "MILHO SAFRA 16/17: ACOMPANHAMENTO DE COLHEITA POR REGIÃO Médio-Norte Área 16/17 (ha) 2.025.045"
    assert absent_content_words(
        "Qual a área plantada de soja na safra 16/17 na região Médio-Norte?", [milho]
    ) == ["soja"]
    assert absent_content_words("Qual a área de milho da safra 16/17 na região Médio-Norte?", [milho]) == []


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("Quais são as coordenadas da praia nesta área?", ["praia"]),
        ("Qual foi o oxigênio dissolvido medido na estação desta região?", ["oxigenio", "estacao"]),
        ("Which water-quality station lies in this radius?", ["water", "quality", "station"]),
        ("How much revenue did Northwind generate in this country?", ["revenue"]),
        # "está" is a verb, not a demonstrative: the word after it stays
        ("Qual estação está próxima do canal?", ["estacao", "proxima", "canal"]),
    ],
)
def test_the_word_a_demonstrative_points_with_is_not_a_subject(question: str, words: list[str]) -> None:
    assert question_content_words(question, ["northwind"]) == words


def test_the_kind_of_identifier_asked_and_a_years_noun_are_not_subjects() -> None:
    assert question_content_words("What is the IBM Redpaper form number?", ["ibm", "redpaper"]) == []
    words = question_content_words("Quantos MW a França conectou no ano de 2018?", ["mw", "franca", "2018"])
    assert "ano" not in words
    assert "ano" in question_content_words("Qual ano teve mais chuva?")  # no year given: the asked thing
    # "as duas taxas", "both rates": how many values are asked, no subject
    assert "duas" not in question_content_words("Qual estado teve a maior taxa? Informe as duas taxas.")
    # a word ending like a participle that the dictionaries list itself is a noun: a subject
    assert "estado" in question_content_words("Qual estado registrou mais casos?")
    assert "registrou" not in question_content_words("Qual estado registrou mais casos?")
    assert "registrados" not in question_content_words("Quantos pontos foram registrados?")
    # "the last three months" is the quarter a report writes ("au dernier trimestre 2020")
    question = "Quelle puissance a été raccordée pendant les trois derniers mois de 2020 ?"
    assert "trimestre" in question_content_words(question) and "mois" not in question_content_words(question)
    assert "trimestre" in question_content_words("Quanto foi conectado nos últimos três meses de 2020?")
    # a date question's kind of date is its frame: "adopted in 1997" answers "em que ano"
    assert "ano" not in question_content_words("Em que ano foi adotado o tratado internacional?")
    assert "year" not in question_content_words("In which year was the international treaty adopted?")


def test_a_unit_symbol_right_after_a_number_stands_for_its_words() -> None:
    assert WordIndex("Resíduos sólidos urbanos: 36% do material removido").contains("percentual")
    assert WordIndex("desassoreamento de 14,2km de canais").contains("quilometros")
    assert not WordIndex("o programa removeu lixo").contains("percentual")


def test_function_words_come_from_the_snowball_stop_lists() -> None:
    assert all(function_word(w) for w in ("que", "estava", "the", "were", "ont"))
    # not Spanish's list, which holds Portuguese content words
    assert not any(function_word(w) for w in ("estado", "sea", "receita", "revenue"))
    assert question_content_words("Qual região teve a maior receita?") == ["regiao", "receita"]


def test_a_single_word_identifier_kind_may_be_the_subject() -> None:
    words = question_content_words("Which reference point on the Recife map lies farthest west?", ["recife"])
    assert words[:2] == ["reference", "point"]


def test_a_comparison_frame_is_not_a_subject() -> None:
    """ "em relação à safra anterior", "par rapport à 2019", "compared with last year": how
    the question compares, not what it asks about."""
    assert "relacao" not in question_content_words("Quanto a colheita avançou em relação à safra anterior?")
    assert "rapport" not in question_content_words(
        "De combien la production a-t-elle crû par rapport à 2019 ?"
    )
    assert "compared" not in question_content_words("How much did sales grow compared with last year?")


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("At what temperature were the polarization tests carried out?", ["temperature"]),
        ("Qual foi a produtividade média do milho em Mato Grosso?", ["produtividade"]),
        ("Quem é o coordenador da COMON/DIFIM?", ["coordenador"]),
        (
            "What was Nagaland's decadal population growth rate in 2001-2011?",
            ["decadal", "population", "growth", "rate"],
        ),
        ("Qual o valor da multa do auto de infração 679199?", ["multa"]),
        ("Quelle était la puissance photovoltaïque de l'Allemagne ?", ["puissance", "photovoltaique"]),
        ("When was the bulletin published?", []),
        ("Quanto custou a obra?", []),
        # a partitive counts the noun asked before; an adverb or "approximate" is no quantity
        ("How many people responded, and how many of them had actually treated children?", []),
        ("Quantos municípios foram autuados e quantos deles recorreram?", []),
        ("Quelle part approximative du total occupe le secteur f ?", []),
    ],
)
def test_the_words_naming_what_is_asked_follow_its_frame(question: str, asked: list[str]) -> None:
    assert asked_words(question, key_terms(question)) == asked


def test_a_table_in_per_cent_holds_the_asked_percentage() -> None:
    """ "(Per cent)" under a table's title: "by what percentage" is asked of its values."""
    index = WordIndex("TABLE 4: STATE-WISE DECADAL GROWTH RATE OF POPULATION · (Per cent)")
    assert index.contains("percentage") and not WordIndex("TABLE 4: GROWTH RATE").contains("percentage")
