"""Former home of the shared test helpers, now in tests/utils/ (servers, api).

Kept as re-exports only so that test modules written on branches merged alongside this one
still import; new code imports from tests.utils.* directly. Delete once nothing imports it."""

from __future__ import annotations

from tests.utils.api import ingest_via_api, wait_for_job
from tests.utils.servers import LiveServer, free_port

__all__ = ["LiveServer", "free_port", "ingest_via_api", "wait_for_job"]
