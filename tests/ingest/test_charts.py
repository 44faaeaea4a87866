"""Bar charts read from pixels into tables (ingest/charts.py): a chart drawn here, corpus
charts through the real loader, and images that are no bar chart giving no table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from ingest.charts import TITLE_NOTE, read_bar_charts
from ingest.formats.image import ImageLoader
from ingest.formats.pdf import PdfLoader
from ingest.loaders import LoadOptions
from ingest.ocr import tesseract_available
from ingest.tables import Table
from tests.conftest import corpus_path

pytestmark = pytest.mark.skipif(not tesseract_available(), reason="tesseract (por+eng) is not installed")
FONTS = [
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"),
]
VALUES = {"North": 42.0, "South": 77.0, "East": 18.0, "West": 63.0, "Centre": 95.0}


def _font(size: int) -> ImageFont.FreeTypeFont:
    path = next((f for f in FONTS if f.exists()), None)
    if path is None:
        pytest.skip("no TrueType font found under /usr/share/fonts")
    return ImageFont.truetype(str(path), size)


def _drawn_chart() -> Image.Image:
    """A 900 x 600 bar chart: ticks 0..100 every 20 left of the plot, one label under each bar."""
    image = Image.new("RGB", (900, 600), "white")
    draw = ImageDraw.Draw(image)
    font = _font(22)
    top, base, left = 80, 500, 140
    per_unit = (base - top) / 100
    draw.line([(left, top), (left, base), (860, base)], fill="black", width=2)
    for tick in range(0, 101, 20):
        y = base - tick * per_unit
        draw.line([(left - 8, y), (left, y)], fill="black", width=2)
        draw.text((left - 14, y), str(tick), font=font, fill="black", anchor="rm")
    for i, (name, value) in enumerate(VALUES.items()):
        x0 = left + 30 + i * 140
        draw.rectangle([x0, base - value * per_unit, x0 + 90, base - 1], fill=(200, 80, 30))
        draw.text((x0 + 45, base + 14), name, font=font, fill="black", anchor="mt")
    draw.text((500, 30), "Sales by region", font=_font(28), fill="black", anchor="mm")
    return image


def _rows(table: Table) -> dict[str, float]:
    return {row[0].text: float(row[1].text) for row in table.rows}


def test_a_drawn_bar_chart_reads_back_within_two_percent() -> None:
    tables = read_bar_charts(_drawn_chart(), "eng", page_scale=0.5)
    assert len(tables) == 1
    table = tables[0]
    read = _rows(table)
    assert set(read) == set(VALUES)
    for name, value in VALUES.items():
        assert read[name] == pytest.approx(value, abs=2.0), name
    assert TITLE_NOTE in table.title and "Sales by region" in table.title
    # boxes in page points: half the pixels here; the tallest bar's top near its pixel row / 2
    centre = next(row for row in table.rows if row[0].text == "Centre")[1].bbox
    assert centre[1] == pytest.approx((500 - 95 * 4.2) / 2, abs=2) and centre[3] == pytest.approx(250, abs=2)


def test_images_that_are_no_bar_chart_give_no_table() -> None:
    rng = np.random.default_rng(7)
    noise = Image.fromarray(rng.integers(0, 255, (400, 600, 3), dtype=np.uint8))
    assert read_bar_charts(noise, "eng") == []
    text = Image.new("RGB", (800, 400), "white")
    ImageDraw.Draw(text).multiline_text(
        (20, 20), "Quarterly report\n12 34 56\nRevenue rose 8%", font=_font(28), fill="black"
    )
    assert read_bar_charts(text, "eng") == []
    assert read_bar_charts(Image.new("RGB", (1, 1)), "eng") == []


def test_a_corpus_map_raster_gives_no_table() -> None:
    path = corpus_path("charts", "vegalite_geo_choropleth.png")
    assert read_bar_charts(Image.open(path), "eng") == []


def _loaded_tables(path: Path) -> list[list[Table]]:
    data = path.read_bytes()
    loader = PdfLoader() if path.suffix == ".pdf" else ImageLoader()
    ftype = loader.sniff(data)
    assert ftype is not None
    document = loader.open(data, ftype, LoadOptions(ocr_languages="eng"))
    try:
        return [page.tables for page in document.pages()]
    finally:
        document.close()


def test_corpus_bar_charts_load_as_table_rows() -> None:
    (vega,) = _loaded_tables(corpus_path("charts", "vegalite_bar.png"))
    expected = {"A": 28, "B": 55, "C": 43, "D": 91, "E": 81, "F": 53, "G": 19, "H": 87, "I": 52}
    assert len(vega) == 1
    for name, value in expected.items():
        assert _rows(vega[0])[name] == pytest.approx(value, abs=1), name
    (acme,) = _loaded_tables(corpus_path("charts", "acme_product_c_monthly_revenue.png"))
    months = _rows(acme[0])
    assert list(months)[:2] == ["Jan", "Feb"] and len(months) == 12
    assert months["Jan"] == pytest.approx(1200, rel=0.02)
    assert months["Jun"] == pytest.approx(2700, rel=0.02) and max(months, key=months.__getitem__) == "Jun"
    assert months["Dec"] == pytest.approx(1100, rel=0.02)
    assert acme[0].columns[0] == "Month"


def test_loading_without_chart_tables_keeps_pages_as_they_were() -> None:
    data = corpus_path("charts", "vegalite_bar.png").read_bytes()
    document = ImageLoader().open(data, ImageLoader().sniff(data), LoadOptions(chart_tables=False))  # type: ignore[arg-type]
    assert [page.tables for page in document.pages()] == [[]]
    document.close()


def test_a_chart_pictured_on_a_text_page_is_read_where_it_sits() -> None:
    """A report page with prose and a bar chart inserted as a picture ("Figura 1"): the chart
    is read from the picture's own rendering, its cells boxed inside the picture's place on
    the page, and the prose stays the page's text."""
    import io

    import pymupdf

    buf = io.BytesIO()
    _drawn_chart().save(buf, "PNG")
    pdf = pymupdf.open()
    page = pdf.new_page(width=595, height=842)
    prose = "Relatório de vendas. A figura abaixo mostra as vendas por região no ano de 2024, " * 3
    page.insert_textbox(pymupdf.Rect(72, 60, 523, 200), prose, fontsize=11)
    place = pymupdf.Rect(72, 220, 522, 520)  # the 900 x 600 picture at half size
    page.insert_image(place, stream=buf.getvalue())
    data = pdf.tobytes()
    loader = PdfLoader()
    document = loader.open(data, loader.sniff(data), LoadOptions(ocr_languages="eng", layout="text"))  # type: ignore[arg-type]
    try:
        (loaded,) = list(document.pages())
    finally:
        document.close()
    charts = [t for t in loaded.tables if TITLE_NOTE in t.title]
    assert len(charts) == 1 and "Relatório de vendas" in " ".join(b.text for b in loaded.blocks)
    for name, value in VALUES.items():
        assert _rows(charts[0])[name] == pytest.approx(value, abs=2), name
    for row in charts[0].rows:
        for cell in row:
            x0, y0, x1, y1 = cell.bbox
            assert place.x0 - 1 <= x0 <= x1 <= place.x1 + 1 and place.y0 - 1 <= y0 <= y1 <= place.y1 + 1
