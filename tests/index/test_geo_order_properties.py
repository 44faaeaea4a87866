"""Property tests (hypothesis) for the lat/lng order at the Qdrant boundary, on both backends: the
embedded Edge engine and qdrant-client (local mode standing in for a server).

Points are stored as the ingest stores them (``"location": [{"lat": .., "lon": ..}, ...]``) and looked
up with GeoRadius, GeoBox and GeoPolygon conditions, directly and as the API's geo filters resolve
them. Each example writes under its own tenant into one store per backend (hypothesis does not mix
with function-scoped fixtures) and deletes its points afterwards."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from geo.distance import haversine_m
from index.edge_store import EdgeStore
from index.server_store import ServerStore
from index.types import CollectionSpec, DenseSpec, Filter, GeoBox, GeoPolygon, GeoRadius, StorePoint
from index.vector_store import VectorStore
from service.query.geo_filter import GeoSpec, resolve

SPEC = CollectionSpec(
    name="geo_order",
    dense=(DenseSpec("dense", 2),),
    indexes=(("tenant", "keyword"), ("location", "geo")),
)
PROPS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
M_PER_DEG = 111_320.0
BAND = 1e-3  # relative: distances within 0.1% of the radius may go either way (earth radii differ)
EDGE_DEG = 1e-6  # points this close to a box edge may go either way

Location = tuple[float, float]  # (lat, lon)


@pytest.fixture(scope="module", params=["edge", "server"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VectorStore]:
    root: Path = tmp_path_factory.mktemp(f"geo-order-{request.param}")
    s: VectorStore = (
        EdgeStore(root / "edge") if request.param == "edge" else ServerStore(f"local:{root}/local")
    )
    s.ensure_collection(SPEC)
    yield s
    s.close()


def _signed(magnitude: st.SearchStrategy[float]) -> st.SearchStrategy[float]:
    return st.tuples(magnitude, st.booleans()).map(lambda t: -t[0] if t[1] else t[0])


CENTRE_LATS = _signed(st.floats(0, 70))
CENTRE_LONS = _signed(st.floats(0, 170))
# offsets in units of the search size: most points fall near the edge of the circle or box
OFFSETS = st.tuples(st.floats(-2.5, 2.5), st.floats(-2.5, 2.5))
ANYWHERE = st.tuples(st.floats(-89, 89), st.floats(-179, 179))


def _offset(lat: float, lon: float, dx_m: float, dy_m: float) -> Location:
    return lat + dy_m / M_PER_DEG, lon + dx_m / (M_PER_DEG * math.cos(math.radians(lat)))


def _locations(
    lat: float, lon: float, size_m: float, offsets: list[list[tuple[float, float]]], far: list[Location]
) -> list[list[Location]]:
    """Per point 1..3 locations near (lat, lon); sentinels: the centre itself, its swap, far points."""
    points = [[_offset(lat, lon, dx * size_m, dy * size_m) for dx, dy in locs] for locs in offsets]
    points.append([(lat, lon)])
    if abs(lon) <= 90:
        points.append([(lon, lat)])  # where a swapped order would look
    points.extend([loc] for loc in far)
    return points


def _upsert(store: VectorStore, tenant: str, points: list[list[Location]]) -> dict[str, list[Location]]:
    by_id = {str(uuid.uuid4()): locs for locs in points}
    store.upsert(
        SPEC.name,
        [
            StorePoint(
                id=pid,
                vectors={"dense": [0.6, 0.8]},
                payload={"tenant": tenant, "location": [{"lat": la, "lon": lo} for la, lo in locs]},
            )
            for pid, locs in by_id.items()
        ],
    )
    return by_id


def _ids(store: VectorStore, flt: Filter) -> set[str]:
    found = {hit.id for hit in store.scroll(SPEC.name, flt)}
    assert store.count(SPEC.name, flt) == len(found)
    return found


def _assert_selects(found: set[str], inside: set[str], outside: set[str], what: str) -> None:
    assert inside <= found, f"{what}: missing {inside - found}"
    assert not (found & outside), f"{what}: wrongly selected {found & outside}"


@PROPS
@given(
    lat=CENTRE_LATS,
    lon=CENTRE_LONS,
    radius_m=st.floats(50, 200_000),
    offsets=st.lists(st.lists(OFFSETS, min_size=1, max_size=3), min_size=1, max_size=15),
    far=st.lists(ANYWHERE, max_size=3),
)
def test_geo_radius_selects_by_haversine_distance(
    store: VectorStore,
    lat: float,
    lon: float,
    radius_m: float,
    offsets: list[list[tuple[float, float]]],
    far: list[Location],
) -> None:
    assume(abs(lat - lon) > 0.5)
    tenant = f"radius-{uuid.uuid4().hex}"
    by_id = _upsert(store, tenant, _locations(lat, lon, radius_m, offsets, far))
    try:
        inside, outside = set(), set()
        for pid, locs in by_id.items():
            distances = [haversine_m(lat, lon, p_lat, p_lon) for p_lat, p_lon in locs]
            if min(distances) < radius_m * (1 - BAND):
                inside.add(pid)
            elif min(distances) > radius_m * (1 + BAND):
                outside.add(pid)
        circle = GeoRadius("location", lat, lon, radius_m)
        _assert_selects(_ids(store, Filter({"tenant": tenant}, geo_radius=circle)), inside, outside, "radius")
        _assert_selects(_ids(store, Filter({"tenant": tenant}, any_of=[circle])), inside, outside, "any_of")
        # the API's radius filter, as the search service applies it (point condition OR area covering)
        resolved = resolve(GeoSpec(lat=lat, lon=lon, radius_m=radius_m), None)
        api = Filter({"tenant": tenant}, any_of=resolved.conditions)
        _assert_selects(_ids(store, api), inside, outside, "resolved radius")
    finally:
        store.delete(SPEC.name, Filter({"tenant": tenant}))


def _in_box(p: Location, box: GeoBox) -> bool | None:
    """True/False, or None within EDGE_DEG of an edge."""
    p_lat, p_lon = p
    margins = (p_lon - box.min_lon, box.max_lon - p_lon, p_lat - box.min_lat, box.max_lat - p_lat)
    if all(m > EDGE_DEG for m in margins):
        return True
    if any(m < -EDGE_DEG for m in margins):
        return False
    return None


@PROPS
@given(
    lat=CENTRE_LATS,
    lon=CENTRE_LONS,
    half_lon=st.floats(0.0005, 3),
    half_lat=st.floats(0.0005, 3),
    offsets=st.lists(st.lists(OFFSETS, min_size=1, max_size=3), min_size=1, max_size=15),
    far=st.lists(ANYWHERE, max_size=3),
)
def test_geo_box_and_polygon_select_by_lon_lat(
    store: VectorStore,
    lat: float,
    lon: float,
    half_lon: float,
    half_lat: float,
    offsets: list[list[tuple[float, float]]],
    far: list[Location],
) -> None:
    assume(abs(lat - lon) > 2 * max(half_lat, half_lon) + 0.5)
    box = GeoBox("location", lon - half_lon, lat - half_lat, lon + half_lon, lat + half_lat)
    # offsets are in metres of the larger half-side, so points straddle both pairs of edges
    size_m = max(half_lat, half_lon * math.cos(math.radians(lat))) * M_PER_DEG
    tenant = f"box-{uuid.uuid4().hex}"
    by_id = _upsert(store, tenant, _locations(lat, lon, size_m, offsets, far))
    try:
        inside, outside = set(), set()
        for pid, locs in by_id.items():
            verdicts = [_in_box(p, box) for p in locs]
            if any(v is True for v in verdicts):
                inside.add(pid)
            elif all(v is False for v in verdicts):
                outside.add(pid)
        _assert_selects(_ids(store, Filter({"tenant": tenant}, any_of=[box])), inside, outside, "box")
        ring = (
            (box.min_lon, box.min_lat),
            (box.max_lon, box.min_lat),
            (box.max_lon, box.max_lat),
            (box.min_lon, box.max_lat),
            (box.min_lon, box.min_lat),
        )
        polygon = GeoPolygon("location", ring)
        _assert_selects(_ids(store, Filter({"tenant": tenant}, any_of=[polygon])), inside, outside, "polygon")
        bbox = [box.min_lon, box.min_lat, box.max_lon, box.max_lat]
        resolved = resolve(GeoSpec(bbox=bbox), None)
        api = Filter({"tenant": tenant}, any_of=resolved.conditions)
        _assert_selects(_ids(store, api), inside, outside, "resolved bbox")
        geometry = {"type": "Polygon", "coordinates": [[list(p) for p in ring]]}
        resolved = resolve(GeoSpec(polygon=geometry), None)
        api = Filter({"tenant": tenant}, any_of=resolved.conditions)
        _assert_selects(_ids(store, api), inside, outside, "resolved polygon")
    finally:
        store.delete(SPEC.name, Filter({"tenant": tenant}))
