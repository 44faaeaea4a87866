"""Payloads of page and chunk points, built here for ingestion and `carta reindex` alike.

Every point carries what the engine filter matches before top-k: `tenant` and `doc_id`
(one filter deletes or isolates a document), `acl` (never empty: a document shared with
no group carries PUBLIC_ACL, so every key of the tenant finds it, and a point without it
is invisible to every non-admin key) and `state` ("indexing" until the whole document is
in, then "ready"). Then what answers show (title, filename, page, text, boxes) and the
unit's geo fields (`location`, `geo_point`, H3 tokens, `geo_tags`: see
ingest.geotagging.geo_payload), which the caller computes: index/ knows no geotagging.
"""

from __future__ import annotations

from typing import Any, Literal

from index.acl import document_tokens
from index.registry import Document

PointState = Literal["indexing", "ready"]
Payload = dict[str, Any]
EXCERPT_CHARS = 1200  # the page text kept on a page point (the chunks hold all of it)
# Fields only the engine filter reads: searches leave them out of their hits. A map's H3
# area cells run to thousands, and turning payloads into Python objects is most of what a
# search costs on a small index (0.84 vs 1.26 ms for 20 chunks, with the engine holding
# the GIL throughout). Scrolls (document views, reindex, the graph) still get every field.
FILTER_ONLY_FIELDS = (
    "acl", "state", "countries", "geo_tags",
    "h3_r7", "h3_r9", "h3_r11", "h3_area", "h3_area_up",
)  # fmt: skip


def document_fields(doc: Document, *, kind: str, state: PointState) -> Payload:
    """The fields every point of `doc` shares; `kind`: pdf_page, image or map."""
    return {
        "tenant": doc.tenant,
        "doc_id": doc.id,
        "kind": kind,
        "title": doc.title,
        "filename": doc.filename,
        "acl": document_tokens(doc.acl),
        "state": state,
    }


def page_payload(
    doc: Document,
    *,
    kind: str,
    page_no: int,
    text: str,
    page_size: tuple[float, float] | list[float],
    text_source: str,
    geo: Payload,
    state: PointState = "indexing",
) -> Payload:
    """A page point (text-token pages and visual collections): the page's text excerpt,
    its size in block-box units and where its text came from (text, ocr, none)."""
    return {
        **document_fields(doc, kind=kind, state=state),
        "page_no": page_no,
        "text": text[:EXCERPT_CHARS],
        "page_size": list(page_size),
        "text_source": text_source,
        **geo,
    }


def chunk_payload(
    doc: Document,
    *,
    kind: str,
    page_no: int,
    chunk_no: int,
    text: str,
    bbox: tuple[float, float, float, float],
    page_size: tuple[float, float] | list[float],
    geo: Payload,
    state: PointState = "indexing",
    table: Payload | None = None,
) -> Payload:
    """A chunk point: its text and its box on the page (page units, origin top-left);
    a chunk cut from a table also carries its cell grid under "table" (TABLE_FIELDS)."""
    payload = {
        **document_fields(doc, kind=kind, state=state),
        "page_no": page_no,
        "chunk_no": chunk_no,
        "text": text,
        "bbox": [round(x, 2) for x in bbox],
        "page_size": list(page_size),
        **geo,
    }
    if table is not None:
        payload["table"] = table
    return payload


# The "table" payload of a chunk cut from a table, the contract between ingestion
# (ingest/tables.py) and the table answerer (service/answer/tables.py):
#   table_no     int        the table's position on its page (0-based)
#   title        str        caption or heading just above the table ("" when none)
#   columns      list[str]  one label per column; multi-row headers joined with " / "
#   header_rows  int        how many rows of the table are header
#   rows         list[list[{"text": str, "bbox": [x0, y0, x1, y1]}]]  this chunk's body rows
#   first_row    int        index of this chunk's first body row within the table's body
#   bbox         list[float] the whole table's box (page points, origin top-left)
#   body_rows    int        how many body rows the whole table has (absent on chunks stored
#                           before it: the answerer then tells a complete table by its bottom)
#   version      int        the table chunking that cut it (ingest.tables.TABLE_VERSION; absent:
#                           1), so `carta reindex` knows which documents to cut again
TABLE_FIELDS = ("table_no", "title", "columns", "header_rows", "rows", "first_row", "bbox")
