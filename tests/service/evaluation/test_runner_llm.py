"""The evaluation of the LLM answer path, against the OpenAI-protocol server: answer
accuracy, citation validity (flagged citations count as invalid), refusal accuracy,
injection resistance and the LLM budget used; also `carta eval` with the endpoint set."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ingest.upload import IngestRequest
from service.carta import Carta
from service.cli.local_client import LocalClient
from service.evaluation import runner
from service.evaluation.questions import load_questions
from tests.openai_protocol import OpenAIProtocolServer, Step, echo_first_citation, part_texts
from tests.utils.servers import LiveServer

IDS = ("inj-prado-lancamentos", "inj-destino-sedimentos")
BOGUS = "[0badc0ffee00 p.3]"


def responder(unanswerable: list[str]) -> Callable[[dict[str, Any]], str]:
    """Cites the best page; refuses the questions past the gate that have no answer (as the
    prompt's rules ask); for the sediment question it cites a page never sent."""

    def respond(body: dict[str, Any]) -> str:
        question = part_texts(body)[-1]
        if any(q in question for q in unanswerable):
            return "Não encontrado nos documentos indexados. Consulte o portal de transparência."
        if "material retirado" in question:
            return f"Vai para a CTR Candeias {BOGUS}."
        return echo_first_citation(body)

    return respond


def test_llm_path_metrics_count_flagged_citations(
    sample_carta: Carta, attach_llm: Callable[..., Carta], llm_server: OpenAIProtocolServer, samples_dir: Path
) -> None:
    attach_llm(sample_carta, llm_max_images=1)
    questions = [q for q in load_questions(samples_dir / "questions.yaml") if q.id in IDS]
    unanswerable = [q for q in load_questions(samples_dir / "questions.yaml") if q.type == "unanswerable"][:2]
    llm_server.responder = responder([q.question for q in unanswerable])
    client = LocalClient(sample_carta, "default")
    results = {r.id: r for r in runner.run({"s": questions + unanswerable}, client)}

    bogus = results["inj-destino-sedimentos"].answer
    assert bogus["answerer"] == "llm" and bogus["invalid_citations"] == 1 and bogus["grounded"] is False
    assert bogus["citation_validity"] == 0.0  # its only citation points outside the evidence sent
    assert bogus["fact_accuracy"] == 0.5  # "CTR Candeias" stated, "Jaboatão dos Guararapes" not
    honest = results["inj-prado-lancamentos"].answer
    assert honest["invalid_citations"] == 0 and honest["grounded"] is True
    assert honest["injection_resisted"] is True and honest["usage"]["images_sent"] == 1
    for q in unanswerable:
        assert results[q.id].answer["refusal_correct"] is True

    summary = runner.summarize(list(results.values()))
    assert summary["answerers"] == ["llm"] and summary["invalid_citations"] == 1
    assert summary["by_type"]["unanswerable"]["refusal_correct"] == 1.0
    assert summary["by_type"]["injection"]["invalid_citations"] == 1 / 2
    assert summary["llm_usage_mean"]["images_sent"] == 1.0
    report = runner.markdown(summary)
    assert "answerer: llm" in report and "Citations flagged outside the evidence sent: 1" in report
    assert "## LLM usage per answer (mean)" in report


def test_carta_eval_uses_the_configured_endpoint(
    tmp_path: Path, samples_dir: Path, llm_server: OpenAIProtocolServer, make_carta: Callable[..., Carta]
) -> None:
    """A Carta built from settings naming the endpoint answers by LLM; `carta eval` scores it."""
    from typer.testing import CliRunner

    from service.cli.main import app

    # the document graph's LLM extraction and reports off: the server's one request is the answer
    carta = make_carta(
        geotag=False,
        llm_base_url=llm_server.url,
        llm_model="test-model",
        docgraph_llm_chunks=0,
        docgraph_llm_summaries=0,
    )
    assert carta.llm is not None and carta.llm.client.config.base_url == llm_server.url
    note = samples_dir / "nota_tecnica_drenagem_2024.pdf"
    carta.ingest(IngestRequest(note.read_bytes(), note.name, "default"))
    questions = tmp_path / "q.yaml"
    items = [q for q in load_questions(samples_dir / "questions.yaml") if q.id in IDS[:1]]
    questions.write_text(json.dumps([q.model_dump(exclude_none=True) for q in items]))
    with LiveServer(carta) as server:
        args = ["eval", "-q", str(questions), "--out", str(tmp_path / "out"), "--server", server.url]
        run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    result = json.loads((tmp_path / "out" / "results.json").read_text())
    assert result["summary"]["answerers"] == ["llm"]
    assert result["results"][0]["answer"]["answerer"] == "llm"
    assert result["results"][0]["answer"]["invalid_citations"] == 0
    assert len(llm_server.requests) == 1 and "answerer: llm" in run.stdout


def test_a_failed_llm_answer_is_reported_not_scored(
    sample_carta: Carta, attach_llm: Callable[..., Carta], llm_server: OpenAIProtocolServer, samples_dir: Path
) -> None:
    attach_llm(sample_carta, llm_max_retries=0)
    llm_server.script(Step(raw="not json"))
    questions = [q for q in load_questions(samples_dir / "questions.yaml") if q.id in IDS[:1]]
    [result] = runner.run({"s": questions}, LocalClient(sample_carta, "default"))
    assert result.skipped and result.skipped.startswith("failed: the LLM endpoint")
    assert "malformed" in result.skipped and not result.answer
