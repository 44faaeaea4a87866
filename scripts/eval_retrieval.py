"""Retrieval-only evaluation: page R@1 / R@5 / MRR of the fused ranking and of each channel
alone, per question set and per (question language -> document language) pair, on an
already indexed data dir. No answers are produced, so a run takes minutes, not the hour of
`carta eval`; the numbers are the same metrics (service/evaluation/metrics.py).

    CARTA_GAZETTEERS='["/work/shared/corpus/poi/recife_bairros.geojson"]' \
    python scripts/eval_retrieval.py --data-dir DATA -q eval/questions/tables.yaml ... \
        [--peer-qa QA.json --peer-pdf DOC.pdf] [--out results.json]

A document's language is read from its evidence pages' text (service/query/language.py;
"?" when it does not say), so "pt>en" is a Portuguese question whose evidence is English.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from service.carta import Carta
from service.cli.local_client import LocalClient
from service.evaluation import metrics as m
from service.evaluation.questions import Question, load_peer_qa, load_questions
from service.evaluation.runner import SYSTEMS, indexed_files, ranked_pages
from service.query.language import text_language
from service.settings import Settings

K = 10
UNRANKED = {"relational", "geodata", "unanswerable"}  # no evidence pages to rank


def document_language(client: LocalClient, doc_id: str, pages: list[int], cache: dict) -> str:
    """The language most of a document's evidence pages are written in."""
    key = (doc_id, tuple(pages))
    if key not in cache:
        text = " ".join(client.page_text(doc_id, p) for p in pages)[:4000]
        cache[key] = text_language(text) or "?"
    return cache[key]


def score(ranked: list[tuple[str, int]], units: list[set[tuple[str, int]]]) -> dict[str, float | None]:
    return {
        "r1": m.recall_at_k(ranked, units, 1),
        "r5": m.recall_at_k(ranked, units, 5),
        "mrr": m.reciprocal_rank(ranked, units),
    }


def run(
    sets: dict[str, list[Question]], client: LocalClient, systems: list[str], top_k: int = K
) -> list[dict[str, Any]]:
    doc_ids = indexed_files(client)
    cache: dict = {}
    rows: list[dict[str, Any]] = []
    for set_name, questions in sets.items():
        for q in questions:
            if q.type in UNRANKED or any(e.doc not in doc_ids for e in q.evidence):
                continue
            units = [{(doc_ids[e.doc], p) for p in e.pages} for e in q.evidence]
            doc_lang = document_language(client, doc_ids[q.evidence[0].doc], q.evidence[0].pages, cache)
            geo = q.geo.model_dump(exclude_none=True) if q.geo else None
            row: dict[str, Any] = {"set": set_name, "id": q.id, "lang": q.language, "doc_lang": doc_lang}
            for system in systems:
                ranked = ranked_pages(client, q.question, SYSTEMS[system], geo, top_k=top_k)
                row[system] = score(ranked, units)
            rows.append(row)
            print(f"{set_name:10} {q.id:40} {q.language}>{doc_lang} {row['carta']}", file=sys.stderr)
    return rows


def table(rows: list[dict[str, Any]], systems: list[str]) -> str:
    """One line per set and language pair: n, then R@1 / R@5 / MRR per system."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["set"]].append(row)
        groups[f"{row['set']} {row['lang']}>{row['doc_lang']}"].append(row)
        groups[f"ALL {row['lang']}>{row['doc_lang']}"].append(row)
        groups["ALL"].append(row)
    header = f"{'group':28} {'n':>4} " + " ".join(f"{s + ' R@1/R@5/MRR':>26}" for s in systems)
    lines = [header]
    for name in sorted(groups):
        rs = groups[name]
        cells = []
        for s in systems:
            r1, r5, mrr = (m.mean(r[s][k] for r in rs) for k in ("r1", "r5", "mrr"))
            cells.append(f"{r1:8.3f} {r5:8.3f} {mrr:8.3f}")
        lines.append(f"{name:28} {len(rs):4d} " + " ".join(f"{c:>26}" for c in cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("-q", "--questions", type=Path, action="append", default=[])
    parser.add_argument("--peer-qa", type=Path)
    parser.add_argument("--peer-pdf", type=Path)
    parser.add_argument("--systems", default="carta,bm25-only,dense-only,pages-only")
    parser.add_argument("--out", type=Path, help="per-question results (JSON)")
    parser.add_argument(
        "--top-k",
        type=int,
        default=K,
        help=f"pages searched (default {K}, as `carta eval`; 5 is what /v1/ask retrieves)",
    )
    args = parser.parse_args()
    sets = {path.stem: load_questions(path) for path in args.questions}
    if args.peer_qa and args.peer_pdf:
        sets[f"peer-{args.peer_pdf.stem}"] = load_peer_qa(args.peer_qa, args.peer_pdf)
    systems = args.systems.split(",")
    carta = Carta(Settings(data_dir=args.data_dir))
    client = LocalClient(carta, carta.settings.default_tenant)
    try:
        rows = run(sets, client, systems, args.top_k)
    finally:
        carta.close()
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(table(rows, systems))


if __name__ == "__main__":
    main()
