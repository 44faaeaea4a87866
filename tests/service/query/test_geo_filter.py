"""Geo filter specs resolved to engine conditions (no store needed)."""

from __future__ import annotations

import h3
import pytest

from geo.gazetteer import Gazetteer
from index.types import Filter, GeoBox, GeoPolygon, GeoRadius
from service.query.geo_filter import GeoFilterError, GeoSpec, resolve


@pytest.fixture(scope="module")
def gazetteer() -> Gazetteer:
    return Gazetteer.from_geonames(15000)


def test_radius_is_exact_on_points_plus_area_overlap(gazetteer: Gazetteer) -> None:
    r = resolve(GeoSpec(lat=-8.06, lon=-34.87, radius_m=2000), gazetteer)
    assert r.kind == "radius" and r.conditions[0] == GeoRadius("location", -8.06, -34.87, 2000)
    assert all(isinstance(c, Filter) for c in r.conditions[1:])
    assert {next(iter(c.match)) for c in r.conditions[1:]} == {"h3_area", "h3_area_up"}  # type: ignore[union-attr]


def test_bbox_polygon_h3_and_place(gazetteer: Gazetteer) -> None:
    box = resolve(GeoSpec(bbox=[-35.0, -8.2, -34.8, -7.9]), gazetteer)
    assert box.conditions[0] == GeoBox("location", -35.0, -8.2, -34.8, -7.9)
    ring = [[-35.0, -8.2], [-34.8, -8.2], [-34.8, -7.9], [-35.0, -7.9], [-35.0, -8.2]]
    poly = resolve(GeoSpec(polygon={"type": "Polygon", "coordinates": [ring]}), gazetteer)
    assert isinstance(poly.conditions[0], GeoPolygon) and len(poly.conditions[0].ring) == 5
    cells = resolve(GeoSpec(h3=["87818c5a3ffffff"]), gazetteer)
    assert cells.conditions[0] == Filter({"h3_r7": ["87818c5a3ffffff"]})
    place = resolve(GeoSpec(place="Recife"), gazetteer)
    assert place.description["place"] == "Recife" and place.description["radius_m"] == 10_000
    assert resolve(GeoSpec(place="Recife", radius_m=500), gazetteer).description["radius_m"] == 500


@pytest.mark.parametrize(
    "spec",
    [
        GeoSpec(),
        GeoSpec(lat=1, lon=2),
        GeoSpec(lat=95, lon=0, radius_m=5),
        GeoSpec(lat=0, lon=0, radius_m=-1),
        GeoSpec(bbox=[1, 2, 3]),
        GeoSpec(bbox=[3, 3, 1, 1]),
        GeoSpec(h3=["zz"]),
        GeoSpec(place="Qwxyzzzz"),
        GeoSpec(polygon={"type": "Point", "coordinates": [0, 0]}),
        GeoSpec(place="Recife", h3=["87818c5a3ffffff"]),
    ],
)
def test_unusable_filters_raise(gazetteer: Gazetteer, spec: GeoSpec) -> None:
    with pytest.raises(GeoFilterError):
        resolve(spec, gazetteer)


def test_h3_cells_are_counted_not_expanded_and_capped() -> None:
    import h3

    from geo.h3tags import MAX_QUERY_TOKENS, token_count, tokens_for_cells

    res0 = sorted(h3.get_res0_cells())
    assert token_count(res0[:1]) == 823_543  # arithmetic only: no children are built
    with pytest.raises(GeoFilterError, match=f"the limit is {MAX_QUERY_TOKENS:,}"):
        resolve(GeoSpec(h3=res0), None)
    with pytest.raises(ValueError, match="the limit is"):
        tokens_for_cells(res0[:1])  # the backstop refuses before expanding, too
    parent = h3.latlng_to_cell(-8.05, -34.9, 3)
    mixed = [parent, *h3.cell_to_children(parent, 5)[:3], parent, h3.latlng_to_cell(-23.5, -46.6, 8)]
    tokens = tokens_for_cells(mixed)
    assert token_count(mixed) == len(tokens) == 2401 + 7  # children inside a listed cell add nothing
    r = resolve(GeoSpec(h3=mixed), None)
    assert r.description["h3"] == [parent, mixed[-1]]
    assert sum(len(c.match.get("h3_r7", ())) for c in r.conditions) == 2401  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", ["zzz", "", "8928308280fffffff", "-1", "8" * 40, "89283082 0fffff"])
def test_invalid_h3_ids_are_a_geo_filter_error(bad: str) -> None:
    from geo.h3tags import is_h3_cell

    assert not is_h3_cell(bad)
    with pytest.raises(GeoFilterError, match="not valid H3 cell ids"):
        resolve(GeoSpec(h3=["8928308280fffff", bad]), None)


def test_point_test_of_each_filter_kind_for_answers_from_poi_data() -> None:
    """The request's filter as a point test (POI answers never meet the engine's conditions)."""
    from service.query.geo_filter import point_test

    recife, olinda = (-8.0631, -34.8711), (-8.0089, -34.8553)  # ~6 km apart
    radius = point_test(resolve(GeoSpec(lat=recife[0], lon=recife[1], radius_m=2000), None))
    box = point_test(resolve(GeoSpec(bbox=[-34.9, -8.1, -34.86, -8.03]), None))
    ring = [[-34.9, -8.1], [-34.86, -8.1], [-34.86, -8.03], [-34.9, -8.03], [-34.9, -8.1]]
    polygon = point_test(resolve(GeoSpec(polygon={"type": "Polygon", "coordinates": [ring]}), None))
    cells = point_test(resolve(GeoSpec(h3=[h3.latlng_to_cell(*recife, 6)]), None))
    for inside in (radius, box, polygon, cells):
        assert inside is not None and inside(*recife) and not inside(*olinda)
