"""Seconds spent per ingestion stage, so a slow upload says where its time went (the
`carta ingest --json` report, the log line per document, scripts/bench_foundation.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# in pipeline order: reading pages (render, text, OCR, tables) and saving their images (both
# on the read-ahead thread, ingest/read_ahead.py), waiting for the next page there,
# chunking, chart/map captions (vision LLM), dense and sparse encoding, geotagging, writing
# points and rows, then the hooks that run once the document is ready, each under its own
# name (service/carta.py: "graph", "docgraph", "sentences")
STAGES = ("read", "images", "wait", "chunk", "caption", "embed", "sparse", "geotag", "store")


class StageTimes:
    """Accumulated wall seconds per stage of one document's ingestion, from any thread:
    stages run on two threads at once (reading ahead, encoding), so they may add up to
    more than the document's wall time, the "total"."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self._started = time.perf_counter()
        self._lock = threading.Lock()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - start
            with self._lock:
                self.seconds[name] = self.seconds.get(name, 0.0) + spent

    def rounded(self) -> dict[str, float]:
        """Seconds per stage to 0.1 ms, the stages that ran only, plus "total" (wall)."""
        with self._lock:
            spent = {k: round(v, 4) for k, v in self.seconds.items() if v > 0}
        return {**spent, "total": round(time.perf_counter() - self._started, 4)}

    def summary(self) -> str:
        """'12.4 s (read 3.1, embed 7.9, ...)', the biggest first: the log line's tail."""
        with self._lock:
            spent = sorted(((v, k) for k, v in self.seconds.items() if v >= 0.05), reverse=True)
        parts = ", ".join(f"{k} {v:.1f}" for v, k in spent)
        return f"{time.perf_counter() - self._started:.1f} s ({parts})"
