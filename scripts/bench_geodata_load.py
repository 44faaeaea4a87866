"""Load benchmark for a large GeoJSON dataset with typed attributes (issue 16): a file of N
point features (nested properties, Portuguese decimal commas, dates) generated here, then
parsed, stored (POIs, NEAR lists, zones, schema) and queried by two analytical plans.

Prints a table of wall times, this process's CPU seconds (wall minus CPU is time spent
waiting: disk, or other processes on a shared machine) and its peak resident memory
(ru_maxrss); --out writes JSON. Not a test: timings vary by machine. Queries read the
store's per-dataset feature cache (graph/store.py), filled when the dataset is stored;
--cold drops it first, so the first question decodes the features from SQLite.

    python scripts/bench_geodata_load.py [--n 100000] [--out bench/geodata_load.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from graph.channel import GraphChannel  # noqa: E402
from graph.sources import parse  # noqa: E402


def make_geojson(n: int, seed: int = 16) -> bytes:
    """N schools around Recife with nested, comma-decimal and date properties."""
    rng = np.random.default_rng(seed)
    lat = -8.06 + rng.normal(0, 0.05, n)
    lon = -34.92 + rng.normal(0, 0.05, n)
    ideb = np.round(rng.uniform(2.0, 7.0, n), 1)
    features = [
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": [float(lon[i]), float(lat[i])]},
            "properties": {
                "id": i,
                "nome": f"Escola {i}",
                "IDEB": f"{ideb[i]:.1f}".replace(".", ","),
                "RPA": int(i % 6) + 1,
                "inaugurada": f"{1950 + i % 70}-0{1 + i % 9}-15",
                "info": {"alunos": int(100 + i % 900), "turno": "manhã" if i % 2 else "tarde"},
            },
        }
        for i in range(n)
    ]
    return json.dumps({"type": "FeatureCollection", "features": features}).encode()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


QUESTIONS = (
    "Qual escola tem o maior IDEB?",  # argmax
    "Quantas escolas há por RPA?",  # group by a property
    "Quantas escolas têm IDEB acima de 5?",  # count with a filter
    "Qual a média de IDEB das escolas?",  # avg
    "Qual escola tem o maior IDEB?",  # argmax again
)


class Steps:
    """Rows of (step, wall seconds, CPU seconds, peak RSS MB)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, float]] = []
        self._wall = self._cpu = 0.0

    def start(self) -> None:
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def done(self, name: str) -> None:
        self.rows.append((name, time.perf_counter() - self._wall, time.process_time() - self._cpu, peak_mb()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--cold", action="store_true", help="drop the feature cache before the first question")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    steps = Steps()
    steps.start()
    data = make_geojson(args.n)
    steps.done(f"generate {args.n:,} features ({len(data) / 1e6:.1f} MB)")
    with tempfile.TemporaryDirectory() as tmp:
        channel = GraphChannel(Path(tmp) / "g.sqlite3", max_dataset_pois=max(200_000, args.n))
        steps.start()
        parsed = parse(data, "escolas_grandes")
        steps.done(f"parse ({len(parsed.pois):,} features, typed attributes)")
        steps.start()
        info, _ = channel.store.add_dataset("bench", parsed, "escolas_grandes.geojson", "geojson", data)
        steps.done(f"store ({info.pois:,} POIs, NEAR lists, zones, schema)")
        if args.cold:
            channel.store.forget_cached("bench", info.id)
        for question in QUESTIONS:
            steps.start()
            result = channel.analyze(question, "bench")
            assert result is not None and result.rows, question
            steps.done(f"{question} -> {result.rows[0]['name']}")
        steps.start()
        schema = channel.store.dataset_schema("bench", info.id) or {}
        steps.done(f"schema ({len(schema.get('properties', []))} properties)")
        channel.close()
    width = max(len(r[0]) for r in steps.rows)
    print(f"{'step':<{width}}  {'seconds':>8}  {'CPU s':>7}  {'peak RSS MB':>11}")
    for name, secs, cpu, mb in steps.rows:
        print(f"{name:<{width}}  {secs:8.2f}  {cpu:7.2f}  {mb:11.0f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                [{"step": n, "seconds": s, "cpu_seconds": c, "peak_rss_mb": m} for n, s, c, m in steps.rows],
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
