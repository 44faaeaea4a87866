"""The Edge backend flushes a shard as writes pile up, so a long ingestion does not keep
every upsert in the WAL until the process stops (100k pages left 54 GB of WAL)."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest
import qdrant_edge as E

from index import edge_store
from index.edge_store import EdgeStore, _value_count, _wal_state
from index.types import CollectionSpec, DenseSpec, Filter, SparseVec, StorePoint

SPEC = CollectionSpec(
    name="things", dense=(DenseSpec("dense", 8),), sparse=("bm25",), indexes=(("doc_id", "keyword"),)
)
RNG = np.random.default_rng(5)


def _points(doc: str, n: int) -> list[StorePoint]:
    """n points of 8 dense values + a 1-term sparse vector (2 values): 10 values each."""
    return [
        StorePoint(
            str(uuid.uuid5(uuid.NAMESPACE_URL, f"{doc}/{i}")),
            {"dense": RNG.standard_normal(8).tolist(), "bm25": SparseVec([i], [1.0])},
            {"doc_id": doc},
        )
        for i in range(n)
    ]


def _acknowledged(wal: Path) -> int:
    """The WAL's acknowledged index; -1 before the first flush writes it."""
    return _wal_state(wal)[0] if (wal / "first-index").exists() else -1


def test_values_are_counted_per_vector_kind() -> None:
    assert _value_count([0.1] * 8) == 8
    assert _value_count([[0.1] * 4] * 3) == 12  # a multivector: rows x size
    assert _value_count(SparseVec([1, 2], [0.5, 0.5])) == 4
    # what other writers pass: NumPy arrays (bench_visual), the engine's own sparse vectors
    # read back by `carta reindex`
    assert _value_count(np.zeros((3, 4), dtype=np.float16)) == 12
    assert _value_count([np.zeros(4), np.zeros(4)]) == 8
    assert _value_count(E.SparseVector(indices=[1, 2, 3], values=[0.1, 0.2, 0.3])) == 6


def test_the_shard_is_flushed_once_enough_values_were_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edge_store, "FLUSH_EVERY_VALUES", 100)
    store = EdgeStore(tmp_path)
    store.ensure_collection(SPEC)
    wal = tmp_path / "things" / "wal"
    acknowledged = _acknowledged(wal)
    store.upsert("things", _points("a", 5))  # 50 values: not yet
    assert _acknowledged(wal) == acknowledged
    store.upsert("things", _points("b", 6))  # 110 values since the last flush
    flushed = _acknowledged(wal)
    assert flushed > acknowledged  # the WAL may drop what the segments now hold
    store.upsert("things", _points("c", 5))  # the count started again at the flush
    assert _acknowledged(wal) == flushed
    assert store.count("things", Filter({"doc_id": ["a", "b", "c"]})) == 16
    store.close()
    reopened = EdgeStore(tmp_path)
    reopened.ensure_collection(SPEC)
    assert reopened.count("things") == 16
    reopened.close()
