"""POST /v1/ask over real HTTP: the SSE contract (evidence, token..., citations, done; error),
502/504 JSON errors from the LLM endpoint, the same response shape on both answer paths,
and `carta ask --stream` printing tokens from a running server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from service.api.schemas import AskResponse
from service.api.streaming import parse_sse
from service.carta import Carta
from tests.openai_protocol import OpenAIProtocolServer, Step
from tests.utils.servers import LiveServer

PRADO = "Quantos pontos de lançamento irregular de esgoto foram identificados na vistoria do Canal do Prado?"


@pytest.fixture
def server(serve: Callable[..., LiveServer], sample_carta: Carta) -> LiveServer:
    return serve(sample_carta)


def stream(url: str, question: str) -> list[tuple[str, Any]]:
    with httpx.stream("POST", f"{url}/v1/ask", json={"question": question, "stream": True}, timeout=60) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        return list(parse_sse(r.iter_lines()))


def test_extractive_answers_stream_in_the_same_contract(server: LiveServer) -> None:
    events = stream(server.url, PRADO)
    kinds = [k for k, _ in events]
    assert kinds == ["evidence", "token", "citations", "done"]
    done = AskResponse.model_validate(events[-1][1])
    assert done.answerer == "extractive" and done.answer == events[1][1]["text"]
    assert events[2][1]["grounded"] is done.grounded and events[2][1]["citations"] == [
        c.model_dump() for c in done.citations
    ]
    assert [h["doc_id"] for h in events[0][1]["evidence"]] == [h.doc_id for h in done.evidence]
    plain = httpx.post(f"{server.url}/v1/ask", json={"question": PRADO}, timeout=60).json()
    assert set(plain) == set(events[-1][1]) and plain["answer"] == done.answer  # one shape, one answer


def test_llm_answers_stream_token_by_token(
    server: LiveServer, attach_llm: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    attach_llm(server.carta)
    events = stream(server.url, PRADO)
    kinds = [k for k, _ in events]
    assert kinds[0] == "evidence" and kinds[-2:] == ["citations", "done"]
    tokens = [d["text"] for k, d in events if k == "token"]
    assert len(tokens) > 3  # the protocol server streams word by word, and so do we
    done = AskResponse.model_validate(events[-1][1])
    assert "".join(tokens) == done.answer and done.answerer == "llm" and done.grounded
    assert events[-2][1] == {
        "citations": [c.model_dump() for c in done.citations],
        "grounded": True,
        "invalid_citations": [],
    }
    assert llm_server.requests[0]["stream"] is True
    assert done.usage is not None and (done.usage.images_sent or 0) >= 1 and "llm" in done.timings_ms


def test_llm_failures_are_a_502_or_504_json_error_or_an_error_event(
    server: LiveServer, attach_llm: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    attach_llm(server.carta, llm_timeout_s=0.3, llm_max_retries=0)
    llm_server.script(Step(delay_s=1.0))
    r = httpx.post(f"{server.url}/v1/ask", json={"question": PRADO}, timeout=60)
    assert r.status_code == 504 and r.json()["error"]["code"] == "llm_timeout"
    assert "CARTA_LLM_TIMEOUT_S" in r.json()["error"]["message"]

    llm_server.script(Step(raw='{"unexpected": true}'))
    r = httpx.post(f"{server.url}/v1/ask", json={"question": PRADO}, timeout=60)
    assert r.status_code == 502 and r.json()["error"]["code"] == "llm_bad_response"

    llm_server.script(Step(text="Foram 3 pontos de lançamento", break_stream_after=2))
    events = stream(server.url, PRADO)
    assert [k for k, _ in events] == ["evidence", "token", "token", "error"]
    assert events[-1][1]["error"]["code"] == "llm_bad_response"

    # a refused question never reaches the endpoint, so it answers even while the endpoint is broken
    r = httpx.post(f"{server.url}/v1/ask", json={"question": "What is the capital of Mongolia?"}, timeout=60)
    assert r.status_code == 200 and r.json()["refused"] is True


def test_flagged_citations_reach_the_client(
    server: LiveServer, attach_llm: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    attach_llm(server.carta)
    llm_server.script(Step(text="Foram 3 pontos [0badc0ffee00 p.4]."))
    body = httpx.post(f"{server.url}/v1/ask", json={"question": PRADO}, timeout=60).json()
    assert body["grounded"] is False and body["citations"] == []
    assert body["invalid_citations"] == [
        {"doc_id": "0badc0ffee00", "page_no": 4, "reason": "document not in the evidence sent"}
    ]


def test_cli_streams_tokens_from_a_running_server(
    server: LiveServer, attach_llm: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    from typer.testing import CliRunner

    from service.cli.main import app

    attach_llm(server.carta)
    llm_server.script(Step(text="unused", chunks=["Foram ", "3 pontos ", "[0badc0ffee00 p.4]."]))
    run = CliRunner().invoke(app, ["ask", PRADO, "--stream", "--server", server.url])
    assert run.exit_code == 0, run.output
    assert run.stdout.startswith("Foram 3 pontos [0badc0ffee00 p.4].\n")
    assert "not in the evidence" in run.stderr and "0badc0ffee00 p.4" in run.stderr

    llm_server.script(Step(raw="not json"))
    run = CliRunner().invoke(app, ["ask", PRADO, "--stream", "--server", server.url])
    assert run.exit_code == 1 and "malformed reply" in run.stderr
