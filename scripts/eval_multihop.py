"""Multi-hop retrieval: the share of questions whose EVERY evidence unit (a document and its
acceptable pages) has a page in the top k, by the planned path (service/query/planner.py)
against the single-shot search, in the same run, over the same index (lite profile, offline
document graph). Prints a table; --out writes the per-question JSON.

    .venv/bin/python scripts/eval_multihop.py                       # index into a temp dir
    .venv/bin/python scripts/eval_multihop.py --data-dir /tmp/mh    # keep (and reuse) the index
    .venv/bin/python scripts/eval_multihop.py --out eval/multihop-results.json

The documents a question names are looked up in --samples, then in the corpus's pdf/ folder;
those not found (or not yet indexed) skip their questions, and the table says how many.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.carta import Carta  # noqa: E402
from service.evaluation.metrics import fact_accuracy  # noqa: E402
from service.evaluation.questions import NumberFact, Question, load_questions  # noqa: E402
from service.query.planner import PlannerLimits, QueryPlanner  # noqa: E402
from service.query.types import SearchResult  # noqa: E402
from service.settings import Settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("CARTA_CORPUS_DIR", REPO.parent / "shared" / "corpus"))
KS = (5, 10)


def find_file(name: str, folders: list[Path]) -> Path | None:
    return next((f / name for f in folders if (f / name).is_file()), None)


def ingest_missing(carta: Carta, questions: list[Question], folders: list[Path]) -> dict[str, str]:
    """Index the documents the questions need that the data dir lacks; file name -> doc id."""
    from ingest.upload import IngestRequest

    tenant = carta.settings.default_tenant
    have = {d.filename: d.id for d in carta.registry.list(tenant) if d.status == "ready"}
    for name in sorted({e.doc for q in questions for e in q.evidence} - set(have)):
        path = find_file(name, folders)
        if path is None:
            print(f"not found: {name}", file=sys.stderr)
            continue
        t = time.perf_counter()
        result = carta.ingest(IngestRequest(path.read_bytes(), path.name, tenant, source_path=path))
        print(f"indexed {name} in {time.perf_counter() - t:.0f}s", file=sys.stderr)
        have[name] = result.document.id
    return have


def units_found(q: Question, result: SearchResult, ids: dict[str, str], k: int) -> list[bool]:
    """Per evidence unit: whether one of its pages is in the top k."""
    top = {(p.doc_id, p.page_no) for p in result.pages[:k]}
    return [any((ids[e.doc], page) in top for page in e.pages) for e in q.evidence]


def answer_facts(carta: Carta, planner: QueryPlanner | None, q: Question) -> float | None:
    """The share of the question's facts the answer states (the configured answerer,
    extractive offline), top 5 evidence pages, by one path."""
    carta.planner = planner
    try:
        answer = carta.ask(carta.query(q.question, carta.settings.default_tenant, top_k=5))
    finally:
        carta.planner = None
    facts = [(f.number, f.tolerance) if isinstance(f, NumberFact) else f for f in q.facts]
    return fact_accuracy(answer.answer, facts)


def evaluate(
    carta: Carta, planner: QueryPlanner, questions: list[Question], ids: dict[str, str], answers: bool
) -> list[dict]:
    rows = []
    tenant = carta.settings.default_tenant
    for q in questions:
        if any(e.doc not in ids for e in q.evidence):
            rows.append({"id": q.id, "language": q.language, "skipped": "not indexed"})
            continue
        row: dict[str, Any] = {"id": q.id, "language": q.language, "units": len(q.evidence)}
        for k in KS:  # a search per k: the planner weaves its steps into the top k it is asked for
            query = carta.query(q.question, tenant, top_k=k)
            t0 = time.perf_counter()
            single = carta.retriever.search(query)
            t1 = time.perf_counter()
            planned = planner.search(query)
            t2 = time.perf_counter()
            for name, result in (("single", single), ("planned", planned)):
                found = units_found(q, result, ids, k)
                row[f"{name}_all@{k}"] = all(found)
                row[f"{name}_units@{k}"] = sum(found) / len(found)
        if answers:
            row["single_facts"] = answer_facts(carta, None, q)
            row["planned_facts"] = answer_facts(carta, planner, q)
        plan = planned.plan or {}  # the last k's plan and timings
        row.update(
            single_ms=round((t1 - t0) * 1e3, 1),
            planned_ms=round((t2 - t1) * 1e3, 1),
            searches=len(plan.get("steps", [])),
            stopped=plan.get("stopped"),
            routes=plan.get("routes"),
            sub_questions=plan.get("sub_questions"),
            missing=plan.get("missing"),
            steps=plan.get("steps"),
        )
        rows.append(row)
    return rows


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def table(rows: list[dict]) -> str:
    done = [r for r in rows if "skipped" not in r]
    lines = [
        f"{len(done)} questions scored, {len(rows) - len(done)} skipped (documents not indexed)",
        "",
        "| path | set | n | all units @5 | all units @10 | unit recall @10 | searches | ms/question |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ("single", "planned"):
        for label, subset in (
            ("all", done),
            ("pt", [r for r in done if r["language"] == "pt"]),
            ("en", [r for r in done if r["language"] == "en"]),
        ):
            searches = mean([r["searches"] for r in subset]) if name == "planned" else 1.0
            lines.append(
                f"| {name} | {label} | {len(subset)} | {mean([r[f'{name}_all@5'] for r in subset]):.3f} | "
                f"{mean([r[f'{name}_all@10'] for r in subset]):.3f} | "
                f"{mean([r[f'{name}_units@10'] for r in subset]):.3f} | {searches:.1f} | "
                f"{mean([r[f'{name}_ms'] for r in subset]):.0f} |"
            )
    if done and "single_facts" in done[0]:
        lines += ["", "| path | fact accuracy (answer, top 5) |", "|---|---|"]
        for name in ("single", "planned"):
            lines.append(f"| {name} | {mean([r[f'{name}_facts'] or 0.0 for r in done]):.3f} |")
    lines += ["", "| question | single @10 | planned @10 | searches | stopped |", "|---|---|---|---|---|"]
    for r in done:
        mark = {True: "yes", False: "no"}
        lines.append(
            f"| {r['id']} | {mark[r['single_all@10']]} | {mark[r['planned_all@10']]} | "
            f"{r['searches']} | {r['stopped']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, default=REPO / "eval" / "questions" / "multihop.yaml")
    ap.add_argument("--samples", type=Path, default=REPO / "samples")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument(
        "--data-dir", type=Path, default=None, help="Index here and keep it (reused when run again)."
    )
    ap.add_argument("--no-ingest", action="store_true", help="Score only the documents already indexed.")
    ap.add_argument("--out", type=Path, default=None, help="Write the per-question JSON here.")
    ap.add_argument("--answers", action="store_true", help="Also answer each question by both paths (facts).")
    args = ap.parse_args(argv)
    questions = load_questions(args.questions)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=args.data_dir or Path(tmp),
            gazetteers=[args.corpus / "poi" / "recife_bairros.geojson"],
            docgraph=True,
            planner="off",  # the single-shot path is the service's; the planner is built below
            _env_file=None,
        )
        carta = Carta(settings)
        try:
            if args.no_ingest:
                tenant = settings.default_tenant
                ids = {d.filename: d.id for d in carta.registry.list(tenant) if d.status == "ready"}
            else:
                ids = ingest_missing(carta, questions, [args.samples, args.corpus / "pdf"])
            planner = QueryPlanner(
                carta.retriever.search,
                frozenset(c.selector for c in carta.retriever.channels if c.selector),
                PlannerLimits(settings.planner_max_steps, settings.planner_max_tokens),
                recognise=carta.docgraph.recognise if carta.docgraph else None,
            )
            rows = evaluate(carta, planner, questions, ids, args.answers)
        finally:
            carta.close()
    print(table(rows))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
