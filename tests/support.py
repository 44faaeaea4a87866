"""Test helpers shared by several test packages (imported as `tests.support`)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import httpx

from service.carta import Carta


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """A real uvicorn HTTP server on loopback, in a thread of the test process."""

    def __init__(self, carta: Carta) -> None:
        import uvicorn

        from service.api.app import create_app

        self.carta = carta
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            create_app(carta=carta), host="127.0.0.1", port=self.port, log_level="warning"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        deadline = time.time() + 30
        while not self._server.started:
            if time.time() > deadline:
                raise RuntimeError("test server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


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
