"""Great-circle distance on a sphere of one radius, for points given as (lat, lon) degrees.

Every distance Carta computes or checks goes through here: the gazetteer's proximity
scores, the geo filters' re-checks, the graph's NEAR joins and the relational evidence.
The radius is the one h3 uses (`h3.great_circle_distance`), so cell-based candidate
searches and these exact checks measure alike, and so does the relational ground truth
(scripts/make_relational_truth.py keeps its own copy of the formula on purpose, with
the same radius).
"""

from __future__ import annotations

import math

import numpy as np

EARTH_RADIUS_M = 6371007.180918475  # h3's mean Earth radius (EARTH_RADIUS_KM * 1000 in h3lib)


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle metres between (lat1, lon1) and (lat2, lon2), degrees."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(min(1.0, max(0.0, a))))


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle kilometres between (lat1, lon1) and (lat2, lon2), degrees."""
    return haversine_m(lat1, lon1, lat2, lon2) / 1000


def haversine_m_array(lat1: np.ndarray, lon1: np.ndarray, lat2: np.ndarray, lon2: np.ndarray) -> np.ndarray:
    """`haversine_m` over broadcastable arrays of degrees, e.g. (n, 1) against (1, m)
    gives the (n, m) distance matrix."""
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dp, dl = p2 - p1, np.radians(lon2 - lon1)
    a = np.sin(dp / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))
