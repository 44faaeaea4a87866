"""Server-sent events for a streamed answer (the contract in the README): `plan` (when the
query planner ran: its steps), `evidence`, `token`..., `citations`, `done` (the full
AskResponse, with its `status`: answer, passages or refused); `error` on failure."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

from service.answer.llm import Event
from service.api import schemas
from service.api.errors import INTERNAL, error_json, error_spec

log = logging.getLogger(__name__)


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


Understand = Callable[[dict[str, Any] | None], dict[str, Any]]  # the answer's graph -> `understood`
NameEntities = Callable[[Any], list[schemas.AnswerEntityOut]]  # the Answer -> the entities it names


def event_data(
    event: Event, understand: Understand | None = None, name_entities: NameEntities | None = None
) -> dict[str, Any]:
    """The JSON body of one event; `understand` adds how the question was understood to
    `done`, `name_entities` the document-graph entities the answer names."""
    if event.kind == "plan":
        return {"plan": event.data}
    if event.kind == "evidence":
        return {"evidence": [h.model_dump() for h in schemas.page_hits(event.data)]}
    if event.kind == "token":
        return {"text": event.data}
    if event.kind == "citations":
        return {
            "citations": [c.model_dump() for c in schemas.citations_out(event.data.citations)],
            "grounded": event.data.grounded,
            "invalid_citations": [c.__dict__ for c in event.data.invalid],
        }
    understood = understand(event.data.graph) if understand is not None else None
    entities = name_entities(event.data) if name_entities is not None else None
    return schemas.ask_response(event.data, understood, entities).model_dump()


def error_body(exc: Exception) -> tuple[int, dict[str, Any]]:
    """HTTP status and error JSON for what can fail while answering: the same table as the
    HTTP handlers (service/api/errors.py); anything else is an internal error, logged."""
    spec = error_spec(exc)
    if spec is not None:
        return spec.status, error_json(spec.code, str(exc))
    log.exception("answer stream failed")
    return INTERNAL.status, error_json(INTERNAL.code, f"the answer failed ({exc.__class__.__name__})")


def sse_stream(
    events: Iterator[Event], understand: Understand | None = None, name_entities: NameEntities | None = None
) -> Iterator[str]:
    """The events as SSE text; a failure ends the stream with an `error` event."""
    try:
        for event in events:
            yield sse(event.kind, event_data(event, understand, name_entities))
    except Exception as exc:  # noqa: BLE001 - every failure must reach the client as an event
        yield sse("error", error_body(exc)[1])


def parse_sse(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """(event, data) pairs from SSE text lines (the CLI reads a server's stream with this)."""
    event, data = "message", []
    for line in lines:
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line.strip() and data:
            yield event, json.loads("\n".join(data))
            event, data = "message", []
    if data:
        yield event, json.loads("\n".join(data))
