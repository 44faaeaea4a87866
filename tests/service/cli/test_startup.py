"""Start-up: commands that need no model load none, and a local search loads the text
model's weights only, without torch. Each case runs the real `carta` commands in a fresh
interpreter and reports which heavy modules it imported (sys.modules)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.utils.servers import free_port

HEAVY = ("torch", "transformers", "sentence_transformers", "open_clip", "colpali_engine", "openai", "pymupdf")
WEIGHTS = "safetensors.numpy"  # imported when the text model's weights load

# Runs each argv as `carta` would (exit codes collected), then prints what was imported.
RUNNER = """
import json, sys
from service.cli.main import app
codes = []
for argv in json.loads(sys.argv[1]):
    try:
        app(argv, prog_name="carta")
    except SystemExit as exc:
        codes.append(exc.code or 0)
heavy = sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules)
print(json.dumps({"codes": codes, "heavy": heavy}), file=sys.stderr)
"""


def run_commands(data_dir: Path, *commands: list[str]) -> dict:
    env = {**os.environ, "CARTA_DATA_DIR": str(data_dir), "CARTA_SERVER": ""}
    run = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(commands), json.dumps([*HEAVY, WEIGHTS])],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stderr.strip().splitlines()[-1])


def test_commands_that_need_no_model_import_none(tmp_path: Path) -> None:
    unreachable = f"http://127.0.0.1:{free_port()}"
    report = run_commands(
        tmp_path / "data",
        ["list", "--json"],
        ["keys", "list", "--json"],
        ["delete", "no-such-doc"],
        ["list", "--server", unreachable],
        ["search", "enchentes", "--server", unreachable],
    )
    assert report["codes"] == [0, 0, 1, 1, 1]  # the missing document and the dead server fail cleanly
    assert report["heavy"] == []


def test_a_local_search_runs_without_torch(tmp_path: Path) -> None:
    report = run_commands(tmp_path / "data", ["search", "enchentes no Recife", "--json"])
    assert report == {"codes": [0], "heavy": [WEIGHTS]}  # the weights loaded, on NumPy
