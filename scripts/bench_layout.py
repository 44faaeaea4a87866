"""Layout parsing cost: PDF pages/s with table detection on (CARTA_LAYOUT=tables) and off
(text), in the same run, over the corpus PDFs; and a 10,000-row table ingested end to end
(time, peak memory of this process and of the table detector's process).

    .venv/bin/python scripts/bench_layout.py                      # corpus, both modes
    .venv/bin/python scripts/bench_layout.py --max-pages 20       # at most 20 pages a PDF
    .venv/bin/python scripts/bench_layout.py --big-table 10000    # only the long table
    .venv/bin/python scripts/bench_layout.py --figures            # pictures OCRed (CARTA_FIGURE_TEXT) on/off

What is timed is what the layout setting changes: loading a page (render, text, tables)
and chunking it. Embedding is the same work in both modes and is left out, except in
--big-table, which runs a whole ingest (OCR off in both).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pymupdf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ingest.chunking import SectionContext, chunk_page  # noqa: E402
from ingest.formats.pdf import PdfLoader  # noqa: E402
from ingest.loaders import LoadOptions  # noqa: E402
from ingest.table_worker import shared_worker  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "pdf"


def parse(
    path: Path, layout: str, max_pages: int | None, figures: bool | None = None
) -> tuple[int, int, float]:
    """(pages, tables, seconds) to load and chunk the PDF's pages under `layout`; OCR off,
    unless `figures` is given: then OCR (and chart reading) on, pictures read by OCR or not."""
    data = path.read_bytes()
    loader = PdfLoader()
    if figures is None:
        options = LoadOptions(ocr_enabled=False, layout=layout)  # type: ignore[arg-type]
    else:
        options = LoadOptions(layout=layout, figure_text=figures)  # type: ignore[arg-type]
    opened = loader.open(data, loader.sniff(data), options)  # type: ignore[arg-type]
    context = SectionContext(path.stem)
    pages = tables = 0
    start = time.perf_counter()
    try:
        for page in opened.pages():
            chunk_page(page.page_no, page.blocks, 900, page.tables, context)
            pages, tables = pages + 1, tables + len(page.tables)
            if max_pages and pages >= max_pages:
                break
    finally:
        opened.close()
    return pages, tables, time.perf_counter() - start


def corpus(max_pages: int | None, figures: bool = False) -> None:
    """Pages/s of each corpus PDF in two settings, the second's cost as a ratio: table
    detection off and on (OCR off), or with `figures` pictures read by OCR off and on
    (tables, OCR and charts on in both; table detection of each page is remembered by the
    detector, so the second run's extra time is the pictures')."""
    files = sorted(CORPUS.glob("*.pdf"))
    if not files:
        sys.exit(f"no PDFs in {CORPUS}")
    shared_worker().tables("warm-up", _one_page_pdf(), 0, 120)  # the detector's start is not a page's cost
    base, other = ("no pics p/s", "pics p/s") if figures else ("text p/s", "tables p/s")
    print(f"{'pdf':46} {'pages':>5} {'tables':>6} {base:>11} {other:>10} {'cost':>6}")
    totals = {"text": 0.0, "tables": 0.0}
    count = 0
    for path in files:
        if figures:
            parse(path, "tables", max_pages, False)  # the page tables detected once, for both runs
            n, _, text_s = parse(path, "tables", max_pages, False)
            _, found, tables_s = parse(path, "tables", max_pages, True)
        else:
            n, _, text_s = parse(path, "text", max_pages)
            _, found, tables_s = parse(path, "tables", max_pages)
        totals["text"] += text_s
        totals["tables"] += tables_s
        count += n
        print(
            f"{path.name[:46]:46} {n:5d} {found:6d} {n / text_s:11.2f} {n / tables_s:10.2f} "
            f"{tables_s / text_s:5.1f}x"
        )
    text_rate, tables_rate = count / totals["text"], count / totals["tables"]
    print(
        f"{'TOTAL':46} {count:5d} {'':6} {text_rate:11.2f} {tables_rate:10.2f} "
        f"{totals['tables'] / totals['text']:5.1f}x"
    )


def long_table_pdf(rows: int, per_page: int = 2000) -> bytes:
    """A ruled table of `rows` rows (2 pt each, three columns), `per_page` rows a page."""
    doc = pymupdf.open()
    step, top = 2.0, 20.0
    font = pymupdf.Font("helv")
    for first in range(0, rows, per_page):
        count = min(per_page, rows - first)
        page = doc.new_page(width=300, height=top * 2 + count * step)
        shape = page.new_shape()
        for r in range(count + 1):
            shape.draw_line((20, top + r * step), (280, top + r * step))
        for x in (20, 100, 190, 280):
            shape.draw_line((x, top), (x, top + count * step))
        shape.finish(width=0.1)
        shape.commit()
        writer = pymupdf.TextWriter(page.rect)
        for i in range(count):
            r, y = first + i, top + (i + 1) * step - 0.4
            for x, text in ((22, f"R{r:04d}"), (102, f"{r * 7}"), (192, f"{r % 97},{r % 10}%")):
                writer.append((x, y), text, font=font, fontsize=1.5)
        writer.write_text(page)
    return doc.tobytes()


def _one_page_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "warm-up")
    return doc.tobytes()


class PeakRss:
    """Peak resident memory of this process and of its children, sampled every 50 ms."""

    def __init__(self) -> None:
        self.own = self.children = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.wait(0.05):
            self.own = max(self.own, me.memory_info().rss)
            kids = 0
            for child in me.children(recursive=True):
                with contextlib.suppress(psutil.Error):  # it may have just exited
                    kids += child.memory_info().rss
            self.children = max(self.children, kids)


def big_table(rows: int, timeout_s: float) -> None:
    from ingest.upload import IngestRequest
    from service.carta import Carta
    from service.settings import Settings

    data = long_table_pdf(rows)
    with tempfile.TemporaryDirectory() as tmp:
        carta = Carta(
            Settings(data_dir=Path(tmp), _env_file=None, ocr_enabled=False, table_timeout_s=timeout_s)
        )
        try:
            with PeakRss() as peak:
                start = time.perf_counter()
                result = carta.ingest(IngestRequest(data, "long_table.pdf", "default"))
                seconds = time.perf_counter() - start
            chunks = carta.store.count(carta.collections.chunks.name, None)
        finally:
            carta.close()
    print(
        f"{rows:,}-row table, {result.document.pages} pages, {len(data) / 1e6:.1f} MB PDF, "
        f"budget {timeout_s:g} s/page"
    )
    print(
        f"ingest {seconds:.1f} s, {chunks} chunks, peak RSS {peak.own / 2**20:.0f} MiB "
        f"(+ detector {peak.children / 2**20:.0f} MiB)"
    )
    for warning in result.warnings:
        print(f"warning: {warning}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--max-pages", type=int, default=None, help="pages per PDF at most")
    parser.add_argument("--big-table", type=int, default=0, help="ingest a table of this many rows instead")
    parser.add_argument("--timeout", type=float, default=30.0, help="CARTA_TABLE_TIMEOUT_S for --big-table")
    parser.add_argument(
        "--figures", action="store_true", help="pictures on text pages read by OCR off vs on (OCR on in both)"
    )
    args = parser.parse_args(argv)
    if args.big_table:
        big_table(args.big_table, args.timeout)
    else:
        corpus(args.max_pages, figures=args.figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
