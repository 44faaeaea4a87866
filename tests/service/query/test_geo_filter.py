"""Geo filter specs resolved to engine conditions (no store needed)."""

from __future__ import annotations

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
