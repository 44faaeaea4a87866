"""`carta poi fetch`: POIs from an Overpass server (a loopback one here) become a dataset,
and the cached answer makes a second run offline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.cli.main import app
from tests.utils.servers import ScriptedHTTPServer

ANSWER = {
    "elements": [
        {"type": "node", "id": 11, "lat": -8.05, "lon": -34.90, "tags": {"amenity": "recycling"}},
        {"type": "node", "id": 12, "lat": -8.051, "lon": -34.901, "tags": {"amenity": "recycling"}},
        {"type": "way", "id": 13, "center": {"lat": -8.052, "lon": -34.902}, "tags": {"leisure": "park"}},
    ]
}


@pytest.fixture
def overpass() -> Iterator[tuple[str, list[str]]]:
    with ScriptedHTTPServer(lambda _: (200, json.dumps(ANSWER).encode()), path="/api/interpreter") as http:
        yield http.url, http.requests


def test_fetch_loads_a_dataset_and_reruns_offline(overpass: tuple[str, list[str]], tmp_path: Path) -> None:
    url, queries = overpass
    env = {"CARTA_DATA_DIR": str(tmp_path / "data"), "CARTA_OVERPASS_URL": url, "CARTA_GEOTAG": "false"}
    runner = CliRunner()
    args = ["poi", "fetch", "--near", "-8.05,-34.90", "--radius", "500", "--tag", "amenity=recycling"]
    first = runner.invoke(app, [*args, "--tag", "leisure=park", "--json"], env=env)
    assert first.exit_code == 0, first.output
    body = json.loads(first.stdout)
    assert body["created"] and body["dataset"]["pois"] == 3
    assert len(queries) == 1 and "around%3A500" in queries[0] and "recycling" in queries[0]
    again = runner.invoke(app, [*args, "--tag", "leisure=park", "--json"], env=env)
    assert again.exit_code == 0 and json.loads(again.stdout)["created"] is False
    assert len(queries) == 1  # answered from the cache in the data dir
    listed = json.loads(runner.invoke(app, ["poi", "list", "--json"], env=env).stdout)
    assert [d["pois"] for d in listed] == [3]


def test_fetch_refuses_bad_tags_and_coordinates(tmp_path: Path) -> None:
    env = {"CARTA_DATA_DIR": str(tmp_path / "data"), "CARTA_OVERPASS_URL": "http://127.0.0.1:9/x"}
    runner = CliRunner()
    bad_tag = runner.invoke(app, ["poi", "fetch", "--near", "-8.05,-34.9", "--tag", "amenity"], env=env)
    assert bad_tag.exit_code == 2 and "key=value" in bad_tag.output
    bad_point = runner.invoke(app, ["poi", "fetch", "--near", "95,10", "--tag", "amenity=school"], env=env)
    assert bad_point.exit_code == 2 and "not a valid" in bad_point.output
