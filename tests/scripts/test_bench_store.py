"""The store benchmark runs at a tiny size and its engine results agree with the numpy
brute-force reference (the benchmark's correctness check, not a speed assertion)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_store_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "store.json"
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "bench_store.py"),
            "--sizes",
            "30,60",
            "--shapes",
            "lite,colpali",
            "--queries",
            "3",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "engine p50" in run.stdout
    data = json.loads(out.read_text())
    assert data["machine"]["cores"] >= 1
    assert [(r["shape"], r["pages"]) for r in data["rows"]] == [
        ("lite", 30),
        ("lite", 60),
        ("colpali", 30),
        ("colpali", 60),
    ]
    assert all(r["top10_agreement"] == 1.0 for r in data["rows"])
    assert all(r["disk_bytes_per_page"] > 0 and r["engine_p50_ms"] > 0 for r in data["rows"])
    assert set(data["growth_exponent"]) == {"lite", "colpali"}
