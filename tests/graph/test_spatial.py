"""The bucketed distance joins against brute force (every pair)."""

from __future__ import annotations

import numpy as np
import pytest

from geo.distance import haversine_m, haversine_m_array
from graph.spatial import cells_of, nearest_within, pairs_within


def cloud(n: int, seed: int, lat: float = -30.03, lon: float = -51.2, spread: float = 0.01) -> tuple:
    rng = np.random.default_rng(seed)
    return lat + rng.normal(0, spread, n), lon + rng.normal(0, spread, n)


def brute(alat, alon, blat, blon, radius, same=False) -> set:
    out = set()
    for i in range(len(alat)):
        for j in range(len(blat)):
            if same and j <= i:
                continue
            if haversine_m(alat[i], alon[i], blat[j], blon[j]) <= radius:
                out.add((i, j))
    return out


@pytest.mark.parametrize(("radius", "resolution"), [(150.0, 7), (500.0, 9), (2500.0, 7), (800.0, 8)])
def test_pairs_within_equals_brute_force(radius: float, resolution: int) -> None:
    alat, alon = cloud(300, 2)
    blat, blon = cloud(250, 3)
    got = pairs_within(alat, alon, blat, blon, radius, resolution)
    assert {(i, j) for i, j, _ in got} == brute(alat, alon, blat, blon, radius)
    assert all(d <= radius for _, _, d in got)


def test_pairs_within_same_set_lists_each_pair_once() -> None:
    lat, lon = cloud(200, 4)
    got = pairs_within(lat, lon, lat, lon, 300.0, 9, same_set=True)
    assert {(i, j) for i, j, _ in got} == brute(lat, lon, lat, lon, 300.0, same=True)


def test_pairs_within_near_the_antimeridian() -> None:
    alat, alon = np.array([0.0, 0.0]), np.array([179.9995, -179.9995])
    got = pairs_within(alat, alon, alat, alon, 200.0, 7, same_set=True)
    assert [(i, j) for i, j, _ in got] == [(0, 1)]


def test_nearest_within_keeps_the_k_nearest_inside_the_radius() -> None:
    lat, lon = cloud(400, 5, spread=0.004)
    cells = cells_of(lat, lon, 7)
    got = nearest_within(lat, lon, cells, 500.0, 10, 7)
    for i in (0, 17, 123, 399):
        d = np.array([haversine_m(lat[i], lon[i], lat[j], lon[j]) if j != i else np.inf for j in range(400)])
        expected = [j for j in np.argsort(d, kind="stable")[:10] if d[j] <= 500.0]
        assert [j for j, _ in got[i]] == expected
        assert [x for _, x in got[i]] == pytest.approx(sorted(d[expected]))


@pytest.mark.parametrize("radius", [40.0, 120.0, 500.0, 1500.0])
def test_join_resolution_keeps_joins_exact(radius: float) -> None:
    from graph.spatial import join_resolution

    res = join_resolution(radius)
    alat, alon = cloud(250, 6, spread=0.006)
    blat, blon = cloud(250, 7, spread=0.006)
    got = pairs_within(alat, alon, blat, blon, radius, res)
    assert {(i, j) for i, j, _ in got} == brute(alat, alon, blat, blon, radius)


def test_nearest_within_on_points_piled_on_one_spot_stays_small() -> None:
    """20,000 points at one location: the old join built a 20,000 x 20,001 matrix (3.2 GB);
    the blocked top-k stays under 32 MB, and ties go to the lowest indices."""
    import tracemalloc

    n = 20_000
    lat, lon = np.full(n, -8.05), np.full(n, -34.9)
    cells = cells_of(lat, lon, 9)
    tracemalloc.start()
    try:
        got = nearest_within(lat, lon, cells, 500.0, 10, 9)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20, peak
    assert [j for j, _ in got[0]] == list(range(1, 11))
    assert [j for j, _ in got[n - 1]] == list(range(10))
    assert all(len(v) == 10 and all(d == 0.0 for _, d in v) for v in got.values())


def test_nearest_within_equals_brute_force_on_a_normal_dataset() -> None:
    """Every point's list, in blocks far smaller than the data, equals the full-matrix answer."""
    from graph import spatial

    lat, lon = cloud(1500, 8, spread=0.006)
    cells = cells_of(lat, lon, 9)
    full = haversine_m_array(lat[:, None], lon[:, None], lat[None, :], lon[None, :])  # (1500, 1500)
    np.fill_diagonal(full, np.inf)
    old_block, spatial.MAX_BLOCK = spatial.MAX_BLOCK, 512  # many blocks per cell
    try:
        got = nearest_within(lat, lon, cells, 500.0, 10, 9)
        only_b = nearest_within(lat, lon, cells, 500.0, 10, 9, np.arange(0, 1500, 7), np.arange(1, 1500, 2))
    finally:
        spatial.MAX_BLOCK = old_block
    for i in range(1500):
        expected = [j for j in np.lexsort((np.arange(1500), full[i]))[:10] if full[i, j] <= 500.0]
        assert [j for j, _ in got[i]] == expected
    odd = np.where(np.arange(1500) % 2 == 1, full, np.inf)
    for i in range(0, 1500, 7):
        expected = [j for j in np.lexsort((np.arange(1500), odd[i]))[:10] if odd[i, j] <= 500.0]
        assert [j for j, _ in only_b[i]] == expected


def test_pairs_within_in_small_blocks_equals_brute_force() -> None:
    from graph import spatial

    alat, alon = cloud(300, 9)
    blat, blon = cloud(250, 10)
    old_block, spatial.MAX_BLOCK = spatial.MAX_BLOCK, 64
    try:
        got = pairs_within(alat, alon, blat, blon, 500.0, 9)
    finally:
        spatial.MAX_BLOCK = old_block
    assert {(i, j) for i, j, _ in got} == brute(alat, alon, blat, blon, 500.0)
