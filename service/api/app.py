"""The HTTP API (FastAPI), versioned under /v1, OpenAPI at /docs.

Every /v1 route takes the caller from its API key (service/api/deps.py): the tenant and
ACL groups come from the key, never from the request. Uploads become durable jobs
(service/jobs.py). Errors are JSON: {"error": {"code": ..., "message": ...}}, from the one
table in service/api/errors.py.

To add a route: write it in the resource's module under routes/ (or a new module there,
included below).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool

from service.api.errors import add_error_handlers
from service.api.middleware.body_limit import BodyLimitMiddleware
from service.api.middleware.request_context import request_context
from service.api.openapi import install_openapi
from service.api.routes import ask, datasets, documents, examples, jobs, keys, ops, search, ui, visual
from service.api.routes import entities as entity_routes
from service.api.state import AppState, Services, app_state_of, attach
from service.audit import AuditLog
from service.auth import FailedAuthThrottle, KeyStore, RateLimiter
from service.carta import Carta
from service.jobs import JobRunner
from service.observability import Metrics, TraceStore
from service.settings import Settings

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, carta: Carta | None = None) -> FastAPI:
    """The app; pass `carta` to share an already-built instance (tests, `carta serve`)."""
    settings = settings or (carta.settings if carta else Settings())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = app_state_of(app.state)
        services = await run_in_threadpool(open_services, settings, carta)
        services.jobs.start()
        state.services = services
        services.carta.erasure_hooks.append(state.traces.forget_document)  # traces name documents
        # /healthz answers now; the models load behind it (/readyz says when they encode)
        threading.Thread(target=warm_up, args=(services.carta,), name="carta-warm-up", daemon=True).start()
        try:
            yield
        finally:
            state.services = None
            services.carta.erasure_hooks.remove(state.traces.forget_document)
            services.jobs.stop()
            for part in (services.audit, services.keys):
                part.close()
            if carta is None:  # built here, so closed here
                services.carta.close()

    app = FastAPI(
        title="Carta",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # /docs and /redoc come from routes/ui.py, with vendored assets (no CDN)
        redoc_url=None,
        description="Multimodal, geospatial document RAG: upload PDFs and images, search and ask.",
    )
    attach(
        app.state,
        AppState(
            settings=settings,
            metrics=Metrics(),
            traces=TraceStore(settings.trace_keep),
            limiter=RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst),
            auth_throttle=FailedAuthThrottle(settings.auth_fail_per_second, settings.auth_fail_burst),
        ),
    )
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_upload_bytes)
    app.middleware("http")(request_context)
    add_error_handlers(app)
    for module in (ops, documents, search, ask, examples, visual, datasets, jobs, keys):
        app.include_router(module.router)
    app.include_router(entity_routes.router)
    ui.mount_ui(app)  # last: the /ui mount answers every /ui/* path
    install_openapi(app)
    return app


def warm_up(carta: Carta) -> None:
    """Load the models and indexes the first query needs, so it does not wait for them; a
    model that fails to load is logged here and refused with its message on each request."""
    try:
        carta.warm_up()
    except Exception:  # noqa: BLE001 - a background load must not die silently
        log.exception("warming up the models failed")


def open_services(settings: Settings, carta: Carta | None) -> Services:
    """The service object (unless one was passed in), keys, audit log and job runner. The
    job table is the service object's (built, erasure hook included, and closed with it)."""
    c = carta or Carta(settings)
    workers, attempts = c.settings.ingest_workers, c.settings.job_max_attempts
    return Services(
        carta=c,
        keys=KeyStore(c.settings.auth_path),
        audit=AuditLog(c.settings.audit_path),
        job_store=c.job_store,
        jobs=JobRunner(c.ingestor, c.job_store, c.settings.uploads_dir, workers, attempts),
    )
