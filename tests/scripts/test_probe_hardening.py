"""scripts/probe_hardening.py: its inputs are the issue's, and against a live `carta serve`
the quick probes of issue 14 all pass (no 5xx, each answer as specified) and the run prints
its table and JSON. The slow ones (big pages, concurrent OCR, big CSV) run in the full
`python scripts/probe_hardening.py`; the OCR and page-size fixes have their own tests in
tests/ingest/."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import h3
import pymupdf
import pytest

from tests.utils.scripts import load_script

QUICK_PROBES = [  # in the script's order: wrong_keys_300 throttles the address, so it runs last
    "h3_bomb",
    "invalid_h3_search",
    "invalid_h3_ask",
    "invalid_h3_ui",
    "nested_metadata_100k",
    "nested_geojson_200k",
    "csv_one_point_3k",
    "pdf_flate_bomb_300mb",
    "pdf_form_bomb_10m_ops",
    "graph_answer_acl",
    "duplicate_hidden_upload",
    "concurrent_uploads_3_keys",
    "groups_public_refused",
    "request_id_collision",
    "plain_deletes_admin_doc",
    "forged_citation",
    "wrong_keys_300",
]


@pytest.fixture(scope="module")
def probe() -> ModuleType:
    return load_script("probe_hardening")


def test_the_h3_bomb_is_the_issues_request(probe: ModuleType) -> None:
    cells = probe.h3_bomb()
    assert len(cells) == len(set(cells)) == 500
    resolutions = [h3.get_resolution(c) for c in cells]
    assert resolutions.count(0) == 122 and resolutions.count(2) == 378


def test_generated_inputs_have_the_issues_shapes(probe: ModuleType) -> None:
    with pymupdf.open(stream=probe.blank_pdf(14400, 14400)) as doc:
        assert len(doc) == 1 and tuple(doc[0].rect)[2:] == (14400, 14400) and not doc[0].get_text().strip()
    with pymupdf.open(stream=probe.scanned_pdf("Scanned probe sheet")) as doc:
        assert not doc[0].get_text().strip() and doc[0].get_images()  # a picture only: OCR needed
    assert probe.nested_json(3) == '{"a":{"a":{"a":1}}}' and len(probe.nested_json(100_000)) == 600_001


def test_every_probe_of_the_issue_is_listed_and_the_big_csv_only_with_big(
    probe: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert probe.main(["--list"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    for must in (
        "h3_bomb",
        "invalid_h3_search",
        "invalid_h3_ask",
        "invalid_h3_ui",
        "nested_metadata_100k",
        "nested_geojson_200k",
        "blank_pdf_3000pt",
        "blank_pdf_14400pt",
        "concurrent_ocr_4x2",
        "wrong_keys_300",
        "graph_answer_acl",
        "duplicate_hidden_upload",
        "concurrent_uploads_3_keys",
        "groups_public_refused",
        "request_id_collision",
        "plain_deletes_admin_doc",
        "forged_citation",
        "pdf_flate_bomb_300mb",
        "pdf_form_bomb_10m_ops",
    ):
        assert must in names, must
    assert "csv_one_point_200k" not in names
    assert probe.main(["--list", "--big"]) == 0 and "csv_one_point_200k" in capsys.readouterr().out


def test_a_failed_probe_is_a_row_and_the_table_says_so(
    probe: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        probe.Result("a", "400", "400 ok", ok=True),
        probe.Result("b", "400", "500 boom", server_error=True),
    ]
    probe.print_table(rows, 1234.5)
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["probe", "expected", "got", "ok"]
    assert out[1].split()[-1] == "ok" and out[2].split()[-1] == "FAIL"
    assert out[-1] == "probes: 2, ok: 1, failed: 1, 5xx or dead server: 1, server peak RSS: 1234 MB"


@pytest.mark.slow  # starts a real `carta serve` (model load), about 1-2 minutes
def test_against_a_live_server_every_quick_probe_passes(
    probe: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "probe.json"
    code = probe.main(["--probes", ",".join(QUICK_PROBES), "--out", str(out)])
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == ["probe", "expected", "got", "ok"]
    report = json.loads(out.read_text(encoding="utf-8"))
    rows = {r["probe"]: r for r in report["results"]}
    assert set(rows) == set(QUICK_PROBES) and report["peak_rss_mb"] > 0
    for name in QUICK_PROBES:
        assert rows[name]["ok"] and not rows[name]["server_error"], rows[name]
        assert f"{name} " in table
    assert code == 0
