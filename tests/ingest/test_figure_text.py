"""ingest/figure_text.py through the PDF loader: a table pasted into a report page as a
picture (tinted rows, no text layer) is read by OCR into a table placed where the picture
sits, a pasted paragraph into the page's text; a photo-like picture adds nothing; the
setting turns it off."""

from __future__ import annotations

import io

import numpy as np
import pymupdf
import pytest
from PIL import Image, ImageDraw

from ingest.figure_text import kept_tables, prose_blocks, read_figure, thresholded
from ingest.formats.pdf import PdfLoader
from ingest.loaders import LoadedPage, LoadOptions, TextBlock
from ingest.ocr import tesseract_available
from ingest.tables import Cell, Table, aligned_tables
from tests.ingest.test_charts import _font

pytestmark = pytest.mark.skipif(not tesseract_available(), reason="tesseract (por+eng) is not installed")
ROWS = [("Country", "2017", "2018"), ("Chine", "131 000", "175 400"), ("Japon", "49 000", "55 500"),
        ("Inde", "19 000", "29 800"), ("Australie", "7 200", "11 300")]  # fmt: skip
PROSE = "Rapport annuel. Le tableau ci-dessous donne la puissance installée par pays, en MW. " * 3
PLACE = pymupdf.Rect(100, 240, 460, 460)  # where the 900 x 550 picture sits on the page


def _table_picture() -> Image.Image:
    """A table as a report pastes it: a dark header with white type, pale tinted rows."""
    image = Image.new("RGB", (900, 550), "white")
    draw = ImageDraw.Draw(image)
    font = _font(34)
    for r, row in enumerate(ROWS):
        top = 20 + r * 100
        fill = (31, 73, 125) if r == 0 else ((220, 230, 241) if r % 2 else (255, 255, 255))
        draw.rectangle((20, top, 880, top + 90), fill=fill)
        for c, text in enumerate(row):
            draw.text((40 + c * 300, top + 25), text, font=font, fill="white" if r == 0 else "black")
    return image


def _noise_picture() -> Image.Image:
    rng = np.random.default_rng(7)
    return Image.fromarray(rng.integers(0, 255, (550, 900, 3), dtype=np.uint8))


def _page_with(picture: Image.Image, **options: object) -> LoadedPage:
    buf = io.BytesIO()
    picture.save(buf, "PNG")
    pdf = pymupdf.open()
    page = pdf.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(72, 60, 523, 200), PROSE, fontsize=11)
    page.insert_image(PLACE, stream=buf.getvalue())
    data = pdf.tobytes()
    loader = PdfLoader()
    document = loader.open(data, loader.sniff(data), LoadOptions(ocr_languages="eng", **options))  # type: ignore[arg-type]
    try:
        (loaded,) = list(document.pages())
    finally:
        document.close()
    return loaded


def _inside(box: tuple[float, float, float, float]) -> bool:
    x0, y0, x1, y1 = box
    return PLACE.x0 - 1 <= x0 <= x1 <= PLACE.x1 + 1 and PLACE.y0 - 1 <= y0 <= y1 <= PLACE.y1 + 1


def test_a_pictured_table_is_read_into_a_table_where_it_sits() -> None:
    loaded = _page_with(_table_picture())
    assert "Rapport annuel" in loaded.blocks[0].text  # the text layer is read as before
    (table,) = loaded.tables
    by_name = {row[0].text: [c.text for c in row[1:]] for row in table.rows}
    assert by_name["Japon"] == ["49 000", "55 500"] and by_name["Australie"] == ["7 200", "11 300"]
    assert table.columns[1:] == ["2017", "2018"]
    assert all(_inside(cell.bbox) for row in table.rows for cell in row)


def _prose_picture() -> Image.Image:
    """A scanned paragraph, as a letterhead or a pasted memo: prose, few numbers."""
    image = Image.new("RGB", (900, 300), (250, 248, 240))
    draw = ImageDraw.Draw(image)
    lines = ["The survey team visited every canal of the", "northern basin and found the banks stable,",
             "with new silt only near the river mouth."]  # fmt: skip
    for k, line in enumerate(lines):
        draw.text((30, 30 + k * 80), line, font=_font(34), fill="black")
    return image


def test_a_pictured_paragraph_is_page_text_and_a_pictured_table_without_detection_is_not() -> None:
    """A paragraph pasted as a picture joins the page's text where it sits. The table picture
    read with table detection off (CARTA_LAYOUT=text) would be numbers without the labels
    that say what they measure: it adds nothing."""
    loaded = _page_with(_prose_picture())
    text = " ".join(b.text for b in loaded.blocks if _inside(b.bbox))
    assert "survey team" in text and "river mouth" in text and loaded.tables == []
    loaded = _page_with(_table_picture(), layout="text")
    assert loaded.tables == [] and not any(_inside(b.bbox) for b in loaded.blocks)


def test_a_picture_that_does_not_read_as_text_adds_nothing() -> None:
    assert read_figure(_noise_picture(), "eng", 200) is None
    loaded = _page_with(_noise_picture())
    assert loaded.tables == [] and not any(_inside(b.bbox) for b in loaded.blocks)


def test_figure_text_off_leaves_the_picture_unread() -> None:
    loaded = _page_with(_table_picture(), figure_text=False)
    assert loaded.tables == [] and not any(_inside(b.bbox) for b in loaded.blocks)


def test_thresholding_turns_tint_white_and_type_black() -> None:
    grey = np.asarray(thresholded(_table_picture()))
    assert set(np.unique(grey)) <= {0, 255}
    assert grey[20 + 100 + 5, 600] == 255  # a pale tinted row's background
    assert grey[20 + 45, 600] == 255  # the dark header's middle: its white type is the ink there


def test_chart_ticks_and_junk_grids_are_not_kept() -> None:
    ticks = [TextBlock((0, 0, 10, 10), "Monthly churn rate (%) Jan-Sep 2024 3.0 2.8% 2.6% 2.4%")]
    assert prose_blocks(ticks) == []
    memo = [TextBlock((0, 0, 10, 10), "The survey team visited every canal of the basin in March 2024.")]
    assert prose_blocks(memo) == memo

    def table(*rows: tuple[str, ...]) -> Table:
        cells = [[Cell(text, (0, 0, 1, 1)) for text in row] for row in rows]
        return Table(0, "", ["a", "b"], 1, cells, (0, 0, 1, 1))

    grid = table(("Corse", "i \\"), ("1 \\", "( ‘"), ("Normandie |", "! 1"))
    kept = table(("Japon", "6,5"), ("Inde", "10,8"), ("Chine", "44,4"))
    assert kept_tables([grid, kept]) == [kept]


def test_an_unruled_table_is_read_by_its_aligned_columns_with_its_header() -> None:
    """What tesseract leaves of a pictured table: words in aligned columns, no rules, a
    header wider than the numbers it heads, a vertical rule read as "|"."""
    pdf = pymupdf.open()
    page = pdf.new_page(width=300, height=200)
    page.insert_text((10, 20), "Pays", fontsize=9)
    page.insert_text((150, 20), "|", fontsize=9)
    page.insert_text((190, 20), "Puissance (GW)", fontsize=9)
    for k, (name, value) in enumerate(
        [("Chine", "44,4"), ("Inde", "10,8"), ("Japon", "6,5"), ("Turquie", "1,6")]
    ):
        page.insert_text((10, 40 + 14 * k), name, fontsize=9)
        page.insert_text((240, 40 + 14 * k), value, fontsize=9)
    (table,) = aligned_tables(page)
    assert table.columns == ["Pays", "Puissance (GW)"]
    assert [[c.text for c in row] for row in table.rows] == [
        ["Chine", "44,4"], ["Inde", "10,8"], ["Japon", "6,5"], ["Turquie", "1,6"]
    ]  # fmt: skip
