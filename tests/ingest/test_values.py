"""Numbers, dates and periods read the way the corpus writes them."""

from __future__ import annotations

import pytest

from ingest.values import (
    DateValue,
    find_bands,
    find_dates,
    find_numbers,
    find_periods,
    in_band,
    parse_date,
    parse_number,
    quantity_of,
    split_tokens,
    term_tokens,
    value_tokens,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4.738.950", 4738950.0),
        ("4,738,950", 4738950.0),
        ("4 738 950", 4738950.0),
        ("99,62", 99.62),
        ("99,62%", 99.62),
        ("-0.47", -0.47),
        ("−0.47", -0.47),
        ("R$ 39.000,00", 39000.0),
        ("73,980,669", 73980669.0),
        ("1.5", 1.5),
        ("0,125", 0.125),
        ("2 753", 2753.0),
        ("394.13", 394.13),
        ("1,234.5", 1234.5),
        ("1.234,5", 1234.5),
        ("12", 12.0),
    ],
)
def test_numbers_in_any_separator_convention(text: str, value: float) -> None:
    assert parse_number(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["abc", "1.2.3", "12,34,5", "", "4.", "18-ago-17"])
def test_what_is_not_a_number(text: str) -> None:
    assert parse_number(text) is None


def test_numbers_found_in_running_text() -> None:
    values = [
        v
        for _, _, v in find_numbers("Nouvelle-Aquitaine: 2 753 MW au 31 décembre; área 4.738.950 ha, 99,62%")
    ]
    assert values == [2753.0, 31.0, 4738950.0, 99.62]


@pytest.mark.parametrize(
    "text",
    [
        "18 de agosto de 2017",
        "18-ago-17",
        "18/08/2017",
        "August 18, 2017",
        "18 August 2017",
        "2017-08-18",
        "18-Aug-2017",
    ],
)
def test_one_date_in_many_spellings(text: str) -> None:
    assert parse_date(text) == DateValue(2017, 8, 18)


def test_french_and_spanish_dates_and_months() -> None:
    assert parse_date("31 décembre 2020") == DateValue(2020, 12, 31)
    assert parse_date("1er janvier 2020") == DateValue(2020, 1, 1)
    assert parse_date("3 de marzo de 2019") == DateValue(2019, 3, 3)
    assert parse_date("agosto de 2017") == DateValue(2017, 8, None)


def test_month_first_only_when_day_first_is_impossible() -> None:
    assert parse_date("03/04/2020") == DateValue(2020, 4, 3)
    assert parse_date("12/31/2020") == DateValue(2020, 12, 31)
    assert parse_date("31/31/2020") is None


def test_dates_found_in_text_with_spans() -> None:
    text = "Colheita em 18-ago-17 e em 11/08/2017."
    dates = find_dates(text)
    assert [d for _, _, d in dates] == [DateValue(2017, 8, 18), DateValue(2017, 8, 11)]
    assert text[dates[0][0] : dates[0][1]] == "18-ago-17"


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("du 1er juin au 10 juillet 2016", "1er juin"),
        ("from 1 June to 10 July 2016", "1 June"),
        ("de 1º de junho a 10 de julho de 2016", "1º de junho"),
    ],
)
def test_a_range_s_first_date_takes_the_year_of_its_second(text: str, start: str) -> None:
    dates = find_dates(text)
    assert [d for _, _, d in dates] == [DateValue(2016, 6, 1), DateValue(2016, 7, 10)]
    assert text[dates[0][0] : dates[0][1]] == start


def test_periods() -> None:
    assert [p for _, _, p in find_periods("growth 2001-11 and 1951–61, 2001 a 2011")] == [
        (2001, 2011),
        (1951, 1961),
        (2001, 2011),
    ]
    decades = "the 1970s, a década de 2000, les années 1980, the 1990's; not 1970 nor 10 anos"
    found = [p for _, _, p in find_periods(decades)]
    assert found == [(1970, 1979), (2000, 2009), (1980, 1989), (1990, 1999)]


def test_the_same_value_gives_the_same_token_across_languages() -> None:
    evidence = value_tokens("2 753 MW au 31 décembre 2020; 18-ago-17: 99,62")
    assert term_tokens("December") & evidence
    assert term_tokens("2753") & evidence
    assert "date:2017-08-18" in value_tokens("August 18, 2017") & evidence
    assert "period:2001-2011" in value_tokens("2001-2011") & value_tokens("Decadal growth 2001-11")
    assert not term_tokens("January") & evidence
    assert not term_tokens("2754") & evidence


def test_split_tokens_reads_a_label_as_its_values_and_the_words_outside_them() -> None:
    date, words = split_tokens("18-ago-17")
    assert "date:2017-08-18" in date and words == set()  # no stray "ago" or "17"
    assert split_tokens("18 de agosto de 2017")[0] >= {"date:2017-08-18", "num:2017"}
    period, _ = split_tokens("1951-61")
    assert period == {"period:1951-1961", "num:1951", "num:1961"}
    assert split_tokens("Área 16/17 (ha)") == ({"num:16", "num:17"}, {"area", "ha"})
    assert split_tokens("Médio-Norte")[1] == {"medio", "norte"}
    assert split_tokens("Nagaland's")[1] == {"nagaland"}
    assert split_tokens("November - 2015")[0] >= {"date:2015-11", "month:11"}
    assert split_tokens("EST-07") == ({"code:est-07", "num:7"}, {"est"})  # a code, and its parts
    assert "code:18-ago-17" not in split_tokens("18-ago-17")[0]  # a date is no code


def test_a_lone_capital_letter_after_a_word_or_alone_is_a_name() -> None:
    """ "Product C", "bar D" and a label "D" name something by a letter; a sentence's
    opening "A" (a Portuguese article) or a code's "A-1" does not."""
    letters = lambda text: {t for t in split_tokens(text)[0] if t.startswith("letter:")}  # noqa: E731
    assert letters("Product C Monthly Revenue") == {"letter:c"}
    assert letters("what is the value of bar D?") == {"letter:d"}
    assert letters("D") == {"letter:d"}
    assert letters("A casa de Maria") == set()
    assert letters("Tabela A-1") == set()


@pytest.mark.parametrize(
    ("text", "bands"),
    [
        ("20–<30 kg 200/80 mg od", [(20.0, 30.0, False, "kg")]),
        ("<20 kg: 150/60 mg", [(float("-inf"), 20.0, False, "kg")]),
        ("≥45 kg", [(45.0, float("inf"), True, "kg")]),
        ("Adolescents 12 to 17 years", [(12.0, 17.0, True, "year")]),
        ("crianças de 3 a 11 anos", [(3.0, 11.0, True, "year")]),
        ("the 2001-2011 decade", []),  # a period, no quantity
    ],
)
def test_bands_of_a_quantity_are_read_with_their_unit(text: str, bands: list[tuple]) -> None:
    assert find_bands(text) == bands


def test_a_quantity_lies_in_the_band_of_its_unit() -> None:
    question = "Qual a dose para uma criança de 22 kg?"
    start = question.index("22")
    assert quantity_of(question, start, start + 2) == "kg"
    (band,) = find_bands("20–<30 kg")
    assert in_band(22, "kg", band) and not in_band(30, "kg", band) and not in_band(22, "year", band)
    assert in_band(17, "year", find_bands("12 to 17 years")[0])


def test_a_small_letter_names_a_chart_part_only_where_it_ends_the_phrase() -> None:
    """ "le secteur f ?", "bar d and bar e" name slices and bars; "barre a la plus grande",
    "as colunas a seguir" and the range "as fatias a a f" name none."""
    letters = [
        sorted(t for t in split_tokens(text)[0] if t.startswith("letter:"))
        for text in (
            "Quelle part occupe le secteur f ?",
            "bar d and bar e",
            "Quelle barre a la plus grande valeur ?",
            "as colunas a seguir",
            "No gráfico com as fatias a a f: qual a maior?",
        )
    ]
    assert letters == [["letter:f"], ["letter:d", "letter:e"], [], [], []]


def test_a_century_is_no_decade() -> None:
    assert [p for _, _, p in find_periods("the 1900s and the 1990’s")] == [(1990, 1999)]
