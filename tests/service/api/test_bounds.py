"""Issue 14: every request bounded before work starts, over HTTP. Oversized H3 filters,
invalid H3 ids, POI datasets over the cap, JSON nested too deep, JSON bodies and their lists
too long and polygons with too many vertices each get a 4xx with a sentence naming the
limit, never a 500 or an unbounded allocation; a self-intersecting polygon is served."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator

import h3
import httpx
import pytest

from geo.h3tags import MAX_QUERY_CELLS, MAX_QUERY_TOKENS
from ingest.readers.jsontext import MAX_JSON_DEPTH
from models.text_encoder import TextEncoder
from service.api.errors import MAX_PROBLEMS
from service.api.middleware.body_limit import MAX_JSON_BYTES
from service.api.schemas import MAX_DOC_IDS, MAX_KINDS
from service.carta import Carta
from service.query.geo_filter import MAX_POLYGON_VERTICES
from tests.conftest import settings_for
from tests.utils.api import ingest_via_api
from tests.utils.servers import LiveServer

PROBE_CELLS = (
    list(h3.get_res0_cells())
    + [  # the probe's filter: 122 res-0 + 378 res-2 cells
        c for parent in sorted(h3.get_res0_cells())[:9] for c in sorted(h3.cell_to_children(parent, 2))
    ][:378]
)
BAD_CELLS = ["zzz", "", "8928308280fffffff"]  # the last one overflows h3's own check


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, text_encoder: TextEncoder) -> Iterator[httpx.Client]:
    """One server for the module (the probes only read, or are refused before storing)."""
    settings = settings_for(tmp_path_factory.mktemp("bounds"), graph_max_dataset_pois=1000)
    carta = Carta(settings, text_encoder=text_encoder)
    with LiveServer(carta) as live, httpx.Client(base_url=live.url, timeout=120) as c:
        yield c
    carta.close()


def body(route: str, text: str, cells: list[str]) -> dict:
    """A /v1/search or /v1/ask body with an H3 filter."""
    return {"query" if route == "/v1/search" else "question": text, "geo": {"h3": cells}}


def error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert body["code"] == code, body
    return body["message"]


@pytest.mark.parametrize("route", ["/v1/search", "/v1/ask"])
def test_h3_filters_are_capped_before_expansion(client: httpx.Client, route: str) -> None:
    assert len(PROBE_CELLS) == 500
    probe = body(route, "annual report Recife", PROBE_CELLS)
    message = error(client.post(route, json=probe), 400, "bad_geo_filter")
    assert f"{MAX_QUERY_TOKENS:,}" in message and "resolution-7" in message
    too_many = [h3.latlng_to_cell(-8.0 + i * 0.01, -34.9, 9) for i in range(MAX_QUERY_CELLS + 1)]
    message = error(client.post(route, json=body(route, "x", too_many)), 400, "bad_geo_filter")
    assert f"at most {MAX_QUERY_CELLS} cells" in message
    # within the caps: 14 res-3 cells (33,614 res-7 tokens) are served
    res3 = (
        sorted(h3.cell_to_children(h3.latlng_to_cell(-8.05, -34.9, 2), 3))[:7]
        + sorted(h3.cell_to_children(h3.latlng_to_cell(-23.5, -46.6, 2), 3))[:7]
    )
    ok = client.post(route, json=body(route, "annual report Recife", res3))
    assert ok.status_code == 200, ok.text


@pytest.mark.parametrize("route", ["/v1/search", "/v1/ask"])
def test_invalid_h3_ids_answer_400(client: httpx.Client, route: str) -> None:
    message = error(client.post(route, json=body(route, "x", BAD_CELLS)), 400, "bad_geo_filter")
    assert "not valid H3 cell ids" in message and "8928308280fffffff" in message


def test_ui_h3_refuses_invalid_ids_without_a_key(client: httpx.Client) -> None:
    for cells in ("8928308280fffffff", "zzz,8928308280fffff", "-1"):
        assert "not H3 cell ids" in error(client.get("/ui/h3", params={"cells": cells}), 400, "bad_h3_cells")
    drawn = client.get("/ui/h3", params={"cells": "8928308280fffff"})
    assert drawn.status_code == 200 and drawn.json()["features"][0]["properties"]["resolution"] == 9


def test_a_dataset_over_the_poi_cap_is_refused(client: httpx.Client) -> None:
    rows = "lat,lon,category\n" + "-8.05,-34.9,school\n" * 1001  # cap set to 1,000 by the fixture
    message = error(
        client.post("/v1/datasets", files={"file": ("pile.csv", rows.encode())}), 413, "too_many_pois"
    )
    assert "1,001" in message and "at most 1,000" in message and "CARTA_GRAPH_MAX_DATASET_POIS" in message
    assert client.get("/v1/datasets").json() == []  # nothing stored
    # at the cap, all at one point: stored, with full NEAR lists and no N x N matrix
    up = client.post(
        "/v1/datasets", files={"file": ("pile.csv", rows[: -len("-8.05,-34.9,school\n")].encode())}
    )
    assert up.status_code == 201, up.text
    assert up.json()["dataset"]["pois"] == 1000


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_deep_metadata_is_refused_before_decoding(client: httpx.Client) -> None:
    deep = '{"a": ' * 100_000 + "1" + "}" * 100_000
    response = client.post("/v1/documents", files={"file": ("a.txt", b"hello")}, data={"metadata": deep})
    message = error(response, 400, "invalid_metadata")
    assert f"more than {MAX_JSON_DEPTH} levels" in message


def test_deep_geojson_and_overpass_datasets_are_refused(client: httpx.Client) -> None:
    geojson = '{"type": "FeatureCollection", "features": ' + nested(200_000) + "}"
    overpass = '{"elements": ' + nested(200_000) + "}"
    for name, text in (("deep.geojson", geojson), ("deep.json", overpass)):
        response = client.post(
            "/v1/datasets", files={"file": (name, text.encode())}, data={"category": "school"}
        )
        assert f"more than {MAX_JSON_DEPTH} levels" in error(response, 422, "json_too_deep")


def test_a_deep_geojson_document_is_refused(client: httpx.Client) -> None:
    geometry = '{"type": "GeometryCollection", "geometries": [' * 400 + "]}" * 400  # json.loads reads it
    text = json.dumps({"type": "Feature", "properties": {}}).replace("{}", '{}, "geometry": ' + geometry, 1)
    response = client.post("/v1/documents", files={"file": ("deep.geojson", text.encode())})
    if response.status_code == 202:  # refused by the ingestion job, with the same sentence
        from tests.utils.api import wait_for_job

        job = wait_for_job(client, response.json()["job"])
        assert job["status"] == "failed" and f"more than {MAX_JSON_DEPTH} levels" in json.dumps(job)
    else:
        assert f"more than {MAX_JSON_DEPTH} levels" in error(response, 422, "corrupt_document")


def polygon_body(route: str, ring: list[list[float]]) -> dict:
    key = "query" if route == "/v1/search" else "question"
    return {key: "chuva em Recife", "geo": {"polygon": {"type": "Polygon", "coordinates": [ring]}}}


@pytest.mark.parametrize("route", ["/v1/search", "/v1/ask"])
def test_a_self_intersecting_polygon_filter_is_served_at_once(client: httpx.Client, route: str) -> None:
    """A bowtie polygon (its lobes cancel to 0 km2) was covered in 15 million H3 cells: the
    request ran a minute at 3 GB; a 20-degree one raised MemoryError."""
    for half in (1.0, 20.0):
        bowtie = [[-half, -half], [half, half], [half, -half], [-half, half], [-half, -half]]
        started = time.monotonic()
        response = client.post(route, json=polygon_body(route, bowtie), timeout=30)
        assert response.status_code == 200, response.text
        assert time.monotonic() - started < 10


def test_a_polygon_filter_over_the_vertex_cap_is_refused(client: httpx.Client) -> None:
    n = MAX_POLYGON_VERTICES + 1
    ring = [
        [-34.9 + 0.1 * math.cos(2 * math.pi * i / n), -8.05 + 0.1 * math.sin(2 * math.pi * i / n)]
        for i in range(n)
    ]
    message = error(
        client.post("/v1/search", json=polygon_body("/v1/search", ring + ring[:1])), 400, "bad_geo_filter"
    )
    assert f"{n + 1:,} vertices" in message and f"{MAX_POLYGON_VERTICES:,}" in message


def test_json_bodies_and_their_lists_are_bounded(client: httpx.Client) -> None:
    """6 MB of `"doc_ids": [1, 1, ...]` took 35 s and 4 GB to report three million
    validation errors (JSON bodies were held to the 100 MB upload limit)."""
    big = '{"query": "x", "doc_ids": [' + ",".join(["1"] * (MAX_JSON_BYTES // 2)) + "]}"
    headers = {"content-type": "application/json"}
    message = error(client.post("/v1/search", content=big, headers=headers), 413, "too_large")
    assert f"{MAX_JSON_BYTES:,} bytes" in message

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams in
        yield big.encode()

    assert client.post("/v1/ask", content=chunks(), headers=headers).status_code == 413
    for field, cap in (("doc_ids", MAX_DOC_IDS), ("kinds", MAX_KINDS)):
        many = {"question": "x", field: [1] * 100_000}
        message = error(client.post("/v1/ask", json=many), 422, "invalid_request")
        assert f"at most {cap} items" in message and message.count(";") == 0
    extra = {"query": "x", **{f"a{i}": 0 for i in range(1000)}}
    message = error(client.post("/v1/search", json=extra), 422, "invalid_request")
    assert message.count("Extra inputs") == MAX_PROBLEMS and "(and 990 more)" in message
    ok = client.post("/v1/search", json={"query": "x", "doc_ids": [f"d{i}" for i in range(MAX_DOC_IDS)]})
    assert ok.status_code == 200, ok.text


def test_lone_surrogates_are_refused_not_a_500(client: httpx.Client) -> None:
    """JSON's "\\ud800" decodes to a lone surrogate: as a doc_ids or kinds item it reached
    the store's filter (500, an SSE error event when streamed); in upload metadata it
    reached the job table (500)."""
    headers = {"content-type": "application/json"}
    for route, key in (("/v1/search", "query"), ("/v1/ask", "question")):
        for field in ("doc_ids", "kinds"):
            body = json.dumps({key: "x", field: ["\ud800"]})  # ensure_ascii: sent as "\\ud800"
            message = error(client.post(route, content=body, headers=headers), 422, "invalid_request")
            assert f"body.{field}.0" in message and "unicode" in message
    streamed = '{"question": "x", "doc_ids": ["\\udfff"], "stream": true}'
    assert client.post("/v1/ask", content=streamed, headers=headers).status_code == 422
    pdf = b"%PDF-1.4 not read: the metadata is refused first"
    response = client.post(
        "/v1/documents", files={"file": ("a.pdf", pdf)}, data={"metadata": '{"note": "\\ud800"}'}
    )
    assert "lone UTF-16 surrogate" in error(response, 400, "invalid_metadata")
    assert client.get("/v1/documents").json() == []


DEGENERATE_RINGS = [
    [[0.0, 0.0]] * 4,  # one point
    [[10.0, 5.0], [11.0, 5.0], [12.0, 5.0], [10.0, 5.0]],  # along a parallel
    [[5.0, 0.0], [5.0, 1.0], [5.0, 2.0], [5.0, 0.0]],  # along a meridian
    [[0.0, 89.0], [90.0, 89.0], [180.0, 89.0], [-90.0, 89.0], [0.0, 89.0]],  # round the pole, no height
]


def test_degenerate_polygons_are_served_and_indexed(client: httpx.Client) -> None:
    """h3 refuses a ring of no width or no height (H3FailedError): as a filter it answered
    500, as a GeoJSON document's feature it failed the ingestion job with an internal
    error. A self-intersecting feature (a bowtie) once took the job minutes and gigabytes."""
    for ring in DEGENERATE_RINGS:
        response = client.post("/v1/search", json=polygon_body("/v1/search", ring))
        assert response.status_code == 200, response.text
    half = 20.0
    bowtie = [[-half, -half], [half, half], [half, -half], [-half, half], [-half, -half]]
    features = [
        {
            "type": "Feature",
            "properties": {"name": f"shape {i}"},
            "geometry": {"type": "Polygon", "coordinates": [r]},
        }
        for i, r in enumerate([*DEGENERATE_RINGS, bowtie])
    ]
    geojson = json.dumps({"type": "FeatureCollection", "features": features}).encode()
    started = time.monotonic()
    document = ingest_via_api(client, "shapes.geojson", geojson)
    assert document["status"] == "ready" and time.monotonic() - started < 60


@pytest.mark.parametrize(("route", "key"), [("/v1/search", "query"), ("/v1/ask", "question")])
def test_a_question_without_words_is_refused(client: httpx.Client, route: str, key: str) -> None:
    """Blanks or control characters alone were answered from chart OCR noise."""
    for blank in (" ", "\u0000", "?!", "\t\n"):
        message = error(client.post(route, json={key: blank}), 422, "invalid_request")
        assert "no letter or digit" in message
    assert client.post(route, json={key: "chuva?"}).status_code == 200
