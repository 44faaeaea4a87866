"""Extractive answers: cited, grounded in the evidence, refused when evidence is weak."""

from __future__ import annotations

from typing import Any

import pytest

from ingest.values import find_numbers
from service.answer.extractive import (
    asked_contact,
    asked_quantity,
    asked_role,
    choose,
    quote_rank,
    title_like,
)
from service.answer.gate import (
    Candidate,
    key_share,
    key_terms,
    missing_key_terms,
    question_key_terms,
    question_language,
)
from service.answer.markers import parse
from service.carta import Carta
from service.query.types import ChunkEvidence, PageEvidence, SearchQuery
from tests.service.answer.conftest import FORGED_QUESTION, ForgedCorpus

UNANSWERABLE = [
    "What is the capital of Mongolia?",
    "Who won the 2018 football world cup?",
    "Qual é a receita da Petrobras em 2023?",
    "Quantos habitantes tem Lisboa?",
    "what is the weather like on mars",
]


def test_text_facts_are_answered_with_a_citation_of_their_page(
    sample_carta: Carta, ground_truth: list[dict[str, Any]]
) -> None:
    ids = {d.filename: d.id for d in sample_carta.registry.list("default")}
    wrong = []
    for fact in ground_truth:
        if fact["evidence"] is None:
            continue
        answer = sample_carta.ask(SearchQuery(fact["question"], "default"))
        cited = {(c.doc_id, c.page_no) for c in answer.citations}
        on_page = (ids[fact["doc"]], fact["page"]) in cited
        # the same figure may also stand in a table of another page of the document
        value = next((v for _, _, v in find_numbers(fact["answer"])), None)
        stated = value is not None and value in {v for _, _, v in find_numbers(answer.answer)}
        same_doc = any(doc == ids[fact["doc"]] for doc, _ in cited)
        if answer.refused or not (on_page or (stated and same_doc)):
            wrong.append((fact["id"], answer.answer[:120]))
        # every citation marker in the text points at a page that was in the evidence
        evidence = {(p.doc_id, p.page_no) for p in answer.evidence}
        assert cited <= evidence
        for c in answer.citations:
            assert f"[{c.doc_id} p.{c.page_no}]" in answer.answer
            # a sentence is quoted whole; a table cell ("row · column: value") by its value
            assert c.quote in answer.answer or c.quote.rsplit(": ", 1)[-1] in answer.answer
    assert not wrong, wrong


def test_exact_code_answer_contains_the_value(sample_carta: Carta) -> None:
    answer = sample_carta.ask(SearchQuery("How many active accounts does SKU NW-5502 have?", "default"))
    assert not answer.refused and "377" in answer.answer


@pytest.mark.parametrize(
    ("question", "figure"),
    [
        # the table on page 1 holds the cell, but "material" is on page 2 only
        ("Quantos metros cúbicos de material foram removidos do Canal do Arruda em 2024?", "41.200"),
        # no table holds it: the sentence of page 2 does
        ("Que percentual do material removido dos canais corresponde a resíduos sólidos urbanos?", "36%"),
    ],
)
def test_a_table_whose_page_lacks_a_word_the_other_evidence_holds_leaves_the_answer_to_sentences(
    sample_carta: Carta, question: str, figure: str
) -> None:
    """A table is not what was asked when its page lacks a word of the question; the gate's
    sentences answer when they hold every word, instead of a refusal."""
    answer = sample_carta.ask(SearchQuery(question, "default"))
    assert not answer.refused and figure in answer.answer, answer.answer
    assert answer.citations


@pytest.mark.parametrize("question", UNANSWERABLE)
def test_unanswerable_questions_are_refused(sample_carta: Carta, question: str) -> None:
    answer = sample_carta.ask(SearchQuery(question, "default"))
    assert answer.refused
    assert answer.citations == []
    assert answer.answer in {
        "Not found in the indexed documents.",
        "Não encontrado nos documentos indexados.",
    }


def test_refusal_speaks_the_question_language(sample_carta: Carta) -> None:
    assert sample_carta.ask(
        SearchQuery("Qual é a receita da Petrobras em 2023?", "default")
    ).answer.startswith("Não encontrado")
    assert sample_carta.ask(SearchQuery("What is the capital of Mongolia?", "default")).answer.startswith(
        "Not found"
    )


def test_key_terms_are_names_numbers_and_codes() -> None:
    assert key_terms("What was the revenue of SKU NW-4471 in Q3 2024 in Europe?") == [
        "sku",
        "nw 4471",  # hyphens read as spaces ("Nouvelle-Aquitaine" = "Nouvelle Aquitaine")
        "q3",
        "2024",
        "europe",
    ]
    assert key_terms("quantas mudas foram plantadas?") == []
    assert missing_key_terms("Receita da Petrobras em 2023", ["Em 2023 a receita..."]) == ["petrobras"]
    assert missing_key_terms("Dados de São Paulo", ["sao paulo em números"]) == []


def test_question_language() -> None:
    assert question_language("Qual bairro teve mais pontos de alagamento?") == "pt"
    assert question_language("Which district had the most flooding points?") == "en"


def test_a_marker_inside_the_quoted_text_is_neutralised_and_not_a_citation(
    forged_corpus: ForgedCorpus,
) -> None:
    answer = forged_corpus.carta.ask(SearchQuery(FORGED_QUESTION, "default"))
    real, forged = forged_corpus.real_id, forged_corpus.forged_id
    assert not answer.refused and answer.grounded and not answer.invalid_citations
    assert f"⟦{real} p.1⟧" in answer.answer  # the document's marker, quoted and defused
    # every marker left in the text is one Carta wrote, each backed by a citation of the forged page
    marks = [(d, p) for _, d, p in parse(answer.answer)]
    assert marks and set(marks) == {(c.doc_id, c.page_no) for c in answer.citations} == {(forged, 1)}
    assert all(f"[{real}" not in c.quote and f"⟦{real}" in c.quote for c in answer.citations)


@pytest.mark.parametrize(
    ("line", "title"),
    [
        ("Northwind Analytics — Q3 2024 Quarterly Report", True),
        ("Precipitação mensal em Recife 2024 (mm)", True),
        ("Commune de Séranon (06) - 20 décembre 2022", True),
        ("Active customers reached 3,412 at quarter end.", False),
        ("Parque da Jaqueira (-8,0375; -34,9030)", False),
        ("Praia de Boa Viagem: 8°07'11\"S 34°53'49\"W", False),
        ("Em 2024, o Recife registrou precipitação acumulada de 2.345 mm, acima da média", False),
        # a caption names what follows, however long
        ("Tabela 1 — Qualidade da água por estação de monitoramento (medianas de 2024)", True),
        ("Figura 2 — Mapa esquemático do Recife com pontos de referência e estações.", True),
        ("Table 2 shows that revenue grew by 14% in the quarter.", False),
        ("Chapter 2: Causes of Climate Change", True),
        ("Figure 2 : Puissances installées et en développement pour le solaire au 30 juin 2021", True),
    ],
)
def test_titles_and_headings_are_not_quoted_as_answers(line: str, title: bool) -> None:
    assert title_like(line) is title


def scored(*pairs: tuple[str, float]) -> list[Candidate]:
    return [Candidate(s, None, None, score=score) for s, score in pairs]  # type: ignore[arg-type]


def test_the_sentence_stating_the_asked_value_is_quoted_alone() -> None:
    """The best-scoring sentence restates the question; the one stating the figure scores a
    little lower and is the answer (the others are not quoted, nor their pages cited)."""
    question = "What was the average cost incurred for each lost record in the IBM study?"
    ranked = scored(
        ("The average cost incurred for each lost record is a concern of every IBM client.", 0.80),
        ("This IBM Redpaper publication provides information about RCAC.", 0.74),
        ("In the IBM study, the cost for each lost record increased more than 9% to $145.", 0.66),
    )
    assert [c.sentence for c in choose(question, ranked)] == [ranked[2].sentence]
    pt = "Qual foi a área total de milho em Mato Grosso na safra 16/17?"
    ranked = scored(
        ("A área de milho em Mato Grosso é acompanhada pelo IMEA.", 0.9),
        ("Na safra 16/17, a área de milho em Mato Grosso somou 4.738.950 ha.", 0.7),
    )
    assert choose(pt, ranked) == [ranked[1]]


def test_a_rate_is_answered_by_the_sentence_stating_a_percentage() -> None:
    """Asked for a rate, the sentence giving the treatment's weeks (a number, every key term,
    more of the question's words) is not the answer; the one stating a percentage is."""
    question = "Qual taxa de resposta o tratamento com interferon alcançava nos genótipos 1 e 4?"
    weeks = "The treatment with interferon lasted 48 weeks for genotypes 1 and 4 (75-83)."
    rate = "This interferon combination resulted in a response rate of around 52% for genotypes 1 and 4."
    ranked = scored((weeks, 0.82), (rate, 0.61))
    assert [c.sentence for c in choose(question, ranked)] == [rate]
    # asked for a number that is no rate, the weeks are still the answer
    assert [c.sentence for c in choose("Por quantas semanas durava o tratamento com interferon?", ranked)][
        0
    ] == weeks


def test_without_an_answering_sentence_value_sentences_go_first() -> None:
    question = "How many MW were connected in Occitanie in 2016?"
    ranked = scored(
        ("Occitanie is the second solar region of France.", 0.9),
        ("The region publishes a yearly solar report.", 0.88),
        ("The connected capacity reached 945 MW in 2016.", 0.8),
        ("Commune de Séranon (06) - 20 décembre 2022", 0.7),  # a value, but far from the best
    )
    assert choose(question, ranked) == [ranked[2], ranked[0], ranked[1]]
    # no value asked: the sentences near the best, in score order
    assert choose("Which region leads French solar capacity?", ranked) == ranked[:3]


def _on_page(
    page: PageEvidence, sentence: str, cosine: float, context_keys: float, words: float
) -> Candidate:
    chunk = ChunkEvidence(page.doc_id, page.page_no, 0, sentence, [0, 0, 1, 1], [1, 1], 1, 0.0)
    keys = key_share(question_key_terms(MARGIN), sentence)
    return Candidate(sentence, chunk, page, cosine=cosine, keys=keys, context_keys=context_keys, words=words)


MARGIN = "What was Northwind Analytics' operating margin in Q3 2024?"


def _report_page() -> PageEvidence:
    page = PageEvidence("nw", 1, "Northwind Analytics — Q3 2024 Quarterly Report", "nw.pdf", "pdf", 0.1)
    page.chunks = [
        ChunkEvidence("nw", 1, 0, "Northwind Analytics — Q3 2024 Quarterly Report", [], [], 1, 0.0)
    ]
    return page


def test_quotes_rank_what_the_sentence_speaks_of_over_the_documents_names() -> None:
    """A running header and a summary line repeat the report's names (in its title, so every
    sentence of its pages is dated and placed by them) and embed close to the question; the
    line stating the operating margin holds none of them and is the answer."""
    page = _report_page()
    header = _on_page(page, "Northwind Analytics — Q3 2024 Quarterly Report · Page 1 of 4", 0.74, 1.0, 0.0)
    summary = _on_page(
        page, "Northwind Analytics delivered revenue of $48.6 million in Q3 2024.", 0.79, 1.0, 0.0
    )
    stating = _on_page(page, "• Operating margin: 18.4%", 0.52, 1.0, 1.0)
    rank = quote_rank(MARGIN, 0.3, [page])
    assert max([header, summary, stating], key=rank) is stating
    assert [
        c.sentence for c in choose(MARGIN, sorted([header, summary, stating], key=lambda c: -rank(c)), rank)
    ][0] == stating.sentence


def test_a_name_no_heading_holds_counts_in_the_sentence() -> None:
    """ "Açude de Apipucos" is on no heading: the line holding it outranks the map's caption,
    which speaks of the map and its reference points (the question's other words)."""
    question = "Qual é a latitude do Açude de Apipucos no mapa de pontos de referência?"
    page = PageEvidence("rel", 4, "Relatório Ambiental Municipal 2024", "rel.pdf", "pdf", 0.1)
    page.chunks = [ChunkEvidence("rel", 4, 0, "Localização dos pontos de referência", [], [], 1, 0.0)]
    chunk = page.chunks[0]
    caption = Candidate(
        "Figura 2 — Mapa esquemático do Recife com pontos de referência.", chunk, page, cosine=0.55
    )
    caption.words = 0.75
    line = Candidate("• Açude de Apipucos (-8,0207; -34,9317)", chunk, page, cosine=0.40)
    line.keys = line.context_keys = 1.0
    rank = quote_rank(question, 0.3, [page])
    assert rank(line) > rank(caption)


def test_a_line_repeating_the_documents_names_is_not_the_answer() -> None:
    """The asked value's sentence ranks first; the document's self-description holds every
    key term and a number ("IBM i 7.2") but less of the subject: only the first is quoted."""
    question = "According to the IBM RCAC Redpaper, what was the average cost incurred for each lost record?"
    ranked = [
        Candidate("The average cost incurred for each lost record increased to $145 per record.", None, None),  # type: ignore[arg-type]
        Candidate(
            "This IBM Redpaper publication provides information about the IBM i 7.2 RCAC feature.", None, None
        ),  # type: ignore[arg-type]
    ]
    ranked[0].score, ranked[0].words = 1.2, 1.0
    ranked[1].score, ranked[1].words = 1.1, 0.2
    assert choose(question, ranked) == [ranked[0]]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        # the number is asked first, with no noun; the later "which lab" asks a name
        ("How long ago did Jim Bainbridge begin his career with IBM, and in which IBM lab?", []),
        ("Which state had the largest health outlay, and how much was it?", []),
        ("Quantas amostras tem o conjunto de dados FinTabNet?", ["amostras"]),
        (
            "What was Nagaland's decadal population growth rate in 2001-2011?",
            ["decadal", "population", "growth", "rate"],
        ),
        ("Which lab did Jim work in?", []),  # no number asked
        ("How many of the listed antivirals have no pre-qualified supplier, and which ones?", []),
    ],
)
def test_the_asked_quantity_is_named_by_a_last_frame_asking_the_number(
    question: str, asked: list[str]
) -> None:
    assert asked_quantity(question) == asked


def test_a_who_question_asks_the_holder_of_the_role_it_names() -> None:
    assert asked_role("Quem é o coordenador da COMON/DIFIM que assina o boletim?") == ["coordenador"]
    assert asked_role("Who is the director of the WHO Global HIV Programme?") == ["director"]
    assert asked_role("Who funded the guidelines?") == []  # a verb asks: no role named
    assert asked_role("Which station is rated Própria?") == []


def test_a_whole_statement_is_not_followed_by_another_pages_case_of_it() -> None:
    """The first sentence holds every key term in its own words; a sentence of the next page
    that holds them only through its page's title states another case (a season's rain,
    not the year's) and would cite a page without the fact: it is left out. Of the lead's
    own page it stays."""
    question = "Qual foi a precipitação acumulada no Recife em 2024?"
    pages = [PageEvidence("d", n, "Relatório Ambiental do Recife 2024", "r.pdf", "pdf", 0.0) for n in (1, 2)]
    lead = "Em 2024, o Recife registrou precipitação acumulada de 2.345 mm."
    season = "Entre abril e julho a precipitação acumulada atingiu 1.405 mm."

    def candidates(season_page: PageEvidence) -> list[Candidate]:
        return [
            Candidate(
                lead, ChunkEvidence("d", 1, 0, lead, [0, 0, 1, 1], [1, 1], 1, 0.0), pages[0], score=1.1
            ),
            Candidate(
                season,
                ChunkEvidence("d", season_page.page_no, 0, season, [0, 0, 1, 1], [1, 1], 1, 0.0),
                season_page,
                score=1.0,
            ),
        ]

    other_page = candidates(pages[1])
    assert choose(question, other_page) == other_page[:1]
    same_page = candidates(pages[0])
    assert choose(question, same_page) == same_page


def test_the_row_of_the_identifier_asked_is_quoted_without_the_general_sentence() -> None:
    """ "What is the data type of CLIENT_IPADDR?": the paper's sentence on its nine global
    variables ranks above the table row of the one asked; it names no variable and cites a page
    without the type, so the row is quoted alone. Without an identifier both stay."""
    lead_page = PageEvidence("ibm", 11, "IBM DB2 for i", "ibm.pdf", "pdf", 0.2)
    row_page = PageEvidence("ibm", 12, "IBM DB2 for i", "ibm.pdf", "pdf", 0.1)
    lead_chunk = ChunkEvidence("ibm", 11, 0, "", [0, 0, 1, 1], [1, 1], 1, 0.0)
    row_chunk = ChunkEvidence("ibm", 12, 0, "", [0, 0, 1, 1], [1, 1], 1, 0.0, table={"rows": []})
    lead = Candidate(
        "IBM DB2 for i supports nine built-in global variables.", lead_chunk, lead_page, cosine=0.8, words=0.5
    )
    row = Candidate(
        "Global variable: CLIENT_IPADDR · Type: VARCHAR(128) · Description: IP address of the client",
        row_chunk,
        row_page,
        cosine=0.7,
        words=0.5,
    )
    assert choose("What is the data type of the CLIENT_IPADDR global variable?", [lead, row]) == [row]
    assert choose("What data types do the global variables have?", [lead, row]) == [lead, row]


def test_a_question_asking_for_a_tables_value_is_answered_by_its_row() -> None:
    """ "What is the status of Canal do Cavouco in the note's table?": the row is the answer;
    the plan on the next page that also names the canal is not quoted beside it."""
    page1 = PageEvidence("nt", 1, "Nota técnica", "nt.pdf", "pdf", 0.2)
    page2 = PageEvidence("nt", 2, "Nota técnica", "nt.pdf", "pdf", 0.1)
    row_chunk = ChunkEvidence("nt", 1, 0, "", [0, 0, 1, 1], [1, 1], 1, 0.0, table={"rows": []})
    prose_chunk = ChunkEvidence("nt", 2, 0, "", [0, 0, 1, 1], [1, 1], 1, 0.0)
    row = Candidate(
        "Canal: Canal do Cavouco · Situação: Em execução", row_chunk, page1, cosine=0.7, words=0.5
    )
    plan = Candidate(
        "Concluir o desassoreamento do Canal do Cavouco até janeiro de 2025.", prose_chunk, page2, cosine=0.6
    )
    asked = "What is the status of the dredging of Canal do Cavouco in the technical note's table?"
    assert choose(asked, [row, plan]) == [row]
    assert choose("What is the status of the dredging of Canal do Cavouco?", [row, plan]) == [row, plan]


def test_a_contact_asked_by_its_kind_is_the_line_that_holds_one() -> None:
    """ "Which e-mail address does the bulletin give?": the line with the address, though
    it holds none of the question's words; "the area of the site" asks for no web address."""
    assert asked_contact("Which e-mail address does the bulletin give for contacting INEMA?") is not None
    email = asked_contact("Qual o e-mail de contato do INEMA?")
    assert email is not None and email.search("Tel.: (71) 3118-4267 balneabilidade@inema.ba.gov.br")
    assert not email.search("Evitar contato com a água do mar.")
    phone = asked_contact("Qual o telefone do Disque Meio Ambiente?")
    assert phone is not None and phone.search("Disque Meio Ambiente: 0800 71 1400")
    assert asked_contact("What is the area of the site?") is None
    assert asked_contact("Quantos pontos de coleta?") is None


def test_sentences_dated_to_other_years_are_left_out_when_one_of_the_asked_year_is_chosen() -> None:
    """Asked for the last quarter of 2020, the 2018 sentence goes; a sentence comparing with
    2023 in a page titled 2024 is of 2024; with none of the asked year left, all stay."""
    from service.answer.extractive import of_asked_years

    page = PageEvidence("fr", 8, "Etude d'impact", "fr.pdf", "pdf", 0.1)
    page.chunks = [ChunkEvidence("fr", 8, 0, "2.3 Etat des lieux", [0, 0, 1, 1], [1, 1], 1, 0.0)]
    old = Candidate("La puissance raccordée en Europe repart à la hausse en 2018.", page.chunks[0], page)
    asked = Candidate("Le volume raccordé au dernier trimestre 2020 représente 183 MW.", page.chunks[0], page)
    question = "Quelle puissance a été raccordée au dernier trimestre de 2020 ?"
    assert of_asked_years(question, [old, asked]) == [asked]
    assert of_asked_years(question, [old]) == [old]
    assert of_asked_years("Quelle puissance a été raccordée ?", [old, asked]) == [old, asked]
    report = PageEvidence("rec", 1, "Relatório Ambiental Municipal 2024", "rec.pdf", "pdf", 0.1)
    report.chunks = [ChunkEvidence("rec", 1, 0, "Drenagem", [0, 0, 1, 1], [1, 1], 1, 0.0)]
    compared = Candidate("Foram 214 pontos, 12,7% menos que em 2023.", report.chunks[0], report)
    other = Candidate("Em 2022 foram 250 pontos.", report.chunks[0], report)
    assert of_asked_years("Quantos pontos de alagamento em 2024?", [other, compared]) == [other, compared]


def test_rows_of_another_season_are_no_answer_for_the_season_asked() -> None:
    """Asked the 15/16 season, rows labelled "Área 16/17" or under a table titled "SAFRA
    16/17" are another season's; a row naming both seasons (the change from one to the other)
    or a question naming no season keeps them. "10/07" is a day and a month, no season."""
    from service.answer.extractive import of_other_seasons, seasons_of

    page = PageEvidence("imea", 1, "IMEA", "imea.pdf", "pdf", 0.1)
    page.chunks = [ChunkEvidence("imea", 1, 0, "MILHO SAFRA 16/17: COLHEITA", [0, 0, 1, 1], [1, 1], 1, 0.0)]
    area = Candidate("Área 16/17 (ha) · Norte: 165.776", page.chunks[0], page)
    week = Candidate("19-mai-17 · Norte: 0,00%", page.chunks[0], page)
    change = Candidate("∆ Safra 15/16 para 16/17 · Norte: -12%", page.chunks[0], page)
    question = "Qual a área de milho do Norte na safra 15/16?"
    assert of_other_seasons(question, [area, week])
    assert not of_other_seasons(question, [area, change])
    assert not of_other_seasons("Qual a área de milho do Norte?", [area, week])
    assert seasons_of("safra 2015/16, em 10/07/2016 e 10/07") == {"15/16"}


def _said(text: str, quote: str, status: str = "answer", page_no: int = 1) -> Any:
    from service.answer.types import Answer, Citation

    citation = Citation("rec", page_no, "Relatório", [0, 0, 1, 1], quote)
    return Answer(
        "q", text, "pt", grounded=True, refused=status == "refused", citations=[citation], status=status
    )  # type: ignore[arg-type]


def test_a_question_in_parts_gets_the_answer_of_each_part_its_answer_lacks() -> None:
    """The count's sentence answers the first part; the table's argmax of another page, the
    second part's answer, follows it. A part answered by passages or refused adds nothing, nor
    does one read off a page the answer already cites (its answer again, or a row beside it)."""
    from service.answer.extractive import with_parts

    count = "Foram registrados 214 pontos de alagamento."
    whole = _said(f"{count} [rec p.1]", count, "passages")
    most = _said("Afogados teve o maior valor: 45 [rec p.2].", "Afogados · Pontos: 45", page_no=2)
    joined = with_parts(whole, [_said(f"{count} [rec p.1]", count), most])
    assert joined.answer == f"{count} [rec p.1] Afogados teve o maior valor: 45 [rec p.2]."
    assert [c.page_no for c in joined.citations] == [1, 2] and joined.status == "answer"
    assert with_parts(whole, [_said("x", "x", "passages"), _said("y", "y", "refused")]) is whole
    assert with_parts(whole, [_said("Row: 30-jun-17 [rec p.1]", "Row: 30-jun-17")]) is whole


def test_a_part_leaning_on_the_one_before_does_not_stand_alone() -> None:
    from service.answer.extractive import stands_alone

    assert not stands_alone("em que forma") and not stands_alone("o que ela informa")
    assert stands_alone("quantos metros cúbicos de material a EMLURB removeu")
    assert stands_alone("qual a meta de plantio de mudas para 2025")
    # the shared context the planner puts before a part does not make a pronoun's part stand alone
    assert not stands_alone(
        "No gráfico de pizza com as fatias a a f: que percentual aproximado do total ela representa"
    )
