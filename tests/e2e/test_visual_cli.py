"""`carta reindex` as a user runs it after switching CARTA_PROFILE from lite to visual (the
command in the test process, tests/utils/cli.py: a subprocess would import torch and load the
models again)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from index.types import Filter
from ingest.upload import IngestRequest
from service.carta import Carta
from tests.tiny_visual import TinyVisualModels, sample_pdf, visual_settings
from tests.utils.cli import run_cli


def test_cli_warns_about_profile_change_and_reindex_fixes_it(
    make_carta: Callable[..., Carta], tiny_visual_models: TinyVisualModels, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    lite = make_carta(data, geotag=False, ocr_enabled=False)
    doc = lite.ingest(IngestRequest(sample_pdf(), "report.pdf", "default")).document
    lite.close()
    settings = visual_settings(tiny_visual_models, "colpali")
    run = run_cli("reindex", data_dir=data, env={f"CARTA_{k.upper()}": str(v) for k, v in settings.items()})
    said = " ".join(run.stderr.split())  # the console wraps its lines at 80 columns
    assert "run `carta reindex`" in said  # the warning printed on opening the data dir
    assert "re-indexed 1 document(s) for profile visual" in said

    carta = make_carta(data, **visual_settings(tiny_visual_models, "colpali"))
    assert carta.reindex_needed() is None
    assert carta.collections.visual is not None
    assert carta.store.count(carta.collections.visual.name, Filter({"doc_id": doc.id})) == 3
