"""Visual-profile storage and search benchmark on ColPali-shaped synthetic pages: two-stage
late interaction in the engine (pooled prefetch, exact MaxSim rerank on the full vectors)
against exact full MaxSim (the engine's brute-force scan, same data, same run).

    .venv/bin/python scripts/bench_visual.py                        # 10k ColPali pages (~10 min, 2 cores)
    .venv/bin/python scripts/bench_visual.py --pages 1000 --widths 50,100,200 --shapes colpali,lite

Synthetic data with the structure of real page embeddings: a page is a 32 x 32 patch grid
(+ 6 text tokens = 1,030 x 128) cut into 2-6 rectangular regions, each region one "topic"
(a shared random unit vector) plus per-patch noise; topics are shared between pages, so a
query (20 tokens drawn from one planted page's topics, plus noise tokens) has a set of
relevant pages. The lite shape is the lite profile's page channel (256 MiniLM tokens x 384,
runs of similar tokens, pooled by runs of 8).

Reported per shape and first-stage width: Recall@10 of the two-stage result against exact
full MaxSim, p50 latency of both and their ratio; bytes per page for fp32, fp16, pooled
(fp16) and binary (1 bit/dim) storage, and the engine's allocated disk per page (full fp16 +
pooled fp16). `--binary` adds Recall@10 of a binary first stage (sign-quantised pages,
float query, numpy) with exact rerank.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from benchlib import disk_usage, machine_facts  # noqa: E402

from index.collections import POOLED_VECTOR, VISUAL_VECTOR  # noqa: E402
from index.edge_store import EdgeStore  # noqa: E402
from index.pooling import block_pool, rowcol_pool, sequential_pool  # noqa: E402
from index.types import Branch, CollectionSpec, DenseSpec, Filter, StorePoint  # noqa: E402

GRID, TEXT_TOKENS, DIM = 32, 6, 128
QUERY_TOKENS = 20
BATCH = 50
TOPICS = 2000
NOISE = 0.6  # per-patch noise norm relative to the topic vector


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


class Synth:
    """Pages and queries of one shape; queries are planted on pages as they are made."""

    def __init__(self, shape: str, seed: int) -> None:
        self.shape = shape
        self.rng = np.random.default_rng(seed)
        self.dim = DIM if shape == "colpali" else 384
        self.topics = unit(self.rng.standard_normal((TOPICS, self.dim), dtype=np.float32))
        self.planted: list[list[int]] = []  # topic ids of the pages queries are planted on

    def page(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(full multivector, {pooling: pooled multivector})."""
        rng = self.rng
        if self.shape == "colpali":
            ids = np.empty((GRID, GRID), dtype=np.int64)
            ids[:] = rng.integers(TOPICS)
            for _ in range(rng.integers(1, 6)):  # overlay rectangles (regions)
                r0, c0 = rng.integers(0, GRID - 4, 2)
                r1, c1 = r0 + rng.integers(4, GRID - r0 + 1), c0 + rng.integers(4, GRID - c0 + 1)
                ids[r0:r1, c0:c1] = rng.integers(TOPICS)
            grid = ids.reshape(-1)
            text = rng.integers(TOPICS, size=TEXT_TOKENS)
            topic_ids = np.concatenate([text[:1], grid, text[1:]])
        else:  # lite: runs of tokens about one topic
            topic_ids = np.repeat(rng.integers(TOPICS, size=16), 16)
        noise = rng.standard_normal((len(topic_ids), self.dim), dtype=np.float32)
        noise *= NOISE / np.sqrt(self.dim)
        full = unit(self.topics[topic_ids] + noise)
        if self.shape == "colpali":
            rows = np.arange(1, 1 + GRID * GRID)
            pooled = {
                "rowcol": rowcol_pool(full, rows, ((GRID, GRID),)),
                "blocks4x4": block_pool(full, rows, ((GRID, GRID),), 4),
            }
        else:
            pooled = {"runs8": sequential_pool(full, 8)}
        if not self.planted or rng.random() < 0.02:
            self.planted.append(sorted(set(topic_ids.tolist())))
        return full, pooled

    def query(self, i: int) -> np.ndarray:
        topics = self.planted[i % len(self.planted)]
        ids = self.rng.choice(topics, size=QUERY_TOKENS - 4)
        noise = self.rng.standard_normal((QUERY_TOKENS, self.dim), dtype=np.float32)
        base = np.concatenate([self.topics[ids], np.zeros((4, self.dim), dtype=np.float32)])
        return unit(
            base + noise * np.where(np.arange(QUERY_TOKENS)[:, None] < len(ids), 0.8, 1.0) / np.sqrt(self.dim)
        )


def bench_shape(shape: str, n: int, widths: list[int], queries: int, binary: bool, seed: int) -> list[dict]:
    synth = Synth(shape, seed)
    root = Path(tempfile.mkdtemp(prefix=f"carta-bench-visual-{shape}-"))
    poolings = ["rowcol", "blocks4x4"] if shape == "colpali" else ["runs8"]
    spec = CollectionSpec(
        name="visual",
        dense=tuple(
            DenseSpec(name, synth.dim, multivector=True, hnsw=False, float16=True)
            for name in [VISUAL_VECTOR, *(f"{POOLED_VECTOR}_{p}" for p in poolings)]
        ),
        indexes=(("tenant", "keyword"),),
    )
    store = EdgeStore(root)
    store.ensure_collection(spec)
    signs: list[np.ndarray] = []
    tokens, pooled_tokens = 0, dict.fromkeys(poolings, 0)
    t0 = time.perf_counter()
    for start in range(0, n, BATCH):
        points = []
        for i in range(start, min(n, start + BATCH)):
            full, pooled = synth.page()
            tokens = len(full)
            for p, v in pooled.items():
                pooled_tokens[p] += len(v)
            if binary:
                signs.append(np.packbits(full > 0, axis=1))
            points.append(
                StorePoint(
                    str(uuid.UUID(int=i)),
                    {VISUAL_VECTOR: full, **{f"{POOLED_VECTOR}_{p}": v for p, v in pooled.items()}},
                    {"tenant": "t"},
                )
            )
        store.upsert("visual", points)
        if (start // BATCH) % 20 == 19:
            print(f"  {shape}: {start + len(points)}/{n} pages indexed", file=sys.stderr, flush=True)
    upsert_s = time.perf_counter() - t0
    flt = Filter({"tenant": "t"})
    qs = [synth.query(i) for i in range(queries)]
    store.search("visual", VISUAL_VECTOR, qs[0], flt, 10)  # warm up
    exact, exact_ms = [], []
    for q in qs:
        t = time.perf_counter()
        exact.append({h.id for h in store.search("visual", VISUAL_VECTOR, q, flt, 10)})
        exact_ms.append((time.perf_counter() - t) * 1e3)
    disk = disk_usage(root)  # full fp16 + every pooled variant
    rows = []
    for pooling in poolings:
        avg_pooled = pooled_tokens[pooling] / n
        sizes = {
            "fp32": tokens * synth.dim * 4,
            "fp16": tokens * synth.dim * 2,
            "pooled_fp16": round(avg_pooled * synth.dim * 2),
            "binary": tokens * synth.dim // 8,
        }
        for width in widths:
            recall, two_ms = [], []
            for q, truth in zip(qs, exact, strict=True):
                t = time.perf_counter()
                first = Branch(f"{POOLED_VECTOR}_{pooling}", q)
                hits = store.two_stage_search("visual", first, Branch(VISUAL_VECTOR, q), flt, 10, width)
                two_ms.append((time.perf_counter() - t) * 1e3)
                recall.append(len({h.id for h in hits} & truth) / 10)
            e50, t50 = float(np.median(exact_ms)), float(np.median(two_ms))
            rows.append(
                {
                    "shape": shape,
                    "pages": n,
                    "tokens": tokens,
                    "dim": synth.dim,
                    "pooling": pooling,
                    "pooled_tokens_avg": round(avg_pooled, 1),
                    "width": width,
                    "recall_at_10": round(float(np.mean(recall)), 3),
                    "recall_min": round(float(np.min(recall)), 2),
                    "exact_p50_ms": round(e50, 2),
                    "two_stage_p50_ms": round(t50, 2),
                    "two_stage_vs_exact": round(t50 / e50, 3),
                    "bytes_per_page": sizes,
                    "engine_disk_bytes_per_page_all_variants": disk // n,
                    "upsert_pages_per_s": round(n / upsert_s, 1),
                }
            )
    if binary and signs:
        rows.append(
            binary_row(shape, n, signs, qs[:5], exact[:5], widths, synth.dim, rows[-1]["bytes_per_page"])
        )
    store.close()
    shutil.rmtree(root, ignore_errors=True)
    return rows


def binary_row(shape, n, signs, qs, exact, widths, dim, sizes) -> dict:  # noqa: ANN001
    """Binary storage alone (numpy): MaxSim of the float query against sign-quantised page
    tokens; its top 10 against exact full MaxSim (no rerank: the quality of 1 bit/dim)."""
    width = max(widths)
    recall, ms = [], []
    for q, truth in zip(qs, exact, strict=True):
        t = time.perf_counter()
        scores = np.empty(n, dtype=np.float32)
        for s in range(0, n, 256):  # unpacked block by block: 1 bit/dim in memory
            bits = np.stack([np.unpackbits(p, axis=1)[:, :dim] for p in signs[s : s + 256]])
            scores[s : s + 256] = ((bits.astype(np.float32) * 2 - 1) @ q.T).max(axis=1).sum(axis=1)
        top = np.argsort(-scores)[:width]
        ms.append((time.perf_counter() - t) * 1e3)
        recall.append(len({str(uuid.UUID(int=int(i))) for i in top[:10]} & truth) / 10)
    return {
        "shape": shape,
        "pages": n,
        "width": width,
        "first_stage": "binary (numpy, top-10 of the binary scan itself, 5 queries)",
        "recall_at_10": round(float(np.mean(recall)), 3),
        "binary_scan_p50_ms": round(float(np.median(ms)), 2),
        "bytes_per_page": sizes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--widths", default="50,100,200", help="First-stage widths (prefetch limits).")
    parser.add_argument("--shapes", default="colpali,lite", help="colpali and/or lite.")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--binary", action="store_true", help="Also a binary first stage (numpy).")
    parser.add_argument("--out", type=Path, default=REPO / "bench-visual.json")
    args = parser.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]
    facts = machine_facts()
    print("machine:", ", ".join(f"{k}={v}" for k, v in facts.items()))
    print("GPU: none on this machine (no GPU throughput numbers)")
    print(
        f"{'shape':<8}{'pages':>7}{'tok':>6}{'pooling':>10}{'pooled':>8}{'width':>7}{'R@10':>7}{'min':>6}"
        f"{'exact p50':>11}{'2-stage p50':>13}{'ratio':>7}{'fp32 B':>9}{'fp16 B':>9}{'pooled B':>10}"
        f"{'binary B':>10}{'disk B':>9}"
    )
    rows = []
    for shape in [s.strip() for s in args.shapes.split(",")]:
        if shape not in ("colpali", "lite"):
            parser.error(f"unknown shape {shape!r}")
        for r in bench_shape(shape, args.pages, widths, args.queries, args.binary, seed=args.pages):
            rows.append(r)
            b = r["bytes_per_page"]
            if "first_stage" in r:
                print(
                    f"{r['shape']:<8}{r['pages']:>7}  binary first stage: R@10 {r['recall_at_10']}, "
                    f"scan p50 {r['binary_scan_p50_ms']} ms, {b['binary']} B/page"
                )
                continue
            print(
                f"{r['shape']:<8}{r['pages']:>7}{r['tokens']:>6}{r['pooling']:>10}{r['pooled_tokens_avg']:>8}{r['width']:>7}"
                f"{r['recall_at_10']:>7}{r['recall_min']:>6}{r['exact_p50_ms']:>11}{r['two_stage_p50_ms']:>13}"
                f"{r['two_stage_vs_exact']:>7}{b['fp32']:>9}{b['fp16']:>9}{b['pooled_fp16']:>10}{b['binary']:>10}"
                f"{r['engine_disk_bytes_per_page_all_variants']:>9}",
                flush=True,
            )
    args.out.write_text(json.dumps({"machine": facts, "rows": rows}, indent=2))
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
