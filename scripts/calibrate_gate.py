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

    python scripts/calibrate_gate.py --features /tmp/gate_features.jsonl --data-dir /tmp/gate-data  # both
    python scripts/calibrate_gate.py --features /tmp/gate_features.jsonl --sweep  # the sweep only

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

from models.sparse_encoder import SparseEncoder  # noqa: E402
from service.answer.asked import asked_value, given_values, states_value  # noqa: E402
from service.answer.content_words import question_content_words  # noqa: E402
from service.answer.gate import (  # noqa: E402
    Candidate,
    GateParams,
    about_subject,
    absent_key_terms,
    asked_in_other_year,
    content_coverage,
    decide,
    key_share,
    key_terms,
    question_key_terms,
    stem_coverage,
    word_share,
)

POSITIVE = {"text", "table", "chart", "map", "geo-filtered", "exact-code", "multi-hop"}
SETS = ("samples/questions.yaml", "eval/questions/corpus.yaml", "eval/questions/gate_calibration.yaml")
COSINE_SENTENCES = 48  # sentences embedded per question at collection (the gate embeds 32)


def collect(
    corpus: Path,
    samples: Path,
    out: Path,
    data_dir: Path | None,
    reverse: bool = False,
    sets: tuple[str, ...] = SETS,
) -> None:
    """Ingest the corpus once (a kept --data-dir skips that the next time: ingestion is
    idempotent) and cache each question's gate features, one JSON line per question as it
    goes (a rerun resumes after the last one written)."""
    from ingest.upload import IngestRequest
    from service.answer.gate import RelevanceGate
    from service.carta import Carta
    from service.cli.common import iter_files
    from service.cli.local_client import LocalClient
    from service.evaluation.questions import load_questions
    from service.settings import Settings

    with tempfile.TemporaryDirectory(prefix="carta-gate-") as tmp:
        carta = Carta(Settings(data_dir=data_dir or Path(tmp), profile="lite"))
        tenant = carta.settings.default_tenant
        files = list(iter_files([samples, corpus / "pdf", corpus / "charts"]))
        t = time.perf_counter()
        for path in files:
            carta.ingest(IngestRequest(path.read_bytes(), path.name, tenant))
        print(f"ingested {len(files)} files in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
        ids = {d.filename: d.id for d in carta.registry.list(tenant)}
        client = LocalClient(carta, tenant)
        wide = RelevanceGate(carta.text, carta.sparse, max_embedded=COSINE_SENTENCES)
        done = {json.loads(line)["id"] for line in out.read_text().splitlines()} if out.exists() else set()
        with out.open("a", encoding="utf-8") as sink:
            for set_path in reversed(sets) if reverse else sets:
                questions = load_questions(ROOT / set_path)
                for q in reversed(questions) if reverse else questions:
                    if (q.type not in POSITIVE and q.type != "unanswerable") or q.id in done:
                        continue
                    geo = q.geo.model_dump(exclude_none=True) if q.geo else None
                    query = client._query(q.question, 5, geo, True)  # noqa: SLF001 - same query as ask
                    result = carta.search(query)
                    pages = result.pages[: wide.evidence_pages]
                    scored = wide._score(q.question, wide._candidates(pages), result)  # noqa: SLF001
                    expected = {(ids.get(e.doc), p) for e in q.evidence for p in e.pages}
                    row = {
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
                    sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                    sink.flush()
                    print(q.id, file=sys.stderr, flush=True)
        carta.close()


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


def prepare(rows: list[dict[str, Any]]) -> None:
    """Key-term and coverage features with the current code, once per question (they need no params)."""
    sparse = SparseEncoder()
    for row in rows:
        row["coverage"] = stem_coverage(sparse, row["question"], row["page_texts"])
        terms = question_key_terms(row["question"])
        row["missing"] = absent_key_terms(row["question"], row["page_texts"])
        words = question_content_words(row["question"], key_terms(row["question"]))
        asked, given = asked_value(row["question"]), given_values(row["question"])
        row["scored"] = about_subject(
            row["question"],
            [
                Candidate(
                    c["sentence"],
                    None,  # type: ignore[arg-type]
                    None,  # type: ignore[arg-type]
                    c["cosine"],
                    c["overlap"],
                    key_share(terms, c["sentence"]),
                    words=word_share(words, c["sentence"]),
                    states=asked is None or states_value(c["sentence"], asked, given),
                )
                for c in row["candidates"]
            ],
        )
        row["absent_words"], row["word_coverage"] = content_coverage(row["question"], row["page_texts"])
        row["other_year"] = asked_in_other_year(row["question"], row["scored"])


def replay(rows: list[dict[str, Any]], params: GateParams) -> tuple[Point, list[str], list[str]]:
    """The gate's verdicts on the prepared cache under `params`: the point and the ids it gets wrong."""
    refused_ok, answered_bad = [], []
    for row in rows:
        passed = decide(
            row["scored"],
            row["missing"],
            row["coverage"],
            params,
            word_coverage=row["word_coverage"],
            other_year=row["other_year"],
            keyless=not question_key_terms(row["question"]),
        ).passed
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
                for min_overlap in (0.0, 0.2, 0.34):
                    for min_coverage in (0.0, 0.5, 0.67, 0.8):
                        for min_word_coverage in (0.0, 0.5, 0.6, 0.75, 1.0):
                            for step in range(10, 81, 5):
                                params = GateParams(
                                    min_relevance=step / 100,
                                    overlap_weight=overlap_weight,
                                    keys_weight=keys_weight,
                                    min_overlap=min_overlap,
                                    min_coverage=min_coverage,
                                    min_word_coverage=min_word_coverage,
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
        f"min_overlap={p.min_overlap} min_coverage={p.min_coverage} min_words={p.min_word_coverage} "
        f"keys={p.key_rule}"
    )


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--features", type=Path, nargs="+", default=[Path("/tmp/gate_features.jsonl")], help="Cache file(s)."
    )
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus"))
    parser.add_argument("--samples", type=Path, default=ROOT / "samples")
    parser.add_argument("--data-dir", type=Path, help="Keep the indexed corpus here (reused next time).")
    parser.add_argument("--sweep", action="store_true", help="Only sweep the cached features.")
    parser.add_argument("--reverse", action="store_true", help="Collect from the last question back.")
    parser.add_argument("--sets", nargs="*", default=list(SETS), help="Question sets to collect.")
    args = parser.parse_args()
    if not args.sweep:
        collect(args.corpus, args.samples, args.features[0], args.data_dir, args.reverse, tuple(args.sets))
    rows = list({r["id"]: r for f in args.features for r in read_rows(f)}.values())
    prepare(rows)
    n_pos = sum(r["answerable"] for r in rows)
    print(f"{len(rows)} questions: {n_pos} answerable, {len(rows) - n_pos} unanswerable")
    print(
        f"right page in the gate's evidence: {sum(r['retrieved'] for r in rows if r['answerable'])}/{n_pos}"
    )
    points = sweep(rows)
    print("\nThe curve (best false-refusal count for each wrong-answer count):\n")
    print(
        "| wrong answers (unanswerable answered) | false refusals (answerable refused) "
        "| refusal ok | answerable ok | params |"
    )
    print("|---:|---:|---:|---:|---|")
    for p in pareto(points):
        print(
            f"| {p.wrong_answers}/{p.unanswerable} | {p.false_refusals}/{p.answerable} | {p.refusal_ok:.2f} "
            f"| {p.answerable_ok:.2f} | {describe(p.params)} |"
        )
    best = max(points, key=lambda p: (min(p.refusal_ok, p.answerable_ok), p.refusal_ok + p.answerable_ok))
    print(
        f"\nBalanced point (best lower rate; the defaults): {describe(best.params)}: "
        f"refusal ok {best.refusal_ok:.2f}, answerable ok {best.answerable_ok:.2f}"
    )
    chosen, refused, answered = replay(rows, GateParams())
    print(
        f"\nThe gate's defaults ({describe(chosen.params)}): refusal ok {chosen.refusal_ok:.2f}, "
        f"answerable ok {chosen.answerable_ok:.2f}"
    )
    by_id = {r["id"]: r for r in rows}
    print(
        "  answerable refused:",
        ", ".join(f"{i}{'' if by_id[i]['retrieved'] else ' (page not retrieved)'}" for i in refused),
    )
    print("  unanswerable answered:", ", ".join(answered))
    print("  key terms of those:", {i: key_terms(by_id[i]["question"]) for i in answered})
    print(
        "  content words absent from the pages of the refused:",
        {i: by_id[i]["absent_words"] for i in refused},
    )


if __name__ == "__main__":
    main()
