"""The operational side of the HTTP API: request ids and metrics (middleware), the upload
body limit, ingestion jobs and their event stream, API keys, ask traces, /metrics and
/readyz. Wired into the app by service/api.py."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api import schemas
from service.auth import AuthError, Caller, Principal, check_name
from service.jobs import TERMINAL, Job
from service.observability import request_id_from, request_id_var

log = logging.getLogger("carta.http")
_ERRORS = {"model": schemas.ErrorResponse}
SIDECAR_ALLOWANCE = 8 * 1_000_000  # multipart overhead, form fields and sidecars on top of the file


async def request_middleware(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    """Request id in and out (X-Request-ID), one access log line, Prometheus metrics."""
    rid = request_id_from(request.headers.get("x-request-id"))
    request.state.request_id = rid
    token = request_id_var.set(rid)
    started = time.perf_counter()
    status = 500
    try:
        response = await call_next(request)
        status = response.status_code
        response.headers["X-Request-ID"] = rid
        return response
    finally:
        seconds = time.perf_counter() - started
        route = request.scope.get("route")
        path = getattr(route, "path", "unmatched")
        request.app.state.metrics.observe(request.method, path, status, seconds)
        log.info("%s %s %d %.1fms", request.method, path, status, seconds * 1000)
        request_id_var.reset(token)


class BodyLimit:
    """Refuse an upload larger than the limit while it streams in (413), by its
    Content-Length when it has one, else by counting the bytes received."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes + SIDECAR_ALLOWANCE

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            too_large = JSONResponse(
                {"error": {"code": "too_large", "message": self._message()}}, status_code=413
            )
            await too_large(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise StarletteHTTPException(413, self._message())
            return message

        await self.app(scope, counted, send)

    def _message(self) -> str:
        return f"the request body exceeds {self.max_bytes:,} bytes (CARTA_MAX_UPLOAD_BYTES plus sidecars)"


def body_limit_middleware(max_bytes: int) -> Callable[[ASGIApp], ASGIApp]:
    return lambda app: BodyLimit(app, max_bytes)


def add_ops_routes(app: FastAPI) -> None:
    """Jobs, keys, traces, metrics and readiness routes."""

    def own_job(request: Request, who: Principal, job_id: str) -> Job:
        job = request.app.state.job_store.get(job_id)
        if job is None or job.tenant != who.tenant or not (who.admin or job.key_id == who.key_id):
            raise AuthError(404, "not_found", f"no job {job_id!r}")
        return job

    @app.get("/v1/jobs/{job_id}", response_model=schemas.JobOut, tags=["jobs"], responses={404: _ERRORS})
    def get_job(request: Request, who: Caller, job_id: str) -> Any:
        """An ingestion job: status, stage, pages done of total, the document when ready."""
        return own_job(request, who, job_id).out()

    @app.get(
        "/v1/jobs/{job_id}/events",
        tags=["jobs"],
        response_class=StreamingResponse,
        responses={404: _ERRORS, 200: {"content": {"text/event-stream": {}}}},
    )
    async def job_events(request: Request, who: Caller, job_id: str) -> StreamingResponse:
        """Server-sent events: `progress` (JobOut) on every change, then `done` (JobOut)."""
        store = request.app.state.job_store
        own_job(request, who, job_id)

        async def events() -> AsyncIterator[str]:
            last: dict[str, Any] | None = None
            while True:
                job = await run_in_threadpool(store.get, job_id)
                if job is None:  # erased meanwhile
                    return
                out = job.out()
                if job.status in TERMINAL:
                    yield f"event: done\ndata: {json.dumps(out)}\n\n"
                    return
                if out != last:
                    yield f"event: progress\ndata: {json.dumps(out)}\n\n"
                    last = out
                if await request.is_disconnected():
                    return
                await asyncio.sleep(0.25)

        return StreamingResponse(
            events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    def admin_only(who: Principal) -> None:
        if not who.admin:
            raise AuthError(403, "forbidden", "only an admin key may manage API keys")

    @app.post(
        "/v1/keys",
        status_code=201,
        response_model=schemas.KeyCreated,
        tags=["keys"],
        responses={400: _ERRORS, 403: _ERRORS},
    )
    def create_key(request: Request, who: Caller, body: schemas.KeyRequest) -> Any:
        """A new key of the caller's tenant (admin keys only); the secret is shown once."""
        admin_only(who)
        try:
            for g in body.groups:
                check_name(g, "group")
        except ValueError as exc:
            raise AuthError(400, "invalid_groups", str(exc)) from exc
        key, secret = request.app.state.keys.create(who.tenant, body.groups, body.admin, body.label)
        request.app.state.audit.record(who.key_id, who.tenant, "key_create", [], request.state.request_id)
        return schemas.KeyCreated(**schemas.KeyOut(**key.to_dict()).model_dump(), secret=secret)

    @app.get("/v1/keys", response_model=list[schemas.KeyOut], tags=["keys"], responses={403: _ERRORS})
    def list_keys(request: Request, who: Caller) -> Any:
        """The keys of the caller's tenant (admin keys only), without secrets."""
        admin_only(who)
        return [k.to_dict() for k in request.app.state.keys.list() if k.tenant == who.tenant]

    @app.delete("/v1/keys/{key_id}", tags=["keys"], responses={403: _ERRORS, 404: _ERRORS})
    def revoke_key(request: Request, who: Caller, key_id: str) -> dict[str, str]:
        admin_only(who)
        keys = request.app.state.keys
        mine = {k.id for k in keys.list() if k.tenant == who.tenant}
        if key_id not in mine or not keys.revoke(key_id):
            raise AuthError(404, "not_found", f"no active key {key_id!r}")
        request.app.state.audit.record(who.key_id, who.tenant, "key_revoke", [], request.state.request_id)
        return {"revoked": key_id}

    @app.get("/v1/traces/{request_id}", tags=["ops"], responses={404: _ERRORS})
    def get_trace(request: Request, who: Caller, request_id: str) -> dict[str, Any]:
        """What one /v1/ask did (channels, ranks, scores, timings), by its X-Request-ID."""
        trace = request.app.state.traces.get(request_id, who.tenant)
        if trace is None:
            raise AuthError(
                404, "not_found", f"no trace for request {request_id!r} (kept: the last few asks)"
            )
        return trace

    @app.get("/metrics", tags=["ops"], response_class=Response)
    def metrics(request: Request) -> Response:
        """Prometheus metrics (requests, latency, jobs by status, auth failures, rate limits)."""
        m = request.app.state.metrics
        for status, n in request.app.state.job_store.counts().items():
            m.jobs.labels(status).set(n)
        return Response(generate_latest(m.registry), media_type=CONTENT_TYPE_LATEST)

    @app.get("/readyz", tags=["ops"], responses={503: _ERRORS})
    def readyz(request: Request) -> JSONResponse:
        """Ready to serve: the store answers, the registry reads, the text model encodes."""
        c = request.app.state.carta
        checks: dict[str, str] = {}
        for name, probe in (
            ("store", lambda: [c.store.count(s.name) for s in c.collections.all()]),
            ("registry", lambda: c.registry.ids_with_status("processing")),
            ("text_model", lambda: c.text.embed_with_tokens(["ready"])),
            ("jobs", lambda: request.app.state.job_store.counts()),
        ):
            try:
                probe()
                checks[name] = "ok"
            except Exception as exc:  # a readiness probe reports, it does not raise
                checks[name] = f"{exc.__class__.__name__}: {exc}"[:200]
        ready = all(v == "ok" for v in checks.values())
        return JSONResponse(
            {"status": "ready" if ready else "not_ready", "checks": checks}, 200 if ready else 503
        )
