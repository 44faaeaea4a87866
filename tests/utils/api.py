"""Talking to a running Carta API as a client would: upload, follow the job, read the result."""

from __future__ import annotations

import time
from typing import Any

import httpx


def wait_for_job(client: httpx.Client, job: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
    """Poll GET /v1/jobs/{id} until the job is ready or failed."""
    deadline = time.time() + timeout
    while job["status"] not in ("ready", "failed"):
        if time.time() > deadline:
            raise TimeoutError(f"job {job['id']} still {job['status']} after {timeout}s")
        time.sleep(0.1)
        response = client.get(f"/v1/jobs/{job['id']}")
        assert response.status_code == 200, response.text
        job = response.json()
    return job


def ingest_via_api(
    client: httpx.Client, name: str, data: bytes, sidecars: list[tuple[str, bytes]] | None = None, **form: str
) -> dict[str, Any]:
    """Upload (202), wait for the job, return the ready document."""
    files = [("file", (name, data))] + [("sidecars", side) for side in sidecars or []]
    response = client.post("/v1/documents", files=files, data=form)
    assert response.status_code == 202, response.text
    job = wait_for_job(client, response.json()["job"])
    assert job["status"] == "ready", job
    document = client.get(f"/v1/documents/{job['document_id']}")
    assert document.status_code == 200, document.text
    return document.json()
