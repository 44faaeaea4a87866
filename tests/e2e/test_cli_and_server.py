"""Like a user: the `carta` command and a `carta serve` process, over real HTTP. The command
runs in the test process (tests/utils/cli.py: a subprocess costs seconds of imports and model
loading per command); the errors test runs it as `python -m service.cli`, the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import CORPUS
from tests.utils.api import ingest_via_api
from tests.utils.cli import run_cli
from tests.utils.servers import free_port


def carta_process(*args: str, data_dir: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`python -m service.cli ARGS` as its own process on `data_dir`."""
    env = {**os.environ, "CARTA_DATA_DIR": str(data_dir)}
    run = subprocess.run(
        [sys.executable, "-m", "service.cli", *args], env=env, capture_output=True, text=True, timeout=600
    )
    if check:
        assert run.returncode == 0, run.stderr[-2000:]
    return run


def test_cli_ingest_list_search_ask_delete(tmp_path: Path, samples_dir: Path) -> None:
    data = tmp_path / "data"
    pdf = samples_dir / "relatorio_ambiental_recife_2024.pdf"
    ingested = json.loads(
        run_cli(
            "ingest", str(pdf), str(samples_dir / "grafico_chuvas_2024.png"), "--json", data_dir=data
        ).stdout
    )
    assert [r["document"]["status"] for r in ingested] == ["ready", "ready"]
    doc_id = ingested[0]["document"]["id"]
    again = json.loads(run_cli("ingest", str(pdf), "--json", data_dir=data).stdout)
    assert again[0]["created"] is False and again[0]["document"]["id"] == doc_id

    listed = json.loads(run_cli("list", "--json", data_dir=data).stdout)
    assert {d["id"] for d in listed} == {r["document"]["id"] for r in ingested}

    hits = json.loads(
        run_cli("search", "coordenadas do Parque da Jaqueira", "-k", "2", "--json", data_dir=data).stdout
    )
    assert (hits["results"][0]["doc_id"], hits["results"][0]["page_no"]) == (doc_id, 4)

    answer = json.loads(
        run_cli("ask", "Quais são as coordenadas do Parque da Jaqueira?", "--json", data_dir=data).stdout
    )
    assert "-8,0375" in answer["answer"] and answer["citations"][0]["page_no"] == 4
    near = json.loads(
        run_cli(
            "search", "coordenadas", "--near=-8.0631,-34.8711", "--radius", "1500", "--json", data_dir=data
        ).stdout
    )
    assert near["geo_filter"]["radius_m"] == 1500 and near["results"]
    assert all(h["doc_id"] == doc_id for h in near["results"])
    bad = run_cli("search", "x", "--bbox", "1,2", data_dir=data, check=False)
    assert bad.returncode == 2 and "bbox" in bad.stderr
    plain = run_cli("ask", "Quais são as coordenadas do Parque da Jaqueira?", data_dir=data).stdout
    assert f"[{doc_id} p.4]" in plain

    run_cli("delete", doc_id, data_dir=data)
    assert doc_id not in {d["id"] for d in json.loads(run_cli("list", "--json", data_dir=data).stdout)}
    missing = run_cli("delete", doc_id, data_dir=data, check=False)
    assert missing.returncode == 1 and "no document" in missing.stderr


def test_cli_errors_are_one_clear_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    run = carta_process("ingest", str(bad), "--json", data_dir=data, check=False)
    assert run.returncode == 1
    assert json.loads(run.stdout)[0]["error"]["code"] == "corrupt_document"
    run = carta_process("ingest", str(tmp_path / "nope.pdf"), data_dir=data, check=False)
    assert run.returncode == 2 and "no such file" in run.stderr
    assert "Usage" in carta_process("--help", data_dir=data).stdout


@pytest.fixture
def served(tmp_path: Path, samples_dir: Path) -> Iterator[tuple[str, Path]]:
    """`carta serve` as its own process (what `make run` starts), samples indexed on start.
    Its output goes to a file, not a pipe: nobody reads a pipe after the start, and a full
    one (64 KiB of request logs: more job polls on a slow machine) would block the server.
    The output's end is printed at teardown (pytest shows it when the test failed)."""
    data = tmp_path / "served"
    port = free_port()
    env = {**os.environ, "CARTA_DATA_DIR": str(data)}
    log_path = tmp_path / "serve.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service.cli",
            "serve",
            "--port",
            str(port),
            "--ingest-samples",
            str(samples_dir),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 300
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            log.close()
            pytest.fail(f"carta serve did not come up: {log_path.read_text()[-3000:]}")
        time.sleep(0.5)
    yield url, data
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:  # a server that does not stop must not outlive the test
        proc.kill()
        proc.wait(timeout=30)
    log.close()
    print(f"carta serve output (end):\n{log_path.read_text()[-3000:]}")


def test_serve_indexes_samples_and_answers_over_http(served: tuple[str, Path], samples_dir: Path) -> None:
    url, data = served
    docs = httpx.get(f"{url}/v1/documents").json()
    assert {d["filename"] for d in docs} == {
        "relatorio_ambiental_recife_2024.pdf",
        "quarterly_report_q3_2024.pdf",
        "grafico_chuvas_2024.png",
        "nota_tecnica_drenagem_2024.pdf",
    }
    pdf = CORPUS / "pdf" / "br_ibama_autuacoes_amazonas_2010_p2.pdf"
    if not pdf.exists():
        pytest.skip(f"shared corpus not found at {pdf.parent}")
    with httpx.Client(base_url=url, timeout=300) as client:
        doc_id = ingest_via_api(client, pdf.name, pdf.read_bytes())["id"]
    answer = httpx.post(
        f"{url}/v1/ask", json={"question": "Qual o valor da multa do auto de infração 679199?"}, timeout=60
    ).json()
    assert not answer["refused"]
    assert (doc_id, 1) in {(c["doc_id"], c["page_no"]) for c in answer["citations"]}

    # the embedded store is held by the server: a local CLI says so and how to proceed
    held = run_cli("list", data_dir=data, check=False)
    assert held.returncode == 1 and "--server" in held.stderr
    via_server = json.loads(run_cli("list", "--json", "--server", url, data_dir=data).stdout)
    assert doc_id in {d["id"] for d in via_server}

    # the first key turns single-user mode off; the CLI's --server ingest follows the job
    created = run_cli("keys", "create", "--tenant", "acme", "--label", "e2e", "--json", data_dir=data)
    key = json.loads(created.stdout)
    assert httpx.get(f"{url}/v1/documents").status_code == 401
    png = samples_dir / "grafico_chuvas_2024.png"
    ingested = json.loads(
        run_cli("ingest", str(png), "--json", "--server", url, data_dir=data, api_key=key["secret"]).stdout
    )
    assert ingested[0]["document"]["status"] == "ready" and ingested[0]["job"]["status"] == "ready"
    acme = json.loads(run_cli("list", "--json", "--server", url, data_dir=data, api_key=key["secret"]).stdout)
    assert [d["filename"] for d in acme] == ["grafico_chuvas_2024.png"]  # not the default tenant's
    listed = json.loads(run_cli("keys", "list", "--json", data_dir=data).stdout)
    assert [k["id"] for k in listed] == [key["id"]] and "secret" not in listed[0]
    events = json.loads(run_cli("audit", "--json", "--tenant", "acme", data_dir=data).stdout)
    assert [e["action"] for e in events] == ["upload"] and events[0]["key_id"] == key["id"]
    run_cli("keys", "revoke", key["id"], data_dir=data)
    denied = run_cli("list", "--server", url, data_dir=data, api_key=key["secret"], check=False)
    assert denied.returncode == 1 and "revoked" in denied.stderr
