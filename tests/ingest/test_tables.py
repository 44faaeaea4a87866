"""Tables kept as tables: cells with boxes and column labels from real corpus PDFs, row
chunks that name their columns, the grid surviving a real ingest into the store and a
search, and the text path when table detection fails or runs too long."""

from __future__ import annotations

from collections.abc import Callable

import pymupdf
import pytest

from index.types import Filter
from ingest.chunking import SectionContext, chunk_page
from ingest.formats import pdf as pdf_format
from ingest.formats.pdf import PdfLoader
from ingest.loaders import LoadedPage, LoadOptions
from ingest.table_worker import TableDetectionFailed
from ingest.tables import Table
from ingest.upload import IngestRequest
from service.carta import Carta
from service.query.types import SearchQuery
from tests.conftest import corpus_path
from tests.utils.scripts import load_script

IMEA = ("pdf", "br_imea_milho_safra_16-17.pdf")
POPULATION = ("pdf", "in_decadal_population_growth.pdf")
PDF_TYPE = PdfLoader().sniff(b"%PDF-1.7")


def _pages(data: bytes, **options: object) -> list[LoadedPage]:
    loader = PdfLoader()
    opened = loader.open(data, PDF_TYPE, LoadOptions(ocr_enabled=False, **options))  # type: ignore[arg-type]
    try:
        return list(opened.pages())
    finally:
        opened.close()


@pytest.fixture(scope="module")
def imea() -> tuple[bytes, LoadedPage]:
    data = corpus_path(*IMEA).read_bytes()
    return data, _pages(data)[0]


def _row(table: Table, label: str) -> dict[str, str]:
    row = next(r for r in table.rows if r[0].text == label)
    return {col: cell.text for col, cell in zip(table.columns, row, strict=True)}


def test_imea_table_has_its_regions_as_columns_and_cells_with_boxes(imea: tuple[bytes, LoadedPage]) -> None:
    data, page = imea
    assert len(page.tables) == 1
    table = page.tables[0]
    assert table.title.startswith("MILHO SAFRA 16/17")
    assert table.columns[:3] == ["Regiões do IMEA", "Centro-Sul", "Médio-Norte"]
    assert table.columns[-1] == "Mato Grosso"
    assert _row(table, "Área 16/17 (ha)")["Mato Grosso"] == "4.738.950"
    assert _row(table, "Área 16/17 (ha)")["Médio-Norte"] == "2.025.045"
    harvest = next(r for r in table.rows if r[0].text == "18-ago-17")
    cell = harvest[table.columns.index("Mato Grosso")]
    assert cell.text == "99,62%"
    x0, y0, x1, y1 = cell.bbox
    assert 0 <= x0 < x1 <= page.width and 0 <= y0 < y1 <= page.height
    with pymupdf.open(stream=data, filetype="pdf") as doc:  # the cell's box holds the printed value
        hits = doc[0].search_for("99,62%")
    assert any(x0 <= (h.x0 + h.x1) / 2 <= x1 and y0 <= (h.y0 + h.y1) / 2 <= y1 for h in hits)
    # the table's text is in its cells, not again in the page's text blocks
    assert not any("4.738.950" in b.text for b in page.blocks)


def test_table_rows_become_chunks_that_name_their_columns(imea: tuple[bytes, LoadedPage]) -> None:
    _, page = imea
    context = SectionContext("IMEA · Milho safra 16/17")
    chunks = chunk_page(page.page_no, page.blocks, 900, page.tables, context)
    tables = [c for c in chunks if c.table is not None]
    assert tables and all(len(c.text) <= 900 for c in tables)
    text = "\n".join(c.text for c in tables)
    assert "Médio-Norte: 2.025.045" in text and "Mato Grosso: 4.738.950" in text
    assert "Regiões do IMEA: 18-ago-17" in text and "Mato Grosso: 99,62%" in text
    # every body row is in exactly one chunk, in order, and each chunk names where its rows start
    rows = [r for c in tables for r in c.table["rows"]]  # type: ignore[index]
    assert len(rows) == len(page.tables[0].rows)
    assert [c.table["first_row"] for c in tables] == sorted(c.table["first_row"] for c in tables)  # type: ignore[index]
    assert {"table_no", "title", "columns", "header_rows", "rows", "first_row", "bbox"} <= set(
        tables[0].table
    )  # type: ignore[arg-type]
    assert (
        tables[0].context
        == "IMEA · Milho safra 16/17 > MILHO SAFRA 16/17: ACOMPANHAMENTO DE COLHEITA POR REGIÃO · p.1"
    )
    assert tables[0].indexed_text().startswith(tables[0].context + "\n")


def test_population_table_nagaland_row_carries_its_period_headers() -> None:
    page = _pages(corpus_path(*POPULATION).read_bytes())[0]
    table = page.tables[0]
    assert table.columns == [
        "States/Union Territories",
        "1951-1961",
        "1961-1971",
        "1971-1981",
        "1981-1991",
        "1991-2001",
        "2001-2011",
    ]
    assert _row(table, "Nagaland")["2001-2011"] == "-0.47"
    text = "\n".join(c.text for c in chunk_page(1, page.blocks, 900, page.tables))
    assert "States/Union Territories: Nagaland · 1951-1961: 14.07" in text
    assert "2001-2011: -0.47" in text


def test_table_grid_reaches_the_store_and_comes_back_on_chunk_evidence(
    make_carta: Callable[..., Carta],
) -> None:
    carta = make_carta()
    data = corpus_path(*IMEA).read_bytes()
    result = carta.ingest(IngestRequest(data, "milho.pdf", "default"))
    assert not any("table detection" in w for w in result.warnings)
    found = carta.search(SearchQuery("área total de milho Mato Grosso safra 16/17", "default", top_k=3))
    chunks = [c for p in found.pages for c in p.chunks if c.table is not None]
    assert chunks, "no table chunk among the evidence"
    grid = chunks[0].table
    assert grid is not None and grid["columns"][-1] == "Mato Grosso"
    cells = [cell for row in grid["rows"] for cell in row]
    assert all(set(cell) == {"text", "bbox"} and len(cell["bbox"]) == 4 for cell in cells)
    stored = carta.page_chunks("default", result.document.id, 1)
    assert all(c["context"].endswith("· p.1") for c in stored)
    assert not any(c["text"].startswith(c["context"]) for c in stored)  # quoted text has no header


class _RaisingWorker:
    def tables(self, key: str, data: bytes, index: int, timeout_s: float) -> list[Table]:
        raise TableDetectionFailed("ValueError: broken content stream")


def test_failing_table_detection_falls_back_to_text_with_a_warning(
    make_carta: Callable[..., Carta], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pdf_format, "shared_worker", lambda: _RaisingWorker())
    carta = make_carta()
    result = carta.ingest(IngestRequest(corpus_path(*IMEA).read_bytes(), "milho.pdf", "default"))
    assert result.document.status == "ready"
    assert any(
        "page 1: table detection failed (ValueError: broken content stream" in w for w in result.warnings
    )
    text = carta.page_text("default", result.document.id, 1)
    assert "4.738.950" in text  # the table's text is indexed as plain text
    assert all(c.get("table") is None for c in carta.page_chunks("default", result.document.id, 1))


def test_a_4000_row_table_past_the_time_budget_ingests_as_text_with_a_warning(
    make_carta: Callable[..., Carta],
) -> None:
    """Two pages of 2,000 ruled rows (detection on such a page runs past 1 s): the first
    page's detection is stopped, the second page (the rest of the document) is read as text
    without one. The time went on embedding: 10,000 rows (five pages) took 45 s of CPU,
    half of it the sentence vectors, which this test does not read (nor places)."""
    carta = make_carta(table_timeout_s=1.0, geotag=False, sentence_vectors=False)
    rows = 4_000
    data = load_script("bench_layout").long_table_pdf(rows)  # two pages of 2,000 ruled rows
    result = carta.ingest(IngestRequest(data, "long_table.pdf", "default"))
    assert result.document.status == "ready" and result.document.pages == 2
    assert any("page 1: table detection failed (it ran past 1 s" in w for w in result.warnings)
    hits = carta.store.scroll(carta.collections.chunks.name, Filter({"doc_id": result.document.id}))
    text = "\n".join(h.payload["text"] for h in hits)
    assert all(f"R{r:04d}" in text for r in range(rows))  # nothing of the table lost
    assert all(h.payload.get("table") is None for h in hits)  # read as text, on both pages
    assert {h.payload["page_no"] for h in hits} == {1, 2}
    assert len(hits) > 40 and max(len(h.payload["text"]) for h in hits) <= 900
