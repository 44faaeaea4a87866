"""The HTTP API through a real uvicorn server on loopback, as a client would use it."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from PIL import Image

from index.types import Filter
from service.carta import Carta
from tests.utils.api import ingest_via_api, wait_for_job
from tests.utils.documents import image_bytes, make_pdf
from tests.utils.servers import LiveServer


@pytest.fixture
def server(serve: Callable[..., LiveServer]) -> LiveServer:
    # a low pixel limit so an "oversized" image stays small in the test
    return serve(max_image_pixels=250_000)


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=120) as c:
        yield c


def upload(client: httpx.Client, name: str, data: bytes, **form: str) -> httpx.Response:
    return client.post("/v1/documents", files={"file": (name, data)}, data=form)


def state(carta: Carta) -> tuple:
    """Everything stored: registry rows, points per collection, page files."""
    docs = carta.registry.list("default")
    files = sorted(str(p) for p in carta.settings.pages_dir.rglob("*") if p.is_file())
    return (
        [(d.id, d.status) for d in docs],
        carta.store.count(carta.collections.chunks.name),
        carta.store.count(carta.collections.pages.name),
        files,
    )


def encrypted_pdf() -> bytes:
    return make_pdf(["secret report"], password="u")


def png(width: int, height: int) -> bytes:
    return image_bytes(width, height)


def test_upload_list_get_images_search_ask(client: httpx.Client, samples_dir: Path) -> None:
    pdf = (samples_dir / "quarterly_report_q3_2024.pdf").read_bytes()
    r = upload(client, "quarterly.pdf", pdf, metadata='{"source": "test", "região": "Nordeste"}')
    assert r.status_code == 202, r.text
    assert r.json()["created"] is True and r.json()["document"] is None
    job = wait_for_job(client, r.json()["job"])
    assert job["status"] == "ready" and job["pages_done"] == job["pages_total"] == 4
    doc = client.get(f"/v1/documents/{job['document_id']}").json()
    assert doc["status"] == "ready" and doc["pages"] == 4 and doc["kind"] == "pdf"
    assert doc["metadata"] == {"source": "test", "região": "Nordeste"}

    again = upload(client, "renamed.pdf", pdf)
    assert again.status_code == 202 and again.json()["created"] is False
    assert again.json()["document"]["id"] == doc["id"] and again.json()["job"]["status"] == "ready"

    listed = client.get("/v1/documents").json()
    assert [d["id"] for d in listed] == [doc["id"]]

    detail = client.get(f"/v1/documents/{doc['id']}").json()
    assert [p["page_no"] for p in detail["page_list"]] == [1, 2, 3, 4]
    assert all(p["text_source"] == "text" and p["chunks"] > 0 for p in detail["page_list"])

    image = client.get(detail["page_list"][0]["image_url"])
    assert image.status_code == 200 and image.headers["content-type"] == "image/webp"
    assert image.content[:4] == b"RIFF" and image.content[8:12] == b"WEBP"
    thumb = client.get(detail["page_list"][0]["thumbnail_url"])
    assert thumb.status_code == 200 and len(thumb.content) < len(image.content)
    assert Image.open(io.BytesIO(thumb.content)).width == 240

    hits = client.post("/v1/search", json={"query": "revenue of SKU NW-4471", "top_k": 3}).json()
    assert hits["results"][0]["doc_id"] == doc["id"] and hits["results"][0]["page_no"] == 4
    assert hits["results"][0]["image_url"].endswith("/pages/4/image")

    answer = client.post("/v1/ask", json={"question": "What was the Q3 2024 revenue of SKU NW-4471?"}).json()
    assert not answer["refused"]
    assert "$9.8 million" in answer["answer"]
    assert (doc["id"], 4) in {(c["doc_id"], c["page_no"]) for c in answer["citations"]}
    assert f"[{doc['id']} p.4]" in answer["answer"]


def test_unknown_ids_and_pages_are_404_json(client: httpx.Client) -> None:
    for path in ["/v1/documents/nope", "/v1/documents/nope/pages/1/image"]:
        r = client.get(path)
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert client.delete("/v1/documents/nope").status_code == 404
    doc = ingest_via_api(client, "p.png", png(200, 100))
    r = client.get(f"/v1/documents/{doc['id']}/pages/2/image")
    assert r.status_code == 404 and "no page 2" in r.json()["error"]["message"]
    assert client.get(f"/v1/documents/{doc['id']}/pages/..%2F..%2Fx/image").status_code in {404, 422}


@pytest.mark.parametrize(
    ("name", "payload", "status", "code"),
    [
        ("corrupt.pdf", b"%PDF-1.7\n1 0 obj <</Type /Catalog>> garbage \x00\x01", 422, "corrupt_document"),
        ("locked.pdf", None, 422, "encrypted_document"),
        ("empty.pdf", b"", 400, "empty_file"),
        ("notes.pdf", b"just some text pretending to be a pdf", 415, "unsupported_type"),
        ("archive.zip", b"PK\x03\x04" + b"\x00" * 100, 415, "unsupported_type"),
        ("huge.png", None, 413, "too_large"),
        ("truncated.png", None, 422, "corrupt_document"),
    ],
)
def test_bad_input_is_a_clear_4xx_and_changes_nothing(
    client: httpx.Client,
    server: LiveServer,
    samples_dir: Path,
    name: str,
    payload: bytes | None,
    status: int,
    code: str,
) -> None:
    ingest_via_api(client, "q.pdf", (samples_dir / "quarterly_report_q3_2024.pdf").read_bytes())
    before = state(server.carta)
    payload = (
        payload
        if payload is not None
        else {
            "locked.pdf": encrypted_pdf,
            "huge.png": lambda: png(600, 600),
            "truncated.png": lambda: png(80, 80)[:60],
        }[name]()
    )
    r = upload(client, name, payload)
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert len(r.json()["error"]["message"]) > 10
    assert state(server.carta) == before


def test_invalid_requests_are_422_or_400_json(client: httpx.Client) -> None:
    r = client.post("/v1/search", json={"query": ""})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
    r = client.post("/v1/ask", json={"question": "x", "top_k": 0})
    assert r.status_code == 422
    r = client.post("/v1/search", json={"query": "x", "unknown": 1})
    assert r.status_code == 422
    r = client.post("/v1/documents", data={"title": "no file"})
    assert r.status_code == 422
    r = client.post("/v1/documents", files={"file": ("a.png", png(10, 10))}, data={"metadata": "[1, 2]"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_metadata"
    r = client.post(
        "/v1/documents",
        files=[("file", ("map.png", png(10, 10))), ("sidecars", ("../../etc/passwd", b"x"))],
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_sidecar"


def test_delete_removes_points_files_and_rows(
    client: httpx.Client, server: LiveServer, samples_dir: Path
) -> None:
    carta = server.carta
    keep = ingest_via_api(client, "q.pdf", (samples_dir / "quarterly_report_q3_2024.pdf").read_bytes())
    gone = ingest_via_api(client, "r.pdf", (samples_dir / "relatorio_ambiental_recife_2024.pdf").read_bytes())
    mine = Filter({"tenant": "default", "doc_id": gone["id"]})
    assert carta.store.count(carta.collections.chunks.name, mine) > 0
    question = {"query": "pontos de alagamento por bairro", "top_k": 10}
    assert gone["id"] in {h["doc_id"] for h in client.post("/v1/search", json=question).json()["results"]}

    r = client.delete(f"/v1/documents/{gone['id']}")
    assert r.status_code == 200 and r.json() == {"deleted": gone["id"]}

    for spec in carta.collections.all():
        assert carta.store.count(spec.name, mine) == 0
    assert carta.images.files_of("default", gone["id"]) == []
    assert (
        carta.registry.get("default", gone["id"]) is None
        and carta.registry.pages("default", gone["id"]) == []
    )
    assert client.get(f"/v1/documents/{gone['id']}").status_code == 404
    assert client.get(f"/v1/documents/{gone['id']}/pages/1/image").status_code == 404
    results = client.post("/v1/search", json=question).json()["results"]
    assert results and gone["id"] not in {h["doc_id"] for h in results}
    assert client.get(f"/v1/documents/{keep['id']}").json()["status"] == "ready"
    assert client.delete(f"/v1/documents/{gone['id']}").status_code == 404


def test_healthz_and_openapi(client: httpx.Client) -> None:
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["profile"] == "lite"
    spec = client.get("/openapi.json").json()
    assert {"/v1/documents", "/v1/search", "/v1/ask", "/v1/documents/{doc_id}"} <= set(spec["paths"])
    assert client.get("/docs").status_code == 200


def test_visual_routes_on_a_lite_server_are_409_saying_what_to_set(client: httpx.Client) -> None:
    r = client.post("/v1/search/image", files={"file": ("q.png", png(32, 32))})
    assert r.status_code == 409 and r.json()["error"]["code"] == "visual_profile_off"
    assert "CARTA_PROFILE=visual" in r.json()["error"]["message"]
    r = client.get("/v1/documents/0123456789abcdef/pages/1/heatmap", params={"query": "x"})
    assert r.status_code == 404  # an unknown document is absent before anything else
