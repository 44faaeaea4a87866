"""Erasure that erases: after a delete (and a restart) no byte of the data dir, decoded as
the stores encode it, holds the document's id, text, title, filename or metadata; an
interrupted erasure finishes at the next start; `carta erase --verify` says so."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from index.types import Filter
from ingest.upload import IngestRequest
from service.carta import Carta
from service.cli.main import app
from service.erasure import JOURNAL_NAME, KEEPS_IDS, lz4_block_decompress, verify
from tests.utils.api import ingest_via_api
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer

MARK = "ZQXERASEMARK41"  # in the text; each field also gets its own marker
TITLE, FILENAME, META = "ZQXTITLEMARK41", "ZQXFILEMARK41", "ZQXMETAMARK41"
MARKERS = [MARK, TITLE, FILENAME, META]
TENANT = "acme"


def test_lz4_blocks_with_long_literal_and_match_lengths_decode() -> None:
    """Lengths past the token's 4 bits go on in bytes (255 means one more byte follows)."""
    text = bytes(range(65, 85))  # 20 literals: 15 in the token, 5 after it
    block = bytes([0xFF, 5]) + text + bytes([20, 0, 5])  # a match 20 back, 4 + 15 + 5 long
    assert lz4_block_decompress(block, 44) == text + text + text[:4]
    long = bytes(i % 251 for i in range(280))  # 15 + 255 + 10 literals, the whole block
    assert lz4_block_decompress(bytes([0xF0, 255, 10]) + long, 280) == long
    with pytest.raises(ValueError, match="truncated literal length"):
        lz4_block_decompress(bytes([0xF0, 255]), 280)
    with pytest.raises(ValueError, match="truncated match length"):
        lz4_block_decompress(bytes([0x2F, 65, 66, 2, 0]), 40)


def _marker_request() -> IngestRequest:
    pdf = make_pdf(
        [
            f"Confidential record {MARK} of a patient living in Recife, rua {MARK} 12.",
            [f"Second page: {MARK} was treated in Olinda.", "Nothing else to say about Recife."],
        ]
    )
    return IngestRequest(
        pdf,
        f"{FILENAME}.pdf",
        TENANT,
        title=f"Record {TITLE}",
        metadata={"note": f"about {META}", "lat": -8.05, "lon": -34.9},
    )


def _ingest_pair(carta: Carta) -> tuple[str, str]:
    """(marker document id, id of a document that must survive)."""
    other = make_pdf(["Harbour census of Lisboa, 1890.", "Bridges and markets of Porto."])
    keep = carta.ingest(IngestRequest(other, "lisboa.pdf", TENANT)).document.id
    marked = carta.ingest(_marker_request()).document
    assert marked.status == "ready"
    return marked.id, keep


def _hit_files(data: Path, doc_id: str) -> dict[str, list[str]]:
    found = verify(data, doc_id, MARKERS)
    by_file: dict[str, list[str]] = {}
    for hit in found.hits:
        by_file.setdefault(hit.path, []).append(hit.marker)
    return by_file


def test_delete_leaves_no_byte_of_the_document_after_restart(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    carta = make_carta(data, erasure="immediate")
    doc_id, keep = _ingest_pair(carta)

    before = verify(data, doc_id, MARKERS)
    # the scan can fail: every marker is on disk, the text and title in LZ4 payload pages
    assert {h.marker for h in before.hits} == {doc_id, *MARKERS}
    assert any("payload_storage" in h.path and h.lz4 and h.marker == MARK for h in before.hits)
    assert any(h.path.startswith("registry.sqlite3") and h.marker == META for h in before.hits)

    timings = carta.delete(TENANT, doc_id)
    assert timings["pad_records"] > 0  # the WAL was rolled
    assert _hit_files(data, doc_id) == {}  # once the delete returns, the store still open
    assert not (data / JOURNAL_NAME).exists()
    carta.close()

    carta = make_carta(data, erasure="immediate")  # restart: WAL replay must not bring anything back
    assert carta.registry.get(TENANT, keep) is not None
    assert carta.store.count(carta.collections.chunks.name, Filter({"doc_id": keep})) > 0
    assert carta.store.count(carta.collections.chunks.name, Filter({"doc_id": doc_id})) == 0
    pages = carta.search(carta.query("census of Lisboa", TENANT)).pages
    assert pages and pages[0].doc_id == keep
    # later writes and deletes still work (the WAL's operation numbers were kept)
    again = carta.ingest(_marker_request()).document.id
    carta.delete(TENANT, keep)
    assert carta.store.count(carta.collections.chunks.name, Filter({"doc_id": keep})) == 0
    carta.delete(TENANT, again)
    carta.close()

    for erased in (doc_id, again):
        after = verify(data, erased, MARKERS)
        assert after.hits == [] and after.clean, after.hits
        assert after.files_scanned > 10


def test_deferred_erasure_hides_at_once_and_erases_at_close(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    """CARTA_ERASURE=on_close: the delete hides the document at once, the bytes stay until the
    Carta closes, and none is left after."""
    data = tmp_path / "data"
    carta = make_carta(data, erasure="on_close")
    doc_id, keep = _ingest_pair(carta)
    carta.delete(TENANT, doc_id)
    assert carta.registry.get(TENANT, doc_id) is None
    assert carta.store.count(carta.collections.chunks.name, Filter({"doc_id": doc_id})) == 0
    assert _hit_files(data, doc_id)  # still on disk: deferred
    carta.close()
    after = verify(data, doc_id, MARKERS)
    assert after.hits == [] and after.clean, after.hits
    carta = make_carta(data, erasure="on_close")
    assert carta.registry.get(TENANT, keep) is not None
    carta.close()


def test_an_interrupted_erasure_finishes_at_the_next_start(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    carta = make_carta(data, erasure="immediate")
    doc_id, _ = _ingest_pair(carta)
    # a crash after the journal entry and the purge, before the stores erased
    carta.erasures.add(TENANT, doc_id)
    carta.ingestor.purge(TENANT, doc_id)
    carta._resume_erasures = lambda: None  # type: ignore[method-assign]  # a crash runs no close-time erasure
    carta.close()
    assert _hit_files(data, doc_id)  # deleted, not erased: the payloads are still on disk
    assert verify(data, doc_id).erasure_pending

    carta = make_carta(data, erasure="immediate")
    assert carta.erasures.pending() == []
    carta.close()
    assert _hit_files(data, doc_id) == {}


def _cli(data: Path, *args: str) -> tuple[int, str]:
    run = CliRunner().invoke(app, ["erase", *args], env={"CARTA_DATA_DIR": str(data)})
    return run.exit_code, run.stdout


def test_carta_erase_verify_reports_hits_then_clean(make_carta: Callable[..., Carta], tmp_path: Path) -> None:
    data = tmp_path / "data"
    carta = make_carta(data, erasure="immediate")
    doc_id, _ = _ingest_pair(carta)
    marks = [a for m in MARKERS for a in ("--marker", m)]

    code, text = _cli(data, "--verify", doc_id, "--tenant", TENANT, *marks, "--json")
    body = json.loads(text)
    assert code == 1 and not body["clean"]
    assert body["held_by_server"]  # this test's Carta holds the store
    assert TENANT in body["registered_in"]
    assert {h["marker"] for h in body["hits"]} == {doc_id, *MARKERS}

    carta.delete(TENANT, doc_id)
    code, text = _cli(data, "--verify", doc_id, "--tenant", TENANT, *marks)
    assert code == 0, text
    assert "clean" in text
    carta.close()
    code, text = _cli(data, "--verify", doc_id, "--tenant", TENANT, *marks, "--json")
    body = json.loads(text)
    assert code == 0 and body["clean"] and body["hits"] == [] and not body["held_by_server"]


@pytest.mark.parametrize("args", [["DOC"], ["--verify"]])
def test_carta_erase_usage_errors(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "data").mkdir()
    code, _ = _cli(tmp_path / "data", *args)
    assert code == 2


def test_delete_through_the_api_erases_uploads_jobs_and_registry(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    request = _marker_request()
    form = {"title": request.title or "", "metadata": json.dumps(request.metadata)}
    carta = make_carta(data, erasure="immediate")
    with LiveServer(carta) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        doc_id = ingest_via_api(client, request.filename, request.data, **form)["id"]
        before = {h.path.split("/")[0] for h in verify(data, doc_id, MARKERS).hits}
        assert {"jobs.sqlite3", "registry.sqlite3", "qdrant"} <= {p.split("-")[0] for p in before}
        assert client.delete(f"/v1/documents/{doc_id}").status_code == 200
        assert verify(data, doc_id, MARKERS).hits == []  # once the DELETE has answered
        assert not (data / "uploads").exists() or not any((data / "uploads").iterdir())
    server.carta.close()
    make_carta(data, erasure="immediate").close()  # restart
    after = verify(data, doc_id, MARKERS)
    assert after.hits == [] and after.clean
    assert {h.path for h in after.kept_by_design} <= set(KEEPS_IDS)  # the audit log's ids only
