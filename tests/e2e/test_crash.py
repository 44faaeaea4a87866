"""kill -9 of a `carta serve` process during ingestion, then restart (scripts/crash_test.py
runs 30 of these; the suite runs 2: a kill, a restart, a kill of the restarted server):
every job ends ready or failed, no document is ever partially visible, the store opens and
holds points of ready documents only."""

from __future__ import annotations

from pathlib import Path

from tests.utils.scripts import load_script


def test_kill9_during_ingestion_then_restart(tmp_path: Path) -> None:
    crash = load_script("crash_test")
    rounds, problems = crash.run(kills=2, data_dir=tmp_path / "data", seed=3, uploads_per_round=2)
    assert problems == []
    assert len(rounds) == 2
    assert all(r.stuck == 0 and r.partial_visible == 0 for r in rounds)
    assert rounds[-1].ready + rounds[-1].failed == 4  # every job of every round settled
    resumed, jobs = crash.resumed_jobs(tmp_path / "data")
    assert jobs == 4
