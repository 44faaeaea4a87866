"""`carta reindex` as a user runs it after switching CARTA_PROFILE from lite to visual."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from index.types import Filter
from ingest.upload import IngestRequest
from service.carta import Carta
from tests.tiny_visual import TinyVisualModels, sample_pdf, visual_settings


def test_cli_warns_about_profile_change_and_reindex_fixes_it(
    make_carta: Callable[..., Carta], tiny_visual_models: TinyVisualModels, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    lite = make_carta(data, geotag=False, ocr_enabled=False)
    doc = lite.ingest(IngestRequest(sample_pdf(), "report.pdf", "default")).document
    lite.close()
    env = {**os.environ, "CARTA_DATA_DIR": str(data)}
    settings = visual_settings(tiny_visual_models, "colpali")
    env.update({f"CARTA_{k.upper()}": str(v) for k, v in settings.items()})
    run = subprocess.run(
        [sys.executable, "-m", "service.cli", "reindex"], env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "carta reindex" in run.stderr  # the warning printed on opening the data dir
    assert "re-indexed 1 document(s) for profile visual" in run.stderr

    carta = make_carta(data, **visual_settings(tiny_visual_models, "colpali"))
    assert carta.reindex_needed() is None
    assert carta.collections.visual is not None
    assert carta.store.count(carta.collections.visual.name, Filter({"doc_id": doc.id})) == 3
