"""Bar charts read from pixels into tables, so the table path (ingest/chunking.py,
service/answer/tables.py) answers "what is the value of bar D", "which month had the highest
revenue" or "how many sun days in July", citing the bar's box. Line charts are read by
ingest/chart_lines.py, called from here when no bars are found, and pies by
ingest/chart_pies.py when there are no lines either.

A chart page has OCR'd tick labels but no values. The method is general, not tuned per
file: solid saturated rectangles (>= 3 on one baseline) are the bars; the numbers OCR'd in a
column left of them are the value axis, fitted linearly pixel -> value (ingest/chart_axes.py);
a bar's value is that fit at its top, unless a number printed just above or inside the bar
agrees with it. Three layouts:

- stacked: rectangles of different colours touching one above the other in one column; each
  column is scanned up from the baseline into runs of one colour (greys too: a "fog" series),
  a segment's value is its top minus its bottom on the axis;
- grouped: bars of >= 2 colours on one baseline, in clusters split by the wider gaps; one
  row per cluster, one column per colour;
- single: the largest set of one colour's bars, one value per bar (as before).

Series are named by the legend (a word right of a swatch of the series' colour), else by the
colour. Category labels are the words under each bar or cluster, read again from the strip
under the axis turned 45 or 90 degrees when they are set slanted or upright. The title says
the values were read from the chart image, so an answer does not present an estimate as a
printed figure.

Anything not confidently a chart gives []; odd images never raise.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np
import pymupdf
from PIL import Image
from scipy import ndimage

from ingest.chart_axes import (
    COLOUR_TOLERANCE,
    FIT_TOLERANCE,
    LEVEL_TEXT,
    chart_title,
    clean,
    colour_distance,
    colour_names,
    format_value,
    legend,
    number,
    same_case,
    scaled,
    text_height,
    union,
    value_axis,
    x_title,
    y_title,
)
from ingest.chart_lines import read_line_charts
from ingest.chart_note import TITLE_NOTE
from ingest.chart_pies import read_pie_charts
from ingest.ocr import Word, ocr_image_words
from ingest.tables import BBox, Cell, Table

log = logging.getLogger(__name__)
MAX_PIXELS = 4_000_000  # larger rasters are downscaled first (work stays bounded)
MIN_BARS = 3
MIN_SATURATION = 40  # max - min of the RGB channels: greys, black and white are not bars
MIN_FILL = 0.85  # a bar's pixels over its bounding box
MIN_SIDE = 4  # pixels
BASELINE_TOLERANCE = 3  # pixels
SAME_SERIES = 40  # RGB distance: colours this close are one series' (shades, blended edges)
SEGMENT_GAP = 4  # pixels: a gap this small between two segments (a border, a blended edge) is split
OCR_TARGET = 1800  # pixels on the long side the OCR reads (small charts are upscaled)


@dataclass(frozen=True)
class Bar:
    x0: int
    y0: int  # top
    x1: int
    y1: int  # bottom (the baseline)


@dataclass
class Layout:
    """Where a chart's values sit: per category (a bar, a stacked column, a cluster of bars)
    its span for the label under it and its marks as (series, box); `stacked` marks measure
    from their own bottom, the others from the zero line."""

    kind: str  # "bar chart", "stacked bar chart", "grouped bar chart"
    spans: list[Bar]
    marks: list[list[tuple[int, Bar]]]
    colours: list[np.ndarray]
    stacked: bool = False


def read_bar_charts(
    image: Image.Image, languages: str = "eng", *, page_scale: float = 1.0, table_no: int = 0
) -> list[Table]:
    """The bar and line charts of a page raster as tables; `page_scale` is page points per
    pixel of `image` (1 for a picture document). [] for anything that is not clearly a chart."""
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
    image = image.convert("RGB")
    rgb = np.asarray(image, dtype=np.int16)
    layout = find_layout(rgb)
    if layout is None:
        lines = read_line_charts(image, rgb, languages, page_scale / shrink, table_no)
        return lines or read_pie_charts(image, rgb, languages, page_scale / shrink, table_no)
    zoom = min(4.0, max(1.0, OCR_TARGET / max(image.width, image.height)))
    words = ocr_image_words(image, languages, zoom)
    bars = layout.spans
    left = min(b.x0 for b in bars)
    baseline = max(b.y1 for b in bars)
    fit = value_axis(words, left, np.asarray(image.convert("L"), dtype=np.int16))
    if fit is None:
        return []
    slope, intercept, step = fit
    if abs(slope * baseline + intercept) <= FIT_TOLERANCE * abs(slope) * image.height:
        intercept = -slope * baseline  # the bars stand on the zero line: measure from it
    names: list[str | None] = [None] * len(layout.colours)
    order = list(range(len(layout.colours)))
    if len(layout.colours) > 1:
        marks = [box for row in layout.marks for _, box in row]
        names, used, order, _ = legend(rgb, words, layout.colours, [(b.x0, b.y0, b.x1, b.y1) for b in marks])
        words = [w for i, w in enumerate(words) if i not in used]
    labels = _category_labels(image, languages, zoom, words, bars, baseline, left)
    if sum(1 for label in labels if label) < 0.75 * len(bars):
        return []
    scale = page_scale / shrink
    printed_words = _numbers_joined(words)
    rows: list[list[Cell]] = []
    for span, marks, label in zip(layout.spans, layout.marks, labels, strict=True):
        if label is None:
            continue
        values: dict[int, Cell] = {}
        for series, box in marks:
            if layout.stacked:
                estimate = slope * (box.y0 - box.y1)
                printed = _printed_inside(printed_words, box, estimate, step)
            else:
                estimate = slope * box.y0 + intercept
                printed = _printed_value(printed_words, box, image.height, estimate, step)
            values[series] = Cell(printed or format_value(estimate, step), _scaled_bar(box, scale))
        text, box = label
        # a series with no segment in a stacked column counts 0 there; a missing grouped bar is unknown
        empty = "0" if layout.stacked else ""
        cells = [values.get(k) or Cell(empty, scaled(box, scale)) for k in order]
        if layout.stacked:  # the stack's height: what its segments add up to
            total = slope * (span.y0 - span.y1)
            printed = _printed_value(printed_words, span, image.height, total, step)
            cells.append(Cell(printed or format_value(total, step), _scaled_bar(span, scale)))
        rows.append([Cell(text, scaled(box, scale)), *cells])
    right = max(b.x1 for b in bars)
    top = min(b.y0 for b in bars)
    xt = x_title(words, left, right, baseline, image.height)
    yt = y_title(image, languages, zoom, words, left)
    ct = chart_title(words, top, left, right)
    bbox = scaled((left, top, right, baseline), scale)
    if len(layout.colours) == 1:
        # an unread value-axis title: the chart's own title says what the bars measure
        columns = [xt or "Category", yt or ct or "Value"]
        title = f"{ct or 'Bar chart'} ({TITLE_NOTE})"
    else:
        fallback = colour_names(layout.colours)
        columns = [xt or "Category", *(names[k] or fallback[k] for k in order)]
        columns += ["Total"] if layout.stacked else []
        name = " — ".join(p for p in (ct, yt) if p) or layout.kind.capitalize()
        title = f"{name} ({layout.kind}; {TITLE_NOTE})"
    header = tuple(Cell(c, bbox) for c in columns)
    return [Table(table_no, title, columns, 1, rows, bbox, header)]


def find_layout(rgb: np.ndarray) -> Layout | None:
    """The chart's bars as a stacked, grouped or single-series layout; None when there are none."""
    saturated = (rgb.max(axis=2) - rgb.min(axis=2)) >= MIN_SATURATION
    if saturated.sum() < 0.01 * saturated.size:
        return None
    colours = _colours(rgb[saturated])
    found = [_solid_rects(rgb, saturated, colour) for colour in colours]
    per_colour = list(found)
    for k in range(len(colours)):  # two bins of one colour (a JPEG's shades) are one series
        same = next(j for j in range(k + 1) if colour_distance(colours[j], colours[k]) <= SAME_SERIES)
        if same != k:
            per_colour[same], per_colour[k] = per_colour[same] + per_colour[k], []
    layout = _stacks(rgb, colours, per_colour) or _groups(colours, per_colour)
    if layout is not None:
        return layout
    bars = max((_on_one_baseline(rects) for rects in found), key=len, default=[])
    if not bars:
        return None
    colour = np.median(rgb[bars[0].y0 : bars[0].y1, bars[0].x0 : bars[0].x1].reshape(-1, 3), axis=0)
    return Layout("bar chart", bars, [[(0, b)] for b in bars], [colour])


def find_bars(rgb: np.ndarray) -> list[Bar]:
    """The vertical bars: solid rectangles of one saturated colour, >= MIN_BARS of similar
    width on one baseline, left to right; [] when there is no such group."""
    saturated = (rgb.max(axis=2) - rgb.min(axis=2)) >= MIN_SATURATION
    if saturated.sum() < 0.01 * saturated.size:
        return []
    groups = [_on_one_baseline(_solid_rects(rgb, saturated, colour)) for colour in _colours(rgb[saturated])]
    return max(groups, key=len, default=[])


def _solid_rects(rgb: np.ndarray, saturated: np.ndarray, colour: np.ndarray) -> list[Bar]:
    """The solid rectangles of one colour (their pixels fill >= MIN_FILL of their box)."""
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
    return rects


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


def _on_one_baseline(rects: list[Bar], colour_of: dict[Bar, int] | None = None) -> list[Bar]:
    """The largest set of rectangles sharing a bottom edge, of similar widths, not overlapping
    (bars of different colours in `colour_of` may: grouped bars drawn overlapping a little)."""
    best: list[Bar] = []
    for rect in rects:
        group = [r for r in rects if abs(r.y1 - rect.y1) <= BASELINE_TOLERANCE]
        widths = sorted(r.x1 - r.x0 for r in group)
        median = widths[len(widths) // 2]
        group = sorted(
            (r for r in group if abs((r.x1 - r.x0) - median) <= 0.2 * median + 1), key=lambda r: r.x0
        )
        if colour_of is None and any(b.x0 < a.x1 for a, b in zip(group, group[1:], strict=False)):
            continue
        if colour_of is not None and any(
            b.x0 < a.x1 and (colour_of[a] == colour_of[b] or b.x0 - a.x0 < 0.5 * (a.x1 - a.x0))
            for a, b in zip(group, group[1:], strict=False)
        ):
            continue
        if len(group) >= MIN_BARS and len(group) > len(best):
            best = group
    return best


def _stacks(rgb: np.ndarray, colours: list[np.ndarray], per_colour: list[list[Bar]]) -> Layout | None:
    """Stacked bars: columns of rectangles of one x-range where two of different colours touch,
    >= MIN_BARS (most of them stacked) on one baseline; each column then scanned into segments."""
    columns: list[list[tuple[Bar, int]]] = []
    for rect, k in sorted(((r, k) for k, rs in enumerate(per_colour) for r in rs), key=lambda t: t[0].x0):
        for column in columns:
            first = column[0][0]
            if abs(first.x0 - rect.x0) <= 3 and abs(first.x1 - rect.x1) <= 3:
                column.append((rect, k))
                break
        else:
            columns.append([(rect, k)])
    spans: dict[Bar, bool] = {}
    for column in columns:
        span = Bar(
            min(r.x0 for r, _ in column),
            min(r.y0 for r, _ in column),
            max(r.x1 for r, _ in column),
            max(r.y1 for r, _ in column),
        )
        spans[span] = any(
            ka != kb and (abs(a.y0 - b.y1) <= SEGMENT_GAP or abs(b.y0 - a.y1) <= SEGMENT_GAP)
            for (a, ka), (b, kb) in combinations(column, 2)
        )
    group = _on_one_baseline(list(spans))
    if len(group) < MIN_BARS or sum(spans[s] for s in group) < max(2, len(group) / 2):
        return None
    baseline = max(s.y1 for s in group)
    background = _background(rgb)
    series = [colours[k] for k in sorted({k for column in columns for _, k in column})]
    known = len(series)
    runs = [_runs(rgb, replace(s, y1=baseline), background) for s in group]
    for column_runs in runs:  # a grey series has no saturated rectangle: its runs of >= 4 px name it
        for colour, top, bottom in column_runs:
            near = [colour_distance(colour, c) for c in series]
            if bottom - top >= 4 and (not near or min(near) > SAME_SERIES):
                series.append(colour)
    marks: list[list[tuple[int, Bar]]] = []
    for span, column_runs in zip(group, runs, strict=True):
        kept = []
        for colour, top, bottom in column_runs:
            near = [colour_distance(colour, c) for c in series]
            k = int(np.argmin(near))
            if near[k] <= SAME_SERIES and (bottom - top >= 2 or k < known):
                if kept and kept[-1][0] == k:  # a blended edge of the same colour: one segment
                    kept[-1][1] = top
                else:
                    kept.append([k, top, bottom])
        for lower, upper in zip(kept, kept[1:], strict=False):  # bottom up: split a thin gap
            if 0 < lower[1] - upper[2] <= SEGMENT_GAP:
                lower[1] = upper[2] = (lower[1] + upper[2]) // 2
        if kept:
            kept[0][2] = baseline
        marks.append([(k, Bar(span.x0, top, span.x1, bottom)) for k, top, bottom in kept])
    used = sorted({k for row in marks for k, _ in row})
    if len(used) < 2:
        return None
    order = {k: i for i, k in enumerate(used)}
    marks = [[(order[k], box) for k, box in row] for row in marks]
    spans_out = [
        Bar(s.x0, min((b.y0 for _, b in m), default=s.y0), s.x1, baseline)
        for s, m in zip(group, marks, strict=True)
    ]
    return Layout("stacked bar chart", spans_out, marks, [series[k] for k in used], stacked=True)


def _background(rgb: np.ndarray) -> np.ndarray:
    """The image's most common colour (the page or plot background)."""
    sample = rgb[:: max(1, rgb.shape[0] // 200), :: max(1, rgb.shape[1] // 200)].reshape(-1, 3)
    keys = (sample // 8).astype(np.int32)
    packed = keys[:, 0] * 65536 + keys[:, 1] * 256 + keys[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    return np.median(sample[packed == values[np.argmax(counts)]], axis=0)


def _runs(rgb: np.ndarray, span: Bar, background: np.ndarray) -> list[tuple[np.ndarray, int, int]]:
    """A column's runs of one colour (colour, top, bottom), bottom up from its baseline to
    where the background starts (a gap over SEGMENT_GAP rows); runs of one row are edges."""
    width = span.x1 - span.x0
    xs = slice(span.x0 + width // 4, max(span.x0 + width // 4 + 1, span.x1 - width // 4))
    rows = np.median(rgb[: span.y1, xs], axis=1)
    runs: list[list] = []  # [colour, top, bottom]
    blank = 0
    for y in range(span.y1 - 1, -1, -1):
        colour = rows[y]
        if colour_distance(colour, background) <= COLOUR_TOLERANCE:
            blank += 1
            if blank > SEGMENT_GAP:
                break
            continue
        if runs and blank == 0 and colour_distance(colour, runs[-1][0]) <= COLOUR_TOLERANCE:
            runs[-1][1] = y
        else:
            runs.append([colour, y, y + 1])
        blank = 0
    return [
        (np.median(rgb[top:bottom, xs].reshape(-1, 3), axis=0), top, bottom)
        for _, top, bottom in runs
        if bottom - top >= 2
    ]


def _groups(colours: list[np.ndarray], per_colour: list[list[Bar]]) -> Layout | None:
    """Grouped bars: >= 2 colours with >= 2 bars each on one baseline, in clusters the wider
    gaps split (>= 2 clusters); None when the gaps are all alike (bars of one series coloured)."""
    colour_of = {r: k for k, rs in enumerate(per_colour) for r in rs}
    group = _on_one_baseline(list(colour_of), colour_of)
    counts = [sum(1 for r in group if colour_of[r] == k) for k in range(len(colours))]
    if sum(1 for c in counts if c >= 2) < 2:
        return None
    gaps = [b.x0 - a.x1 for a, b in zip(group, group[1:], strict=False)]
    width = float(np.median([r.x1 - r.x0 for r in group]))
    ordered = sorted(gaps)
    # the gaps within a cluster are the smallest: the first wide jump in size parts them from
    # the gaps between clusters (which vary where a series' bar is missing)
    wide = [i for i in range(len(ordered) - 1) if ordered[i + 1] - ordered[i] > max(3.0, 0.3 * width)]
    if not wide:
        return None
    cut = (ordered[wide[0]] + ordered[wide[0] + 1]) / 2
    clusters: list[list[Bar]] = [[group[0]]]
    for gap, rect in zip(gaps, group[1:], strict=True):
        if gap > cut:
            clusters.append([])
        clusters[-1].append(rect)
    if len(clusters) < 2:
        return None
    used = [k for k in range(len(colours)) if counts[k]]
    # series in the order their bars stand within a cluster
    used.sort(key=lambda k: np.mean([c.index(r) for c in clusters for r in c if colour_of[r] == k]))
    order = {k: i for i, k in enumerate(used)}
    spans = [Bar(c[0].x0, min(r.y0 for r in c), c[-1].x1, max(r.y1 for r in c)) for c in clusters]
    marks = [[(order[colour_of[r]], r) for r in c] for c in clusters]
    return Layout("grouped bar chart", spans, marks, [colours[k] for k in used])


def _category_labels(
    image: Image.Image,
    languages: str,
    zoom: float,
    words: list[Word],
    bars: list[Bar],
    baseline: int,
    left: int,
) -> list[tuple[str, BBox] | None]:
    """Per bar (or cluster), its label: the words under it, else those read from the strip
    under the axis turned level (slanted labels at 45 degrees; upright ones at 90 when the
    45-degree reading is incomplete or its letters are not as many as the ink's blobs)."""
    labels = _labels(words, bars, baseline, text_height(words, left))
    if sum(1 for label in labels if label) >= len(bars):
        return _same_case(labels)
    band = _label_band(image, words, bars, baseline)
    if band is None:
        return _same_case(labels)
    blobs = _ink_blobs(image, band)
    # small type read slanted needs more pixels: tick type ~ 32 px high for tesseract
    strip_zoom = min(4.0, max(zoom, 32 / max(1.0, text_height(words, left))))
    best, best_off = labels, math.inf
    for angle in (45, 90):
        turned = _slanted_labels(image, languages, strip_zoom, bars, band, angle)
        found = sum(1 for s in turned if s)
        off = abs(sum(len(s[0].replace(" ", "")) for s in turned if s) - blobs) / max(1, blobs)
        log.debug("labels at %d degrees: %d found, %.2f off the ink's blobs", angle, found, off)
        more = found > sum(1 for label in best if label)
        if (more and angle == 45) or (found >= 0.75 * len(bars) and off <= 0.5 and off < 0.5 * best_off):
            best, best_off = turned, off
        if found >= len(bars) and off <= 0.3:
            break
    return _same_case(best)


def _label_band(image: Image.Image, words: list[Word], bars: list[Bar], baseline: int) -> BBox | None:
    """The strip under the axis where the labels are: below its tick marks, above the axis
    title, as wide as the bars and as far again as the strip is deep (slanted labels lean)."""
    height = min(image.height - baseline, max(20, int(0.4 * image.height)))
    bottom = _axis_title_top(words, bars, baseline, image.height)
    if bottom is not None:
        height = min(height, int(bottom) - baseline - 1)
    if height < 8:
        return None
    x0, x1 = min(b.x0 for b in bars), max(b.x1 for b in bars)
    top = _under_ticks(image, x0, x1, baseline + 1, baseline + 1 + height)
    return (
        float(max(0, x0 - height)),
        float(top),
        float(min(image.width, x1 + 40)),
        float(baseline + 1 + height),
    )


def _ink_blobs(image: Image.Image, band: BBox) -> int:
    """The dark blobs in the band (about one per letter of level or turned text)."""
    dark = np.asarray(image.convert("L").crop(tuple(int(v) for v in band))) < 160
    labelled, count = ndimage.label(dark, structure=np.ones((3, 3), dtype=bool))
    sizes = ndimage.sum(dark, labelled, range(1, count + 1)) if count else np.zeros(0)
    return int((np.asarray(sizes) >= 3).sum())


def _axis_title_top(words: list[Word], bars: list[Bar], baseline: int, height: int) -> float | None:
    """The top of the x-axis title: the lowest line of words under the plot when it is a row
    of its own beneath every other word there (the labels); None when there is none."""
    left, right = min(b.x0 for b in bars), max(b.x1 for b in bars)
    below = [w for w in words if w[1] > baseline + 0.04 * height and left <= (w[0] + w[2]) / 2 <= right]
    if not below:
        return None
    lowest = max(w[1] for w in below)
    line = [w for w in below if abs(w[1] - lowest) <= 6]
    others = [w for w in words if w[1] > baseline - 2 and w not in line]
    if not others or min(w[1] for w in line) < max(w[3] for w in others) - 2:
        return None
    if not any(sum(c.isalpha() for c in w[4]) >= 3 for w in line):
        return None  # pieces of slanted labels misread ("Ss ="), not a title
    return min(w[1] for w in line)


def _labels(
    words: list[Word], bars: list[Bar], baseline: float, text_height: float
) -> list[tuple[str, BBox] | None]:
    """Per bar, the words of the first line under the axis whose centre is nearest the
    bar's; a word spanning several bars ("MarAprMay": OCR runs close labels together) is
    cut between them at the midpoints of their centres. Boxes much taller than level text
    are slanted labels misread, left to `_slanted_labels`."""
    under = [
        w
        for w in words
        if baseline - 2 <= w[1] <= baseline + 4 * (w[3] - w[1]) + 8
        and w[3] - w[1] <= LEVEL_TEXT * text_height
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
        if len(spanned) > 1 and len(text) >= len(spanned):
            per_char = (word[2] - word[0]) / len(text)
            cuts = (
                [0]
                + [
                    round(((centres[a] + centres[b]) / 2 - word[0]) / per_char)
                    for a, b in zip(spanned, spanned[1:], strict=False)
                ]
                + [len(text)]
            )
            if len(text) == len(spanned):
                cuts = list(range(len(text) + 1))
            for i, start, end in zip(spanned, cuts, cuts[1:], strict=False):
                if end > start:
                    found[i].append((bars[i].x0, word[1], bars[i].x1, word[3], text[start:end]))
            continue
        mid = (word[0] + word[2]) / 2
        nearest = min(range(len(bars)), key=lambda i: abs(centres[i] - mid))
        if bars[nearest].x0 - 2 <= mid <= bars[nearest].x1 + 2:
            found[nearest].append(word)
    out: list[tuple[str, BBox] | None] = []
    for hits in found:
        text = " ".join(w[4] for w in sorted(hits, key=lambda w: w[0])).strip()
        out.append((text, union(hits)) if text and any(c.isalnum() for c in text) else None)
    return out


def _slanted_labels(
    image: Image.Image, languages: str, zoom: float, bars: list[Bar], band: BBox, angle: int = 45
) -> list[tuple[str, BBox] | None]:
    """Labels set at `angle` degrees (reading upwards): the band under the axis turned
    level and OCR'd, each line's right end turned back to the band to find its bar."""
    x0 = int(band[0])
    strip = image.convert("RGB").crop(tuple(int(v) for v in band))
    baseline, height = band[1], band[3] - band[1]
    turned = strip.rotate(-angle, expand=True, fillcolor=(255, 255, 255))
    words = ocr_image_words(turned, languages, zoom)
    cx, cy = turned.width / 2, turned.height / 2
    theta = math.radians(angle)  # rotate(-angle) turned the strip clockwise; turn points back
    heights = sorted(w[3] - w[1] for w in words)
    usual = heights[len(heights) // 2] if heights else 0.0
    centres = [((b.x0 + b.x1) / 2 - x0) for b in bars]
    spacing = float(np.median(np.diff(centres))) if len(centres) > 1 else float(bars[0].x1 - bars[0].x0)
    found: list[list[tuple[bool, float, str]]] = [[] for _ in bars]  # (tall, distance, text)
    for line in _text_lines([w for w in words if any(c.isalnum() for c in w[4])], usual):
        # a slanted label ends at its tick: its line's right end (level) turned back finds the bar
        wx, wy = line[-1][2] - cx, (line[-1][1] + line[-1][3]) / 2 - cy
        sx = wx * math.cos(theta) + wy * math.sin(theta) + strip.width / 2
        nearest = min(range(len(bars)), key=lambda i: abs(centres[i] - sx))
        off = abs(centres[nearest] - sx)
        if off <= max(bars[nearest].x1 - bars[nearest].x0, spacing / 2):
            # a tall "word" is tesseract reading pieces of several slanted labels: kept only alone
            tall = all(w[3] - w[1] > 1.8 * usual for w in line)
            found[nearest].append((tall, off, " ".join(w[4] for w in line)))
    out: list[tuple[str, BBox] | None] = []
    for bar, hits in zip(bars, found, strict=True):
        # one label a bar: the line ending nearest its tick (level text before misread pieces)
        text = clean(min(hits)[2]) if hits else ""
        if not text:
            out.append(None)
            continue
        out.append((text, (float(bar.x0), float(baseline), float(bar.x1), float(baseline + height))))
    return out


def _under_ticks(image: Image.Image, x0: int, x1: int, top: int, bottom: int) -> int:
    """The first row under the axis below its tick marks: rows whose ink repeats the row
    above (short vertical ticks, the axis line) are skipped, as OCR reads them as dashes."""
    rows = np.asarray(image.convert("L").crop((x0, top, x1, bottom))) < 160
    y = 0
    while y + 1 < len(rows) and y < 12 and (not rows[y].any() or np.array_equal(rows[y], rows[y + 1])):
        y += 1
    return top + y if y < 12 else top


def _text_lines(words: list[Word], usual: float) -> list[list[Word]]:
    """Words in lines, left to right: a word joins a line whose last word ends a space
    before it (less than the usual word height `usual`) on the same row."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: w[0]):
        h = word[3] - word[1]
        for line in lines:
            last = line[-1]
            if (
                abs((last[1] + last[3]) / 2 - (word[1] + word[3]) / 2) <= 0.5 * h
                and -2 <= word[0] - last[2] <= usual
            ):
                line.append(word)
                break
        else:
            lines.append([word])
    return lines


def _same_case(labels: list[tuple[str, BBox] | None]) -> list[tuple[str, BBox] | None]:
    texts = same_case([label[0] if label else "" for label in labels])
    return [(text, label[1]) if label else None for text, label in zip(texts, labels, strict=True)]


def _agrees(text: str, estimate: float, step: float) -> bool:
    """A printed number close to what the pixels say (a misread "09" for 0.9 is not)."""
    value = number(text)
    return value is not None and abs(value - estimate) <= max(0.25 * step, 0.15 * abs(estimate))


def _numbers_joined(words: list[Word]) -> list[Word]:
    """Words with a number written with spaces between its thousands ("1 143", OCR'd as two
    words) joined into one."""
    out: list[Word] = []
    for word in sorted(words, key=lambda w: (round(w[1] / 4), w[0])):
        if out and re.fullmatch(r"\d{3}", word[4]) and re.fullmatch(r"\d{1,3}(?: \d{3})*", out[-1][4]):
            last = out[-1]
            if abs(last[1] - word[1]) <= 0.3 * (word[3] - word[1]) and 0 <= word[0] - last[2] <= 0.6 * (
                word[3] - word[1]
            ):
                out[-1] = (
                    last[0],
                    min(last[1], word[1]),
                    word[2],
                    max(last[3], word[3]),
                    f"{last[4]} {word[4]}",
                )
                continue
        out.append(word)
    return out


def _printed_value(words: list[Word], bar: Bar, height: int, estimate: float, step: float) -> str | None:
    """A number printed just above the bar or inside its top, centred on it, that agrees
    with the bar's height."""
    gap = max(6.0, 0.06 * height)
    for x0, y0, x1, y1, text in words:
        text = clean(text)
        if number(text) is None or not bar.x0 - 2 <= (x0 + x1) / 2 <= bar.x1 + 2:
            continue
        if bar.y0 - gap <= y1 <= bar.y0 + gap and y0 < bar.y1 - 2 and _agrees(text, estimate, step):
            return text
    return None


def _printed_inside(words: list[Word], box: Bar, estimate: float, step: float) -> str | None:
    """A number printed inside a stacked segment that agrees with the segment's height."""
    for x0, y0, x1, y1, text in words:
        text = clean(text)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if box.x0 <= cx <= box.x1 and box.y0 <= cy <= box.y1 and _agrees(text, estimate, step):
            return text
    return None


def _scaled_bar(bar: Bar, scale: float) -> BBox:
    return scaled((bar.x0, bar.y0, bar.x1, bar.y1), scale)


def shifted(table: Table, dx: float, dy: float, turn: pymupdf.Matrix | None = None) -> Table:
    """`table` with every box moved by (dx, dy) points, then turned by `turn` (a rotated
    page's view back to its unrotated coordinates): a chart read from a picture's own
    rendering, placed where the picture sits on its page."""

    def move(box: BBox) -> BBox:
        moved = (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)
        if turn is None:
            return moved
        r = pymupdf.Rect(moved) * turn
        return (r.x0, r.y0, r.x1, r.y1)

    rows = [[replace(c, bbox=move(c.bbox)) for c in row] for row in table.rows]
    header = tuple(replace(c, bbox=move(c.bbox)) for c in table.header)
    return replace(table, rows=rows, bbox=move(table.bbox), header=header)
