"""Relational eval: the graph channel through /v1/ask's code path vs the seed's vector
baseline, on eval/questions/relational.yaml (ground truth from make_relational_truth.py).

Loads the POI datasets of relational_spec.yaml (and, with --ingest, documents) into a
fresh data dir, asks every question in-process exactly as the API does, scores the
returned `graph.pairs` (precision, recall, F1 per question), then runs the vector
baseline (POI texts embedded with the same MiniLM, top-k by cosine, pairs among them,
with and without a distance check) and prints one table.

    python scripts/eval_relational.py [--corpus ../shared/corpus] [--ingest samples] [--out eval]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from graph.baseline import VectorBaseline  # noqa: E402
from ingest.upload import IngestRequest  # noqa: E402
from service.carta import Carta  # noqa: E402
from service.cli.local_client import LocalClient  # noqa: E402
from service.evaluation import metrics as m  # noqa: E402
from service.evaluation.questions import load_questions  # noqa: E402
from service.settings import Settings  # noqa: E402

BASELINE_K = 50


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    ap.add_argument("--spec", type=Path, default=REPO / "eval" / "questions" / "relational_spec.yaml")
    ap.add_argument("--questions", type=Path, default=REPO / "eval" / "questions" / "relational.yaml")
    ap.add_argument("--ingest", type=Path, action="append", default=[], help="Documents to index first.")
    ap.add_argument("--out", type=Path, default=None, help="Write relational-results.json/.md here.")
    args = ap.parse_args(argv)
    spec = yaml.safe_load(args.spec.read_text(encoding="utf-8"))
    questions = load_questions(args.questions)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp), gazetteers=[args.corpus / "poi" / "recife_bairros.geojson"], _env_file=None
        )
        carta = Carta(settings)
        try:
            tenant = settings.default_tenant
            for ds in spec["datasets"]:
                path = args.corpus / ds["file"]
                carta.graph.add_dataset(path.read_bytes(), path.name, tenant, ds.get("category"))
            for folder in args.ingest:
                files = sorted(
                    p for p in ([folder] if folder.is_file() else folder.rglob("*")) if p.is_file()
                )
                for f in files:
                    if f.suffix.lower() in {".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp"}:
                        carta.ingest(IngestRequest(f.read_bytes(), f.name, tenant, source_path=f))
            client = LocalClient(carta, tenant)
            baseline = VectorBaseline(carta.graph.store.pois(tenant), carta.text.embed)
            rows = []
            for q in questions:
                t = time.perf_counter()
                answer = client.ask(q.question, top_k=5)  # the HTTP API's JSON shape
                ask_ms = (time.perf_counter() - t) * 1e3
                truth = [(p.a, p.b) for p in q.pairs or []]
                returned = [(p["a"], p["b"]) for p in (answer.get("graph") or {}).get("pairs") or []]
                c = carta.graph.constraints(q.question, tenant)
                base = {}
                for name, verify in (("vector", False), ("vector+dist", True)):
                    got = baseline.pairs(q.question, c.pairs, c.radius_m, BASELINE_K, verify)
                    base[name] = scores([(a, b) for a, b, _ in got], truth)
                rows.append(
                    {
                        "id": q.id,
                        "language": q.language,
                        "truth": len(truth),
                        "returned": len((answer.get("graph") or {}).get("pairs") or []),
                        "citations": len(answer["citations"]),
                        "graph": scores(returned, truth),
                        "graph_notes": (answer.get("graph") or {}).get("notes"),
                        "ask_ms": round(ask_ms, 1),
                        **base,
                    }
                )
        finally:
            carta.close()
    report = markdown(rows)
    print(report)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "relational-results.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")
        (args.out / "relational-results.md").write_text(report, encoding="utf-8")
    return 0


def scores(returned: list[tuple[str, str]], truth: list[tuple[str, str]]) -> dict[str, float | None]:
    """The runner's relational scores, except that returning nothing when true pairs
    exist scores recall 0 and F1 0 (not n/a)."""
    out = m.relational_scores(returned, truth)
    if not returned and truth:
        out["f1"] = 0.0
    return out


def _f(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def markdown(rows: list[dict]) -> str:
    systems = ("graph", "vector", "vector+dist")
    lines = [
        "# Relational eval (graph channel vs the seed's vector baseline)\n",
        f"Vector baseline: POI texts embedded with MiniLM, top-{BASELINE_K} by cosine, pairs of the asked "
        "categories among them (`vector`: all such pairs; `vector+dist`: only those within the radius).\n",
        "| id | lang | truth | returned | cites | graph P | graph R | graph F1 "
        "| vector P | vector R | vector F1 "
        "| vector+dist P | vector+dist R | vector+dist F1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [r["id"], r["language"], r["truth"], r["returned"], r["citations"]]
        for s in systems:
            cells += [_f(r[s].get("precision")), _f(r[s].get("recall")), _f(r[s].get("f1"))]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    mean = ["**mean**", "", "", "", ""]
    for s in systems:
        for k in ("precision", "recall", "f1"):
            mean.append(f"**{_f(m.mean(r[s].get(k) for r in rows))}**")
    lines.append("| " + " | ".join(mean) + " |")
    scored = sum(1 for r in rows if r["graph"].get("f1") is not None)
    lines.append(f"\n{len(rows)} questions, {scored} with a defined F1 (the others have no true pair).")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
