"""Text of the pictures on a text page. A table or a labelled map pasted into a report as
an image ("Tableau 2 : Puissance photovoltaïque installée...", a scanned appendix) has no
text layer, so its words reach no chunk and no answer. Each such picture that is not read
as a chart (ingest/charts.py) is OCRed here; what it reads is kept only when it reads as
text (ingest/readable.py), and a picture with no paper in it (a photo, a satellite scene)
is not read at all.

The picture is read thresholded at INK_LEVEL grey: pale tinted rows turn white and the
type black, where tesseract's own global threshold reads a table with tinted rows as blots
(the Séranon study's tables 2 and 3: 0.93 and 0.96 of their characters in word-like tokens
thresholded, 0.64 and 0.72 as they are); a solid dark band (a header row) gives its light
type as the ink; rules and frames are dropped. Only when that reads (almost) nothing, as
with light type on a dark photo, is the picture read again as it is: one OCR pass a
picture, not two (a chart drawn in dashed lines takes tesseract 4-5 s a pass).

The result is a one-page PDF whose text layer is the OCR (ingest/ocr.py), in the picture's
own points, so the caller finds its tables with the same detector as the text layer's and
moves every box onto the page. Of what it finds, tables are kept when their cells read as
text (`kept_tables`), the rest of the picture's text only when it reads as prose
(`prose_blocks`): numbers without their labels, a chart's ticks, are not indexed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymupdf
from PIL import Image
from scipy import ndimage

from ingest.loaders import TextBlock
from ingest.ocr import ocr_pdf_page
from ingest.readable import PAGE_MIN_SCORE, is_wordlike, reading_score
from ingest.tables import Table

READABLE_CELLS = 0.6
PROSE_SCORE = 0.8
NUMBERS_SHARE = 0.3
PAPER_SHARE = 0.25
PAPER_GREYS = 8
INK_LEVEL = 140  # grey level (0-255): darker pixels are type, lighter ones paper or tint
BAND_MIN_PX = 24  # a mark off the paper's grey at least this tall (pixels, at 200 dpi) and RULE_PX wide...
BAND_FILL = 0.6  # ...and this solid is a band (a shaded header row), not type
BAND_CONTRAST = 40  # grey levels from the paper's: a band's colour
TYPE_CONTRAST = 60  # grey levels from a band's own: its type
OPENING_PX = 11  # marks thinner than this (pixels: rules, frames, type) are no band
RULE_PX = 150  # a mark longer than this (pixels, at 200 dpi: 54 pt) is no glyph when thin or hollow
RULE_THIN_PX = 8
RULE_FILL = 0.35
MIN_WORD_CHARS = 12  # fewer word-like characters than this is a picture, not text


@dataclass(frozen=True)
class FigureText:
    """A picture's OCR: `pdf` holds it as one page with the text layer; `blocks` are that
    layer's text blocks, boxes in the picture's points (origin at its top-left corner)."""

    pdf: bytes
    blocks: list[TextBlock]


def read_figure(image: Image.Image, languages: str, dpi: float) -> FigureText | None:
    """The text of a picture rendered at `dpi`, or None when it does not read as text."""
    if not drawn(image):
        return None
    for variant in (thresholded(image), image):
        pdf = ocr_pdf_page(variant, languages, dpi)
        blocks = _blocks(pdf)
        text = " ".join(b.text for b in blocks)
        if sum(len(t) for t in text.split() if is_wordlike(t)) >= MIN_WORD_CHARS:
            return FigureText(pdf, blocks) if reading_score(text) >= PAGE_MIN_SCORE else None
    return None


def kept_tables(tables: list[Table]) -> list[Table]:
    """The tables found in a picture whose cells read as text (at least READABLE_CELLS of
    the filled ones): a bar chart's bars and gridlines read as a grid of "i \\", "( '" are
    no table."""

    def readable(table: Table) -> bool:
        cells = [c.text for row in table.rows for c in row if c.text.strip()]
        good = sum(1 for text in cells if reading_score(text) >= PAGE_MIN_SCORE)
        return bool(cells) and good >= READABLE_CELLS * len(cells)

    return [t for t in tables if readable(t)]


def prose_blocks(blocks: list[TextBlock]) -> list[TextBlock]:
    """A picture's text outside its tables, kept when it reads as prose (a letterhead, a
    scanned paragraph): at least PROSE_SCORE word-like and less than NUMBERS_SHARE of its
    tokens numbers. A chart's ticks and a map's labelled figures ("Monthly churn rate (%)
    3.0 2.8% 2.6%", "Normandie 217 MW") are numbers read without what they measure, and
    quoted as an answer they would mislead."""
    text = " ".join(b.text for b in blocks)
    tokens = text.split()
    if not tokens or reading_score(text) < PROSE_SCORE:
        return []
    numbers = sum(1 for t in tokens if any(ch.isdigit() for ch in t))
    return blocks if numbers < NUMBERS_SHARE * len(tokens) else []


def drawn(image: Image.Image) -> bool:
    """Whether a picture is drawn on paper (a table, a chart, a map: at least PAPER_SHARE of
    its pixels within PAPER_GREYS of its commonest grey) rather than a photo or a scene,
    which OCR would read for seconds to keep nothing (report figures 0.31-0.95, noise 0.11)."""
    grey = np.asarray(image.convert("L")).ravel()
    counts = np.bincount(grey, minlength=256)
    top = int(counts.argmax())
    return counts[max(0, top - PAPER_GREYS) : top + PAPER_GREYS + 1].sum() >= PAPER_SHARE * grey.size


def thresholded(image: Image.Image) -> Image.Image:
    """Black type on white: a pixel darker than INK_LEVEL grey is ink, except in a band (a
    header row, white type on orange or navy: a solid region of a grey BAND_CONTRAST away
    from the paper's), where the pixels TYPE_CONTRAST away from the band's own grey are;
    rules and frames are left out."""
    grey = np.asarray(image.convert("L"))
    paper = int(np.bincount(grey.ravel(), minlength=256).argmax())
    ink = grey < INK_LEVEL
    off_paper = np.abs(grey.astype(np.int16) - paper) > BAND_CONTRAST
    # opened, so a frame or rule touching a band (a border round the table) is not part of it
    labels, _ = ndimage.label(ndimage.binary_opening(off_paper, structure=np.ones((OPENING_PX, OPENING_PX))))
    for k, box in enumerate(ndimage.find_objects(labels), start=1):
        if box is None:
            continue
        height, width = box[0].stop - box[0].start, box[1].stop - box[1].start
        if height < BAND_MIN_PX or width < RULE_PX:
            continue
        own = labels[box] == k
        if np.count_nonzero(own) >= BAND_FILL * height * width:
            level = int(np.median(grey[box][own]))
            ink[box] = np.abs(grey[box].astype(np.int16) - level) > TYPE_CONTRAST
    return Image.fromarray(np.where(_without_rules(ink), 0, 255).astype(np.uint8))


def _without_rules(ink: np.ndarray) -> np.ndarray:
    """`ink` less its rules and frames: connected marks longer than RULE_PX that are thin
    (a ruling line) or hollow (a cell's frame, the rim left around a dark band). Tesseract
    reads a row boxed by a frame as one picture and drops its words."""
    labels, _ = ndimage.label(ink)
    keep = ink.copy()
    for k, box in enumerate(ndimage.find_objects(labels), start=1):
        if box is None:
            continue
        height, width = box[0].stop - box[0].start, box[1].stop - box[1].start
        if max(height, width) <= RULE_PX:
            continue
        fill = np.count_nonzero(labels[box] == k) / (height * width)
        if min(height, width) <= RULE_THIN_PX or fill < RULE_FILL:
            keep[box] &= labels[box] != k
    return keep


def _blocks(pdf: bytes) -> list[TextBlock]:
    with pymupdf.open("pdf", pdf) as doc:
        raw = doc[0].get_text("blocks", sort=True)
    blocks = []
    for x0, y0, x1, y1, text, _no, block_type in raw:
        text = " ".join(str(text).split())
        if block_type == 0 and text:
            blocks.append(TextBlock((float(x0), float(y0), float(x1), float(y1)), text))
    return blocks
