"""Line charts read from pixels into tables: one row per x-axis tick label, one column per
line, the line's value there on the fitted value axis, and four rows more for each line's
start, end, highest and lowest point, so "what is the highest CO2 concentration" or "where
does the 1990 line start" is answered by a cell
(ingest/charts.py reads bar charts and calls this when it finds no bars).

The method is general: a line is a thin curve of one saturated colour, one pixel run per
column (a function of x), pieces of one colour that continue each other (broken where
another line crosses) joined. The value axis is the OCR'd numbers left of the plot
(ingest/chart_axes.py); the x ticks are the first line of words under the lowest point of
the lines, relabelled by their own fitted axis when they are numbers (a misread "9" read as
"3" keeps its place). A line is named by the legend, else by the words at its ends written
in its colour ("1960 ... 1969"), else by its colour.

Anything that is not confidently a line chart gives [] before any OCR.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image
from scipy import ndimage

from ingest.chart_axes import (
    LEVEL_TEXT,
    chart_title,
    clean,
    colour_distance,
    colour_names,
    fit_ticks,
    format_value,
    legend,
    number,
    same_case,
    scaled,
    text_height,
    tick_mark,
    union,
    value_axis,
    x_title,
    y_title,
)
from ingest.chart_note import TITLE_NOTE
from ingest.ocr import Word, ocr_image_words
from ingest.tables import BBox, Cell, Table

MIN_SATURATION = 40  # max - min of the RGB channels: greys (gridlines, text) are not lines
MAX_SATURATED = 0.15  # of the image: more saturated pixels is a photo or a filled map, not lines
MAX_COLOURS = 16
SAME_COLOUR = 40  # RGB distance: colour bins this close are one line's colour
ASSIGN_DISTANCE = 60  # a saturated pixel farther than this from every line colour is no line's
MAX_THICKNESS = 6.0  # pixels per column, on average
MIN_WIDTH = 10  # pixels: a line piece spans at least this (a line drawn for a few months of a decade)
MAX_SPLIT = 0.25  # of a curve's columns: more crossing it twice (a marker's edges do) is text
MIN_STRETCH = 8  # columns: a shorter stretch of curve between text or crossings is left out
MIN_PIECE = 0.5  # of a component's width: the stretch of it that is a thin curve
MIN_LONGEST = 0.25  # of the image width: the longest line spans at least this
MIN_RISE = 0.02  # of the image height: ...and rises or falls at least this
OCR_TARGET = 1800


@dataclass
class Line:
    colour: np.ndarray
    ys: np.ndarray  # per image column, the line's centre row (nan where it is not drawn)

    @property
    def x0(self) -> int:
        return int(np.flatnonzero(~np.isnan(self.ys))[0])

    @property
    def x1(self) -> int:
        return int(np.flatnonzero(~np.isnan(self.ys))[-1]) + 1

    def y_at(self, x: float) -> float | None:
        """The line's row at column x (the mean over x +- 1; its end when x is a few columns
        past it: a tick at the axis' end), None where it is not drawn."""
        at = int(round(x))
        if self.x1 <= at <= self.x1 + 3:
            at = self.x1 - 1
        elif self.x0 - 3 <= at < self.x0:
            at = self.x0
        near = self.ys[max(0, at - 1) : at + 2]
        near = near[~np.isnan(near)]
        return float(near.mean()) if len(near) else None

    def box(self) -> tuple[int, int, int, int]:
        return self.x0, int(np.nanmin(self.ys)), self.x1, int(np.nanmax(self.ys)) + 1


def read_line_charts(
    image: Image.Image, rgb: np.ndarray, languages: str, scale: float, table_no: int
) -> list[Table]:
    """The line chart in `image` (its pixels `rgb`) as a table; `scale` is page points per pixel."""
    lines = find_lines(rgb)
    if not lines or _broken(lines):
        return []
    zoom = min(4.0, max(1.0, OCR_TARGET / max(image.width, image.height)))
    words = ocr_image_words(image, languages, zoom)
    left, right = min(line.x0 for line in lines), max(line.x1 for line in lines)
    top = min(line.box()[1] for line in lines)
    bottom = max(line.box()[3] for line in lines)
    fit = value_axis(words, left, np.asarray(image.convert("L"), dtype=np.int16))
    if fit is None:
        return []
    slope, intercept, step = fit
    colours: list[np.ndarray] = []  # the lines' colours, each once
    for line in lines:
        if all(colour_distance(line.colour, c) > SAME_COLOUR for c in colours):
            colours.append(line.colour)
    named, used, order, swatches = legend(rgb, words, colours, [], _long_lines(lines, rgb.shape[:2]))
    words = [w for i, w in enumerate(words) if i not in used]
    # a legend's swatch drawn as a short line (with its marker) is no line of the chart
    lines = [line for line in lines if not any(_inside(line.box(), swatch) for swatch in swatches)]
    if not lines:
        return []
    rank = {k: i for i, k in enumerate(order)}
    lines.sort(key=lambda line: rank[_nearest(line.colour, colours)])
    names = [named[_nearest(line.colour, colours)] for line in lines]
    grey = np.asarray(image.convert("L"), dtype=np.int16)
    # the x labels sit under the plot's floor: its lowest value-axis label when the lines stay
    # well above it (churn between 1.7% and 2.8% on an axis from 1.0)
    floor = max(
        [bottom, *((w[1] + w[3]) / 2 for w in words if number(w[4]) is not None and w[2] <= left + 2)]
    )
    ticks = _x_ticks(words, left, right, floor, grey, text_height(words, left))
    if len(ticks) < 2:
        return []
    for k, line in enumerate(lines):
        names[k] = names[k] or _end_labels(rgb, words, line, text_height(words, left))
    fallback = colour_names([line.colour for line in lines])
    rows: list[list[Cell]] = []
    for label, x, box in ticks:
        cells = [Cell(label, scaled(box, scale))]
        for line in lines:
            y = line.y_at(x)
            text = "" if y is None else format_value(slope * y + intercept, step)
            cells.append(Cell(text, scaled((x - 1, y - 1, x + 1, y + 1) if y is not None else box, scale)))
        if any(c.text for c in cells[1:]):  # a tick past every line's end reads nothing
            rows.append(cells)
    extremes = []
    for label, pick in (("Highest point", np.nanargmin), ("Lowest point", np.nanargmax)):
        cells = [Cell(label, scaled((left, top, right, bottom), scale))]
        for line in lines:
            x = int(pick(line.ys))
            y = float(line.ys[x])
            box = scaled((x - 2, y - 2, x + 2, y + 2), scale)
            cells.append(Cell(format_value(slope * y + intercept, step), box))
        extremes.append(cells)
    ends = []  # where each line starts and ends ("at what level does the 1990 line start?")
    for label, at in (
        ("Start (first point)", lambda line: line.x0),
        ("End (last point)", lambda line: line.x1 - 1),
    ):
        cells = [Cell(label, scaled((left, top, right, bottom), scale))]
        for line in lines:
            x, y = at(line), line.y_at(at(line))
            text = "" if y is None else format_value(slope * y + intercept, step)
            cells.append(Cell(text, scaled((x - 2, (y or 0) - 2, x + 2, (y or 0) + 2), scale)))
        ends.append(cells)
    yt = y_title(image, languages, zoom, words, left)
    if len(lines) > 1:  # the highest and lowest of all lines, for a question naming none of them
        for cells, pick in ((extremes[0], max), (extremes[1], min)):
            cells.append(pick(cells[1:], key=lambda c: float(c.text)))
        rows = [[*cells, Cell("", cells[0].bbox)] for cells in rows + ends]
        ends = []
    rows += ends + extremes
    xt = x_title(words, left, right, max(t[2][3] for t in ticks), image.height, gap=1)
    ct = chart_title(words, top, left, right)
    columns = [xt or "X", *(n or f for n, f in zip(names, fallback, strict=True))]
    if len(lines) > 1:
        columns.append(f"{yt or 'Value'} of all lines")
    name = " — ".join(p for p in (ct, yt) if p) or "Line chart"
    bbox = scaled((left, top, right, bottom), scale)
    header = tuple(Cell(c, bbox) for c in columns)
    return [Table(table_no, f"{name} (line chart; {TITLE_NOTE})", columns, 1, rows, bbox, header)]


def _broken(lines: list[Line]) -> bool:
    """Whether one colour's line came apart in pieces side by side (a steep peak read as
    text, a label over it): the ticks in the gap would read nothing, or another piece's
    value, so the chart is left unread rather than read wrong."""
    for i, a in enumerate(lines):
        for b in lines[i + 1 :]:
            if colour_distance(a.colour, b.colour) <= SAME_COLOUR and (a.x1 <= b.x0 or b.x1 <= a.x0):
                return True
    return False


def find_lines(rgb: np.ndarray) -> list[Line]:
    """The chart's lines, left to right by start; [] unless one spans MIN_LONGEST of the
    width and MIN_RISE of the height."""
    saturated = (rgb.max(axis=2) - rgb.min(axis=2)) >= MIN_SATURATION
    share = saturated.mean() if saturated.size else 0.0
    if not 0.0005 <= share <= MAX_SATURATED:
        return []
    ys, xs = np.nonzero(saturated)
    pixels = rgb[ys, xs]
    colours = _line_colours(pixels)
    if not colours:
        return []
    distance = np.stack([np.abs(pixels - c).sum(axis=1) for c in colours], axis=1)
    nearest = distance.argmin(axis=1)
    close = distance.min(axis=1) <= ASSIGN_DISTANCE
    height, width = saturated.shape
    pieces: list[tuple[int, np.ndarray]] = []  # colour, per-column centre rows
    assigned = np.zeros_like(saturated)
    for k in range(len(colours)):
        mask = np.zeros_like(saturated)
        pick = close & (nearest == k)
        mask[ys[pick], xs[pick]] = True
        assigned |= mask
        pieces += [(k, row) for row, _box in _pieces(mask)]
    # a line too short to make a colour of its own (a few months drawn): leftover pixels
    # clear of the other lines' anti-aliased edges, coloured by their own median
    leftover = saturated & ~ndimage.binary_dilation(assigned, iterations=2)
    known = len(colours)
    for row, box in _pieces(leftover):
        colour = np.median(
            rgb[box[1] : box[3], box[0] : box[2]][leftover[box[1] : box[3], box[0] : box[2]]], axis=0
        )
        if any(_blend(colour, c) for c in colours[:known]):
            continue  # a line's anti-aliased fringe (a marker's, a legend's), not a line
        pieces.append((len(colours), row))
        colours.append(colour)
    lines = _joined(pieces, colours, width, height)
    # a chart's line rises and falls: rules and underlines on a text page are flat
    if not any(
        line.x1 - line.x0 >= MIN_LONGEST * width
        and np.nanmax(line.ys) - np.nanmin(line.ys) >= max(8, MIN_RISE * height)
        for line in lines
    ):
        return []
    return sorted(lines, key=lambda line: (line.x0, np.nanmean(line.ys)))


def _pieces(mask: np.ndarray) -> list[tuple[np.ndarray, tuple[int, int, int, int]]]:
    """The thin curves among `mask`'s components: per image column the centre row, and the box."""
    labelled, _count = ndimage.label(mask, structure=np.ones((3, 3), dtype=bool))
    found = []
    wide = [(i, sl) for i, sl in enumerate(ndimage.find_objects(labelled), start=1) if sl is not None]
    for index, sl in [(i, sl) for i, sl in wide if sl[1].stop - sl[1].start >= MIN_WIDTH][:200]:
        centres = _curve(labelled[sl] == index)
        if centres is None:
            continue
        row = np.full(mask.shape[1], np.nan)
        row[sl[1].start : sl[1].stop] = centres + sl[0].start
        found.append((row, (sl[1].start, sl[0].start, sl[1].stop, sl[0].stop)))
    return found


def _line_colours(pixels: np.ndarray) -> list[np.ndarray]:
    """The saturated colours covering >= 0.2% of the saturated pixels, leaving out bins
    closer than SAME_COLOUR to one kept and a kept colour's blends with white (anti-aliasing)."""
    keys = (pixels // 16).astype(np.int32)
    packed = keys[:, 0] * 65536 + keys[:, 1] * 256 + keys[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    colours: list[np.ndarray] = []
    for i in np.argsort(-counts)[: 4 * MAX_COLOURS]:
        if counts[i] < max(20, 0.002 * len(packed)) or len(colours) >= MAX_COLOURS:
            break
        colour = np.median(pixels[packed == values[i]], axis=0)
        if all(colour_distance(colour, c) > SAME_COLOUR and not _blend(colour, c) for c in colours):
            colours.append(colour)
    return colours


def _blend(colour: np.ndarray, base: np.ndarray) -> bool:
    """`colour` is `base` mixed with white: each channel's distance to white scaled alike."""
    room = 255.0 - base
    channels = room >= 30  # a channel already near white says nothing
    if channels.sum() < 2:
        return False
    ratios = (255.0 - colour)[channels] / room[channels]
    return bool(np.ptp(ratios) <= 0.1 and 0.0 <= ratios.mean() <= 1.0)


def _curve(piece: np.ndarray) -> np.ndarray | None:
    """Per column of a component, its centre row over the stretches of columns where it is
    a thin curve: one run of pixels, or runs close together (a marker's edges); text touching
    a line's end (runs far apart) is cut off. None when they cover less than MIN_PIECE of
    the component or are thicker than a line."""
    counts = piece.sum(axis=0)
    drawn = counts > 0
    if not drawn.any():
        return None
    rows = np.arange(piece.shape[0])[:, None]
    first = np.where(piece, rows, piece.shape[0]).min(axis=0)
    last = np.where(piece, rows, -1).max(axis=0)
    span = last - first + 1
    single = drawn & (span <= counts + 1)
    good = single | (drawn & (span <= max(8.0, 2 * float(np.median(counts[drawn])))))
    columns = np.flatnonzero(good)
    if not len(columns):
        return None
    breaks = np.flatnonzero(np.diff(columns) > 3)  # a gap of up to 3 columns stays one stretch
    starts, ends = np.r_[0, breaks + 1], np.r_[breaks, len(columns) - 1]
    keep = np.zeros(piece.shape[1], dtype=bool)
    for a, b in zip(columns[starts], columns[ends], strict=True):
        if b - a + 1 >= MIN_STRETCH:
            keep[a : b + 1] = True
    keep &= drawn
    if keep.sum() < max(MIN_WIDTH, MIN_PIECE * drawn.sum()) or counts[keep].mean() > MAX_THICKNESS:
        return None
    if (keep & ~single).sum() > MAX_SPLIT * keep.sum():  # letters: most columns cross two strokes
        return None
    centres = (piece * rows).sum(axis=0) / np.maximum(counts, 1)
    return np.where(keep, centres, np.nan)


def _joined(
    pieces: list[tuple[int, np.ndarray]], colours: list[np.ndarray], width: int, height: int
) -> list[Line]:
    """Pieces of one colour that continue each other (broken where a line crosses) as one
    line; pieces overlapping in x are different lines. A short flat piece of a colour that
    has a long line too is that line's legend swatch, not a line."""
    lines: list[tuple[int, np.ndarray]] = []
    for k, row in sorted(pieces, key=lambda p: int(np.flatnonzero(~np.isnan(p[1]))[0])):
        start = int(np.flatnonzero(~np.isnan(row))[0])
        for j, (kj, ys) in enumerate(lines):
            end = int(np.flatnonzero(~np.isnan(ys))[-1])
            if kj != k or not end - 3 <= start <= end + 0.05 * width:
                continue
            if abs(row[start] - ys[end]) > 0.1 * height:
                continue
            lines[j] = (kj, np.where(np.isnan(ys), row, ys))
            break
        else:
            lines.append((k, row))
    out = []
    for k, ys in lines:
        span = int((~np.isnan(ys)).sum())
        longest = max(int((~np.isnan(o)).sum()) for kk, o in lines if kk == k)
        flat = np.nanmax(ys) - np.nanmin(ys) <= 3
        if flat and (span * 3 <= longest or span < 0.05 * width):  # a legend swatch, a dash
            continue
        out.append(Line(colours[k], _bridged(ys, max(6, int(0.03 * width)))))
    return out


def _bridged(ys: np.ndarray, most: int) -> np.ndarray:
    """The line's rows with gaps of at most `most` columns (a marker's edge, a crossing, a
    gridline label) filled in straight from either side."""
    drawn = np.flatnonzero(~np.isnan(ys))
    out = ys.copy()
    for a, b in zip(drawn, drawn[1:], strict=False):
        if 1 < b - a <= most + 1:
            out[a + 1 : b] = np.interp(np.arange(a + 1, b), [a, b], [ys[a], ys[b]])
    return out


def _long_lines(lines: list[Line], shape: tuple[int, int]) -> np.ndarray:
    """The pixels within 3 rows of the lines spanning a tenth of the width or more."""
    mask = np.zeros(shape, dtype=bool)
    for line in lines:
        if line.x1 - line.x0 < 0.1 * shape[1]:
            continue
        for x in np.flatnonzero(~np.isnan(line.ys)):
            y = int(line.ys[x])
            mask[max(0, y - 3) : y + 4, max(0, x - 1) : x + 2] = True
    return mask


def _nearest(colour: np.ndarray, colours: list[np.ndarray]) -> int:
    return min(range(len(colours)), key=lambda k: colour_distance(colour, colours[k]))


def _inside(box: tuple[int, int, int, int], frame: BBox) -> bool:
    """Whether `box` lies within `frame` (3 pixels either way)."""
    return (
        frame[0] - 3 <= box[0]
        and box[2] <= frame[2] + 3
        and frame[1] - 3 <= box[1]
        and box[3] <= frame[3] + 3
    )


def _x_ticks(
    words: list[Word], left: float, right: float, bottom: float, grey: np.ndarray, type_height: float
) -> list[tuple[str, float, BBox]]:
    """(label, x, box) of the x-axis tick labels: the first line of words under the lines'
    lowest point, each at its tick mark above it when there is one (a label's centre is a few
    pixels off its tick); numbers are relabelled by their fitted axis when >= 3 fit one."""
    height = grey.shape[0]
    reach = 0.5 * (right - left) / 10
    under = [
        w
        for w in words
        if bottom - 2 <= w[1] <= bottom + 0.15 * height
        and left - reach <= (w[0] + w[2]) / 2 <= right + reach
        and w[2] > left + 2  # not a value-axis tick
        and w[3] - w[1] <= LEVEL_TEXT * type_height
    ]
    if not under:
        return []
    first = min(w[1] for w in under)
    line = sorted((w for w in under if w[1] <= first + 0.6 * (w[3] - w[1])), key=lambda w: w[0])
    labels: list[list[Word]] = []
    for w in line:  # words closer than a space's width are one label ("Jan 2020")
        if labels and w[0] - labels[-1][-1][2] <= 0.6 * (w[3] - w[1]):
            labels[-1].append(w)
        else:
            labels.append([w])
    ticks = []
    for ws in labels:
        box = union(ws)
        centre = (box[0] + box[2]) / 2
        mark = tick_mark(grey.T, box[1] - 12, box[1] - 1, centre, (box[2] - box[0]) / 2 + 2)
        ticks.append((" ".join(w[4] for w in ws), centre if mark is None else mark, box))
    values = [number(t[0]) for t in ticks]
    numeric = [(t, v) for t, v in zip(ticks, values, strict=True) if v is not None]
    if len(numeric) >= 3 and len(numeric) >= 0.75 * len(ticks):
        fit = fit_ticks([t[1] for t, _ in numeric], [v for _, v in numeric], increasing=True)
        if fit is not None:
            slope, intercept, step = fit
            return [(format_value(slope * t[1] + intercept, step * 100), t[1], t[2]) for t, _ in numeric]
    ticks = [t for t in ticks if any(c.isalnum() for c in t[0])]
    return [(text, t[1], t[2]) for text, t in zip(same_case([t[0] for t in ticks]), ticks, strict=True)]


def _end_labels(rgb: np.ndarray, words: list[Word], line: Line, type_height: float) -> str | None:
    """The words written in the line's colour next to its first and last points."""
    found = []
    for x, y in ((line.x0, line.ys[line.x0]), (line.x1 - 1, line.ys[line.x1 - 1])):
        near = [
            w
            for w in words
            if x - 5 <= w[0] <= x + 3 * type_height  # written after the point
            and w[1] - 1.5 * type_height <= y <= w[3] + 1.5 * type_height
            and any(c.isalnum() for c in w[4])
            and _ink_matches(rgb, w, line.colour)
        ]
        if near:
            best = min(near, key=lambda w: abs((w[0] + w[2]) / 2 - x) + abs((w[1] + w[3]) / 2 - y))
            if clean(best[4]) and clean(best[4]) not in found:
                found.append(clean(best[4]))
    return " – ".join(found) or None


def _ink_matches(rgb: np.ndarray, word: Word, colour: np.ndarray) -> bool:
    """The word's strokes are the line's colour: the median of its darkest quarter of
    saturated pixels (the cores of the glyphs; their edges are blended with the paper)."""
    x0, y0, x1, y1 = (int(v) for v in word[:4])
    box = rgb[max(0, y0) : y1 + 1, max(0, x0) : x1 + 1].reshape(-1, 3)
    ink = box[(box.max(axis=1) - box.min(axis=1)) >= MIN_SATURATION]
    if len(ink) < 5:
        return False
    core = ink[np.argsort(ink.sum(axis=1))[: max(3, len(ink) // 4)]]
    return colour_distance(np.median(core, axis=0), colour) <= 80
