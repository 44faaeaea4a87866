"""scripts/geodata_truth.py: independent of Carta (no Carta package imported) and right on
values MANIFEST.tsv states (Olinda V014 sum, Recife's best IDEB, Helsinki's pharmacies), and
eval/questions/geodata.yaml is what it writes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, corpus_path
from tests.utils.scripts import load_script

SCRIPT = REPO / "scripts" / "geodata_truth.py"
CARTA_PACKAGES = {"service", "ingest", "index", "geo", "graph", "models", "scripts", "tests"}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom):  # a relative import is Carta's own code
            names.add(".")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            names.add("__import__")
    return names


def test_the_truth_script_imports_no_carta_code() -> None:
    names = imported_packages(SCRIPT)
    assert not names & (CARTA_PACKAGES | {".", "__import__"}), names
    assert {"osmium", "shapely", "json", "csv"} <= names
    assert "sys.path" not in SCRIPT.read_text(encoding="utf-8")  # no back door to the repo's packages


def test_the_import_check_catches_carta_imports(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import json\nfrom graph.sources import read_osm\nimport service.carta as c\n")
    assert {"graph", "service"} <= imported_packages(bad)


@pytest.fixture(scope="module")
def truth() -> dict[str, dict]:
    corpus = corpus_path("poi").parent
    return {q["id"]: q for q in load_script("geodata_truth").build_questions(corpus)}


def test_reproduces_the_manifest_values(truth: dict[str, dict]) -> None:
    assert truth["geo-oli-sum-v014"]["facts"] == [{"number": 377779, "tolerance": 0.0}]
    assert truth["geo-rec-max-ideb-pt"]["facts"] == [
        "Escola Municipal Asa Branca",
        {"number": 6.1, "tolerance": 0.001},
    ]
    # MANIFEST.tsv counts tagged nodes (GDAL points layer); amenity=pharmacy has no ways
    assert truth["geo-hel-count-pharmacy"]["facts"] == [{"number": 6, "tolerance": 0.0}]
    assert "Yliopiston apteekki" in truth["geo-hel-list-pharmacy"]["rows"]
    assert truth["geo-poa-hex-sum-population-en"]["facts"][0]["number"] == 812935
    assert truth["geo-rec-groupby-rpa-max"]["facts"] == ["RPA 6", {"number": 66, "tolerance": 0.0}]
    assert truth["geo-oli-groupby-max"]["facts"] == ["Rio Doce", {"number": 41635, "tolerance": 0.0}]


def test_the_committed_set_is_the_scripts_output(truth: dict[str, dict]) -> None:
    committed = yaml.safe_load((REPO / "eval" / "questions" / "geodata.yaml").read_text(encoding="utf-8"))
    assert {q["id"]: q for q in committed} == truth
