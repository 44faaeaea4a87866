"""The geocoding evaluation: the labelled set is big and varied enough, the script's report
is internally consistent (tp/fp/fn add up across languages, sources and thresholds), and
every coordinate written in a passage is read exactly. No quality bar on place names: the
numbers are for the report, not a gate that every tagger change must pass."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest

from geo.distance import haversine_km
from tests.conftest import CORPUS, REPO
from tests.utils.scripts import load_script

MENTIONS = REPO / "eval" / "geocoding" / "mentions.yaml"
METRICS = ("precision", "recall", "f1")


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script("eval_geocoding")


@pytest.fixture(scope="module")
def report(script: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The script's JSON report. Without the shared corpus the passages that need its user
    gazetteer (recife_bairros) are skipped by the script and listed in the summary."""
    out = tmp_path_factory.mktemp("geocoding") / "results.json"
    assert script.main(["--out", str(out), "--corpus", str(CORPUS), "--quiet"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def _check(m: dict[str, Any]) -> None:
    assert all(0.0 <= m[k] <= 1.0 for k in METRICS), m
    assert min(m["tp"], m["fp"], m["fn"]) >= 0, m
    p = m["tp"] / (m["tp"] + m["fp"]) if m["tp"] + m["fp"] else 0.0
    r = m["tp"] / (m["tp"] + m["fn"]) if m["tp"] + m["fn"] else 0.0
    assert m["precision"] == pytest.approx(p, abs=1e-4)
    assert m["recall"] == pytest.approx(r, abs=1e-4)
    assert m["f1"] == pytest.approx(2 * p * r / (p + r) if p + r else 0.0, abs=1e-3)


def test_labelled_set_is_large_and_bilingual(script: ModuleType) -> None:
    passages = script.load_passages(MENTIONS)
    assert len(passages) >= 25
    by_lang = {lang: [p for p in passages if p.language == lang] for lang in ("pt", "en")}
    assert all(len(ps) >= 10 for ps in by_lang.values()), {k: len(v) for k, v in by_lang.items()}
    places = [lab for p in passages for lab in p.labels if lab.type == "place"]
    coords = [lab for p in passages for lab in p.labels if lab.type == "coordinate"]
    assert len(places) >= 60
    assert all(sum(lab.type == "place" for p in ps for lab in p.labels) >= 25 for ps in by_lang.values())
    assert len(coords) >= 5
    assert {lab.kind for lab in places} >= {"city", "neighbourhood", "region"}
    assert all(lab.tolerance_km > 0 for lab in places + coords)
    # ambiguous names on purpose: the same written name labelled at places far apart
    spots: dict[str, list[tuple[float, float]]] = {}
    for lab in places:
        spots.setdefault(lab.text, []).append((lab.lat, lab.lon))
    ambiguous = [n for n, pts in spots.items() if max(haversine_km(*a, *b) for a in pts for b in pts) > 100]
    assert len(ambiguous) >= 6, ambiguous


def test_report_counts_add_up(report: dict[str, Any]) -> None:
    summary = report["summary"]
    labels = summary["place_mentions"] + summary["coordinates"]
    overall = report["overall"]
    for m in (
        overall,
        *report["by_language"].values(),
        *report["by_source"].values(),
        *report["by_threshold"].values(),
    ):
        _check(m)
    assert overall["tp"] + overall["fn"] == labels
    assert overall["tp"] + overall["fp"] == summary["predictions"]
    assert len(report["false_positives"]) == overall["fp"]
    assert len(report["misses"]) == overall["fn"]
    # languages partition the passages: their counts sum to the overall ones
    for k in ("tp", "fp", "fn"):
        assert sum(m[k] for m in report["by_language"].values()) == overall[k]
    # sources partition predictions and labels (name tags vs written coordinates)
    gaz, coord = report["by_source"]["gazetteer"], report["by_source"]["text-coordinate"]
    assert gaz["tp"] + gaz["fn"] == summary["place_mentions"]
    assert coord["tp"] + coord["fn"] == summary["coordinates"]
    assert gaz["tp"] + gaz["fp"] + coord["tp"] + coord["fp"] == summary["predictions"]
    # a higher cut keeps a subset of the predictions; the label count never changes
    rows = [report["by_threshold"][k] for k in sorted(report["by_threshold"], key=float)]
    assert all(m["tp"] + m["fn"] == labels for m in rows)
    kept = [m["tp"] + m["fp"] for m in rows]
    assert kept == sorted(kept, reverse=True)
    assert report["by_threshold"]["0.50"] == overall  # 0.5 is the tagger's own cut
    assert sum(k["labels"] for k in report["recall_by_kind"].values()) == labels


def test_written_coordinates_are_all_read_exactly(report: dict[str, Any]) -> None:
    coord = report["by_source"]["text-coordinate"]
    assert report["summary"]["coordinates"] >= 5
    assert coord["fn"] == 0, [m for m in report["misses"] if m["kind"] == "coordinate"]
    assert coord["fp"] == 0, [f for f in report["false_positives"] if f["source"] == "text-coordinate"]
    assert report["recall_by_kind"]["coordinate"]["recall"] == 1.0


def test_user_gazetteer_passages_evaluated(report: dict[str, Any], script: ModuleType) -> None:
    path = CORPUS / script.USER_GAZETTEERS["recife_bairros"]
    if not path.exists():
        pytest.skip(
            f"shared corpus file {path} not found (set CARTA_CORPUS_DIR): recife_bairros passages skipped"
        )
    assert report["summary"]["skipped_passages"] == []
    assert report["summary"]["passages"] == len(script.load_passages(MENTIONS))
    assert report["recall_by_kind"]["neighbourhood"]["labels"] >= 10


def test_country_tag_at_capital_pairs_with_the_country_label(script: ModuleType) -> None:
    """A country tag sits at its capital; it must not take the capital's label."""
    from ingest.geotagging import GeoTag

    lima = script.Label("Lima", -12.0432, -77.0282, 25.0, "city")
    peru = script.Label("Peru", -9.2, -75.0, 900.0, "region")
    country = GeoTag(-12.0432, -77.0282, "gazetteer", "Peru", 0.9, place_id="p", kind="country")
    assert script.match([country], [lima, peru]) == [(0, 1, pytest.approx(386.1, abs=1))]
    city = GeoTag(-12.05, -77.03, "gazetteer", "Lima", 0.9, place_id="l", kind="city")
    pairs = script.match([country, city], [lima, peru])
    assert sorted((pi, li) for pi, li, _ in pairs) == [(0, 1), (1, 0)]
