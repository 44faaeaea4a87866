"""`HttpClient`: the CartaClient against a running Carta (`carta serve`) over its /v1 API,
with the caller's API key. The server's error message becomes `RequestFailed`; no answer
at all becomes `ServerUnreachable`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from ingest.errors import IngestError
from service.cli.client import GeoBody, Json, ProgressFn, RequestFailed, ServerUnreachable
from service.query.types import PriorMode

SIDECAR_SUFFIXES = (".pgw", ".jgw", ".tfw", ".wld", ".pngw", ".jpgw", ".tifw", ".prj")
JOB_POLL_S = 0.5


def sidecar_files(path: Path) -> list[Path]:
    """Georeference files next to a map image: world file, .prj, GDAL .aux.xml."""
    found = [path.with_suffix(s) for s in SIDECAR_SUFFIXES] + [path.with_name(path.name + ".aux.xml")]
    return [p for p in found if p.is_file()]


def error_message(response: httpx.Response) -> str:
    """The message of the API's error JSON, or the status and the start of the body."""
    try:
        return response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return f"HTTP {response.status_code}: {response.text[:200]}"


class HttpClient:
    """CartaClient on the server at `url`; `api_key` (CARTA_API_KEY) picks the tenant there."""

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        timeout: float = 600,
        transport: httpx.BaseTransport | None = None,  # tests pass an httpx.MockTransport
    ) -> None:
        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=self.url, timeout=timeout, headers=headers, transport=transport)

    def _unreachable(self, exc: httpx.HTTPError) -> ServerUnreachable:
        return ServerUnreachable(f"cannot reach the Carta server at {self.url} ({exc.__class__.__name__})")

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request's JSON body (RequestFailed on an error status)."""
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc
        if response.status_code >= 400:
            raise RequestFailed(error_message(response))
        return response.json()

    def documents(self) -> list[Json]:
        return self._call("GET", "/v1/documents")

    def ingest(self, path: Path, *, title: str | None = None, on_progress: ProgressFn | None = None) -> Json:
        """Upload and follow the job until the document is ready (or failed)."""
        files = [("file", (path.name, path.read_bytes()))] + [
            ("sidecars", (side.name, side.read_bytes())) for side in sidecar_files(path)
        ]
        body = self._call("POST", "/v1/documents", files=files, data={"title": title} if title else {})
        job = body["job"]
        while job["status"] not in ("ready", "failed"):
            if on_progress:
                on_progress(job["pages_done"], job["pages_total"] or None)
            time.sleep(JOB_POLL_S)
            job = self._call("GET", f"/v1/jobs/{job['id']}")
        if job["status"] == "failed":
            raise IngestError(job["error"] or "the ingestion job failed")
        document = body["document"] or self._call("GET", f"/v1/documents/{job['document_id']}")
        return {"document": document, "created": body["created"], "warnings": job["warnings"], "job": job}

    def delete(self, doc_id: str) -> None:
        self._call("DELETE", f"/v1/documents/{doc_id}")

    def search(
        self,
        query: str,
        *,
        top_k: int,
        geo: GeoBody | None = None,
        geo_prior: bool = True,
        geo_prior_mode: PriorMode | None = None,
        channels: frozenset[str] | None = None,
    ) -> Json:
        request: Json = {"query": query, "top_k": top_k, "geo": geo, "geo_prior": geo_prior}
        if geo_prior_mode:
            request["geo_prior_mode"] = geo_prior_mode
        if channels is not None:
            request["channels"] = sorted(channels)
        return self._call("POST", "/v1/search", json=request)

    def ask(self, question: str, *, top_k: int, geo: GeoBody | None = None, geo_prior: bool = True) -> Json:
        request = {"question": question, "top_k": top_k, "geo": geo, "geo_prior": geo_prior}
        return self._call("POST", "/v1/ask", json=request)

    def ask_events(
        self, question: str, *, top_k: int, geo: GeoBody | None = None, geo_prior: bool = True
    ) -> Iterator[tuple[str, Json]]:
        from service.api.streaming import parse_sse  # the web framework: streamed asks only

        request = {"question": question, "top_k": top_k, "geo": geo, "geo_prior": geo_prior, "stream": True}
        try:
            with self.http.stream("POST", "/v1/ask", json=request) as response:
                if response.status_code >= 400:
                    response.read()
                    raise RequestFailed(error_message(response))
                yield from parse_sse(response.iter_lines())
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc

    def page_text(self, doc_id: str, page_no: int) -> str:
        return self._call("GET", f"/v1/documents/{doc_id}/pages/{page_no}")["text"]

    def datasets(self) -> list[Json]:
        return self._call("GET", "/v1/datasets")

    def add_dataset(self, data: bytes, filename: str, *, category: str | None = None) -> Json:
        files = {"file": (filename, data)}
        return self._call("POST", "/v1/datasets", files=files, data={"category": category or ""})

    def delete_dataset(self, dataset_id: str) -> None:
        self._call("DELETE", f"/v1/datasets/{dataset_id}")

    def entities(self, query: str, *, limit: int = 50) -> list[Json]:
        return self._call("GET", "/v1/entities", params={"q": query, "limit": limit})

    def entity(self, entity_id: int) -> Json:
        return self._call("GET", f"/v1/entities/{entity_id}")

    def close(self) -> None:
        self.http.close()
