"""Opening and reading documents: text layer, rendering, OCR, and every refusal."""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from ingest.errors import CorruptDocument, EncryptedDocument, IngestError, TooLarge
from ingest.formats import open_document
from ingest.formats.pdf import capped_dpi
from ingest.loaders import LoadedPage, LoadOptions, OpenedDocument
from ingest.ocr import tesseract_available
from ingest.sniff import sniff
from tests.utils.documents import (
    content_bomb_pdf,
    float_tiff,
    form_bomb_pdf,
    image_bytes,
    make_pdf,
    scanned_pdf,
    text_image,
)

LINE_1 = "Relatório de enchentes 2024 no Recife, com muitos bairros afetados."
LINE_2 = "Segunda linha isolada, bem abaixo, no meio da página."
SCANNED_TEXT = "Relatório de enchentes 2024"

needs_tesseract = pytest.mark.skipif(not tesseract_available(), reason="tesseract (por+eng) is not installed")


def _open(data: bytes, **options) -> OpenedDocument:
    return open_document(data, sniff(data), LoadOptions(**options))


def _pages(data: bytes, **options) -> list[LoadedPage]:
    opened = _open(data, **options)
    try:
        return list(opened.pages())
    finally:
        opened.close()


def _text_pdf(pages: int = 1, title: str | None = None) -> bytes:
    # A4; the second line far below the first (y=400 pt), so the two are separate blocks
    lines = [[LINE_1, f"{LINE_2} ({i + 1})"] for i in range(pages)]
    return make_pdf(lines, origin=(72, 100), line_step=300, title=title)


def _text_png(text: str = SCANNED_TEXT, dpi: int = 200) -> bytes:
    return text_image(text, dpi=dpi)


def _scanned_pdf() -> bytes:
    return scanned_pdf(SCANNED_TEXT)


def _png(width: int, height: int, color: tuple[int, int, int] = (255, 255, 255)) -> bytes:
    return image_bytes(width, height, color=color)


# --- PDFs with a text layer ---------------------------------------------------------------------------


def test_text_pdf_gives_blocks_with_boxes_in_points() -> None:
    (page,) = _pages(_text_pdf(), render_dpi=144)
    assert page.page_no == 1
    assert page.text_source == "text"
    assert (page.width, page.height) == (595, 842)
    assert [b.text for b in page.blocks] == [LINE_1, f"{LINE_2} (1)"]
    first, second = page.blocks
    # Boxes are PDF points (origin top-left), not pixels of the 144-dpi rendering (x0 would be 144).
    assert first.bbox[0] == pytest.approx(72, abs=1)
    assert second.bbox[0] == pytest.approx(72, abs=1)
    assert 80 < first.bbox[1] < first.bbox[3] <= 105
    assert 380 < second.bbox[1] < second.bbox[3] <= 405
    for block in page.blocks:
        x0, y0, x1, y1 = block.bbox
        assert 0 <= x0 < x1 <= page.width and 0 <= y0 < y1 <= page.height


def test_pages_are_numbered_from_one_and_title_comes_from_metadata() -> None:
    opened = _open(_text_pdf(pages=3, title="Relatório Anual"))
    try:
        assert opened.kind == "pdf"
        assert opened.title == "Relatório Anual"
        assert opened.page_count == 3
        pages = list(opened.pages())
    finally:
        opened.close()
    assert [p.page_no for p in pages] == [1, 2, 3]
    assert [p.blocks[1].text for p in pages] == [f"{LINE_2} ({i})" for i in (1, 2, 3)]


def test_pdf_without_title_metadata_has_no_title() -> None:
    opened = _open(_text_pdf())
    assert opened.title is None
    opened.close()


@pytest.mark.parametrize("dpi", [72, 110, 144])
def test_rendered_image_size_follows_render_dpi(dpi: int) -> None:
    (page,) = _pages(_text_pdf(), render_dpi=dpi, ocr_enabled=False)
    assert page.image.mode == "RGB"
    width, height = page.image.size
    assert width == pytest.approx(595 * dpi / 72, abs=1)
    assert height == pytest.approx(842 * dpi / 72, abs=1)


def test_rendered_image_is_capped_by_max_render_pixels() -> None:
    cap = 100_000
    (page,) = _pages(_text_pdf(), render_dpi=300, max_render_pixels=cap, ocr_enabled=False)
    width, height = page.image.size
    # Scaled down to just within the cap, aspect ratio kept, and the page says so.
    assert width * height <= cap
    assert width * height > cap * 0.95
    assert page.warnings == [
        "rendered at 32 dpi, not 300 dpi (a 595 x 842 pt page; CARTA_MAX_RENDER_PIXELS is 100,000 pixels)"
    ]
    assert width / height == pytest.approx(595 / 842, rel=0.01)
    # The boxes stay in points whatever the rendering size.
    assert page.width == 595
    assert page.blocks[0].bbox[0] == pytest.approx(72, abs=1)


def test_text_layer_above_min_chars_is_not_replaced_by_ocr() -> None:
    (page,) = _pages(_text_pdf(), ocr_min_chars=10)
    assert page.text_source == "text"


# --- OCR ---------------------------------------------------------------------------------------------


@needs_tesseract
def test_image_only_pdf_page_is_read_by_ocr() -> None:
    (page,) = _pages(_scanned_pdf())
    assert page.text_source == "ocr"
    text = " ".join(b.text for b in page.blocks).lower()
    assert "enchentes" in text
    assert "2024" in text
    assert "relat" in text  # "Relatório": the accent depends on tesseract, the word does not
    for block in page.blocks:  # OCR boxes are in the page's points too
        x0, y0, x1, y1 = block.bbox
        assert 0 <= x0 < x1 <= page.width and 0 <= y0 < y1 <= page.height


@needs_tesseract
def test_image_file_is_read_by_ocr() -> None:
    (page,) = _pages(_text_png())
    assert page.text_source == "ocr"
    assert "enchentes" in " ".join(b.text for b in page.blocks).lower()


def test_ocr_disabled_leaves_image_only_page_without_text() -> None:
    (page,) = _pages(_scanned_pdf(), ocr_enabled=False)
    assert page.text_source == "none"
    assert page.blocks == []
    # The page is still rendered, so it can be shown and searched visually.
    assert page.image.size[0] > 0


def test_blank_page_has_no_text_even_with_ocr() -> None:
    (page,) = _pages(_png(200, 100))
    assert page.text_source == "none"
    assert page.blocks == []


# --- images ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "TIFF", "WEBP"])
def test_image_becomes_one_page_document_with_original_pixel_size(fmt: str) -> None:
    data = image_bytes(321, 123, color=(10, 120, 200), fmt=fmt)
    opened = _open(data, ocr_enabled=False, render_dpi=300, max_render_pixels=6_000_000)
    try:
        assert opened.kind == "image"
        assert opened.page_count == 1
        (page,) = list(opened.pages())
    finally:
        opened.close()
    # 1 px = 1 pt: the render_dpi of PDFs does not apply to images.
    assert page.image.size == (321, 123)
    assert (page.width, page.height) == (321, 123)
    # The pixels are the image's own.
    r, g, b = page.image.getpixel((160, 60))
    assert abs(r - 10) < 8 and abs(g - 120) < 8 and abs(b - 200) < 8


def test_image_with_alpha_or_palette_is_accepted() -> None:
    for mode in ("RGBA", "P", "L"):
        (page,) = _pages(image_bytes(40, 30, color=0, mode=mode), ocr_enabled=False)
        assert page.image.mode == "RGB"
        assert page.image.size == (40, 30)


# --- refusals ----------------------------------------------------------------------------------------


def test_encrypted_pdf_is_refused() -> None:
    with pytest.raises(EncryptedDocument) as info:
        _open(make_pdf(["segredo de estado"], password="senha"))
    assert type(info.value) is EncryptedDocument
    assert "password" in str(info.value)


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.7\n garbage garbage garbage",
        b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\n%%EOF",  # no pages at all
        _text_pdf()[:60],  # truncated right after the header
    ],
    ids=["garbage", "no-pages", "truncated-header"],
)
def test_corrupt_pdf_is_refused(data: bytes) -> None:
    with pytest.raises(CorruptDocument) as info:
        _open(data)
    assert type(info.value) is CorruptDocument


def test_pdf_whose_page_tree_is_cut_off_is_corrupt() -> None:
    # A PDF truncated just after its page tree: the /Kids objects never arrive.
    data = (
        b"%PDF-1.7\n1 0 obj\n<</Type/Catalog/Pages 2 0 R>>\nendobj\n\n"
        b"2 0 obj\n<</Type/Pages/Count 3/Kids[4 0 R 8 0 R 11 0 R]>>\nendobj\n"
    )
    with pytest.raises(CorruptDocument):
        _open(data)


def test_too_many_pages_is_refused() -> None:
    with pytest.raises(TooLarge) as info:
        _open(_text_pdf(pages=3), max_pages=2)
    assert type(info.value) is TooLarge
    assert "CARTA_MAX_PAGES" in str(info.value)


def test_pdf_whose_content_stream_inflates_past_the_page_limit_is_refused() -> None:
    """Fuzzing: 1.5 kB of Flate-of-Flate inflating to 300 MB of line operators held a
    worker for minutes (13 s per 28 MB rendered, then OCR and chart passes). Measured by
    decoding a buffer at a time, it is refused on opening, before any page is rendered."""
    import resource
    import time

    bomb = content_bomb_pdf(300 * 2**20)
    assert len(bomb) < 4096
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    with pytest.raises(TooLarge, match="page 1 .*CARTA_MAX_PAGE_CONTENT_BYTES"):
        _open(bomb)
    assert time.perf_counter() - started < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 100 * 1024  # KiB: never inflated


def test_pdf_content_limits_per_page_and_in_all() -> None:
    small = content_bomb_pdf(200_000)
    assert _open(small, max_page_content_bytes=200_000).page_count == 1
    with pytest.raises(TooLarge, match="CARTA_MAX_PAGE_CONTENT_BYTES"):
        _open(small, max_page_content_bytes=199_999)
    two = make_pdf(["x" * 40, "y" * 40])  # two ordinary pages, a few dozen bytes each
    assert _open(two, max_page_content_bytes=2**16, max_content_bytes=2**16).page_count == 2
    with pytest.raises(TooLarge, match="by page 2; CARTA_MAX_CONTENT_BYTES"):
        _open(two, max_content_bytes=len(pymupdf.open("pdf", two)[0].read_contents()) + 1)


def test_pdf_form_drawn_many_times_counts_once_per_use() -> None:
    """A form drawing a form ... seven deep, ten times each: 1.9 kB and 10 million lines
    (minutes of rendering), though no stream is over 60 bytes."""
    with pytest.raises(TooLarge, match="CARTA_MAX_PAGE_CONTENT_BYTES"):
        _open(form_bomb_pdf(7, 10))
    # 100 lines of 18 bytes through two forms: about 1.9 kB drawn
    assert _open(form_bomb_pdf(2, 10), max_page_content_bytes=2_000).page_count == 1
    with pytest.raises(TooLarge):
        _open(form_bomb_pdf(2, 10), max_page_content_bytes=1_800)


def test_image_over_max_pixels_is_refused() -> None:
    data = _png(300, 200)
    with pytest.raises(TooLarge) as info:
        _open(data, max_image_pixels=300 * 200 - 1)
    assert type(info.value) is TooLarge
    assert "300x200" in str(info.value)
    assert "CARTA_MAX_IMAGE_PIXELS" in str(info.value)
    # Exactly at the limit is fine.
    opened = _open(data, max_image_pixels=300 * 200)
    assert opened.page_count == 1
    opened.close()


def _png_header_only(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")
    )


def test_huge_declared_image_is_refused_before_decoding() -> None:
    # A few hundred bytes that claim 9000x9000 pixels: refused from the header, never decoded.
    with pytest.raises(TooLarge):
        _open(_png_header_only(9000, 9000))


def test_decompression_bomb_is_too_large_not_corrupt() -> None:
    with pytest.raises(TooLarge):
        _open(_png_header_only(20_000, 20_000))


@pytest.mark.parametrize("keep", [0.5, 0.1], ids=["half", "tenth"])
def test_truncated_png_is_corrupt(keep: float) -> None:
    buf = io.BytesIO()
    # Noise so the PNG is large and the cut falls inside the pixel data.
    Image.effect_noise((256, 256), 64).convert("RGB").save(buf, "PNG")
    data = buf.getvalue()
    with pytest.raises(CorruptDocument) as info:
        _open(data[: int(len(data) * keep)])
    assert type(info.value) is CorruptDocument
    assert isinstance(info.value, IngestError)


def test_png_signature_with_garbage_is_corrupt() -> None:
    with pytest.raises(CorruptDocument):
        _open(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)


# --- the pixel cap on rendering and OCR --------------------------------------------------------------


def _blank_pdf(width: float, height: float) -> bytes:
    doc = pymupdf.open()
    doc.new_page(width=width, height=height)
    data = doc.tobytes()
    doc.close()
    return data


def _big_scanned_pdf(side: float) -> bytes:
    """A side x side pt page whose only content is SCANNED_TEXT as pixels, across its top."""
    doc = pymupdf.open()
    page = doc.new_page(width=side, height=side)
    page.insert_image(pymupdf.Rect(0, 0, side, side * 120 / 420), stream=_text_png(dpi=200))
    data = doc.tobytes()
    doc.close()
    return data


@pytest.mark.parametrize(
    ("width", "height", "dpi", "cap"),
    [
        (595, 842, 300, 9_000_000),  # A4 OCR: fits as it is
        (612, 792, 300, 9_000_000),  # US Letter too
        (595, 842, 300, 6_000_000),
        (3000, 3000, 300, 9_000_000),
        (14400, 14400, 110, 9_000_000),
        (14400, 3, 300, 100_000),  # a strip: one side rounds up a lot
        (333.3, 777.7, 600, 1_234_567),
    ],
)
def test_capped_dpi_is_the_highest_dpi_within_the_cap(
    width: float, height: float, dpi: int, cap: int
) -> None:
    got = capped_dpi(width, height, dpi=dpi, max_pixels=cap)
    assert got <= dpi
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    zoom = got / 72
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom))
    assert pix.width * pix.height <= cap  # what MuPDF really makes, not an estimate
    if got < dpi:  # lowered: and by no more than a few percent of what the cap allows
        assert pix.width * pix.height > cap * 0.9
    doc.close()


def test_a4_fits_the_default_cap_at_the_default_ocr_dpi() -> None:
    options = LoadOptions()
    assert capped_dpi(595, 842, dpi=options.ocr_dpi, max_pixels=options.max_render_pixels) == options.ocr_dpi


def test_page_too_large_to_render_at_render_dpi_is_rendered_lower_with_a_warning() -> None:
    (page,) = _pages(_blank_pdf(3000, 3000), ocr_enabled=False)  # 110 dpi: 4584 x 4584 px
    width, height = page.image.size
    assert width * height <= LoadOptions().max_render_pixels
    assert (width, height) == (3000, 3000)  # 72 dpi: exactly the cap
    assert page.warnings == [
        "rendered at 72 dpi, not 110 dpi (a 3000 x 3000 pt page; CARTA_MAX_RENDER_PIXELS is 9,000,000 pixels)"
    ]


def test_page_within_the_cap_has_no_warning() -> None:
    (page,) = _pages(_text_pdf())
    assert page.warnings == []


@needs_tesseract
def test_page_too_large_for_ocr_dpi_is_ocred_lower_and_still_read() -> None:
    # 2000 x 2000 pt at 300 dpi would be 69 million pixels; 108 dpi is 9 million
    (page,) = _pages(_big_scanned_pdf(2000))
    assert "OCRed at 108 dpi, not 300 dpi (a 2000 x 2000 pt page" in " ".join(page.warnings)
    assert page.text_source == "ocr"
    assert "enchentes" in " ".join(b.text for b in page.blocks).lower()
    assert page.image.width * page.image.height <= LoadOptions().max_render_pixels


@needs_tesseract
def test_page_too_large_even_for_the_least_ocr_dpi_is_indexed_without_ocr() -> None:
    # 14400 x 14400 pt (the largest page PDF allows): 207 million pixels at 72 dpi; OCR at
    # 300 dpi used to fail in MuPDF (FzErrorLimit: Overly large image)
    (page,) = _pages(_blank_pdf(14400, 14400))
    assert page.text_source == "none"
    assert page.image.width * page.image.height <= LoadOptions().max_render_pixels
    assert page.warnings[0].startswith("rendered at 15 dpi, not 110 dpi (a 14400 x 14400 pt page")
    assert page.warnings[1] == (
        "not OCRed: even at 72 dpi it is over the cap "
        "(a 14400 x 14400 pt page; CARTA_MAX_RENDER_PIXELS is 9,000,000 pixels)"
    )


@needs_tesseract
def test_large_image_is_rendered_and_ocred_within_the_cap() -> None:
    data = _png(500, 400)  # 200,000 px
    (page,) = _pages(data, max_render_pixels=100_000)
    assert page.image.width * page.image.height <= 100_000
    assert (page.width, page.height) == (500, 400)  # boxes stay in the image's own pixels
    why = "(a 500 x 400 px image; CARTA_MAX_RENDER_PIXELS is 100,000 pixels)"
    # 300%: small images are OCRed upscaled, here capped below their own size
    assert page.warnings == [
        f"rendered at 70% scale, not 100% scale {why}",
        f"OCRed at 69% scale, not 300% scale {why}",
    ]


_PEAK_RSS = """
import resource, sys
import pymupdf
from ingest.formats import open_document
from ingest.formats.pdf import capped_dpi
from ingest.loaders import LoadOptions
from ingest.sniff import sniff

doc = pymupdf.open()
doc.new_page(width=3000, height=3000)
data = doc.tobytes()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
opened = open_document(data, sniff(data), LoadOptions())
pages = list(opened.pages())
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024, pages[0].warnings)
"""


@needs_tesseract
def test_ocr_of_a_huge_blank_page_stays_within_a_few_hundred_mb() -> None:
    # A 520-byte PDF with one blank 3000 x 3000 pt page took 1.8 GB of RSS when OCRed at
    # 300 dpi (156 million pixels); within the cap it is about 150 MB. Its own process, so
    # the peak is this page's alone.
    out = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    ).stdout
    growth_mb = int(out.split()[0])
    assert "OCRed at 72 dpi" in out
    assert growth_mb < 600, out


# --- encryption --------------------------------------------------------------------------------------


def _owner_only_pdf(text: str, permissions: int) -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 100), text)
    data = doc.tobytes(
        encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="dono", user_pw="", permissions=permissions
    )
    doc.close()
    return data


def test_owner_password_only_pdf_is_read_with_a_warning() -> None:
    # opens without a password, but its owner forbids copying and printing
    data = _owner_only_pdf(LINE_1, permissions=int(pymupdf.PDF_PERM_ACCESSIBILITY))
    opened = _open(data)
    try:
        (page,) = list(opened.pages())
    finally:
        opened.close()
    assert [b.text for b in page.blocks] == [LINE_1]
    (warning,) = opened.warnings
    assert "owner password" in warning and "copying text and printing" in warning
    assert "indexed" in warning


def test_owner_password_pdf_that_allows_everything_has_no_warning() -> None:
    everything = int(pymupdf.PDF_PERM_COPY | pymupdf.PDF_PERM_PRINT | pymupdf.PDF_PERM_ACCESSIBILITY)
    opened = _open(_owner_only_pdf(LINE_1, permissions=everything))
    assert opened.warnings == ()
    opened.close()


def test_raster_size_is_checked_on_its_tags_before_decoding() -> None:
    """A planar raster's shape is (bands, rows, cols): the check multiplied bands by rows,
    so 3 x 512 x 204,800 float32 (1 MB of zlib) passed as 1,536 pixels and decoded to
    over 5 GB inside the upload request. Rows x columns now, and every band's bytes."""
    from ingest.formats.raster import BYTES_PER_PIXEL

    planar = float_tiff((3, 32, 4096), planarconfig="separate", photometric="minisblack")
    with pytest.raises(TooLarge, match="4096x32 pixels"):
        _open(planar, max_image_pixels=32 * 4096 - 1)
    assert _open(planar, max_image_pixels=32 * 4096).page_count == 1
    # few pixels, many bands: 64 x 64 pixels of 80 float32 samples each
    bands = float_tiff((64, 64, 80), planarconfig="contig", photometric="minisblack")
    with pytest.raises(TooLarge, match="80 bands of float32"):
        _open(bands, max_image_pixels=64 * 64 * 80 * 4 // BYTES_PER_PIXEL - 1)
