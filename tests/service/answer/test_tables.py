"""Table answers without an LLM: a cell found by its row and column labels, argmax/argmin
over a line, totals; cited with the cell's box. The grids are cut from real corpus pages
(tests/utils/tables.py), as ingestion hands them over in a chunk's "table" payload."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.chart_note import TITLE_NOTE
from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder
from service.answer.extractive import ExtractiveAnswerer
from service.answer.gate import RelevanceGate, question_language
from service.answer.markers import parse
from service.answer.prompting import Budget, build_prompt
from service.answer.tables import TableAnswer, TableAnswerer, _Found, _labels_another_line, evidence_tables
from service.answer.types import Answer
from service.query.types import ChunkEvidence, PageEvidence
from tests.conftest import corpus_path
from tests.utils.tables import Grid, cell_centre, corpus_grid, synthetic_grid, table_page, table_result

IMEA_TITLE = "MILHO SAFRA 16/17: ACOMPANHAMENTO DE COLHEITA POR REGIÃO"
CENSUS_TITLE = "TABLE 4: STATE-WISE DECADAL GROWTH RATE OF POPULATION"
NICS_TITLE = "NICS Firearm Background Checks November - 2015"


@pytest.fixture(scope="module")
def imea() -> Grid:
    return corpus_grid(corpus_path("pdf", "br_imea_milho_safra_16-17.pdf"), header_rows=1, title=IMEA_TITLE)


@pytest.fixture(scope="module")
def census() -> Grid:
    path = corpus_path("pdf", "in_decadal_population_growth.pdf")
    return corpus_grid(path, header_rows=2, title=CENSUS_TITLE)


@pytest.fixture(scope="module")
def nics() -> Grid:
    path = corpus_path("pdf", "us_nics_background_checks_2015-11.pdf")
    return corpus_grid(path, header_rows=2, title=NICS_TITLE)


def no_image(doc_id: str, page_no: int) -> None:
    return None


def ask(question: str, *pages: PageEvidence) -> TableAnswer | None:
    return TableAnswerer().answer(question, question_language(question), list(pages))


def assert_cites_cell(answer: TableAnswer, grid: Grid, row: str, column: int, doc: str) -> None:
    """One citation, of the cell at (row, column): its box holds the cell's centre."""
    (citation,) = answer.citations
    x, y = cell_centre(grid, row, column)
    x0, y0, x1, y1 = citation.bbox
    assert x0 <= x <= x1 and y0 <= y <= y1, (citation.bbox, (x, y))
    assert (citation.doc_id, citation.page_no) == (doc, 1)
    assert [(d, p) for _, d, p in parse(answer.text)] == [(doc, 1)]
    assert answer.text.endswith(f"[{doc} p.1].")


def test_imea_region_area_is_the_cell_of_the_area_row_and_the_region_column(imea: Grid) -> None:
    answer = ask("Qual a área de milho da região Médio-Norte na safra 16/17?", table_page("imea", imea))
    assert answer is not None and answer.operation == "lookup"
    assert "2.025.045 ha" in answer.text and "Médio-Norte" in answer.text
    assert answer.text.startswith("Segundo a tabela")
    assert_cites_cell(answer, imea, "Área 16/17 (ha)", 2, "imea")
    assert answer.citations[0].quote == "Área 16/17 · Médio-Norte: 2.025.045"


def test_imea_state_total_is_read_from_the_total_column(imea: Grid) -> None:
    answer = ask("Qual a área total de milho em Mato Grosso na safra 16/17?", table_page("imea", imea))
    assert answer is not None and answer.operation == "total"
    assert "4.738.950 ha" in answer.text and "total" in answer.text
    assert_cites_cell(answer, imea, "Área 16/17 (ha)", 8, "imea")


def test_imea_harvest_date_asked_in_words_meets_the_abbreviated_row(imea: Grid) -> None:
    question = "Quanto da colheita de milho de Mato Grosso estava concluída em 18 de agosto de 2017?"
    answer = ask(question, table_page("imea", imea))
    assert answer is not None
    assert "99,62%" in answer.text and "18/08/2017" in answer.text and "Mato Grosso" in answer.text
    assert_cites_cell(answer, imea, "18-ago-17", 8, "imea")
    # the same row in another season (18-ago-16) is not taken for it
    other = ask(
        "Quanto da colheita de milho de Mato Grosso estava concluída em 18/08/2016?", table_page("imea", imea)
    )
    assert other is not None and "95,81%" in other.text


def test_imea_argmax_over_a_row_leaves_the_state_total_out(imea: Grid) -> None:
    answer = ask("Which region had the largest corn area?", table_page("imea", imea))
    assert answer is not None and answer.operation == "argmax"
    assert answer.text.startswith("According to the table") and "Médio-Norte had the highest" in answer.text
    assert "2.025.045 ha" in answer.text  # not Mato Grosso's 4.738.950, the sum of the regions
    smallest = ask("Qual região teve a menor área de milho?", table_page("imea", imea))
    assert smallest is not None and smallest.operation == "argmin"
    assert "Norte teve o menor valor" in smallest.text and "165.776 ha" in smallest.text
    # the harvest "mais atrasada" (most behind) is the least harvested, not the most
    behind = ask(
        "No levantamento de 14 de julho de 2017, qual região tinha a colheita mais atrasada?",
        table_page("imea", imea),
    )
    assert behind is not None and behind.operation == "argmin" and "Sudeste" in behind.text, behind
    assert "35,76%" in behind.text


def test_census_lookups_by_state_and_period_in_either_spelling(census: Grid) -> None:
    page = table_page("census", census)
    nagaland = ask("What was Nagaland's decadal population growth rate in 2001-2011?", page)
    assert nagaland is not None
    assert "Nagaland" in nagaland.text and "2001-2011" in nagaland.text and "-0.47%" in nagaland.text
    assert_cites_cell(nagaland, census, "Nagaland", 6, "census")
    kerala = ask("Qual foi a taxa de crescimento populacional de Kerala em 2001-11?", page)
    assert kerala is not None and "4.86%" in kerala.text and kerala.text.startswith("Segundo a tabela")
    assert " em 2001-2011 era " in kerala.text


def test_census_argmax_of_a_period_skips_the_all_india_row(census: Grid) -> None:
    page = table_page("census", census)
    answer = ask("Qual estado teve o maior crescimento em 1951-61?", page)
    assert answer is not None and answer.operation == "argmax"
    assert "Chandigarh teve o maior valor em 1951-1961" in answer.text and "394.13" in answer.text
    assert_cites_cell(answer, census, "Chandigarh", 1, "census")
    lowest = ask("Which state had the lowest growth rate in 2001-2011?", page)
    assert lowest is not None and "Nagaland had the lowest value" in lowest.text


def test_an_extreme_among_named_rows_gives_each_named_rows_value(census: Grid) -> None:
    page = table_page("census", census)
    answer = ask(
        "Entre Tripura e Manipur, qual teve o maior crescimento em 1951-1961, e quais as taxas?", page
    )
    assert answer is not None and answer.operation == "argmax"
    assert "Tripura teve o maior valor em 1951-1961: 78.71%" in answer.text
    assert "(Manipur: 35.04%)" in answer.text
    # both cells are cited, the extreme's first
    assert len(answer.citations) == 2
    assert "Tripura" in answer.citations[0].quote and "Manipur" in answer.citations[1].quote


def test_nics_state_permit_and_the_totals_row(nics: Grid) -> None:
    page = table_page("nics", nics)
    kentucky = ask("How many permit checks did Kentucky have in November 2015?", page)
    assert kentucky is not None and "264,140" in kentucky.text and "Kentucky" in kentucky.text
    assert_cites_cell(kentucky, nics, "Kentucky", 1, "nics")
    total = ask("What was the total number of permit checks?", page)
    assert total is not None and total.operation == "total" and "804,006" in total.text
    most = ask("Which state had the most permit checks?", page)
    assert most is not None and "Kentucky had the highest" in most.text  # the Totals row is not a state
    grand = ask("Qual o total geral de verificações NICS em novembro de 2015?", page)  # no line named
    assert grand is not None and grand.operation == "total" and "2,236,457" in grand.text


def test_imd_abbreviated_headers_and_two_header_levels() -> None:
    path = corpus_path("pdf", "in_imd_rainfall_distribution_2016-07-10.pdf")
    page = table_page("imd", corpus_grid(path, header_rows=2, title="State-wise rainfall distribution"))
    day = ask("What was the percentage departure of rainfall in Meghalaya on the day?", page)
    assert (
        day is not None and "MEGHALAYA" in day.text and "-81%" in day.text
    )  # "%DEP." under "Day:10-07-2016"
    period = ask("What was Manipur's departure over the period?", page)
    assert period is not None and "-73%" in period.text
    category = ask("What was the rainfall category of Meghalaya for the day?", page)
    assert category is not None and category.text.endswith(" is S [imd p.1].")


@pytest.mark.parametrize(
    "question",
    [
        "What was the growth rate of Atlantis in 2001-2011?",  # no row
        "What was Nagaland's growth rate in 2021-2031?",  # no column
        "What is the capital of Australia?",
        "Quantos habitantes tem Lisboa?",
    ],
)
def test_no_answer_when_no_row_or_column_is_a_clear_match(census: Grid, question: str) -> None:
    assert ask(question, table_page("census", census)) is None


def test_two_rows_named_each_by_name_are_both_read(census: Grid) -> None:
    """Two rows asked together in one column: each value with its row, each cell cited."""
    answer = ask("Compare Kerala and Nagaland in 2001-2011", table_page("census", census))
    assert answer is not None and "4.86% for Kerala and -0.47% for Nagaland" in answer.text
    assert len(answer.citations) == 2


def test_a_total_asked_of_a_table_without_a_total_row_is_the_sum_of_its_complete_column(nics: Grid) -> None:
    states = dict(nics, rows=nics["rows"][:-1])  # the NICS table without its printed "Totals" row
    states["bbox"] = [*nics["bbox"][:3], max(c["bbox"][3] for c in states["rows"][-1] if c["bbox"])]
    answer = ask("What was the total number of permit checks?", table_page("nics", states))
    assert answer is not None and answer.operation == "sum"
    assert "804,006" in answer.text and "55 rows" in answer.text  # the printed total, recomputed
    (citation,) = answer.citations  # one box around the column's cells
    x, y = cell_centre(nics, "Kentucky", 1)
    assert citation.bbox[0] <= x <= citation.bbox[2] and citation.bbox[1] <= y <= citation.bbox[3]


def test_a_malformed_table_payload_gives_no_error(census: Grid) -> None:
    page = table_page("census", census)
    table = page.chunks[0].table
    assert table is not None
    table |= {"first_row": None, "table_no": "x", "bbox": None}
    table["rows"] = [
        row[:3] if i % 2 else [{"text": c["text"]} for c in row] for i, row in enumerate(table["rows"])
    ]
    answer = ask("What was Kerala's decadal population growth rate in 1961-1971?", page)
    assert answer is None or "Kerala" in answer.text
    assert (
        ask("Which state had the lowest growth rate in 2001-2011?", page) is None
    )  # no bbox: maybe incomplete


def test_a_month_the_report_does_not_cover_is_no_answer(nics: Grid) -> None:
    assert ask("How many permit checks did Kentucky have in December 2015?", table_page("nics", nics)) is None


def test_chunks_of_one_table_merge_and_an_incomplete_table_gets_no_extreme(census: Grid) -> None:
    whole = table_page("census", census, rows_per_chunk=10)
    assert len(whole.chunks) == 4
    lookup = ask("What was Nagaland's decadal population growth rate in 2001-2011?", whole)
    assert lookup is not None and "-0.47%" in lookup.text  # row 24: in the third chunk
    assert_cites_cell(lookup, census, "Nagaland", 6, "census")
    assert ask("Which state had the lowest growth rate in 2001-2011?", whole) is not None
    head = table_page("census", census, rows_per_chunk=10)
    head.chunks = head.chunks[:2]  # retrieval kept only the first 20 rows: Nagaland's -0.47 is not among them
    assert ask("Which state had the lowest growth rate in 2001-2011?", head) is None


def test_the_best_page_of_two_answers(imea: Grid, census: Grid) -> None:
    question = "What was Nagaland's decadal population growth rate in 2001-2011?"
    answer = ask(question, table_page("imea", imea), table_page("census", census, score=0.5))
    assert answer is not None and answer.citations[0].doc_id == "census"


@pytest.fixture(scope="module")
def answerer(text_encoder: TextEncoder) -> ExtractiveAnswerer:
    return ExtractiveAnswerer(RelevanceGate(text_encoder, SparseEncoder()))


def test_extractive_answerer_answers_from_the_cell_with_its_box(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder, imea: Grid
) -> None:
    question = "Quanto da colheita de milho de Mato Grosso estava concluída em 18 de agosto de 2017?"
    result = table_result(question, [table_page("imea", imea)])
    result.query_vector = text_encoder.embed([question])[0]
    answer = answerer.answer(question, result)
    assert answer.status == "answer" and not answer.refused and answer.grounded
    assert answer.language == "pt" and "99,62%" in answer.answer
    assert [(c.doc_id, c.page_no) for c in answer.citations] == [("imea", 1)]
    x, y = cell_centre(imea, "18-ago-17", 8)
    x0, y0, x1, y1 = answer.citations[0].bbox
    assert x0 <= x <= x1 and y0 <= y <= y1
    # no row for the question: the sentence path decides (here: the gate refuses)
    other = "What is the capital of Australia?"
    result = table_result(other, [table_page("imea", imea)])
    result.query_vector = text_encoder.embed([other])[0]
    refused = answerer.answer(other, result)
    assert refused.refused and refused.status == "refused" and refused.citations == []


def test_a_crop_the_table_does_not_hold_is_refused_not_read_from_its_cells(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder, imea: Grid
) -> None:
    """The maize table's Médio-Norte area cell does not answer a question about soy: the
    table answerer matches names, numbers and codes, and "soja" is on no evidence page."""
    for question, refused in (
        ("Qual a área plantada de soja na safra 16/17 na região Médio-Norte segundo o IMEA?", True),
        ("Qual a área de milho da safra 16/17 na região Médio-Norte?", False),
    ):
        result = table_result(question, [table_page("imea", imea, title=IMEA_TITLE)])
        result.query_vector = text_encoder.embed([question])[0]
        answer = answerer.answer(question, result)
        assert answer.refused is refused, (question, answer.answer)
        if not refused:
            assert "2.025.045" in answer.answer


def test_a_row_named_by_its_identifier_answers_though_the_table_words_its_label_otherwise(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder
) -> None:
    """ "auto de infração 679199": the table's column is "Nº A.I." and "auto" is on no page,
    but the identifier names the row: the fine is read, not refused. An identifier the
    table lacks still refuses a question whose subject the pages do not hold."""
    path = corpus_path("pdf", "br_ibama_autuacoes_amazonas_2010_p2.pdf")
    grid = corpus_grid(path, header_rows=1, title="Autuações IBAMA Amazonas 2010")
    for question, refused, value in (
        ("Qual o valor da multa do auto de infração 679199?", False, "39.000,00"),
        ("Qual o valor do orçamento da auto-escola 679199?", True, ""),
    ):
        result = table_result(question, [table_page("ibama", grid)])
        result.query_vector = text_encoder.embed([question])[0]
        answer = answerer.answer(question, result)
        assert answer.refused is refused, (question, answer.answer)
        assert value in answer.answer


def test_the_llm_gets_a_table_as_markdown_with_its_header_once(imea: Grid) -> None:
    page = table_page("imea", imea, rows_per_chunk=8)  # three chunks of one table
    for vision in (True, False):
        prompt = build_prompt(
            "q", "pt", [page], Budget(vision=vision), lambda d, n: "flat page text", no_image
        )
        text = prompt.sent[0].text
        lines = text.splitlines()
        assert lines[0] == f"Table: {IMEA_TITLE}"
        assert lines[1].startswith("| Regiões do IMEA | Centro-Sul | Médio-Norte |") and lines[2].startswith(
            "|---|"
        )
        assert text.count("Regiões do IMEA") == 1  # one header for the table's chunks
        assert "| Área 16/17 (ha) | 352.094 | 2.025.045 |" in text
        assert "flat page text" not in text and "Regiões do IMEA: " not in text
    # vision: the best three chunks (all 18 rows here); text-only: every chunk of the page
    assert (
        "| 18-ago-17 | 100,00% |"
        in build_prompt("q", "pt", [page], Budget(), lambda d, n: "", no_image).sent[0].text
    )


def test_sample_tables_answer_codes_and_text_cells(samples_dir: Path) -> None:
    """The project's own sample PDFs: a station code names the row, the answer can be a word."""
    water = corpus_grid(samples_dir / "relatorio_ambiental_recife_2024.pdf", page_no=3)
    page = table_page("recife", water, page_no=3, title="Relatório ambiental do Recife 2024")
    station = ask("Qual é a classificação da qualidade da água na estação EST-07?", page)
    assert station is not None and "Própria" in station.text and "EST-07" in station.text
    oxygen = ask("Qual foi o oxigênio dissolvido medido na estação EST-05 em 2024?", page)
    assert oxygen is not None and "3,1 mg/L" in oxygen.text
    products = corpus_grid(samples_dir / "quarterly_report_q3_2024.pdf", page_no=4)
    sku = ask("What was the Q3 2024 revenue of SKU NW-5502?", table_page("q3", products, page_no=4))
    assert sku is not None and "SKU NW-5502" in sku.text and "4.1" in sku.text


def test_of_two_total_columns_the_grand_total_is_read() -> None:
    """A subtotal column and the grand total after "Others" share the label "Total"."""
    grid = synthetic_grid(
        ["State", "Revenue", "Capital", "Total / Revenue & Capital", "Others", "Total / Revenue & Capital"],
        [
            ["Alpha", "100", "20", "120", "30", "150"],
            ["Beta", "200", "40", "240", "60", "300"],
            ["Gamma", "50", "5", "55", "5", "60"],
            ["Delta", "70", "10", "80", "20", "100"],
        ],
        title="Public Health Outlay 2012-13 (Rs. in 000)",
    )
    answer = ask("What was Beta's total public health outlay in 2012-13?", table_page("outlay", grid))
    assert answer is not None and answer.operation == "total"
    assert "300" in answer.text and "240" not in answer.text
    assert_cites_cell(answer, grid, "Beta", 5, "outlay")
    pt = ask("Qual foi o gasto total de Gamma?", table_page("outlay", grid))
    assert pt is not None and "60" in pt.text and pt.text.startswith("Segundo a tabela")
    # a count over "a grand total above": the grand total column, its threshold written out
    count = ask("How many states have a grand total above 120?", table_page("outlay", grid))
    assert count is not None and count.operation == "count_where", count
    assert "2 of its 4 rows" in count.text and "Alpha (150) and Beta (300)" in count.text
    assert "above 120" in count.text


def test_an_extreme_runs_over_the_named_line_not_a_total_the_question_qualifies_by() -> None:
    """'Which region of Alto Vale had the largest area': the area row over the regions; the
    Alto Vale column (the sum of the regions) is named as the place, not as the line."""
    grid = synthetic_grid(
        ["Regiões", "Leste", "Oeste", "Norte", "Centro", "Alto Vale"],
        [
            ["Área 16/17 (ha)", "300", "900", "200", "100", "1.500"],
            ["19-mai-17", "1,0%", "2,0%", "3,0%", "4,0%", "2,0%"],
            ["26-mai-17", "5,0%", "6,0%", "7,0%", "8,0%", "6,5%"],
            ["2-jun-17", "9,0%", "9,5%", "9,9%", "9,1%", "9,4%"],
        ],
    )
    page = table_page("safra", grid)
    answer = ask("Qual região do Alto Vale tinha a maior área na safra 16/17?", page)
    assert answer is not None and answer.operation == "argmax"
    assert "Oeste" in answer.text and "900" in answer.text and "1.500" not in answer.text


def test_a_table_is_not_read_for_a_subject_only_another_evidence_page_holds(imea: Grid) -> None:
    """Soy asked of the maize table, with a page about soy in the evidence: the maize table's
    Médio-Norte area cell is not the answer (every content word of the question has to be on
    the table's page); maize asked of the same evidence still reads the cell."""
    maize = table_page("imea", imea, title=IMEA_TITLE)
    text = "A área plantada de soja em Mato Grosso cresceu na safra 16/17."
    soy = PageEvidence(
        "soja", 1, "Boletim da soja", "soja.pdf", "pdf_page", 0.5,
        chunks=[ChunkEvidence("soja", 1, 0, text, [50.0, 50.0, 400.0, 70.0], [595.0, 842.0], 1, 0.5)],
    )  # fmt: skip
    assert ask("Qual a área plantada de soja na safra 16/17 na região Médio-Norte?", maize, soy) is None
    corn = ask("Qual a área de milho da safra 16/17 na região Médio-Norte?", maize, soy)
    assert corn is not None and "2.025.045" in corn.text and corn.unaddressed == []
    # a word an unrelated page happens to hold ("anterior") names no other subject
    line = ChunkEvidence(
        "outro", 1, 0, "Conforme o relatório anterior.", [50.0, 50.0, 400.0, 70.0], [595.0, 842.0], 1, 0.5
    )
    other = PageEvidence("outro", 1, "Relatório", "outro.pdf", "pdf_page", 0.5, chunks=[line])
    earlier = ask(
        "Na safra anterior, qual a área de milho da safra 16/17 na região Médio-Norte?", maize, other
    )
    assert earlier is not None and "2.025.045" in earlier.text
    # soy on no other page: the cell is read, and the answer says which words its page lacks
    alone = ask("Qual a área plantada de soja na safra 16/17 na região Médio-Norte?", maize)
    assert alone is not None and alone.unaddressed == ["soja"]


def test_a_table_titled_by_another_letter_is_a_sibling_not_the_one_asked() -> None:
    """ "Product C" asked: the chart table titled "Product B Monthly Revenue" is another
    product's, though its labels fit as well; a title naming no letter, or the same one, is
    not ruled out, and a question naming none rules out nothing."""
    from service.answer.tables import letter_tokens, names_another_letter

    question = letter_tokens("In which month did Product C reach its highest monthly revenue?")
    assert question == {"letter:c"}
    assert names_another_letter(question, "Product B Monthly Revenue")
    assert not names_another_letter(question, "Product C Monthly Revenue (values read from the chart image)")
    assert not names_another_letter(question, "Monthly Revenue")
    none_asked = letter_tokens("Which month had the highest revenue?")
    assert not names_another_letter(none_asked, "Product B Monthly Revenue")
    opening = letter_tokens("A receita de março")  # "A" opens a sentence
    assert not names_another_letter(opening, "Product B Monthly Revenue")


def test_an_extreme_naming_no_line_runs_over_the_tables_one_value_column() -> None:
    """ "the value of the lowest bar" of a chart read into (category, value) names no
    column: the one numeric column is the line; a table of two numeric columns stays
    unanswered when the question names neither."""
    grid = synthetic_grid(
        ["a", "Value"],
        [["A", "28"], ["B", "55"], ["C", "43"], ["D", "91"], ["G", "19"]],
        title="Bar chart (values read from the chart image, not printed figures)",
    )
    answer = ask("In the bar chart, what is the value of the lowest bar?", table_page("bars", grid))
    assert answer is not None and answer.operation == "argmin"
    assert "19" in answer.text and "G" in answer.text and "91" not in answer.text
    assert_cites_cell(answer, grid, "G", 1, "bars")
    highest = ask("Qual barra é a mais alta no gráfico?", table_page("bars", grid))
    assert highest is not None and "91" in highest.text
    # a bar's length is its value: "shortest" and "tallest" ask for the extremes too
    shortest = ask("Which bar is the shortest, and what is its value?", table_page("bars", grid))
    assert shortest is not None and shortest.operation == "argmin" and "19" in shortest.text
    tallest = ask("Which bar of the chart is the tallest?", table_page("bars", grid))
    assert tallest is not None and tallest.operation == "argmax" and "91" in tallest.text
    two = synthetic_grid(["a", "x", "y"], [["A", "1", "5"], ["B", "2", "4"], ["C", "3", "9"]], title="Bars")
    assert ask("In the bar chart, what is the value of the lowest bar?", table_page("two", two)) is None


def test_how_many_rows_name_a_place_is_a_count_when_no_cell_holds_the_number() -> None:
    """ "Quantas autuações em Manacapuru?" over a list of infractions: the rows whose
    Município cell is Manacapuru, counted and each cited; a name in every row ("AMAZONAS")
    or in the title ("Ibama") selects nothing; one row named is no count."""
    grid = synthetic_grid(
        ["Nº", "Estado", "Município", "Sanção"],
        [
            ["11", "AMAZONAS", "MANACAPURU", "Multa"],
            ["12", "AMAZONAS", "MANAUS", "Multa"],
            ["13", "AMAZONAS", "MANACAPURU", "Embargo"],
            ["14", "AMAZONAS", "TEFÉ", "Multa"],
            ["15", "AMAZONAS", "MANACAPURU", "Multa"],
        ],
        title="Relatório de Autuações Ambientais - IBAMA",
    )
    answer = ask("Quantas autuações do Ibama no Amazonas em Manacapuru?", table_page("ibama", grid))
    assert answer is not None and answer.operation == "count"
    assert '3 linhas têm Município "MANACAPURU"' in answer.text
    assert len(answer.citations) == 3
    english = ask("How many infractions were recorded in Manacapuru?", table_page("ibama", grid))
    assert english is not None and english.text.startswith('According to the table "Relatório')
    one = ask("Quantas autuações em Tefé?", table_page("ibama", grid))
    assert one is None or one.operation != "count"


def test_rows_of_a_month_axis_are_named_by_their_months() -> None:
    """A chart's month axis writes "Jul" and "Jan" (ingest/charts.py): "July" or "janeiro"
    asks for that row."""
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    rain = [65, 72, 72, 59, 41, 41, 15, 25, 36, 64, 74, 73]
    sun = [25, 28, 36, 52, 76, 75, 90, 85, 63, 36, 33, 34]
    rows = [[m, str(r), str(s)] for m, r, s in zip(months, rain, sun, strict=True)]
    grid = synthetic_grid(
        ["Month of the year", "rain", "sun"], rows, title="Count of Records (stacked bar chart)"
    )
    page = table_page("weather", grid)
    answer = ask("How many sun records are counted in July?", page)
    assert answer is not None and answer.operation == "lookup" and "90" in answer.text
    answer = ask("Quantos registros de chuva (rain) há em janeiro?", page)
    assert answer is not None and "65" in answer.text


def test_a_row_stating_the_highest_value_answers_a_superlative_naming_no_line() -> None:
    """A line chart's table has a row of each line's highest point and a column of all
    lines' (ingest/chart_lines.py): "the highest CO2 concentration" names no line to run
    an extreme over, and is read from that row; one naming a line ranks its ticks."""
    grid = synthetic_grid(
        ["Year into Decade", "2000 – 2009", "2010 – 2019", "CO2 concentration in ppm of all lines"],
        [
            ["0", "370.5", "391", ""],
            ["5", "379.9", "400.7", ""],
            ["10", "388.7", "413.3", ""],
            ["Start (first point)", "369.7", "390.2", ""],
            ["End (last point)", "388.7", "413.3", ""],
            ["Highest point", "390.4", "414.9", "414.9"],
            ["Lowest point", "367", "387.2", "367"],
        ],
        title="CO2 concentration in ppm (line chart)",
    )
    page = table_page("co2", grid)
    answer = ask("What is the highest CO2 concentration?", page)
    assert answer is not None and "414.9" in answer.text
    answer = ask("What is the lowest CO2 concentration?", page)
    assert answer is not None and "367" in answer.text
    answer = ask("Qual a maior concentração de CO2?", page)
    assert answer is not None and "414.9" in answer.text
    # a line named: its extreme over the ticks, the rows stating extremes are no ticks
    answer = ask("At which year into the decade was the 2010 – 2019 concentration highest?", page)
    assert answer is not None and answer.operation == "argmax" and "10 had the highest" in answer.text
    # where a line starts: the row that states it, not a tick's
    answer = ask("At what concentration does the 2000 – 2009 line start?", page)
    assert answer is not None and "369.7" in answer.text
    # a decade named as one ("the 2000s", "a década de 2010") is its line; "termina" its end
    answer = ask("At what concentration does the 2000s line end?", page)
    assert answer is not None and "388.7" in answer.text and "(last point)" in answer.text, answer
    answer = ask("Em que concentração termina a linha da década de 2010?", page)
    assert answer is not None and "413.3" in answer.text, answer


def _asked(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder, question: str, page: PageEvidence
) -> Answer:
    result = table_result(question, [page])
    result.query_vector = text_encoder.embed([question])[0]
    return answerer.answer(question, result)


def test_a_case_the_table_has_no_row_for_is_refused_not_answered_with_the_nearest_rows(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder
) -> None:
    """A dose table stops at 10 mg: asked for 15 mg, its rows for other doses are not
    offered as passages, the question is refused, though the page's prose holds a 15 (of
    patients); a dose it has is read from its cell."""
    grid = synthetic_grid(
        ["Dose (mg)", "Response time (s)", "Side effects (%)"],
        [["0", "9.1", "0"], ["2", "7.4", "1.2"], ["5", "5.0", "2.5"], ["10", "3.3", "4.8"]],
        title="Table 2. Response time and side effects of the trial drug by dose",
    )
    page = table_page("trial", grid, title="Trial drug dose study")
    prose = "Each group enrolled 15 patients."
    box, size = [50.0, 300.0, 550.0, 320.0], [600.0, 800.0]
    page.chunks.append(ChunkEvidence("trial", 1, 1, prose, box, size, 2, 0.9))
    asked = "What response time did the trial drug give at a {} mg dose?"
    refused = _asked(answerer, text_encoder, asked.format(15), page)
    assert refused.refused and refused.status == "refused", refused.answer
    found = _asked(answerer, text_encoder, asked.format(5), page)
    assert not found.refused and "5.0" in found.answer


def test_another_season_than_the_tables_is_refused(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder
) -> None:
    """A harvest table of season 20/21: "safra 21/22" asks for another season, though its
    numbers 21 and 22 are each too small to name a label; the table's own season is read."""
    grid = synthetic_grid(
        ["Região", "Norte", "Sul", "Total"],
        [["Área 20/21 (ha)", "1.200", "3.400", "4.600"], ["Produção 20/21 (t)", "5.000", "9.000", "14.000"]],
        title="SOJA SAFRA 20/21: ÁREA E PRODUÇÃO POR REGIÃO",
    )
    page = table_page("soja", grid, title="Boletim da soja")
    refused = _asked(answerer, text_encoder, "Qual a área de soja da safra 21/22 na região Norte?", page)
    assert refused.refused, refused.answer
    found = _asked(answerer, text_encoder, "Qual a área de soja da safra 20/21 na região Norte?", page)
    assert not found.refused and "1.200" in found.answer


def test_a_word_qualifying_a_label_the_table_starts_with_does_not_refuse_the_table(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder
) -> None:
    """ "the main Permit column": "main" is on no page, but it only says which "Permit"
    column is meant, so the cell is read; "gross margin" over a table whose label writes
    "Operating margin" asks for another quantity and is refused."""
    grid = synthetic_grid(
        ["State", "Permit", "Rentals / Permit", "Totals"],
        [["Alpha", "1,200", "15", "2,000"], ["Beta", "3,400", "22", "5,100"], ["Gamma", "800", "9", "1,300"]],
        title="Firearm permit checks by state, March 2019",
    )
    page = table_page("permits", grid, title="Firearm permit checks")
    found = _asked(answerer, text_encoder, "How many checks did Beta have in the main Permit column?", page)
    assert not found.refused and "3,400" in found.answer, found.answer
    margins = synthetic_grid(
        ["Product", "Revenue ($M)", "Operating margin (%)"],
        [["Widgets", "12.0", "18.4"], ["Gadgets", "7.5", "11.2"], ["Sprockets", "3.1", "6.0"]],
        title="Table 3 - Revenue and operating margin by product, 2023",
    )
    page = table_page("margins", margins, title="Annual report 2023")
    refused = _asked(answerer, text_encoder, "What was the gross margin of Gadgets in 2023?", page)
    assert refused.refused, refused.answer


def test_a_bar_named_by_its_letter_is_read_though_the_question_gives_the_charts_letter_range(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder
) -> None:
    """ "the simple bar chart of categories A to I, bar D": "A" and "I" describe the chart,
    "D" names the bar; "simple" and "categories" only qualify what the table holds."""
    letters = "ABCDEFGHI"
    values = ["28", "55", "43", "91", "81", "53", "19", "87", "52"]
    grid = synthetic_grid(
        ["a", "Value"], [[k, v] for k, v in zip(letters, values, strict=True)], title="Bar chart"
    )
    page = table_page("bars", grid)
    question = "In the simple bar chart of categories A to I, what is the value of bar D?"
    answer = _asked(answerer, text_encoder, question, page)
    assert not answer.refused and "91" in answer.answer and "28" not in answer.answer, answer.answer


def test_a_qualifying_word_another_document_holds_does_not_move_the_question_there() -> None:
    """Another document's page says "simple bar chart" and "categories": those words only
    qualify what the bar table holds, so its bar D is still read from it."""
    grid = synthetic_grid(
        ["a", "Value"], [[k, v] for k, v in zip("ABCDE", ["28", "55", "43", "91", "81"], strict=True)]
    )
    grid["title"] = "Bar chart"
    bars = table_page("bars", grid)
    prose = "A simple bar chart of categories is easy to read, and a grouped bar chart compares groups."
    other = PageEvidence(
        "guide",
        1,
        "Charting guide",
        "guide.pdf",
        "pdf_page",
        0.9,
        chunks=[ChunkEvidence("guide", 1, 0, prose, [50.0, 50.0, 550.0, 70.0], [600.0, 800.0], 1, 0.9)],
    )
    answer = ask("In the simple bar chart of categories A to E, what is the value of bar D?", bars, other)
    assert answer is not None and "91" in answer.text


def test_a_french_superlative_asks_for_the_extreme_and_a_comparison_does_not() -> None:
    """ "la plus grande puissance" is the argmax, "le moins d'installations" and "la plus
    petite" the argmin; "plus de 400 MWc" compares and names no extreme."""
    grid = synthetic_grid(
        ["Département", "Nombre", "Puissance (MWc)"],
        [
            ["Aude", "2 846", "349"],
            ["Gard", "15 248", "460"],
            ["Lot", "2 626", "104"],
            ["Tarn", "6 990", "217"],
        ],
        title="Tableau 4 : Puissances installées par département",
    )
    page = table_page("dep", grid)
    largest = ask("Quel département a la plus grande puissance installée ?", page)
    assert largest is not None and largest.operation == "argmax" and "Gard" in largest.text
    fewest = ask("Quel département compte le moins d'installations (nombre) ?", page)
    assert fewest is not None and fewest.operation == "argmin" and "Lot" in fewest.text
    smallest = ask("Quel département a la plus petite puissance installée ?", page)
    assert smallest is not None and smallest.operation == "argmin" and "Lot" in smallest.text
    from service.answer.tables import asks_extreme

    assert asks_extreme("Quel département a la plus grande puissance ?")
    assert not asks_extreme("Quels départements ont plus de 400 MWc ?")


def test_a_name_of_the_question_in_another_language_is_the_tables_title() -> None:
    """ "Produto C" asked of the "Product C Monthly Revenue" chart: the same product, so the
    table answers the Portuguese question; another product is still not this table's."""
    grid = synthetic_grid(
        ["Month", "Revenue ($)"],
        [["Jan", "1197"], ["Feb", "1401"], ["Jun", "2696"], ["Dec", "1095"]],
        title="Product C Monthly Revenue",
    )
    page = table_page("acme", grid, title="acme_product_c_monthly_revenue.png")
    lowest = ask("Em que mês a receita mensal do Produto C foi a menor?", page)
    assert lowest is not None and lowest.operation == "argmin" and "Dec" in lowest.text
    assert_cites_cell(lowest, grid, "Dec", 1, "acme")
    assert ask("Em que mês a receita mensal do Produto Alfa foi a menor?", page) is None


CHECKS = synthetic_grid(
    ["State", "Permit", "Handgun", "Long Gun"],
    [
        ["Alaska", "0", "3,105", "2,877"],
        ["Georgia", "7,144", "0", "20,121"],
        ["Guam", "0", "81", "0"],
        ["Ohio", "24,008", "31,092", "24,555"],
        ["Vermont", "0", "1,222", "1,618"],
        ["Texas", "8,954", "45,126", "51,670"],
    ],
    title="Background checks by state, November",
)


def test_how_many_rows_meet_a_condition_on_the_named_column_is_counted_and_each_cited() -> None:
    """ "How many states reported zero permit checks?": the rows whose Permit cell is 0,
    counted and listed, each cell cited; "diferente de zero" and "more than 20,000" count the
    others; a count of none is an answer naming the condition."""
    page = table_page("checks", CHECKS)
    zero = ask("How many states reported zero permit checks?", page)
    assert zero is not None and zero.operation == "count_where", zero
    assert "3 of its 6 rows have Permit equal to 0: Alaska, Guam and Vermont" in zero.text
    assert len(zero.citations) == 3 and all("Permit: 0" in c.quote for c in zero.citations)
    others = ask("Quantos estados têm verificações de Handgun diferente de zero?", page)
    assert others is not None and "5 das suas 6 linhas têm Handgun diferente de 0" in others.text
    assert "Georgia" not in others.text
    many = ask("How many states had more than 20,000 long gun checks?", page)
    assert many is not None and "3 of its 6 rows have Long Gun above 20,000" in many.text
    assert all(name in many.text for name in ("Georgia", "Ohio", "Texas"))
    none = ask("How many states had more than 90,000 handgun checks?", page)
    assert none is not None and none.text.startswith('According to the table "Background checks')
    assert "0 of its 6 rows have Handgun above 90,000" in none.text and len(none.citations) == 1


def test_a_total_over_the_rows_a_name_selects_sums_only_those_rows() -> None:
    """ "Somando as autuações de JOAO SILVA, qual o valor total das multas?": the fines of
    his rows summed (not the whole column), each of his cells cited."""
    grid = synthetic_grid(
        ["Nº A.I.", "Nome Autuado", "Município", "Valor Multa (R$)"],
        [
            ["679101", "JOAO SILVA", "MANAUS", "10.000,00"],
            ["679102", "MARIA SOUZA", "TEFÉ", "5.000,00"],
            ["679103", "JOAO SILVA", "TEFÉ", "2.500,00"],
            ["679104", "PEDRO LIMA", "MANAUS", "800,00"],
            ["679105", "JOAO SILVA", "COARI", "1.000,00"],
        ],
        title="Relatório de Autuações Ambientais - IBAMA",
    )
    answer = ask(
        "Somando as autuações de JOAO SILVA, qual o valor total das multas?", table_page("ibama", grid)
    )
    assert answer is not None and answer.operation == "sum", answer
    assert 'Valor Multa nas 3 linhas de "JOAO SILVA" é R$ 13.500,00' in answer.text and not answer.unaddressed
    assert len(answer.citations) == 3
    whole = ask("Qual o valor total das multas?", table_page("ibama", grid))
    assert whole is not None and "19.300,00" in whole.text  # no name: the whole column


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How many states reported zero permit checks?", "3 of its 6 rows have Permit equal to 0"),
        ("Quantos estados tiveram mais de 20.000 verificações de long gun?", "3 das suas 6 linhas"),
    ],
)
def test_a_count_by_condition_passes_the_gate_as_an_answer(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder, question: str, expected: str
) -> None:
    """Through the gate: the condition's words ("zero", "mais de 20.000") are no subject the
    page must write, and the count is an answer citing its cells."""
    answer = _asked(answerer, text_encoder, question, table_page("checks", CHECKS, title="Background checks"))
    assert not answer.refused and answer.status == "answer", answer.answer
    assert expected in answer.answer and answer.citations


def test_a_period_written_in_words_picks_its_column_and_the_file_name_names_the_table() -> None:
    """ "Over 1 June to 10 July 2016, which subdivision had the lowest actual rainfall in the
    IMD table?": the worded range meets the Period column's "01-06-2016 To 10-07-2016" (not
    the Day column's), its month is addressed by value, and "IMD" by the file name."""
    grid = synthetic_grid(
        [
            "Subdivision",
            "Day:10-07-2016 / ACTUAL (mm)",
            "Day:10-07-2016 / NORMAL (mm)",
            "Period:01-06-2016 To 10-07-2016 / ACTUAL",
            "Period:01-06-2016 To 10-07-2016 / NORMAL",
        ],
        [
            ["ASSAM", "17.9", "17.1", "441.9", "591.2"],
            ["GUJARAT", "2.0", "8.1", "77.1", "184.4"],
            ["DELHI", "0.0", "7.4", "90.3", "113.8"],
            ["KERALA", "20.1", "30.2", "47.5", "700.1"],
        ],
        title="STATE-WISE RAINFALL DISTRIBUTION",
    )
    page = table_page("in_imd_rainfall_2016", grid)
    for question in (
        "Over 1 June to 10 July 2016, which subdivision had the lowest actual rainfall in the IMD table?",
        "De 1 de junho a 10 de julho de 2016, qual subdivisão teve a menor chuva real na tabela do IMD?",
    ):
        answer = ask(question, page)
        assert answer is not None and answer.operation == "argmin", question
        assert "KERALA" in answer.text and "47.5" in answer.text, answer.text
    day = ask("On 10 July 2016, which subdivision had the lowest actual rainfall in the IMD table?", page)
    assert day is not None and "DELHI" in day.text  # the Day column


def test_a_cell_written_as_no_value_is_a_refusal_that_says_so(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder
) -> None:
    """The asked cell reads "-": no value is given, so the answer is a refusal naming the
    cell, cited; the row's other cells are not offered as the answer."""
    grid = synthetic_grid(
        ["States", "1951-1961", "1961-1971", "2001-2011"],
        [
            ["Assam", "34.98", "34.95", "17.07"],
            ["Mizoram", "-", "24.93", "23.48"],
            ["Goa", "7.77", "34.77", "8.23"],
        ],
        title="Decadal growth rate of population (Per cent)",
    )
    page = table_page("census", grid, title="Decadal growth")
    refused = _asked(
        answerer, text_encoder, "What was the decadal growth rate of Mizoram in 1951-1961?", page
    )
    assert refused.refused and refused.status == "refused"
    assert 'no value is given for Mizoram in 1951-1961 (the cell reads "-")' in refused.answer
    assert len(refused.citations) == 1 and "24.93" not in refused.answer
    answered = _asked(
        answerer, text_encoder, "What was the decadal growth rate of Mizoram in 1961-1971?", page
    )
    assert not answered.refused and "24.93" in answered.answer


def test_rows_named_together_with_a_total_asked_read_the_total_column() -> None:
    """ "Did Ohio or Texas have more checks in total? Give both totals.": each state's cell
    of the Totals column, not the table's grand total (nor "Give" as a name)."""
    grid = synthetic_grid(
        ["State", "Permit", "Handgun", "Totals"],
        [
            ["Georgia", "7,144", "10", "7,154"],
            ["Ohio", "24,008", "31,092", "55,100"],
            ["Texas", "8,954", "45,126", "54,080"],
            ["Totals", "40,106", "76,228", "116,334"],
        ],
        title="Background checks by state, November",
    )
    answer = ask(
        "Did Ohio or Texas have more checks in total in November? Give both totals.", table_page("t", grid)
    )
    assert answer is not None and answer.operation == "lookup", answer
    assert "55,100 for Ohio" in answer.text and "54,080 for Texas" in answer.text
    assert "116,334" not in answer.text and len(answer.citations) == 2


def test_a_french_question_gets_its_answer_in_french() -> None:
    """The French glossary meets the English labels ("permis" -> Permit) and the sentence is
    written in French."""
    page = table_page("checks", CHECKS)
    zero = ask("Combien d'États ont zéro vérification de permis ?", page)
    assert zero is not None and zero.operation == "count_where", zero
    assert zero.text.startswith("Selon le tableau « Background checks by state, November », 3 de ses 6")
    assert "Permit égal à 0: Alaska, Guam et Vermont" in zero.text
    most = ask("Quel État a le plus de vérifications de permis ?", page)
    assert most is not None and "Ohio a la valeur la plus élevée de Permit : 24,008" in most.text


def test_how_many_of_a_thing_the_prose_speaks_of_is_no_count_of_rows() -> None:
    """ "Quantas cabeças de atenção ... OTSL?" over a results table with four OTSL rows: the
    page's text states the heads ("heads=8"); the rows naming OTSL are no answer."""
    grid = synthetic_grid(
        ["Language", "enc", "dec", "TEDs"],
        [["OTSL", "6", "6", "0.955"], ["HTML", "6", "6", "0.955"], ["OTSL", "4", "4", "0.938"]]
        + [["OTSL", "2", "4", "0.934"], ["OTSL", "4", "2", "0.946"]],
        title="Table 1. HPO results",
    )
    page = table_page("otsl", grid)
    prose = "We picked the configuration (enc=6, dec=6, heads=8) that produced the best quality."
    page.chunks.append(
        ChunkEvidence("otsl", 1, 9, prose, [50.0, 400.0, 500.0, 420.0], [595.0, 842.0], 2, 0.9)
    )
    answer = ask("No artigo sobre OTSL, quantas cabeças de atenção tinha a configuração escolhida?", page)
    assert answer is None or answer.operation != "count"
    rows = ask("How many rows of the HPO results table are OTSL?", table_page("otsl", grid))
    assert rows is not None and rows.operation == "count" and "4" in rows.text


def test_a_season_only_another_line_names_is_not_the_cell_read() -> None:
    """ "Área ... na safra 15/16" of the IMEA 16/17 table, whose "∆ Safra 15/16 para 16/17"
    row is the only line naming 15/16: the area cell read (row 0) is another season's; a
    season in the title, or in a line read, is the cell's own."""
    grid = synthetic_grid(
        ["Regiões do IMEA", "Norte", "Sudeste"],
        [
            ["Área 16/17 (ha)", "165.776", "512.300"],
            ["∆ Safra 15/16 para Safra 16/17*", "1,21 p.p.", "2,20 p.p."],
        ],
        title="MILHO SAFRA 16/17: ACOMPANHAMENTO DE COLHEITA POR REGIÃO",
    )
    (table,) = evidence_tables([table_page("imea", grid)])
    area = _Found("lookup", [(0, 1)], 1.0)
    assert _labels_another_line("15/16", table, area)
    assert not _labels_another_line("16/17", table, area)  # the title's season
    assert not _labels_another_line("15/16", table, _Found("lookup", [(1, 1)], 1.0))  # the delta read


def test_a_chart_read_from_its_picture_answers_though_it_does_not_print_the_place_asked() -> None:
    """The picture of a weather chart prints no "Seattle": a question pointing at the chart by
    its place is answered from it; a table of printed figures still needs the place."""
    months = ["Jan", "Feb", "Mar"]
    rows = [
        [m, s, r] for m, s, r in zip(months, ["33.1", "40.2", "58.8"], ["64.5", "50.0", "70.2"], strict=True)
    ]
    picture = synthetic_grid(
        ["month", "sun", "rain"], rows, title=f"Count of Records (stacked bar chart; {TITLE_NOTE})"
    )
    question = "In the Seattle weather stacked bar chart, how many rain records are counted in February?"
    answer = ask(question, table_page("chart", picture))
    assert answer is not None and "50.0" in answer.text
    printed = synthetic_grid(["month", "sun", "rain"], rows, title="Count of Records")
    assert ask(question, table_page("printed", printed)) is None
    assert ask("How many rain records does Seattle count in February?", table_page("chart", picture)) is None


def test_a_question_asking_both_extremes_gets_both(census: Grid) -> None:
    page = table_page("census", census)
    answer = ask(
        "Qual estado teve a maior taxa em 1981-1991 e qual teve a menor? Informe as duas taxas.", page
    )
    assert answer is not None and answer.operation == "argmax"
    assert "Nagaland teve o maior valor em 1981-1991: 56.08%" in answer.text
    assert "Kerala teve o menor valor em 1981-1991: 14.32%" in answer.text
    assert len(answer.citations) == 2 and answer.text.count("[census p.1]") == 1


def test_a_count_over_a_dates_row_names_the_state_its_regions_make_up(imea: Grid) -> None:
    """ "for Mato Grosso": the state total column the regions add up to, not another column."""
    page = table_page("imea", imea)
    question = (
        "In IMEA's corn harvest tracking for Mato Grosso, how many regions had harvested more than "
        "90% of their area by 28 July 2017, and which were they?"
    )
    answer = ask(question, page)
    assert answer is not None and answer.operation == "count_where", answer
    assert "2 of its 7 columns" in answer.text and "Médio-Norte (96,86%) and Norte (92,53%)" in answer.text


def test_an_extreme_of_two_columns_the_question_names_reads_both() -> None:
    grid = synthetic_grid(
        ["State", "Permit / Handgun", "Redemption / Handgun", "Redemption / Long Gun"],
        [["Texas", "10", "5,748", "5,331"], ["Ohio", "90", "4,100", "6,020"], ["Utah", "30", "200", "310"]],
        title="NICS Firearm Background Checks",
    )
    page = table_page("nics", grid)
    both = ask("Which state had the most redemption checks, for handguns and for long guns?", page)
    assert both is not None and both.operation == "argmax" and len(both.citations) == 2, both
    assert "Texas had the highest value of Redemption / Handgun: 5,748" in both.text
    assert "Ohio had the highest value of Redemption / Long Gun: 6,020" in both.text
    one = ask("Which state had the most redemption checks for handguns?", page)
    assert one is not None and len(one.citations) == 1 and "5,748" in one.text


def test_a_row_named_by_a_month_alone_answers_the_month_of_the_titles_year() -> None:
    """A monthly rainfall chart read from its picture: rows "Jan" ... "Dez", the year in the
    title. "em março de 2024" is the row "Mar"; a month alone names it when it is its whole
    label. Another year than the title's is not this table's."""
    months = ["Jan", "Fev", "Mar", "Abr", "Mai", "Jun", "Jul", "Ago", "Set", "Out", "Nov", "Dez"]
    values = ["95", "130", "205", "310", "290", "402", "300", "187", "120", "80", "60", "70"]
    grid = synthetic_grid(
        ["Mês", "Precipitação (mm)"],
        [[m, v] for m, v in zip(months, values, strict=True)],
        title=f"Precipitação mensal em Recife 2024 (mm) ({TITLE_NOTE})",
    )
    page = table_page("chuvas", grid)
    chart = "segundo o gráfico de precipitação mensal"
    pt = ask(f"Quanto choveu no Recife em março de 2024, {chart}?", page)
    assert pt is not None and "205" in pt.text
    en = ask("According to the monthly rainfall chart, how much rain fell in Recife in August 2024?", page)
    assert en is not None and "187" in en.text
    assert ask(f"Quanto choveu no Recife em março de 2019, {chart}?", page) is None


def test_the_first_row_past_a_threshold_answers_when_did_it_first_pass() -> None:
    """A weekly harvest series: "when did Médio-Norte pass 50% for the first time" is the
    first row, in the table's order, whose cell is a share above 50% (the hectares row above
    the weeks is no share); asked for a threshold no row reaches, no such row is made up."""
    grid = synthetic_grid(
        ["Semana", "Médio-Norte", "Oeste"],
        [
            ["Área 16/17", "2.025.045 ha", "1.210.300 ha"],
            ["23-jun-17", "12,30%", "8,10%"],
            ["30-jun-17", "45,11%", "20,75%"],
            ["7-jul-17", "61,41%", "38,02%"],
            ["14-jul-17", "79,90%", "55,60%"],
        ],
        title="Milho safra 16/17: acompanhamento de colheita por região",
    )
    page = table_page("milho", grid)
    answer = ask("Em qual semana a colheita do Médio-Norte passou de 50% pela primeira vez?", page)
    assert answer is not None and answer.operation == "first_where"
    assert "7-jul-17" in answer.text and "61,41%" in answer.text and "acima de 50%" in answer.text
    answer = ask("In which week did the Oeste harvest exceed 50% for the first time?", page)
    assert answer is not None and answer.operation == "first_where" and "14-jul-17" in answer.text
    answer = ask("Em qual semana o Oeste passou de 90% pela primeira vez?", page)
    assert answer is None or answer.operation != "first_where"


WHO_BANDS = synthetic_grid(
    ["Pangenotypic DAA regimens", "", "", "Non-pangenotypic DAA regimen"],
    [
        [
            "Sofosbuvir/ daclatasvir",
            "Sofosbuvir/ velpatasvir",
            "Glecaprevir/ pibrentasvir",
            "Sofosbuvir/ ledipasvir",
        ],  # noqa: E501
        [">26 kg 400/60 mg od", ">30 kg 400/100 mg od (FDC tablet)", ">45 kg 300/120 mg", "≥35kg 90/400 mg"],
        ["14–25 kg 200 mg/30 mg", "17–29 kg 200/50 mg od", "30–<45 kg 250/100 mg od", "17– 35kg 45/200 mg"],
        ["", "<17 kg 150/37.5 mg od", "<20 kg 150/60mg od", "<17 kg 33.75/150 mg"],
    ],
    title="TABLE 4.2. Dosing by weight bands",
)


def test_a_header_line_under_a_spanning_label_names_the_columns() -> None:
    """WHO's Table 4.2: "Pangenotypic DAA regimens" spans three columns, the drug names under
    it are stored as the first body row; they become the column labels."""
    (table,) = evidence_tables([table_page("who", WHO_BANDS)])
    assert table.columns[1] == "Pangenotypic DAA regimens Sofosbuvir/ velpatasvir"
    assert table.columns[3] == "Non-pangenotypic DAA regimen Sofosbuvir/ ledipasvir"
    assert table.rows[0][1].text.startswith(">30 kg")
    # a first row holding a value is a body row: nothing is promoted
    plain = synthetic_grid(["Região", ""], [["Médio-Norte", "2.025.045"], ["Norte", "1.100"]])
    (kept,) = evidence_tables([table_page("imea", plain)])
    assert kept.columns == ["Região", ""] and kept.rows[0][0].text == "Médio-Norte"


def test_the_cell_of_the_named_column_holding_the_asked_band_answers() -> None:
    """Each cell carries its own weight band: the drug's column, and the one cell of it that
    holds the question's "30 kg" (the glecaprevir column's "30–<45 kg" is another drug's)."""
    question = "What is the sofosbuvir/velpatasvir dose for children weighing more than 30 kg?"
    answer = ask(question, table_page("who", WHO_BANDS))
    assert answer is not None and answer.operation == "lookup"
    assert "400/100 mg" in answer.text and "Sofosbuvir/ velpatasvir" in answer.text
    (citation,) = answer.citations
    assert citation.bbox == WHO_BANDS["rows"][1][1]["bbox"]
    gp = "What is the glecaprevir/pibrentasvir dose for a child of 30 kg?"
    answer = ask(gp, table_page("who", WHO_BANDS))
    assert answer is not None and "250/100 mg" in answer.text
    # two cells of the column hold the number: which band is meant is unclear, no answer
    assert ask("What is the sofosbuvir/ledipasvir dose for 17 kg?", table_page("who", WHO_BANDS)) is None


def test_the_sum_of_every_row_is_the_columns_sum_not_a_row_the_documents_words_match() -> None:
    """ "a soma de todas as multas listadas": every row's fine, though one row's cells hold the
    words that describe the document ("Controle ambiental", "AMAZONAS")."""
    grid = synthetic_grid(
        ["Nº A.I.", "Infração", "Estado", "Valor Multa"],
        [
            ["679199", "Flora", "AMAZONAS", "39.000,00"],
            ["679200", "Controle ambiental", "AMAZONAS", "500,00"],
            ["679201", "Fauna", "AMAZONAS", "1.000,00"],
        ],
        title="Relatório de Autuações Ambientais - Amazonas",
    )
    question = "Qual é a soma de todas as multas listadas no relatório de autuações ambientais no Amazonas?"
    answer = ask(question, table_page("ibama", grid))
    assert answer is not None and answer.operation == "sum", answer
    assert "40.500,00" in answer.text


def test_a_question_naming_a_table_reads_a_page_whose_rows_the_search_did_not_return() -> None:
    """The dosing table's page came back with its prose chunk only: asked "pela tabela de
    doses", its stored table chunks are read; a question naming no table does not reach them."""
    full = table_page("who", WHO_BANDS)
    text = "Dosing of DAAs in children by weight."
    prose = ChunkEvidence("who", 1, 9, text, [0, 0, 1, 1], [600, 800], 1, 0.0)
    returned = PageEvidence("who", 1, "who", "who.pdf", "pdf_page", 1.0, chunks=[prose])
    stored = [{"chunk_no": c.chunk_no, "text": c.text, "bbox": c.bbox, "table": c.table} for c in full.chunks]

    def page_chunks(doc_id: str, page_no: int) -> list[dict]:
        return stored

    question = "Pela tabela de doses, qual a dose de glecaprevir/pibrentasvir para uma criança de 35 kg?"
    answer = TableAnswerer().answer(question, "pt", [returned], page_chunks)
    assert answer is not None and "250/100 mg" in answer.text  # "35 kg" is in the band "30–<45 kg"
    unnamed = "Qual a dose de glecaprevir/pibrentasvir para uma criança de 35 kg?"
    assert TableAnswerer().answer(unnamed, "pt", [returned], page_chunks) is None


WHO_SVR = synthetic_grid(
    ["", "Non-specialist care, SVR12 % (95% CI)", "Specialist care, SVR12 % (95% CI)", "p value"],
    [
        ["People who inject drugs", "", "", ""],
        ["Comparator studies", "93% (86–98)", "95% (92–97)", "0.460"],
        ["Non-comparator studies", "96% (94–98) (n=22 studies)", "92% (86–96) (n=8 studies)", "0.145"],
        ["General population", "", "", ""],
        ["Comparator studies", "95% (92–98)", "94% (91–96)", "0.466"],
        ["Non-comparator studies", "93% (87–97) (n=5 studies)", "94% (91–97) (n=9 studies)", "0.737"],
    ],
    title="TABLE 6.1. Comparison of SVR12 outcomes",
)


def test_rows_repeated_under_section_rows_are_named_with_their_section() -> None:
    """WHO's Table 6.1 repeats "Comparator studies" under each population: the largest p
    value is named by its population and study group, not by its SVR cell, and carries no
    "%" (the SVR cells beside it are percentages, the p value is not)."""
    question = "In Table 6.1, SVR12 under non-specialist and specialist care: which group has the largest p?"
    answer = ask(question, table_page("who", WHO_SVR))
    assert answer is not None and answer.operation == "argmax"
    assert "General population · Non-comparator studies" in answer.text and "0.737" in answer.text
    assert "0.737%" not in answer.text
    rows = [row[0].text for row in evidence_tables([table_page("who", WHO_SVR)])[0].rows]
    assert rows[1] == "People who inject drugs · Comparator studies" and rows[3] == "General population"


def test_two_numbers_asked_of_one_row_read_both_columns() -> None:
    """ "quantos estados no dia 10-07 e quantos no acumulado": the Excess row's cell in the
    period column and in the day column, each with its label; asked once, one cell."""
    grid = synthetic_grid(
        ["CATEGORY", "Day:10-07-2016 / NO.OF STATES", "Period:01-06-2016 To 10-07-2016 / NO.OF STATES"],
        [["Excess", "12", "5"], ["Normal", "3", "22"], ["Deficient", "6", "8"]],
        title="CATEGORYWISE DISTRIBUTION OF NO.OF STATES",
    )
    page = table_page("imd", grid)
    both = "Quantos estados na categoria Excess no dia 10-07-2016 e quantos no acumulado 01-06 a 10-07-2016?"
    answer = ask(both, page)
    assert answer is not None and "é 5" in answer.text and "é 12" in answer.text, answer
    assert len(answer.citations) == 2
    once = ask("Quantos estados ficaram na categoria Excess no acumulado de 01-06 a 10-07-2016?", page)
    assert once is not None and "é 5" in once.text and "12" not in once.text


def test_a_word_qualifying_the_tables_labels_in_the_plural_does_not_refuse(
    answerer: ExtractiveAnswerer, text_encoder: TextEncoder
) -> None:
    """ "do tipo 'Multiple' (vários tipos de arma)": "tipo" and "tipos" qualify the column's
    label and are on no page; in either number they do not make the table another subject."""
    grid = synthetic_grid(
        ["State", "Permit", "Handgun", "Multiple"],
        [
            ["Texas", "10,000", "50,000", "3,048"],
            ["Ohio", "5,000", "20,000", "900"],
            ["Iowa", "8,785", "267", "4"],
        ],
        title="NICS Firearm Background Checks November - 2015",
    )
    question = "Qual estado registrou mais verificações do tipo 'Multiple' (vários tipos de arma) em 2015?"
    result = table_result(question, [table_page("nics", grid)])
    result.query_vector = text_encoder.embed([question])[0]
    answer = answerer.answer(question, result)
    assert not answer.refused and "Texas" in answer.answer and "3,048" in answer.answer, answer.answer


def test_the_earliest_and_the_latest_date_are_read_from_the_date_column() -> None:
    """ "A autuação com data mais antiga": the row of the earliest date in the date column
    (not the largest fine "mais" would otherwise ask for), named in the asked label column,
    with the other cell the question asks of it ("o valor da multa"), each cell cited."""
    path = corpus_path("pdf", "br_ibama_autuacoes_amazonas_2010_p2.pdf")
    page = table_page("ibama", corpus_grid(path, header_rows=1, title="Relatório de Autuações Ambientais"))
    question = "Qual é a autuação com data mais antiga? Diga o autuado, a data e o valor da multa."
    earliest = ask(question, page)
    assert earliest is not None and earliest.operation == "earliest", earliest
    assert "08/03/2010" in earliest.text and "W G DE ALMEIDA NETO" in earliest.text
    assert "10.500,00" in earliest.text and len(earliest.citations) == 2
    latest = ask("Which fine was issued most recently, and in which municipality?", page)
    assert latest is not None and latest.operation == "latest", latest
    assert "09/11/2010 (PARINTINS)" in latest.text  # the rows named by the column asked


def test_a_table_without_a_date_column_has_no_earliest_row() -> None:
    grid = synthetic_grid(
        ["Região", "Área (ha)"], [["Norte", "10"], ["Sul", "20"], ["Leste", "30"]], title="Área por região"
    )
    assert ask("Qual a região mais antiga?", table_page("area", grid)) is None


def test_a_unit_the_question_spells_out_names_the_column_written_with_its_symbol() -> None:
    """ "Quantos milímetros": the ACTUAL (mm) column of the day, not its departure (%) or
    category columns, which the date names as well."""
    path = corpus_path("pdf", "in_imd_rainfall_distribution_2016-07-10.pdf")
    page = table_page("imd", corpus_grid(path, header_rows=2, title="State-wise rainfall distribution"))
    question = "Qual subdivisão teve a maior chuva observada no dia 10/07/2016, e quantos milímetros?"
    answer = ask(question, page)
    assert answer is not None and answer.operation == "argmax", answer
    assert "NAGAR HAVELI" in answer.text and "59.9 mm" in answer.text


def test_a_two_letter_symbol_written_alike_names_its_column() -> None:
    """ "(bc)" names the "bc (V/dec)" column, too short to name it as a word; "BC" or a
    symbol the table does not start a label with names none."""
    grid = synthetic_grid(
        ["Inhibitor concentration (g)", "bc (V/dec)", "ba (V/dec)"],
        [["0", "0.0335", "0.0409"], ["2", "1.9460", "0.0596"], ["4", "0.0163", "0.2369"]],
        title="Potentiodynamic polarization data",
    )
    page = table_page("dib", grid)
    answer = ask("With which inhibitor concentration was the cathodic slope (bc) the largest?", page)
    assert answer is not None and answer.operation == "argmax" and "1.9460" in answer.text, answer
    assert ask("With which inhibitor concentration was the BC the largest?", page) is None


def test_a_name_of_the_table_its_page_lacks_is_known_by_the_other_names_of_the_phrase() -> None:
    """ "the FBI NICS table": the page names it NICS alone, so "FBI" asks about no other
    table; a name outside the words naming the table ("Texas FBI office") still refuses."""
    grid = synthetic_grid(
        ["State", "Permit", "Admin"],
        [["Michigan", "10", "1,025"], ["Ohio", "90", "4"], ["Utah", "30", "0"]],
        title="NICS Firearm Background Checks November - 2015",
    )
    page = table_page("nics", grid)
    answer = ask("Which state had the most Admin checks in the FBI NICS table for November 2015?", page)
    assert answer is not None and "Michigan" in answer.text and "1,025" in answer.text, answer
    assert ask("Which state had the most Admin checks of the FBI in the NICS table?", page) is None


def test_how_many_rows_a_column_of_marks_marks_is_counted_and_each_named() -> None:
    """A feature matrix ("X" where an authority allows the action): "how many ... with no
    authority" counts the rows the "No Authority" column marks, naming and citing each; a
    column that marks every row, or holds other text, is no such count."""
    grid = synthetic_grid(
        ["User action", "*JOBCTL", "QIBM_DB_SQLADM", "No Authority"],
        [
            ["SET CURRENT DEGREE", "X", "X", ""],
            ["STRDBMON for own job", "X", "X", "X"],
            ["Visual Explain", "X", "X", "X"],
            ["DUMP PLAN CACHE", "X", "X", ""],
        ],
        title="Table 2-2 Comparison of the function usage IDs and *JOBCTL authority",
    )
    page = table_page("ibm", grid)
    answer = ask("How many of the listed user actions can be performed with no authority, and which?", page)
    assert answer is not None and answer.operation == "count_marked", answer
    assert "2 of its 4 rows" in answer.text and "STRDBMON for own job and Visual Explain" in answer.text
    assert len(answer.citations) == 2
    every = ask("How many of the listed user actions need *JOBCTL?", page)  # it marks every row
    assert every is None or every.operation != "count_marked", every


def test_per_capita_names_no_capital_column() -> None:
    """ "Per capita" is written so in every language: no cognate of the "Capital" column, and
    its absence from a table in another language than the question's still counts."""
    rows = [["Goa", "4,055,567", "330,053"], ["Bihar", "21,016,708", "5,329,000"]]
    grid = synthetic_grid(["States", "Revenue", "Capital"], rows)
    page = table_page("outlay", grid, title="Public Health Outlay 2012-13")
    assert ask("What was the per capita health outlay of Goa?", page) is None
    assert ask("Qual foi o gasto em saúde per capita de Goa?", page) is None
    capital = ask("What was the capital health outlay of Goa?", page)
    assert capital is not None and "330,053" in capital.text, capital


def test_a_recent_week_asked_of_a_table_without_dates_keeps_its_extreme() -> None:
    """ "The highest rainfall in the most recent week" over a table with no date column: the
    highest value, as before "recent" read dates; "a mais recente" alone reads none."""
    grid = synthetic_grid(
        ["State", "Rainfall (mm)"], [["Goa", "59.9"], ["Kerala", "36.9"], ["Assam", "12.0"]], title="Rainfall"
    )
    page = table_page("rain", grid)
    highest = ask("Which state had the highest rainfall in the most recent week?", page)
    assert highest is not None and highest.operation == "argmax" and "Goa" in highest.text, highest
    assert ask("Qual o estado mais recente?", page) is None


def test_two_columns_named_each_by_a_word_of_their_own_are_both_read() -> None:
    """ "La sensibilité et la spécificité du test Architect": one row, the two columns the
    question names, each value with its column and each cell cited."""
    grid = synthetic_grid(
        ["Index test", "Sensitivity % (95% CI)", "Specificity % (95% CI)"],
        [["Abbott Architect HCV Ag", "93.4", "98.7"], ["Ortho ELISA", "91.0", "97.0"]],
        title="TABLE 8.1 Summary of diagnostic accuracy of HCV core antigen assays",
    )
    page = table_page("who", grid)
    question = (
        "D'après le tableau 8.1, quelles sont la sensibilité et la spécificité du test Abbott Architect ?"
    )
    answer = ask(question, page)
    assert answer is not None and answer.operation == "lookup", answer
    assert "Sensitivity % (95% CI): 93.4" in answer.text and "Specificity % (95% CI): 98.7" in answer.text
    assert len(answer.citations) == 2
