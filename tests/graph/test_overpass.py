"""Overpass fetches against a loopback HTTP server: retries, backoff, timeouts, cache."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.overpass import OverpassClient, OverpassError, around_query
from tests.utils.servers import Reply, ScriptedHTTPServer

BODY = {"elements": [{"type": "node", "id": 1, "lat": 1.0, "lon": 2.0, "tags": {"amenity": "recycling"}}]}


class Script:
    """What the fake server answers, request by request."""

    def __init__(self, statuses: list[int], delay_s: float = 0.0) -> None:
        self.statuses = statuses
        self.delay_s = delay_s
        self.requests: list[str] = []


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script([])

    def reply(body: str) -> Reply:
        script.requests.append(body)
        if script.delay_s:
            time.sleep(script.delay_s)
        status = script.statuses.pop(0) if script.statuses else 200
        return status, json.dumps(BODY).encode() if status == 200 else b"busy"

    with ScriptedHTTPServer(reply, path="/api/interpreter") as http:
        yield http.url, script


def test_retries_with_backoff_then_caches(server: tuple[str, Script], tmp_path: Path) -> None:
    url, script = server
    script.statuses = [503, 429]
    sleeps: list[float] = []
    client = OverpassClient(tmp_path, url, timeout_s=5, retries=3, backoff_s=0.5, sleep=sleeps.append)
    query = around_query(1.0, 2.0, 500, [("amenity", "recycling")])
    assert client.fetch(query) == BODY
    assert sleeps == [0.5, 1.0]  # exponential backoff
    assert len(script.requests) == 3 and "around%3A500" in script.requests[0]
    assert client.cache_path(query).exists()
    assert client.fetch(query) == BODY  # from the cache: no new request
    assert len(script.requests) == 3


def test_gives_up_with_a_clear_error(server: tuple[str, Script], tmp_path: Path) -> None:
    url, script = server
    script.statuses = [503] * 5
    client = OverpassClient(tmp_path, url, timeout_s=5, retries=2, backoff_s=0, sleep=lambda s: None)
    with pytest.raises(OverpassError, match="failed after 3 attempts"):
        client.fetch("[out:json];node(1);out;")
    assert not list(tmp_path.glob("*.json"))


def test_timeouts_count_as_failed_attempts(server: tuple[str, Script], tmp_path: Path) -> None:
    url, script = server
    script.delay_s = 0.5
    client = OverpassClient(tmp_path, url, timeout_s=0.1, retries=1, backoff_s=0, sleep=lambda s: None)
    with pytest.raises(OverpassError, match="Timeout"):
        client.fetch("[out:json];node(2);out;")
