"""Two-stage late interaction inside the engine (pooled prefetch, exact MaxSim rerank),
on both backends, plus the pooling functions it relies on."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from index.collections import POOLED_VECTOR, VISUAL_VECTOR, visual_collection
from index.edge_store import EdgeStore
from index.pooling import pool, rowcol_pool, sequential_pool
from index.server_store import ServerStore
from index.types import Branch, Filter, StorePoint
from index.vector_store import VectorStore

SPEC = visual_collection("tiny", 4, "clip", 4)
RNG = np.random.default_rng(3)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@pytest.fixture(params=["edge", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    s: VectorStore = EdgeStore(tmp_path / "edge") if request.param == "edge" else ServerStore(":memory:")
    s.ensure_collection(SPEC)
    yield s
    s.close()


def _maxsim(q: np.ndarray, d: np.ndarray) -> float:
    return float((q @ d.T).max(axis=1).sum())


def test_prefetch_limits_the_rerank_to_first_stage_candidates(store: VectorStore) -> None:
    """Page "hidden" matches the query best on its full vectors but not on its pooled
    ones: a narrow first stage misses it, a wide one finds it and reranks it first."""
    q = _unit(np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]]))
    pages = {
        "hidden": (q.copy(), _unit(np.array([[0, 0, 1.0, 0]]))),
        "decoy": (_unit(np.array([[1.0, 0.5, 0.5, 0.5]])), q.copy()),
        "other": (_unit(np.array([[0, 0, 0, 1.0]])), _unit(np.array([[0, 0, 0.2, 1.0]]))),
    }
    points = [
        StorePoint(
            str(uuid.uuid5(uuid.NAMESPACE_URL, name)),
            {VISUAL_VECTOR: full.tolist(), POOLED_VECTOR: pooled.tolist(), "clip": [1.0, 0, 0, 0]},
            {"name": name, "tenant": "t", "state": "ready"},
        )
        for name, (full, pooled) in pages.items()
    ]
    store.upsert(SPEC.name, points)
    first, second = Branch(POOLED_VECTOR, q.tolist()), Branch(VISUAL_VECTOR, q.tolist())
    narrow = store.two_stage_search(SPEC.name, first, second, Filter({"tenant": "t"}), limit=3, width=1)
    assert [h.payload["name"] for h in narrow] == ["decoy"]
    wide = store.two_stage_search(SPEC.name, first, second, Filter({"tenant": "t"}), limit=3, width=3)
    assert [h.payload["name"] for h in wide][0] == "hidden"
    exact = {name: _maxsim(q, full) for name, (full, _) in pages.items()}
    assert wide[0].score == pytest.approx(exact["hidden"], abs=1e-2)  # fp16 storage
    none = store.two_stage_search(SPEC.name, first, second, Filter({"tenant": "other"}), limit=3, width=3)
    assert none == []


def test_rowcol_pool_means_rows_and_columns_and_keeps_other_tokens() -> None:
    grid = RNG.standard_normal((2 * 3, 4))
    text = RNG.standard_normal((2, 4))
    vectors = np.concatenate([text[:1], grid, text[1:]])
    pooled = rowcol_pool(vectors, np.arange(1, 7), ((2, 3),))
    assert pooled.shape == (2 + 3 + 2, 4)
    block = grid.reshape(2, 3, 4)
    np.testing.assert_allclose(pooled[0], _unit(block[0].mean(axis=0)), rtol=1e-5)
    np.testing.assert_allclose(pooled[2], _unit(block[:, 0].mean(axis=0)), rtol=1e-5)
    np.testing.assert_allclose(pooled[5:], _unit(text), rtol=1e-5)


def test_pool_falls_back_to_sequential_without_grid_and_hierarchical_reduces() -> None:
    vectors = _unit(RNG.standard_normal((10, 4))).astype(np.float32)
    seq = pool(vectors, "rowcol", factor=4)
    np.testing.assert_allclose(seq, sequential_pool(vectors, 4))
    assert seq.shape == (3, 4)
    hier = pool(vectors, "hierarchical", factor=2)
    assert 1 <= len(hier) <= 5
    np.testing.assert_allclose(np.linalg.norm(hier, axis=1), 1.0, rtol=1e-5)


def test_block_pool_keeps_where_things_are() -> None:
    grid = RNG.standard_normal((4 * 6, 4))
    text = RNG.standard_normal((1, 4))
    vectors = np.concatenate([grid, text])
    pooled = pool(vectors, "blocks", factor=4, image_rows=np.arange(24), grids=((4, 6),))
    assert pooled.shape == (2 * 3 + 1, 4)
    block = grid.reshape(4, 6, 4)
    np.testing.assert_allclose(pooled[0], _unit(block[:2, :2].reshape(-1, 4).mean(axis=0)), rtol=1e-5)
    np.testing.assert_allclose(pooled[5], _unit(block[2:, 4:].reshape(-1, 4).mean(axis=0)), rtol=1e-5)
    np.testing.assert_allclose(pooled[6], _unit(text[0]), rtol=1e-5)
