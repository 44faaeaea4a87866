"""Cells as the page prints them: a detected row that stacks several rows (a table without
rules between them) is split into them, each cell's box is the box of its words (not the
grid cell, which a wrapped neighbour makes many lines tall), and the chunks say how many
body rows the whole table has."""

from __future__ import annotations

import pymupdf

from ingest.chunking import chunk_page
from ingest.formats.pdf import PdfLoader
from ingest.loaders import LoadedPage, LoadOptions
from ingest.tables import Table
from tests.conftest import corpus_path

OTSL = ("pdf", "arxiv_2305.03393v1_p9_otsl_table.pdf")
IBAMA = ("pdf", "br_ibama_autuacoes_amazonas_2010_p2.pdf")


def _first_page(parts: tuple[str, str]) -> tuple[bytes, LoadedPage]:
    data = corpus_path(*parts).read_bytes()
    loader = PdfLoader()
    opened = loader.open(data, loader.sniff(data[:8]), LoadOptions(ocr_enabled=False))
    try:
        return data, next(iter(opened.pages()))
    finally:
        opened.close()


def _texts(table: Table) -> list[list[str]]:
    return [[c.text for c in row] for row in table.rows]


def test_a_row_stacking_the_otsl_and_html_rows_is_split_into_them() -> None:
    _, page = _first_page(OTSL)
    (table,) = [t for t in page.tables if any("OTSL" in c.text for r in t.rows for c in r)]
    rows = _texts(table)
    otsl = [r for r in rows if "OTSL" in r]
    html = [r for r in rows if "HTML" in r]
    assert len(otsl) == 4 and len(html) == 4, rows
    assert not any("OTSL HTML" in " ".join(r) for r in rows)
    # the 6/6 pair: the merged layer cells repeat on both rows, each row keeps its own times
    six = [r for r in rows if r[:2] == ["6", "6"]]
    assert [r[2] for r in six] == ["OTSL", "HTML"]
    assert "2.73" in six[0] and "5.39" in six[1]
    # each split cell's box is its own line: the HTML time sits below the OTSL time
    time_column = six[0].index("2.73")
    boxes = [table.rows[rows.index(r)][time_column].bbox for r in six]
    assert boxes[0][3] <= boxes[1][1] + 1


def test_a_cell_box_is_its_words_not_the_tall_row_of_a_wrapped_neighbour() -> None:
    data, page = _first_page(IBAMA)
    (table,) = page.tables
    cell = next(c for row in table.rows for c in row if c.text == "39.000,00")
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        (hit,) = doc[0].search_for("39.000,00")
    x0, y0, x1, y1 = cell.bbox
    assert x0 <= (hit.x0 + hit.x1) / 2 <= x1 and y0 <= (hit.y0 + hit.y1) / 2 <= y1
    assert y1 - y0 <= 1.5 * (hit.y1 - hit.y0)  # the value's line, not the row's many lines


def test_table_chunks_carry_the_number_of_body_rows() -> None:
    _, page = _first_page(IBAMA)
    chunks = [c for c in chunk_page(1, page.blocks, 900, page.tables) if c.table is not None]
    assert len(chunks) > 1
    assert {c.table["body_rows"] for c in chunks} == {len(page.tables[0].rows)}  # type: ignore[index]


def test_a_wide_ruled_table_keeps_the_columns_its_rules_draw() -> None:
    """The NICS table: the layout grid cuts its 25 columns into 78 slivers; the ruling lines'
    grid is taken instead, each group label ("Pre-Pawn") over its three columns only, and
    each cell's box is its number (the Kentucky permit cell the question set cites)."""
    _, page = _first_page(("pdf", "us_nics_background_checks_2015-11.pdf"))
    (table,) = page.tables
    assert len(table.columns) == 25
    assert table.columns[:3] == ["State / Territory", "Permit", "Handgun"]
    assert table.columns[7:10] == ["Pre-Pawn / Handgun", "Pre-Pawn / Long Gun", "Pre-Pawn / *Other"]
    assert table.columns[-1] == "Totals"  # not under the last group's label
    kentucky = next(row for row in table.rows if row[0].text == "Kentucky")
    assert (kentucky[1].text, kentucky[-1].text) == ("264,140", "295,891")
    x0, y0, x1, y1 = kentucky[1].bbox
    assert x0 <= 134.1 <= x1 and y0 <= 212.6 <= y1 and y1 - y0 < 10  # the cell, not a stacked row


def test_a_table_continued_on_the_next_page_takes_its_labels() -> None:
    """The bathing bulletin's table runs onto page 2 without its header: page 2's first row
    ("Rio Vermelho - SSA RV 100 ... Própria") is a body row, the labels are page 1's."""
    data = corpus_path("pdf", "br_balneabilidade_salvador_26-2010.pdf").read_bytes()
    loader = PdfLoader()
    opened = loader.open(data, loader.sniff(data[:8]), LoadOptions(ocr_enabled=False))
    try:
        first, second = list(opened.pages())[:2]
    finally:
        opened.close()
    before, after = first.tables[-1], second.tables[0]
    assert after.columns == before.columns and after.title == before.title
    assert after.rows[0][0].text == "Rio Vermelho - SSA RV 100" and after.rows[0][-1].text == "Própria"
