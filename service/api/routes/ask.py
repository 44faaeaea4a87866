"""/v1/ask: an answer with citations, as one JSON body or as server-sent events."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from service.api import schemas
from service.api.deps import Audit, Caller, CartaDep, StateDep
from service.api.errors import ERROR_RESPONSES as _ERRORS
from service.api.routes.entities import answer_entities
from service.api.streaming import sse_stream
from service.observability import ask_trace
from service.query.understood import understood

router = APIRouter(tags=["query"])


@router.post(
    "/v1/ask",
    response_model=schemas.AskResponse,
    responses={502: _ERRORS, 504: _ERRORS, 200: {"content": {"text/event-stream": {}}}},
)
def ask(
    request: Request, state: StateDep, carta: CartaDep, who: Caller, audit: Audit, body: schemas.AskRequest
) -> Any:
    started = time.perf_counter()
    q = carta.query(
        body.question,
        who.tenant,
        top_k=body.top_k,
        doc_ids=body.doc_ids,
        kinds=body.kinds,
        geo=body.geo.spec() if body.geo else None,
        geo_prior=body.geo_prior,
        geo_prior_mode=body.geo_prior_mode,
        acl=who.acl(),
    )
    request_id = request.state.request_id
    if body.stream:
        audit.record("ask", [])  # streamed: the evidence goes to the client as it is found
        return StreamingResponse(
            sse_stream(
                carta.ask_events(q),
                lambda graph: understood(q, carta.gazetteer, graph),
                lambda answer: answer_entities(carta, who, answer.answer, answer.question),
            ),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    answer = carta.ask(q)
    audit.record("ask", [p.doc_id for p in answer.evidence])
    state.traces.put(request_id, who.tenant, ask_trace(request_id, answer, started))
    return schemas.ask_response(
        answer,
        understood(q, carta.gazetteer, answer.graph),
        answer_entities(carta, who, answer.answer, answer.question),
    )
