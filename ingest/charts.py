"""Bar charts read from pixels into tables (category -> value), so the table path
(ingest/chunking.py, service/answer/tables.py) answers "what is the value of bar D" or
"which month had the highest revenue", citing the bar's box.

A chart page has OCR'd tick labels but no values. The method is general, not tuned per
file: solid saturated rectangles of one colour (>= 3 on one baseline) are the bars; the
numbers OCR'd in a column left of them are the value axis, fitted linearly pixel -> value
(rejected unless the ticks fit well); a bar's value is that fit at its top, unless a number
is printed just above or inside the bar. Category labels are the words under each bar,
read again from the strip under the axis turned 45 degrees when they are slanted
(matplotlib month labels). The title says the values were read from the chart image, so an
answer does not present an estimate as a printed figure.

Anything not confidently a bar chart gives []; odd images never raise.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, replace

import numpy as np
from PIL import Image
from scipy import ndimage

from ingest.ocr import Word, ocr_image_words
from ingest.tables import BBox, Cell, Table

log = logging.getLogger(__name__)
MAX_PIXELS = 4_000_000  # larger rasters are downscaled first (work stays bounded)
MIN_BARS = 3
MIN_SATURATION = 40  # max - min of the RGB channels: greys, black and white are not bars
MIN_FILL = 0.85  # a bar's pixels over its bounding box
MIN_SIDE = 4  # pixels
COLOUR_TOLERANCE = 30  # RGB distance to a bar colour
BASELINE_TOLERANCE = 3  # pixels
FIT_TOLERANCE = 0.02  # of the axis range: the worst tick's distance to the fitted line
OCR_TARGET = 1800  # pixels on the long side the OCR reads (small charts are upscaled)
TITLE_NOTE = "values read from the chart image, not printed figures"
_NUMBER = re.compile(r"^[(\-−+]?[$€£R]*\d[\d,.\s]*%?\)?$")


@dataclass(frozen=True)
class Bar:
    x0: int
    y0: int  # top
    x1: int
    y1: int  # bottom (the baseline)


def read_bar_charts(
    image: Image.Image, languages: str = "eng", *, page_scale: float = 1.0, table_no: int = 0
) -> list[Table]:
    """The bar charts of a page raster as tables; `page_scale` is page points per pixel of
    `image` (1 for a picture document). [] for anything that is not clearly a bar chart."""
    try:
        return _read(image, languages, page_scale, table_no)
    except Exception:  # an odd raster must not fail the page
        log.warning("chart reading failed", exc_info=True)
        return []


def _read(image: Image.Image, languages: str, page_scale: float, table_no: int) -> list[Table]:
    shrink = 1.0
    if image.width * image.height > MAX_PIXELS:
        shrink = math.sqrt(MAX_PIXELS / (image.width * image.height))
        image = image.resize((max(1, int(image.width * shrink)), max(1, int(image.height * shrink))))
    rgb = np.asarray(image.convert("RGB"), dtype=np.int16)
    bars = find_bars(rgb)
    if not bars:
        return []
    zoom = min(4.0, max(1.0, OCR_TARGET / max(image.width, image.height)))
    words = ocr_image_words(image.convert("RGB"), languages, zoom)
    left = min(b.x0 for b in bars)
    baseline = max(b.y1 for b in bars)
    fit = value_axis(words, left)
    if fit is None:
        return []
    slope, intercept, step = fit
    if abs(slope * baseline + intercept) <= FIT_TOLERANCE * abs(slope) * image.height:
        intercept = -slope * baseline  # the bars stand on the zero line: measure from it
    labels = _labels(words, bars, baseline, _text_height(words, left))
    if sum(1 for label in labels if label) < len(bars):
        # small type read slanted needs more pixels: tick type ~ 32 px high for tesseract
        strip_zoom = min(4.0, max(zoom, 32 / max(1.0, _text_height(words, left))))
        slanted = _slanted_labels(image, languages, strip_zoom, bars, baseline)
        if sum(1 for s in slanted if s) > sum(1 for label in labels if label):
            labels = slanted
    if sum(1 for label in labels if label) < 0.75 * len(bars):
        return []
    labels = _same_case(labels)
    scale = page_scale / shrink
    rows: list[list[Cell]] = []
    for bar, label in zip(bars, labels, strict=True):
        if label is None:
            continue
        value = _printed_value(words, bar, image.height) or _format(slope * bar.y0 + intercept, step)
        text, box = label
        rows.append(
            [Cell(text, _scaled(box, scale)), Cell(value, _scaled((bar.x0, bar.y0, bar.x1, bar.y1), scale))]
        )
    x_title = _x_title(words, bars, baseline, image.height)
    y_title = _y_title(image, languages, zoom, words, left)
    chart_title = _chart_title(words, bars, left)
    # an unread value-axis title: the chart's own title says what the bars measure
    columns = [x_title or "Category", y_title or chart_title or "Value"]
    title = f"{chart_title or 'Bar chart'} ({TITLE_NOTE})"
    top = min(b.y0 for b in bars)
    bbox = _scaled((left, top, max(b.x1 for b in bars), baseline), scale)
    header = (Cell(columns[0], bbox), Cell(columns[1], bbox))
    return [Table(table_no, title, columns, 1, rows, bbox, header)]


def find_bars(rgb: np.ndarray) -> list[Bar]:
    """The vertical bars: solid rectangles of one saturated colour, >= MIN_BARS of similar
    width on one baseline, left to right; [] when there is no such group."""
    saturated = (rgb.max(axis=2) - rgb.min(axis=2)) >= MIN_SATURATION
    if saturated.sum() < 0.01 * saturated.size:
        return []
    best: list[Bar] = []
    for colour in _colours(rgb[saturated]):
        mask = saturated & (np.abs(rgb - colour).sum(axis=2) <= COLOUR_TOLERANCE)
        labelled, _count = ndimage.label(mask)
        rects = []
        for index, sl in enumerate(ndimage.find_objects(labelled), start=1):
            if sl is None:
                continue
            ys, xs = sl
            h, w = ys.stop - ys.start, xs.stop - xs.start
            if h < MIN_SIDE or w < MIN_SIDE:
                continue
            if (labelled[sl] == index).sum() < MIN_FILL * h * w:
                continue
            rects.append(Bar(xs.start, ys.start, xs.stop, ys.stop))
        group = _on_one_baseline(rects)
        if len(group) > len(best):
            best = group
    return best


def _colours(pixels: np.ndarray) -> list[np.ndarray]:
    """The saturated colours covering at least 0.5% of the saturated pixels, most common first."""
    keys = (pixels // 16).astype(np.int32)
    packed = keys[:, 0] * 256 * 256 + keys[:, 1] * 256 + keys[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    order = np.argsort(-counts)[:8]
    colours = []
    for i in order:
        if counts[i] < 0.005 * len(packed):
            break
        colours.append(np.median(pixels[packed == values[i]], axis=0))
    return colours


def _on_one_baseline(rects: list[Bar]) -> list[Bar]:
    """The largest set of rectangles sharing a bottom edge, of similar widths, not overlapping."""
    best: list[Bar] = []
    for rect in rects:
        group = [r for r in rects if abs(r.y1 - rect.y1) <= BASELINE_TOLERANCE]
        widths = sorted(r.x1 - r.x0 for r in group)
        median = widths[len(widths) // 2]
        group = sorted(
            (r for r in group if abs((r.x1 - r.x0) - median) <= 0.2 * median + 1), key=lambda r: r.x0
        )
        if any(b.x0 < a.x1 for a, b in zip(group, group[1:], strict=False)):
            continue
        if len(group) >= MIN_BARS and len(group) > len(best):
            best = group
    return best


def value_axis(words: list[Word], left: float) -> tuple[float, float, float] | None:
    """(slope, intercept, tick step) of value = slope * y + intercept, from the numbers in a
    column left of the bars; None unless >= 2 (3 when they can) ticks fit one line well."""
    ticks: list[tuple[float, float, float]] = []  # right edge, centre y, value
    for _x0, y0, x1, y1, text in words:
        value = _number(text)
        if value is not None and x1 <= left + 2:
            ticks.append((x1, (y0 + y1) / 2, value))
    columns: list[list[tuple[float, float, float]]] = []
    for tick in sorted(ticks):
        if columns and abs(columns[-1][-1][0] - tick[0]) <= 12:
            columns[-1].append(tick)
        else:
            columns.append([tick])
    for column in sorted(columns, key=len, reverse=True):
        if len(column) < 2:
            return None
        ys = np.array([t[1] for t in column])
        vs = np.array([t[2] for t in column])
        if np.ptp(vs) == 0 or np.ptp(ys) == 0:
            continue
        slope, intercept = np.polyfit(ys, vs, 1)
        worst = np.abs(slope * ys + intercept - vs).max()
        if slope >= 0 or worst > FIT_TOLERANCE * np.ptp(vs):
            continue
        step = float(np.median(np.diff(np.sort(vs))))
        return float(slope), float(intercept), step
    return None


def _number(text: str) -> float | None:
    text = text.strip()
    if not _NUMBER.match(text):
        return None
    digits = re.sub(r"[^\d.\-−]", "", text.replace(",", "")).replace("−", "-")
    try:
        return float(digits)
    except ValueError:
        return None


def _format(value: float, step: float) -> str:
    """The value rounded to 1/100 of the tick step, without trailing zeros."""
    unit = 10 ** math.floor(math.log10(step / 100)) if step > 0 else 0.01
    rounded = round(value / unit) * unit
    decimals = max(0, -int(math.floor(math.log10(unit))))
    text = f"{rounded:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _text_height(words: list[Word], left: float) -> float:
    """The height of the tick numbers' boxes: level text of the chart's type size."""
    heights = sorted(w[3] - w[1] for w in words if _number(w[4]) is not None and w[2] <= left + 2)
    return heights[len(heights) // 2]


def _labels(
    words: list[Word], bars: list[Bar], baseline: float, text_height: float
) -> list[tuple[str, BBox] | None]:
    """Per bar, the words of the first line under the axis whose centre is nearest the
    bar's; a word spanning several bars with one character each is split between them.
    Boxes much taller than level text are slanted labels misread, left to `_slanted_labels`."""
    under = [
        w
        for w in words
        if baseline - 2 <= w[1] <= baseline + 4 * (w[3] - w[1]) + 8 and w[3] - w[1] <= 1.6 * text_height
    ]
    if not under:
        return [None] * len(bars)
    first = min(w[1] for w in under)
    line = [w for w in under if w[1] <= first + 0.6 * (w[3] - w[1])]
    centres = [(b.x0 + b.x1) / 2 for b in bars]
    found: list[list[Word]] = [[] for _ in bars]
    for word in line:
        spanned = [i for i, c in enumerate(centres) if word[0] <= c <= word[2]]
        text = word[4].strip()
        if len(spanned) > 1 and len(text) == len(spanned):
            for i, char in zip(spanned, text, strict=True):
                found[i].append((bars[i].x0, word[1], bars[i].x1, word[3], char))
            continue
        mid = (word[0] + word[2]) / 2
        nearest = min(range(len(bars)), key=lambda i: abs(centres[i] - mid))
        if bars[nearest].x0 - 2 <= mid <= bars[nearest].x1 + 2:
            found[nearest].append(word)
    out: list[tuple[str, BBox] | None] = []
    for hits in found:
        text = " ".join(w[4] for w in sorted(hits, key=lambda w: w[0])).strip()
        out.append((text, _union(hits)) if text and any(c.isalnum() for c in text) else None)
    return out


def _slanted_labels(
    image: Image.Image, languages: str, zoom: float, bars: list[Bar], baseline: int
) -> list[tuple[str, BBox] | None]:
    """Labels set at 45 degrees: the strip under the axis turned level and OCR'd, each
    word's centre turned back to the strip to find its bar."""
    height = min(image.height - baseline, max(20, int(0.2 * image.height)))
    if height < 8:
        return [None] * len(bars)
    x0 = max(0, min(b.x0 for b in bars) - 40)
    x1 = min(image.width, max(b.x1 for b in bars) + 40)
    strip = image.convert("RGB").crop((x0, baseline + 1, x1, baseline + 1 + height))
    turned = strip.rotate(-45, expand=True, fillcolor=(255, 255, 255))
    words = ocr_image_words(turned, languages, zoom)
    cx, cy = turned.width / 2, turned.height / 2
    angle = math.radians(45)  # rotate(-45) turned the strip clockwise; turn the centres back
    found: list[list[tuple[float, Word]]] = [[] for _ in bars]
    heights = sorted(w[3] - w[1] for w in words)
    usual = heights[len(heights) // 2] if heights else 0.0
    for word in words:
        wx, wy = (word[0] + word[2]) / 2 - cx, (word[1] + word[3]) / 2 - cy
        sx = wx * math.cos(angle) + wy * math.sin(angle) + strip.width / 2
        if not any(c.isalnum() for c in word[4]):
            continue
        centres = [((b.x0 + b.x1) / 2 - x0) for b in bars]
        nearest = min(range(len(bars)), key=lambda i: abs(centres[i] - sx))
        if abs(centres[nearest] - sx) <= (bars[nearest].x1 - bars[nearest].x0):
            found[nearest].append((sx, word))
    out: list[tuple[str, BBox] | None] = []
    for bar, hits in zip(bars, found, strict=True):
        # a tall "word" is tesseract reading pieces of several slanted labels: kept only alone
        hits = [h for h in hits if h[1][3] - h[1][1] <= 1.8 * usual] or hits
        if not hits:
            out.append(None)
            continue
        text = " ".join(w[4] for _, w in sorted(hits, key=lambda h: h[1][0]))
        out.append((text, (float(bar.x0), float(baseline), float(bar.x1), float(baseline + height))))
    return out


def _same_case(labels: list[tuple[str, BBox] | None]) -> list[tuple[str, BBox] | None]:
    """Labels capitalised when most are: tesseract reads a slanted "Jun" as "jun"."""
    texts = [label[0] for label in labels if label]
    if sum(t[:1].isupper() for t in texts) <= len(texts) / 2:
        return labels
    return [(label[0][:1].upper() + label[0][1:], label[1]) if label else None for label in labels]


def _printed_value(words: list[Word], bar: Bar, height: int) -> str | None:
    """A number printed just above the bar or inside its top, centred on it."""
    gap = max(6.0, 0.06 * height)
    for x0, y0, x1, y1, text in words:
        if _number(text) is None or not bar.x0 - 2 <= (x0 + x1) / 2 <= bar.x1 + 2:
            continue
        if bar.y0 - gap <= y1 <= bar.y0 + gap and y0 < bar.y1 - 2:
            return text.strip()
    return None


def _x_title(words: list[Word], bars: list[Bar], baseline: int, height: int) -> str:
    """The line under the category labels, centred under the plot."""
    left, right = min(b.x0 for b in bars), max(b.x1 for b in bars)
    centre = (left + right) / 2
    below = [w for w in words if w[1] > baseline + 0.04 * height and left <= (w[0] + w[2]) / 2 <= right]
    if not below:
        return ""
    lowest = max(w[1] for w in below)
    line = [w for w in below if abs(w[1] - lowest) <= 6]
    mid = (min(w[0] for w in line) + max(w[2] for w in line)) / 2
    if abs(mid - centre) > 0.2 * (right - left):
        return ""
    return " ".join(w[4] for w in sorted(line, key=lambda w: w[0]))


def _y_title(image: Image.Image, languages: str, zoom: float, words: list[Word], left: int) -> str:
    """The axis title set upright left of the tick numbers, OCR'd turned level."""
    numbers = [w for w in words if _number(w[4]) is not None and w[2] <= left + 2]
    edge = int(min((w[0] for w in numbers), default=left)) - 1
    if edge < 8:
        return ""
    top = max(0, int(min(w[1] for w in numbers) - 0.05 * image.height)) if numbers else 0
    bottom = (
        min(image.height, int(max(w[3] for w in numbers) + 0.05 * image.height)) if numbers else image.height
    )
    strip = image.convert("RGB").crop((0, top, edge, bottom)).rotate(-90, expand=True)
    found = ocr_image_words(strip, languages, zoom)
    line = sorted((w for w in found if sum(c.isalpha() for c in w[4]) >= 3), key=lambda w: w[0])
    if not line:
        return ""
    row = min(line, key=lambda w: abs((w[1] + w[3]) / 2 - strip.height / 2))
    same = [w for w in line if abs(w[1] - row[1]) <= 8]
    return " ".join(w[4] for w in same)


_GLUED_LETTER = re.compile(r"(?<=[a-z]{3})(?=[A-Z]\b)")


def _chart_title(words: list[Word], bars: list[Bar], left: int) -> str:
    """The lines above the highest bar and tick, top to bottom (a page title, the chart's)."""
    top = min(b.y0 for b in bars)
    numbers = [w[1] for w in words if _number(w[4]) is not None and w[2] <= left + 2]
    limit = min([top, *numbers]) - 2
    above = sorted((w for w in words if w[3] <= limit), key=lambda w: (round(w[1] / 10), w[0]))
    # OCR runs a lone capital into the word before it ("ProductC"): the name is "Product C"
    return _GLUED_LETTER.sub(" ", " ".join(w[4] for w in above))[:200]


def _union(words: list[Word]) -> BBox:
    return (
        min(w[0] for w in words),
        min(w[1] for w in words),
        max(w[2] for w in words),
        max(w[3] for w in words),
    )


def _scaled(box: tuple[float, float, float, float], scale: float) -> BBox:
    return (box[0] * scale, box[1] * scale, box[2] * scale, box[3] * scale)


def shifted(table: Table, dx: float, dy: float) -> Table:
    """`table` with every box moved by (dx, dy) points: a chart read from a picture's own
    rendering, placed where the picture sits on its page."""

    def move(box: BBox) -> BBox:
        return (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)

    rows = [[replace(c, bbox=move(c.bbox)) for c in row] for row in table.rows]
    header = tuple(replace(c, bbox=move(c.bbox)) for c in table.header)
    return replace(table, rows=rows, bbox=move(table.bbox), header=header)
