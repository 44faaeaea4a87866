"""Typed response details never turn an answer into a 500: a key whose value its schema
does not describe is left out, the rest of the detail is kept."""

from __future__ import annotations

import logging

import pytest

from service.api.graph_schemas import GraphEvidenceOut, ResolvedGeoOut
from service.api.schemas import documented


def test_a_value_off_its_schema_is_left_out_and_the_rest_kept(caplog: pytest.LogCaptureFixture) -> None:
    graph = {
        "total": {"not": "an int"},
        "unknown": {
            "kind": "attribute",
            "name": "renda",
            "available": ["V014"],
            "by_dataset": {"t.geojson": ["V014"]},
        },
        "notes": ["a note"],
        "extra_key": [1, 2],
    }
    with caplog.at_level(logging.WARNING):
        out = documented(GraphEvidenceOut, graph)
    assert out is not None
    body = out.model_dump()
    assert "total" not in body
    assert body["unknown"]["by_dataset"] == {"t.geojson": ["V014"]}
    assert body["notes"] == ["a note"] and body["extra_key"] == [1, 2]
    assert "total" in caplog.text


def test_a_valid_detail_is_kept_whole_and_none_stays_none() -> None:
    graph = {"total": 3, "rows": [], "notes": []}
    out = documented(GraphEvidenceOut, graph)
    assert out is not None and out.model_dump() == graph
    assert documented(ResolvedGeoOut, None) is None
