"""Tables of a PDF page kept as tables: cells with boxes, header rows, one label per column.

Detection is PyMuPDF's `Page.find_tables` with the layout model of `pymupdf_layout`
(`union=True, refine=True`: the layout analyser's table grids fused with the ruling-line
finder, then each grid refined and its header rows found), the same detector
`pymupdf4llm` renders as markdown; `pymupdf4llm` itself gives no cell boxes, so it is
not used. The cell text is read here from the page's words (each word goes to the cell
holding its centre), because `Table.extract()` splits numbers such as "4.738.950" at
their separators on some PDFs.

A table becomes `Table`: a title (a spanning first row, or the short line just above the
table), column labels (header rows joined " / ", a spanning header label repeated over
the empty header cells to its right), and body rows of `Cell`s. Cell text is capped at
`CELL_CHARS` so a payload stays bounded.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass

import pymupdf

# The version of the table chunking, written into each table chunk's payload ("version"):
# bump it when a change here or in ingest/chunking.py cuts other cells from the same page,
# and `carta reindex` rebuilds the table chunks stored by an older one (service/reindex.py).
# 1: chunks stored before the field; 2: cell boxes of their words, stacked rows split,
# over-split grids replaced by the ruling lines' grid; 3: bar charts read into tables
# (ingest/charts.py) on pages with little text; 4: stacked, grouped and line charts too
# (ingest/chart_lines.py), and bar charts pictured on text pages.
TABLE_VERSION = 4
BBox = tuple[float, float, float, float]  # as ingest.loaders.BBox (which imports Table from here)
CELL_CHARS = 200  # a cell's text is cut here (payloads and chunk text stay bounded)
MAX_HEADER_ROWS = 4
TITLE_GAP = 40.0  # points between a table's top and a line above it that can be its title
TITLE_CHARS = 200
_NUMBER = re.compile(r"^[(\-+−]?[$R€£₹]*\s?\d[\d.,\s]*%?\)?$")


@dataclass(frozen=True)
class Cell:
    text: str
    bbox: BBox


@dataclass(frozen=True)
class Table:
    """One table of a page, as `ingest.chunking` turns it into chunks."""

    table_no: int  # position on the page, 0-based
    title: str
    columns: list[str]  # one label per column
    header_rows: int
    rows: list[list[Cell]]  # body rows, each one cell per column
    bbox: BBox
    header: tuple[Cell, ...] = ()  # the last header row's cells (`continued` may read it as a body row)


TABULAR_GAP = 10.0  # points of white space between two cells of a row (prose has 2-6)
TABULAR_SEGMENTS = 3  # a row with this many cells is tabular
TABULAR_ROWS = 3  # a page with this many tabular rows may hold a table


def might_hold_table(page: pymupdf.Page) -> bool:
    """A cheap test (milliseconds) run before the layout model (about a second a page):
    does the page have at least TABULAR_ROWS lines of words split into TABULAR_SEGMENTS
    or more runs by wide gaps? Prose, even justified or in two columns, does not; ruled
    and unruled tables do. On the corpus it keeps every table page and skips 148 of the
    WHO guideline's 155 pages."""
    rows: dict[int, list[tuple[float, float]]] = {}
    for word in page.get_text("words"):
        rows.setdefault(round((word[1] + word[3]) / 6), []).append((word[0], word[2]))
    tabular = 0
    for spans in rows.values():
        spans.sort()
        gaps = (start - end for (_, end), (start, _) in zip(spans, spans[1:], strict=False))
        segments = 1 + sum(1 for gap in gaps if gap > TABULAR_GAP)
        tabular += segments >= TABULAR_SEGMENTS
        if tabular >= TABULAR_ROWS:
            return True
    return False


def detect_tables(page: pymupdf.Page) -> list[Table]:
    """The tables of `page` (needs `pymupdf.layout` imported: the layout model)."""
    found = page.find_tables(union=True, refine=True).tables
    if not found:
        return []
    words = page.get_text("words", sort=True)
    lines = [b for b in page.get_text("blocks", sort=True) if b[6] == 0]
    tables = []
    for table in found:
        grid = [[tuple(c) if c is not None else None for c in row.cells] for row in table.rows]
        if not grid or not grid[0]:
            continue
        header_rows = int(getattr(table, "header_rows", 0) or 0)
        if _over_split(grid, words) and (ruled := _ruled_grid(page, tuple(table.bbox), len(grid[0]))):
            grid, header_rows = ruled
        built = _build(len(tables), grid, words, lines, tuple(table.bbox), header_rows)
        if built is not None:
            tables.append(built)
    return tables


ALIGNED_GAP = 1.0  # a gap this many line heights wide between words parts two cells of a row


def aligned_tables(page: pymupdf.Page, table_no: int = 0) -> list[Table]:
    """A table the layout model does not see: no rules, no shading, its words alone in
    aligned columns (an OCR'd picture of a table). The longest run of at least TABULAR_ROWS
    consecutive lines that each split into the same number (2 or more) of runs of words by
    gaps wider than ALIGNED_GAP line heights, each run overlapping its column's, is read as
    a grid through the same builder as the detector's tables."""
    # a rule or a frame OCR'd as "|", "\\" or "—" is no word of a cell
    words = [w for w in page.get_text("words", sort=True) if any(ch.isalnum() for ch in w[4])]
    rows = [_segments(line) for line in _lines(words)]
    best: tuple[int, int] | None = None
    start = 0
    for end in range(1, len(rows) + 1):
        if end < len(rows) and _aligned(rows[start:end], rows[end]):
            continue
        if end - start >= TABULAR_ROWS and (best is None or end - start > best[1] - best[0]):
            best = (start, end)
        start = end
    if best is None:
        return []
    ncols = len(rows[best[0]])
    first = best[0]
    while first > 0 and best[0] - first < MAX_HEADER_ROWS and _heads(rows[first - 1], rows[first : best[1]]):
        first -= 1  # header lines above: fewer runs of words ("Pays", "Puissances raccordées")
    run, body = rows[first : best[1]], rows[best[0] : best[1]]
    spans = _column_spans(body)
    for line in run[: best[0] - first]:  # a header's words widen the column they head
        for seg in line:
            c = max(range(ncols), key=lambda k: min(seg[2], spans[k][1]) - max(seg[0], spans[k][0]))
            spans[c] = [min(spans[c][0], seg[0]), max(spans[c][1], seg[2])]
    edges = _edges(spans, float(page.rect.width))
    if any(b <= a for a, b in zip(edges, edges[1:], strict=False)):  # headers overlapping: the body's
        edges = _edges(_column_spans(body), float(page.rect.width))
    tops = [min(s[1] for s in r) for r in run]
    bottoms = [max(s[3] for s in r) for r in run]
    cuts = [tops[0]] + [(bottoms[k] + tops[k + 1]) / 2 for k in range(len(run) - 1)] + [bottoms[-1]]
    grid: list[list[tuple | None]] = [
        [(edges[c], cuts[r], edges[c + 1], cuts[r + 1]) for c in range(ncols)] for r in range(len(run))
    ]
    bbox = (min(s[0] for r in run for s in r), cuts[0], max(s[2] for r in run for s in r), cuts[-1])
    lines = [b for b in page.get_text("blocks", sort=True) if b[6] == 0]
    built = _build(table_no, grid, words, lines, bbox, 0)
    return [built] if built is not None else []


def _column_spans(body: list[list[BBox]]) -> list[list[float]]:
    """Each column's left and right over the body lines (all with the same number of runs)."""
    return [[min(r[c][0] for r in body), max(r[c][2] for r in body)] for c in range(len(body[0]))]


def _edges(spans: list[list[float]], width: float) -> list[float]:
    """Column boundaries: the page's edges and the middle of each gap between two columns."""
    return [0.0] + [(spans[c][1] + spans[c + 1][0]) / 2 for c in range(len(spans) - 1)] + [width]


def _segments(line: list[tuple]) -> list[BBox]:
    """A line's runs of words, split where the gap is wider than ALIGNED_GAP line heights."""
    height = max(w[3] - w[1] for w in line)
    out: list[list[float]] = []
    for word in sorted(line, key=lambda w: w[0]):
        x0, y0, x1, y1 = word[:4]
        if out and x0 - out[-1][2] <= ALIGNED_GAP * height:
            out[-1][2:] = [max(out[-1][2], x1), max(out[-1][3], y1)]
            out[-1][1] = min(out[-1][1], y0)
        else:
            out.append([x0, y0, x1, y1])
    return [(a, b, c, d) for a, b, c, d in out]


def _heads(line: list[BBox], run: list[list[BBox]]) -> bool:
    """Whether `line`, just above `run`, is a header line of its columns: each of its runs
    of words over a column of the run's, and no wider gap above the run than a line."""
    body = [r for r in run if len(r) == len(run[-1])]
    spans = _column_spans(body)
    height = max(s[3] - s[1] for s in line)
    gap = min(s[1] for s in run[0]) - max(s[3] for s in line)
    return gap <= 2 * height and all(
        any(s[0] <= right and s[2] >= left for left, right in spans) for s in line
    )


def _aligned(run: list[list[BBox]], row: list[BBox]) -> bool:
    """Whether `row` continues `run`: as many runs of words, each overlapping its column."""
    if len(row) < 2 or len(row) != len(run[0]):
        return False
    return all(
        seg[0] <= max(r[c][2] for r in run) and seg[2] >= min(r[c][0] for r in run)
        for c, seg in enumerate(row)
    )


SPARSE_CELLS = 0.1  # a grid column with words in at most this share of its rows is sparse
OVER_SPLIT = 0.3  # a grid with this share of sparse columns (and MIN_SPLIT_COLUMNS) is over-split
MIN_SPLIT_COLUMNS = 8


def _over_split(grid: list[list[tuple | None]], words: list[tuple]) -> bool:
    """Whether the layout grid cut the table into many more columns than it prints: on a
    wide ruled table (NICS: 25 columns, each group header centred over three) the layout
    model's columns and the rules' columns are fused into 78, most of them empty slivers
    holding a header word or a number's overhang. Such a grid has many sparse columns."""
    ncols = max(len(row) for row in grid)
    if ncols < MIN_SPLIT_COLUMNS:
        return False
    held, _ = _cell_words(grid, words)
    sparse = sum(
        1
        for c in range(ncols)
        if sum(1 for row in held if c < len(row) and row[c]) <= SPARSE_CELLS * len(grid)
    )
    return sparse >= OVER_SPLIT * ncols


def _ruled_grid(page: pymupdf.Page, bbox: BBox, ncols: int) -> tuple[list[list[tuple | None]], int] | None:
    """The grid the page's ruling lines draw over the same table, when it has fewer
    columns (its rows may stack several printed rows: `_stacked_rows_split` splits them);
    None when the rules draw no such table (an unruled one keeps the layout grid)."""
    cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
    for table in page.find_tables(strategy="lines").tables:
        x0, y0, x1, y1 = table.bbox
        if not (x0 <= cx <= x1 and y0 <= cy <= y1) or not 2 <= table.col_count < ncols:
            continue
        grid = [[tuple(c) if c is not None else None for c in row.cells] for row in table.rows]
        return _header_lines_split(grid, page.get_text("words")), int(getattr(table, "header_rows", 0) or 0)
    return None


def _header_lines_split(grid: list[list[tuple | None]], words: list[tuple]) -> list[list[tuple | None]]:
    """A ruled header row whose spanning cells hold a group label over one line of column
    labels ("Pre-Pawn" over "Handgun Long Gun *Other") split in two rows at the last line:
    the group labels keep their spanning cells, the column labels get the columns' own
    cells (those of the first row that has one cell per column)."""
    full = next((r for r, row in enumerate(grid) if row and all(c is not None for c in row)), None)
    if full is None:
        return grid
    out: list[list[tuple | None]] = []
    for r, row in enumerate(grid):
        boxes = [c for c in row if c is not None]
        if r >= full or len(boxes) == len(row) or len(boxes) < 2:  # one cell: a caption
            out.append(row)
            continue
        top, bottom = min(c[1] for c in boxes), max(c[3] for c in boxes)
        inside = [
            w[:5]
            for w in words
            if top <= (w[1] + w[3]) / 2 <= bottom and boxes[0][0] <= (w[0] + w[2]) / 2 <= boxes[-1][2]
        ]
        lines = _lines(inside)
        columns = [c for c in grid[full] if c is not None]
        under = (
            {k for w in lines[-1] for k, c in enumerate(columns) if c[0] <= (w[0] + w[2]) / 2 <= c[2]}
            if lines
            else set()
        )
        if len(lines) < 2 or len(under) < len(columns) / 2:  # the last line labels the columns
            out.append(row)
            continue
        cut = (max(w[3] for w in lines[-2]) + min(w[1] for w in lines[-1])) / 2
        out.append([(c[0], c[1], c[2], cut) if c is not None else None for c in row])
        out.append([(c[0], cut, c[2], bottom) for c in grid[full] if c is not None])
    return out


def _build(
    table_no: int,
    grid: list[list[tuple | None]],
    words: list[tuple],
    lines: list[tuple],
    bbox: BBox,
    header_rows: int,
) -> Table | None:
    grid, texts, boxes, straddled = _stacked_rows_split(grid, *_cell_words(grid, words), header_rows)
    ncols = max(len(r) for r in grid)
    title_parts: list[str] = []
    start = 0
    # leading rows that are a caption: a first row whose words cross cell borders, or
    # rows with a single filled cell in a table of three or more columns
    while start < len(texts) - 1 and (
        (start == 0 and straddled[0]) or (ncols >= 3 and _filled(texts[start]) <= 1)
    ):
        title_parts.append(" ".join(t for t in texts[start] if t))
        start += 1
    body_start = start + _header_depth(texts[start:], max(0, header_rows - start), ncols)
    if body_start >= len(texts):  # no body left: a one-row table labels nothing
        body_start = start
    columns = _column_labels(texts[start:body_start], ncols, grid[start:body_start])
    rows = []
    for r in range(body_start, len(grid)):
        cells = []
        for c in range(ncols):
            # the box of the cell's words, so a citation highlights the value, not a tall row
            cells.append(_cell_at(grid, texts, boxes, r, c, bbox))
        if any(cell.text for cell in cells):
            rows.append(cells)
    if not rows:
        return None
    parts = [p for p in [_title_above(lines, bbox), *title_parts] if p]
    # the line above may repeat in the caption row ("November - 2015" and "NICS ... November - 2015")
    title = " · ".join(p for k, p in enumerate(parts) if not any(p in q for q in parts[k + 1 :]))
    header: tuple[Cell, ...] = ()
    if body_start - start == 1:
        header = tuple(_cell_at(grid, texts, boxes, start, c, bbox) for c in range(ncols))
    return Table(table_no, title[:TITLE_CHARS], columns, body_start - start, rows, _round(bbox), header)


def _cell_at(
    grid: list[list[tuple | None]],
    texts: list[list[str]],
    boxes: list[list[BBox | None]],
    r: int,
    c: int,
    bbox: BBox,
) -> Cell:
    text = texts[r][c] if c < len(texts[r]) else ""
    box = (boxes[r][c] if c < len(boxes[r]) else None) or (grid[r][c] if c < len(grid[r]) else None)
    return Cell(text, _round(box or bbox))


def continued(previous: Table | None, table: Table) -> Table:
    """`table` read as the continuation of `previous` (the last table of the page before)
    when its one header row is a body row of the same table: as many columns, no title of
    its own, and a header cell that repeats a body value of the previous table in its
    column ("Própria" on page 2 of the bathing bulletin, whose header is on page 1). It
    takes the previous table's title and labels, and that row becomes its first body row."""
    if (
        previous is None
        or table.title
        or len(table.header) != len(table.columns)
        or len(previous.columns) != len(table.columns)
    ):
        return table
    values = [{row[c].text for row in previous.rows if row[c].text} for c in range(len(previous.columns))]
    if not any(cell.text and cell.text in values[c] for c, cell in enumerate(table.header) if c > 0):
        return table
    return Table(
        table.table_no,
        previous.title,
        list(previous.columns),
        0,
        [list(table.header), *table.rows],
        table.bbox,
    )


def _header_depth(texts: list[list[str]], found: int, ncols: int) -> int:
    """How many leading rows are header: at least one, what the refined grid found, and
    more while a row has no number (past the first column) but later rows do; a row with
    one filled cell (a section label such as "REGION: ...") ends the header."""
    depth = max(1, found)
    for r in range(1, min(depth, len(texts))):
        if ncols >= 3 and _filled(texts[r]) <= 1:
            return r
    numeric = [any(is_number(t) for t in row[1:] if t) for row in texts]
    while (
        depth < MAX_HEADER_ROWS
        and depth < len(texts) - 1
        and not numeric[depth]
        and any(numeric[depth + 1 :])
        and not (ncols >= 3 and _filled(texts[depth]) <= 1)
    ):
        depth += 1
    return min(depth, MAX_HEADER_ROWS)


def _filled(row: list[str]) -> int:
    return sum(1 for t in row if t)


Word = tuple[float, float, float, float, str]  # x0, y0, x1, y1, text


def _cell_words(
    grid: list[list[tuple | None]], words: list[tuple]
) -> tuple[list[list[list[Word]]], list[bool]]:
    """Each cell's words (those whose centre it holds), and for each row whether a word
    crosses a cell border (a caption spanning the table, not cells)."""
    tops = [min((c[1] for c in row if c), default=0.0) for row in grid]
    order = sorted(range(len(grid)), key=lambda i: tops[i])
    sorted_tops = [tops[i] for i in order]
    held: list[list[list[Word]]] = [[[] for _ in row] for row in grid]
    straddled = [False] * len(grid)
    for x0, y0, x1, y1, word, *_ in words:
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        k = bisect.bisect_right(sorted_tops, cy) - 1
        if k < 0:
            continue
        r = order[k]
        for c, box in enumerate(grid[r]):
            if box and box[0] <= cx <= box[2] and box[1] <= cy <= box[3]:
                held[r][c].append((x0, y0, x1, y1, word))
                if x0 < box[0] - 2 or x1 > box[2] + 2:
                    straddled[r] = True
                break
        else:
            _into_span_above(grid, order[:k], r, (x0, y0, x1, y1, word), held)
    return held, straddled


def _into_span_above(
    grid: list[list[tuple | None]], above: list[int], r: int, word: Word, held: list[list[list[Word]]]
) -> None:
    """A word under no cell of its row lies in a cell spanning down from a row above (the
    row's slot is None): "enc-layers" under "#", "time (secs)" under "Inference". It joins
    the nearest cell above whose column holds it, where its own row has no cell."""
    cx = (word[0] + word[2]) / 2
    for rr in reversed(above):
        for c, box in enumerate(grid[rr]):
            if box and box[0] <= cx <= box[2]:
                if c < len(grid[r]) and grid[r][c] is None:
                    held[rr][c].append(word)
                return


def _text(words: list[Word]) -> str:
    return " ".join(w[4] for w in words)[:CELL_CHARS]


def _box(words: list[Word]) -> BBox | None:
    if not words:
        return None
    return (
        min(w[0] for w in words),
        min(w[1] for w in words),
        max(w[2] for w in words),
        max(w[3] for w in words),
    )


def _lines(words: list[Word]) -> list[list[Word]]:
    """A cell's words as text lines, top to bottom (a word starts a new line when its
    centre lies below the current line's box)."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: ((w[1] + w[3]) / 2, w[0])):
        if lines and (word[1] + word[3]) / 2 <= max(w[3] for w in lines[-1]):
            lines[-1].append(word)
        else:
            lines.append([word])
    return lines


def _stacked_rows_split(
    grid: list[list[tuple | None]], held: list[list[list[Word]]], straddled: list[bool], header_rows: int
) -> tuple[list[list[tuple | None]], list[list[str]], list[list[BBox | None]], list[bool]]:
    """The grid's rows with their texts and word boxes, a row that stacks several rows
    split into them. A table without rules between its rows can come out of the detector
    as one row whose cells hold one line per real row (the OTSL paper's "OTSL / HTML"
    row: "0.965 / 0.969", "2.73 / 5.39"): when two or more cells hold the same number of
    lines, each a number, on the same heights, the row is split at those lines; a cell
    of one line spans them all (its text repeats, like a merged cell's label) and a
    wrapped text cell of another line count keeps its lines in the first. Header rows
    (`header_rows`, at least the first) are never split."""
    out_grid: list[list[tuple | None]] = []
    texts: list[list[str]] = []
    boxes: list[list[BBox | None]] = []
    out_straddled: list[bool] = []
    for r, row in enumerate(grid):
        cells_lines = [_lines(words) for words in held[r]]
        stack = _stack_depth(cells_lines) if r >= max(header_rows, 1) else 1
        if stack < 2:
            out_grid.append(row)
            texts.append([_text(words) for words in held[r]])
            boxes.append([_box(words) for words in held[r]])
            out_straddled.append(straddled[r])
            continue
        for k in range(stack):
            part_texts, part_boxes = [], []
            for lines in cells_lines:
                if len(lines) == stack:
                    part = lines[k]
                elif len(lines) == 1:
                    part = lines[0]
                else:
                    part = [w for line in lines for w in line] if k == 0 else []
                part_texts.append(_text(part))
                part_boxes.append(_box(part))
            out_grid.append(row)
            texts.append(part_texts)
            boxes.append(part_boxes)
            out_straddled.append(straddled[r] and k == 0)
    return out_grid, texts, boxes, out_straddled


def _stack_depth(cells_lines: list[list[list[Word]]]) -> int:
    """How many real rows a grid row stacks: the line count shared by two or more cells
    whose every line is a number and whose lines sit on the same heights; 1 otherwise."""
    counts = Counter(len(lines) for lines in cells_lines if len(lines) >= 2)
    for depth, _ in counts.most_common():
        numeric = [
            lines
            for lines in cells_lines
            if len(lines) == depth and all(is_number(" ".join(w[4] for w in line)) for line in lines)
        ]
        if len(numeric) < 2:
            continue
        centres = [[(_box(line) or (0, 0, 0, 0)) for line in lines] for lines in numeric]
        aligned = all(
            abs((a[1] + a[3]) / 2 - (b[1] + b[3]) / 2) <= max(2.0, 0.5 * (a[3] - a[1]))
            for other in centres[1:]
            for a, b in zip(centres[0], other, strict=True)
        )
        if aligned:
            return depth
    return 1


def _column_labels(header: list[list[str]], ncols: int, cells: list[list[tuple | None]]) -> list[str]:
    """One label per column: the header rows' texts joined " / "; in a header row above
    the last one, a label spans the empty cells to its right (not from the first column,
    which labels the rows). A row whose grid marks its merged slots (None) spans a label
    over those only: "Totals" after a group is not under the group's label."""
    filled: list[list[str]] = []
    for depth, row in enumerate(header):
        row = row + [""] * (ncols - len(row))
        slots = cells[depth] if depth < len(cells) else []
        marked = any(slot is None for slot in slots)
        if depth < len(header) - 1:
            for c in range(2, ncols):
                spanned = c < len(slots) and slots[c] is None if marked else True
                if not row[c] and row[c - 1] and spanned:
                    row[c] = row[c - 1]
        filled.append(row)
    labels = []
    for c in range(ncols):
        parts: list[str] = []
        for row in filled:
            if row[c] and (not parts or parts[-1] != row[c]):
                parts.append(row[c])
        labels.append(" / ".join(parts)[:CELL_CHARS])
    return labels


def _title_above(lines: list[tuple], bbox: BBox) -> str:
    """The short text block ending just above the table and overlapping it horizontally."""
    best = None
    for x0, _y0, x1, y1, text, *_ in lines:
        text = " ".join(text.split())
        if not text or len(text) > TITLE_CHARS or y1 > bbox[1] + 1 or bbox[1] - y1 > TITLE_GAP:
            continue
        if x1 < bbox[0] or x0 > bbox[2]:
            continue
        if best is None or y1 > best[0]:
            best = (y1, text)
    return best[1] if best else ""


def is_number(text: str) -> bool:
    """Whether a cell reads as a number (any thousands/decimal separator, %, currency)."""
    return bool(_NUMBER.match(text.strip()))


def covered(block: BBox, table: BBox) -> bool:
    """Whether a text block lies (mostly) inside a table: its text is the table's cells."""
    ix = max(0.0, min(block[2], table[2]) - max(block[0], table[0]))
    iy = max(0.0, min(block[3], table[3]) - max(block[1], table[1]))
    area = max((block[2] - block[0]) * (block[3] - block[1]), 1e-6)
    return ix * iy / area >= 0.5


def _round(box: tuple) -> BBox:
    return (round(box[0], 2), round(box[1], 2), round(box[2], 2), round(box[3], 2))
