"""Turn a PDF, an image or a vector geodata file into pages: a rendered image plus text blocks with boxes.

Everything that can reject the input (corrupt, encrypted, too many pages, too many
pixels) happens in `open_document`, before anything is stored.
"""

from __future__ import annotations

import io
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass

import pymupdf
from PIL import Image, UnidentifiedImageError

from ingest.errors import CorruptDocument, EncryptedDocument, TooLarge
from ingest.ocr import ocr_blocks, tesseract_available
from ingest.raster_preview import needs_raster_preview, raster_preview
from ingest.sniff import FileType

log = logging.getLogger(__name__)
BBox = tuple[float, float, float, float]


@dataclass(frozen=True)
class LoadOptions:
    render_dpi: int = 110
    max_render_pixels: int = 6_000_000
    ocr_enabled: bool = True
    ocr_languages: str = "por+eng"
    ocr_dpi: int = 300
    ocr_min_chars: int = 40
    max_pages: int = 2000
    max_image_pixels: int = 60_000_000


@dataclass
class TextBlock:
    bbox: BBox  # in page units (PDF points; pixels for images), origin top-left
    text: str


@dataclass
class LoadedPage:
    page_no: int  # 1-based
    image: Image.Image
    width: float  # page size in the units of the block boxes
    height: float
    blocks: list[TextBlock]
    text_source: str  # "text", "ocr" or "none"


class OpenedDocument:
    """A validated document whose pages can be loaded one at a time."""

    warnings: tuple[str, ...] = ()  # for the ingest result (e.g. limits that applied)

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


def open_document(data: bytes, ftype: FileType, options: LoadOptions) -> OpenedDocument:
    if ftype.kind == "pdf":
        return _open_pdf(data, options)
    if ftype.kind in ("geojson", "kml", "kmz", "osm", "osm-pbf"):
        from ingest.vector_geodata import open_vector_document  # it builds on this module's types

        return open_vector_document(data, ftype.kind, options)
    return _open_image(data, options)


def _open_pdf(data: bytes, options: LoadOptions) -> OpenedDocument:
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
    return OpenedDocument(pdf, options, "pdf", title)


def _open_image(data: bytes, options: LoadOptions) -> OpenedDocument:
    if needs_raster_preview(data):  # multi-band / float / 16-bit GeoTIFF rasters
        try:
            image = raster_preview(data, options.max_image_pixels)
        except Exception as exc:
            raise CorruptDocument(f"the raster cannot be decoded ({exc})") from exc
        if image.width * image.height > options.max_image_pixels:
            raise TooLarge(
                f"the raster is {image.width}x{image.height} pixels; the limit is "
                f"{options.max_image_pixels:,} pixels (CARTA_MAX_IMAGE_PIXELS)"
            )
        return _image_document(image, options)
    try:
        with Image.open(io.BytesIO(data)) as probe:
            width, height = probe.size
            if width * height > options.max_image_pixels:
                raise TooLarge(
                    f"the image is {width}x{height} pixels; the limit is {options.max_image_pixels:,} "
                    "pixels (CARTA_MAX_IMAGE_PIXELS)"
                )
            probe.seek(0)
            image = probe.convert("RGB")  # decodes fully: truncated files fail here
    except TooLarge:
        raise
    except Image.DecompressionBombError as exc:  # Pillow's own hard cap, far above ours
        raise TooLarge(f"the image is too large ({exc}); limit: CARTA_MAX_IMAGE_PIXELS") from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise CorruptDocument(f"the image cannot be decoded ({exc})") from exc
    return _image_document(image, options)


def _image_document(image: Image.Image, options: LoadOptions) -> OpenedDocument:
    """A one-page PDF at 1 pt per pixel carries the image, so OCR and boxes work as for PDFs."""
    pdf = pymupdf.open()
    page = pdf.new_page(width=image.width, height=image.height)
    buf = io.BytesIO()
    image.save(buf, "PNG")
    page.insert_image(page.rect, stream=buf.getvalue())
    return OpenedDocument(pdf, options, "image", None)


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
