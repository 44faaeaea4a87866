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


def _matplotlib_chart(kind: str) -> Image.Image:
    """A chart drawn by matplotlib with a legend and known values: "stacked", "grouped" or "line"."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    regions = list(SERIES["Wheat"])
    if kind == "stacked":
        bottom = [0.0] * len(regions)
        for name, values in SERIES.items():
            ax.bar(regions, list(values.values()), bottom=bottom, label=name)
            bottom = [b + v for b, v in zip(bottom, values.values(), strict=True)]
        ax.set_ylabel("Harvest (tonnes)")
    elif kind == "grouped":
        width = 0.25
        for i, (name, values) in enumerate(SERIES.items()):
            ax.bar(
                [x + (i - 1) * width for x in range(len(regions))], list(values.values()), width, label=name
            )
        ax.set_xticks(range(len(regions)), regions)
        ax.set_ylabel("Harvest (tonnes)")
    elif kind == "line":
        for name, values in TEMPERATURES.items():
            ax.plot(list(values), list(values.values()), label=name)
        ax.set_ylabel("Temperature (C)")
    else:  # lines with markers that cross each other, a numeric x axis, the legend outside
        for (name, values), marker in zip(CAPACITY.items(), "os^", strict=True):
            ax.plot(list(values), list(values.values()), f"{marker}-", label=name)
        ax.set_ylabel("Capacity (GW)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
        fig.tight_layout()
    if kind != "markers":
        ax.legend()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


SERIES = {
    "Wheat": {"North": 20.0, "South": 35.0, "East": 30.0, "West": 10.0},
    "Maize": {"North": 25.0, "South": 10.0, "East": 15.0, "West": 30.0},
    "Rice": {"North": 5.0, "South": 15.0, "East": 10.0, "West": 20.0},
}
TEMPERATURES = {
    "Lisbon": {"Jan": 12.0, "Feb": 15.0, "Mar": 19.0, "Apr": 24.0, "May": 28.0, "Jun": 31.0, "Jul": 33.0},
    "Oslo": {"Jan": 5.0, "Feb": 6.0, "Mar": 9.0, "Apr": 13.0, "May": 17.0, "Jun": 20.0, "Jul": 22.0},
}


CAPACITY = {
    "Solar": dict(zip(range(2015, 2023), [10.0, 14, 18, 16, 22, 25, 21, 30], strict=True)),
    "Wind": dict(zip(range(2015, 2023), [28.0, 24, 20, 19, 17, 21, 26, 24], strict=True)),
    "Hydro": dict(zip(range(2015, 2023), [5.0, 9, 12, 20, 26, 18, 15, 12], strict=True)),
}


def _grid(table: Table) -> dict[str, dict[str, str]]:
    """Row label -> column name -> cell text."""
    return {
        row[0].text: {c: cell.text for c, cell in zip(table.columns[1:], row[1:], strict=True)}
        for row in table.rows
    }


@pytest.mark.parametrize("kind", ["stacked", "grouped"])
def test_drawn_stacked_and_grouped_bars_read_one_column_per_legend_series(kind: str) -> None:
    (table,) = read_bar_charts(_matplotlib_chart(kind), "eng")
    assert f"{kind} bar chart" in table.title and TITLE_NOTE in table.title
    assert table.columns[1:4] == ["Wheat", "Maize", "Rice"]  # named by the legend
    read = _grid(table)
    assert set(read) == {"North", "South", "East", "West"}
    for series, values in SERIES.items():
        for region, value in values.items():
            assert float(read[region][series]) == pytest.approx(value, abs=0.5), (series, region)
    if kind == "stacked":  # the stack's height too
        assert float(read["South"]["Total"]) == pytest.approx(60, abs=1)


def test_a_drawn_line_chart_reads_each_line_at_the_ticks_and_its_extremes() -> None:
    (table,) = read_bar_charts(_matplotlib_chart("line"), "eng")
    assert "line chart" in table.title and table.columns[1:3] == ["Lisbon", "Oslo"]
    read = _grid(table)
    assert list(read)[:7] == list(TEMPERATURES["Lisbon"])  # one row per x tick, in order
    for city, values in TEMPERATURES.items():
        for month, value in values.items():
            assert float(read[month][city]) == pytest.approx(value, abs=0.5), (city, month)
    assert float(read["Highest point"]["Lisbon"]) == pytest.approx(33, abs=0.5)
    assert float(read["Lowest point"]["Oslo"]) == pytest.approx(5, abs=0.5)
    all_lines = table.columns[-1]
    assert "all lines" in all_lines and float(read["Highest point"][all_lines]) == pytest.approx(33, abs=0.5)
    # where each line starts and ends: its first and last tick's value, no value over all lines
    first, last = list(TEMPERATURES["Oslo"])[0], list(TEMPERATURES["Oslo"])[-1]
    for city, values in TEMPERATURES.items():
        assert float(read["Start (first point)"][city]) == pytest.approx(values[first], abs=0.5), city
        assert float(read["End (last point)"][city]) == pytest.approx(values[last], abs=0.5), city
    assert read["Start (first point)"][all_lines] == ""


def test_a_line_far_above_the_axis_floor_reads_the_labels_under_the_floor() -> None:
    """Churn between 1.7% and 2.8% on an axis from 1.0: the month labels sit under the
    plot's floor, well below the line's lowest point, and are still its x ticks."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    churn = {"Jan": 2.4, "Feb": 2.2, "Mar": 2.6, "Apr": 2.3, "May": 2.0, "Jun": 1.9}
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot(list(churn), list(churn.values()), color="purple")
    ax.set_ylim(1.0, 3.0)
    ax.set_yticks([1.0, 1.5, 2.0, 2.5, 3.0], ["1.0", "1.5", "2.0", "2.5", "3.0"])
    ax.tick_params(labelsize=12)
    ax.set_ylabel("Churn rate (%)")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    (table,) = read_bar_charts(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"), "eng")
    read = _grid(table)
    assert list(read)[:6] == list(churn)
    for month, value in churn.items():
        assert float(read[month][table.columns[1]]) == pytest.approx(value, abs=0.05), month


def test_drawn_lines_with_markers_that_cross_read_at_each_year() -> None:
    (table,) = read_bar_charts(_matplotlib_chart("markers"), "eng")
    assert table.columns[1:4] == ["Solar", "Wind", "Hydro"]
    read = _grid(table)
    assert list(read)[:8] == [str(year) for year in range(2015, 2023)]  # the numeric axis' ticks
    for name, values in CAPACITY.items():
        for year, value in values.items():
            assert float(read[str(year)][name]) == pytest.approx(value, abs=0.3), (name, year)
    assert float(read["Highest point"][table.columns[-1]]) == pytest.approx(30, abs=0.3)


def test_corpus_stacked_bar_weather_reads_each_segment_of_each_month() -> None:
    """Seattle weather counts per month (the PNG's months hold the CSV's days shifted by -1,
    MANIFEST.tsv): Jan sun 25, fog 17, drizzle 9, rain 65, snow 8; Jul sun 90."""
    (tables,) = _loaded_tables(corpus_path("charts", "vegalite_stacked_bar_weather.png"))
    (table,) = tables
    assert {"sun", "rain", "drizzle", "snow"} <= set(table.columns)
    read = _grid(table)
    assert list(read) == ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    assert float(read["Jul"]["sun"]) == pytest.approx(90, rel=0.03)
    assert float(read["Jan"]["rain"]) == pytest.approx(65, rel=0.03)
    for series, value in (("sun", 25), ("drizzle", 9), ("snow", 8)):
        assert float(read["Jan"][series]) == pytest.approx(value, abs=1.5), series
    assert float(read["Jul"]["snow"]) == 0  # no segment: none that month
    assert float(read["Jan"]["Total"]) == pytest.approx(124, rel=0.02)


def test_corpus_grouped_bars_take_their_printed_labels() -> None:
    """Bars labelled with their values: B/z reads "1.1" as printed; a misread label ("09"
    for 0.9) that disagrees with the bar's height is left for the height."""
    (tables,) = _loaded_tables(corpus_path("charts", "vegalite_bar_grouped_label.png"))
    (table,) = tables
    assert "grouped bar chart" in table.title and table.columns[1:] == ["x", "y", "z"]
    rows = {row[0].text[:1].upper(): row for row in table.rows}
    assert set(rows) == {"A", "B", "C"}
    assert rows["B"][3].text == "1.1"
    expected = {"A": (0.1, 0.6, 0.9), "B": (0.7, 0.2, 1.1), "C": (0.6, 0.1, 0.2)}
    for name, values in expected.items():
        for cell, value in zip(rows[name][1:], values, strict=True):
            assert float(cell.text) == pytest.approx(value, abs=0.02), name


def test_corpus_co2_lines_read_the_highest_concentration() -> None:
    """Mauna Loa CO2 by decade, one line per decade: the highest point of all lines is
    2020's 416.18 ppm (groundtruth CSV), the lowest 1958's ~313."""
    (tables,) = _loaded_tables(corpus_path("charts", "vegalite_layer_line_co2_concentration.png"))
    (table,) = tables
    assert "line chart" in table.title and "CO2" in table.title
    assert len(table.columns) == 1 + 8 + 1  # x ticks, eight lines, all lines
    read = _grid(table)
    assert [label for label in read][:10] == [str(x) for x in range(10)]  # 10: past the lines (Dec at 9.9)
    all_lines = table.columns[-1]
    assert float(read["Highest point"][all_lines]) == pytest.approx(416.18, rel=0.005)
    assert float(read["Lowest point"][all_lines]) == pytest.approx(313.5, abs=1.5)
    decade_2000 = next(c for c in table.columns if c.startswith("2000"))
    assert float(read["0"][decade_2000]) == pytest.approx(370, abs=2)  # the 2000s start near 369-370


def test_a_stacked_chart_pictured_on_a_pdf_text_page_is_read() -> None:
    """docling's picture classification paper, page 1: a stacked bar chart of plot numbers
    (%) per land-use type; only "municipal park" has class 4 plots."""
    first = _loaded_tables(corpus_path("pdf", "docling_picture_classification.pdf"))[0]
    (table,) = [t for t in first if TITLE_NOTE in t.title]
    assert "stacked bar chart" in table.title and set(table.columns[1:5]) == {"1", "2", "3", "4"}
    read = _grid(table)
    assert len(read) == 8 and {"woodlot", "roadside", "riverside", "residential"} <= set(read)
    with_class_4 = [label for label, cells in read.items() if float(cells["4"]) > 0]
    assert with_class_4 == ["municipal park"] and "community park" in read
    for cells in read.values():
        assert float(cells["Total"]) == pytest.approx(100, abs=2.5)


def test_a_photo_and_a_text_page_give_no_chart_quickly() -> None:
    import time

    import pymupdf

    photo = Image.open(corpus_path("raster", "olinda_L7_truecolor.png"))
    start = time.perf_counter()
    assert read_bar_charts(photo, "eng") == []
    doc = pymupdf.open(corpus_path("pdf", "who_hcv_children_guidelines_2022.pdf"))
    pix = doc[0].get_pixmap(dpi=150)
    doc.close()
    page = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
    assert read_bar_charts(page, "eng") == []
    assert time.perf_counter() - start < 20


def test_a_chart_pictured_on_a_rotated_page_is_read_from_its_own_place() -> None:
    """A landscape report page (/Rotate 90): the picture's box is the unrotated page's, so
    it is turned to clip the rendering, and the cells turned back beside the page's text."""
    import io

    import pymupdf

    buf = io.BytesIO()
    _drawn_chart().save(buf, "PNG")
    pdf = pymupdf.open()
    page = pdf.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(72, 60, 523, 200), "Relatório de vendas por região. " * 8, fontsize=11)
    place = pymupdf.Rect(72, 220, 372, 670)  # 300 x 450 unrotated: 450 x 300 as shown
    page.insert_image(place, stream=buf.getvalue(), rotate=90)  # upright once the page turns
    page.set_rotation(90)
    data = pdf.tobytes()
    loader = PdfLoader()
    document = loader.open(data, loader.sniff(data), LoadOptions(ocr_languages="eng", layout="text"))  # type: ignore[arg-type]
    try:
        (loaded,) = list(document.pages())
    finally:
        document.close()
    (chart,) = [t for t in loaded.tables if TITLE_NOTE in t.title]
    for name, value in VALUES.items():
        assert _rows(chart)[name] == pytest.approx(value, abs=2), name
    x0, y0, x1, y1 = chart.bbox
    assert place.x0 - 1 <= x0 <= x1 <= place.x1 + 1 and place.y0 - 1 <= y0 <= y1 <= place.y1 + 1
