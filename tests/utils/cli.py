"""The `carta` command run in the test process (typer's CliRunner on the same app that
`python -m service.cli` runs): the same arguments, environment, exit code, stdout and stderr
as a subprocess, without a fresh interpreter importing torch and loading the model for each
command (seconds apiece). tests/e2e/test_cli_and_server.py keeps real processes where the
process is the point (the entry point, `carta serve`, kill -9)."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from service.cli.main import app


@dataclass(frozen=True)
class CliRun:
    """What a finished command left: its exit code and its two output streams."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(
    *args: str,
    data_dir: Path,
    check: bool = True,
    api_key: str | None = None,
    env: dict[str, str] | None = None,
) -> CliRun:
    """`carta ARGS` on `data_dir` (CARTA_DATA_DIR), with CARTA_API_KEY when given and any
    other CARTA_* variables in `env`; with `check`, anything but exit code 0 fails the test,
    showing stderr (and any crash)."""
    variables = {**(env or {}), "CARTA_DATA_DIR": str(data_dir), "CARTA_API_KEY": api_key}
    result = CliRunner().invoke(app, list(args), env=variables)
    crash = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        crash = "".join(traceback.format_exception(result.exception))
    run = CliRun(result.exit_code, result.stdout, result.stderr + crash)
    if check:
        assert run.returncode == 0, run.stderr[-2000:]
    return run
