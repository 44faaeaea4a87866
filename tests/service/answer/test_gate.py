"""The relevance gate: key terms compared as values across languages and formats, the
language of a question, and refusals on evidence that only shares words with the question."""

from __future__ import annotations

from typing import Any

import pytest

from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder
from service.answer.content_words import question_content_words
from service.answer.gate import (
    Candidate,
    GateParams,
    Haystack,
    KeyTerm,
    RelevanceGate,
    about_subject,
    asked_kind,
    decide,
    evidence_pages,
    key_share,
    key_terms,
    missing_key_terms,
    name_skeleton,
    question_key_terms,
    question_language,
    sentences,
    word_share,
)
from service.query.types import ChunkEvidence, PageEvidence, SearchResult

# Page texts as the corpus writes them (fr_pv_seranon p9, br_imea p1, the WHO guidelines).
SERANON = (
    "La région Nouvelle-Aquitaine reste la région dotée du plus grand parc installé, "
    "avec 2 753 MW au 31 décembre 2020.\nCarte 2 : Puissance solaire raccordée par région au 30 juin 2021"
)
IMEA = (
    "MILHO SAFRA 16/17: ACOMPANHAMENTO DE COLHEITA POR REGIÃO\nMILHO SAFRA 16/17 Mato Grosso Área 16/17 (ha) "
    "4.738.950\n18-ago-17 100,00% 99,63% 98,34% 99,62%"
)
WHO = (
    "The guidelines were reviewed by experts from Australia along with national laboratories in Myanmar.\n"
    "In 2019, WHO estimated that 58 million persons were chronically infected with hepatitis C virus."
)


@pytest.mark.parametrize(
    ("question", "evidence"),
    [
        ("What was Nouvelle-Aquitaine's connected solar capacity at 31 December 2020?", SERANON),
        ("Qual era a potência instalada na Nouvelle Aquitaine em 31 de dezembro de 2020?", SERANON),
        ("How much was installed in Nouvelle-Aquitaine in December 2020?", SERANON),
        ("Was the capacity 2753 MW in Nouvelle-Aquitaine?", SERANON),
        ("Quanto da colheita em Mato Grosso estava concluída em 18 de agosto de 2017?", IMEA),
        ("How much of the Mato Grosso harvest was done on August 18, 2017?", IMEA),
        ("Quanto estava colhido em Mato Grosso em 18/08/2017?", IMEA),
        ("Qual a área de milho em Mato Grosso na safra 16/17, 4738950 ha?", IMEA),
    ],
)
def test_key_terms_match_across_languages_and_formats(question: str, evidence: str) -> None:
    assert missing_key_terms(question, [evidence]) == []


@pytest.mark.parametrize(
    ("question", "evidence", "missing"),
    [
        ("What was the capacity at 31 December 2021?", SERANON, ["31 december 2021"]),
        ("Quanto estava colhido em Mato Grosso em 19 de agosto de 2017?", IMEA, ["19 de agosto de 2017"]),
        ("What was the capacity in Bretagne?", SERANON, ["bretagne"]),
        ("Was it 2754 MW?", SERANON, ["2754"]),
    ],
)
def test_a_different_value_or_name_is_missing(question: str, evidence: str, missing: list[str]) -> None:
    assert missing_key_terms(question, [evidence]) == missing


def test_a_date_is_one_key_term_and_codes_stay_whole() -> None:
    assert key_terms("What was the capacity at 31 December 2020 in Nouvelle-Aquitaine?") == [
        "31 december 2020",
        "nouvelle aquitaine",
    ]
    assert key_terms("Qual a área de milho na safra 16/17 em 2001-2011?") == ["16/17", "2001 2011"]
    assert key_terms("What did SKU NW-4471 sell in Q3 2024?") == ["sku", "nw 4471", "q3", "2024"]


def test_a_word_opening_a_second_sentence_is_no_name() -> None:
    """ "... in 2015? Give both totals.": "Give" is capitalised for its sentence; "Smith"
    after "Dr." and "Army" after "U.S." are names."""
    assert key_terms("Did Indiana or Illinois have more checks in 2015? Give both totals.") == [
        "indiana",
        "illinois",
        "2015",
    ]
    assert key_terms("What did Dr. Smith tell the U.S. Army in 2019. Then Recife?") == [
        "smith",
        "u.s",
        "army",
        "2019",
        "recife",
    ]


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Qual bairro teve mais pontos de alagamento?", "pt"),
        ("Which district had the most flooding points?", "en"),
        ("Quanto da colheita de milho de Mato Grosso estava concluída em 18 de agosto de 2017?", "pt"),
        ("What was Nouvelle-Aquitaine's connected solar capacity at 31 December 2020?", "en"),
        ("Quelle puissance solaire était raccordée en Bretagne au 31 décembre 2022 ?", "fr"),
        ("¿Cuál fue la población de Madrid en 2020?", "es"),
        ("Qual é a capital da Austrália?", "pt"),
        ("What is the capital of Australia?", "en"),
    ],
)
def test_question_language(question: str, language: str) -> None:
    assert question_language(question) == language


def evidence(question_vector: object, *texts: str) -> SearchResult:
    pages = [
        PageEvidence(
            f"doc{i}",
            1,
            f"Document {i}",
            f"doc{i}.pdf",
            "pdf",
            1.0 / (i + 1),
            chunks=[ChunkEvidence(f"doc{i}", 1, 0, text, [0, 0, 100, 100], [600, 800], 1, 1.0)],
        )
        for i, text in enumerate(texts)
    ]
    return SearchResult("q", pages, question_vector, {})  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def gate(text_encoder: TextEncoder) -> RelevanceGate:
    return RelevanceGate(text_encoder, SparseEncoder())


def grade(gate: RelevanceGate, question: str, *texts: str):  # noqa: ANN201 - a Grade
    return gate.grade(question, evidence(gate.text.embed([question])[0], *texts))


def test_a_question_sharing_only_a_name_with_the_evidence_is_refused(gate: RelevanceGate) -> None:
    result = grade(gate, "What is the capital of Australia?", WHO, SERANON)
    assert not result.passed
    assert result.related  # the LLM path would still let the model read it (and decline)


def test_the_issue_questions_pass_on_their_page(gate: RelevanceGate) -> None:
    result = grade(
        gate, "What was Nouvelle-Aquitaine's connected solar capacity at 31 December 2020?", SERANON
    )
    assert result.passed and result.missing == []
    result = grade(
        gate, "Quanto da colheita de milho de Mato Grosso estava concluída em 18 de agosto de 2017?", IMEA
    )
    assert result.passed and result.missing == []


def test_a_name_on_no_page_is_clearly_absent(gate: RelevanceGate) -> None:
    result = grade(gate, "Qual é a receita da Petrobras em 2023?", WHO, SERANON)
    assert not result.passed and not result.related and "petrobras" in result.missing


def test_key_rule_names_tolerates_a_value_written_unreadably() -> None:
    question = "How much was installed in Nouvelle-Aquitaine at 31 December 2020?"
    chart_page = "Nouvelle-Aquitaine installed capacity (chart, axis in MW)"
    assert missing_key_terms(question, [chart_page]) == ["31 december 2020"]
    assert GateParams(key_rule="names").key_rule == "names"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a paragraph PyMuPDF cut into blocks: the break before lower case or a number goes on
        (
            "En 2016, la région était la troisième région solaire en France avec\n945 MW raccordés.",
            ["En 2016, la région était la troisième région solaire en France avec 945 MW raccordés."],
        ),
        ("The estimate was\nrevised in 2019. It held.", ["The estimate was revised in 2019.", "It held."]),
        # a heading before a paragraph, and a sentence's end, still break
        (
            "Commune de Séranon\nLe parc solaire atteint 10 387 MW.",
            ["Commune de Séranon", "Le parc solaire atteint 10 387 MW."],
        ),
        ("It ended.\n945 MW came later.", ["It ended.", "945 MW came later."]),
        # a running header, then a source line in brackets: two lines
        (
            "Commune de Séranon (06)\n(Source : SRADDET PACA)",
            ["Commune de Séranon (06)", "(Source : SRADDET PACA)"],
        ),
    ],
)
def test_sentences_join_lines_a_paragraph_was_cut_into(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_a_table_chunks_rows_stay_one_line_each() -> None:
    rows = "Região: Norte · Área (ha): 300.110\nRegião: Oeste · Área (ha): 533.113"
    assert sentences(rows, table=True) == rows.split("\n")
    assert sentences("Região: Norte\nárea 300.110", table=True) == ["Região: Norte", "área 300.110"]


def test_a_name_on_another_page_does_not_make_a_sentence_an_answer(gate: RelevanceGate) -> None:
    question = "What was Tamil Nadu's total public health outlay in the 2012-13 budget?"
    outlay = "The total public health outlay in the 2012-13 budget of Andhra Pradesh was 73,980,669."
    rainfall = "TAMILNADU · Day 10-07-2016 actual 36.9 mm, normal 8.9 mm."
    result = grade(gate, question, outlay, rainfall)
    assert not result.passed and result.missing == []  # every name is somewhere, on no answering page
    assert all(c.page.doc_id == "doc1" for c in result.candidates)
    listed = outlay + " The total public health outlay in the 2012-13 budget of Tamil Nadu was 31,457,126."
    assert grade(gate, question, listed, rainfall).passed


def test_a_question_in_parts_may_take_each_part_from_its_own_document(gate: RelevanceGate) -> None:
    question = "Which organisations are named in both the Salvador bulletin and the Recife report?"
    salvador = "The Salvador bulletin was issued by INEMA with the CONAMA criteria."
    recife = "The Recife report was written by EMLURB and APAC."
    result = grade(gate, question, salvador, recife)
    assert {c.page.doc_id for c in result.candidates} == {"doc0", "doc1"}
    # one question whose names sit in two documents is not such a question
    single = "What was the Recife population according to the Salvador bulletin?"
    assert not grade(gate, single, salvador, recife).candidates


def test_names_may_sit_on_different_pages_of_one_document(gate: RelevanceGate) -> None:
    question = "Qual o número da Resolução CONAMA citada no boletim de Salvador?"
    cover = ChunkEvidence(
        "bol", 1, 0, "Boletim de balneabilidade de Salvador, 26/2010.", [0, 0, 1, 1], [600, 800], 1, 1.0
    )
    rule = ChunkEvidence(
        "bol", 3, 0, "A Resolução CONAMA nº 274 define os critérios.", [0, 0, 1, 1], [600, 800], 1, 1.0
    )
    pages = [
        PageEvidence("bol", n, "Boletim", "bol.pdf", "pdf", 1.0, chunks=[c])
        for n, c in ((3, rule), (1, cover))
    ]
    result = gate.grade(question, SearchResult("q", pages, gate.text.embed([question])[0], {}))
    assert any(c.page.page_no == 3 for c in result.candidates)


NORTHWIND = (
    "Northwind Analytics delivered total revenue of $48.6 million in Q3 2024, up 14.1% from "
    "$42.6 million in Q3 2023. Operating margin reached 18.2% in the quarter."
)
RECIFE = (
    "Em 2024, o Recife registrou precipitação acumulada de 2.345 mm, cerca de 11,1% acima da média "
    "climatológica de 2.110 mm.\nO volume removido dos canais foi 17,5% superior ao de 2023."
)


def test_a_subject_on_no_evidence_page_is_refused(gate: RelevanceGate) -> None:
    """A common noun ("net income", "orçamento") is what the question asks about: the
    revenue sentence of the right report does not answer it."""
    result = grade(gate, "What was Northwind Analytics' net income in Q3 2024?", NORTHWIND)
    assert not result.passed and "income" in result.absent_words
    result = grade(gate, "What was Northwind Analytics' total revenue in Q3 2024?", NORTHWIND)
    assert result.passed and result.absent_words == []
    # the glossary carries the subject across languages
    result = grade(
        gate, "Qual foi a receita total da Northwind Analytics no terceiro trimestre de 2024?", NORTHWIND
    )
    assert result.absent_words == []


def test_the_subject_counts_on_the_documents_holding_the_questions_names(gate: RelevanceGate) -> None:
    """Northwind's report writes "operating margin"; Acme's, named by the question, does not:
    Acme's margin is not on the pages because another company's is."""
    acme = "Acme Annual Report, fiscal year 2023. Product B monthly revenue: May 2,100; July 2,395."
    question = "What operating margin did Acme report for fiscal year 2023?"
    result = grade(gate, question, acme, NORTHWIND)
    assert not result.passed and {"operating", "margin"} <= set(result.absent_words)
    northwind = "What operating margin did Northwind Analytics reach in Q3 2024?"
    assert grade(gate, northwind, acme, NORTHWIND).passed


def test_a_year_asked_and_only_another_year_about_the_subject_is_refused(gate: RelevanceGate) -> None:
    result = grade(gate, "Qual foi a precipitação acumulada no Recife em 2023?", RECIFE)
    assert result.other_year and not result.passed
    result = grade(gate, "Qual foi a precipitação acumulada no Recife em 2024?", RECIFE)
    assert not result.other_year and result.passed


def test_a_row_stating_every_key_term_and_the_value_passes_below_the_relevance_threshold() -> None:
    """A table row ("Código: EST-08 · ... Oxigênio dissolvido (mg/L): 3,8") embeds far from
    any question; holding every key term, some of the subject's words and a value of the
    asked kind, it answers from GateParams.min_answer_cosine."""
    row = "Código: EST-08 · Bairro / ponto: Santo Amaro · Oxigênio dissolvido (mg/L): 3,8 · pH: 7,0"
    question = "Qual foi o oxigênio dissolvido na estação EST-08?"
    words = question_content_words(question, key_terms(question))
    params = GateParams()

    def candidate(sentence: str, cosine: float) -> Candidate:
        keys = key_share(question_key_terms(question), sentence)
        return Candidate(sentence, None, None, cosine, 0.0, keys, words=word_share(words, sentence))  # type: ignore[arg-type]

    assert decide([candidate(row, 0.3)], [], 1.0, params).passed
    assert not decide([candidate(row, 0.1)], [], 1.0, params).passed  # nothing like the question
    other = row.replace("EST-08", "EST-07")  # a key term absent from the sentence: relevance decides
    assert not decide([candidate(other, 0.3)], [], 1.0, params).passed
    # the subject on too few pages, or another year only: refused however close the sentence
    assert not decide([candidate(row, 0.9)], [], 1.0, params, word_coverage=0.5).passed
    assert not decide([candidate(row, 0.9)], [], 1.0, params, other_year=True).passed


def test_a_value_question_scores_only_sentences_about_its_subject() -> None:
    revenue = "Northwind Analytics delivered total revenue of $48.6 million in Q3 2024."
    staff = "Northwind Analytics had 1,240 employees at the end of Q3 2024."
    question = "How many employees did Northwind Analytics have at the end of Q3 2024?"
    words = question_content_words(question, key_terms(question))

    def candidates(q: str) -> list[Candidate]:
        return [Candidate(s, None, None, words=word_share(words, s)) for s in (revenue, staff)]  # type: ignore[arg-type]

    assert [c.sentence for c in about_subject(question, candidates(question))] == [staff]
    # an identifier asked by its kind, or a "which" question: every sentence stays
    assert len(about_subject("Qual o número da Resolução CONAMA citada?", candidates(question))) == 2
    assert len(about_subject("Which product grew most in Q3 2024?", candidates(question))) == 2


CHART_OCR = (
    "Precipitação mensal em Recife 2024 (mm)\nJan Fev Mar Abr Mai Jun Jul Ago Set Out Nov Dez\n205 402 187"
)


@pytest.mark.parametrize(
    "question",
    [
        "Segundo o gráfico, qual foi a precipitação em junho de 2024 no Recife?",
        "According to the monthly rainfall chart, how much rain fell in Recife in August 2024?",
        "Quanto choveu no Recife em março?",
    ],
)
def test_a_month_is_found_on_an_axis_of_abbreviated_months(question: str) -> None:
    assert missing_key_terms(question, [CHART_OCR]) == []


def test_an_abbreviation_outside_a_run_of_months_is_a_word() -> None:
    assert missing_key_terms("How deep was the sea in March 2020?", ["In 2020 the mar was 40 m deep."]) == [
        "march 2020"
    ]
    assert missing_key_terms("What happened in September?", ["You may set it out."]) == ["september"]
    assert missing_key_terms("Quanto choveu em junho de 2023?", [CHART_OCR]) == ["junho de 2023"]


def page(doc_id: str, text: str, title: str, filename: str) -> PageEvidence:
    chunk = ChunkEvidence(doc_id, 1, 0, text, [0, 0, 100, 100], [600, 800], 1, 1.0)
    return PageEvidence(doc_id, 1, title, filename, "pdf", 1.0, chunks=[chunk])


def test_a_key_term_may_name_the_document_by_its_title_or_file_name(gate: RelevanceGate) -> None:
    question = "In the WHO 2022 HCV guidelines, what dose is given to children weighing more than 30 kg?"
    dosing = (
        "Dosing by weight band: children weighing more than 30 kg take sofosbuvir/velpatasvir 400/100 mg."
    )
    named = page("who", dosing, "Updated recommendations", "who_hcv_children_guidelines_2022.pdf")
    result = gate.grade(question, SearchResult("q", [named], gate.text.embed([question])[0], {}))
    assert result.missing == []
    anonymous = page("x", dosing, "Updated recommendations", "guidelines.pdf")
    result = gate.grade(question, SearchResult("q", [anonymous], gate.text.embed([question])[0], {}))
    assert sorted(result.missing) == ["2022", "hcv", "who"]


@pytest.mark.parametrize(
    ("question", "evidence"),
    [
        ("Qual a taxa de corrosão sem inibidor na Tabela 1?", "Table 1 Corrosion rate (mm/year): 2.8163"),
        ("No relatório, em que mês o Produto D teve a menor receita?", "Product D Monthly Revenue"),
        ("Which Indian state had a negative growth rate?", "State-wise growth rate of population, India"),
    ],
)
def test_a_name_is_found_by_its_translation_or_its_place(question: str, evidence: str) -> None:
    assert missing_key_terms(question, [evidence]) == []


def test_a_name_without_its_translation_or_place_is_missing() -> None:
    assert missing_key_terms("Which Indian state had a negative growth rate?", ["Growth rate of Nepal"]) == [
        "indian"
    ]


def stating(cosine: float, keys: float, words: float) -> Candidate:
    return Candidate(
        "Praia de Boa Viagem: 8°07'11\"S 34°53'49\"W", None, None, cosine, 0.0, keys, words=words
    )  # type: ignore[arg-type]


def test_a_question_without_key_terms_passes_on_a_stating_sentence() -> None:
    # "Quais são as coordenadas da praia nesta área?": the geo filter names the place
    assert decide([stating(0.5, 0.0, 1.0)], [], 1.0, GateParams(), keyless=True).passed
    assert not decide([stating(0.5, 0.0, 1.0)], [], 1.0, GateParams()).passed  # a key term it lacks
    assert not decide([stating(0.5, 0.0, 0.0)], [], 1.0, GateParams(), keyless=True).passed  # off subject


def test_a_sentence_holding_every_content_word_states_from_a_low_cosine() -> None:
    # a Portuguese question over an English sentence: "caixa e equivalentes" / "Cash and equivalents"
    verdict = decide([stating(0.14, 1.0, 1.0)], [], 1.0, GateParams())
    assert verdict.passed and verdict.stated
    assert not decide([stating(0.14, 1.0, 0.5)], [], 1.0, GateParams()).passed


def test_the_line_naming_the_asked_identifier_is_quoted(gate: RelevanceGate) -> None:
    question = "Qual é o ISBN da versão impressa das diretrizes da OMS de 2022?"
    text = (
        "WHO has developed standards for delivering quality services for adolescents, and these "
        "guidelines update the recommendations on the treatment of adolescents and children.\n"
        "ISBN 978-92-4-005273-4 (electronic version) ISBN 978-92-4-005274-1 (print version)"
    )
    who = page("who", text, "Updated recommendations", "who_hcv_children_guidelines_2022.pdf")
    result = gate.grade(question, SearchResult("q", [who], gate.text.embed([question])[0], {}))
    assert result.passed
    assert [c.sentence for c in result.stated] == [text.split("\n")[1]]


def test_an_organisation_is_found_by_its_acronym_in_another_language() -> None:
    question = "According to the IEA PVPS experts, what share of electricity does photovoltaics produce?"
    french = "Les experts de l’AIE PVPS estiment la contribution du photovoltaïque à 2,6 % de la production."
    assert missing_key_terms(question, [french]) == []
    assert missing_key_terms("Qual foi o PIB em 2020?", ["The GDP in 2020 grew 3%"]) == []


def test_a_country_is_found_by_its_name_in_another_language() -> None:
    """A Portuguese question's "Índia" or "Estados Unidos" over a French page's "Inde" and
    "États-Unis": the same countries (CLDR names), a multi-word name one key term; a country
    the page does not name is still missing."""
    french = "La puissance installée en Inde et aux États-Unis a augmenté en 2020."
    assert key_terms("Quanto os Estados Unidos instalaram em 2020?") == ["estados unidos", "2020"]
    assert missing_key_terms("Quanto a Índia e os Estados Unidos instalaram em 2020?", [french]) == []
    assert missing_key_terms("Quanto a Alemanha instalou em 2020?", [french]) == ["alemanha"]


def test_the_names_describing_the_document_need_not_be_in_its_answering_sentence(
    gate: RelevanceGate,
) -> None:
    """ "o Redpaper da IBM sobre RCAC" names the document (another of its evidence pages
    holds "RCAC"); the sentence holding the other key terms and a figure passes, in another
    language than the question's, and is an answer, not passages. A number stays the
    sentence's own: another page's year does not make it held."""
    from service.answer.gate import document_described
    from service.answer.status import answer_status

    question = (
        "Segundo o Identity Theft Resource Center citado no Redpaper da IBM sobre RCAC, quantas "
        "violações de dados ocorreram desde 2005 e quantos registros foram expostos?"
    )
    stated = (
        "The Identity Theft Resource Center reports that almost 5000 data breaches have occurred "
        "since 2005, exposing over 600 million records of data."
    )
    about = (
        "This IBM Redpaper publication describes Row and Column Access Control (RCAC) in 2014. It "
        "explains how the database engine filters the rows and masks the columns a user may see, "
        "and how security administrators define and maintain these rules for their applications."
    )
    pages = [
        page("ibm", stated, "Chapter 1. Securing and protecting IBM DB2 data", "ibm_redp5110.pdf"),
        page("ibm", about, "Preface", "ibm_redp5110.pdf"),
    ]
    pages[1].page_no = 2
    result = gate.grade(question, SearchResult("q", pages, gate.text.embed([question])[0], {}))
    assert result.passed and result.missing == []
    best = next(c for c in result.candidates if c.sentence.startswith("The Identity Theft"))
    assert best.context_keys == 1.0 and best.keys < 1.0
    described = document_described(question_key_terms(question), result.candidates)
    assert answer_status(question, [best], described) == "answer"
    assert answer_status(question, [best]) == "passages"  # without: "RCAC" is not in it
    assert described[("ibm", 1)] == {"rcac", "redpaper", "ibm"}
    assert "rcac" not in described[("ibm", 2)]  # page 2 holds it: there it is the page's own


def _one_per_page(doc_id: str, texts: dict[int, str]) -> list[Any]:
    """A candidate sentence per page of one document: {page_no: its text}."""
    from service.answer.gate import Candidate

    candidates = []
    for no, text in texts.items():
        p = page(doc_id, text, "A document", f"{doc_id}.pdf")
        p.page_no = no
        candidates.append(Candidate(text, p.chunks[0], p))
    return candidates


def test_a_name_every_evidence_page_of_the_document_holds_describes_it_on_each() -> None:
    """ "France" on each evidence page of the French study describes it for every page, its
    own pages included; a name one page holds stays that page's subject there."""
    from service.answer.gate import document_described

    question = "Quelle puissance a été raccordée en France au dernier trimestre de 2020 à Séranon ?"
    texts = {
        7: "La France a fixé ses objectifs solaires.",
        8: "La puissance raccordée en France et en Europe en 2018.",
        9: "Le parc solaire de France à Séranon : 183 MW au dernier trimestre de 2020.",
    }
    candidates = _one_per_page("fr", texts)
    described = document_described(question_key_terms(question), candidates)
    assert all("france" in described[("fr", no)] for no in texts)
    assert "seranon" in described[("fr", 7)] and "seranon" not in described[("fr", 9)]


@pytest.mark.parametrize(
    ("question", "phrase"),
    [
        (
            "Dans le Redpaper IBM sur RCAC, de quelles autorisations Theresa avait-elle besoin ?",
            "Redpaper IBM sur RCAC",
        ),
        (
            "Em que instituição Bedoya, um dos autores do Redpaper da IBM sobre RCAC, fez o mestrado?",
            "Redpaper da IBM sobre RCAC",
        ),
        (
            "According to the IBM DB2 for i RCAC Redpaper, what was the average cost?",
            "IBM DB2 for i RCAC Redpaper",
        ),
        ("In the WHO 2022 HCV guidelines, what dose is given to children?", "WHO 2022 HCV guidelines"),
        ("According to the Séranon study's text, how much was connected in 2020?", "Séranon study's text"),
        ("How many flooding points were registered in Recife in 2024?", ""),
        ("Selon l'étude de l'OMS, combien de personnes ?", "l'étude de l'OMS"),  # elided article
    ],
)
def test_the_words_naming_a_document(question: str, phrase: str) -> None:
    """A document's noun with its modifiers: back to an article or a preposition, on to
    punctuation or a question word ("WHO" the organisation is no "who")."""
    from service.answer.gate import document_phrase

    assert document_phrase(question) == phrase


def test_only_the_names_naming_the_document_describe_it_from_other_pages() -> None:
    """ "Theresa", held by the page of her authorities, does not describe the Redpaper for its
    preface; "RCAC", in the words naming the document and on another page, does."""
    from service.answer.gate import document_described, document_phrase

    question = "Dans le Redpaper IBM sur RCAC, de quelles autorisations Theresa avait-elle besoin ?"
    texts = {
        4: "This IBM Redpaper publication provides information.",
        9: "Theresa had to have *OBJMGT authority under RCAC.",
    }
    candidates = _one_per_page("ibm", texts)
    terms = question_key_terms(question)
    described = document_described(terms, candidates, phrase=document_phrase(question))
    assert described[("ibm", 4)] == {"rcac"}
    assert "theresa" in document_described(terms, candidates)[("ibm", 4)]  # without the phrase


def test_a_number_of_the_question_is_not_found_inside_a_longer_number() -> None:
    """ "8 layers" is not on a row that reads "0.853" or "188": a number key term matches
    written whole (or by its value), never as the digits of another number."""
    (eight,) = [t for t in question_key_terms("What time with 8 layers?") if t.values]
    assert not Haystack("mAP (0.75): 0.853 · time: 1.97").contains(eight)
    assert not Haystack("188 units, 8.5 kg").contains(eight)
    assert Haystack("heads=8, layers 6").contains(eight)
    assert Haystack("groups of (8)").contains(eight)
    (period,) = question_key_terms("Qual a taxa em 2001-2011?")
    assert Haystack("1991-2001 · 2001-2011").contains(period)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("Quioto", "The Kyoto Protocol, adopted in 1997"),  # qu = k, y = i
        ("Protocolo", "The Kyoto Protocol, adopted in 1997"),  # a final vowel
        ("Filadélfia", "the Philadelphia office"),
        ("VHC", "TABLE 8.1 HCV core antigen assays"),  # an acronym's letters in another order
        ("VIH", "people living with HIV"),
        ("French", "la région Occitanie, deuxième parc de France"),  # a demonym: its country
        ("Brazilian", "os estados do Brasil"),
        ("French", "2.3 ETAT DES LIEUX FRANÇAIS"),  # a demonym: its people's adjective elsewhere
        ("France", "le parc solaire français"),  # a country: its people's adjective
        ("Brasil", "a produção brasileira"),
    ],
)
def test_a_name_is_found_in_its_spelling_in_another_language(name: str, text: str) -> None:
    assert Haystack(text).contains(KeyTerm(name.casefold(), frozenset(), True))


def test_the_state_of_indiana_is_not_india() -> None:
    """ "indiana" is no demonym of India here: the NICS table's state is no Indian page's."""
    assert not Haystack("India's population").contains(KeyTerm("indiana", frozenset(), True))


def test_a_name_is_compared_whole_not_by_prefix() -> None:
    assert not Haystack("manipulation of the results").contains(KeyTerm("manipur", frozenset(), True))
    # an acronym is compared with acronyms, letter for letter
    assert not Haystack("the hvac of the building").contains(KeyTerm("vhc", frozenset(), True))
    assert not Haystack("HCVS cohort").contains(KeyTerm("vhc", frozenset(), True))
    assert name_skeleton("Manipur") != name_skeleton("manipulation")


def test_the_bound_of_a_comparison_is_no_key_term() -> None:
    """ "above 40,000,000" compares the rows with a number no page need hold; a value asked
    "exactly" is still looked up."""
    terms = [t.text for t in question_key_terms("How many states have a total above 40,000,000 in 2012-13?")]
    assert "40,000,000" not in terms and "2012 13" in terms
    assert [t.text for t in question_key_terms("Quantos estados tiveram mais de 20.000 verificações?")] == []
    assert "24,008" in [t.text for t in question_key_terms("Which state had exactly 24,008 checks?")]


def test_a_question_in_another_language_is_also_compared_in_its_translation(
    text_encoder: TextEncoder,
) -> None:
    """With an English-only encoder a French question embeds far from the English sentence
    that answers it; its word-for-word translation (translate.py) much less so."""
    question = "Selon l'OMS, combien coûte un traitement de 12 semaines en Égypte ?"
    page = "The benchmark price is an even lower cost of US$ 48 in Egypt for a 12-week treatment course."
    plain = RelevanceGate(text_encoder, SparseEncoder())
    bilingual = RelevanceGate(text_encoder, SparseEncoder(), text_language="en")

    def cosine(gate: RelevanceGate, question: str) -> float:
        result = evidence(text_encoder.embed([question])[0], page)
        (cand,) = gate._score(question, RelevanceGate._candidates(result.pages), result)
        return cand.cosine

    assert cosine(bilingual, question) > cosine(plain, question) + 0.05
    english = "How much does a 12-week treatment cost in Egypt?"  # compared as it is
    assert cosine(bilingual, english) == cosine(plain, english)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Em que instituição Hernando Bedoya fez o mestrado?", ["instituicao"]),
        ("Near which landmark is the Ondina sampling point located?", ["landmark"]),
        ("Which state had the largest outlay?", ["state"]),
        ("Qual foi a receita da Northwind?", []),  # an attribute: the page must name it
        ("How many plots were surveyed?", []),
    ],
)
def test_a_which_question_names_the_kind_of_its_answer(question: str, kind: list[str]) -> None:
    assert asked_kind(question) == kind


def test_a_lower_page_holding_the_names_the_best_pages_lack_joins_the_evidence() -> None:
    """Three map cards outrank the report's page of reference points for "coordinates ...
    in Recife"; that page alone names Marco Zero, so it is read too. A page that adds none
    of the missing names does not join."""

    def page(no: int, text: str) -> PageEvidence:
        chunk = ChunkEvidence("d", no, 0, text, [0, 0, 1, 1], [1, 1], 1, 0.0)
        return PageEvidence("d", no, "Relatório", "r.pdf", "pdf", 0.0, chunks=[chunk])

    cards = [page(n, f"Map card of olinda_{n}.tif. Extent in degrees near Recife") for n in (1, 2, 3)]
    points = page(4, "Coordenadas no Recife: Marco Zero: lat -8.0631, lon -34.8711")
    other = page(5, "Recife em 2024")
    alone = page(6, "Marco Zero: lat -8.0631, lon -34.8711")  # the name, not the rest: another Marco Zero
    question = "What are the coordinates of Marco Zero in Recife?"
    assert evidence_pages(question, [*cards, other, points], 3) == [*cards, points]
    assert evidence_pages(question, [*cards, other, alone], 3) == cards
    assert evidence_pages("Which maps cover Recife?", [*cards, other, points], 3) == cards
    # a content word the best pages lack: "praia" under a geo filter that ranks map cards first
    beach = page(6, "Praia de Boa Viagem: 8°07'11\"S 34°53'49\"W")
    asked = "Quais são as coordenadas da praia nesta área?"
    assert evidence_pages(asked, [*cards, other, beach], 3) == [*cards, beach]


def test_a_term_every_top_page_of_a_document_holds_is_the_documents_for_its_lower_page() -> None:
    """ "Which built-in global variable of DB2 for i is of type INTEGER?": three pages of
    IBM's paper name DB2 in their footer and hold no INTEGER; its page 12 holds the table
    with INTEGER and not the footer. DB2 names the document, so page 12 joins; a page of
    another document holding INTEGER alone does not."""

    def page(doc: str, no: int, text: str) -> PageEvidence:
        chunk = ChunkEvidence(doc, no, 0, text, [0, 0, 1, 1], [1, 1], 1, 0.0)
        return PageEvidence(doc, no, "Paper", f"{doc}.pdf", "pdf", 0.0, chunks=[chunk])

    top = [page("ibm", n, f"Row and column access control in IBM DB2 for i, section {n}") for n in (3, 4, 18)]
    table = page("ibm", 12, "Built-in global variables. CLIENT_PORT · Type: INTEGER · Port of the client")
    elsewhere = page("other", 2, "Built-in global variables. COUNTER · Type: INTEGER · A counter")
    question = "Which built-in global variable of DB2 for i is of type INTEGER?"
    assert evidence_pages(question, [*top, elsewhere, table], 3) == [*top, table]


def test_a_capitalised_name_of_several_words_is_no_month() -> None:
    """ "Marco Zero" (a square of Recife) folds like "março"; beside another capitalised
    word it is a name, while "Março de 2024" stays a date."""
    terms = question_key_terms("Qual é a longitude do Marco Zero do Recife?")
    assert [(t.text, t.values) for t in terms][:2] == [("marco", frozenset()), ("zero", frozenset())]
    assert question_key_terms("Quanto choveu em Março de 2024?")[0].values == frozenset({"date:2024-03"})


def test_a_quantity_is_held_by_the_band_that_holds_it() -> None:
    """ "a child of 22 kg": a dosing table has no 22, its row "20–<30 kg" holds it; "30 kg"
    is the next band's, and 22 years is no weight."""
    (term,) = [t for t in question_key_terms("What dose for a child of 22 kg?") if t.values]
    assert Haystack("Weight 20–<30 kg: 200/80 mg once daily").contains(term)
    assert not Haystack("Weight 30–<45 kg: 250/100 mg once daily").contains(term)
    (years,) = [t for t in question_key_terms("What dose at 22 years?") if t.values]
    assert not Haystack("Weight 20–<30 kg: 200/80 mg once daily").contains(years)
