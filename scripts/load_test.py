"""Load test on loopback (bounded, self-stopping): a `carta serve` process with the sample
corpus, N concurrent clients searching and asking for D seconds while another client keeps
uploading new PDFs (each waited for through its job). Prints p50/p95/p99 per operation and
the error count; exit 1 on any error.

    python scripts/load_test.py --clients 32 --seconds 60
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from crash_test import Server, make_pdf  # noqa: E402

QUESTIONS = [
    "What was the Q3 2024 revenue of SKU NW-4471?",
    "Quais são as coordenadas do Parque da Jaqueira?",
    "pontos de alagamento por bairro",
    "qualidade da água no Capibaribe",
    "churn rate by month",
    "chuvas em 2024 por mês",
    "drenagem urbana Recife",
    "revenue by region",
]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import make_samples

    with tempfile.TemporaryDirectory(prefix="carta-load-") as tmp:
        samples = Path(tmp) / "samples"
        make_samples.main(["--out", str(samples)])
        server = Server(
            Path(tmp) / "data", extra_args=["--ingest-samples", str(samples)], env={"CARTA_GEOTAG": "true"}
        )
        print("starting carta serve (samples indexed on start) ...", flush=True)
        server.start(timeout=900)
        latencies: dict[str, list[float]] = defaultdict(list)
        errors: dict[str, list[str]] = defaultdict(list)
        lock = threading.Lock()
        stop_at = time.perf_counter() + args.seconds
        ingested = [0]

        def record(op: str, seconds: float, error: str | None) -> None:
            with lock:
                latencies[op].append(seconds)
                if error:
                    errors[op].append(error)

        def reader(n: int) -> None:
            rng = random.Random(args.seed * 1000 + n)
            with httpx.Client(base_url=server.url, timeout=600) as client:
                while time.perf_counter() < stop_at:
                    op = rng.choice(["search", "ask"])
                    body = {"query" if op == "search" else "question": rng.choice(QUESTIONS), "top_k": 5}
                    t0 = time.perf_counter()
                    try:
                        r = client.post(f"/v1/{op}", json=body)
                        error = None if r.status_code == 200 else f"HTTP {r.status_code}: {r.text[:120]}"
                    except httpx.HTTPError as exc:
                        error = f"{exc.__class__.__name__}: {exc}"
                    record(op, time.perf_counter() - t0, error)

        def writer() -> None:
            rng = random.Random(args.seed)
            with httpx.Client(base_url=server.url, timeout=300) as client:
                i = 0
                while time.perf_counter() < stop_at:
                    t0 = time.perf_counter()
                    error = None
                    try:
                        r = client.post(
                            "/v1/documents", files={"file": (f"load{i}.pdf", make_pdf(rng, f"load {i}"))}
                        )
                        job = r.json()["job"]
                        while job["status"] not in ("ready", "failed"):
                            time.sleep(0.2)
                            job = client.get(f"/v1/jobs/{job['id']}").json()
                        if job["status"] != "ready":
                            error = f"job failed: {job['error']}"
                        else:
                            ingested[0] += 1
                    except (httpx.HTTPError, KeyError) as exc:
                        error = f"{exc.__class__.__name__}: {exc}"
                    record("ingest (upload to ready)", time.perf_counter() - t0, error)
                    i += 1

        threads = [threading.Thread(target=reader, args=(n,)) for n in range(args.clients)]
        threads.append(threading.Thread(target=writer))
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - started
        server.stop()

    print(
        f"\n{args.clients} clients searching/asking for {args.seconds:.0f} s while ingesting; "
        f"wall {wall:.1f} s"
    )
    print(f"{'operation':<26} {'n':>6} {'errors':>6} {'req/s':>7} {'p50_ms':>8} {'p95_ms':>8} {'p99_ms':>8}")
    for op in sorted(latencies):
        values = latencies[op]
        print(
            f"{op:<26} {len(values):>6} {len(errors[op]):>6} {len(values) / wall:>7.1f} "
            f"{percentile(values, 0.5) * 1000:>8.0f} {percentile(values, 0.95) * 1000:>8.0f} "
            f"{percentile(values, 0.99) * 1000:>8.0f}"
        )
    print(
        f"mean search/ask latency {statistics.mean(latencies['search'] + latencies['ask']) * 1000:.0f} ms; "
        f"documents ingested during the run: {ingested[0]}"
    )
    total_errors = sum(len(v) for v in errors.values())
    for op, errs in errors.items():
        for e in errs[:3]:
            print(f"  error in {op}: {e}")
    print(f"errors: {total_errors}")
    return 1 if total_errors else 0


if __name__ == "__main__":
    sys.exit(main())
