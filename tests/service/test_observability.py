"""Request ids, /metrics, /readyz, ask traces, JSON logs, the audit log and the
streamed upload limit, through a real server; the trace store keyed per tenant."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Iterator

import httpx
import pytest

from service.audit import AuditLog
from service.carta import Carta
from service.observability import JsonFormatter, TraceStore, request_id_var
from tests.service.test_jobs import pdf
from tests.utils.api import ingest_via_api
from tests.utils.servers import LiveServer


@pytest.fixture
def server(serve: Callable[..., LiveServer]) -> LiveServer:
    return serve(max_upload_bytes=200_000)


def test_request_ids_metrics_readyz_and_ask_traces(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        doc = ingest_via_api(client, "r.pdf", pdf(2, "Parque da Jaqueira"))
        r = client.post(
            "/v1/ask", json={"question": "chuvas no Parque da Jaqueira"}, headers={"X-Request-ID": "my-id-1"}
        )
        assert r.status_code == 200 and r.headers["x-request-id"] == "my-id-1"
        generated = client.get("/v1/documents").headers["x-request-id"]
        assert len(generated) == 32 and generated != "my-id-1"
        odd = client.get("/healthz", headers={"X-Request-ID": "bad id\twith spaces"}).headers["x-request-id"]
        assert odd != "bad id\twith spaces"

        trace = client.get("/v1/traces/my-id-1").json()
        assert trace["request_id"] == "my-id-1" and trace["total_ms"] > 0
        assert trace["evidence"] and trace["evidence"][0]["doc_id"] == doc["id"]
        assert set(trace["evidence"][0]["channels"]) & {"dense", "bm25_pt", "bm25_en", "pages"}
        assert trace["timings_ms"] and all(v >= 0 for v in trace["timings_ms"].values())
        assert "Jaqueira" not in json.dumps(trace)  # ids and scores, no document or question text
        assert client.get("/v1/traces/unknown").status_code == 404

        metrics = client.get("/metrics")
        assert metrics.headers["content-type"].startswith("text/plain")
        text = metrics.text
        assert 'carta_http_requests_total{method="POST",route="/v1/ask",status="200"} 1.0' in text
        assert 'carta_ingest_jobs{status="ready"} 1.0' in text
        assert "carta_http_request_seconds_bucket" in text

        ready = client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json() == {
            "status": "ready",
            "checks": {"store": "ok", "registry": "ok", "text_model": "ok", "jobs": "ok"},
        }


def test_readyz_is_503_when_the_store_is_gone(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    with LiveServer(carta) as live, httpx.Client(base_url=live.url) as client:
        carta.store.close()
        r = client.get("/readyz")
        assert r.status_code == 503 and r.json()["checks"]["store"] != "ok"
        assert r.json()["checks"]["text_model"] == "ok"


def test_audit_log_records_who_what_which_without_text(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        doc = ingest_via_api(client, "r.pdf", pdf(1, "segredo"))
        client.post("/v1/search", json={"query": "segredo página"})
        client.post("/v1/ask", json={"question": "segredo?"}, headers={"X-Request-ID": "ask-1"})
        client.delete(f"/v1/documents/{doc['id']}")
    log = AuditLog(server.carta.settings.audit_path)
    try:
        events = log.events()
        assert [e.action for e in events] == ["upload", "search", "ask", "delete"]
        assert all(e.key_id == "local" and e.tenant == "default" and e.doc_ids == [doc["id"]] for e in events)
        assert events[2].request_id == "ask-1"
        raw = server.carta.settings.audit_path.read_bytes()
        assert b"segredo" not in raw
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            log._conn.execute("UPDATE audit SET tenant='x'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            log._conn.execute("DELETE FROM audit")
    finally:
        log.close()


def test_uploads_over_the_limit_are_refused_while_streaming(server: LiveServer) -> None:
    big = b"%PDF-1.7\n" + b"0" * 9_000_000
    with httpx.Client(base_url=server.url, timeout=60) as client:
        r = client.post("/v1/documents", files={"file": ("big.pdf", big)})
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="x.pdf"\r\n\r\n'
            for _ in range(100):
                yield b"0" * 100_000

        r = client.post(
            "/v1/documents", content=chunks(), headers={"Content-Type": "multipart/form-data; boundary=b"}
        )
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
        # just above the file limit but within the multipart allowance: the handler refuses it
        r = client.post("/v1/documents", files={"file": ("mid.pdf", b"%PDF-1.7\n" + b"0" * 300_000)})
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
        assert client.get("/v1/documents").json() == []


def test_json_log_lines_carry_the_request_id() -> None:
    record = logging.LogRecord("carta.http", logging.INFO, __file__, 1, "GET %s", ("/x",), None)
    token = request_id_var.set("rid-7")
    try:
        line = json.loads(JsonFormatter().format(record))
    finally:
        request_id_var.reset(token)
    assert line["request_id"] == "rid-7" and line["message"] == "GET /x" and line["level"] == "INFO"


def trace_naming(*doc_ids: str) -> dict:
    return {"evidence": [{"doc_id": d, "page_no": 1} for d in doc_ids], "citations": []}


def test_traces_are_keyed_by_tenant_and_request_id() -> None:
    traces = TraceStore(keep=10)
    traces.put("same-id", "acme", trace_naming("a1"))
    traces.put("same-id", "beta", trace_naming("b1"))  # beta picks acme's id: both kept
    assert traces.get("same-id", "acme") == trace_naming("a1")
    assert traces.get("same-id", "beta") == trace_naming("b1")
    assert traces.get("same-id", "gamma") is None
    for i in range(20):
        traces.put(f"r{i}", "acme", trace_naming("x"))
    assert len(traces) == 10 and traces.get("same-id", "beta") is None  # oldest went first


def test_forgetting_a_document_drops_the_traces_naming_it() -> None:
    traces = TraceStore(keep=10)
    traces.put("r1", "acme", trace_naming("d1", "d2"))
    traces.put("r2", "acme", {"evidence": [], "citations": [{"doc_id": "d1", "page_no": 2}]})
    traces.put("r3", "acme", trace_naming("d2"))
    traces.put("r4", "beta", trace_naming("d1"))  # the same id in another tenant is another document
    traces.forget_document("acme", "d1")
    assert traces.get("r1", "acme") is None and traces.get("r2", "acme") is None
    assert traces.get("r3", "acme") is not None and traces.get("r4", "beta") is not None
