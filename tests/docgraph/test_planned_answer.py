"""A planned multi-step answer over the document graph, against the loopback OpenAI-protocol
server scripted as the whole model (extracting at ingestion, routing and decomposing the
question, answering): the plan event first, each retrieval step in the trace (routes by the
LLM, sub-questions, the pages each found), the entity the question names in the graph with
its chunk, and the answer citing both documents it needed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ingest.upload import IngestRequest
from service.api import schemas
from service.api.streaming import sse_stream
from service.carta import Carta
from service.observability import ask_trace
from tests.openai_protocol import OpenAIProtocolServer, part_texts
from tests.utils.documents import make_pdf

TENANT = "default"
QUESTION = (
    "Quantos pontos de alagamento o Recife registrou em 2024 e quanto lodo a EMLURB removeu dos canais?"
)
PARTS = [
    "Quantos pontos de alagamento o Recife registrou em 2024?",
    "Quanto lodo a EMLURB removeu dos canais?",
]
# one page each, a line per item; the note names the Recife too: the relevance gate
# (service/answer/gate.py on_named_pages) refuses when no one document holds every name of
# the question, which a question over two documents' names would otherwise meet
DOCS = {
    "relatorio.pdf": ["Em 2024 o Recife registrou 214 pontos de alagamento, segundo a Defesa Civil."],
    "nota.pdf": [
        "A Empresa de Manutenção e Limpeza Urbana (EMLURB) removeu",
        "132.280 metros cúbicos de lodo dos canais do Recife em 2024,",
        "informou a engenheira Marta Cavalcanti.",
    ],
}


def whole_model(body: dict[str, Any]) -> str:
    """Extraction (the person a passage names), routing (two parts), the answer (the first
    sentence of every page sent, cited by its label)."""
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    text = part_texts(body)[-1]
    if schema == "chunk_graph":
        people = [
            {"name": n, "kind": "person", "acronym": None, "description": "Named."}
            for n in ("Marta Cavalcanti",)
            if n in " ".join(text.split())  # the PDF's lines may break the name
        ]
        return json.dumps({"entities": people, "relations": []})
    if schema == "plan":
        return json.dumps({"routes": ["text", "graph"], "sub_questions": PARTS})
    if schema == "community_report":
        return json.dumps({"title": "t", "summary": "s", "findings": []})
    pages = re.findall(r'cite="(\[[^\]]+\])"[^\n]*\n([^<]+)', "\n".join(part_texts(body)))
    return " ".join(f"{' '.join(text.split())} {label}" for label, text in pages)


def test_a_planned_multi_step_answer_carries_its_trace(
    make_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer, tmp_path: Path
) -> None:
    llm_server.responder = whole_model
    carta = make_carta(
        tmp_path / "data",
        layout="text",
        planner="auto",
        planner_max_steps=4,
        **llm_server.settings(),
    )
    ids = {
        name: carta.ingest(IngestRequest(make_pdf([lines]), name, TENANT)).document.id
        for name, lines in DOCS.items()
    }
    assert carta.docgraph is not None
    marta = carta.docgraph.search(TENANT, "marta cavalcanti")  # the LLM's extraction, with its chunk
    assert [(e.name, e.kind) for e in marta] == [("Marta Cavalcanti", "person")]
    emlurb = carta.docgraph.entity(TENANT, carta.docgraph.search(TENANT, "emlurb")[0].id)
    assert emlurb is not None and {m["doc_id"] for m in emlurb["mentions"]} == {ids["nota.pdf"]}

    events = list(carta.ask_events(carta.query(QUESTION, TENANT, top_k=3)))
    assert events[0].kind == "plan"
    plan = events[0].data
    assert plan["router"] == "llm" and plan["multi_hop"] and plan["sub_questions"] == PARTS
    steps = plan["steps"]
    assert [s["kind"] for s in steps][:3] == ["question", "sub-question", "sub-question"] and len(steps) <= 4
    assert steps[2]["query"] == PARTS[1] and steps[2]["pages"][0] == {"doc_id": ids["nota.pdf"], "page_no": 1}
    assert "graph" in plan["routes"]

    answer = events[-1].data
    assert answer.answerer == "llm" and answer.plan == plan
    assert {c.doc_id for c in answer.citations} == set(ids.values()) and not answer.invalid_citations
    assert "214" in answer.answer and "132.280" in answer.answer
    assert ask_trace("r1", answer, 0.0)["plan"]["steps"] == steps  # the log line's trace
    assert schemas.ask_response(answer).plan is not None
    streamed = "".join(sse_stream(iter(events)))
    assert streamed.startswith("event: plan\n") and "event: token" in streamed and "event: done" in streamed
