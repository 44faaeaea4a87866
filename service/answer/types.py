"""The answer side's data: an answer, its citations, and the events a stream emits.

Shared by the extractive, LLM and graph answerers, the HTTP API and the CLI, so that every
path gives one response shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from service.query.types import PageEvidence

AnswerStatus = Literal["answer", "passages", "refused"]


@dataclass
class Citation:
    """A claim's source: a page, the quote supporting it and where it is (bbox, page points)."""

    doc_id: str
    page_no: int
    title: str
    bbox: list[float]
    quote: str


@dataclass
class InvalidCitation:
    """A citation pointing outside the evidence sent (found by service/answer/citations.py)."""

    doc_id: str
    page_no: int
    reason: str


@dataclass
class CitationCheck:
    """The citations of an answer, checked against the evidence sent."""

    citations: list[Citation] = field(default_factory=list)  # valid, in order of first mention
    invalid: list[InvalidCitation] = field(default_factory=list)
    uncited_sentences: int = 0  # sentences with content but no citation marker

    @property
    def grounded(self) -> bool:
        return bool(self.citations) and not self.invalid


@dataclass
class Answer:
    """The full answer to a question, with its evidence and how it was made."""

    question: str
    answer: str
    language: str
    grounded: bool
    refused: bool
    citations: list[Citation] = field(default_factory=list)
    evidence: list[PageEvidence] = field(default_factory=list)
    relevance: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)
    geo_filter: dict | None = None
    geo_prior: dict | None = None
    graph: dict | None = None  # relational evidence (graph.evidence.graph_block)
    answerer: str = "extractive"  # or "llm"
    invalid_citations: list[InvalidCitation] = field(default_factory=list)
    usage: dict | None = None  # LLM path: budgets, what was sent, tokens used
    # What the user got: a composed "answer", only "passages" the evidence offers, or "refused".
    status: AnswerStatus = "answer"
    plan: dict | None = None  # the query planner's trace (service/query/planner.py), when it ran
    communities: dict | None = None  # a global answer's communities (service/answer/global_answer.py)

    def __post_init__(self) -> None:
        if self.refused:
            self.status = "refused"


EventKind = Literal["plan", "evidence", "token", "citations", "done"]


@dataclass
class Event:
    """One step of an answer stream; in order: plan (when the planner ran), evidence, token...,
    citations, done."""

    kind: EventKind
    data: list[PageEvidence] | str | CitationCheck | Answer | dict
