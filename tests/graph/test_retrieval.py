"""Relational retrieval is exact: every returned pair is within the radius and, within the
searched area, no pair is missed (checked against brute force)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from geo.distance import haversine_m
from geo.gazetteer import Place
from graph.baseline import VectorBaseline
from graph.evidence import answer_text, context_blocks, graph_block
from graph.mapping import render_png
from graph.parser import Constraints
from graph.retrieval import RelationalRetriever
from graph.sources import Parsed, Poi
from graph.store import GraphStore

CENTRE = (-8.06, -34.90)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> GraphStore:
    rng = np.random.default_rng(11)
    n = 1500
    lat, lon = CENTRE[0] + rng.normal(0, 0.03, n), CENTRE[1] + rng.normal(0, 0.03, n)
    cats = ["school", "park", "recycling", "hospital"]
    items = [Poi(f"p:{i}", f"P{i}", cats[i % 4], float(lat[i]), float(lon[i])) for i in range(n)]
    s = GraphStore(tmp_path_factory.mktemp("g") / "g.sqlite3")
    s.add_dataset("t", Parsed(items), "f.csv", "csv", b"x")
    yield s
    s.close()


def brute(store: GraphStore, a: str, b: str, radius: float, inside=lambda p: True) -> set[frozenset[str]]:
    rows = [r for r in store.pois("t") if inside(r)]
    out = set()
    for x in rows:
        for y in rows:
            wanted = x.id != y.id and x.category == a and y.category == b
            if wanted and haversine_m(x.lat, x.lon, y.lat, y.lon) <= radius:
                out.add(frozenset((x.id, y.id)))
    return out


@pytest.mark.parametrize(
    ("a", "b", "radius"),
    [("recycling", "park", 300.0), ("school", "school", 250.0), ("hospital", "park", 1200.0)],
)
def test_all_pairs_everywhere(store: GraphStore, a: str, b: str, radius: float) -> None:
    result = RelationalRetriever(store).retrieve("t", Constraints((a, b), ((a, b),), radius, relational=True))
    got = {frozenset((p.a.id, p.b.id)) for p in result.pairs}
    assert got == brute(store, a, b, radius)
    assert len(got) == len(result.pairs)  # no duplicates
    assert all(p.dist_m <= radius and p.a.category == a and p.b.category == b for p in result.pairs)


def test_circle_area_around_a_place(store: GraphStore) -> None:
    place = Place("geonames:1", "Somewhere", CENTRE[0] + 0.01, CENTRE[1], "city", "BR", 1000, "test")
    result = RelationalRetriever(store, area_radius_m=2000).retrieve(
        "t", Constraints(("school", "park"), (("school", "park"),), 400.0, relational=True), place
    )
    inside = lambda r: haversine_m(place.lat, place.lon, r.lat, r.lon) <= 2000  # noqa: E731
    assert {frozenset((p.a.id, p.b.id)) for p in result.pairs} == brute(
        store, "school", "park", 400.0, inside
    )
    assert result.area.kind == "circle" and result.area.place_id == "geonames:1"


def test_polygon_area(store: GraphStore) -> None:
    lat0, lon0 = CENTRE
    ring = [
        [lon0 - 0.02, lat0 - 0.01],
        [lon0 + 0.02, lat0 - 0.01],
        [lon0, lat0 + 0.02],
        [lon0 - 0.02, lat0 - 0.01],
    ]
    geometry = {"type": "Polygon", "coordinates": [ring]}
    place = Place("b:X", "X", lat0, lon0, "area", "BR", 0, "b", geometry=geometry)
    result = RelationalRetriever(store).retrieve(
        "t", Constraints(("recycling",), (("recycling", "recycling"),), 500.0, relational=True), place
    )
    from shapely.geometry import Point, shape

    poly = shape(geometry)
    expected = brute(store, "recycling", "recycling", 500.0, lambda r: poly.covers(Point(r.lon, r.lat)))
    assert expected and {frozenset((p.a.id, p.b.id)) for p in result.pairs} == expected


def test_zone_budget_widens_the_ring_until_a_pair_exists(store: GraphStore) -> None:
    c = Constraints(("hospital", "recycling"), (("hospital", "recycling"),), 60.0, zones=1, relational=True)
    result = RelationalRetriever(store).retrieve("t", c)
    assert result.pairs  # found by widening
    searched = set(result.searched_cells)
    inside = lambda r: r.h3 in searched  # noqa: E731
    # exact within the searched area
    assert {frozenset((p.a.id, p.b.id)) for p in result.pairs} == brute(
        store, "hospital", "recycling", 60.0, inside
    )
    assert {z["h3"] for z in result.zones} == searched
    scores = [z["score"] for z in result.zones]
    assert scores == sorted(scores, reverse=True)


def test_evidence_blocks_geojson_text_and_png(store: GraphStore) -> None:
    c = Constraints(("recycling", "park"), (("recycling", "park"),), 150.0, relational=True)
    result = RelationalRetriever(store).retrieve("t", c)
    block = graph_block(result)
    assert {"zones", "pois", "pairs", "geojson"} <= set(block)
    pair = block["pairs"][0]
    assert set(pair) == {"a", "b", "a_category", "b_category", "dist_m"}
    assert set(block["pois"][0]) == {"id", "name", "category", "lat", "lon", "h3"}
    kinds = {f["properties"]["kind"] for f in block["geojson"]["features"]}
    assert kinds == {"zone", "poi", "pair"}
    line = next(f for f in block["geojson"]["features"] if f["properties"]["kind"] == "pair")
    a = next(p for p in block["pois"] if p["id"] == line["properties"]["a"])
    assert line["geometry"]["coordinates"][0] == [a["lon"], a["lat"]]  # GeoJSON order
    text = answer_text(result, "en")
    assert text.startswith(f"{len(result.pairs)} recycling points/parks pair(s) within 150 m")
    none = RelationalRetriever(store).retrieve("t", Constraints(("school", "x"), (("school", "x"),), 10.0))
    assert answer_text(none, "pt").startswith("Nenhum par escolas/x a até 10 m")
    assert "RELATIONS (dist_m)" in context_blocks(result)
    png = render_png(block["geojson"], "test")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def test_vector_baseline_pairs_only_what_it_retrieved(store: GraphStore) -> None:
    def embed(texts: list[str]) -> np.ndarray:  # bag of category words, deterministic
        vocab = ["school", "park", "recycling", "hospital"]
        v = np.array([[t.count(w) + 1e-3 for w in vocab] for t in texts], dtype=float)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    base = VectorBaseline(store.pois("t"), embed)
    got = base.pairs("recycling park", [("recycling", "park")], 300.0, k=40)
    truth = brute(store, "recycling", "park", 300.0)
    assert {frozenset((a, b)) for a, b, _ in got} <= truth
    assert len(got) < len(truth)  # top-k cannot see every pair
    unverified = base.pairs("recycling park", [("recycling", "park")], 300.0, k=40, verify=False)
    assert len(unverified) >= len(got)


def test_empty_store(tmp_path: Path) -> None:
    s = GraphStore(tmp_path / "e.sqlite3")
    result = RelationalRetriever(s).retrieve("t", Constraints(("a", "b"), (("a", "b"),), 100.0))
    assert result.pairs == [] and result.zones == []
    s.close()


def test_zones_name_only_the_documents_the_caller_may_see(tmp_path: Path) -> None:
    s = GraphStore(tmp_path / "acl.sqlite3")
    try:
        items = [Poi(f"s:{i}", f"S{i}", "school", CENTRE[0] + 0.0005 * i, CENTRE[1]) for i in range(8)]
        s.add_dataset("t", Parsed(items), "f.csv", "csv", b"x")
        cells = sorted({r.h3 for r in s.pois("t")})
        for doc in ("pub", "fin"):
            s.index_document("t", doc, doc, [{"page_no": 1, "text": "x", "h3_area": cells}])
        c = Constraints(("school",), (("school", "school"),), 300.0, relational=True)
        full = RelationalRetriever(s).retrieve("t", c)
        plain = RelationalRetriever(s).retrieve("t", c, visible=lambda d: d == "pub")
        assert full.pairs and {d for z in full.zones for d in z["documents"]} == {"fin", "pub"}
        assert [z["h3"] for z in plain.zones] == [z["h3"] for z in full.zones]
        assert all(z["documents"] == ["pub"] for z in plain.zones)
        assert "fin" not in str(graph_block(plain)) and len(plain.pairs) == len(full.pairs)
        pages = s.pages_mentioning("t", [f"zone:{c}" for c in cells], lambda d: d != "fin")
        assert [r[0] for r in pages] == ["pub"]
    finally:
        s.close()
