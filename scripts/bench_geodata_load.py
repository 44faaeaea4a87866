"""Load benchmark for a large GeoJSON dataset with typed attributes (issue 16): a file of N
point features (nested properties, Portuguese decimal commas, dates) generated here, then
parsed, stored (POIs, NEAR lists, zones, schema) and queried by two analytical plans.

Prints a table of wall times and the peak resident memory of this process (ru_maxrss);
--out writes JSON. Not a test: timings vary by machine.

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows: list[tuple[str, float, float]] = []
    t = time.perf_counter()
    data = make_geojson(args.n)
    rows.append(
        (f"generate {args.n:,} features ({len(data) / 1e6:.1f} MB)", time.perf_counter() - t, peak_mb())
    )
    with tempfile.TemporaryDirectory() as tmp:
        channel = GraphChannel(Path(tmp) / "g.sqlite3", max_dataset_pois=max(200_000, args.n))
        t = time.perf_counter()
        parsed = parse(data, "escolas_grandes")
        rows.append(
            (f"parse ({len(parsed.pois):,} features, typed attributes)", time.perf_counter() - t, peak_mb())
        )
        t = time.perf_counter()
        info, _ = channel.store.add_dataset("bench", parsed, "escolas_grandes.geojson", "geojson", data)
        rows.append(
            (f"store ({info.pois:,} POIs, NEAR lists, zones, schema)", time.perf_counter() - t, peak_mb())
        )
        for question in ("Qual escola tem o maior IDEB?", "Quantas escolas há por RPA?"):
            t = time.perf_counter()
            result = channel.analyze(question, "bench")
            assert result is not None and result.rows, question
            rows.append((f"{question} -> {result.rows[0]['name']}", time.perf_counter() - t, peak_mb()))
        t = time.perf_counter()
        schema = channel.store.dataset_schema("bench", info.id) or {}
        rows.append(
            (f"schema ({len(schema.get('properties', []))} properties)", time.perf_counter() - t, peak_mb())
        )
        channel.close()
    width = max(len(r[0]) for r in rows)
    print(f"{'step':<{width}}  {'seconds':>8}  {'peak RSS MB':>11}")
    for name, secs, mb in rows:
        print(f"{name:<{width}}  {secs:8.2f}  {mb:11.0f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps([{"step": n, "seconds": s, "peak_rss_mb": m} for n, s, m in rows], indent=2)
        )


if __name__ == "__main__":
    main()
