"""The browser the web tests drive: one headless Chromium for the whole session (starting one
costs seconds), handed to each test with its logs drained and its window at the wide size, so
that no test sees another's console errors, network requests or window size. And the corpus
ingestion of test_corpus.py, started in the background once the tests are collected, its
tests moved to the end of the session so that the rest of the suite runs beside it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import CORPUS
from tests.utils.background import BackgroundCommand

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
WIDE = 1440  # px: the desktop window every test starts at
CORPUS_TESTS = "test_corpus.py"
_corpus_ingest: list[BackgroundCommand] = []


@pytest.hookimpl(trylast=True)  # after -k and -m deselected theirs: these are the tests that run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """When the corpus tests are among those to run, put them last and start their ingestion
    now: 14 PDFs through `carta ingest` in its own process, beside the rest of the suite
    (no sentence vectors, a fifth of the time: only /v1/ask's extractive gate reads them,
    and these tests search; tests/service/answer checks the vectors. No OCR of pictures on
    text pages either: these tests search the text layer's facts, and the pictures cost a
    quarter more ingestion; tests/ingest/test_figure_text.py checks them)."""
    corpus = [item for item in items if item.path.name == CORPUS_TESTS]
    if not corpus or config.option.collectonly or not (CORPUS / "pdf").is_dir():
        return
    items[:] = [item for item in items if item.path.name != CORPUS_TESTS] + corpus
    env = {"CARTA_SENTENCE_VECTORS": "false", "CARTA_FIGURE_TEXT": "false"}
    _corpus_ingest.append(BackgroundCommand("ingest", str(CORPUS / "pdf"), "--json", env=env))


def pytest_unconfigure(config: pytest.Config) -> None:
    while _corpus_ingest:
        _corpus_ingest.pop().close()


@pytest.fixture(scope="session")
def corpus_ingest() -> BackgroundCommand:
    """The corpus ingestion started at collection (skipped when the corpus is absent)."""
    if not _corpus_ingest:
        pytest.skip(f"shared corpus not found at {CORPUS / 'pdf'} (set CARTA_CORPUS_DIR)")
    return _corpus_ingest[0]


@pytest.fixture(scope="session")
def _chromium() -> Iterator[Any]:
    """Chromium with its console and performance logs on (the performance log lists every
    network request the page makes)."""
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("Debian chromium and chromium-driver are not installed (see scripts/install.sh)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is missing: install '.[dev]'")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="carta-chromium-")
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--window-size={WIDE},1000",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(CHROMEDRIVER))
    driver.set_script_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def browser(_chromium: Any) -> Any:
    """The session's Chromium on a blank page, its logs drained (reading a log empties it),
    its window at 1440 x 1000."""
    _chromium.get("about:blank")
    for log in ("browser", "performance"):
        _chromium.get_log(log)
    _chromium.set_window_size(WIDE, 1000)
    return _chromium
