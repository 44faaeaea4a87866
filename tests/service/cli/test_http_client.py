"""`HttpClient` against a fake server (httpx.MockTransport): the request bodies it sends,
the job it follows, and the two errors it turns failures into."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from ingest.errors import IngestError
from service.cli.client import RequestFailed, ServerUnreachable
from service.cli.http_client import HttpClient

URL = "http://carta.test/prefix"
Handler = Callable[[httpx.Request], httpx.Response]


def client(handler: Handler, api_key: str | None = None) -> HttpClient:
    return HttpClient(URL, api_key=api_key, transport=httpx.MockTransport(handler))


def test_search_sends_the_api_body_with_the_key() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"results": []})

    c = client(handler, api_key="s3cret")
    c.search("churn", top_k=3)
    c.search("churn", top_k=3, channels=frozenset({"pages", "bm25"}), geo_prior=False, geo_prior_mode="decay")
    first, second = (json.loads(r.content) for r in sent)
    assert sent[0].url == f"{URL}/v1/search" and sent[0].headers["authorization"] == "Bearer s3cret"
    assert first == {"query": "churn", "top_k": 3, "geo": None, "geo_prior": True}
    assert second["channels"] == ["bm25", "pages"] and second["geo_prior_mode"] == "decay"
    assert second["geo_prior"] is False


def test_error_statuses_become_request_failed_with_the_servers_message() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/v1/documents/nope"):
            return httpx.Response(404, json={"error": {"code": "not_found", "message": "no document 'nope'"}})
        return httpx.Response(502, text="<html>bad gateway</html>")

    c = client(handler)
    with pytest.raises(RequestFailed, match="no document 'nope'") as not_found:
        c.delete("nope")
    assert not_found.value.exit_code == 1
    with pytest.raises(RequestFailed, match=r"^HTTP 502: <html>bad gateway"):
        c.documents()


def test_no_answer_is_server_unreachable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(ServerUnreachable) as caught:
        client(handler).documents()
    assert caught.value.message == f"cannot reach the Carta server at {URL} (ConnectError)"
    assert isinstance(caught.value, ConnectionError)


def test_ingest_uploads_sidecars_and_follows_the_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("service.cli.http_client.JOB_POLL_S", 0)
    png = tmp_path / "map.png"
    png.write_bytes(b"png bytes")
    (tmp_path / "map.pgw").write_text("1\n0\n0\n-1\n0\n0\n")
    polls = iter(
        [{"pages_done": 1, "pages_total": 3, "status": "running"}, {"pages_done": 3, "status": "ready"}]
    )
    uploads: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            uploads.append(request.content)
            job = {"id": "j1", "status": "queued", "pages_done": 0, "pages_total": None}
            return httpx.Response(202, json={"job": job, "document": None, "created": True})
        if request.url.path.endswith("/v1/jobs/j1"):
            poll = next(polls)
            job = {"id": "j1", "document_id": "d1", "warnings": [], "error": None, "pages_total": 3, **poll}
            return httpx.Response(200, json=job)
        assert request.url.path.endswith("/v1/documents/d1")
        return httpx.Response(200, json={"id": "d1", "status": "ready"})

    progress: list[tuple[int, int | None]] = []
    body = client(handler).ingest(
        png, title="Map", on_progress=lambda done, total: progress.append((done, total))
    )
    assert body["document"] == {"id": "d1", "status": "ready"} and body["created"] is True
    assert body["job"]["status"] == "ready" and body["warnings"] == []
    assert progress == [(0, None), (1, 3)]  # queued (no page count yet), then running
    assert b'name="sidecars"; filename="map.pgw"' in uploads[0] and b'name="title"' in uploads[0]


def test_a_failed_job_is_an_ingest_error(tmp_path: Path) -> None:
    pdf = tmp_path / "broken.pdf"
    pdf.write_bytes(b"%PDF-1.4 not really")

    def handler(request: httpx.Request) -> httpx.Response:
        job = {"id": "j1", "status": "failed", "error": "the PDF is damaged", "pages_done": 0}
        return httpx.Response(202, json={"job": job, "document": None, "created": True})

    with pytest.raises(IngestError, match="the PDF is damaged"):
        client(handler).ingest(pdf)
