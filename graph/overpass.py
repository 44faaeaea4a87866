"""Live Overpass API fetches with an on-disk cache, timeouts and retries with backoff
(seed 000). A cached response is reused byte for byte, so a re-run is offline."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from graph.errors import OverpassError

DEFAULT_URL = "https://overpass-api.de/api/interpreter"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


def around_query(
    lat: float, lon: float, radius_m: float, tags: Sequence[tuple[str, str]], timeout_s: int = 60
) -> str:
    """An Overpass QL query for nodes/ways/relations with any of `tags` around a point
    (ways and relations come with their centre)."""
    parts = "".join(f'nwr["{k}"="{v}"](around:{radius_m:.0f},{lat:.6f},{lon:.6f});' for k, v in tags)
    return f"[out:json][timeout:{timeout_s}];({parts});out center tags;"


class OverpassClient:
    def __init__(
        self,
        cache_dir: Path,
        url: str = DEFAULT_URL,
        timeout_s: float = 90.0,
        retries: int = 4,
        backoff_s: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.cache_dir = Path(cache_dir)
        self.url = url
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.sleep = sleep

    def cache_path(self, query: str) -> Path:
        digest = hashlib.sha256(f"{self.url}\n{query}".encode()).hexdigest()[:24]
        return self.cache_dir / f"overpass-{digest}.json"

    def fetch(self, query: str) -> dict[str, Any]:
        """The JSON answer to `query`, from the cache when present."""
        path = self.cache_path(query)
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
        last = "no attempt made"
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response = httpx.post(self.url, data={"data": query}, timeout=self.timeout_s)
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in RETRY_STATUS:
                last = f"HTTP {response.status_code}"
                continue
            if response.status_code != 200:
                raise OverpassError(
                    f"Overpass at {self.url} answered HTTP {response.status_code}: {response.text[:200]}"
                )
            try:
                doc = response.json()
            except ValueError as exc:
                raise OverpassError(f"Overpass at {self.url} returned invalid JSON") from exc
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(doc), encoding="utf-8")
            tmp.replace(path)
            return doc
        raise OverpassError(f"Overpass at {self.url} failed after {self.retries + 1} attempts ({last})")
