"""Pie and donut charts read from pixels into a table of shares, so the table path answers
"which slice is the largest" or "what share does slice f have" (ingest/charts.py calls this
when a chart has no bars and no lines).

The method: the largest blob of non-background pixels must be a disc (or a ring): as wide as
tall, filling the circle its bounding box draws. A circle of samples around its centre, at
PIE_RING of the radius, is split into runs of one colour; each run's share of the samples
is its slice's share of the whole. A slice is named by the legend (a word right of a swatch
of its colour), else by the word OCR reads beside it, outside the disc along its middle angle
or printed on the slice, else by its colour. A percentage printed on
or beside a slice that agrees with the measured share is taken as written.

Anything not confidently a pie gives []; odd images never raise (the caller catches).
"""

from __future__ import annotations

import math
import re

import numpy as np
from PIL import Image
from scipy import ndimage

from ingest.chart_axes import chart_title, clean, colour_distance, colour_names, legend, number, scaled
from ingest.chart_note import TITLE_NOTE
from ingest.ocr import Word, ocr_image_words
from ingest.tables import BBox, Cell, Table

MIN_RADIUS = 20  # pixels
MIN_ROUNDNESS = 0.9  # the blob's pixels over the disc its bounding box draws...
MAX_ROUNDNESS = 1.02  # ...and at most this (a square fills 1.27 of it)
EDGE_IN, EDGE_OUT = 0.9, 1.1  # radii: the circles just inside and just outside a disc's edge...
EDGE_SHARE = 0.9  # ...drawn, and background, at this share of their points
MAX_ASPECT = 1.1  # width over height (either way) of a disc's bounding box
PIE_RING = 0.6  # the samples' distance from the centre, as a share of the radius (inside a donut's ring too)
SAMPLES = 1440  # around the circle (a quarter degree each)
SAME_SLICE = 40  # RGB distance: neighbouring samples this close are one slice's
MIN_SLICE = 0.005  # a run shorter than this share of the circle is an edge, not a slice
MIN_COVERED = 0.95  # of the ring: the slices found cover at least this
MIN_SLICES = 2
MAX_SLICES = 24
BACKGROUND = 60  # RGB distance from the background colour that counts as drawn
BORDER = 3  # pixels: white borders between slices this thin are closed
LABEL_REACH = 1.7  # a label outside the disc lies within this many radii of the centre
LABEL_ANGLE = 25.0  # degrees: a label sits within this of its slice's middle angle
INNER_LABEL = 0.35  # radii: a word nearer the centre is a donut's centre text, no slice's label
SHARE_AGREES = 3.0  # percentage points: a printed share this close to the measured one is taken
OCR_TARGET = 1800  # pixels on the long side the OCR reads (small charts are upscaled)
_READABLE = re.compile(r"[^\W\d_][\w.&'/()-]*")  # a label as printed: "Eólica", not "é€" nor "38"


def read_pie_charts(
    image: Image.Image, rgb: np.ndarray, languages: str, scale: float, table_no: int
) -> list[Table]:
    """The pie chart in `image` (its pixels `rgb`) as a table of slices and shares; `scale`
    is page points per pixel. [] unless the image holds one clear pie."""
    pie = find_pie(rgb)
    if pie is None:
        return []
    cx, cy, radius = pie
    slices = pie_slices(rgb, cx, cy, radius)
    if not MIN_SLICES <= len(slices) <= MAX_SLICES:
        return []
    zoom = min(4.0, max(1.0, OCR_TARGET / max(image.width, image.height)))
    words = ocr_image_words(image, languages, zoom)
    colours = [s.colour for s in slices]
    box = (cx - radius, cy - radius, cx + radius, cy + radius)
    named, used, _, _ = legend(rgb, words, colours, [box])
    free = [w for i, w in enumerate(words) if i not in used]
    fallback = colour_names(colours)
    beside, labelling = _labels_beside(free, slices, cx, cy, radius)
    rows = []
    for k, piece in enumerate(slices):
        label, printed = beside[k]
        name = named[k] or label or fallback[k]
        share = piece.share * 100
        value = printed if printed is not None and abs(printed - share) <= SHARE_AGREES else share
        cell_box = scaled(piece.box(cx, cy, radius), scale)
        rows.append([Cell(name, cell_box), Cell(f"{value:.1f}", cell_box)])
    # the title: the words above the disc, less the labels set beside its slices
    rest = [w for i, w in enumerate(free) if i not in labelling]
    title = chart_title(rest, cy - radius, cx - radius, cx + radius) or "Pie chart"
    bbox = scaled(box, scale)
    columns = ["Slice", "Share of the whole (%)"]
    header = tuple(Cell(c, bbox) for c in columns)
    return [Table(table_no, f"{title} (pie chart; {TITLE_NOTE})", columns, 1, rows, bbox, header)]


def find_pie(rgb: np.ndarray) -> tuple[float, float, float] | None:
    """The centre and radius of the image's one disc of drawn pixels, or None. Slices parted
    by thin white borders are joined first when the drawn pixels alone make no disc (closing
    them at once would also join labels set close to the disc)."""
    drawn = np.abs(rgb - _corner_colour(rgb)).sum(axis=2) > BACKGROUND
    disc = _disc(drawn) or _disc(ndimage.binary_closing(drawn, iterations=BORDER))
    if disc is None or not _round_edge(drawn, *disc):
        return None
    return disc


def _round_edge(drawn: np.ndarray, cx: float, cy: float, radius: float) -> bool:
    """Whether the blob's edge is a circle: drawn just inside it and background just outside
    it all around (a photo's tilted square footprint fills its corners past the circle)."""
    angles = np.arange(0, 360, 0.5)

    def share(r: float) -> float:
        ys, xs = _ring(drawn.shape, cx, cy, r, angles)
        return float(drawn[ys, xs].mean())

    return share(EDGE_IN * radius) >= EDGE_SHARE and 1 - share(EDGE_OUT * radius) >= EDGE_SHARE


def _disc(drawn: np.ndarray) -> tuple[float, float, float] | None:
    """The largest blob of `drawn` (holes filled: a donut's) when it is a disc."""
    filled = ndimage.binary_fill_holes(drawn)
    labels, count = ndimage.label(filled)
    if count == 0:
        return None
    sizes = ndimage.sum(filled, labels, range(1, count + 1))
    ys, xs = np.nonzero(labels == int(np.argmax(sizes)) + 1)
    width, height = xs.max() - xs.min() + 1, ys.max() - ys.min() + 1
    radius = (width + height) / 4
    if radius < MIN_RADIUS or max(width, height) > MAX_ASPECT * min(width, height):
        return None
    area = math.pi * radius * radius
    if not MIN_ROUNDNESS * area <= len(xs) <= MAX_ROUNDNESS * area:
        return None  # a filled square or a rounded box is no disc
    return float((xs.max() + xs.min()) / 2), float((ys.max() + ys.min()) / 2), float(radius)


class Slice:
    """A run of one colour around the circle: its colour, share, and angles (degrees,
    clockwise from 12 o'clock, as pies are drawn)."""

    def __init__(self, colour: np.ndarray, start: float, end: float, share: float) -> None:
        self.colour, self.start, self.end, self.share = colour, start, end, share

    @property
    def middle(self) -> float:
        return (self.start + ((self.end - self.start) % 360) / 2) % 360

    def box(self, cx: float, cy: float, radius: float) -> BBox:
        """The box around the slice's arc and the centre (where the viewer highlights it)."""
        span = (self.end - self.start) % 360 or 360
        angles = [self.start + span * t / 8 for t in range(9)]
        xs = [cx] + [cx + radius * math.sin(math.radians(a)) for a in angles]
        ys = [cy] + [cy - radius * math.cos(math.radians(a)) for a in angles]
        return (min(xs), min(ys), max(xs), max(ys))


def pie_slices(rgb: np.ndarray, cx: float, cy: float, radius: float) -> list[Slice]:
    """The slices met by a circle of samples at PIE_RING of the radius, in drawing order."""
    ys, xs = _ring(rgb.shape, cx, cy, PIE_RING * radius, np.arange(SAMPLES) * 360.0 / SAMPLES)
    samples = rgb[ys, xs].astype(float)
    background = _corner_colour(rgb)
    drawn = np.abs(samples - background).sum(axis=1) > BACKGROUND
    if drawn.mean() < 0.9:
        return []
    # runs of one colour, starting where the colour changes (not mid-slice at 12 o'clock)
    change = [i for i in range(SAMPLES) if colour_distance(samples[i], samples[i - 1]) > SAME_SLICE]
    if not change:
        return []
    runs = list(zip(change, change[1:] + [change[0] + SAMPLES], strict=True))
    pieces: list[tuple[np.ndarray, int, int]] = []
    for a, b in runs:
        idx = [i % SAMPLES for i in range(a, b) if drawn[i % SAMPLES]]
        if len(idx) < MIN_SLICE * SAMPLES:
            continue  # an edge, a border's blend
        colour = np.median(samples[idx], axis=0)
        if pieces and colour_distance(pieces[-1][0], colour) <= SAME_SLICE:
            pieces[-1] = (pieces[-1][0], pieces[-1][1], b)  # one slice split by a thin mark
        else:
            pieces.append((colour, a, b))
    if len(pieces) > 1 and colour_distance(pieces[0][0], pieces[-1][0]) <= SAME_SLICE:
        colour, a, _ = pieces[-1]
        pieces = [(colour, a - SAMPLES, pieces[0][2]), *pieces[1:-1]]
    total = sum(b - a for _, a, b in pieces)
    if total < MIN_COVERED * SAMPLES:
        return []  # a photo's ring is many short runs of colour, not a few slices
    return [
        Slice(c, (a % SAMPLES) * 360 / SAMPLES, (b % SAMPLES) * 360 / SAMPLES, (b - a) / total)
        for c, a, b in pieces
    ]


def _labels_beside(
    words: list[Word], slices: list[Slice], cx: float, cy: float, radius: float
) -> tuple[list[tuple[str | None, float | None]], set[int]]:
    """Per slice, the label OCR read nearest its middle angle (outside the disc within
    LABEL_REACH radii, or on the slice itself, off a donut's hole) and a percentage printed
    there; each word names one slice at most, the one it is nearest. Also the positions in
    `words` of the words taken."""
    out: list[tuple[str | None, float | None]] = [(None, None)] * len(slices)
    best = [LABEL_ANGLE] * len(slices)
    taken: dict[int, int] = {}  # slice -> the word naming it
    used: set[int] = set()
    for n, (x0, y0, x1, y1, text) in enumerate(words):
        x, y = (x0 + x1) / 2, (y0 + y1) / 2
        distance = math.hypot(x - cx, y - cy)
        if distance > LABEL_REACH * radius or distance < INNER_LABEL * radius:
            continue
        angle = math.degrees(math.atan2(x - cx, cy - y)) % 360
        offs = [min(abs(angle - p.middle), 360 - abs(angle - p.middle)) for p in slices]
        inside = [distance < radius and _within(angle, p) for p in slices]
        k = next((i for i, hit in enumerate(inside) if hit), int(np.argmin(offs)))
        if offs[k] > best[k] and not inside[k]:
            continue
        word = clean(text)
        label, printed = out[k]
        if word.endswith("%") and number(word) is not None:
            out[k] = (label, number(word))
            used.add(n)
        elif _READABLE.fullmatch(word):  # not "é€", what OCR makes of a small "e"
            out[k], best[k], taken[k] = (word, printed), offs[k], n
    return out, used | set(taken.values())


def _within(angle: float, piece: Slice) -> bool:
    return (angle - piece.start) % 360 <= (piece.end - piece.start) % 360


def _ring(
    shape: tuple[int, ...], cx: float, cy: float, r: float, degrees: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The pixel rows and columns of a circle's points at `degrees` (clockwise from 12
    o'clock), clipped to the image."""
    turns = np.radians(degrees)
    xs = np.clip(np.round(cx + r * np.sin(turns)).astype(int), 0, shape[1] - 1)
    ys = np.clip(np.round(cy - r * np.cos(turns)).astype(int), 0, shape[0] - 1)
    return ys, xs


def _corner_colour(rgb: np.ndarray) -> np.ndarray:
    """The colour of the image's corners (their per-channel median): the background around a
    pie. Not charts._background, the most common colour, which a large pie's slice can be."""
    corners = np.array([rgb[0, 0], rgb[0, -1], rgb[-1, 0], rgb[-1, -1]], dtype=float)
    return np.median(corners, axis=0)
