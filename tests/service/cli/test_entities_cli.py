"""`carta entities [QUERY]` and `carta entities show ID`, against a running server and
in-process (LocalClient): the same entities, and one-line errors for bad input."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
from typer.testing import CliRunner

from ingest.upload import IngestRequest
from service.carta import Carta
from service.cli.client import RequestFailed
from service.cli.local_client import LocalClient
from service.cli.main import app
from tests.utils.api import ingest_via_api
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer

TEXT = "A Fundação Nacional do Índio (FUNAI) e o Ministério do Meio Ambiente (MMA) assinaram em 2010."


def test_the_command_lists_and_shows_entities_through_the_server(serve: Callable[..., LiveServer]) -> None:
    live = serve()
    with httpx.Client(base_url=live.url, timeout=120) as client:
        doc = ingest_via_api(client, "funai.pdf", make_pdf([TEXT]))
    runner = CliRunner()
    listed = runner.invoke(app, ["entities", "funai", "--server", live.url, "--json"])
    assert listed.exit_code == 0, listed.output
    [funai] = json.loads(listed.output)
    assert funai["name"] == "FUNAI" and funai["kind"] == "org"

    shown = runner.invoke(app, ["entities", "show", str(funai["id"]), "--server", live.url])
    assert shown.exit_code == 0, shown.output
    assert "fundacao nacional do indio" in shown.output and doc["id"] in shown.output
    assert "MMA" in shown.output  # the relation to the other organisation of the sentence

    missing = runner.invoke(app, ["entities", "show", "999999", "--server", live.url])
    assert missing.exit_code == 1 and "no entity 999999" in missing.output
    misuse = runner.invoke(app, ["entities", "show", "abc", "--server", live.url])
    assert misuse.exit_code == 2


def test_the_local_client_answers_the_same_bodies(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    carta.ingest(IngestRequest(make_pdf([TEXT]), "funai.pdf", "default"))
    client = LocalClient(carta, "default")
    names = {e["name"] for e in client.entities("")}
    assert {"FUNAI", "MMA"} <= names
    mma = client.entities("meio ambiente")[0]
    assert mma["name"] == "MMA"
    detail = client.entity(mma["id"])
    assert detail["mentions"][0]["page_no"] == 1 and detail["aliases"] == ["ministerio do meio ambiente"]
    try:
        client.entity(999999)
    except RequestFailed as exc:
        assert "no entity" in exc.message
    else:
        raise AssertionError("an unknown entity must fail")
