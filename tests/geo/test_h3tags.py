"""H3 tokens: coordinate order, resolutions, ring, coverings, hashing."""

from __future__ import annotations

import math

import h3
import numpy as np
import pytest

from geo.distance import haversine_m
from geo.h3tags import (
    area_cells,
    area_resolution,
    circle_cells,
    hashed_h3_sparse,
    hashed_h3_vector,
    merge_tokens,
    point_tokens,
    polygon_area_km2,
    tokens_for_cells,
)

MARCO_ZERO = (-8.0631, -34.8711)  # (lat, lon), Recife


def test_point_tokens_take_lat_lon_and_include_the_res9_ring() -> None:
    tokens = point_tokens(*MARCO_ZERO)
    assert set(tokens) == {"h3_r7", "h3_r9", "h3_r11"}
    assert tokens["h3_r7"] == [h3.latlng_to_cell(*MARCO_ZERO, 7)]
    center = h3.latlng_to_cell(*MARCO_ZERO, 9)
    assert tokens["h3_r9"][0] == center and set(tokens["h3_r9"]) == set(h3.grid_disk(center, 1))
    assert len(tokens["h3_r9"]) == 7
    lat, lon = h3.cell_to_latlng(tokens["h3_r11"][0])
    assert haversine_m(lat, lon, *MARCO_ZERO) < 50  # swapped order would land in the Indian Ocean


def test_merge_tokens_unions_in_order_with_a_limit() -> None:
    a, b = point_tokens(-8.06, -34.87), point_tokens(-8.12, -34.90)
    merged = merge_tokens([a, b])
    assert merged["h3_r7"][0] == a["h3_r7"][0] and len(set(merged["h3_r11"])) == 2
    assert len(merge_tokens([a, b], limit=3)["h3_r9"]) == 3


def test_area_covering_is_bounded_and_inside() -> None:
    # ~ the Olinda Landsat scene, 10 x 10 km
    ring = [(-34.92, -8.04), (-34.83, -8.04), (-34.83, -7.95), (-34.92, -7.95), (-34.92, -8.04)]
    assert 90 < polygon_area_km2(ring) < 110
    cells = area_cells(ring)
    assert 0 < len(cells) <= 400 + 5
    res = area_resolution(ring)
    assert all(h3.get_resolution(c) == res for c in cells)
    lat, lon = h3.cell_to_latlng(cells[len(cells) // 2])
    assert -8.1 < lat < -7.9 and -35.0 < lon < -34.8
    # a tiny polygon still gets a cell
    tiny = [(-34.8711, -8.0631), (-34.87109, -8.0631), (-34.87109, -8.06309), (-34.8711, -8.0631)]
    assert area_cells(tiny)


def test_circle_cells_cover_the_centre_and_not_far_away() -> None:
    cells = circle_cells(*MARCO_ZERO, 2000)
    res = h3.get_resolution(cells[0])
    assert h3.latlng_to_cell(*MARCO_ZERO, res) in cells
    assert h3.latlng_to_cell(-8.30, -34.95, res) not in cells  # ~27 km south


def test_tokens_for_cells_map_any_resolution_to_stored_fields() -> None:
    r8 = h3.latlng_to_cell(*MARCO_ZERO, 8)
    tokens = tokens_for_cells([r8])
    assert len(tokens) == 7 and all(h3.get_resolution(t) == 9 for t in tokens)
    r12 = h3.latlng_to_cell(*MARCO_ZERO, 12)
    assert tokens_for_cells([r12]) == [h3.cell_to_parent(r12, 11)]
    r7 = h3.latlng_to_cell(*MARCO_ZERO, 7)
    assert tokens_for_cells([r7]) == [r7]


def test_hashed_vector_is_normalised_and_similar_for_near_points() -> None:
    v1 = hashed_h3_vector(point_tokens(*MARCO_ZERO))
    v2 = hashed_h3_vector(point_tokens(-8.0635, -34.8715))  # ~60 m away
    v3 = hashed_h3_vector(point_tokens(-23.55, -46.63))  # São Paulo
    assert len(v1) == 1024 and math.isclose(sum(x * x for x in v1), 1.0, rel_tol=1e-9)
    near = sum(a * b for a, b in zip(v1, v2, strict=True))
    far = sum(a * b for a, b in zip(v1, v3, strict=True))
    assert near > 0.5 > far
    assert hashed_h3_vector({}) == [0.0] * 1024


def test_area_tokens_match_queries_at_other_resolutions() -> None:
    from geo.h3tags import area_query, area_tokens

    def overlaps(area: list[str], query: list[str]) -> bool:
        stored, wanted = area_tokens(area), area_query(query)
        return any(set(stored[f]) & set(wanted[f]) for f in stored)

    fine = h3.latlng_to_cell(*MARCO_ZERO, 9)
    coarse = h3.cell_to_parent(fine, 6)
    assert overlaps([fine], [coarse])  # query coarser than the area
    assert overlaps([coarse], [fine])  # query finer than the area
    assert overlaps([fine], [fine])
    elsewhere = h3.latlng_to_cell(-23.55, -46.63, 9)  # São Paulo shares only very coarse ancestors
    assert not overlaps([fine], [elsewhere])
    assert not overlaps([coarse], [h3.cell_to_parent(elsewhere, 6)])


def test_hashed_sparse_vector_gives_the_dense_vectors_dot_products() -> None:
    a = point_tokens(-8.0631, -34.8711)
    b = point_tokens(-8.0640, -34.8720)  # ~140 m away: shares the res-7 cell and ring cells
    far = point_tokens(-12.97, -38.51)
    dense = [np.array(hashed_h3_vector(t)) for t in (a, b, far)]
    sparse = [hashed_h3_sparse(t) for t in (a, b, far)]
    for (ia, va), da in zip(sparse, dense, strict=True):
        assert np.count_nonzero(da) == len(ia) and np.allclose(da[ia], va)
        assert np.linalg.norm(va) == pytest.approx(1.0)
    assert float(dense[0] @ dense[1]) > 0.5 > float(dense[0] @ dense[2])


def test_a_footprint_wider_than_half_the_globe_is_covered_as_drawn() -> None:
    """A world map's -180..180 footprint: h3 alone reads its edges the short way round and
    returns the two cells of its corners; cut into strips it is every cell of the globe, so
    Sydney and Recife are both on it. A narrow ring is covered as before."""
    world = [(-180.0, -90.0), (180.0, -90.0), (180.0, 90.0), (-180.0, 90.0), (-180.0, -90.0)]
    cells = area_cells(world)
    assert len(cells) == len(h3.get_res0_cells())
    assert h3.latlng_to_cell(-33.87, 151.21, 0) in cells and h3.latlng_to_cell(-8.05, -34.9, 0) in cells
    half = [(-100.0, -10.0), (100.0, -10.0), (100.0, 10.0), (-100.0, 10.0), (-100.0, -10.0)]
    res = h3.get_resolution(area_cells(half)[0])
    assert h3.latlng_to_cell(0.0, 0.0, res) in area_cells(half)
    assert h3.latlng_to_cell(0.0, 180.0, res) not in area_cells(half)


def test_a_self_intersecting_ring_is_covered_at_a_bounded_resolution() -> None:
    """A bowtie's lobes cancel in the shoelace area (0 km2), which once chose resolution 11:
    the 2-degree bowtie became 15 million cells (a minute, gigabytes) and a 20-degree one a
    MemoryError. The ring's bounding box now bounds the resolution; both lobes stay covered."""
    from geo.h3tags import BOX_CELLS_FACTOR, MAX_AREA_CELLS

    for half in (1.0, 10.0, 180.0):
        lat = min(half, 80.0)
        bowtie = [(-half, -lat), (half, lat), (half, -lat), (-half, lat), (-half, -lat)]
        assert polygon_area_km2(bowtie) == pytest.approx(0.0, abs=1e-6)
        cells = area_cells(bowtie)
        assert 0 < len(cells) <= BOX_CELLS_FACTOR * MAX_AREA_CELLS
        res = h3.get_resolution(cells[0])
        assert h3.latlng_to_cell(0.0, 0.9 * half, res) in cells  # inside the east lobe
    # an ordinary shape keeps its resolution: the 10 x 10 km scene is still at resolution 8
    scene = [(-34.92, -8.04), (-34.83, -8.04), (-34.83, -7.95), (-34.92, -7.95), (-34.92, -8.04)]
    assert area_resolution(scene) == 8


def test_a_ring_without_width_or_height_is_covered_by_its_vertices() -> None:
    """h3 raises H3FailedError on a ring whose box has no width or no height."""
    for ring in (
        [(0.0, 0.0)] * 4,
        [(10.0, 5.0), (11.0, 5.0), (12.0, 5.0), (10.0, 5.0)],
        [(5.0, 0.0), (5.0, 1.0), (5.0, 2.0), (5.0, 0.0)],
    ):
        cells = area_cells(ring)
        res = h3.get_resolution(cells[0])
        assert {h3.latlng_to_cell(lat, lon, res) for lon, lat in ring} == set(cells)
