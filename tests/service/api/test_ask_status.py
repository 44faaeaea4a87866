"""The answer's `status` over HTTP (/v1/ask, plain and streamed) and in `carta ask`: a
composed "answer", only "passages", or "refused"."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from typer.testing import CliRunner

from ingest.upload import IngestRequest
from service.api.streaming import parse_sse
from service.cli.main import app
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer

REPORT = [
    "Relatório de drenagem do Recife 2024.\n"
    "Em 2024 a prefeitura do Recife limpou 38 canais da cidade.\n"
    "A equipe de manutenção do Canal do Prado trabalha com dragas e caminhões.\n"
    "São quatro caminhões e 3 dragas no total.",
]
ANSWERED = "Quantos canais a prefeitura do Recife limpou em 2024?"
# the count is in a sentence of its own, without the canal's name: passages, not an answer
PASSAGES = "Quantas dragas usa a equipe de manutenção do Canal do Prado?"
REFUSED = "What is the capital of Australia?"


@pytest.fixture
def live(serve: Callable[..., LiveServer]) -> LiveServer:
    server = serve(geotag=False)
    pdf = make_pdf(REPORT, textbox=(50, 50, 550, 800), fontsize=11)
    server.carta.ingest(IngestRequest(pdf, "drenagem.pdf", "default"))
    return server


def ask(url: str, question: str) -> dict:
    return httpx.post(f"{url}/v1/ask", json={"question": question}, timeout=60).json()


def streamed_done(url: str, question: str) -> dict:
    body = {"question": question, "stream": True}
    with httpx.stream("POST", f"{url}/v1/ask", json=body, timeout=60) as r:
        return [data for kind, data in parse_sse(r.iter_lines()) if kind == "done"][0]


def test_status_in_the_ask_response_and_the_done_event(live: LiveServer) -> None:
    for question, status in [(ANSWERED, "answer"), (PASSAGES, "passages"), (REFUSED, "refused")]:
        body = ask(live.url, question)
        assert body["status"] == status, (question, body["answer"])
        assert body["refused"] is (status == "refused")
        assert streamed_done(live.url, question)["status"] == status
    assert "38 canais" in ask(live.url, ANSWERED)["answer"]


def test_carta_ask_says_when_it_only_has_passages(live: LiveServer) -> None:
    run = CliRunner().invoke(app, ["ask", PASSAGES, "--no-stream", "--server", live.url])
    assert run.exit_code == 0, run.output
    assert run.stdout.startswith("Passages (no composed answer):\n")
    run = CliRunner().invoke(app, ["ask", ANSWERED, "--no-stream", "--server", live.url])
    assert run.exit_code == 0 and "Passages" not in run.stdout and "38 canais" in run.stdout
    run = CliRunner().invoke(app, ["ask", PASSAGES, "--json", "--server", live.url])
    assert run.exit_code == 0 and '"status": "passages"' in run.stdout
