"""Calibrate the relevance gate (service/answer/gate.py) on labelled questions.

Two steps, so the slow one runs once:

1. collect: a fresh lite Carta ingests the corpus like `make eval` (the samples, the corpus
   PDFs and charts), retrieves evidence for every labelled question and caches what the gate
   looks at to a JSON file: the evidence sentences with their embedding cosine and BM25 stem
   overlap, and the evidence pages' text.
2. sweep: the gate's decision is replayed on the cache (key terms are recomputed with the
   current code, so a change to key-term normalisation needs no new ingest) for a grid of
   thresholds, and the curve is printed: answerable questions refused (false refusals) vs
   unanswerable questions answered (wrong answers).

    python scripts/calibrate_gate.py --features /tmp/gate_features.json          # both steps
    python scripts/calibrate_gate.py --features /tmp/gate_features.json --sweep  # the sweep only

Labels: `unanswerable` items are the negatives; text, table, chart, map, geo-filtered,
exact-code and multi-hop items the positives (injection and relational items are left out:
their right behaviour is not "answer vs refuse" on page evidence).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.answer.gate import (  # noqa: E402
    Candidate,
    GateParams,
    decide,
    key_share,
    key_terms,
    question_key_terms,
)

POSITIVE = {"text", "table", "chart", "map", "geo-filtered", "exact-code", "multi-hop"}
SETS = ("samples/questions.yaml", "eval/questions/corpus.yaml", "eval/questions/gate_calibration.yaml")
COSINE_SENTENCES = 64  # sentences embedded per question at collection (the gate embeds 32)


def collect(corpus: Path, samples: Path, out: Path) -> None:
    """Ingest the corpus once and cache each question's gate features."""
    from ingest.upload import IngestRequest
    from service.answer.gate import RelevanceGate
    from service.carta import Carta
    from service.cli.common import iter_files
    from service.cli.local_client import LocalClient
    from service.evaluation.questions import load_questions
    from service.settings import Settings

    with tempfile.TemporaryDirectory(prefix="carta-gate-") as tmp:
        carta = Carta(Settings(data_dir=Path(tmp), profile="lite"))
        tenant = carta.settings.default_tenant
        files = list(iter_files([samples, corpus / "pdf", corpus / "charts"]))
        t = time.perf_counter()
        for path in files:
            carta.ingest(IngestRequest(path.read_bytes(), path.name, tenant))
        print(f"ingested {len(files)} files in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        ids = {d.filename: d.id for d in carta.registry.list(tenant)}
        client = LocalClient(carta, tenant)
        wide = RelevanceGate(carta.text, carta.sparse, max_embedded=COSINE_SENTENCES)
        rows = []
        for set_path in SETS:
            for q in load_questions(ROOT / set_path if not Path(set_path).is_absolute() else Path(set_path)):
                if q.type not in POSITIVE and q.type != "unanswerable":
                    continue
                geo = q.geo.model_dump(exclude_none=True) if q.geo else None
                query = client._query(q.question, 5, geo, True)  # noqa: SLF001 - same query as ask
                result = carta.search(query)
                pages = result.pages[: wide.evidence_pages]
                scored = wide._score(q.question, wide._candidates(pages), result)  # noqa: SLF001
                expected = {(ids.get(e.doc), p) for e in q.evidence for p in e.pages}
                rows.append(
                    {
                        "id": q.id,
                        "set": Path(set_path).stem,
                        "type": q.type,
                        "language": q.language,
                        "question": q.question,
                        "answerable": q.type != "unanswerable",
                        "retrieved": any((p.doc_id, p.page_no) in expected for p in pages),
                        "page_texts": [c.text for p in pages for c in p.chunks],
                        "candidates": [
                            {"sentence": c.sentence, "cosine": round(c.cosine, 5), "overlap": c.overlap}
                            for c in scored
                        ],
                    }
                )
        carta.close()
    out.write_text(json.dumps(rows, ensure_ascii=False))
    print(f"{len(rows)} questions cached in {out}", file=sys.stderr)


@dataclass
class Point:
    params: GateParams
    false_refusals: int
    wrong_answers: int
    answerable: int
    unanswerable: int

    @property
    def answerable_ok(self) -> float:
        return 1 - self.false_refusals / self.answerable

    @property
    def refusal_ok(self) -> float:
        return 1 - self.wrong_answers / self.unanswerable


def replay(rows: list[dict[str, Any]], params: GateParams) -> tuple[Point, list[str], list[str]]:
    """The gate's verdicts on the cache under `params`: the point and the ids it gets wrong."""
    refused_ok, answered_bad = [], []
    for row in rows:
        terms = question_key_terms(row["question"])
        cands = [
            Candidate(c["sentence"], None, None, c["cosine"], c["overlap"], key_share(terms, c["sentence"]))  # type: ignore[arg-type]
            for c in row["candidates"]
        ]
        passed = decide(row["question"], cands, row["page_texts"], params).passed
        if row["answerable"] and not passed:
            refused_ok.append(row["id"])
        if not row["answerable"] and passed:
            answered_bad.append(row["id"])
    n_pos = sum(r["answerable"] for r in rows)
    point = Point(params, len(refused_ok), len(answered_bad), n_pos, len(rows) - n_pos)
    return point, refused_ok, answered_bad


def sweep(rows: list[dict[str, Any]]) -> list[Point]:
    points = []
    for key_rule in ("all", "names"):
        for overlap_weight in (0.0, 0.25, 0.5):
            for keys_weight in (0.0, 0.3):
                for min_overlap in (0.0, 0.2, 0.34, 0.5):
                    for step in range(10, 71, 5):
                        params = GateParams(
                            min_relevance=step / 100,
                            overlap_weight=overlap_weight,
                            keys_weight=keys_weight,
                            min_overlap=min_overlap,
                            key_rule=key_rule,
                        )
                        points.append(replay(rows, params)[0])
    return points


def pareto(points: list[Point]) -> list[Point]:
    """The points no other point beats on both errors (the curve)."""
    best: dict[int, Point] = {}
    for p in points:
        if p.wrong_answers not in best or p.false_refusals < best[p.wrong_answers].false_refusals:
            best[p.wrong_answers] = p
    curve, lowest = [], None
    for wrong in sorted(best):
        p = best[wrong]
        if lowest is None or p.false_refusals < lowest:
            curve.append(p)
            lowest = p.false_refusals
    return curve


def describe(p: GateParams) -> str:
    return (
        f"min_relevance={p.min_relevance:.2f} overlap_w={p.overlap_weight} keys_w={p.keys_weight} "
        f"min_overlap={p.min_overlap} keys={p.key_rule}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--features", type=Path, default=Path("/tmp/gate_features.json"))
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus"))
    parser.add_argument("--samples", type=Path, default=ROOT / "samples")
    parser.add_argument("--sweep", action="store_true", help="Only sweep the cached features.")
    args = parser.parse_args()
    if not args.sweep:
        collect(args.corpus, args.samples, args.features)
    rows = json.loads(args.features.read_text())
    n_pos = sum(r["answerable"] for r in rows)
    print(f"{len(rows)} questions: {n_pos} answerable, {len(rows) - n_pos} unanswerable")
    print(
        f"right page in the gate's evidence: {sum(r['retrieved'] for r in rows if r['answerable'])}/{n_pos}"
    )
    print("\nThe curve (best false-refusal count for each wrong-answer count):\n")
    print(
        "| wrong answers (unanswerable answered) | false refusals (answerable refused) "
        "| refusal ok | answerable ok | params |"
    )
    print("|---:|---:|---:|---:|---|")
    for p in pareto(sweep(rows)):
        print(
            f"| {p.wrong_answers}/{p.unanswerable} | {p.false_refusals}/{p.answerable} | {p.refusal_ok:.2f} "
            f"| {p.answerable_ok:.2f} | {describe(p.params)} |"
        )
    chosen, refused, answered = replay(rows, GateParams())
    print(
        f"\nDefault point ({describe(chosen.params)}): refusal ok {chosen.refusal_ok:.2f}, "
        f"answerable ok {chosen.answerable_ok:.2f}"
    )
    by_id = {r["id"]: r for r in rows}
    print(
        "  answerable refused:",
        ", ".join(f"{i}{'' if by_id[i]['retrieved'] else ' (page not retrieved)'}" for i in refused),
    )
    print("  unanswerable answered:", ", ".join(answered))
    print("  key terms of those:", {i: key_terms(by_id[i]["question"]) for i in answered})


if __name__ == "__main__":
    main()
