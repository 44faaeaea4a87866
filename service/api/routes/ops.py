"""Operations: /healthz, /readyz, /metrics (Prometheus) and /v1/traces (what one ask did)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from service.api.deps import Caller, CartaDep, ServicesDep, StateDep
from service.api.errors import ERROR_RESPONSES as _ERRORS
from service.errors import TraceNotFound

router = APIRouter(tags=["ops"])


@router.get("/healthz")
def healthz(carta: CartaDep) -> dict[str, Any]:
    return {
        "status": "ok",
        "profile": carta.profile,
        "visual_unavailable": carta.visual_error,
        "reindex_needed": carta.reindex_needed(),
        "text_model": carta.text.slug,
        "collections": [s.name for s in carta.collections.all()],
    }


@router.get("/v1/traces/{request_id}", responses={404: _ERRORS})
def get_trace(state: StateDep, who: Caller, request_id: str) -> dict[str, Any]:
    """What one /v1/ask did (channels, ranks, scores, timings), by its X-Request-ID."""
    trace = state.traces.get(request_id, who.tenant)
    if trace is None:
        raise TraceNotFound(f"no trace for request {request_id!r} (kept: the last few asks)")
    return trace


@router.get("/metrics", response_class=Response)
def metrics(state: StateDep, services: ServicesDep) -> Response:
    """Prometheus metrics (requests, latency, jobs by status, auth failures, rate limits)."""
    m = state.metrics
    for status, n in services.job_store.counts().items():
        m.jobs.labels(status).set(n)
    return Response(generate_latest(m.registry), media_type=CONTENT_TYPE_LATEST)


@router.get("/readyz", responses={503: _ERRORS})
def readyz(services: ServicesDep) -> JSONResponse:
    """Ready to serve: the store answers, the registry reads, the text model encodes."""
    c = services.carta
    probes: dict[str, Callable[[], object]] = {
        "store": lambda: [c.store.count(s.name) for s in c.collections.all()],
        "registry": lambda: c.registry.ids_with_status("processing"),
        "text_model": lambda: c.text.embed_with_tokens(["ready"]),
        "jobs": lambda: services.job_store.counts(),
    }
    checks: dict[str, str] = {}
    for name, probe in probes.items():
        try:
            probe()
            checks[name] = "ok"
        except Exception as exc:  # a readiness probe reports, it does not raise
            checks[name] = f"{exc.__class__.__name__}: {exc}"[:200]
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ready" if ready else "not_ready", "checks": checks}, 200 if ready else 503
    )
