"""Tests for scripts/make_samples.py (deterministic sample-corpus generator)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pymupdf
import pytest
from PIL import Image

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_samples.py"
EXPECTED_FILES = {
    "relatorio_ambiental_recife_2024.pdf",
    "quarterly_report_q3_2024.pdf",
    "grafico_chuvas_2024.png",
    "ground_truth.json",
}
EXPECTED_PAGES = {"relatorio_ambiental_recife_2024.pdf": 5, "quarterly_report_q3_2024.pdf": 4}
FACT_KEYS = {"id", "doc", "page", "language", "type", "question", "answer", "evidence"}


def _norm(text: str) -> str:
    return " ".join(text.split())


def _load_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_samples", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def make_samples() -> ModuleType:
    return _load_module()


@pytest.fixture(scope="module")
def corpus(make_samples: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("samples") / "nested" / "out"  # must be created by the generator
    assert make_samples.main(["--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def facts(corpus: Path) -> list[dict[str, Any]]:
    return json.loads((corpus / "ground_truth.json").read_text(encoding="utf-8"))


def test_all_files_exist(corpus: Path) -> None:
    assert {p.name for p in corpus.iterdir()} >= EXPECTED_FILES
    for name in EXPECTED_FILES:
        assert (corpus / name).stat().st_size > 0


def test_pdfs_open_with_expected_pages_and_text(corpus: Path) -> None:
    for name, n_pages in EXPECTED_PAGES.items():
        with pymupdf.open(corpus / name) as doc:
            assert doc.page_count == n_pages
            for page in doc:
                assert page.rect.width == pytest.approx(595, abs=1)
                assert page.rect.height == pytest.approx(842, abs=1)
                assert len(_norm(page.get_text())) >= 200, f"{name} p{page.number + 1} has too little text"


def test_portuguese_accents_survive(corpus: Path) -> None:
    with pymupdf.open(corpus / "relatorio_ambiental_recife_2024.pdf") as doc:
        text = _norm(" ".join(page.get_text() for page in doc))
    for word in ("Relatório", "água", "Própria", "Imprópria", "Várzea", "Precipitação", "Açude"):
        assert word in text


def test_png_chart(corpus: Path) -> None:
    with Image.open(corpus / "grafico_chuvas_2024.png") as img:
        assert img.format == "PNG"
        assert img.size == (1200, 800)


def test_ground_truth_schema(facts: list[dict[str, Any]]) -> None:
    assert len(facts) >= 12
    ids = [f["id"] for f in facts]
    assert len(ids) == len(set(ids))
    for fact in facts:
        assert set(fact) == FACT_KEYS
        assert fact["doc"] in EXPECTED_FILES - {"ground_truth.json"}
        assert fact["language"] in {"pt", "en"}
        assert fact["type"] in {"text", "table", "chart", "map", "exact-code"}
        assert isinstance(fact["page"], int) and fact["page"] >= 1
        assert fact["question"].strip() and fact["answer"].strip()
        if fact["doc"].endswith(".png"):
            assert fact["page"] == 1 and fact["evidence"] is None
        else:
            assert fact["page"] <= EXPECTED_PAGES[fact["doc"]]


def test_ground_truth_coverage(facts: list[dict[str, Any]]) -> None:
    assert {f["type"] for f in facts} >= {"text", "table", "chart", "map", "exact-code"}
    assert {f["language"] for f in facts} == {"pt", "en"}
    recife = [f for f in facts if f["doc"] == "relatorio_ambiental_recife_2024.pdf"]
    assert any(f["language"] == "en" for f in recife), "expected English questions about the pt report"
    assert any(f["doc"] == "grafico_chuvas_2024.png" for f in facts)


def test_evidence_found_on_page(corpus: Path, facts: list[dict[str, Any]]) -> None:
    texts: dict[str, list[str]] = {}
    for name in EXPECTED_PAGES:
        with pymupdf.open(corpus / name) as doc:
            texts[name] = [_norm(page.get_text()) for page in doc]
    checked = 0
    for fact in facts:
        if fact["evidence"] is None:
            continue
        page_text = texts[fact["doc"]][fact["page"] - 1]
        assert _norm(fact["evidence"]) in page_text, f"{fact['id']}: evidence not on page {fact['page']}"
        checked += 1
    assert checked >= 12


def test_deterministic_output(make_samples: ModuleType, corpus: Path, tmp_path: Path) -> None:
    assert make_samples.main(["--out", str(tmp_path)]) == 0
    gt = "ground_truth.json"
    assert (tmp_path / gt).read_bytes() == (corpus / gt).read_bytes()
    for name in EXPECTED_PAGES:
        with pymupdf.open(tmp_path / name) as a, pymupdf.open(corpus / name) as b:
            assert [p.get_text() for p in a] == [p.get_text() for p in b]
            assert a.metadata == b.metadata


def test_cli_subprocess(tmp_path: Path) -> None:
    help_run = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=True, timeout=60
    )
    assert "--out" in help_run.stdout
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert {p.name for p in tmp_path.iterdir()} >= EXPECTED_FILES
