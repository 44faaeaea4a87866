"""The visual benchmark runs tiny; with a first stage as wide as the collection the
two-stage result must equal exact MaxSim (its correctness check, not a speed assertion)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_visual_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "visual.json"
    args = ["--pages", "30", "--queries", "3", "--widths", "3,30", "--shapes", "colpali,lite", "--binary"]
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench_visual.py"), *args, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "2-stage p50" in run.stdout and "binary first stage" in run.stdout
    rows = json.loads(out.read_text())["rows"]
    two_stage = [r for r in rows if "pooling" in r]
    assert {(r["shape"], r["pooling"], r["width"]) for r in two_stage} == {
        (shape, pooling, width)
        for shape, pooling in [("colpali", "rowcol"), ("colpali", "blocks4x4"), ("lite", "runs8")]
        for width in (3, 30)
    }
    assert all(r["recall_at_10"] == 1.0 for r in two_stage if r["width"] == 30)
    colpali = next(r for r in two_stage if r["shape"] == "colpali")
    assert colpali["tokens"] == 1030 and colpali["bytes_per_page"] == {
        "fp32": 1030 * 128 * 4,
        "fp16": 1030 * 128 * 2,
        "pooled_fp16": 70 * 128 * 2,
        "binary": 1030 * 128 // 8,
    }
