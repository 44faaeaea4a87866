"""H3 cells <-> GeoJSON rings: the lat/lng swap and the closed ring."""

from __future__ import annotations

import h3

from geo.shapes import cell_to_geojson_polygon, cell_to_geojson_ring, geojson_ring_to_latlng_poly, outer_ring

RECIFE = (-8.0631, -34.8711)  # (lat, lon)


def test_cell_ring_is_closed_and_in_lon_lat_order() -> None:
    cell = h3.latlng_to_cell(*RECIFE, 9)
    ring = cell_to_geojson_ring(cell)
    assert len(ring) == 7 and ring[0] == ring[-1]
    assert [(lat, lon) for lon, lat in ring[:-1]] == list(h3.cell_to_boundary(cell))
    assert all(-35 < lon < -34.8 and -8.1 < lat < -8.0 for lon, lat in ring)  # swapped would be off-range


def test_cell_ring_rounds_only_when_asked() -> None:
    cell = h3.latlng_to_cell(*RECIFE, 11)
    rounded = cell_to_geojson_ring(cell, digits=7)
    assert all(round(x, 7) == x for pos in rounded for x in pos)
    exact = cell_to_geojson_ring(cell)
    pairs = [(a, b) for pa, pb in zip(exact, rounded, strict=True) for a, b in zip(pa, pb, strict=True)]
    assert all(abs(a - b) <= 5e-8 for a, b in pairs)


def test_cell_polygon_round_trips_through_the_h3_polygon() -> None:
    cell = h3.latlng_to_cell(*RECIFE, 8)
    geometry = cell_to_geojson_polygon(cell)
    assert geometry["type"] == "Polygon"
    ring = outer_ring(geometry)
    assert ring is not None
    children = set(h3.cell_to_children(cell, 10))
    covered = set(h3.polygon_to_cells(geojson_ring_to_latlng_poly(ring), 10))
    assert len(covered & children) >= 0.9 * len(children)
    assert covered <= {c for child in children for c in h3.grid_disk(child, 1)}
