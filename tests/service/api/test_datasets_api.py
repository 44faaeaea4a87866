"""Datasets with typed attributes through the HTTP API (issue 16): files without a category
column load, GET /v1/datasets/{id} lists their schema, analytical questions are answered
by the executed plan, and awkward files answer 2xx or a clear 4xx, never 5xx."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.conftest import corpus_path
from tests.utils.servers import LiveServer


@pytest.fixture
def client(serve: Callable[..., LiveServer]) -> Iterator[httpx.Client]:
    live = serve()
    with httpx.Client(base_url=live.url, timeout=120) as c:
        yield c


def upload(client: httpx.Client, name: str, data: bytes, **form: str) -> httpx.Response:
    return client.post("/v1/datasets", files={"file": (name, data)}, data=form)


def test_schema_endpoint_and_analytical_answers(client: httpx.Client) -> None:
    schools = corpus_path("poi", "recife_escolas_municipais.geojson").read_bytes()
    up = upload(client, "recife_escolas_municipais.geojson", schools)  # no category: from the file name
    assert up.status_code == 201, up.text
    dataset = up.json()["dataset"]
    detail = client.get(f"/v1/datasets/{dataset['id']}").json()
    assert detail["pois"] == 223 and detail["categories"] == {"school": 223} and detail["polygons"] == 0
    props = {p["name"]: p for p in detail["properties"]}
    assert props["IDEB"]["type"] == "number" and (props["IDEB"]["min"], props["IDEB"]["max"]) == (2.7, 6.1)
    assert props["RPA"]["count"] == 223 and props["Endereco"]["type"] == "string"

    body = client.post("/v1/ask", json={"question": "Qual escola tem o maior IDEB?"}).json()
    assert body["graph"]["plan"]["operation"] == "argmax" and not body["refused"]
    assert [r["name"] for r in body["graph"]["rows"]] == ["Escola Municipal Asa Branca"]
    assert "Escola Municipal Asa Branca (6,1)" in body["answer"]
    assert "recife_escolas_municipais.geojson" in body["answer"]  # the dataset is cited

    unknown = client.post("/v1/ask", json={"question": "Which school has the most students?"}).json()
    assert unknown["graph"]["unknown"]["kind"] == "attribute" and "IDEB" in unknown["answer"]
    # the word asked and the dataset whose attributes are listed are both named
    assert unknown["graph"]["unknown"]["name"] == "students" and "students" in unknown["answer"]
    assert "of recife_escolas_municipais.geojson: ID, IDEB, RPA" in unknown["answer"]


def test_aliases_name_a_property_for_questions(client: httpx.Client) -> None:
    tracts = corpus_path("poi", "olinda1_setores_censitarios.geojson").read_bytes()
    bad = upload(client, "olinda.geojson", tracts, aliases='{"POP": ["população"]}')
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "bad_aliases"
    assert "V014" in bad.json()["error"]["message"]
    malformed = upload(client, "olinda.geojson", tracts, aliases="[not json")
    assert malformed.status_code == 422 and malformed.json()["error"]["code"] == "bad_aliases"
    assert client.get("/v1/datasets").json() == []  # nothing stored by a refused upload

    up = upload(
        client, "olinda1_setores_censitarios.geojson", tracts, aliases='{"V014": "população, residents"}'
    )
    assert up.status_code == 201, up.text
    detail = client.get(f"/v1/datasets/{up.json()['dataset']['id']}").json()
    assert detail["aliases"] == {"V014": ["população", "residents"]} and detail["polygons"] == 470
    body = client.post("/v1/ask", json={"question": "Qual a população total de Olinda?"}).json()
    assert body["graph"]["plan"]["attribute"] == "V014" and body["graph"]["value"] == 377779
    assert "377.779" in body["answer"]


def test_awkward_geojson_answers_2xx_or_a_clear_4xx(client: httpx.Client) -> None:
    nested = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "id": {"odd": "id"},
                "geometry": {"type": "Point", "coordinates": [-34.9, -8.05, 3.0]},
                "properties": {"nome": "A", "info": {"nota": "5,4", "tags": [1, 2]}, "x": None},
            },
            {"type": "Feature", "geometry": None, "properties": {"nome": "sem geometria"}},
            {
                "type": "Feature",
                "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [2, 2], [2, 0], [0, 2], [0, 0]]]},
                "properties": {"nome": "gravata"},
            },
        ],
    }
    up = upload(client, "aninhado.geojson", json.dumps(nested).encode())
    assert up.status_code == 201, up.text
    assert up.json()["dataset"]["pois"] == 2 and up.json()["dataset"]["skipped"] == 1
    props = {
        p["name"]: p for p in client.get(f"/v1/datasets/{up.json()['dataset']['id']}").json()["properties"]
    }
    assert props["info.nota"]["type"] == "number" and props["info.tags"]["type"] == "json"

    projected = {
        "type": "FeatureCollection",
        "crs": {"type": "name", "properties": {"name": "EPSG:31985"}},
        "features": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [290000, 9110000]}}],
    }
    refused = upload(client, "utm.geojson", json.dumps(projected).encode())
    assert refused.status_code == 415 and "EPSG:31985" in refused.json()["error"]["message"]
    empty = upload(
        client, "vazio.geojson", json.dumps({"type": "FeatureCollection", "features": [None]}).encode()
    )
    assert empty.status_code == 422 and empty.json()["error"]["code"] == "empty_dataset"
    assert len(client.get("/v1/datasets").json()) == 1


def test_awkward_overpass_and_csv_answer_2xx_or_a_clear_4xx(client: httpx.Client) -> None:
    """Each of these answered 500: an Overpass element whose lat is "x" or whose tag value
    is a list, a CSV whose separator the sniffer cannot tell (a long quoted field), a CSV
    field over the csv module's limit and a CSV whose bytes after the first 4 KiB are not
    UTF-8 (now read as Windows-1252). Malformed elements are skipped and counted; unreadable
    files are a 415."""
    elements = [
        {"type": "node", "id": 1, "lat": "x", "lon": None, "tags": {"amenity": "cafe"}},
        {"type": "node", "id": 2, "lat": -8.05, "lon": -34.9, "tags": {"amenity": ["cafe"], "name": "A"}},
        {"type": "node", "id": 3, "lat": -8.05, "lon": -34.9, "tags": {"amenity": "cafe", "name": "Café"}},
        {"type": ["node"], "id": 4},
        "not an element",
        {
            "type": "way",
            "id": 5,
            "tags": {"highway": "primary"},
            "geometry": [{"lat": "a"}, 7, {"lat": 1, "lon": 2}, {"lat": 1.001, "lon": 2}],
        },
        {"type": "node", "lat": 1, "lon": 1, "tags": {"amenity": "cafe"}},
    ]
    up = upload(client, "odd.json", json.dumps({"elements": elements}).encode())
    assert up.status_code == 201, up.text
    assert up.json()["dataset"]["pois"] == 1 and up.json()["dataset"]["skipped"] == 4
    roads = client.get(f"/v1/datasets/{up.json()['dataset']['id']}/roads").json()
    assert roads["total"] == 1 and roads["features"][0]["geometry"]["coordinates"] == [
        [2.0, 1.0],
        [2.0, 1.001],
    ]
    not_a_list = upload(client, "odd2.json", b'{"elements": {"type": "node"}}')
    assert not_a_list.status_code == 415 and "elements" in not_a_list.json()["error"]["message"]

    long_quoted = b'name;lat;lon\n"' + b"a" * 5000 + b'";-8,05;-34,9\nB;-8,06;-34,91\n'
    up = upload(client, "longo.csv", long_quoted, category="school")
    assert up.status_code == 201, up.text
    assert up.json()["dataset"]["pois"] == 2
    too_long = b'name,lat,lon\n"' + b"a" * 200_000 + b'",-8.05,-34.9\n'
    refused = upload(client, "campo.csv", too_long, category="school")
    assert refused.status_code == 415 and "field limit" in refused.json()["error"]["message"]
    # a Latin-1/Windows-1252 CSV (its bytes after the first 4 KiB not UTF-8) is read as such
    latin1 = b"name,lat,lon\n" + b"Escola A,-8.05,-34.9\n" * 300 + "Escola Ñ,-8.06,-34.9\n".encode("latin-1")
    up = upload(client, "latin1.csv", latin1, category="school")
    assert up.status_code == 201 and up.json()["dataset"]["pois"] == 301, up.text
    junk = upload(client, "junk.csv", b"name,lat,lon\n" + bytes(range(1, 32)) * 400, category="school")
    assert junk.status_code == 415 and "not text" in junk.json()["error"]["message"]
    assert len(client.get("/v1/datasets").json()) == 3  # nothing stored by a refused upload


def test_roads_of_a_dataset_as_geojson_lines(client: httpx.Client) -> None:
    """An OSM extract's highways come back as LineStrings in [lon, lat] inside its bbox, for
    the map's roads layer; an unknown dataset is a 404."""
    osm = corpus_path("poi", "osmnx_planet_10.068,48.135_10.071,48.137.osm").read_bytes()
    up = upload(client, "planet.osm", osm)
    assert up.status_code == 201, up.text
    dataset = up.json()["dataset"]
    assert dataset["roads"] > 0
    body = client.get(f"/v1/datasets/{dataset['id']}/roads").json()
    assert body["type"] == "FeatureCollection" and body["total"] == dataset["roads"]
    assert len(body["features"]) == dataset["roads"] and body["truncated"] is False
    for feature in body["features"]:
        assert feature["geometry"]["type"] == "LineString" and feature["properties"]["id"].startswith("road:")
        for lon, lat in feature["geometry"]["coordinates"]:  # the file's bbox, with the ways' overhang
            assert 10.0 < lon < 10.2 and 48.1 < lat < 48.2
    missing = client.get("/v1/datasets/nope/roads")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_a_question_the_data_cannot_answer_is_answered_by_the_documents(client: httpx.Client) -> None:
    """With a dataset loaded, a count or ranking question about something the data does not
    hold ("pontos de alagamento") goes to the documents, which answer it with a citation;
    only when they cannot does the data's refusal, naming what it holds, come back."""
    from tests.service.api.test_graph_api import wait_for_document
    from tests.utils.documents import make_pdf

    schools = corpus_path("poi", "recife_escolas_municipais.geojson").read_bytes()
    assert upload(client, "recife_escolas_municipais.geojson", schools).status_code == 201
    bairros = corpus_path("poi", "recife_bairros.geojson").read_bytes()  # "na Várzea": a polygon of the data
    assert upload(client, "recife_bairros.geojson", bairros, category="bairro").status_code == 201
    report = make_pdf(
        [
            [
                "Boletim de drenagem do Recife, 2024.",
                "Foram registrados 19 pontos de alagamento na Várzea durante o ano de 2024.",
                "A limpeza dos canais removeu 41.200 metros cúbicos de material.",
            ]
        ],
        origin=(72, 72),
        line_step=24,
        fontsize=11,
    )
    up = client.post("/v1/documents", files={"file": ("boletim_drenagem.pdf", report, "application/pdf")})
    assert up.status_code in (201, 202), up.text
    doc_id = wait_for_document(client, up.json())

    question = "Quantos pontos de alagamento foram registrados na Várzea?"
    answer = client.post("/v1/ask", json={"question": question}).json()
    assert not answer["refused"], answer["answer"]
    assert "19" in answer["answer"] and doc_id in {c["doc_id"] for c in answer["citations"]}

    # neither the data nor the documents hold it: the data's refusal names the categories
    other = client.post("/v1/ask", json={"question": "Quantos hospitais veterinários há no Recife?"}).json()
    assert other["refused"] and "school" in other["answer"], other["answer"]


def test_malformed_osm_xml_is_a_clear_4xx_as_a_document_and_as_a_dataset(client: httpx.Client) -> None:
    """libosmium raises ValueError for an id like "x" and InvalidLocationError for a lat
    like "nan" (neither a RuntimeError), and a tagged <changeset> has no is_node: each
    answered 500 at upload, as a document and as a dataset."""
    head = b'<?xml version="1.0"?><osm version="0.6">'
    files = {
        "bad-id.osm": head + b'<node id="x" lat="1" lon="1"><tag k="amenity" v="cafe"/></node></osm>',
        "bad-lat.osm": head + b'<node id="1" lat="nan" lon="1"><tag k="amenity" v="cafe"/></node></osm>',
        "changeset.osm": head + b'<changeset id="1"><tag k="amenity" v="cafe"/></changeset></osm>',
    }
    for name, data in files.items():
        as_document = client.post("/v1/documents", files={"file": (name, data)})
        assert as_document.status_code == 422, (name, as_document.text)
        assert as_document.json()["error"]["code"] == "corrupt_document"
        as_dataset = upload(client, name, data)
        assert as_dataset.status_code in (415, 422), (name, as_dataset.text)
    assert client.get("/v1/documents").json() == [] and client.get("/v1/datasets").json() == []


def test_geojson_features_shapely_refuses_are_skipped(client: httpx.Client) -> None:
    """shapely raises GeometryTypeError for an unknown geometry type and EmptyPartError for
    a MultiPoint with an empty part; neither is a GEOSException, so each answered 500."""
    features = [
        {
            "type": "Feature",
            "properties": {"name": "bogus"},
            "geometry": {"type": "Bogus", "coordinates": [1, 2]},
        },
        {
            "type": "Feature",
            "properties": {"name": "empty part"},
            "geometry": {"type": "MultiPoint", "coordinates": [[]]},
        },
        {
            "type": "Feature",
            "properties": {"name": "ok"},
            "geometry": {"type": "Point", "coordinates": [-34.9, -8.05]},
        },
    ]
    up = upload(
        client, "shapes.geojson", json.dumps({"type": "FeatureCollection", "features": features}).encode()
    )
    assert up.status_code == 201, up.text
    assert up.json()["dataset"]["pois"] == 1 and up.json()["dataset"]["skipped"] == 2


def test_a_csv_too_wide_is_refused_with_413(client: httpx.Client) -> None:
    """200 rows x 20,000 columns (8 MB) took 36 s and 420 MB of the upload request."""
    from graph.sources import MAX_CSV_COLUMNS

    header = "name,lat,lon," + ",".join(f"c{i}" for i in range(MAX_CSV_COLUMNS))
    row = "A,-8.05,-34.9," + ",".join("1" for _ in range(MAX_CSV_COLUMNS))
    refused = upload(client, "wide.csv", f"{header}\n{row}\n".encode(), category="school")
    assert refused.status_code == 413, refused.text
    assert (
        refused.json()["error"]["code"] == "too_many_pois" and "columns" in refused.json()["error"]["message"]
    )
    assert client.get("/v1/datasets").json() == []
