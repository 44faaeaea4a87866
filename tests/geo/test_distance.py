"""Great-circle distance: one radius (h3's), scalar and vectorised forms agree."""

from __future__ import annotations

import math

import h3
import numpy as np
import pytest

from geo.distance import EARTH_RADIUS_M, haversine_km, haversine_m, haversine_m_array
from graph.spatial import pairs_within
from tests.utils.scripts import load_script

PAIRS = [
    ((-8.0631, -34.8711), (-8.0631, -34.8711)),  # the same point
    ((-8.0631, -34.8711), (-8.0577, -34.8829)),  # ~1.4 km in Recife
    ((0.0, 0.0), (0.0, 1.0)),  # one degree along the equator
    ((-23.55, -46.63), (40.71, -74.01)),  # São Paulo - New York
    ((10.0, 179.9), (10.0, -179.9)),  # across the antimeridian
    ((89.9, 0.0), (89.9, 180.0)),  # over the pole
]


def test_the_radius_is_the_one_h3_uses() -> None:
    rads = h3.great_circle_distance((0.0, 0.0), (0.0, 1.0), unit="rads")
    metres = h3.great_circle_distance((0.0, 0.0), (0.0, 1.0), unit="m")
    assert EARTH_RADIUS_M * rads == pytest.approx(metres, rel=1e-12)


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_haversine_matches_h3(a: tuple[float, float], b: tuple[float, float]) -> None:
    assert haversine_m(*a, *b) == pytest.approx(h3.great_circle_distance(a, b, unit="m"), rel=1e-9, abs=1e-6)
    assert haversine_km(*a, *b) == pytest.approx(haversine_m(*a, *b) / 1000, rel=1e-12)


def test_one_degree_of_the_equator() -> None:
    assert haversine_m(0.0, 0.0, 0.0, 1.0) == pytest.approx(2 * math.pi * EARTH_RADIUS_M / 360, rel=1e-12)
    assert haversine_m(0.0, 0.0, 0.0, 1.0) == pytest.approx(111_195, abs=1)


def test_array_form_matches_the_scalar_form() -> None:
    rng = np.random.default_rng(1)
    lat, lon = -30.03 + rng.normal(0, 0.5, 50), -51.2 + rng.normal(0, 0.5, 50)
    d = haversine_m_array(lat[:, None], lon[:, None], lat[None, :], lon[None, :])  # (50, 50)
    assert d.shape == (50, 50) and np.all(np.diag(d) == 0)
    for i, j in [(0, 1), (3, 40), (10, 11), (49, 2)]:
        assert d[i, j] == pytest.approx(haversine_m(lat[i], lon[i], lat[j], lon[j]), rel=1e-12)
        assert d[i, j] == d[j, i]


def test_the_relational_ground_truth_measures_alike() -> None:
    """scripts/make_relational_truth.py keeps its own haversine on purpose (no graph code
    in the truth); it must give the distances the graph's joins give, or pairs right at
    the radius would count as misses."""
    truth = load_script("make_relational_truth")
    assert truth.EARTH_RADIUS_M == EARTH_RADIUS_M
    rng = np.random.default_rng(7)
    lat, lon = -8.06 + rng.normal(0, 0.003, 200), -34.88 + rng.normal(0, 0.003, 200)
    joined = pairs_within(lat, lon, lat, lon, 150.0, same_set=True)
    assert joined
    for i, j, d in joined:
        assert d == pytest.approx(truth.haversine(lat[i], lon[i], lat[j], lon[j]), abs=1e-6)
        assert haversine_m(lat[i], lon[i], lat[j], lon[j]) == pytest.approx(d, abs=1e-6)
    brute = {
        (i, j)
        for i in range(200)
        for j in range(i + 1, 200)
        if truth.haversine(lat[i], lon[i], lat[j], lon[j]) <= 150.0
    }
    assert {(i, j) for i, j, _ in joined} == brute
