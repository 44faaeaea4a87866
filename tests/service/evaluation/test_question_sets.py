"""Every question file in eval/questions validates, the new fields (cells, rows, datasets,
the geodata type) load and are checked, and each table question's cell box holds the answer
on the page itself."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from pydantic import ValidationError

from service.evaluation.metrics import fact_found
from service.evaluation.questions import NumberFact, Question, load_questions
from tests.conftest import corpus_path

QUESTIONS = Path(__file__).resolve().parents[3] / "eval" / "questions"
SPECS = {"relational_spec.yaml"}  # the input of make_relational_truth.py, not a question list


@pytest.mark.parametrize("path", sorted(p.name for p in QUESTIONS.glob("*.yaml") if p.name not in SPECS))
def test_every_question_file_validates(path: str) -> None:
    questions = load_questions(QUESTIONS / path)
    assert questions and all(q.question.strip() for q in questions)


def test_new_sets_are_big_enough_and_bilingual() -> None:
    for name, at_least in (("tables.yaml", 45), ("maps.yaml", 28), ("geodata.yaml", 55)):
        questions = load_questions(QUESTIONS / name)
        langs = [q.language for q in questions]
        assert len(questions) >= at_least, name
        assert min(langs.count("pt"), langs.count("en")) >= len(questions) // 3, name
    tables = load_questions(QUESTIONS / "tables.yaml")
    assert all(q.type == "table" and q.cells and q.facts for q in tables)
    geodata = load_questions(QUESTIONS / "geodata.yaml")
    assert all(q.type == "geodata" and q.datasets and (q.facts or q.rows) for q in geodata)
    maps = load_questions(QUESTIONS / "maps.yaml")
    assert any(q.geo and q.geo.place for q in maps) and any(q.geo is None for q in maps)


def test_cells_rows_and_datasets_load() -> None:
    q = Question.model_validate(
        {
            "id": "t",
            "question": "Nagaland 2001-11?",
            "language": "en",
            "type": "table",
            "evidence": [{"doc": "a.pdf", "pages": [1]}],
            "facts": [{"number": -0.47}],
            "cells": [{"doc": "a.pdf", "page": 1, "bbox": [10, 20, 30, 40]}],
        }
    )
    assert q.cells and q.cells[0].centre == (20.0, 30.0)
    g = Question.model_validate(
        {
            "id": "g",
            "question": "Quais escolas ficam em Boa Viagem?",
            "language": "pt",
            "type": "geodata",
            "datasets": ["schools.geojson"],
            "rows": ["Escola A", "Escola B"],
        }
    )
    assert g.rows == ["Escola A", "Escola B"] and g.evidence == []


def test_bad_cells_and_empty_geodata_are_refused() -> None:
    base = {
        "id": "t",
        "question": "q",
        "language": "en",
        "type": "table",
        "evidence": [{"doc": "a.pdf", "pages": [1]}],
    }
    with pytest.raises(ValidationError, match="outside the evidence"):
        Question.model_validate({**base, "cells": [{"doc": "a.pdf", "page": 2, "bbox": [0, 0, 1, 1]}]})
    with pytest.raises(ValidationError):
        Question.model_validate({**base, "cells": [{"doc": "a.pdf", "page": 1, "bbox": [0, 0, 1]}]})
    with pytest.raises(ValidationError, match="needs facts or rows"):
        Question.model_validate({"id": "g", "question": "q", "language": "pt", "type": "geodata"})


def test_table_cells_hold_the_answer_on_the_page() -> None:
    """The text inside every cell box, read with pymupdf, states the question's number (or,
    for argmax/argmin questions, the cell is on the page the evidence names)."""
    corpus_path("pdf")
    for q in load_questions(QUESTIONS / "tables.yaml"):
        for cell in q.cells or []:
            with pymupdf.open(corpus_path("pdf", cell.doc)) as doc:
                page = doc[cell.page - 1]
                text = page.get_textbox(pymupdf.Rect(cell.bbox))
                assert text.strip(), q.id
                numbers = [(f.number, f.tolerance) for f in q.facts if isinstance(f, NumberFact)]
                assert all(fact_found(text, n) for n in numbers), (q.id, text)
                x0, y0, x1, y1 = cell.bbox
                row = page.get_text("text", clip=pymupdf.Rect(0, y0, page.rect.width, y1))
                column = page.get_text("text", clip=pymupdf.Rect(x0 - 20, 0, x1 + 20, page.rect.height))
                names = [f for f in q.facts if isinstance(f, str)]
                # a name fact is the cell's row label or column header (argmax/argmin) or the cell
                assert all(any(fact_found(t, f) for t in (row, column, text)) for f in names), q.id
