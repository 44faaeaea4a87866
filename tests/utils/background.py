"""A `carta` command run in its own process while the suite goes on: the corpus ingestion
(tests/e2e/test_corpus.py) takes minutes of one core's work, and most tests use one core
of two, so it is started once the tests are collected (tests/e2e/conftest.py) and the
tests that read its data dir wait for it at the end of the session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.utils.cli import CliRun

NICENESS = 10  # the suite's own tests come first; the command takes the idle core


class BackgroundCommand:
    """`python -m service.cli ARGS` on a fresh data dir, started at once at a lower priority;
    `wait()` gives its exit code and output. Its output goes to files, not pipes (nobody
    reads a pipe before the end, and a full one would block the command)."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="carta-background-"))
        self.data_dir = self.folder / "data"
        self._out = (self.folder / "stdout").open("w+")
        self._err = (self.folder / "stderr").open("w+")
        variables = {**os.environ, **(env or {}), "CARTA_DATA_DIR": str(self.data_dir)}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", *args],
            env=variables,
            stdout=self._out,
            stderr=self._err,
            text=True,
            preexec_fn=lambda: os.nice(NICENESS),
        )

    def wait(self, timeout_s: float) -> CliRun:
        """The command's result once it ended (killed after `timeout_s` more seconds)."""
        try:
            code = self._proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            code = self._proc.wait()
        self._out.seek(0)
        self._err.seek(0)
        return CliRun(code, self._out.read(), self._err.read())

    def close(self) -> None:
        """Stop the command if it still runs and remove its data dir."""
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._out.close()
        self._err.close()
        shutil.rmtree(self.folder, ignore_errors=True)
