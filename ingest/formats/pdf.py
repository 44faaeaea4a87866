"""PDF documents, and the PyMuPDF page reader that images reuse.

A page's text comes from the PDF text layer; a page with less than `ocr_min_chars` of it
is read by OCR (tesseract) when that finds more.

One pixel cap, `max_render_pixels`, bounds both pictures made of a page: the stored
rendering (at `render_dpi`) and the one OCR reads (at `ocr_dpi`). A page too large for
either is rendered or OCRed at the highest dpi that fits, with a warning on the page. A
page so large that even `OCR_MIN_DPI` would exceed the cap is indexed without OCR, with a
warning, rather than refused: its stored rendering still fits (at any dpi), its text layer
and the document's other pages are still worth indexing, and knowing that a page needs
OCR means reading its text layer, which upload-time validation does not do.

Tables (CARTA_LAYOUT=tables, the default): a page with a text layer has its tables
detected (ingest/tables.py, in the child process of ingest/table_worker.py under
CARTA_TABLE_TIMEOUT_S per page); the text blocks a table covers leave `blocks`, as the
table's chunks carry that text. When detection fails or runs too long on a page, that page
and the rest of the document are read as plain text, with a warning.

Headings: a short block set in type larger than the page's body text, or all in bold,
is marked `heading` (the chunks after it name it in their context header).

Encryption: a PDF that needs a password to open (a user password) is refused. One that
opens without one but carries an owner password restricting copy or print is indexed, as
any reader can open it, with a warning that the restrictions were not applied.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import pymupdf
from PIL import Image

from ingest.charts import read_bar_charts, shifted
from ingest.errors import CorruptDocument, EncryptedDocument, TooLarge
from ingest.figure_text import kept_tables, prose_blocks, read_figure
from ingest.formats.pdf_content import page_content_bytes
from ingest.geotagging import GeoTag
from ingest.loaders import FileType, LoadedPage, LoadOptions, PointKind, SourceFile, TextBlock
from ingest.ocr import ocr_blocks, tesseract_available
from ingest.table_worker import TableDetectionFailed, TableWorker, shared_worker
from ingest.tables import BBox, Table, aligned_tables, continued, covered, might_hold_table

log = logging.getLogger(__name__)
PDF = FileType("application/pdf", "pdf")
# Below 72 dpi (one pixel per point) even 20-pt headings have an x-height under 10 px,
# where tesseract reads little; an image's page is 1 pt per pixel, so 36 = half its size.
OCR_MIN_DPI = 72
IMAGE_OCR_MIN_DPI = 36
FIGURE_MIN_PT = 150.0  # a picture on a text page this wide (and half as tall) may be a chart
MAX_FIGURES = 4  # pictures read as charts per page (a page of photos costs no more)
FIGURE_TEXT_LAYER_WORDS = 8  # a picture with this many text-layer words on it is not OCRed
CHART_DPI = 200  # a PDF page's rendering for chart reading (tick labels of 8 pt type stay legible)
# what an owner password may forbid that indexing does anyway (a warning names them)
_PERMISSIONS = (("copying text", pymupdf.PDF_PERM_COPY), ("printing", pymupdf.PDF_PERM_PRINT))
HEADING_SIZE = 1.2  # a heading's type is at least this much larger than the page's body text
HEADING_CHARS = 150
_BOLD = 16  # PyMuPDF span flag
_TOOL_TITLE = re.compile(r"^(microsoft \w+ - |untitled$)|\.(docx?|xlsx?|pptx?|odt|rtf|txt|pdf|tex)$", re.I)
_LEADERS = re.compile(r"(\.\s?){4,}|…{2,}")  # a table of contents line, not a heading


class PdfPages:
    """An `OpenedDocument` whose pages are PyMuPDF pages: a PDF, or an image carried as a
    one-page PDF at 1 pt per pixel (so OCR and boxes work the same for both)."""

    warnings: tuple[str, ...] = ()

    def __init__(
        self,
        pdf: pymupdf.Document,
        options: LoadOptions,
        kind: str,
        title: str | None,
        *,
        warnings: tuple[str, ...] = (),
        data: bytes | None = None,
    ) -> None:
        self._pdf = pdf
        # the bytes the table detector opens in its own process (None: no table detection)
        self._data = data if kind == "pdf" and options.layout == "tables" else None
        self._key = hashlib.sha256(data).hexdigest() if self._data is not None and data else ""
        self._tables: TableWorker | None = shared_worker() if self._data is not None else None
        self._last_table: Table | None = None  # the last table read, and its page index
        self._last_index = -2
        self.options = options
        self.kind = kind
        self.title = title
        self.page_count = pdf.page_count
        self.warnings = warnings

    def pages(self) -> Iterator[LoadedPage]:
        for index in range(self.page_count):
            yield self._load(index)

    def close(self) -> None:
        self._pdf.close()

    def _load(self, index: int) -> LoadedPage:
        page = self._pdf[index]
        rect = page.rect
        notes: list[str] = []
        # Images keep their own resolution (1 pt = 1 px); PDF pages render at render_dpi.
        wanted = self.options.render_dpi if self.kind == "pdf" else 72
        dpi = capped_dpi(rect.width, rect.height, dpi=wanted, max_pixels=self.options.max_render_pixels)
        if dpi < wanted:
            notes.append(f"rendered at {self._scale(dpi)}, not {self._scale(wanted)} ({self._why(rect)})")
        image = _render(page, dpi)
        blocks = _styled_blocks(page)
        source = "text" if blocks else "none"
        little_text = sum(len(b.text) for b in blocks) < self.options.ocr_min_chars
        if little_text and self._can_ocr():
            ocr_dpi = self._ocr_dpi(rect, notes)
            if ocr_dpi is not None:
                ocr = _text_blocks(ocr_blocks(page, self.options.ocr_languages, ocr_dpi))
                if sum(len(b.text) for b in ocr) > sum(len(b.text) for b in blocks):
                    blocks, source = ocr, "ocr"
        tables = self._page_tables(index, notes) if source == "text" and might_hold_table(page) else []
        if tables:  # a table continued from the page before takes its labels
            tables[0] = continued(self._last_table if self._last_index == index - 1 else None, tables[0])
            self._last_table, self._last_index = tables[-1], index
            blocks = [b for b in blocks if not any(covered(b.bbox, t.bbox) for t in tables)]
        if (self.options.chart_tables or self.options.figure_text) and self._can_ocr():
            read, pictured = self._figures(page, len(tables), whole_page=little_text)
            tables = tables + read
            for block in pictured:
                blocks.insert(_place_of(blocks, block), block)
        return LoadedPage(index + 1, image, rect.width, rect.height, blocks, source, notes, tables)

    def _figures(
        self, page: pymupdf.Page, first_no: int, whole_page: bool
    ) -> tuple[list[Table], list[TextBlock]]:
        """Charts read into tables (ingest/charts.py): the whole page when it has little
        text (a chart picture, a scanned figure), rendered within the pixel cap; else each
        picture on it of at least FIGURE_MIN_PT x FIGURE_MIN_PT / 2 points (a report's
        "Figura 1", at most MAX_FIGURES a page) at CHART_DPI, its boxes moved to the page's
        coordinates. A picture on a text page that is no chart and has no text layer of its
        own is read by OCR (ingest/figure_text.py): its tables and its other text blocks.
        A picture's box is the unrotated page's, as the text's: on a rotated page (a
        landscape report) it is turned into the rendering's to clip it, and the boxes
        turned back."""
        if whole_page:
            if not self.options.chart_tables:
                return [], []
            wanted = CHART_DPI if self.kind == "pdf" else 72
            rect = page.rect
            dpi = capped_dpi(rect.width, rect.height, dpi=wanted, max_pixels=self.options.max_render_pixels)
            regions = [(rect, dpi)]
        else:
            turn = page.rotation_matrix
            placed = [pymupdf.Rect(info["bbox"]) * turn & page.rect for info in page.get_image_info()]
            figures = [r for r in placed if r.width >= FIGURE_MIN_PT and r.height >= FIGURE_MIN_PT / 2]
            regions = [(clip, CHART_DPI) for clip in figures[:MAX_FIGURES]]
        out: list[Table] = []
        pictured: list[TextBlock] = []
        for clip, dpi in regions:
            image = _render(page, dpi, None if whole_page else clip)
            read: list[Table] = []
            if self.options.chart_tables:
                read = read_bar_charts(
                    image, self.options.ocr_languages, page_scale=72 / dpi, table_no=first_no + len(out)
                )
            if not whole_page and not read and self.options.figure_text and _no_text_layer(page, clip):
                read, text = self._figure_text(image, dpi, first_no + len(out))
                turn = page.derotation_matrix
                pictured.extend(TextBlock(_moved(b.bbox, clip, turn), b.text) for b in text)
            if not whole_page:
                read = [shifted(t, clip.x0, clip.y0, page.derotation_matrix) for t in read]
            out.extend(read)
        return out, pictured

    def _figure_text(
        self, image: Image.Image, dpi: float, first_no: int
    ) -> tuple[list[Table], list[TextBlock]]:
        """A picture's tables and other text, read by OCR, boxes in the picture's points."""
        figure = read_figure(image, self.options.ocr_languages, dpi)
        if figure is None:
            return [], []
        tables: list[Table] = []
        if self._tables is not None:
            key = hashlib.sha256(figure.pdf).hexdigest()
            try:
                tables = self._tables.tables(key, figure.pdf, 0, self.options.table_timeout_s)
            except TableDetectionFailed as exc:  # the picture's text still counts, as blocks
                log.warning("table detection failed on a picture: %s", exc)
        if not tables and self.options.layout == "tables":  # no rules, no shading: the layout model sees none
            with pymupdf.open("pdf", figure.pdf) as doc:
                tables = aligned_tables(doc[0])
        tables = [replace(t, table_no=first_no + k) for k, t in enumerate(kept_tables(tables))]
        blocks = [b for b in figure.blocks if not any(covered(b.bbox, t.bbox) for t in tables)]
        return tables, prose_blocks(blocks)

    def _page_tables(self, index: int, notes: list[str]) -> list[Table]:
        """The page's tables; none (and from here on none for the document, with a note)
        when detection fails or runs past CARTA_TABLE_TIMEOUT_S."""
        if self._tables is None or self._data is None:
            return []
        try:
            return self._tables.tables(self._key, self._data, index, self.options.table_timeout_s)
        except TableDetectionFailed as exc:
            log.warning("table detection failed on page %d: %s", index + 1, exc)
            self._tables = None
            notes.append(
                f"table detection failed ({exc}; CARTA_TABLE_TIMEOUT_S is {self.options.table_timeout_s:g}); "
                "this page and the ones after it were read as plain text"
            )
            return []

    def _ocr_dpi(self, rect: pymupdf.Rect, notes: list[str]) -> int | None:
        """The dpi to OCR the page at within the pixel cap (a note when lowered), or None
        (with a note) when even the least useful dpi is over the cap."""
        wanted = self.options.ocr_dpi if self.kind == "pdf" else _image_ocr_dpi(rect)
        least = min(wanted, OCR_MIN_DPI if self.kind == "pdf" else IMAGE_OCR_MIN_DPI)
        cap = self.options.max_render_pixels
        dpi = math.floor(capped_dpi(rect.width, rect.height, dpi=wanted, max_pixels=cap))
        if dpi < least:
            notes.append(f"not OCRed: even at {self._scale(least)} it is over the cap ({self._why(rect)})")
            return None
        if dpi < wanted:
            notes.append(f"OCRed at {self._scale(dpi)}, not {self._scale(wanted)} ({self._why(rect)})")
        return dpi

    def _scale(self, dpi: float) -> str:
        # an image's page is 1 pt per pixel: 72 dpi is its own size
        return f"{math.floor(dpi)} dpi" if self.kind == "pdf" else f"{math.floor(dpi / 72 * 100)}% scale"

    def _why(self, rect: pymupdf.Rect) -> str:
        unit = "pt page" if self.kind == "pdf" else "px image"
        cap = self.options.max_render_pixels
        return f"a {rect.width:.0f} x {rect.height:.0f} {unit}; CARTA_MAX_RENDER_PIXELS is {cap:,} pixels"

    def _can_ocr(self) -> bool:
        return self.options.ocr_enabled and tesseract_available()


class PdfLoader:
    """PDF files (`%PDF-` within the first KiB, as the spec allows junk before it)."""

    name = "pdf"

    def sniff(self, data: bytes) -> FileType | None:
        return PDF if b"%PDF-" in data[:1024] else None

    def claims(self, ftype: FileType, data: bytes) -> bool:
        return ftype.kind == "pdf"

    def open(self, data: bytes, ftype: FileType, options: LoadOptions) -> PdfPages:
        try:
            pdf = pymupdf.open(stream=data, filetype="pdf")
        except Exception as exc:  # pymupdf raises FileDataError / RuntimeError variants
            raise CorruptDocument(f"the PDF cannot be read ({exc})") from exc
        if pdf.needs_pass or pdf.is_encrypted:  # still locked: it needs a user password to open
            pdf.close()
            raise EncryptedDocument("the PDF is password-protected; upload an unencrypted copy")
        try:  # a broken page tree fails here (page count, every page once), not halfway through
            pages = pdf.page_count
            if 0 < pages <= options.max_pages:
                for page in pdf:
                    _ = page.rect
        except Exception as exc:
            pdf.close()
            raise CorruptDocument(f"the PDF is damaged ({exc})") from exc
        if pages == 0:
            pdf.close()
            raise CorruptDocument("the PDF has no pages")
        if pages > options.max_pages:
            pdf.close()
            raise TooLarge(f"the PDF has {pages} pages; the limit is {options.max_pages} (CARTA_MAX_PAGES)")
        try:
            _check_content(pdf, options)
        except TooLarge:
            pdf.close()
            raise
        metadata = pdf.metadata or {}
        title = _metadata_title(metadata.get("title") or "")
        return PdfPages(pdf, options, "pdf", title, warnings=_owner_restrictions(pdf, metadata), data=data)

    def geo_tags(self, source: SourceFile, ftype: FileType) -> list[GeoTag]:
        return []  # a PDF's places come from its text, page by page

    def point_kind(self, tags: list[GeoTag]) -> PointKind:
        return "pdf_page"


def _check_content(pdf: pymupdf.Document, options: LoadOptions) -> None:
    """Refuse (TooLarge) a PDF whose drawing instructions are over the per-page or the
    document limit, measured without rendering (ingest/formats/pdf_content.py): an
    inflation or form bomb would hold an ingestion worker for minutes and gigabytes."""
    per_page, in_all = options.max_page_content_bytes, options.max_content_bytes
    total = 0
    for page in pdf:
        size = page_content_bytes(pdf, page, min(per_page, in_all - total))
        if size > per_page:
            raise TooLarge(
                f"page {page.number + 1} of the PDF draws more than {per_page:,} bytes of decoded "
                "instructions, too many to render in reasonable time (CARTA_MAX_PAGE_CONTENT_BYTES)"
            )
        total += size
        if total > in_all:
            raise TooLarge(
                f"the PDF's pages draw more than {in_all:,} bytes of decoded instructions in all "
                f"(by page {page.number + 1}; CARTA_MAX_CONTENT_BYTES)"
            )


def _metadata_title(title: str) -> str | None:
    """The metadata title unless it is an authoring tool's file name ("Microsoft Word -
    report.docx"), which would head every chunk's context; then the file name serves."""
    title = " ".join(title.split())
    if not title or _TOOL_TITLE.search(title):
        return None
    return title


def _owner_restrictions(pdf: pymupdf.Document, metadata: dict) -> tuple[str, ...]:
    """A warning when the PDF opened without a password but an owner password restricts it."""
    if not metadata.get("encryption"):
        return ()
    denied = [name for name, flag in _PERMISSIONS if not pdf.permissions & flag]
    if not denied:
        return ()
    return (
        f"the PDF has an owner password that forbids {' and '.join(denied)}; it opens without a "
        "password, so it was indexed and its text can be searched and quoted",
    )


def capped_dpi(width: float, height: float, *, dpi: float, max_pixels: int) -> float:
    """The highest dpi, at most `dpi`, at which a page of `width` x `height` points renders
    to at most `max_pixels` pixels (MuPDF rounds each side up to whole pixels).

    >>> capped_dpi(595, 842, dpi=300, max_pixels=9_000_000)  # A4 fits at 300 dpi
    300
    """
    if _pixels(width, height, dpi) <= max_pixels:
        return dpi
    zoom = math.sqrt(max_pixels / (width * height))  # exact when both sides land on whole pixels
    if _pixels(width, height, zoom * 72) > max_pixels:
        # else the zoom where (width*zoom + 1) * (height*zoom + 1) = max_pixels: rounding up
        # adds less than a pixel per side, so this one is always within the cap
        a, b, c = width * height, width + height, 1 - max_pixels
        zoom = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    return min(dpi, zoom * 72)


def _pixels(width: float, height: float, dpi: float) -> int:
    zoom = dpi / 72
    return math.ceil(width * zoom - 1e-3) * math.ceil(height * zoom - 1e-3)


def _no_text_layer(page: pymupdf.Page, clip: pymupdf.Rect) -> bool:
    """Whether a picture's area (in the rendering's coordinates) has almost no words of the
    text layer: a chart with real labels, or a picture behind text, is read already."""
    box = clip * page.derotation_matrix
    return len(page.get_text("words", clip=box)) < FIGURE_TEXT_LAYER_WORDS


def _moved(box: BBox, clip: pymupdf.Rect, turn: pymupdf.Matrix) -> BBox:
    """A box in a picture's own points, placed on its page (and turned to the unrotated page)."""
    r = pymupdf.Rect(box[0] + clip.x0, box[1] + clip.y0, box[2] + clip.x0, box[3] + clip.y0) * turn
    return (r.x0, r.y0, r.x1, r.y1)


def _place_of(blocks: list[TextBlock], block: TextBlock) -> int:
    """Where a picture's text block goes in the page's reading order: after the last block
    that ends above it (its caption, usually), else at the end."""
    above = [k for k, b in enumerate(blocks) if b.bbox[3] <= block.bbox[1] + 1]
    return above[-1] + 1 if above else len(blocks)


def _render(page: pymupdf.Page, dpi: float, clip: pymupdf.Rect | None = None) -> Image.Image:
    zoom = dpi / 72
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=clip, alpha=False)
    return Image.frombytes("RGB", (pix.width, pix.height), pix.samples)


def _image_ocr_dpi(rect: pymupdf.Rect) -> int:
    """Upscale small images for tesseract (at 72 dpi one pixel is one point)."""
    scale = min(3.0, max(1.0, 2000 / max(rect.width, rect.height)))
    return int(72 * scale)


def _styled_blocks(page: pymupdf.Page) -> list[TextBlock]:
    """The text layer's blocks in reading order, headings marked by type size and weight."""
    raw = [b for b in page.get_text("dict", sort=True)["blocks"] if b.get("type") == 0]
    sizes: Counter[float] = Counter()
    for block in raw:
        for line in block["lines"]:
            for span in line["spans"]:
                sizes[round(span["size"], 1)] += len(span["text"].strip())
    body = sizes.most_common(1)[0][0] if sizes else 0.0
    blocks = []
    for block in raw:
        spans = [s for line in block["lines"] for s in line["spans"] if s["text"].strip()]
        lines = ("".join(s["text"] for s in line["spans"]) for line in block["lines"])
        text = " ".join(" ".join(lines).split())
        if not text:
            continue
        largest = round(max(s["size"] for s in spans), 1)  # as the body size is counted
        heading = (
            len(text) <= HEADING_CHARS
            and len(block["lines"]) <= 3
            and any(ch.isalpha() for ch in text)
            and not _LEADERS.search(text)
            and (
                largest >= body * HEADING_SIZE
                # bold at body size: a run-in heading only when alone on its line
                or (len(block["lines"]) == 1 and largest >= body and all(s["flags"] & _BOLD for s in spans))
            )
        )
        x0, y0, x1, y1 = block["bbox"]
        blocks.append(TextBlock((float(x0), float(y0), float(x1), float(y1)), text, heading))
    return blocks


def _text_blocks(raw: list[tuple]) -> list[TextBlock]:
    blocks = []
    for x0, y0, x1, y1, text, _no, block_type in raw:
        text = " ".join(text.split())
        if block_type == 0 and text:
            blocks.append(TextBlock((float(x0), float(y0), float(x1), float(y1)), text))
    return blocks
