"""Table answers that name the cell: a part named with its whole, rows named by numbers
tied to a column ("6 encoder layers", "10 g"), extremes over the rows the question names
or over the grand total, rows named by the column the question asks by, and tables the
search returned in part completed from the page's stored chunks."""

from __future__ import annotations

from typing import Any

from service.answer.gate import question_language
from service.answer.tables import PageChunks, TableAnswer, TableAnswerer, cognate, evidence_tables
from tests.utils.tables import Grid, cell_centre, synthetic_grid, table_page


def ask(question: str, grid: Grid, page_chunks: PageChunks | None = None, **page: Any) -> TableAnswer | None:
    pages = [table_page("doc", grid, **page)]
    return TableAnswerer().answer(question, question_language(question), pages, page_chunks)


def cites(answer: TableAnswer, grid: Grid, row: str, column: int) -> bool:
    """Whether the answer's one citation holds the centre of the cell (row, column)."""
    x, y = cell_centre(grid, row, column)
    return len(answer.citations) == 1 and (
        answer.citations[0].bbox[0] <= x <= answer.citations[0].bbox[2]
        and answer.citations[0].bbox[1] <= y <= answer.citations[0].bbox[3]
    )


HARVEST = synthetic_grid(
    ["Regiões", "Centro-Sul", "Nordeste", "Norte", "Oeste", "Mato Grosso"],
    [
        ["Área 16/17 (ha)", "100", "200", "300", "400", "1.000"],
        ["7-jul-17", "40,00%", "45,36%", "50,00%", "60,00%", "48,85%"],
        ["14-jul-17", "48,85%", "50,22%", "56,13%", "64,14%", "62,02%"],
    ],
    title="MILHO SAFRA 16/17",
)


def test_a_part_named_with_its_whole_is_read_from_the_part_column() -> None:
    answer = ask("Qual o percentual de colheita no Nordeste de Mato Grosso em 14/07/2017?", HARVEST)
    assert answer is not None and answer.operation == "lookup"
    assert "50,22%" in answer.text and "62,02%" not in answer.text
    assert cites(answer, HARVEST, "14-jul-17", 2)
    whole = ask("Qual o percentual de colheita de Mato Grosso em 14/07/2017?", HARVEST)
    assert whole is not None and "62,02%" in whole.text


LAYERS = synthetic_grid(
    ["# / enc-layers", "# / dec-layers", "Language", "TEDs / all", "Inference / time (secs)"],
    [
        ["6", "6", "OTSL", "0.955", "2.73"],
        ["6", "6", "HTML", "0.955", "5.39"],
        ["4", "4", "OTSL", "0.927", "1.97"],
        ["4", "4", "HTML", "0.938", "3.77"],
        ["4", "2", "OTSL", "0.942", "1.22"],
        ["4", "2", "HTML", "0.931", "2.01"],
    ],
    title="Table 1. HPO performed in OTSL and HTML",
)


def test_numbers_tied_to_columns_name_the_row() -> None:
    answer = ask("What was the inference time of HTML with 4 encoder and 4 decoder layers?", LAYERS)
    assert answer is not None and "3.77" in answer.text
    x, y = LAYERS["rows"][3][4]["bbox"][0] + 1, LAYERS["rows"][3][4]["bbox"][1] + 1
    (citation,) = answer.citations
    assert citation.bbox[0] <= x <= citation.bbox[2] and citation.bbox[1] <= y <= citation.bbox[3]
    teds = ask("What TEDs score (all) did OTSL reach with 4 encoder and 2 decoder layers?", LAYERS)
    assert teds is not None and "0.942" in teds.text
    # the numbers alone name two rows (OTSL and HTML): no answer rather than a guess
    assert ask("What was the inference time with 6 encoder and 6 decoder layers?", LAYERS) is None
    # ... and named each by its own word, both are read, each value with its row and its cell cited
    both = ask("With 6 encoder and 6 decoder layers, what inference time did OTSL and HTML achieve?", LAYERS)
    assert both is not None and "2.73 secs for OTSL and 5.39 secs for HTML" in both.text
    assert len(both.citations) == 2
    # in Portuguese, a number's word may come after a stop word ("6 no decodificador") and
    # is read through the glossary ("camadas": layers, "codificador": encoder)
    pt = ask(
        "Qual foi o tempo de inferência do HTML com 4 camadas no codificador e 4 no decodificador?", LAYERS
    )
    assert pt is not None and "3.77" in pt.text


def test_an_extreme_runs_over_the_rows_the_question_names() -> None:
    answer = ask("What was the lowest inference time of HTML?", LAYERS)
    assert answer is not None and answer.operation == "argmin"
    assert "2.01" in answer.text and "1.22" not in answer.text
    pt = ask("Qual foi o menor tempo de inferência do OTSL?", LAYERS)  # "inferência" ~ "Inference"
    assert pt is not None and "1.22" in pt.text and pt.text.startswith("Segundo a tabela")


CORROSION = synthetic_grid(
    [
        "Inhibitor / concentration (g)",
        "Ecorr (V)",
        "Polarization / resistance (Ω)",
        "Corrosion / rate (mm/year)",
    ],
    [
        ["0", "0.9393", "24.0910", "2.8163"],
        ["2", "0.8276", "121.440", "1.5054"],
        ["4", "0.8825", "42.121", "0.9476"],
        ["10", "0.5356", "246.080", "0.0919"],
    ],
    title="Table 1 Potentiodynamic polarization data for stainless steel",
)


def test_a_number_with_the_unit_of_the_label_column_names_the_row() -> None:
    answer = ask("What is the corrosion rate of stainless steel with 10 g of inhibitor?", CORROSION)
    assert answer is not None and "0.0919" in answer.text
    assert cites(answer, CORROSION, "10", 3)
    # Portuguese over the English table: the glossary ("taxa" rate) and cognates ("corrosão")
    pt = ask("Qual a taxa de corrosão do aço sem inibidor (0 g)?", CORROSION)
    assert pt is not None and "2.8163" in pt.text and cites(pt, CORROSION, "0", 3)
    assert ask("What is the corrosion rate with 3 g of inhibitor?", CORROSION) is None  # no such row


OUTLAY = synthetic_grid(
    ["State", "Revenue / Medical & / Public / Health", "Capital", "Total"],
    [
        ["Alpha", "900", "10", "910"],
        ["Beta", "500", "700", "1,200"],
        ["Gamma", "50", "5", "55"],
        ["Delta", "70", "10", "80"],
    ],
    title="Table: 5 Public Health Outlay 2012-13 (Rs. in 000)",
)


def test_the_largest_total_is_read_from_the_grand_total_column() -> None:
    answer = ask("Which state had the largest total public health outlay in 2012-13?", OUTLAY)
    assert answer is not None and answer.operation == "argmax"
    assert "Beta" in answer.text and "1,200" in answer.text and "Alpha" not in answer.text
    assert cites(answer, OUTLAY, "Beta", 3)
    least = ask("Qual estado teve o menor gasto público total em saúde em 2012-13?", OUTLAY)
    assert least is not None and "Gamma" in least.text and "55" in least.text


FINES = synthetic_grid(
    ["Nº", "Data Infração", "Nome Autuado", "Nº A.I.", "Valor Multa"],
    [
        ["11", "10/03/2010", "JOSE DA SILVA", "679101", "1.000,00"],
        ["12", "12/03/2010", "MARIA SOUZA", "679150", "39.000,00"],
        ["13", "18/03/2010", "J.J.B.GUIMARAES", "677883", "63.668,00"],
        ["14", "19/03/2010", "IGUAÇU LTDA", "678501", "4.500,00"],
    ],
    title="Relatório de Autuações Ambientais",
)


def test_the_rows_are_named_by_the_column_the_question_asks_by() -> None:
    answer = ask("Qual autuado recebeu a maior multa?", FINES)
    assert answer is not None and answer.operation == "argmax"
    assert "J.J.B.GUIMARAES" in answer.text and "63.668,00" in answer.text
    assert "18/03/2010" not in answer.text
    assert cites(answer, FINES, "13", 4)


def _stored(grid: Grid, rows_per_chunk: int) -> list[dict[str, Any]]:
    """The page's chunk payloads as the store holds them (Carta.page_chunks)."""
    page = table_page("doc", grid, rows_per_chunk=rows_per_chunk)
    return [
        {"chunk_no": c.chunk_no, "text": c.text, "bbox": c.bbox, "page_size": c.page_size, "table": c.table}
        for c in page.chunks
    ]


def test_a_table_the_search_returned_in_part_is_completed_from_the_page_chunks() -> None:
    grid = dict(OUTLAY, body_rows=len(OUTLAY["rows"]))
    stored = _stored(grid, 1)
    asked: list[tuple[str, int]] = []

    def page_chunks(doc_id: str, page_no: int) -> list[dict[str, Any]]:
        asked.append((doc_id, page_no))
        return stored

    partial = table_page("doc", grid, rows_per_chunk=1)
    partial.chunks = partial.chunks[:1]  # the search returned Alpha's row only
    question = "Which state had the largest total public health outlay in 2012-13?"
    assert TableAnswerer().answer(question, "en", [partial]) is None  # an extreme needs every row
    answer = TableAnswerer().answer(question, "en", [partial], page_chunks)
    assert answer is not None and "Beta" in answer.text and asked == [("doc", 1)]
    # a table already whole is not read again; `body_rows` tells it whole
    whole = table_page("doc", grid, rows_per_chunk=1)
    (table,) = evidence_tables([whole], page_chunks)
    assert table.complete and asked == [("doc", 1)]


def test_body_rows_tells_a_table_complete_or_not() -> None:
    page = table_page("doc", dict(OUTLAY, body_rows=5))  # a fifth row the evidence lacks
    (table,) = evidence_tables([page])
    assert not table.complete
    assert ask("Which state had the largest total public health outlay?", dict(OUTLAY, body_rows=5)) is None


def test_cognates_are_long_words_sharing_their_stem() -> None:
    assert cognate("corrosao", "corrosion") and cognate("inferencia", "inference")
    assert cognate("populacao", "population")
    assert not cognate("produto", "production") and not cognate("norte", "nordeste")
    assert not cognate("concentracao", "consumption")


BULLETIN = synthetic_grid(
    ["Ponto - Código", "Local da Coleta", "Categoria"],
    [
        ["Periperi - SSA PR 100", "Na saída de acesso à praia", "Própria"],
        ["Periperi - SSA PR 100", "Na saída de acesso à praia", "Imprópria"],
        ["Roma - SSA RO 100", "Atrás do Hospital São Jorge", "Imprópria"],
        ["Roma - SSA RO 100", "Atrás do Hospital São Jorge", "Imprópria"],
        ["Canta Galo - SSA CG 100", "Rua Agrário Menezes", "Própria"],
    ],
    title="Boletim de Balneabilidade",
)


def test_rows_listed_twice_answer_when_their_cells_agree() -> None:
    answer = ask("Qual a categoria do ponto Roma (RO 100)?", BULLETIN)
    assert answer is not None and "Imprópria" in answer.text
    assert len(answer.citations) == 2  # both Roma rows, each cell's box
    assert ask("Qual a categoria do ponto Periperi (PR 100)?", BULLETIN) is None  # they disagree
