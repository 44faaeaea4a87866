"""The app's typed state: what every route shares, held on `app.state` under one name
instead of a bag of untyped attributes.

`AppState` is built by `create_app` (metrics, traces, rate limiters: cheap, needed by the
middleware before the app starts); `Services` by the lifespan (the service object, keys,
audit log and jobs: they open files and start threads, so they live only while the app runs).
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.datastructures import State

from service.audit import AuditLog
from service.auth import FailedAuthThrottle, KeyStore, RateLimiter
from service.carta import Carta
from service.jobs import JobRunner, JobStore
from service.observability import Metrics, TraceStore
from service.settings import Settings


@dataclass
class Services:
    """What the lifespan opens and closes."""

    carta: Carta
    keys: KeyStore
    audit: AuditLog
    job_store: JobStore
    jobs: JobRunner


@dataclass
class AppState:
    """Everything the routes and middleware share; `services` is set while the app runs."""

    settings: Settings
    metrics: Metrics
    traces: TraceStore
    limiter: RateLimiter
    auth_throttle: FailedAuthThrottle  # wrong keys per client address
    services: Services | None = None

    def running(self) -> Services:
        """The lifespan's services; RuntimeError before the app started or after it stopped."""
        if self.services is None:
            raise RuntimeError("the Carta app is not running: its lifespan has not started")
        return self.services


def attach(state: State, app_state: AppState) -> None:
    """Hold `app_state` on a Starlette app's state."""
    state.carta_app = app_state


def app_state_of(state: State) -> AppState:
    """The AppState that `attach` put on a Starlette app's state."""
    found = state.carta_app
    if not isinstance(found, AppState):
        raise RuntimeError("this app was not built by service.api.app.create_app")
    return found
