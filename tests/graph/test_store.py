"""The graph store: edges as specified, incremental adds equal a full build, deletion
removes nodes, edges and zone contributions, documents' MENTIONS, tenant isolation."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from geo.distance import haversine_m
from graph.sources import Parsed, Poi, Road, parse
from graph.store import GraphStore


def pois(
    n: int, seed: int, prefix: str, cats: tuple[str, ...] = ("school", "park", "recycling")
) -> list[Poi]:
    rng = np.random.default_rng(seed)
    lat, lon = -8.06 + rng.normal(0, 0.006, n), -34.9 + rng.normal(0, 0.006, n)
    return [
        Poi(f"{prefix}:{i}", f"{prefix} {i}", cats[i % len(cats)], float(lat[i]), float(lon[i]))
        for i in range(n)
    ]


def add(store: GraphStore, tenant: str, items: list[Poi], roads: list[Road] | None = None, tag: bytes = b""):
    content = repr(items).encode() + repr(roads).encode() + tag
    return store.add_dataset(tenant, Parsed(items, roads or []), "f.csv", "csv", content)


def near_edges(store: GraphStore, tenant: str = "t") -> set[tuple[str, str, float]]:
    return {(s, d, dist) for s, d, _, dist in store.edges(tenant, "NEAR")}


@pytest.fixture
def store(tmp_path: Path) -> GraphStore:
    s = GraphStore(tmp_path / "g.sqlite3")
    yield s
    s.close()


def test_edges_follow_the_spec(store: GraphStore) -> None:
    items = pois(300, 1, "a")
    info, created = add(store, "t", items)
    assert created and info.pois == 300
    kinds = Counter(k for _, k in store.nodes("t"))
    assert kinds["poi"] == 300 and kinds["svc"] == 3 and kinds["zone"] >= 1
    assert Counter(e[2] for e in store.edges("t", "IS_A"))["IS_A"] == 300
    by_id = {f"poi:{p.id}": p for p in items}
    out_degree = Counter(s for s, _, _ in near_edges(store))
    assert max(out_degree.values()) <= 10
    for src, dst, dist in near_edges(store):
        a, b = by_id[src], by_id[dst]
        assert dist <= 500 and dist == pytest.approx(haversine_m(a.lat, a.lon, b.lat, b.lon), abs=0.01)
    # a POI with fewer than 10 edges has no other POI within 500 m left out
    for src, deg in out_degree.items():
        if deg < 10:
            p = by_id[src]
            within = sum(1 for q in items if q.id != p.id and haversine_m(p.lat, p.lon, q.lat, q.lon) <= 500)
            assert within == deg


def test_same_content_twice_is_a_no_op(store: GraphStore) -> None:
    items = pois(20, 2, "a")
    first, created = add(store, "t", items)
    again, created_again = add(store, "t", items)
    assert created and not created_again and again.id == first.id
    assert len(store.datasets("t")) == 1


def test_incremental_add_equals_a_full_build(tmp_path: Path) -> None:
    a, b = pois(400, 3, "a"), pois(150, 4, "b")
    inc = GraphStore(tmp_path / "inc.sqlite3")
    add(inc, "t", a)
    add(inc, "t", b)
    full = GraphStore(tmp_path / "full.sqlite3")
    add(full, "t", a + b)
    assert near_edges(inc) == near_edges(full)
    assert inc.zones("t") == full.zones("t")


def test_delete_removes_nodes_edges_and_zone_contributions(tmp_path: Path) -> None:
    a, b = pois(300, 5, "a"), pois(200, 6, "b", cats=("hospital",))
    store = GraphStore(tmp_path / "g.sqlite3")
    add(store, "t", a)
    zones_before = store.zones("t")
    info_b, _ = add(store, "t", b)
    assert any("hospital" in z["categories"] for z in store.zones("t").values())
    store.delete_dataset("t", info_b.id)
    ids = {n for n, _ in store.nodes("t")}
    assert not any(n.startswith("poi:b:") for n in ids)
    assert "svc:hospital" not in ids
    assert not [e for e in store.edges("t") if "poi:b:" in e[0] or "poi:b:" in e[1]]
    assert store.zones("t") == zones_before  # zone profiles back to what dataset a alone gives
    only_a = GraphStore(tmp_path / "only_a.sqlite3")
    add(only_a, "t", a)
    assert near_edges(store) == near_edges(only_a)  # NEAR lists that pointed at b were recomputed
    assert store.delete_dataset("t", info_b.id) is False


def test_duplicate_source_ids_across_datasets_are_skipped(store: GraphStore) -> None:
    items = pois(10, 7, "a")
    first, _ = add(store, "t", items)
    second, _ = add(store, "t", items[:4] + pois(3, 8, "c"), tag=b"2")
    assert second.pois == 3 and second.duplicates == 4
    store.delete_dataset("t", second.id)
    assert len(store.pois("t")) == 10  # the first dataset's POIs are untouched


def test_another_csv_under_the_same_name_keeps_all_its_rows(store: GraphStore) -> None:
    """Fuzzing: a second, different pois.csv lost every row whose number the first file had
    (ids are `pois:<row>`): they were skipped as duplicates, and deleting the first file
    then left them nowhere. Both files are now datasets with all their rows, as two PDFs
    of one name are two documents; the same file again is still a no-op."""
    first_csv = b"name,lat,lon\nA1,-8.05,-34.9\nA2,-8.06,-34.9\n"
    second_csv = b"name,lat,lon\nB1,-8.07,-34.9\nB2,-8.08,-34.9\nB3,-8.09,-34.9\n"

    def upload(data: bytes) -> tuple:
        return store.add_dataset(
            "t", parse(data, "pois", "school"), "pois.csv", "csv", data, file_prefix="pois"
        )

    first, _ = upload(first_csv)
    second, created = upload(second_csv)
    assert created and (first.pois, second.pois, second.duplicates) == (2, 3, 0)
    assert sorted(name for _, name in store.poi_names("t")) == ["A1", "A2", "B1", "B2", "B3"]
    assert {p.id for p in store.features("t", [first.id])} == {"pois:1", "pois:2"}  # ids kept
    assert upload(second_csv) == (second, False)
    store.delete_dataset("t", first.id)
    assert sorted(name for _, name in store.poi_names("t")) == ["B1", "B2", "B3"]


def test_roads_connect_when_they_share_a_vertex(store: GraphStore) -> None:
    r1 = Road("osm:w1", "A", "residential", ((-8.0, -34.9), (-8.001, -34.9)))
    r2 = Road("osm:w2", "B", "residential", ((-8.001, -34.9), (-8.002, -34.901)))
    r3 = Road("osm:w3", "C", "footway", ((-8.01, -34.95), (-8.011, -34.95)))
    add(store, "t", [], [r1, r3])
    info, _ = add(store, "t", [], [r2], tag=b"x")  # a later dataset connects to an earlier road
    connects = {(s, d) for s, d, _, _ in store.edges("t", "CONNECTS")}
    assert connects == {("road:osm:w1", "road:osm:w2")}
    assert store.edges("t", "IN_ZONE", node="road:osm:w3")
    store.delete_dataset("t", info.id)
    assert store.edges("t", "CONNECTS") == []


def test_pages_mention_places_zones_and_named_pois(store: GraphStore) -> None:
    items = [Poi("s:1", "Escola Municipal Abilio Gomes", "school", -8.1216, -34.8994)]
    add(store, "t", items)
    page = {
        "page_no": 2,
        "text": "Alagamentos perto da Escola Municipal Abilio Gomes em Boa Viagem.",
        "geo_tags": [
            {
                "lat": -8.1216,
                "lon": -34.8994,
                "label": "Boa Viagem",
                "place_id": "bairros:BOA VIAGEM",
                "kind": "area",
            },
            {"lat": -14.2, "lon": -51.9, "label": "Brasil", "place_id": "geonames:BR", "kind": "country"},
        ],
    }
    n = store.index_document("t", "doc1", "Relatório", [page, {"page_no": 3, "text": "nada"}])
    targets = {d for s, d, k, _ in store.edges("t", "MENTIONS")}
    assert n == 3 and "poi:s:1" in targets and "place:bairros:BOA VIAGEM" in targets
    assert "place:geonames:BR" not in targets  # countries are mentions, not locations
    zone = next(t for t in targets if t.startswith("zone:"))
    assert store.zones("t")[zone[5:]]["documents"] == ["doc1"]
    assert store.pages_mentioning("t", ["poi:s:1"])[0][:2] == ("doc1", 2)
    store.delete_document("t", "doc1")
    assert store.edges("t", "MENTIONS") == []
    assert store.zones("t")[zone[5:]]["documents"] == []
    assert not [n for n, k in store.nodes("t") if k in ("page", "place")]


def test_tenants_are_isolated(store: GraphStore) -> None:
    info, _ = add(store, "t1", pois(30, 9, "a"))
    add(store, "t2", pois(30, 9, "a"))
    assert store.delete_dataset("t2", "nope") is False
    store.delete_dataset("t1", info.id)
    assert store.pois("t1") == [] and len(store.pois("t2")) == 30
    assert store.datasets("t1") == [] and len(store.datasets("t2")) == 1


def _attributed(n: int, seed: int, prefix: str) -> list[Poi]:
    return [
        Poi(p.id, p.name, p.category, p.lat, p.lon, {"IDEB": 4.0 + i % 3, "nome": p.name})
        for i, p in enumerate(pois(n, seed, prefix))
    ]


def test_cached_features_equal_the_stored_rows(store: GraphStore, tmp_path: Path) -> None:
    """The features a question reads come from the per-dataset cache filled at store time;
    they equal what a fresh read of the SQLite rows decodes, in the same order."""
    info, _ = add(store, "t", _attributed(120, 7, "a"))
    add(store, "t", pois(40, 8, "b", ("park",)), tag=b"b")
    cached = store.features("t")
    parks = store.features("t", categories=["park"])
    fresh = GraphStore(tmp_path / "g.sqlite3")  # another process: nothing cached
    try:
        assert [(f, f.attrs, f.geometry) for f in fresh.features("t")] == [
            (f, f.attrs, f.geometry) for f in cached
        ]
        assert fresh.features("t", categories=["park"]) == parks
        assert fresh.categories("t") == store.categories("t") == {"school": 40, "park": 80, "recycling": 40}
        assert fresh.extents("t") == store.extents("t")
    finally:
        fresh.close()
    assert len(parks) == 80 and {f.source for f in parks} == {f"ds:{info.id}", parks[-1].source}
    assert store.features("t", datasets=[info.id], categories=["park"]) == parks[:40]


def test_a_dataset_deleted_and_added_again_elsewhere_is_read_afresh(tmp_path: Path) -> None:
    """Two stores on one file (two processes): one deletes a dataset and adds another; the
    other's cache must not answer with the deleted features."""
    a, b = GraphStore(tmp_path / "g.sqlite3"), GraphStore(tmp_path / "g.sqlite3")
    try:
        first, _ = add(a, "t", _attributed(50, 1, "x"))
        assert len(b.features("t")) == 50 and b.categories("t")["school"] == 17
        a.delete_dataset("t", first.id)
        add(a, "t", pois(30, 2, "y", ("park",)), tag=b"y")
        assert {f.category for f in b.features("t")} == {"park"} and len(b.features("t")) == 30
        assert b.categories("t") == {"park": 30}
    finally:
        a.close()
        b.close()
