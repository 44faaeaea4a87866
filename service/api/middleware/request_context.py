"""Per-request context: the request id in and out (X-Request-ID, and on every log line
through `request_id_var`), one access log line, Prometheus metrics."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from fastapi import Request, Response

from service.api.state import app_state_of
from service.observability import request_id_from, request_id_var

log = logging.getLogger("carta.http")


async def request_context(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
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
        app_state_of(request.app.state).metrics.observe(request.method, path, status, seconds)
        log.info("%s %s %d %.1fms", request.method, path, status, seconds * 1000)
        request_id_var.reset(token)
