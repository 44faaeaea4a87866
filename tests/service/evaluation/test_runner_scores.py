"""The runner's scores for table cells, answer status, refusals on answerable questions and
geodata rows, on hand-built answers from a stand-in client (no index, no models)."""

from __future__ import annotations

from typing import Any

from service.cli.client import RequestFailed
from service.evaluation import runner
from service.evaluation.questions import Question

CELL = [538.5, 438.4, 559.1, 448.5]
TABLE_Q = Question.model_validate(
    {
        "id": "nagaland",
        "question": "What was Nagaland's decadal population growth rate in 2001-2011?",
        "language": "en",
        "type": "table",
        "evidence": [{"doc": "pop.pdf", "pages": [1]}],
        "facts": [{"number": -0.47, "tolerance": 0.001}],
        "cells": [{"doc": "pop.pdf", "page": 1, "bbox": CELL}],
    }
)
GEO_Q = Question.model_validate(
    {
        "id": "boa-viagem",
        "question": "Quais escolas ficam em Boa Viagem?",
        "language": "pt",
        "type": "geodata",
        "datasets": ["schools.geojson"],
        "facts": [{"number": 2, "tolerance": 0}],
        "rows": ["Escola Municipal Do Leao", "Escola Municipal Karla Patricia"],
    }
)
MISSING_DS = Question.model_validate({**GEO_Q.model_dump(), "id": "other", "datasets": ["absent.pbf"]})


class StandIn:
    """A CartaClient that answers every question with the answer it was given."""

    def __init__(self, answers: dict[str, dict[str, Any]], datasets: list[str] | None = None) -> None:
        self.answers = answers
        self._datasets = datasets

    def documents(self) -> list[dict[str, Any]]:
        return [{"filename": "pop.pdf", "id": "d1", "status": "ready"}]

    def datasets(self) -> list[dict[str, Any]]:
        if self._datasets is None:
            raise RequestFailed("the graph is turned off")
        return [{"filename": f} for f in self._datasets]

    def search(self, text: str, **_: Any) -> dict[str, Any]:
        return {"results": [{"doc_id": "d1", "page_no": 1}]}

    def ask(self, question: str, **_: Any) -> dict[str, Any]:
        return self.answers[question]

    def page_text(self, doc_id: str, page_no: int) -> str:
        return "Nagaland 14.07 39.88 50.05 56.08 64.53 -0.47"


def table_answer(bbox: list[float], status: str | None = "answer", refused: bool = False) -> dict[str, Any]:
    answer = {
        "answer": "Nagaland's decadal growth in 2001-2011 was -0.47% [pop p.1].",
        "refused": refused,
        "citations": [{"doc_id": "d1", "page_no": 1, "bbox": bbox}],
        "evidence": [{"doc_id": "d1", "page_no": 1}],
    }
    if status:
        answer["status"] = status
    return answer


def run_table(answer: dict[str, Any]) -> runner.QuestionResult:
    client = StandIn({TABLE_Q.question: answer})
    return runner.run({"t": [TABLE_Q]}, client)[0]  # type: ignore[arg-type]


def test_cell_citation_right_and_wrong() -> None:
    right = run_table(table_answer([40.0, 436.0, 570.0, 450.0]))
    assert right.answer["cell_citation"] is True and right.answer["fact_accuracy"] == 1.0
    wrong = run_table(table_answer([40.0, 80.0, 570.0, 95.0]))
    assert wrong.answer["cell_citation"] is False
    summary = runner.summarize([right, wrong])
    assert summary["outcomes"]["table"]["cell_citation"] == 0.5
    assert "| table | 2 | 1.000 | 0.000 | 0.000 | 1.000 | 0.500 |" in runner.markdown(summary)


def test_status_split_and_refusals_on_answerable() -> None:
    passages = run_table(table_answer(CELL, status="passages"))
    refused = run_table({**table_answer(CELL, status=None, refused=True), "citations": []})
    legacy = run_table(table_answer(CELL, status=None))  # a server without the field
    assert (passages.answer["status"], refused.answer["status"], legacy.answer["status"]) == (
        "passages",
        "refused",
        "answer",
    )
    assert refused.answer["answerable_not_refused"] is False and refused.answer["cell_citation"] is False
    summary = runner.summarize([passages, refused, legacy])
    row = summary["outcomes"]["table"]
    assert (row["answer"], row["passages"], row["refused"]) == (1 / 3, 1 / 3, 1 / 3)
    assert summary["refusals"]["answerable_not_refused"] == 2 / 3
    assert summary["refusals"]["unanswerable_refused"] is None  # no unanswerable question here


def test_geodata_exact_and_rows() -> None:
    rows = [{"name": "Escola Municipal Do Leão"}, {"name": "Escola Municipal Karla Patricia"}]
    good = {"answer": "2 escolas ficam em Boa Viagem.", "refused": False, "graph": {"rows": rows}}
    partial = {"answer": "Há 3 escolas: Escola Municipal Do Leão.", "refused": False, "graph": None}
    for answer, exact, listed, in_text, in_graph in (
        (good, True, True, False, True),
        (partial, False, False, False, False),
    ):
        client = StandIn({GEO_Q.question: answer}, datasets=["schools.geojson"])
        result, skipped = runner.run({"g": [GEO_Q, MISSING_DS]}, client)  # type: ignore[arg-type]
        assert skipped.skipped == "dataset not loaded: absent.pbf"
        assert result.answer["exact"] is exact and result.answer["rows"] is listed
        assert (result.answer["rows_text"], result.answer["rows_graph"]) == (in_text, in_graph)
    graph_off = runner.run({"g": [GEO_Q]}, StandIn({GEO_Q.question: good}))  # type: ignore[arg-type]
    assert graph_off[0].skipped == "dataset not loaded: schools.geojson"
