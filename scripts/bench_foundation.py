"""Foundation benchmark: ingestion throughput and query latency of the lite profile.

Ingests a folder of PDFs (default: ../shared/corpus/pdf) and images (../shared/corpus/charts)
into a fresh data dir, then runs every query several times per channel. Prints two
tables and writes JSON. The baseline for latency is a dense-only chunk search measured
in the same run (ratios = channel / baseline).

    .venv/bin/python scripts/bench_foundation.py [--pdfs DIR] [--images DIR] [--repeat 5] [--out bench.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from benchlib import disk_usage, machine_facts, percentile  # noqa: E402

from index.collections import CHUNK_VECTOR, PAGE_VECTOR  # noqa: E402
from index.types import Branch, SparseVec  # noqa: E402
from ingest.upload import IngestRequest  # noqa: E402
from service.carta import Carta  # noqa: E402
from service.query.filters import engine_filter  # noqa: E402
from service.query.types import SearchQuery  # noqa: E402
from service.settings import Settings  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"
QUERIES = [
    "How many people were living with chronic hepatitis C infection in 2019?",
    "Quelle puissance photovoltaïque l'Union européenne a-t-elle ajoutée en 2018 ?",
    "auto de infração 679199 Manacapuru multa",
    "Kentucky permit background checks November 2015",
    "área colhida de milho no Médio-Norte de Mato Grosso",
    "praias impróprias para banho em Salvador",
    "decadal population growth rate of Nagaland 2001-11",
    "corrosion rate with egg shell inhibitor",
    "OTSL vs HTML inference time",
    "Public health outlay of Maharashtra 2012-13",
    "rainfall departure Meghalaya 10 July 2016",
    "row and column access control DB2 for i",
    "monthly revenue of product C",
    "sofosbuvir daclatasvir adolescents dosage",
    "Qual foi a maior multa aplicada pelo IBAMA?",
    "What is the capital of Mongolia?",
]


def served_startup_s() -> float:
    """Seconds from `carta serve` process start to its first 200 on /healthz (empty data dir)."""
    import socket
    import subprocess

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="carta-start-") as tmp:
        env = {**os.environ, "CARTA_DATA_DIR": tmp}
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while time.perf_counter() - t0 < 120:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                        return time.perf_counter() - t0
                except httpx.HTTPError:
                    time.sleep(0.1)
            raise RuntimeError("carta serve did not answer /healthz within 120 s")
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def bare_pymupdf_s(pdfs: list[Path], dpi: int) -> tuple[int, float]:
    """(pages, seconds) of the floor ingestion is measured against: a bare PyMuPDF pass over
    the same PDFs, as Carta reads them (render at render_dpi, WebP at Carta's quality, the
    text blocks), storing nothing."""
    import io

    import pymupdf
    from PIL import Image

    pages, t0 = 0, time.perf_counter()
    for path in pdfs:
        with pymupdf.open(path) as doc:
            for page in doc:
                pix = page.get_pixmap(matrix=pymupdf.Matrix(dpi / 72, dpi / 72), alpha=False)
                image = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
                image.save(io.BytesIO(), "WEBP", quality=85)
                page.get_text("dict", sort=True)
                pages += 1
    return pages, time.perf_counter() - t0


def ingest_all(carta: Carta, files: list[Path]) -> list[dict]:
    rows = []
    for path in files:
        t0 = time.perf_counter()
        result = carta.ingest(IngestRequest(path.read_bytes(), path.name, "bench"))
        seconds = time.perf_counter() - t0
        sources = [p.text_source for p in carta.registry.pages("bench", result.document.id)]
        rows.append(
            {
                "file": path.name,
                "kind": result.document.kind,
                "pages": len(sources),
                "ocr_pages": sources.count("ocr"),
                "seconds": round(seconds, 3),
                "stages": result.seconds,  # ingest/timing.py
            }
        )
    return rows


def throughput(rows: list[dict], predicate: Callable[[dict], bool]) -> tuple[int, float, float]:
    chosen = [r for r in rows if predicate(r)]
    pages = sum(r["pages"] for r in chosen)
    seconds = sum(r["seconds"] for r in chosen)
    return pages, seconds, (pages / seconds if seconds else float("nan"))


def time_channels(carta: Carta, repeat: int) -> dict[str, list[float]]:
    """Seconds per query for each channel alone and end to end (filters as in production)."""
    store, cols = carta.store, carta.collections
    names = ["encode", "dense", "bm25_pt", "chunks_fused", "pages_maxsim", "search", "ask"]
    timings: dict[str, list[float]] = {k: [] for k in names}

    @contextmanager
    def clock(name: str) -> Iterator[None]:
        t = time.perf_counter()
        yield
        timings[name].append(time.perf_counter() - t)

    for _ in range(repeat):
        for text in QUERIES:
            q = SearchQuery(text, "bench", top_k=5)
            flt = engine_filter(q)
            with clock("encode"):
                emb = carta.text.embed_with_tokens([text])[0]
                sparse = carta.sparse.embed_query(text)
            branches = [Branch(CHUNK_VECTOR, emb.dense.tolist())] + [
                Branch(name, SparseVec(*terms)) for name, terms in sparse.items() if terms[0]
            ]
            with clock("dense"):
                store.search(cols.chunks.name, CHUNK_VECTOR, emb.dense.tolist(), flt, 20)
            with clock("bm25_pt"):
                store.search(cols.chunks.name, "bm25_pt", SparseVec(*sparse["bm25_pt"]), flt, 20)
            with clock("chunks_fused"):
                store.fused_search(cols.chunks.name, branches, flt, 20, 50)
            with clock("pages_maxsim"):
                store.search(cols.pages.name, PAGE_VECTOR, emb.tokens.tolist(), flt, 10)
            with clock("search"):
                carta.search(q)
            with clock("ask"):
                carta.ask(q)
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdfs", type=Path, default=CORPUS / "pdf")
    parser.add_argument("--images", type=Path, default=CORPUS / "charts")
    parser.add_argument("--repeat", type=int, default=5, help="Runs of the query set per channel.")
    parser.add_argument("--out", type=Path, default=REPO / "bench-foundation.json")
    args = parser.parse_args(argv)

    files = sorted(args.pdfs.glob("*.pdf")) + sorted(args.images.glob("*.png"))
    if not files:
        parser.error(f"no PDFs in {args.pdfs} and no PNGs in {args.images}")
    facts = machine_facts()
    print("machine:", ", ".join(f"{k}={v}" for k, v in facts.items()))
    served_s = served_startup_s()
    with tempfile.TemporaryDirectory(prefix="carta-bench-") as tmp:
        t0 = time.perf_counter()
        carta = Carta(Settings(data_dir=Path(tmp), _env_file=None))
        startup = time.perf_counter() - t0
        pdfs = [f for f in files if f.suffix.lower() == ".pdf"]
        bare_pages, bare_s = bare_pymupdf_s(pdfs, carta.settings.render_dpi)
        try:
            rows = ingest_all(carta, files)
            t1 = time.perf_counter()
            carta.settle()  # the background pass (sentence vectors) the documents left queued
            settle_s = time.perf_counter() - t1
            carta.search(SearchQuery("warm up", "bench"))
            timings = time_channels(carta, args.repeat)
            rss_mb = psutil.Process().memory_info().rss / 1e6
        finally:
            carta.close()
        disk_parts = {part.name: disk_usage(part) for part in Path(tmp).iterdir()}
        disk = sum(disk_parts.values())

    total_pages = sum(r["pages"] for r in rows)
    groups = {
        "text PDFs (no OCR page)": lambda r: r["kind"] == "pdf" and r["ocr_pages"] == 0,
        "PDFs with OCR pages": lambda r: r["kind"] == "pdf" and r["ocr_pages"] > 0,
        "images (all OCR)": lambda r: r["kind"] == "image",
        "all": lambda r: True,
    }
    print(
        f"\nstart-up: `carta serve` to first /healthz {served_s:.2f} s, in-process models + store "
        f"{startup:.2f} s; RSS after the run {rss_mb:.0f} MB; {len(rows)} files, {total_pages} pages; "
        f"data dir {disk / 1e6:.1f} MB ({disk / max(total_pages, 1) / 1e3:.0f} kB/page: "
        + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(disk_parts.items()))
        + ")\n"
    )
    print(f"{'ingestion':<26}{'pages':>7}{'seconds':>9}{'pages/s':>9}")
    ingestion = {}
    for name, pred in groups.items():
        pages, seconds, rate = throughput(rows, pred)
        ingestion[name] = {"pages": pages, "seconds": round(seconds, 2), "pages_per_s": round(rate, 2)}
        print(f"{name:<26}{pages:>7}{seconds:>9.1f}{rate:>9.2f}")
    _, _, pdf_rate = throughput(rows, lambda r: r["kind"] == "pdf")
    bare_rate = bare_pages / bare_s if bare_s else float("nan")
    ingestion["bare_pymupdf"] = {
        "pages": bare_pages,
        "seconds": round(bare_s, 2),
        "pages_per_s": round(bare_rate, 2),
    }
    ingestion["pdf_rate_vs_bare"] = round(pdf_rate / bare_rate, 3)
    # the wait for the background pass after the last file, all counted against the PDFs
    pdf_pages, pdf_s, _ = throughput(rows, lambda r: r["kind"] == "pdf")
    settled_rate = pdf_pages / (pdf_s + settle_s) if pdf_s + settle_s else float("nan")
    ingestion["background_wait_s"] = round(settle_s, 2)
    ingestion["pdf_rate_vs_bare_settled"] = round(settled_rate / bare_rate, 3)
    print(
        f"{'bare PyMuPDF pass (PDFs)':<26}{bare_pages:>7}{bare_s:>9.1f}{bare_rate:>9.2f}"
        f"   Carta's PDF rate = {pdf_rate / bare_rate:.2f}x the bare pass (target >= 0.5x)"
    )
    print(
        f"background pass (sentence vectors): {settle_s:.1f} s more after the last file was ready; "
        f"counting that wait, Carta's PDF rate = {settled_rate / bare_rate:.2f}x the bare pass"
    )
    stages: dict[str, float] = {}
    for row in rows:
        for stage, seconds in row["stages"].items():
            stages[stage] = stages.get(stage, 0.0) + seconds
    total = stages.pop("total", 0.0) or 1.0
    ingestion["stages_s"] = {k: round(v, 2) for k, v in stages.items()}
    print(f"\n{'ingestion stage':<16}{'seconds':>9}{'share':>8}")
    for stage, seconds in sorted(stages.items(), key=lambda kv: -kv[1]):
        print(f"{stage:<16}{seconds:>9.1f}{seconds / total:>8.0%}")
    base = statistics.median(timings["dense"])
    print(
        f"\n{'query stage':<16}{'p50 ms':>9}{'p95 ms':>9}{'x dense p50':>13}"
        f"   (n={len(timings['dense'])} each)"
    )
    latency = {}
    for name, values in timings.items():
        p50, p95 = percentile(values, 50) * 1e3, percentile(values, 95) * 1e3
        latency[name] = {
            "p50_ms": round(p50, 2),
            "p95_ms": round(p95, 2),
            "ratio_to_dense": round(p50 / base / 1e3, 2),
        }
        print(f"{name:<16}{p50:>9.2f}{p95:>9.2f}{p50 / (base * 1e3):>13.1f}")
    args.out.write_text(
        json.dumps(
            {
                "machine": facts,
                "served_startup_s": round(served_s, 2),
                "startup_s": round(startup, 2),
                "rss_mb": round(rss_mb, 1),
                "disk_bytes": disk,
                "disk_parts": disk_parts,
                "files": rows,
                "ingestion": ingestion,
                "latency": latency,
            },
            indent=2,
        )
    )
    print(f"\nwritten {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
