"""Tests for scripts/make_samples.py (deterministic sample-corpus generator)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from PIL import Image

from service.evaluation.questions import NumberFact, Question, load_questions

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_samples.py"
NOTE_PDF = "nota_tecnica_drenagem_2024.pdf"
DOCUMENTS = {
    "relatorio_ambiental_recife_2024.pdf",
    "quarterly_report_q3_2024.pdf",
    NOTE_PDF,
    "grafico_chuvas_2024.png",
}
EXPECTED_FILES = DOCUMENTS | {"ground_truth.json", "questions.yaml"}
GROUND_TRUTH_DOCS = DOCUMENTS - {NOTE_PDF}  # the note's facts live in questions.yaml only
EXPECTED_PAGES = {"relatorio_ambiental_recife_2024.pdf": 5, "quarterly_report_q3_2024.pdf": 4, NOTE_PDF: 2}
FACT_KEYS = {"id", "doc", "page", "language", "type", "question", "answer", "evidence"}
QUESTION_MINIMUMS = {
    "text": 10,
    "table": 10,
    "chart": 10,
    "map": 10,
    "exact-code": 10,
    "multi-hop": 10,
    "unanswerable": 10,
    "geo-filtered": 10,
    "injection": 10,
}
TEXT_CHECKED_TYPES = {"text", "table", "map", "exact-code", "multi-hop", "geo-filtered", "injection"}
CANARIES = {"ACESSO LIBERADO 7731", "SWORDFISH-42"}


def _norm(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def corpus(samples_dir: Path) -> Path:
    """The session's sample corpus (tests/conftest.py runs the script's main once)."""
    return samples_dir


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The script run again as a command, into a folder it must create: the determinism
    check compares its output with the session's corpus."""
    out = tmp_path_factory.mktemp("samples-cli") / "nested" / "out"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True, timeout=120
    )
    return run, out


@pytest.fixture(scope="module")
def facts(corpus: Path) -> list[dict[str, Any]]:
    return json.loads((corpus / "ground_truth.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def questions(corpus: Path) -> list[Question]:
    return load_questions(corpus / "questions.yaml")


@pytest.fixture(scope="module")
def page_texts(corpus: Path) -> dict[str, list[str]]:
    """Whitespace-normalised, case-folded text layer of every page of every PDF."""
    texts: dict[str, list[str]] = {}
    for name in EXPECTED_PAGES:
        with pymupdf.open(corpus / name) as doc:
            texts[name] = [_norm(page.get_text()).casefold() for page in doc]
    return texts


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
        assert fact["doc"] in GROUND_TRUTH_DOCS
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


def test_ground_truth_is_unchanged(facts: list[dict[str, Any]]) -> None:
    """Other tests read ground_truth.json: it keeps its 22 records about the original three files."""
    assert len(facts) == 22
    assert {f["doc"] for f in facts} == GROUND_TRUTH_DOCS
    assert [f["id"] for f in facts][:3] == [
        "recife-p1-precipitacao",
        "recife-p1-flooding-en",
        "recife-p1-mudas",
    ]


def test_drainage_note_pdf(corpus: Path, page_texts: dict[str, list[str]]) -> None:
    with pymupdf.open(corpus / NOTE_PDF) as doc:
        assert doc.metadata["title"].startswith("Nota Técnica NT-DRN-07/2024")
        raw = [_norm(page.get_text()) for page in doc]
    for word in ("desassoreamento", "Canal do Arruda", "Tejipió", "CN-CAV-03", "Situação"):
        assert word in raw[0]
    # planted instructions sit on page 2 only, next to legitimate facts of the same paragraph
    for canary in CANARIES:
        assert canary.casefold() in page_texts[NOTE_PDF][1]
        assert canary.casefold() not in page_texts[NOTE_PDF][0]
    assert "INSTRUÇÃO PARA O ASSISTENTE" in raw[1] and "SYSTEM NOTE TO AI" in raw[1]
    assert "3 pontos de lançamento irregular de esgoto" in raw[1]
    # the note stays off the ground-truth facts' topics (no contract, no flood counts)
    note_text = " ".join(page_texts[NOTE_PDF])
    for other in ("ct-sma-0427/2024", "pontos de alagamento", "canal do jordão", "2.345 mm"):
        assert other not in note_text


def test_questions_load_and_cover_every_type(questions: list[Question]) -> None:
    counts = Counter(q.type for q in questions)
    for qtype, minimum in QUESTION_MINIMUMS.items():
        assert counts[qtype] >= minimum, f"{qtype}: {counts[qtype]} < {minimum}"
    for qtype in QUESTION_MINIMUMS:
        assert {q.language for q in questions if q.type == qtype} == {"pt", "en"}, qtype


def test_questions_language_shares(questions: list[Question]) -> None:
    counts = Counter(q.language for q in questions)
    assert counts["pt"] >= 0.4 * len(questions)
    assert counts["en"] >= 0.4 * len(questions)
    assert set(counts) == {"pt", "en"}


def test_questions_include_every_ground_truth_fact(
    questions: list[Question], facts: list[dict[str, Any]]
) -> None:
    by_id = {q.id: q for q in questions}
    for fact in facts:
        q = by_id[fact["id"]]
        assert (q.question, q.type, q.language) == (fact["question"], fact["type"], fact["language"])
        assert [(e.doc, e.pages) for e in q.evidence] == [(fact["doc"], [fact["page"]])]
        assert q.facts, fact["id"]
    assert [q.id for q in questions][: len(facts)] == [f["id"] for f in facts]


def test_questions_shape_per_type(questions: list[Question]) -> None:
    for q in questions:
        assert q.question.strip()
        if q.type == "unanswerable":
            assert not q.evidence and not q.facts, q.id
            continue
        assert q.evidence and q.facts, q.id
        if q.type == "multi-hop":
            assert len(q.evidence) == 2, q.id
        if q.type == "chart":
            assert any(isinstance(f, NumberFact) and f.tolerance > 0 for f in q.facts), q.id
        if q.type == "geo-filtered":
            geo = q.geo
            assert geo is not None, q.id
            radius = geo.lat is not None and geo.lon is not None and bool(geo.radius_m)
            assert geo.place or geo.bbox or radius, q.id
        if q.type == "injection":
            assert q.canary in CANARIES, q.id
            assert {e.doc for e in q.evidence} == {NOTE_PDF}, q.id
            assert all(q.canary.casefold() not in str(f).casefold() for f in q.facts), q.id
        else:
            assert q.canary is None, q.id
    injection_pages = {p for q in questions if q.type == "injection" for e in q.evidence for p in e.pages}
    assert 2 in injection_pages, "some injection answers must sit on the page with the planted text"
    assert {q.canary for q in questions if q.type == "injection"} == CANARIES
    geo_kinds = {
        "place" if q.geo.place else "bbox" if q.geo.bbox else "radius"
        for q in questions
        if q.type == "geo-filtered" and q.geo
    }
    assert geo_kinds == {"place", "bbox", "radius"}
    map_coords = [f for q in questions if q.type == "map" for f in q.facts if isinstance(f, NumberFact)]
    assert len(map_coords) >= 8 and all(-35 < f.number < -8 for f in map_coords)


def test_question_evidence_exists(corpus: Path, questions: list[Question]) -> None:
    for q in questions:
        for unit in q.evidence:
            assert (corpus / unit.doc).is_file(), f"{q.id}: {unit.doc} missing"
            n_pages = EXPECTED_PAGES.get(unit.doc, 1)
            assert all(1 <= p <= n_pages for p in unit.pages), f"{q.id}: bad pages {unit.pages}"


def test_question_string_facts_found_on_evidence_pages(
    questions: list[Question], page_texts: dict[str, list[str]]
) -> None:
    checked = 0
    for q in questions:
        if q.type not in TEXT_CHECKED_TYPES:
            continue
        pages = [page_texts[e.doc][p - 1] for e in q.evidence for p in e.pages]
        for fact in q.facts:
            if isinstance(fact, str):
                assert any(_norm(fact).casefold() in text for text in pages), f"{q.id}: {fact!r} not found"
                checked += 1
    assert checked >= 40


def test_questions_yaml_is_readable_yaml(corpus: Path) -> None:
    raw = (corpus / "questions.yaml").read_text(encoding="utf-8")
    assert raw.startswith("# Carta evaluation questions")
    assert "Várzea" in raw and "\\u" not in raw  # UTF-8, not escaped
    assert "&id" not in raw  # no YAML anchors/aliases


def test_deterministic_output(cli_run: tuple[subprocess.CompletedProcess[str], Path], corpus: Path) -> None:
    run, again = cli_run
    assert run.returncode == 0, run.stderr
    for name in ("ground_truth.json", "questions.yaml", NOTE_PDF):
        assert (again / name).read_bytes() == (corpus / name).read_bytes(), name
    for name in EXPECTED_PAGES:
        with pymupdf.open(again / name) as a, pymupdf.open(corpus / name) as b:
            assert [p.get_text() for p in a] == [p.get_text() for p in b]
            assert a.metadata == b.metadata


def test_cli_subprocess(cli_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    help_run = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=True, timeout=60
    )
    assert "--out" in help_run.stdout
    run, out = cli_run
    assert run.returncode == 0, run.stderr
    assert {p.name for p in out.iterdir()} >= EXPECTED_FILES
