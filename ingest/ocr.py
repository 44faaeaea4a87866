"""OCR through tesseract, driven by PyMuPDF (`get_textpage_ocr`), so scanned PDF pages
and images go through one path and keep word positions."""

from __future__ import annotations

import functools
import logging
import shutil

import pymupdf

log = logging.getLogger(__name__)

INSTALL_HINT = "sudo apt-get install -y tesseract-ocr tesseract-ocr-por tesseract-ocr-eng"


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


def ocr_blocks(page: pymupdf.Page, languages: str, dpi: int) -> list[tuple]:
    """Text blocks (x0, y0, x1, y1, text, block_no, block_type) read by OCR."""
    textpage = page.get_textpage_ocr(language=languages, dpi=dpi, full=True)
    return page.get_text("blocks", textpage=textpage, sort=True)
