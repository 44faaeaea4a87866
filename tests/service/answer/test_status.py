"""The answer's status: "answer" when a sentence states the asked thing, "passages" when
the extractive path can only quote the evidence, "refused" when the gate refuses."""

from __future__ import annotations

import pytest

from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder
from service.answer.asked import asks_identifier, states_value
from service.answer.extractive import ExtractiveAnswerer, counts_rows, names_held
from service.answer.gate import Candidate, RelevanceGate
from service.answer.status import AnswerTest, answer_status, asked_value, ranks
from service.query.types import PageEvidence
from tests.service.answer.test_gate import SERANON, WHO, evidence


def cands(*sentences: str) -> list[Candidate]:
    return [Candidate(s, None, None) for s in sentences]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("How many new HCV infections did WHO estimate occurred in 2019?", "number"),
        ("Quantos pontos de alagamento foram registrados?", "number"),
        ("What percentage of people had been diagnosed?", "number"),
        ("Qual a área total de milho em Mato Grosso?", "number"),
        ("Qual taxa de resposta o tratamento alcançava?", "number"),  # the quantity without "a"
        ("Qual percentual da área foi colhido?", "number"),
        ("Qual valor contém o registrador especial CURRENT USER?", None),  # a name may be the value
        ("When was the bulletin published?", "date"),
        ("Quando foi publicado o boletim?", "date"),
        ("Em que ano o relatório foi publicado?", "date"),
        ("Which region has the largest installed park?", None),
        ("Qual bairro teve mais pontos de alagamento?", None),
        ("What TEDs score did the OTSL model reach on FinTabNet?", "number"),
        ("Quelle sera la puissance crête de la future centrale ?", "number"),
        ("Segundo a OMS, quando o guia foi publicado?", "date"),
        ("What does a manager see when looking at the TAX_ID of another employee?", None),
        ("Em que anos o daclatasvir foi aprovado pela EMA e pela FDA?", "date"),  # plurals too
        ("In which years was daclatasvir approved?", "date"),
        ("Quelle année a-t-elle été retenue ?", "date"),
        ("Até que ano a Índia pretende alcançar a neutralidade de carbono?", "date"),
        ("By what year does China aim at carbon neutrality?", "date"),
    ],
)
def test_the_kind_of_value_a_question_asks_for(question: str, asked: str | None) -> None:
    assert asked_value(question) == asked


def test_a_sentence_with_the_key_terms_and_a_new_number_is_an_answer() -> None:
    question = "What was Nouvelle-Aquitaine's connected solar capacity at 31 December 2020?"
    assert answer_status(question, cands(SERANON)) == "answer"
    assert answer_status("Quantas pessoas em 2019?", cands("Em 2019 eram 58 milhões de pessoas.")) == "answer"


def test_no_value_of_the_asked_kind_gives_passages() -> None:
    question = "How many solar parks does Nouvelle-Aquitaine have?"
    assert answer_status(question, cands("Nouvelle-Aquitaine has the largest installed park.")) == "passages"
    # the only number is the one the question gives
    assert answer_status("How many cases in 2019?", cands("Cases were reported in 2019.")) == "passages"
    assert answer_status("When was it built?", cands("It was built by the city.")) == "passages"
    # asked for a percentage, a year is no value of it
    share = "Que percentual das crianças da OMS é infectado?"
    assert answer_status(share, cands("As diretrizes da OMS de 2018 tratam das crianças.")) == "passages"
    assert answer_status(share, cands("Segundo a OMS, 6% das crianças são infectadas.")) == "answer"


def test_key_terms_split_over_sentences_give_passages() -> None:
    question = "What was the capacity of Nouvelle-Aquitaine in Occitanie terms?"
    split = cands("Nouvelle-Aquitaine has 2 753 MW.", "Occitanie follows with 2 000 MW.")
    assert answer_status(question, split) == "passages"
    assert answer_status(question, cands("Nouvelle-Aquitaine has 2 753 MW, Occitanie 2 000 MW.")) == "answer"


def test_a_name_in_the_pages_title_or_headings_counts_for_the_sentence() -> None:
    """ "Northwind" and "Q3" are in the report's title, not in the sentence that states the
    figure: the title places it, so it is an answer; a name only in another body sentence of
    the page is still split over sentences."""
    question = "How many active customers did Northwind have at the end of Q3 2024?"
    sentence = "Active customers reached 3,412 at quarter end of 2024, a net increase of 186."
    page = PageEvidence("d", 1, "Northwind Analytics — Q3 2024 report", "q3.pdf", "pdf", 1.0, chunks=[])
    assert answer_status(question, [Candidate(sentence, None, page)]) == "answer"  # type: ignore[arg-type]
    untitled = PageEvidence("d", 1, "Quarterly report", "report.pdf", "pdf", 1.0, chunks=[])
    assert answer_status(question, [Candidate(sentence, None, untitled)]) == "passages"  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def answerer(text_encoder: TextEncoder) -> ExtractiveAnswerer:
    return ExtractiveAnswerer(RelevanceGate(text_encoder, SparseEncoder()))


def ask(answerer: ExtractiveAnswerer, question: str, *texts: str):  # noqa: ANN201 - an Answer
    return answerer.answer(question, evidence(answerer.gate.text.embed([question])[0], *texts))


def test_the_extractive_answerer_reports_its_status(answerer: ExtractiveAnswerer) -> None:
    answer = ask(
        answerer, "What was Nouvelle-Aquitaine's connected solar capacity at 31 December 2020?", SERANON
    )
    assert answer.status == "answer" and not answer.refused and "2 753 MW" in answer.answer
    answer = ask(answerer, "How many persons were chronically infected with hepatitis C in 2019?", WHO)
    assert answer.status == "answer" and "58 million" in answer.answer
    # the passages state no count: nothing to read a number from
    answer = ask(answerer, "How many laboratories in Myanmar reviewed the hepatitis C guidelines?", WHO)
    assert answer.refused and answer.status == "refused"
    answer = ask(answerer, "What is the capital of Australia?", WHO, SERANON)
    assert answer.refused and answer.status == "refused"


def test_a_value_in_a_passage_that_names_another_case_is_no_answer() -> None:
    # the count is the E. coli threshold, not Porto da Barra's: the passage never names the beach
    result = evidence(
        None,
        "Boletim de balneabilidade de Salvador. Porto da Barra: própria. Ondina: imprópria.",
        "Escherichia coli: no máximo 200 por 100 mL em 80% das amostras das cinco semanas anteriores.",
    )
    threshold = result.pages[1]
    cand = Candidate(threshold.chunks[0].text, threshold.chunks[0], threshold)
    asked = AnswerTest("Quantas Escherichia coli por 100 mL foram medidas no Porto da Barra?")
    assert asked.states_value(cand.sentence) and not names_held(asked, cand, {})
    # asked of the threshold itself, or with the beach among the names describing the document
    assert names_held(AnswerTest("Quantas Escherichia coli por 100 mL no máximo?"), cand, {})
    assert names_held(asked, cand, {("doc1", 1): {"porto", "barra"}})


@pytest.mark.parametrize(
    ("question", "identifier"),
    [
        ("Qual o número da Resolução CONAMA citada no boletim?", True),
        ("What is the IBM Redpaper form number of the RCAC paper?", True),
        ("Qual é o ISBN da versão impressa?", True),
        ("Qual o número de funcionários da Acme?", False),
        ("What was the total number of NICS checks in Texas?", False),
    ],
)
def test_an_identifier_asked_by_its_kind_is_not_a_count(question: str, identifier: bool) -> None:
    assert asks_identifier(question) is identifier


def test_a_question_for_the_largest_is_answered_only_by_a_sentence_that_ranks() -> None:
    """ "Which department has the most installations?": a table line naming one department
    and its count is passages; a sentence ranking it ("the most", "le plus", "peaked") is
    the answer. "Recife Mais Verde" is a name, not a superlative."""
    question = "Which department of the region has the most solar installations in 2021?"
    line = "Var 12 520 367 Tableau 4 : installations by department of the region, 2021"
    assert answer_status(question, cands(line)) == "passages"
    ranked = "In 2021 the department with the most solar installations of the region was Bouches-du-Rhône."
    assert answer_status(question, cands(ranked)) == "answer"
    named = "Quantas mudas o programa Recife Mais Verde plantou em 2024?"
    assert (
        answer_status(named, cands("O programa Recife Mais Verde plantou 18.450 mudas em 2024.")) == "answer"
    )


def test_a_value_of_another_attribute_of_the_subject_is_no_answer(answerer: ExtractiveAnswerer) -> None:
    """Asked at what temperature the tests ran, the page gives their polarisation data: its
    numbers are of another attribute, and nothing on the page names a temperature."""
    question = "At what temperature were the egg-shell polarization tests on stainless steel carried out?"
    data = (
        "Table 1 Potentiodynamic polarization data for stainless steel with egg shell in 0.5 M H2SO4. "
        "The corrosion rate fell to 0.43 mm/year at 8 g of egg shell."
    )
    answer = ask(answerer, question, data)
    assert answer.refused and answer.status == "refused"
    stated = data + " The polarization tests on stainless steel with egg shell were carried out at 30 °C."
    answer = ask(answerer, question, stated)
    assert not answer.refused and "30 °C" in answer.answer


def test_the_number_of_a_table_figure_or_map_is_no_stated_value() -> None:
    assert not states_value("Carte 1 : Puissance photovoltaïque installée en Europe", "number", set())
    assert not states_value("See Figure 2.1 and Tableau 3 (p. 45)", "number", set())
    assert states_value("Tableau 3 : l'Union européenne a raccordé 7 606,5 MW", "number", set())


def test_a_quantity_on_no_evidence_page_is_not_answered_with_another(answerer: ExtractiveAnswerer) -> None:
    """ "puissance crête" of the future plant: the study states the region's installed power,
    never the plant's peak power, so its MW are no answer."""
    question = "Quelle sera la puissance crête de la future centrale photovoltaïque de Séranon ?"
    study = (
        "Le projet de centrale photovoltaïque de Séranon s'inscrit dans l'objectif régional. "
        "La puissance photovoltaïque installée en région PACA atteint 1 436 MW fin 2020."
    )
    answer = ask(answerer, question, study)
    assert answer.refused and answer.status == "refused"
    stated = study + " La puissance crête de la future centrale de Séranon sera de 9,5 MWc."
    answer = ask(answerer, question, stated)
    assert not answer.refused and "9,5 MWc" in answer.answer


@pytest.mark.parametrize(
    ("question", "counts"),
    [
        ("How many states have a grand total above 40,000,000?", True),
        ("Quantos estados têm gasto diferente de zero?", True),
        ("How many states are in the table?", False),  # no condition: a row may state the count
        ("Which states have a total above 40,000,000?", False),  # lists, does not count
    ],
)
def test_a_count_of_the_rows_meeting_a_condition(question: str, counts: bool) -> None:
    """Such a question is answered by the table answerer's count; a row the gate passes on
    states one value, not the count (the extractive answer is then "passages")."""
    assert counts_rows(question) is counts


def test_a_ranking_word_joined_by_a_hyphen_or_a_digit_still_ranks() -> None:
    """ "highest-paid", "most-cited", "2nd-largest": the superlative is read inside its
    compound (the identifier pattern of AnswerTest must not change how sentences are read)."""
    assert ranks("Lisbon had the highest-recorded temperature in July.")
    assert ranks("The 2nd-largest region was Oeste.")
    assert not ranks("Lisbon recorded 33 degrees in July.")
    assert AnswerTest("What type is CLIENT_IPADDR?").identifiers[0].text == "client ipaddr"
