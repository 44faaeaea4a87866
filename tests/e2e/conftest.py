"""The browser the web tests drive: one headless Chromium for the whole session (starting one
costs seconds), handed to each test with its logs drained and its window at the wide size, so
that no test sees another's console errors, network requests or window size."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
WIDE = 1440  # px: the desktop window every test starts at


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
