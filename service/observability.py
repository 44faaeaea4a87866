"""Request ids, JSON logs, Prometheus metrics and per-request traces of /v1/ask.

Every request gets an id (the client's `X-Request-ID` when it is sane, else a new one),
echoed in the response header, attached to every log line written while it runs, and
the key under which an ask's trace (channels, scores, timings) can be fetched.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

request_id_var: ContextVar[str | None] = ContextVar("carta_request_id", default=None)
_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def request_id_from(header: str | None) -> str:
    return header if header and _SANE_ID.match(header) else uuid.uuid4().hex


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id (+ exception)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = request_id_var.get()
        if rid:
            entry["request_id"] = rid
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(json_lines: bool) -> None:
    handler = logging.StreamHandler()
    if json_lines:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


class Metrics:
    """The service's Prometheus metrics, in a registry of their own (one per app)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "carta_http_requests_total",
            "HTTP requests",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "carta_http_request_seconds",
            "HTTP request latency",
            ["method", "route"],
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
        )
        self.jobs = Gauge("carta_ingest_jobs", "Ingestion jobs by status", ["status"], registry=self.registry)
        self.rate_limited = Counter(
            "carta_rate_limited_total", "Requests refused by the per-key rate limit", registry=self.registry
        )
        self.auth_failures = Counter(
            "carta_auth_failures_total", "Requests without a valid API key", registry=self.registry
        )
        self.auth_throttled = Counter(
            "carta_auth_throttled_total",
            "Requests refused because their client address sent too many wrong API keys",
            registry=self.registry,
        )

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)


class TraceStore:
    """The last `keep` ask traces, keyed by (tenant, request id): a request id is the
    client's to choose, so two tenants may use the same one without touching each other's
    trace. `forget_document` drops every trace naming a document (an erasure hook)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        # (tenant, request id) -> (the trace, every string in it: the ids it names)
        self._traces: OrderedDict[tuple[str, str], tuple[dict[str, Any], frozenset[str]]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, request_id: str, tenant: str, trace: dict[str, Any]) -> None:
        if self.keep <= 0:
            return
        key = (tenant, request_id)
        with self._lock:
            self._traces[key] = (trace, frozenset(_strings(trace)))
            self._traces.move_to_end(key)
            while len(self._traces) > self.keep:
                self._traces.popitem(last=False)

    def get(self, request_id: str, tenant: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._traces.get((tenant, request_id))
        return found[0] if found else None

    def forget_document(self, tenant: str, doc_id: str) -> None:
        """Erasure: drop the tenant's traces that name `doc_id` anywhere (evidence, citations, ...)."""
        with self._lock:
            for key in [k for k, (_, names) in self._traces.items() if k[0] == tenant and doc_id in names]:
                del self._traces[key]

    def __len__(self) -> int:
        return len(self._traces)


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON-like value (dict keys excluded)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def ask_trace(request_id: str, answer: Any, started: float) -> dict[str, Any]:
    """What one ask did: per-channel ranks and scores of each evidence page, the relevance
    gate, timings. Page ids and scores only, no document text."""
    return {
        "request_id": request_id,
        "total_ms": round((time.perf_counter() - started) * 1000, 2),
        "timings_ms": answer.timings_ms,
        "refused": answer.refused,
        "grounded": answer.grounded,
        "relevance": answer.relevance,
        "evidence": [
            {
                "doc_id": p.doc_id,
                "page_no": p.page_no,
                "score": round(p.score, 6),
                "channels": {k: {"rank": v.rank, "score": round(v.score, 6)} for k, v in p.channels.items()},
            }
            for p in answer.evidence
        ],
        "citations": [{"doc_id": c.doc_id, "page_no": c.page_no} for c in answer.citations],
        "geo_filter": answer.geo_filter,
        "geo_prior": answer.geo_prior,
        "plan": getattr(answer, "plan", None),  # CARTA_PLANNER=auto: routes and retrieval steps
        "communities": getattr(answer, "communities", None),  # a global answer: ids, scores, chunks
    }
