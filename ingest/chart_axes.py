"""What every kind of chart read from pixels shares (ingest/charts.py bars, ingest/chart_lines.py
lines): the value axis fitted from OCR'd tick numbers, values rounded to the tick step, the
legend (a word right of a small swatch of a series' colour), colour names when no legend is
readable, and the titles around the plot.

A tick misread by OCR ("80" read "50", "0.6" read "06") must not lose the axis: the fit is
the line through the pair of ticks most others agree with, refitted on those.
"""

from __future__ import annotations

import math
import re

import numpy as np
from PIL import Image
from scipy import ndimage

from ingest.ocr import Word, ocr_image_words
from ingest.tables import BBox

FIT_TOLERANCE = 0.02  # of the axis range: the worst tick's distance to the fitted line
COLOUR_TOLERANCE = 30  # RGB distance (sum over channels) to a series colour
LEVEL_TEXT = 2.2  # a label's box up to this many tick heights tall is level text (slanted ones are taller)
SWATCH_MAX = 40  # pixels: a legend swatch is smaller than this on both sides
_NUMBER = re.compile(r"^[(\-−+]?[$€£R]*\d[\d,.\s]*%?\)?$")
_O_FOR_ZERO = re.compile(r"^[oO](?=[.,]\d)")  # "o.4": OCR reads a tick's leading 0 as a letter
_SWATCH_READINGS = frozenset("@©®●■oOeamMB")  # what OCR makes of a filled square or circle
_GLUED_LETTER = re.compile(r"(?<=[a-z]{3})(?=[A-Z]\b)")
# a small palette to name a series by its colour when no legend is readable
_COLOUR_NAMES = {
    "blue": (31, 119, 180),
    "light blue": (174, 199, 232),
    "orange": (255, 127, 14),
    "yellow": (230, 190, 60),
    "green": (44, 160, 44),
    "light green": (152, 223, 138),
    "red": (214, 39, 40),
    "pink": (247, 182, 210),
    "light orange": (253, 195, 140),
    "purple": (148, 103, 189),
    "brown": (140, 86, 75),
    "grey": (160, 160, 160),
    "light grey": (205, 205, 205),
    "dark purple": (75, 20, 115),
    "dark blue": (25, 20, 80),
    "black": (30, 30, 30),
    "teal": (23, 190, 207),
}


def number(text: str) -> float | None:
    """The number a tick or a printed label states, or None."""
    text = _O_FOR_ZERO.sub("0", text.strip())
    if not _NUMBER.match(text):
        return None
    digits = re.sub(r"[^\d.\-−]", "", text.replace(",", "")).replace("−", "-")
    try:
        return float(digits)
    except ValueError:
        return None


def fit_ticks(
    positions: list[float], values: list[float], *, increasing: bool
) -> tuple[float, float, float] | None:
    """(slope, intercept, tick step) of value = slope * position + intercept, through the
    ticks most agree with (>= 2, >= 3 and at least half of them when there are 3 or more);
    None unless they fit one line well with the slope's sign the axis has."""
    ps, vs = np.array(positions, dtype=float), np.array(values, dtype=float)
    if len(ps) < 2 or np.ptp(ps) == 0:
        return None
    keep = np.ones(len(ps), dtype=bool)
    if len(ps) >= 3:
        best: tuple[int, float] = (0, 0.0)
        for i in range(len(ps)):
            for j in range(i + 1, len(ps)):
                if ps[i] == ps[j] or vs[i] == vs[j]:
                    continue
                slope = (vs[j] - vs[i]) / (ps[j] - ps[i])
                off = np.abs(vs[i] + slope * (ps - ps[i]) - vs)
                inliers = off <= FIT_TOLERANCE * abs(slope) * np.ptp(ps)
                score = (int(inliers.sum()), -float(off[inliers].sum()))
                if score > best:
                    best, keep = score, inliers
        if keep.sum() < max(3, len(ps) / 2):
            return None
    ps, vs = ps[keep], vs[keep]
    if np.ptp(vs) == 0 or np.ptp(ps) == 0:
        return None
    slope, intercept = np.polyfit(ps, vs, 1)
    worst = np.abs(slope * ps + intercept - vs).max()
    if (slope > 0) != increasing or slope == 0 or worst > FIT_TOLERANCE * np.ptp(vs):
        return None
    step = float(np.median(np.diff(np.sort(vs))))
    return float(slope), float(intercept), step


def value_axis(
    words: list[Word], left: float, grey: np.ndarray | None = None
) -> tuple[float, float, float] | None:
    """(slope, intercept, tick step) of value = slope * y + intercept, from the numbers in a
    column left of the plot, each at its tick mark when `grey` (the image) shows one beside
    it (an OCR box is a few pixels off its text) and they fit so; None unless enough ticks
    fit one line well."""
    ticks: list[tuple[float, float, float, float]] = []  # right edge, centre y, value, mark y
    for _x0, y0, x1, y1, text in words:
        value = number(text)
        if value is not None and x1 <= left + 2:
            centre = (y0 + y1) / 2
            mark = tick_mark(grey, x1, left, centre, (y1 - y0) / 2 + 2) if grey is not None else None
            ticks.append((x1, centre, value, centre if mark is None else mark))
    columns: list[list[tuple[float, float, float, float]]] = []
    for tick in sorted(ticks):
        if columns and abs(columns[-1][-1][0] - tick[0]) <= 12:
            columns[-1].append(tick)
        else:
            columns.append([tick])
    for column in sorted(columns, key=len, reverse=True):
        if len(column) < 2:
            return None
        values = [t[2] for t in column]
        fit = fit_ticks([t[3] for t in column], values, increasing=False) or fit_ticks(
            [t[1] for t in column], values, increasing=False
        )
        if fit is not None:
            return fit
    return None


def tick_mark(grey: np.ndarray, x0: float, x1: float, y: float, reach: float) -> float | None:
    """The row of the tick mark between a tick label's right edge (x0) and the plot (x1):
    rows near the label's centre with 3 or more dark pixels more than the others (the axis
    line), one group of at most 3 rows; None when there is no such mark. (An x-axis tick is
    found in the image transposed.)"""
    top, bottom = max(0, int(y - reach)), min(grey.shape[0], int(y + reach) + 1)
    cols = slice(max(0, int(x0) + 1), max(int(x0) + 2, int(x1) + 1))
    counts = (grey[top:bottom, cols] < 200).sum(axis=1)
    if len(counts) < 3:
        return None
    rows = np.flatnonzero(counts >= np.median(counts) + 3)
    if not len(rows) or rows[-1] - rows[0] > 2:
        return None
    return float(top + rows.mean() + 0.5)


def format_value(value: float, step: float) -> str:
    """The value rounded to 1/100 of the tick step, without trailing zeros."""
    unit = 10 ** math.floor(math.log10(step / 100)) if step > 0 else 0.01
    rounded = round(value / unit) * unit
    decimals = max(0, -int(math.floor(math.log10(unit))))
    text = f"{rounded:.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text == "-0" else text


def text_height(words: list[Word], left: float) -> float:
    """The height of the tick numbers' boxes: level text of the chart's type size."""
    heights = sorted(w[3] - w[1] for w in words if number(w[4]) is not None and w[2] <= left + 2)
    return heights[len(heights) // 2] if heights else 12.0


def clean(text: str) -> str:
    """A label or name without the tick marks and stray strokes OCR reads at its ends."""
    return text.strip(" -–—_=~.,:;'\"‘’“”|")


def same_case(texts: list[str]) -> list[str]:
    """Labels capitalised when most are: tesseract reads a slanted "Jun" as "jun"."""
    filled = [t for t in texts if t]
    if sum(t[:1].isupper() for t in filled) <= len(filled) / 2:
        return texts
    return [t[:1].upper() + t[1:] for t in texts]


def colour_distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)).sum())


def colour_names(colours: list[np.ndarray]) -> list[str]:
    """A name per series colour from a small palette ("blue", "light grey"), made unique."""
    names: list[str] = []
    for colour in colours:
        name = min(_COLOUR_NAMES, key=lambda n: colour_distance(colour, np.array(_COLOUR_NAMES[n])))
        names.append(name)
    return [f"{n} {names[: i + 1].count(n)}" if names.count(n) > 1 else n for i, n in enumerate(names)]


def legend(
    rgb: np.ndarray,
    words: list[Word],
    colours: list[np.ndarray],
    marks: list[BBox],
    drawn: np.ndarray | None = None,
) -> tuple[list[str | None], set[int], list[int], list[BBox]]:
    """Per series colour, the words right of a small swatch of that colour clear of the
    chart's marks (bars), on the swatch's line; the indices of the words used; the series
    in the legend's order; and the swatches' boxes. A piece touching `drawn` (the pixels of
    a chart's lines) is a bit of a line, not a swatch. A swatch OCR'd as a letter glued to a short name ("Mx")
    loses that letter."""
    names: list[str | None] = [None] * len(colours)
    places: list[tuple[int, int] | None] = [None] * len(colours)
    swatches: list[BBox] = []
    used: set[int] = set()
    for k, colour in enumerate(colours):
        mask = np.abs(rgb - colour).sum(axis=2) <= COLOUR_TOLERANCE
        labelled, _count = ndimage.label(mask)
        for index, sl in enumerate(ndimage.find_objects(labelled), start=1):
            if sl is None:
                continue
            ys, xs = sl
            h, w = ys.stop - ys.start, xs.stop - xs.start
            if not (2 <= h <= SWATCH_MAX and 4 <= w <= 1.5 * SWATCH_MAX) or (h < 4 and w < 8):
                continue
            # a filled square or circle, or a short line (a line chart's, with its marker); not a letter
            if h >= 4 and w < 2 * h and (labelled[sl] == index).sum() < 0.6 * h * w:
                continue
            box = (xs.start, ys.start, xs.stop, ys.stop)
            if any(box[0] < m[2] and m[0] < box[2] and box[1] < m[3] and m[1] < box[3] for m in marks):
                continue
            if drawn is not None and drawn[sl][labelled[sl] == index].any():
                continue
            found = _legend_words(words, box, used)
            if found is None:
                continue
            text, indices = found
            names[k] = text
            used |= indices
            places[k] = (box[1], box[0])
            swatches.append(box)
            break
    # the legend's order (top to bottom, left to right) when it names every series
    order = list(range(len(colours)))
    if all(places):
        order.sort(key=lambda k: places[k] or (0, 0))
    return names, used, order, swatches


def _legend_words(words: list[Word], swatch: BBox, used: set[int]) -> tuple[str, set[int]] | None:
    x0, y0, x1, y1 = swatch
    centre = (y0 + y1) / 2
    candidates = [
        (i, w)
        for i, w in enumerate(words)
        if i not in used
        and w[1] - 2 <= centre <= w[3] + 2
        and x0 - 2 <= w[0] <= x1 + max(12.0, 1.5 * (w[3] - w[1]))
        and w[2] > x1 + 2
    ]
    if not candidates:
        return None
    i, first = min(candidates, key=lambda c: c[1][0])
    text = first[4].strip()
    rest = text[1:]
    if first[0] < x1 - 1 and rest and text[0] in _SWATCH_READINGS and (rest.isdigit() or len(rest) == 1):
        text = rest  # the swatch read as a letter in front of a short name ("Mx", "a4"), not "snow"
    parts, indices, right = [text], {i}, first[2]
    for j, w in sorted(enumerate(words), key=lambda c: c[1][0]):
        if j in used or j == i or w[0] < right or w[0] - right > 1.2 * (w[3] - w[1]):
            continue
        if abs((w[1] + w[3]) / 2 - (first[1] + first[3]) / 2) <= 0.5 * (first[3] - first[1]):
            parts.append(w[4].strip())
            indices.add(j)
            right = w[2]
    name = clean(" ".join(p for p in parts if p))
    if not any(c.isalnum() for c in name):
        return None
    return name, indices


def chart_title(words: list[Word], top: float, left: float, right: float) -> str:
    """The lines above the plot and its highest tick, top to bottom (a page title, the
    chart's), leaving out a legend right of the plot."""
    numbers = [w[1] for w in words if number(w[4]) is not None and w[2] <= left + 2]
    limit = min([top, *numbers]) - 2
    above = sorted(
        (w for w in words if w[3] <= limit and w[0] < right), key=lambda w: (round(w[1] / 10), w[0])
    )
    if all(number(w[4]) is not None for w in above):  # a value printed over the tallest bar
        return ""
    # OCR runs a lone capital into the word before it ("ProductC"): the name is "Product C"
    return _GLUED_LETTER.sub(" ", " ".join(w[4] for w in above))[:200]


def x_title(
    words: list[Word], left: float, right: float, baseline: float, height: int, gap: float | None = None
) -> str:
    """The line under the category labels (starting `gap` pixels under `baseline`, 4% of the
    height unless given), centred under the plot."""
    centre = (left + right) / 2
    gap = 0.04 * height if gap is None else gap
    below = [w for w in words if w[1] > baseline + gap and left <= (w[0] + w[2]) / 2 <= right]
    if not below:
        return ""
    lowest = max(w[1] for w in below)
    line = [w for w in below if abs(w[1] - lowest) <= 6]
    mid = (min(w[0] for w in line) + max(w[2] for w in line)) / 2
    if abs(mid - centre) > 0.2 * (right - left):
        return ""
    if len(line) > 1 and not any(sum(c.isalpha() for c in w[4]) >= 3 for w in line):
        return ""  # slanted labels misread ("Ss =")
    return " ".join(w[4] for w in sorted(line, key=lambda w: w[0]))


def y_title(image: Image.Image, languages: str, zoom: float, words: list[Word], left: float) -> str:
    """The axis title set upright left of the tick numbers, OCR'd turned level."""
    numbers = [w for w in words if number(w[4]) is not None and w[2] <= left + 2]
    if numbers:  # the tick column; a tick read together with the title's letters ("6370") is not
        ends = sorted(w[2] for w in numbers)
        widths = sorted(w[2] - w[0] for w in numbers)
        end, width = ends[len(ends) // 2], widths[len(widths) // 2]
        numbers = [w for w in numbers if abs(w[2] - end) <= 12 and w[2] - w[0] <= 1.5 * width]
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
    # the whole row, short words too ("CO2 concentration in ppm"), as far as it runs on
    same = sorted((w for w in found if abs(w[1] - row[1]) <= 8), key=lambda w: w[0])
    at = same.index(row)
    start, end, gap = at, at + 1, 1.5 * (row[3] - row[1])
    while start > 0 and same[start][0] - same[start - 1][2] <= gap:
        start -= 1
    while end < len(same) and same[end][0] - same[end - 1][2] <= gap:
        end += 1
    return clean(" ".join(w[4] for w in same[start:end]))


def union(words: list[Word]) -> BBox:
    return (
        min(w[0] for w in words),
        min(w[1] for w in words),
        max(w[2] for w in words),
        max(w[3] for w in words),
    )


def scaled(box: tuple[float, float, float, float], scale: float) -> BBox:
    return (box[0] * scale, box[1] * scale, box[2] * scale, box[3] * scale)
