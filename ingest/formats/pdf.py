"""PDF documents, and the PyMuPDF page reader that images reuse.

A page's text comes from the PDF text layer; a page with less than `ocr_min_chars` of it
is read by OCR (tesseract) when that finds more. Pages render at `render_dpi`, capped at
`max_render_pixels`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator

import pymupdf
from PIL import Image

from ingest.errors import CorruptDocument, EncryptedDocument, TooLarge
from ingest.geotagging import GeoTag
from ingest.loaders import FileType, LoadedPage, LoadOptions, PointKind, SourceFile, TextBlock
from ingest.ocr import ocr_blocks, tesseract_available

log = logging.getLogger(__name__)
PDF = FileType("application/pdf", "pdf")


class PdfPages:
    """An `OpenedDocument` whose pages are PyMuPDF pages: a PDF, or an image carried as a
    one-page PDF at 1 pt per pixel (so OCR and boxes work the same for both)."""

    warnings: tuple[str, ...] = ()

    def __init__(self, pdf: pymupdf.Document, options: LoadOptions, kind: str, title: str | None) -> None:
        self._pdf = pdf
        self.options = options
        self.kind = kind
        self.title = title
        self.page_count = pdf.page_count

    def pages(self) -> Iterator[LoadedPage]:
        for index in range(self.page_count):
            yield self._load(index)

    def close(self) -> None:
        self._pdf.close()

    def _load(self, index: int) -> LoadedPage:
        page = self._pdf[index]
        rect = page.rect
        # Images keep their own resolution (1 pt = 1 px); PDF pages render at render_dpi.
        image = _render(
            page, self.options.render_dpi if self.kind == "pdf" else 72, self.options.max_render_pixels
        )
        blocks = _text_blocks(page.get_text("blocks", sort=True))
        source = "text" if blocks else "none"
        if sum(len(b.text) for b in blocks) < self.options.ocr_min_chars and self._can_ocr():
            dpi = self.options.ocr_dpi if self.kind == "pdf" else _image_ocr_dpi(rect)
            ocr = _text_blocks(ocr_blocks(page, self.options.ocr_languages, dpi))
            if sum(len(b.text) for b in ocr) > sum(len(b.text) for b in blocks):
                blocks, source = ocr, "ocr"
        return LoadedPage(index + 1, image, rect.width, rect.height, blocks, source)

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
        if pdf.needs_pass or pdf.is_encrypted:
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
        title = (pdf.metadata or {}).get("title") or None
        return PdfPages(pdf, options, "pdf", title)

    def geo_tags(self, source: SourceFile, ftype: FileType) -> list[GeoTag]:
        return []  # a PDF's places come from its text, page by page

    def point_kind(self, tags: list[GeoTag]) -> PointKind:
        return "pdf_page"


def _render(page: pymupdf.Page, dpi: int, max_pixels: int) -> Image.Image:
    zoom = dpi / 72
    area = page.rect.width * page.rect.height * zoom * zoom
    if area > max_pixels:
        zoom *= math.sqrt(max_pixels / area)
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
    return Image.frombytes("RGB", (pix.width, pix.height), pix.samples)


def _image_ocr_dpi(rect: pymupdf.Rect) -> int:
    """Upscale small images for tesseract (at 72 dpi one pixel is one point)."""
    scale = min(3.0, max(1.0, 2000 / max(rect.width, rect.height)))
    return int(72 * scale)


def _text_blocks(raw: list[tuple]) -> list[TextBlock]:
    blocks = []
    for x0, y0, x1, y1, text, _no, block_type in raw:
        text = " ".join(text.split())
        if block_type == 0 and text:
            blocks.append(TextBlock((float(x0), float(y0), float(x1), float(y1)), text))
    return blocks
