"""Typed attributes and the awkward GeoJSON a dataset upload may be (issue 16): every file
that parses loads its valid features or is refused with a clear message, never a crash."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from graph.attributes import coerce, flatten, infer_schema
from graph.errors import PoiFormatError
from graph.sources import Parsed, Poi, parse
from graph.store import GraphStore


@pytest.mark.parametrize(
    ("raw", "typed"),
    [
        ("5,4", 5.4),
        ("1.234,5", 1234.5),
        ("4.3", 4.3),
        ("42", 42),
        ("007", "007"),  # a code keeps its leading zero
        ("2010-08-01", "2010-08-01"),
        ("01/08/2010", "2010-08-01"),
        ("true", True),
        ("não", False),
        ("Boa Viagem", "Boa Viagem"),
        ("", None),
        (float("nan"), None),
        ([1, 2], "[1, 2]"),
        (10**400, str(10**400)),  # an identifier, not a number a float could hold
        ("1" + "0" * 30, "1" + "0" * 30),
    ],
)
def test_values_are_typed(raw: object, typed: object) -> None:
    assert coerce(raw) == typed


def test_nested_properties_are_flattened_and_the_schema_types_them() -> None:
    attrs = flatten({"a": {"b": {"c": "5,5"}}, "when": "2020-01-02", "tags": ["x"], "n": None})
    assert attrs == {"a.b.c": 5.5, "when": "2020-01-02", "tags": '["x"]'}
    schema = infer_schema([attrs, {"a.b.c": 7, "when": "x"}], {"feature": 2})
    props = {p["name"]: p for p in schema["properties"]}
    assert props["a.b.c"]["type"] == "number" and (props["a.b.c"]["min"], props["a.b.c"]["max"]) == (5.5, 7)
    assert props["when"]["type"] == "mixed" and props["when"]["types"] == {"date": 1, "string": 1}
    assert props["tags"]["type"] == "json" and schema["categories"] == {"feature": 2}


def _fc(*features: dict, **extra: object) -> bytes:
    return json.dumps({"type": "FeatureCollection", "features": list(features), **extra}).encode()


def _feature(geometry: object, **props: object) -> dict:
    return {"type": "Feature", "geometry": geometry, "properties": props}


def test_mixed_null_3d_and_nested_features_load() -> None:
    data = _fc(
        _feature({"type": "Point", "coordinates": [-34.9, -8.05, 12.0]}, nome="A", info={"nota": "5,4"}),
        _feature(None, nome="no geometry"),
        _feature({"type": "LineString", "coordinates": [[-34.9, -8.0], [-34.8, -8.0]]}, nome="B"),
        _feature(
            {"type": "Polygon", "coordinates": [[[-34.9, -8.1], [-34.8, -8.1], [-34.8, -8.0], [-34.9, -8.1]]]}
        ),
        _feature({"type": "Point", "coordinates": ["x", "y"]}),
        _feature({"type": "GeometryCollection", "geometries": []}),
        "not a feature",  # type: ignore[arg-type]
        crs={"type": "name", "properties": {"name": "urn:ogc:def:crs:OGC:1.3:CRS84"}},
    )
    parsed = parse(data, "pontos")
    assert [p.name for p in parsed.pois] == ["A", "B", ""] and parsed.skipped == 4
    assert parsed.pois[0].attrs == {"nome": "A", "info.nota": 5.4}
    assert parsed.pois[2].geometry is not None and parsed.pois[1].geometry is None


def test_invalid_rings_are_repaired() -> None:
    """A bow-tie ring (self-intersecting) is made valid (shapely make_valid): two triangles."""
    bowtie = {"type": "Polygon", "coordinates": [[[0, 0], [2, 2], [2, 0], [0, 2], [0, 0]]]}
    parsed = parse(_fc(_feature(bowtie, Name="gravata")), "zonas")
    from shapely.geometry import shape

    poly = shape(parsed.pois[0].geometry)
    assert poly.is_valid and poly.geom_type == "MultiPolygon" and poly.area == pytest.approx(2.0)


def test_a_projected_crs_is_refused_clearly() -> None:
    data = _fc(
        _feature({"type": "Point", "coordinates": [290000.0, 9110000.0]}),
        crs={"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::31985"}},
    )
    with pytest.raises(PoiFormatError, match="31985.*WGS 84"):
        parse(data, "utm")


def test_an_old_data_dir_gets_the_attribute_columns(tmp_path: Path) -> None:
    """A graph file of the first schema version is migrated: its datasets gain a schema
    (computed from their POIs) and keep answering."""
    path = tmp_path / "g.sqlite3"
    store = GraphStore(path)
    store.add_dataset(
        "t", Parsed([Poi("d:1", "A", "school", -8.0, -34.9, {"IDEB": 5.0})]), "f.geojson", "geojson", b"x"
    )
    store.close()
    db = sqlite3.connect(path)  # back to version 1: the new columns gone, the attributes too
    db.executescript(
        "ALTER TABLE datasets DROP COLUMN schema; ALTER TABLE datasets DROP COLUMN aliases; "
        "UPDATE nodes SET data='{}' WHERE type='poi'; PRAGMA user_version=1;"
    )
    db.close()
    store = GraphStore(path)
    try:
        (info,) = store.datasets("t")
        schema = store.dataset_schema("t", info.id)
        assert schema is not None and schema["categories"] == {"school": 1} and schema["aliases"] == {}
        assert store.features("t")[0].attrs == {}
    finally:
        store.close()
