"""Store benchmark on synthetic multivectors of the real shapes: MaxSim page search in the
embedded engine against a brute-force numpy reference on the same data, upsert rate,
disk bytes per page and RSS, at several corpus sizes; plus how latency grows with N.

    .venv/bin/python scripts/bench_store.py                       # default sizes (< 10 min on 2 cores)
    .venv/bin/python scripts/bench_store.py --sizes 1000,10000,100000 --shapes colpali

Also the same MaxSim search with a 5 km geo-radius filter (pages carry random locations in a
33 km square), against the unfiltered search (ratio).

Shapes: lite = MiniLM page tokens (256 x 384, the typical lite page), colqwen (~700 x 128),
colpali (1030 x 128). Vectors are unit-normalised Gaussian noise, stored fp16 like Carta.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from benchlib import disk_usage, machine_facts  # noqa: E402

from index.edge_store import EdgeStore  # noqa: E402
from index.types import CollectionSpec, DenseSpec, Filter, GeoRadius, StorePoint  # noqa: E402

SHAPES = {"lite": (256, 384), "colqwen": (700, 128), "colpali": (1030, 128)}
QUERY_TOKENS = 20
BATCH = 25


def unit(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    x = rng.standard_normal(shape, dtype=np.float32)
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    return x


GEO_BOX = (-8.20, -35.05, -7.90, -34.75)  # (min_lat, min_lon, max_lat, max_lon), ~33 x 33 km
GEO_CENTRE = (-8.05, -34.90)
GEO_RADIUS_M = 5000.0  # selects ~7 % of the pages


def random_points(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    min_lat, min_lon, max_lat, max_lon = GEO_BOX
    return rng.uniform(min_lat, max_lat, n), rng.uniform(min_lon, max_lon, n)


def bench_one(shape_name: str, n: int, queries: int, seed: int) -> dict[str, object]:
    tokens, dim = SHAPES[shape_name]
    rng = np.random.default_rng(seed)
    root = Path(tempfile.mkdtemp(prefix=f"carta-bench-{shape_name}-"))
    spec = CollectionSpec(
        name="pages",
        dense=(DenseSpec("late", dim, multivector=True, hnsw=False, float16=True),),
        indexes=(("tenant", "keyword"), ("state", "keyword"), ("location", "geo")),
    )
    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    store = EdgeStore(root)
    store.ensure_collection(spec)
    reference = np.empty((n, tokens, dim), dtype=np.float16)  # what the engine stores, for the numpy baseline
    t0 = time.perf_counter()
    for start in range(0, n, BATCH):
        block = unit(rng, (min(BATCH, n - start), tokens, dim))
        reference[start : start + len(block)] = block
        store.upsert(
            "pages",
            [
                StorePoint(
                    str(uuid.UUID(int=start + i)),
                    {"late": v.tolist()},
                    {"tenant": "t", "state": "ready", "location": {"lat": float(la), "lon": float(lo)}},
                )
                for i, (v, la, lo) in enumerate(zip(block, *random_points(rng, len(block)), strict=True))
            ],
        )
    upsert_s = time.perf_counter() - t0
    flt = Filter({"tenant": "t", "state": "ready"})
    qs = [unit(rng, (QUERY_TOKENS, dim)) for _ in range(queries)]
    store.search("pages", "late", qs[0].tolist(), flt, 10)  # warm up
    engine_ms, numpy_ms, agree, geo_ms = [], [], [], []
    near = Filter(flt.match, geo_radius=GeoRadius("location", GEO_CENTRE[0], GEO_CENTRE[1], GEO_RADIUS_M))
    flat = reference.reshape(-1, dim)
    for q in qs:
        t = time.perf_counter()
        hits = store.search("pages", "late", q.tolist(), flt, 10)
        engine_ms.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        store.search("pages", "late", q.tolist(), near, 10)
        geo_ms.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        scores = np.empty(n, dtype=np.float32)
        step = max(1, 4_000_000 // (tokens * dim))  # pages per block, ~16 MB of fp32 at a time
        for s in range(0, n, step):
            block = flat[s * tokens : (s + step) * tokens].astype(np.float32) @ q.T
            scores[s : s + step] = block.reshape(-1, tokens, QUERY_TOKENS).max(axis=1).sum(axis=1)
        top = np.argsort(-scores)[:10]
        numpy_ms.append((time.perf_counter() - t) * 1e3)
        agree.append(len({uuid.UUID(h.id).int for h in hits} & {int(i) for i in top}) / 10)
    rss = proc.memory_info().rss - rss0 - reference.nbytes
    store.close()
    disk = disk_usage(root)
    shutil.rmtree(root, ignore_errors=True)
    del reference, flat
    e50, n50 = float(np.median(engine_ms)), float(np.median(numpy_ms))
    return {
        "shape": shape_name,
        "tokens": tokens,
        "dim": dim,
        "pages": n,
        "upsert_pages_per_s": round(n / upsert_s, 1),
        "engine_p50_ms": round(e50, 2),
        "engine_p95_ms": round(float(np.percentile(engine_ms, 95)), 2),
        "numpy_p50_ms": round(n50, 2),
        "engine_vs_numpy": round(e50 / n50, 2),
        "top10_agreement": round(float(np.mean(agree)), 3),
        "geo_filtered_p50_ms": round(float(np.median(geo_ms)), 2),
        "geo_vs_unfiltered": round(float(np.median(geo_ms)) / e50, 2),
        "disk_bytes_per_page": disk // n,
        "rss_mb_engine": round(max(rss, 0) / 1e6, 1),
    }


def growth(rows: list[dict[str, object]]) -> dict[str, float]:
    """Exponent b of latency ~ N^b per shape (least squares on log-log; 1.0 = linear)."""
    out = {}
    for shape in {r["shape"] for r in rows}:
        pts = [(math.log(r["pages"]), math.log(r["engine_p50_ms"])) for r in rows if r["shape"] == shape]
        if len(pts) >= 2:
            xs, ys = zip(*pts, strict=True)
            out[str(shape)] = round(float(np.polyfit(xs, ys, 1)[0]), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="Comma-separated page counts.")
    parser.add_argument("--shapes", default="lite,colqwen,colpali", help=f"Any of {', '.join(SHAPES)}.")
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--out", type=Path, default=REPO / "bench-store.json")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = [s.strip() for s in args.shapes.split(",")]
    if unknown := set(shapes) - set(SHAPES):
        parser.error(f"unknown shapes {unknown}")
    facts = machine_facts()
    print("machine:", ", ".join(f"{k}={v}" for k, v in facts.items()))
    header = (
        f"{'shape':<8}{'pages':>8}{'upsert/s':>10}{'engine p50':>12}{'p95':>9}{'numpy p50':>11}"
        f"{'eng/numpy':>11}{'top10 agr':>11}{'geo p50':>9}{'geo/plain':>10}{'kB/page':>9}{'RSS MB':>8}"
    )
    print(header)
    rows = []
    for shape in shapes:
        for n in sizes:
            r = bench_one(shape, n, args.queries, seed=n)
            rows.append(r)
            print(
                f"{r['shape']:<8}{r['pages']:>8}{r['upsert_pages_per_s']:>10}{r['engine_p50_ms']:>12}"
                f"{r['engine_p95_ms']:>9}{r['numpy_p50_ms']:>11}{r['engine_vs_numpy']:>11}"
                f"{r['top10_agreement']:>11}{r['geo_filtered_p50_ms']:>9}{r['geo_vs_unfiltered']:>10}"
                f"{r['disk_bytes_per_page'] // 1000:>9}{r['rss_mb_engine']:>8}",
                flush=True,
            )
    fits = growth(rows)
    print("latency growth exponent (p50 ~ N^b):", fits)
    args.out.write_text(json.dumps({"machine": facts, "rows": rows, "growth_exponent": fits}, indent=2))
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
