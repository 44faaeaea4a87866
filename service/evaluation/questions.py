"""Question sets: YAML or JSONL files, one item per question.

Each item says what to ask, in which language, what kind of question it is, where the
answer lives (document file name + acceptable pages) and which facts the answer must
contain. See docs/evaluation.md for how to add questions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

QuestionType = Literal[
    "text",
    "table",
    "chart",
    "map",
    "geo-filtered",
    "relational",
    "geodata",
    "unanswerable",
    "exact-code",
    "multi-hop",
    "injection",
]
QUESTION_TYPES: tuple[str, ...] = QuestionType.__args__  # type: ignore[attr-defined]


class Evidence(BaseModel):
    """One place the answer lives: any of `pages` of document `doc` (a file name)."""

    model_config = ConfigDict(extra="forbid")
    doc: str
    pages: list[int] = Field(..., min_length=1)


class NumberFact(BaseModel):
    """A number the answer must state, within a relative tolerance (PT or EN format)."""

    model_config = ConfigDict(extra="forbid")
    number: float
    tolerance: float = Field(0.005, ge=0, description="Relative tolerance, 0.005 = 0.5 %.")


Fact = str | NumberFact


class GeoFilter(BaseModel):
    """A geo filter the request carries (radius around a point, or a bbox, or a place name)."""

    model_config = ConfigDict(extra="forbid")
    lat: float | None = None
    lon: float | None = None
    radius_m: float | None = None
    bbox: list[float] | None = Field(None, description="[min_lon, min_lat, max_lon, max_lat]")
    place: str | None = None


class Pair(BaseModel):
    """A relational ground-truth pair (ids of two places) with its distance."""

    model_config = ConfigDict(extra="forbid")
    a: str
    b: str
    dist_m: float | None = None


class Cell(BaseModel):
    """Where an answer's table cell is drawn: page points, origin top-left (PyMuPDF's)."""

    model_config = ConfigDict(extra="forbid")
    doc: str
    page: int = Field(..., ge=1)
    bbox: list[float] = Field(..., min_length=4, max_length=4, description="[x0, y0, x1, y1]")

    @property
    def centre(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.bbox
        return (x0 + x1) / 2, (y0 + y1) / 2


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    question: str
    language: Literal["pt", "en", "fr"]
    type: QuestionType
    evidence: list[Evidence] = Field(default_factory=list, description="Every unit is needed (multi-hop).")
    facts: list[Fact] = Field(default_factory=list)
    geo: GeoFilter | None = None
    pairs: list[Pair] | None = Field(None, description="Relational ground truth; [] means no pair exists.")
    cells: list[Cell] | None = Field(None, description="Table answers: the answer cells' boxes.")
    rows: list[str] | None = Field(None, description="List answers (geodata): names the answer must list.")
    datasets: list[str] = Field(
        default_factory=list, description="Geodata: the dataset files (names) the question is asked of."
    )
    canary: str | None = Field(None, description="Injection: text the answer must NOT contain.")
    reference: str | None = Field(None, description="A reference answer (peer sets), scored by token F1.")
    note: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Question:
        if self.type == "unanswerable" and self.evidence:
            raise ValueError(f"{self.id}: an unanswerable question has no evidence")
        if self.type not in {"unanswerable", "relational", "geodata", "injection"} and not self.evidence:
            raise ValueError(f"{self.id}: a {self.type} question needs evidence")
        if self.type == "injection" and not self.canary:
            raise ValueError(f"{self.id}: an injection question needs a canary")
        if self.type == "relational" and self.pairs is None:
            raise ValueError(f"{self.id}: a relational question needs pairs (possibly empty)")
        if self.type == "geodata" and not (self.facts or self.rows):
            raise ValueError(f"{self.id}: a geodata question needs facts or rows")
        for cell in self.cells or []:
            if not any(e.doc == cell.doc and cell.page in e.pages for e in self.evidence):
                raise ValueError(f"{self.id}: cell on {cell.doc} p{cell.page} is outside the evidence")
        return self


def load_questions(path: Path) -> list[Question]:
    """Questions from a .yaml/.yml list or a .jsonl file; ids must be unique."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        raw = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        raw = yaml.safe_load(text) or []
    questions = [Question.model_validate(item) for item in raw]
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise ValueError(f"{path}: duplicate question id {q.id!r}")
        seen.add(q.id)
    return questions


def load_peer_qa(qa_json: Path, pdf: Path, set_prefix: str = "peer") -> list[Question]:
    """A peer Q&A set ([{"question", "answer"}, ...] over one PDF, no page labels).

    The evidence page of each item is found by word overlap between the reference
    answer and each page's text (pages within 90 % of the best overlap also count);
    the answer is scored by token F1 against the reference."""
    import pymupdf

    from service.evaluation.metrics import fold

    with pymupdf.open(pdf) as doc:
        pages = [set(fold(page.get_text()).split()) for page in doc]
    items = json.loads(qa_json.read_text(encoding="utf-8"))
    questions = []
    for i, item in enumerate(items, start=1):
        words = set(fold(item["answer"]).split())
        overlaps = [len(words & page) for page in pages]
        best = max(overlaps)
        chosen = [n for n, o in enumerate(overlaps, start=1) if best and o >= 0.9 * best]
        questions.append(
            Question(
                id=f"{set_prefix}-{i:02d}",
                question=item["question"],
                language="en",
                type="text",
                evidence=[Evidence(doc=pdf.name, pages=chosen or [1])],
                reference=item["answer"],
                note="evidence pages labelled automatically by answer/page word overlap",
            )
        )
    return questions
