"""OCR through tesseract, driven by PyMuPDF (`get_textpage_ocr`), so scanned PDF pages
and images go through one path and keep word positions.

One OCR at a time per process: tesseract (and Leptonica under it) is not thread-safe, and
two ingest workers OCRing at once fail ("Attempt to use Leptonica from 2 threads at once!",
then a MuPDF FzErrorArgument). `_OCR_LOCK` serialises every call into tesseract; the rest of
a page's work (rendering, the text layer, encoding) still runs in parallel. A process pool
would OCR in parallel, but it would need the page re-opened in the child (the document's
bytes shipped per page), a spawn-safe start next to torch, and it would multiply the peak
memory of OCR by the pool size; a lock keeps that peak at one capped page
(ingest/formats/pdf.py) and OCR is a small share of an ingest worker's time.
"""

from __future__ import annotations

import functools
import io
import logging
import shutil
import threading

import pymupdf
from PIL import Image

log = logging.getLogger(__name__)

INSTALL_HINT = "sudo apt-get install -y tesseract-ocr tesseract-ocr-por tesseract-ocr-eng"
_OCR_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def tesseract_available() -> bool:
    """True when tesseract and its language data can be found; warns once otherwise."""
    if shutil.which("tesseract") is None:
        log.warning("OCR disabled: tesseract is not installed. Install it with: %s", INSTALL_HINT)
        return False
    try:
        pymupdf.get_tessdata()
    except RuntimeError:
        log.warning(
            "OCR disabled: tesseract language data not found (set TESSDATA_PREFIX). Install: %s", INSTALL_HINT
        )
        return False
    return True


def ocr_blocks(page: pymupdf.Page, languages: str, dpi: float) -> list[tuple]:
    """Text blocks (x0, y0, x1, y1, text, block_no, block_type) read by OCR of the page
    rendered at `dpi` (the caller keeps that within the pixel cap); one call at a time."""
    with _OCR_LOCK:
        textpage = page.get_textpage_ocr(language=languages, dpi=dpi, full=True)
        return page.get_text("blocks", textpage=textpage, sort=True)


Word = tuple[float, float, float, float, str]  # x0, y0, x1, y1 (pixels of the image read), text


def ocr_image_words(image: Image.Image, languages: str, zoom: float = 1.0) -> list[Word]:
    """The words tesseract reads in `image` (boxes in the image's pixels), the image carried
    as a one-page PDF like a picture document; `zoom` > 1 upscales small text for tesseract."""
    pdf = pymupdf.open()
    try:
        page = pdf.new_page(width=image.width, height=image.height)
        buf = io.BytesIO()
        image.save(buf, "PNG")
        page.insert_image(page.rect, stream=buf.getvalue())
        with _OCR_LOCK:
            textpage = page.get_textpage_ocr(language=languages, dpi=max(1, round(72 * zoom)), full=True)
            words = page.get_text("words", textpage=textpage)
    finally:
        pdf.close()
    return [
        (float(w[0]), float(w[1]), float(w[2]), float(w[3]), str(w[4])) for w in words if str(w[4]).strip()
    ]


def ocr_pdf_page(image: Image.Image, languages: str, dpi: float) -> bytes:
    """`image` as a one-page PDF holding it and the text tesseract reads in it (an invisible
    text layer, as OCRmyPDF makes), the page `image`'s size at `dpi`: the table detector and
    the text readers then take it like any PDF page."""
    buf = io.BytesIO()
    image.convert("RGB").save(buf, "PNG")
    pix = pymupdf.Pixmap(buf.getvalue())
    pix.set_dpi(round(dpi), round(dpi))
    with _OCR_LOCK:
        return pix.pdfocr_tobytes(language=languages)
