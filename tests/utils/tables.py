"""Table evidence for tests, cut from real corpus pages: a table PyMuPDF finds on a page,
turned into the "table" payload of index/payloads.py (TABLE_FIELDS) and into the
ChunkEvidence / PageEvidence / SearchResult the answerers read.

    grid = corpus_grid("br_imea_milho_safra_16-17.pdf", header_rows=1)
    result = table_result([table_page("imea", grid, title="...")])

The tables come from pymupdf4llm's layout-aware reconstruction (`page_html_tables`,
PyMuPDF's `find_tables` repaired by the layout stage): plain `page.find_tables()` merges
the IMEA columns into one and splits the census decimals. Reading a page costs seconds
(the NICS page ~10 s), so each grid is read once per session.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf

from service.query.types import ChunkEvidence, PageEvidence, SearchResult

Grid = dict[str, Any]  # the whole table: TABLE_FIELDS, with every body row


@lru_cache(maxsize=16)
def _page_tables(path: str, page_no: int) -> tuple[tuple[list[float], list[float], list, list], ...]:
    from pymupdf4llm.helpers.table_html import page_html_tables

    doc = pymupdf.open(path)
    page = doc[page_no - 1]
    size = [float(page.rect.width), float(page.rect.height)]
    found = tuple((list(pymupdf.Rect(t[0])), size, t[4], t[5]) for t in page_html_tables(page))
    doc.close()
    return found


def corpus_grid(
    path: Path,
    *,
    page_no: int = 1,
    table_no: int = 0,
    header_rows: int = 1,
    skip_rows: int = 0,
    title: str = "",
) -> Grid:
    """The table `table_no` of a corpus page as a TABLE_FIELDS dict holding all its body rows.
    `skip_rows`: rows above the header that are the table's caption. Header cells a span
    covers (None) take the label on their left; labels of the header rows are joined with " / "."""
    bbox, size, cells, extract = _page_tables(str(path), page_no)[table_no]
    cells, extract = cells[skip_rows:], extract[skip_rows:]
    grid_rows = [
        [
            {"text": " ".join((text or "").split()), "bbox": list(box) if box else []}
            for text, box in zip(r, b, strict=False)
        ]
        for r, b in zip(extract, cells, strict=True)
    ]
    width = max(len(r) for r in grid_rows)
    labels: list[list[str]] = [[] for _ in range(width)]
    for row in extract[:header_rows]:
        previous = ""
        for j in range(width):
            text = row[j] if j < len(row) else None
            text = previous if text is None else " ".join(text.split())
            previous = text
            if text and (not labels[j] or labels[j][-1] != text):
                labels[j].append(text)
    return {
        "table_no": table_no,
        "title": title,
        "columns": [" / ".join(parts) for parts in labels],
        "header_rows": header_rows,
        "rows": grid_rows[header_rows:],
        "first_row": 0,
        "bbox": bbox,
        "page_size": size,
    }


def row_line(columns: list[str], row: list[dict[str, Any]]) -> str:
    """A body row as ingestion writes a table chunk's text: "Região: Médio-Norte · Área: 2.025.045"."""
    return " · ".join(
        f"{label}: {cell['text']}" for label, cell in zip(columns, row, strict=False) if cell["text"]
    )


def table_chunks(
    doc_id: str, grid: Grid, *, page_no: int = 1, rows_per_chunk: int = 0
) -> list[ChunkEvidence]:
    """The grid cut into chunks of `rows_per_chunk` body rows (0: one chunk), each with its
    payload "table" (its own rows and first_row) and its header-carrying text."""
    rows = grid["rows"]
    step = rows_per_chunk or len(rows)
    chunks = []
    for chunk_no, start in enumerate(range(0, len(rows), step)):
        part = rows[start : start + step]
        boxes = [c["bbox"] for r in part for c in r if c["bbox"]]
        bbox = [
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        ]
        table = {
            k: grid[k]
            for k in ("table_no", "title", "columns", "header_rows", "bbox", "body_rows")
            if k in grid
        }
        table |= {"rows": part, "first_row": start}
        text = "\n".join(row_line(grid["columns"], r) for r in part)
        chunks.append(
            ChunkEvidence(doc_id, page_no, chunk_no, text, bbox, grid["page_size"], chunk_no + 1, 1.0, table)
        )
    return chunks


def table_page(
    doc_id: str, grid: Grid, *, page_no: int = 1, title: str = "", rows_per_chunk: int = 0, score: float = 1.0
) -> PageEvidence:
    """A page of evidence holding the grid's chunks (best first)."""
    chunks = table_chunks(doc_id, grid, page_no=page_no, rows_per_chunk=rows_per_chunk)
    return PageEvidence(doc_id, page_no, title or doc_id, f"{doc_id}.pdf", "pdf_page", score, chunks=chunks)


def table_result(question: str, pages: list[PageEvidence]) -> SearchResult:
    """A search result over `pages`, best first (no query vector: the table answerer needs none)."""
    return SearchResult(question, pages, np.zeros(0, dtype=np.float32), {})


def cell_centre(grid: Grid, row_label: str, column: int) -> tuple[float, float]:
    """The centre of the body cell whose first cell reads `row_label`, in column `column`."""
    row = next(r for r in grid["rows"] if r[0]["text"] == row_label)
    x0, y0, x1, y1 = row[column]["bbox"]
    return (x0 + x1) / 2, (y0 + y1) / 2


def synthetic_grid(columns: list[str], rows: list[list[str]], title: str = "") -> Grid:
    """A grid with one 10 pt high, 60 pt wide box per cell, as ingestion hands it over."""
    body = [
        [
            {"text": text, "bbox": [60.0 * j, 100.0 + 10 * i, 60.0 * j + 50, 108.0 + 10 * i]}
            for j, text in enumerate(r)
        ]
        for i, r in enumerate(rows)
    ]
    bottom = 108.0 + 10 * (len(rows) - 1)
    return {
        "table_no": 0,
        "title": title,
        "columns": columns,
        "header_rows": 1,
        "rows": body,
        "first_row": 0,
        "bbox": [0.0, 90.0, 60.0 * len(columns), bottom],
        "page_size": [600.0, 800.0],
    }
