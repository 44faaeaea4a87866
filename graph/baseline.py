"""The seed's vector-RAG baseline for relational questions: every POI is a short document
(id, name, category, coordinates, H3) embedded with the text encoder; a question retrieves
the top-k POIs by cosine, and the pairs are formed from what was retrieved. Measured
beside the graph on the same questions (scripts/eval_relational.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations, product

import numpy as np

from geo.distance import haversine_m
from graph.store import PoiRow

Embedder = Callable[[list[str]], np.ndarray]


def poi_text(r: PoiRow) -> str:
    return f"{r.category.replace('_', ' ')} {r.name or ''} (id {r.id}) at {r.lat:.5f}, {r.lon:.5f}, H3 {r.h3}"


class VectorBaseline:
    def __init__(self, pois: Sequence[PoiRow], embed: Embedder) -> None:
        self.pois = list(pois)
        self.embed = embed
        self.vectors = embed([poi_text(r) for r in self.pois]) if self.pois else np.zeros((0, 1))

    def retrieve(self, question: str, k: int) -> list[PoiRow]:
        if not self.pois:
            return []
        q = self.embed([question])[0]
        scores = self.vectors @ q
        top = np.argsort(-scores)[:k]
        return [self.pois[i] for i in top.tolist()]

    def pairs(
        self,
        question: str,
        pairs: Sequence[tuple[str, str]],
        radius_m: float,
        k: int = 50,
        verify: bool = True,
    ) -> list[tuple[str, str, float]]:
        """Pairs of the asked categories among the top-k POIs; with `verify` only those
        within the radius (distances computed), else every such pair (as an LLM given
        the retrieved POIs without distances would have to guess)."""
        got = self.retrieve(question, k)
        out: dict[frozenset[str], tuple[str, str, float]] = {}
        for cat_a, cat_b in pairs:
            a = [r for r in got if r.category == cat_a]
            b = [r for r in got if r.category == cat_b]
            candidates = combinations(a, 2) if cat_a == cat_b else product(a, b)
            for pa, pb in candidates:
                d = haversine_m(pa.lat, pa.lon, pb.lat, pb.lon)
                if pa.id != pb.id and (not verify or d <= radius_m):
                    out.setdefault(frozenset((pa.id, pb.id)), (pa.id, pb.id, d))
        return list(out.values())
