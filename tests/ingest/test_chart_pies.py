"""Pie and donut charts read from pixels into (slice, share) rows (ingest/chart_pies.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from ingest.chart_note import TITLE_NOTE
from ingest.chart_pies import find_pie, pie_slices
from ingest.charts import read_bar_charts
from ingest.ocr import tesseract_available
from tests.conftest import corpus_path

pytestmark = pytest.mark.skipif(not tesseract_available(), reason="tesseract (por+eng) is not installed")
FONTS = [
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"),
]
SHARES = {"Solar": 45.0, "Wind": 30.0, "Hydro": 15.0, "Biomass": 10.0}
COLOURS = [(230, 120, 30), (40, 110, 200), (60, 170, 80), (200, 50, 60)]


def _font(size: int) -> ImageFont.FreeTypeFont:
    path = next((f for f in FONTS if f.exists()), None)
    if path is None:
        pytest.skip("no TrueType font found under /usr/share/fonts")
    return ImageFont.truetype(str(path), size)


def _drawn_pie(hole: int = 0) -> Image.Image:
    """A 700 x 700 pie (a donut with a `hole` radius), each slice labelled outside at its
    middle angle, drawn clockwise from 12 o'clock as chart libraries do."""
    image = Image.new("RGB", (700, 700), "white")
    draw = ImageDraw.Draw(image)
    cx, cy, r = 350, 370, 200
    start = -90.0  # PIL's angles run clockwise from 3 o'clock
    for (name, share), colour in zip(SHARES.items(), COLOURS, strict=True):
        end = start + 360 * share / 100
        draw.pieslice([cx - r, cy - r, cx + r, cy + r], start, end, fill=colour, outline="white", width=2)
        middle = np.radians((start + end) / 2)
        draw.text((cx + 1.3 * r * np.cos(middle), cy + 1.3 * r * np.sin(middle)), name, font=_font(26),
                  fill="black", anchor="mm")  # fmt: skip
        start = end
    if hole:
        draw.ellipse([cx - hole, cy - hole, cx + hole, cy + hole], fill="white")
    draw.text((350, 40), "Electricity by source", font=_font(30), fill="black", anchor="mm")
    return image


@pytest.mark.parametrize("hole", [0, 90])
def test_a_drawn_pie_or_donut_reads_each_slice_share_and_label(hole: int) -> None:
    tables = read_bar_charts(_drawn_pie(hole), "eng", page_scale=0.5)
    assert len(tables) == 1, tables
    table = tables[0]
    read = {row[0].text: float(row[1].text) for row in table.rows}
    assert set(read) == set(SHARES), read
    for name, share in SHARES.items():
        assert read[name] == pytest.approx(share, abs=1.0), name
    assert table.title == f"Electricity by source (pie chart; {TITLE_NOTE})"  # no slice label in it
    assert table.columns[1].endswith("(%)")
    # boxes in page points (half the pixels): the largest slice's box reaches the disc's right edge
    solar = next(row for row in table.rows if row[0].text == "Solar")[1].bbox
    assert solar[2] == pytest.approx((350 + 200) / 2, abs=3)


def test_the_corpus_pie_reads_its_shares_within_a_point() -> None:
    """vega-lite's labelled pie: a4 b6 c10 d3 e7 f8 of 38; the largest slice is c's."""
    image = Image.open(corpus_path("charts", "vegalite_layer_arc_label.png"))
    (table,) = read_bar_charts(image, "eng")
    shares = [float(row[1].text) for row in table.rows]
    truth = [v / 38 * 100 for v in (4, 6, 10, 3, 7, 8)]
    assert shares == pytest.approx(truth, abs=1.0)
    largest = max(table.rows, key=lambda row: float(row[1].text))
    assert largest[0].text == "c"


def test_shapes_that_are_no_pie_give_no_slices() -> None:
    square = Image.new("RGB", (300, 300), "white")
    ImageDraw.Draw(square).rectangle([50, 50, 250, 250], fill=(200, 60, 40))
    assert find_pie(np.asarray(square, dtype=np.int16)) is None
    one = Image.new("RGB", (300, 300), "white")
    ImageDraw.Draw(one).ellipse([50, 50, 250, 250], fill=(200, 60, 40))
    rgb = np.asarray(one, dtype=np.int16)
    pie = find_pie(rgb)
    assert pie is not None and len(pie_slices(rgb, *pie)) < 2
    assert read_bar_charts(one, "eng") == []  # a disc of one colour is no pie of shares


def test_a_tilted_satellite_footprint_is_no_pie() -> None:
    """The Landsat scene's footprint is a tilted square on black: round enough by its area,
    but its corners pass the circle, and its colours are no few slices."""
    image = Image.open(corpus_path("raster", "rasterio_RGB.byte.tif")).convert("RGB")
    assert find_pie(np.asarray(image, dtype=np.int16)) is None
    assert read_bar_charts(image, "eng") == []
