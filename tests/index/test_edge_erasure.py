"""The Edge backend's erasure: after `erase_deleted` no file of the shard holds a deleted
point's payload (decoded as stored), before it they do; the store keeps working after."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import qdrant_edge as E

from index.edge_store import EdgeStore, _edge_config, _has_erase_optimizers, is_held
from index.types import CollectionSpec, DenseSpec, Filter, SparseVec, StorePoint
from service.erasure import verify

SPEC = CollectionSpec(
    name="things",
    dense=(DenseSpec("dense", 8),),
    sparse=("bm25",),
    indexes=(("tenant", "keyword"), ("doc_id", "keyword")),
)
MARK = "ZQXEDGEMARK9"
RNG = np.random.default_rng(3)


def _points(doc: str, n: int, text: str = "plain words") -> list[StorePoint]:
    return [
        StorePoint(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{doc}/{i}")),
            vectors={"dense": RNG.standard_normal(8).tolist(), "bm25": SparseVec([i], [1.0])},
            payload={"tenant": "t", "doc_id": doc, "text": f"{text} {i} {text}", "title": f"{text} title"},
        )
        for i in range(n)
    ]


def _hits(root: Path) -> int:
    return sum(h.total for h in verify(root, "doc-secret", [MARK]).hits)


def test_erase_deleted_takes_payloads_off_disk_and_the_store_keeps_working(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path)
    store.ensure_collection(SPEC)
    store.upsert("things", _points("doc-other", 40))
    store.upsert("things", _points("doc-secret", 5, text=f"patient {MARK} lives here"))
    store.set_payload("things", Filter({"doc_id": "doc-secret"}), {"state": "ready"})  # one more copy
    store.delete("things", Filter({"doc_id": "doc-secret"}))
    store.close()
    assert _hits(tmp_path) > 0  # a delete alone leaves the payloads (segment, payload index, WAL)

    store = EdgeStore(tmp_path)
    store.ensure_collection(SPEC)
    timings = store.erase_deleted("things")
    assert 0 < timings["pad_records"] <= 64
    assert _hits(tmp_path) == 0
    assert store.erase_deleted("things")["pad_records"] > 0  # idempotent: it just rolls again
    store.upsert("things", _points("doc-new", 3))
    store.delete("things", Filter({"doc_id": "doc-other"}))
    store.close()

    store = EdgeStore(tmp_path)
    store.ensure_collection(SPEC)
    # the WAL's operation numbers survived: the delete after the erasure held across a restart
    assert store.count("things", Filter({"doc_id": "doc-other"})) == 0
    assert store.count("things", Filter({"doc_id": "doc-new"})) == 3
    assert store.count("things") == 3
    store.close()
    assert _hits(tmp_path) == 0


def test_a_shard_from_before_erasure_gets_the_vacuum_thresholds(tmp_path: Path) -> None:
    path = tmp_path / "things"
    E.EdgeShard.create(str(path), _edge_config(SPEC)).close()  # as ensure_collection used to
    (path / "carta-collection.json").write_text(
        json.dumps({"dense": [["dense", 8, False, True, False]], "sparse": ["bm25"]})
    )
    assert not _has_erase_optimizers(path)  # the engine's defaults: 20% deleted, 1000 vectors
    store = EdgeStore(tmp_path)
    store.ensure_collection(SPEC)
    assert is_held(path)
    store.close()
    assert not is_held(path)
    after = json.loads((path / "edge_config.json").read_text())["optimizers"]
    assert after["deleted_threshold"] < 1e-6 and after["vacuum_min_vector_number"] == 1
