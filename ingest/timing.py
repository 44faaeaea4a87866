"""Seconds spent per ingestion stage, so a slow upload says where its time went (the
`carta ingest --json` report, the log line per document, scripts/bench_foundation.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

# in pipeline order: reading pages (render, text, OCR, tables), saving page images,
# chunking, chart/map captions (vision LLM), dense and sparse encoding, geotagging,
# writing points and rows, then what runs once the document is ready (graph, document
# graph, sentence vectors)
STAGES = ("read", "images", "chunk", "caption", "embed", "sparse", "geotag", "store", "after")


class StageTimes:
    """Accumulated wall seconds per stage of one document's ingestion."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def rounded(self) -> dict[str, float]:
        """Seconds per stage to 0.1 ms, the stages that ran only, plus "total"."""
        spent = {k: round(v, 4) for k, v in self.seconds.items() if v > 0}
        return {**spent, "total": round(sum(self.seconds.values()), 4)}

    def summary(self) -> str:
        """'12.4 s (read 3.1, embed 7.9, ...)', the biggest first: the log line's tail."""
        spent = sorted(((v, k) for k, v in self.seconds.items() if v >= 0.05), reverse=True)
        parts = ", ".join(f"{k} {v:.1f}" for v, k in spent)
        return f"{sum(self.seconds.values()):.1f} s ({parts})"
