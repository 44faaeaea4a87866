"""One contract, two backends: the embedded Edge engine and qdrant-client (local mode
standing in for a Qdrant server)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from index.edge_store import EdgeStore
from index.payloads import FILTER_ONLY_FIELDS
from index.server_store import ServerStore
from index.types import (
    Branch,
    CollectionSpec,
    DenseSpec,
    Filter,
    GeoBox,
    GeoDecay,
    GeoPolygon,
    GeoRadius,
    SparseVec,
    StorePoint,
)
from index.vector_store import StoreError, VectorStore

SPEC = CollectionSpec(
    name="things",
    dense=(DenseSpec("dense", 8), DenseSpec("late", 4, multivector=True, hnsw=False, float16=True)),
    sparse=("bm25",),
    plain_sparse=("hashed",),
    indexes=(("tenant", "keyword"), ("doc_id", "keyword"), ("page_no", "integer"), ("location", "geo")),
)
RNG = np.random.default_rng(7)


def _unit(v: np.ndarray) -> list:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).tolist()


def _points(tenant: str, doc: str, n: int) -> list[StorePoint]:
    return [
        StorePoint(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{tenant}/{doc}/{i}")),
            vectors={
                "dense": _unit(RNG.standard_normal(8)),
                "late": _unit(RNG.standard_normal((3, 4))),
                "bm25": SparseVec([i, 100 + i], [1.0, 0.5]),
            },
            payload={
                "tenant": tenant,
                "doc_id": doc,
                "page_no": i,
                "state": "ready",
                "location": {"lat": -8.05 + i * 0.01, "lon": -34.9},
            },
        )
        for i in range(n)
    ]


@pytest.fixture(params=["edge", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    s: VectorStore = (
        EdgeStore(tmp_path / "edge")
        if request.param == "edge"
        else ServerStore(f"local:{tmp_path / 'local'}")
    )
    s.ensure_collection(SPEC)
    yield s
    s.close()


def test_upsert_count_and_filter(store: VectorStore) -> None:
    store.upsert("things", _points("t1", "a", 5) + _points("t1", "b", 3) + _points("t2", "a", 4))
    assert store.count("things") == 12
    assert store.count("things", Filter({"tenant": "t1"})) == 8
    assert store.count("things", Filter({"tenant": "t1", "doc_id": ["a", "b"]})) == 8
    assert store.count("things", Filter({"tenant": "t1"}, exclude={"doc_id": "a"})) == 3


def test_upsert_same_ids_is_idempotent(store: VectorStore) -> None:
    store.upsert("things", _points("t1", "a", 5))
    store.upsert("things", _points("t1", "a", 5))
    assert store.count("things") == 5


def test_dense_search_respects_filter_before_top_k(store: VectorStore) -> None:
    pts = _points("t1", "a", 5) + _points("t2", "a", 5)
    store.upsert("things", pts)
    target = pts[7]  # a t2 point
    hits = store.search("things", "dense", target.vectors["dense"], Filter({"tenant": "t1"}), limit=3)
    assert len(hits) == 3
    assert all(h.payload["tenant"] == "t1" for h in hits)
    hits = store.search("things", "dense", target.vectors["dense"], Filter({"tenant": "t2"}), limit=1)
    assert hits[0].id == target.id
    assert hits[0].score == pytest.approx(1.0, abs=1e-3)


def test_multivector_maxsim_finds_exact_page(store: VectorStore) -> None:
    pts = _points("t1", "a", 6)
    store.upsert("things", pts)
    hits = store.search("things", "late", pts[4].vectors["late"], Filter({"tenant": "t1"}), limit=2)
    assert hits[0].id == pts[4].id
    # MaxSim of a 3-token query against itself: sum of 3 cosine maxima, fp16 storage
    assert hits[0].score == pytest.approx(3.0, abs=1e-2)


def test_sparse_and_rrf_fusion(store: VectorStore) -> None:
    pts = _points("t1", "a", 6)
    store.upsert("things", pts)
    branches = [Branch("dense", pts[2].vectors["dense"]), Branch("bm25", SparseVec([2], [1.0]))]
    hits = store.fused_search("things", branches, Filter({"tenant": "t1"}), limit=3, prefetch_limit=10)
    assert hits[0].id == pts[2].id
    # RRF k=60 with 0-based ranks (Qdrant's convention): first in both lists -> 2/60
    assert hits[0].score == pytest.approx(2 / 60, rel=1e-3)


def test_decayed_search_lifts_near_points_and_keeps_unlocated_ones(store: VectorStore) -> None:
    pts = _points("t1", "a", 6)  # lat -8.05 .. -8.00, identical text vectors below
    for p in pts:
        p.vectors["dense"] = _unit(np.ones(8))
    unlocated = _points("t1", "b", 1)[0]
    unlocated.vectors["dense"] = _unit(np.ones(8))
    del unlocated.payload["location"]
    store.upsert("things", [*pts, unlocated])
    branches = [Branch("dense", _unit(np.ones(8)))]
    decay = GeoDecay("location", lat=-8.00, lon=-34.9, scale_m=1000)
    hits = store.decayed_search("things", branches, Filter({"tenant": "t1"}), 7, 20, decay)
    assert len(hits) == 7
    assert hits[0].payload["page_no"] == 5  # at the decay's origin
    # the boost is 1 + decay, decay 0.5 at scale_m: x2 at the point, ~x1.46 at 1.1 km, x1 unlocated
    fused = {h.id: h.score for h in store.fused_search("things", branches, Filter({"tenant": "t1"}), 7, 20)}
    boost = {h.payload["doc_id"] + str(h.payload["page_no"]): h.score / fused[h.id] for h in hits}
    assert boost["a5"] == pytest.approx(2.0, rel=1e-3)
    assert 1.4 < boost["a4"] < 1.5
    assert boost["b0"] == pytest.approx(1.0, rel=1e-3)
    assert [boost[f"a{i}"] for i in range(5, -1, -1)] == sorted(boost.values(), reverse=True)[:6]
    # the filter still applies before anything is scored
    other = store.decayed_search("things", branches, Filter({"tenant": "t2"}), 7, 20, decay)
    assert other == []


def test_plain_sparse_is_a_dot_product_without_idf(store: VectorStore) -> None:
    pts = _points("t1", "a", 3)
    pts[0].vectors["hashed"] = SparseVec([1, 5], [0.6, 0.8])
    pts[1].vectors["hashed"] = SparseVec([5], [1.0])
    store.upsert("things", pts)  # pts[2] has no hashed vector at all
    hits = store.search("things", "hashed", SparseVec([5], [1.0]), Filter({"tenant": "t1"}), 5)
    assert [(h.id, round(h.score, 4)) for h in hits] == [(pts[1].id, 1.0), (pts[0].id, 0.8)]


def test_geo_radius_filter(store: VectorStore) -> None:
    store.upsert("things", _points("t1", "a", 6))  # lat -8.05 .. -8.00, 0.01 deg (~1.1 km) apart
    near = Filter({"tenant": "t1"}, geo_radius=GeoRadius("location", lat=-8.05, lon=-34.9, radius_m=1500))
    assert store.count("things", near) == 2


def test_geo_box_polygon_and_any_of(store: VectorStore) -> None:
    store.upsert("things", _points("t1", "a", 6))  # lat -8.05, -8.04, ... -8.00 at lon -34.9
    box = GeoBox("location", min_lon=-35.0, min_lat=-8.035, max_lon=-34.8, max_lat=-8.005)
    assert store.count("things", Filter({"tenant": "t1"}, any_of=[box])) == 3  # -8.03, -8.02, -8.01
    ring = ((-35.0, -8.06), (-34.8, -8.06), (-34.8, -8.035), (-35.0, -8.035), (-35.0, -8.06))
    assert store.count("things", Filter(any_of=[GeoPolygon("location", ring)])) == 2  # -8.05, -8.04
    either = Filter(any_of=[GeoPolygon("location", ring), Filter({"page_no": 5})])
    assert store.count("things", either) == 3
    # points stored as a list: any of them may match
    multi = StorePoint(
        id=str(uuid.uuid4()),
        vectors=_points("t9", "z", 1)[0].vectors,
        payload={"tenant": "t9", "location": [{"lat": 10.0, "lon": 10.0}, {"lat": -8.05, "lon": -34.9}]},
    )
    store.upsert("things", [multi])
    near = Filter({"tenant": "t9"}, geo_radius=GeoRadius("location", lat=10.0, lon=10.0, radius_m=100))
    assert store.count("things", near) == 1


def test_set_payload_and_scroll(store: VectorStore) -> None:
    store.upsert("things", _points("t1", "a", 3) + _points("t1", "b", 2))
    store.set_payload("things", Filter({"doc_id": "b"}), {"state": "indexing"})
    assert store.count("things", Filter({"state": "ready"})) == 3
    rows = store.scroll("things", Filter({"doc_id": "b"}))
    assert {r.payload["state"] for r in rows} == {"indexing"}
    assert len(rows) == 2


def test_delete_by_filter_leaves_others(store: VectorStore) -> None:
    store.upsert("things", _points("t1", "a", 3) + _points("t1", "b", 2) + _points("t2", "a", 2))
    store.delete("things", Filter({"tenant": "t1", "doc_id": "a"}))
    assert store.count("things", Filter({"doc_id": "a"})) == 2
    assert store.count("things", Filter({"tenant": "t1"})) == 2


def test_edge_reopen_keeps_data_and_rejects_other_vectors(tmp_path: Path) -> None:
    s = EdgeStore(tmp_path)
    s.ensure_collection(SPEC)
    s.upsert("things", _points("t1", "a", 4))
    s.close()
    s = EdgeStore(tmp_path)
    s.ensure_collection(SPEC)
    assert s.count("things") == 4
    s.close()
    other = CollectionSpec(name="things", dense=(DenseSpec("dense", 16),))
    with pytest.raises(StoreError, match="ingest the documents again"):
        EdgeStore(tmp_path).ensure_collection(other)


def test_edge_second_process_gets_clear_error(tmp_path: Path) -> None:
    s = EdgeStore(tmp_path)
    s.ensure_collection(SPEC)
    try:
        with pytest.raises(StoreError, match="held by another Carta process"):
            EdgeStore(tmp_path).ensure_collection(SPEC)
    finally:
        s.close()


def test_server_store_asks_the_cluster_for_shards_and_replicas(tmp_path: Path) -> None:
    """Local mode has no cluster, so the request to create the collection is what is checked."""
    from index.collections import lite_collections

    store = ServerStore(f"local:{tmp_path / 'sharded'}", shards=2, replication=3)
    sent: dict = {}
    create = store.client.create_collection
    store.client.create_collection = lambda name, **kw: sent.update(kw) or create(name, **kw)  # type: ignore[method-assign]
    spec = lite_collections("tiny", 8, ("bm25_pt",)).chunks
    store.ensure_collection(spec)
    assert sent["shard_number"] == 2 and sent["replication_factor"] == 3
    assert store.client.collection_exists(spec.name)
    store.close()


def test_stored_vectors_scroll_points_and_drop(store: VectorStore) -> None:
    """What `carta reindex` copies a collection with: its vector names, every point with
    its vectors page by page, and a drop that leaves no collection behind."""
    assert store.stored_vectors("things") == ("dense", "late")
    assert store.stored_vectors("missing") is None
    points = _points("t1", "a", 5)
    store.upsert("things", points)
    seen, offset = [], None
    while True:
        page, offset = store.scroll_points("things", 2, offset)
        seen += page
        if offset is None:
            break
    assert sorted(p.id for p in seen) == sorted(p.id for p in points)
    by_id = {p.id: p for p in points}
    for p in seen:
        assert p.payload["doc_id"] == "a"
        np.testing.assert_allclose(p.vectors["late"], by_id[p.id].vectors["late"], atol=1e-3)  # fp16
        np.testing.assert_allclose(p.vectors["dense"], by_id[p.id].vectors["dense"], atol=1e-5)
    store.drop_collection("things")
    assert store.stored_vectors("things") is None
    store.drop_collection("things")  # nothing left: no error


def test_search_hits_leave_out_the_filter_only_fields_and_scrolls_keep_them(store: VectorStore) -> None:
    pts = _points("t1", "a", 3)
    for p in pts:
        p.payload |= {"acl": ["public"], "h3_area": ["89283082803ffff"], "text": "kept"}
    store.upsert("things", pts)
    flt = Filter({"tenant": "t1", "acl": ["public"], "state": "ready", "h3_area": ["89283082803ffff"]})
    searches = [
        store.search("things", "dense", pts[0].vectors["dense"], flt, 3),
        store.fused_search("things", [Branch("dense", pts[0].vectors["dense"])], flt, 3, 10),
        store.two_stage_search(
            "things",
            Branch("late", pts[0].vectors["late"]),
            Branch("late", pts[0].vectors["late"]),
            flt,
            3,
            10,
        ),
    ]
    for hits in searches:
        assert len(hits) == 3  # the filter still matched on the fields the hits leave out
        for h in hits:
            assert not set(FILTER_ONLY_FIELDS) & set(h.payload)
            assert h.payload["text"] == "kept" and h.payload["tenant"] == "t1"
    rows = store.scroll("things", Filter({"tenant": "t1"}))
    assert all(r.payload["acl"] == ["public"] and r.payload["state"] == "ready" for r in rows)
