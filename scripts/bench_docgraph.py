"""Offline document-graph cost per page: extraction (docgraph/extract.py) and extraction +
resolution + storage (DocGraphStore.add_document, communities included), over the corpus
PDFs' text layer, one document at a time into a fresh store. Prints a table.

    .venv/bin/python scripts/bench_docgraph.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docgraph.extract import extract  # noqa: E402
from docgraph.store import ChunkText, DocGraphStore, detect_communities  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("CARTA_CORPUS_DIR", REPO.parent / "shared" / "corpus"))
CHUNK_CHARS = 900  # as CARTA_CHUNK_CHARS: the store sees chunks of about this size


def chunks_of(doc_id: str, pages: list[str]) -> list[ChunkText]:
    out = []
    for page_no, text in enumerate(pages, start=1):
        for chunk_no, start in enumerate(range(0, max(len(text), 1), CHUNK_CHARS)):
            out.append(ChunkText(doc_id, page_no, chunk_no, text[start : start + CHUNK_CHARS]))
    return out


def main() -> None:
    files = sorted((CORPUS / "pdf").glob("*.pdf"))
    if not files:
        sys.exit(f"no corpus PDFs under {CORPUS / 'pdf'}")
    t = time.perf_counter()
    detect_communities([(1, 2, 1.0)])  # imports leidenalg/igraph: once per process, not per page
    print(f"community library import (once per process): {(time.perf_counter() - t) * 1e3:.0f} ms")
    print(f"{'document':48} {'pages':>5} {'mentions':>8} {'extract ms/page':>15} {'store ms/page':>13}")
    total_pages, total_extract, total_store = 0, 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        store = DocGraphStore(Path(tmp) / "docgraph.sqlite3")
        for path in files:
            with pymupdf.open(path) as doc:
                pages = [page.get_text() for page in doc]
            t0 = time.perf_counter()
            mentions = sum(len(extract(text)) for text in pages)
            t1 = time.perf_counter()
            store.add_document("bench", chunks_of(path.stem, pages))
            t2 = time.perf_counter()
            n = max(len(pages), 1)
            total_pages += len(pages)
            total_extract += t1 - t0
            total_store += t2 - t1
            extract_ms, store_ms = (t1 - t0) * 1e3 / n, (t2 - t1) * 1e3 / n
            print(f"{path.name[:48]:48} {len(pages):5d} {mentions:8d} {extract_ms:15.2f} {store_ms:13.2f}")
        store.close()
    print(
        f"{'all':48} {total_pages:5d} {'':8} {total_extract * 1e3 / total_pages:15.2f} "
        f"{total_store * 1e3 / total_pages:13.2f}"
    )


if __name__ == "__main__":
    main()
