"""CARTA_PLANNER=auto end to end on a small index: the planned search, its trace in the search
and ask responses, and the `plan` event of the answer stream."""

from __future__ import annotations

from collections.abc import Callable

from ingest.upload import IngestRequest
from service.api import schemas
from service.api.streaming import sse_stream
from service.carta import Carta
from tests.utils.documents import make_pdf

QUESTION = (
    "Quantos pontos de alagamento o Recife registrou em 2024 "
    "e quantos metros cúbicos a EMLURB removeu dos canais?"
)
DOCS = {
    "relatorio.pdf": ["Em 2024 o Recife registrou 214 pontos de alagamento, segundo a Defesa Civil."],
    "bairros.pdf": ["Pontos de alagamento do Recife em 2024 por bairro: Afogados 45, Imbiribeira 41."],
    "chuvas.pdf": ["O Recife registrou em 2024 chuva acima da média e pontos de alagamento em junho."],
    "nota.pdf": ["A EMLURB removeu 132.280 metros cúbicos de lodo dos canais de drenagem em 2024."],
}


def _indexed(make_carta: Callable[..., Carta], **overrides: object) -> tuple[Carta, dict[str, str]]:
    carta = make_carta(layout="text", **overrides)
    ids = {}
    for name, pages in DOCS.items():
        ids[name] = carta.ingest(IngestRequest(make_pdf(pages), name, "default")).document.id
    return carta, ids


def test_planned_search_and_ask_carry_the_plan(make_carta: Callable[..., Carta]) -> None:
    carta, ids = _indexed(make_carta, planner="auto", planner_max_steps=4)
    assert carta.planner is not None
    result = carta.search(carta.query(QUESTION, "default", top_k=3))
    plan = result.plan
    assert plan is not None and plan["multi_hop"] and plan["router"] == "rules"
    assert [s["kind"] for s in plan["steps"]][:3] == ["question", "sub-question", "sub-question"]
    assert len(plan["steps"]) <= 4
    assert plan["steps"][2]["pages"][0] == {
        "doc_id": ids["nota.pdf"],
        "page_no": 1,
    }  # the EMLURB part finds its document
    assert {ids["nota.pdf"], ids["relatorio.pdf"]} <= {p.doc_id for p in result.pages}
    wire = schemas.search_response(result).model_dump(exclude_none=True)["plan"]
    assert (
        wire["sub_questions"] == plan["sub_questions"]
        and wire["steps"][2]["pages"] == plan["steps"][2]["pages"]
    )

    events = list(carta.ask_events(carta.query(QUESTION, "default", top_k=3), stream=False))
    assert events[0].kind == "plan" and events[0].data["sub_questions"] == plan["sub_questions"]
    answer = events[-1].data
    assert schemas.ask_response(answer).plan is not None
    streamed = "".join(sse_stream(iter(events)))
    assert streamed.startswith("event: plan\n") and "event: done" in streamed


def test_planner_off_keeps_the_single_shot_path(make_carta: Callable[..., Carta]) -> None:
    carta, _ = _indexed(make_carta, planner="off")
    assert carta.planner is None
    result = carta.search(carta.query(QUESTION, "default", top_k=3))
    assert result.plan is None and schemas.search_response(result).plan is None
    assert [e.kind for e in carta.ask_events(carta.query(QUESTION, "default"), stream=False)][0] == "evidence"
