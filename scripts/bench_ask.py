"""Extractive /v1/ask latency per stage, with and without the sentence vectors stored at
ingestion (service/answer/sentence_vectors.py), in the same run on the same index.

Indexes a few corpus PDFs into a data dir (kept with --data-dir, so a second run skips
ingestion), then asks the corpus and tables questions about them. Each question runs in
both modes back to back ("embed": the gate embeds its candidate sentences, as before;
"stored": it reads them), so load on the machine falls on both alike. Stages: search,
grade (the relevance gate), table (the table answerer), status, answer (the extractive
answerer in full: grade + table + composing + status) and ask (Carta.ask: search + answer).
Prints a table of p50/p95 ms per stage and mode, and whether both modes gave the same
answer text; --out writes JSON.

    .venv/bin/python scripts/bench_ask.py [--data-dir DIR] [--limit 30] [--out bench_ask.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from benchlib import machine_facts, percentile  # noqa: E402

from index.types import Filter  # noqa: E402
from ingest.upload import IngestRequest  # noqa: E402
from service.answer.sentence_vectors import SentenceVectors  # noqa: E402
from service.answer.status import answer_status  # noqa: E402
from service.carta import Carta  # noqa: E402
from service.evaluation.questions import Question, load_questions  # noqa: E402
from service.settings import Settings  # noqa: E402

CORPUS = Path(os.environ.get("CARTA_CORPUS_DIR", REPO.parent / "shared" / "corpus"))
PDFS = [
    "br_imea_milho_safra_16-17.pdf",
    "us_nics_background_checks_2015-11.pdf",
    "in_decadal_population_growth.pdf",
    "in_imd_rainfall_distribution_2016-07-10.pdf",
    "fr_pv_seranon_etude_impact_2022_p1-10.pdf",
    "in_public_health_outlay_2012-13.pdf",
    "br_ibama_autuacoes_amazonas_2010_p2.pdf",
    "dib_2019_corrosion_inhibitor_p454.pdf",
    "br_balneabilidade_salvador_26-2010.pdf",
    "acme_annual_report_fy2023.pdf",
    "arxiv_2305.03393v1_p9_otsl_table.pdf",
]  # not the 155-page WHO guidelines: minutes to index on a shared 2-core machine
SETS = ["corpus.yaml", "tables.yaml"]
MODES = ("embed", "stored")
STAGES = ("search", "grade", "table", "status", "answer", "ask")
TENANT = "default"


def index(carta: Carta, pdfs: list[Path]) -> dict[str, float]:
    """Ingest the PDFs not yet indexed; seconds in all and in the sentence-vector hook."""
    store = carta.sentence_vectors
    assert store is not None
    spent = {"ingest_s": 0.0, "sentence_vectors_s": 0.0, "sentences_embedded": 0.0}
    add = store.add_document

    def timed_add(*args: Any, **kwargs: Any) -> int:
        t0 = time.perf_counter()
        n = add(*args, **kwargs)
        spent["sentence_vectors_s"] += time.perf_counter() - t0
        spent["sentences_embedded"] += n
        return n

    store.add_document = timed_add  # type: ignore[method-assign]
    indexed = {d.filename for d in carta.registry.list(TENANT, "ready")}
    try:
        for pdf in pdfs:
            if pdf.name in indexed:
                continue
            t0 = time.perf_counter()
            carta.ingest(IngestRequest(pdf.read_bytes(), pdf.name, tenant=TENANT))
            spent["ingest_s"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        spent["filled_documents"] = carta.fill_sentence_vectors()  # a data dir from before the store
        spent["fill_s"] = time.perf_counter() - t0
    finally:
        store.add_document = add  # type: ignore[method-assign]
    return spent


def ingestion_cost(carta: Carta, tmp: Path) -> dict[str, float]:
    """What storing the sentence vectors adds to ingestion: the indexed chunks' sentences
    embedded into a fresh store, beside the chunks' own encoding (as the ingestor does it)."""
    hits = carta.store.scroll(carta.collections.chunks.name, Filter({"tenant": TENANT}))
    chunks = [(h.payload.get("text", ""), h.payload.get("table") is not None) for h in hits]
    t0 = time.perf_counter()
    carta.text.embed_with_tokens([text for text, _ in chunks])
    chunk_s = time.perf_counter() - t0
    fresh = SentenceVectors(tmp / "cost" / "sentence_vectors.sqlite3", carta.text)
    t0 = time.perf_counter()
    embedded = fresh.add_document(TENANT, "all", chunks)  # (text, is a table) each, as the ingestor
    sentence_s = time.perf_counter() - t0
    fresh.close()
    return {
        "chunks": len(chunks),
        "chunk_encoding_s": chunk_s,
        "sentences": embedded,
        "sentence_vectors_s": sentence_s,
        "ratio": sentence_s / chunk_s if chunk_s else float("nan"),
    }


def questions_about(names: set[str], limit: int) -> list[Question]:
    """Questions of the corpus and tables sets whose evidence is in the indexed files."""
    out: list[Question] = []
    for name in SETS:
        for q in load_questions(REPO / "eval" / "questions" / name):
            if q.evidence and all(e.doc in names for e in q.evidence) and q.geo is None:
                out.append(q)
    return out[:limit]


def ask_once(carta: Carta, text: str) -> tuple[dict[str, float], str]:
    """Milliseconds per stage for one question, and the answer text."""
    ms: dict[str, float] = {}
    query = carta.query(text, TENANT)
    t0 = time.perf_counter()
    result = carta.search(query)
    ms["search"] = (time.perf_counter() - t0) * 1000
    gate, answerer = carta.gate, carta.answerer
    t0 = time.perf_counter()
    grade = gate.grade(text, result)
    ms["grade"] = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    answerer.tables.answer(text, grade.language, result.pages[: gate.evidence_pages])
    ms["table"] = (time.perf_counter() - t0) * 1000
    chosen = sorted(grade.candidates, key=lambda c: -c.score)[: answerer.max_sentences]
    t0 = time.perf_counter()
    answer_status(text, chosen)
    ms["status"] = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    answerer.answer(text, result)
    ms["answer"] = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    answer = carta.ask(query)
    ms["ask"] = (time.perf_counter() - t0) * 1000
    return ms, answer.answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, help="index here and keep it (default: a temp dir)")
    parser.add_argument("--corpus", type=Path, default=CORPUS / "pdf")
    parser.add_argument("--limit", type=int, default=30, help="questions asked")
    parser.add_argument("--out", type=Path, help="write the results as JSON")
    args = parser.parse_args(argv)
    pdfs = [args.corpus / name for name in PDFS if (args.corpus / name).exists()]
    if not pdfs:
        print(f"no corpus PDFs under {args.corpus}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="carta-bench-ask-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        carta = Carta(Settings(data_dir=data_dir, _env_file=None, sentence_vectors=True))
        try:
            return run(carta, pdfs, args, Path(tmp))
        finally:
            carta.close()


def run(carta: Carta, pdfs: list[Path], args: argparse.Namespace, tmp: Path) -> int:
    spent = index(carta, pdfs)
    cost = ingestion_cost(carta, tmp)
    store = carta.sentence_vectors
    assert store is not None
    questions = questions_about({p.name for p in pdfs}, args.limit)
    ask_once(carta, questions[0].question)  # warm-up: weights, gazetteer, caches
    ms: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in MODES}
    differ: list[str] = []
    store.hits = store.misses = 0
    for q in questions:
        texts = {}
        for mode in MODES:
            carta.gate.sentence_vectors = store if mode == "stored" else None
            stage_ms, texts[mode] = ask_once(carta, q.question)
            for stage, value in stage_ms.items():
                ms[mode][stage].append(value)
        if texts["embed"] != texts["stored"]:
            differ.append(q.id)
    carta.gate.sentence_vectors = store
    summary = {
        mode: {
            stage: {"p50": percentile(ms[mode][stage], 50), "p95": percentile(ms[mode][stage], 95)}
            for stage in STAGES
        }
        for mode in MODES
    }
    print(f"{len(questions)} questions over {len(pdfs)} PDFs; {store.count()} stored sentence vectors")
    print(f"index: {json.dumps({k: round(v, 2) for k, v in spent.items()})}")
    print(f"ingestion cost of the sentence vectors: {json.dumps({k: round(v, 2) for k, v in cost.items()})}")
    print(
        f"{'stage':<8} {'embed p50':>10} {'embed p95':>10} {'stored p50':>11} {'stored p95':>11} {'p50 x':>6}"
    )
    for stage in STAGES:
        e, s = summary["embed"][stage], summary["stored"][stage]
        ratio = e["p50"] / s["p50"] if s["p50"] else float("nan")
        cells = f"{e['p50']:>10.1f} {e['p95']:>10.1f} {s['p50']:>11.1f} {s['p95']:>11.1f}"
        print(f"{stage:<8} {cells} {ratio:>6.1f}")
    hit_rate = store.hits / max(store.hits + store.misses, 1)
    print(
        f"stored mode: {store.hits} sentence vectors read, {store.misses} embedded (hit rate {hit_rate:.3f})"
    )
    print(f"answers differing between modes: {len(differ)} {differ}")
    if args.out:
        payload = {
            "machine": machine_facts(),
            "questions": [q.id for q in questions],
            "pdfs": [p.name for p in pdfs],
            "index": spent,
            "ingestion_cost": cost,
            "stored_vectors": store.count(),
            "hit_rate": hit_rate,
            "latency_ms": summary,
            "raw_ms": ms,
            "answers_differ": differ,
        }
        args.out.write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
