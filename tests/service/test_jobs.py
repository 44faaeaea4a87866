"""Durable ingestion jobs: 202 + progress over SSE, the job table and uploads survive a
restart (queued jobs resume, jobs interrupted too often fail cleanly), one job per
content in flight, documents invisible until ready."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from index.registry import Document
from ingest.upload import IngestRequest
from service.auth import Principal
from service.carta import Carta
from service.errors import HiddenDuplicate
from service.jobs import Job, JobRunner, JobStore
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer

LOCAL = Principal("local", "default", admin=True)


def pdf(pages: int, word: str = "relatório") -> bytes:
    lines = [f"{word} página {i + 1}: chuvas e drenagem no bairro {i}" for i in range(pages)]
    return make_pdf(lines, origin=(72, 72), fontsize=11)


def sse(client: httpx.Client, path: str) -> list[tuple[str, dict]]:
    events: list[tuple[str, dict]] = []
    with client.stream("GET", path) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        name = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                events.append((name, json.loads(line[6:])))
    return events


def test_upload_is_a_job_with_progress_events(make_carta: Callable[..., Carta]) -> None:
    server = LiveServer(make_carta(ingest_workers=1))
    with server, httpx.Client(base_url=server.url, timeout=120) as client:
        r = client.post("/v1/documents", files={"file": ("long.pdf", pdf(20))})
        assert r.status_code == 202
        job = r.json()["job"]
        assert set(job) >= {"id", "status", "stage", "pages_done", "pages_total", "document_id", "error"}
        events = sse(client, f"/v1/jobs/{job['id']}/events")
        names = [n for n, _ in events]
        assert names[-1] == "done" and set(names[:-1]) <= {"progress"}
        final = events[-1][1]
        assert final["status"] == "ready" and final["pages_done"] == final["pages_total"] == 20
        dones = [e["pages_done"] for n, e in events if n == "progress"]
        assert dones == sorted(dones)
        doc = client.get(f"/v1/documents/{final['document_id']}").json()
        assert doc["status"] == "ready" and doc["pages"] == 20
        # the finished job's stream is one `done` event
        assert [n for n, _ in sse(client, f"/v1/jobs/{job['id']}/events")] == ["done"]
        assert client.get("/v1/jobs/nope").status_code == 404
        # erasure takes the finished jobs along
        assert client.delete(f"/v1/documents/{doc['id']}").status_code == 200
        assert client.get(f"/v1/jobs/{job['id']}").status_code == 404


def test_queued_jobs_survive_a_restart_and_resume(make_carta: Callable[..., Carta], tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    carta = make_carta(data_dir)
    store = JobStore(carta.settings.jobs_path)
    # never started: the process "dies"
    runner = JobRunner(carta.ingestor, store, carta.settings.uploads_dir, workers=1, max_attempts=3)
    content = pdf(3)
    first = runner.submit(LOCAL, content, "a.pdf", "A", {"source": "t"}, [])
    again = runner.submit(LOCAL, content, "a-copy.pdf", None, {}, [])
    assert again.job.id == first.job.id and not again.created  # one job per content in flight
    assert carta.registry.get("default", first.job.document_id) is None
    store.close()
    carta.close()

    carta = make_carta(data_dir)
    store = JobStore(carta.settings.jobs_path)
    runner = JobRunner(carta.ingestor, store, carta.settings.uploads_dir, workers=1, max_attempts=3)
    runner.start()
    try:
        job = _wait(store, first.job.id)
        assert job.status == "ready" and job.attempts == 1
        doc = carta.registry.get("default", job.document_id)
        assert doc is not None and doc.status == "ready" and doc.title == "A" and doc.pages == 3
    finally:
        runner.stop()  # the worker marks the job ready, then removes the upload: let it finish
        store.close()
    assert not (carta.settings.uploads_dir / job.id).exists()  # the upload copy is gone


def test_jobs_interrupted_too_often_or_without_their_file_fail_cleanly(
    make_carta: Callable[..., Carta],
) -> None:
    carta = make_carta()
    store = JobStore(carta.settings.jobs_path)
    upload = carta.settings.uploads_dir
    worn = Job("j1", "default", "local", "x.pdf", status="running", attempts=3, document_id="d1")
    (upload / "j1").mkdir(parents=True)
    (upload / "j1" / "file").write_bytes(pdf(1))
    lost = Job("j2", "default", "local", "y.pdf", status="queued", document_id="d2")
    store.add(worn)
    store.add(lost)
    carta.registry.put(
        Document("default", "d1", "x", "x.pdf", "application/pdf", "pdf", 1, "lite", status="processing")
    )
    runner = JobRunner(carta.ingestor, store, carta.settings.uploads_dir, workers=1, max_attempts=3)
    runner.start()
    try:
        assert store.get("j1").status == "failed" and "interrupted 3 times" in store.get("j1").error
        assert store.get("j2").status == "failed" and "lost" in store.get("j2").error
        assert not (upload / "j1").exists()
    finally:
        runner.stop()
        store.close()


def test_documents_being_indexed_are_invisible(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    carta.registry.put(
        Document("default", "half", "h", "h.pdf", "application/pdf", "pdf", 1, "lite", status="processing")
    )
    server = LiveServer(carta)
    with server, httpx.Client(base_url=server.url, timeout=60) as client:
        assert client.get("/v1/documents").json() == []
        assert client.get("/v1/documents/half").status_code == 404
        assert client.delete("/v1/documents/half").status_code == 404


def test_a_failing_job_reports_its_error(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    store = JobStore(carta.settings.jobs_path)
    runner = JobRunner(carta.ingestor, store, carta.settings.uploads_dir, workers=1, max_attempts=3)
    submitted = runner.submit(LOCAL, pdf(2), "a.pdf", None, {}, [])
    (carta.settings.uploads_dir / submitted.job.id / "file").write_bytes(b"%PDF-1.4 broken on disk")
    runner.start()
    try:
        job = _wait(store, submitted.job.id)
        assert job.status == "failed" and job.error
        assert carta.registry.get("default", submitted.job.document_id) is None
    finally:
        runner.stop()
        store.close()


def _wait(store: JobStore, job_id: str, timeout: float = 120) -> Job:
    import time

    deadline = time.time() + timeout
    while True:
        job = store.get(job_id)
        assert job is not None
        if job.status in ("ready", "failed") or time.time() > deadline:
            return job
        time.sleep(0.1)


def test_in_process_delete_erases_the_documents_jobs(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    """`carta delete` without a server: Carta registers the job table's erasure hook itself,
    so the finished job rows that name the file go with the document."""
    data_dir = tmp_path / "d"
    carta = make_carta(data_dir)
    runner = JobRunner(carta.ingestor, carta.job_store, carta.settings.uploads_dir, workers=1, max_attempts=3)
    submitted = runner.submit(LOCAL, pdf(1), "a.pdf", None, {}, [])
    runner.start()
    try:
        job = _wait(carta.job_store, submitted.job.id)
    finally:
        runner.stop()
    assert job.status == "ready" and job.document_id
    carta.close()

    again = make_carta(data_dir)  # a later process: no API, no job runner
    assert again.job_store.get(job.id) is not None
    again.delete("default", job.document_id)
    assert again.job_store.get(job.id) is None
    assert again.registry.get("default", job.document_id) is None


def test_an_in_flight_or_indexed_duplicate_is_handed_only_to_keys_that_may_see_it(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    carta = make_carta(tmp_path / "acl")
    store = JobStore(tmp_path / "acl-jobs.sqlite3")
    runner = JobRunner(carta.ingestor, store, tmp_path / "acl-uploads", workers=1, max_attempts=3)
    fin = Principal("k_fin", "acme", ("finance",))
    fin2 = Principal("k_fin2", "acme", ("finance",))
    plain = Principal("k_plain", "acme")
    admin = Principal("k_admin", "acme", admin=True)
    other = Principal("k_beta", "beta", admin=True)
    try:
        content = pdf(1, "orçamento")
        first = runner.submit(fin, content, "a.pdf", "Secret title", {"m": "secret"}, ["finance"])
        assert first.created and first.job.acl == ["finance"]
        # in flight (never started): keys of the group share the job; the others are refused
        assert runner.submit(fin2, content, "b.pdf", None, {}, []).job.id == first.job.id
        with pytest.raises(HiddenDuplicate) as refused:
            runner.submit(plain, content, "c.pdf", None, {}, [])
        assert first.job.document_id not in str(refused.value) and "Secret" not in str(refused.value)
        assert [store.get(first.job.id).id] == [first.job.id]  # nothing was added for the refusal
        keys = (fin, fin2, plain, admin, other)
        visible = {p.key_id: runner.visible_job(p, first.job.id) is not None for p in keys}
        assert visible == {"k_fin": True, "k_fin2": True, "k_plain": False, "k_admin": True, "k_beta": False}

        # indexed: the same answer, from the registry's groups
        carta.ingest(IngestRequest(content, "a.pdf", "acme", "Secret title", acl=["finance"]))
        store.update(first.job.id, status="ready", stage="done")
        again = runner.submit(fin2, content, "b.pdf", None, {}, [])
        assert not again.created and again.document is not None and again.job.acl == ["finance"]
        with pytest.raises(HiddenDuplicate):
            runner.submit(plain, content, "c.pdf", None, {}, [])
        assert runner.visible_job(plain, again.job.id) is None
        assert runner.visible_job(fin, again.job.id) is not None
        # a job row of an older version (no groups recorded) follows its document's groups
        store.add(Job("legacy", "acme", "k_old", "a.pdf", status="ready", document_id=first.job.document_id))
        assert runner.visible_job(plain, "legacy") is None and runner.visible_job(fin, "legacy") is not None
        # a public document's job is every key's of the tenant, not another tenant's
        public = runner.submit(plain, pdf(1, "público"), "p.pdf", None, {}, [])
        assert runner.visible_job(fin, public.job.id) is not None
        assert runner.visible_job(other, public.job.id) is None
    finally:
        store.close()
