"""Chunks from layout blocks: neighbouring blocks are merged up to a size, long blocks
are split at sentence ends; each chunk keeps its page and the union of its boxes.

A heading starts a new chunk and becomes the section of the chunks after it (across
pages). Every chunk gets a context header, "document title > section · p.N", which is
embedded and BM25-indexed with its text but stored apart (payload "context"), so that
quoting a chunk's text does not repeat it.

A table (ingest/tables.py) becomes chunks of whole rows, each row one line that names
its columns ("Região: Médio-Norte · Área 16/17 (ha): 2.025.045"), under the table's
title, as many rows as fit in a chunk (one at least); each such chunk carries its rows'
cell grid in `Chunk.table` (the contract is TABLE_FIELDS in index/payloads.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ingest.loaders import BBox, TextBlock
from ingest.tables import TABLE_VERSION, Cell, Table

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


@dataclass
class Chunk:
    page_no: int
    index: int  # position on the page
    text: str
    bbox: BBox
    table: dict | None = None  # cell grid of a chunk cut from a table (index/payloads.py)
    context: str = ""  # "title > section · p.N": indexed with the text, stored apart

    def indexed_text(self) -> str:
        """What is embedded and BM25-indexed: the context header, then the text."""
        return f"{self.context}\n{self.text}" if self.context else self.text


SECTION_CHARS = 120


@dataclass
class SectionContext:
    """The document title and the last heading seen, carried across one document's pages."""

    title: str
    section: str = ""
    _seen: set[str] = field(default_factory=set)

    def header(self, page_no: int) -> str:
        parts = [p for p in (self.title, self.section) if p]
        return f"{' > '.join(parts)} · p.{page_no}" if parts else f"p.{page_no}"

    def enter(self, heading: str) -> None:
        if heading.strip().casefold() != self.title.strip().casefold():  # the title is no section
            self.section = heading[:SECTION_CHARS]


def _union(a: BBox, b: BBox) -> BBox:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _split_long(block: TextBlock, max_chars: int) -> list[TextBlock]:
    if len(block.text) <= max_chars:
        return [block]
    parts: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(block.text):
        while len(sentence) > max_chars:  # a "sentence" longer than a chunk: cut at a space
            cut = sentence.rfind(" ", 0, max_chars)
            cut = cut if cut > max_chars // 2 else max_chars
            head, sentence = sentence[:cut], sentence[cut:].lstrip()
            if current:
                parts.append(current)
                current = ""
            parts.append(head)
        if current and len(current) + 1 + len(sentence) > max_chars:
            parts.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        parts.append(current)
    return [TextBlock(block.bbox, p) for p in parts]


def chunk_page(
    page_no: int,
    blocks: list[TextBlock],
    max_chars: int,
    tables: Sequence[Table] = (),
    context: SectionContext | None = None,
) -> list[Chunk]:
    """The chunks of one page: its text blocks and tables in reading order (a table goes
    before the first block that starts below its top)."""
    context = context or SectionContext("")
    chunks: list[Chunk] = []
    pending = sorted(tables, key=lambda t: (t.bbox[1], t.bbox[0]))
    text, bbox = "", None

    def flush() -> None:
        nonlocal text, bbox
        if bbox is not None:
            chunks.append(Chunk(page_no, len(chunks), text, bbox, context=context.header(page_no)))
        text, bbox = "", None

    for block in blocks:
        while pending and pending[0].bbox[1] <= block.bbox[1]:
            if text == pending[0].title:  # only the table's title so far: its chunks carry it
                text, bbox = "", None
            flush()
            _table_chunks(page_no, pending.pop(0), max_chars, context, chunks)
        if block.heading:
            flush()
            context.enter(block.text)
        for piece in _split_long(block, max_chars):
            if bbox is not None and len(text) + 1 + len(piece.text) > max_chars:
                flush()
            text = f"{text}\n{piece.text}" if text else piece.text
            bbox = piece.bbox if bbox is None else _union(bbox, piece.bbox)
    if pending and text == pending[0].title:
        text, bbox = "", None
    flush()
    for table in pending:
        _table_chunks(page_no, table, max_chars, context, chunks)
    return chunks


def row_line(columns: list[str], row: list[Cell]) -> str:
    """One body row as a line naming its columns: "Região: Médio-Norte · Área (ha): 2.025.045"."""
    parts = []
    for label, cell in zip(columns, row, strict=False):
        if cell.text:
            parts.append(f"{label}: {cell.text}" if label and label != cell.text else cell.text)
    return " · ".join(parts)


def _table_chunks(
    page_no: int, table: Table, max_chars: int, context: SectionContext, out: list[Chunk]
) -> None:
    """Chunks of whole rows, each under the table's title, with their cell grid."""
    head = table.title
    start, lines = 0, []
    for r, row in enumerate(table.rows):
        line = row_line(table.columns, row)
        size = len(head) + sum(len(x) + 1 for x in lines) + len(line)
        if lines and size > max_chars:
            out.append(_table_chunk(page_no, len(out), table, start, r, head, lines, context))
            start, lines = r, []
        lines.append(line)
    if lines:
        out.append(_table_chunk(page_no, len(out), table, start, len(table.rows), head, lines, context))


def _table_chunk(
    page_no: int,
    index: int,
    table: Table,
    start: int,
    end: int,
    head: str,
    lines: list[str],
    context: SectionContext,
) -> Chunk:
    rows = table.rows[start:end]
    boxes = [c.bbox for row in rows for c in row]
    bbox = boxes[0]
    for box in boxes[1:]:
        bbox = _union(bbox, box)
    grid = {
        "table_no": table.table_no,
        "title": table.title,
        "columns": list(table.columns),
        "header_rows": table.header_rows,
        "rows": [[{"text": c.text, "bbox": list(c.bbox)} for c in row] for row in rows],
        "first_row": start,
        "body_rows": len(table.rows),
        "bbox": list(table.bbox),
        "version": TABLE_VERSION,
    }
    text = "\n".join([head, *lines] if head else lines)
    return Chunk(page_no, index, text, bbox, table=grid, context=context.header(page_no))
