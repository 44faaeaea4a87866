"""The map, the offline API docs and the accessibility of every screen, in a real headless
Chromium against a real Carta over HTTP: no request leaves the machine (the UI, /docs and
/redoc), a georeferenced map image is drawn on its footprint to the pixel, a Helsinki graph
answer fits the map on Helsinki with one colour per category, and axe-core finds no serious
or critical violation. Screenshots at 1440 and 390 px go to docs/screenshots/."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from pyproj import Transformer

from models.text_encoder import TextEncoder
from service.api.routes.ui import VENDOR
from service.carta import Carta
from tests.conftest import REPO, corpus_path, settings_for
from tests.e2e.test_web_ui import CHROMEDRIVER, CHROMIUM, open_ui, wait, webdriver
from tests.utils.servers import LiveServer

from selenium.webdriver.common.by import By  # noqa: E402  (after the skip of test_web_ui)

if not (VENDOR / ".pins").is_file():
    pytest.skip("the web UI's vendored assets are missing: bash scripts/vendor_ui.sh", allow_module_level=True)

SCREENSHOTS = REPO / "docs" / "screenshots"
WIDE, PHONE = 1440, 390
RASTER = ("raster", "olinda_L7_truecolor")
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


@pytest.fixture(scope="module")
def chrome() -> Iterator[Any]:
    """Chromium with its performance log on: every network request the page makes is in it."""
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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, text_encoder: TextEncoder) -> Iterator[LiveServer]:
    carta = Carta(settings_for(tmp_path_factory.mktemp("webmap-data")), text_encoder=text_encoder)
    with LiveServer(carta) as live:
        yield live
    carta.close()


def requested_urls(driver: Any) -> list[str]:
    """The URLs of the requests made since the last call (the log is drained by reading)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def off_machine(urls: list[str]) -> list[str]:
    return [u for u in urls if urlsplit(u).scheme not in {"data", "blob"} and urlsplit(u).hostname not in LOOPBACK]


def axe_violations(driver: Any) -> list[str]:
    """Serious and critical axe-core violations of the page as it is now."""
    result = driver.execute_async_script(
        """const done = arguments[arguments.length - 1];
        const run = () => axe.run(document, {resultTypes: ['violations']})
          .then((r) => done(r.violations.filter((v) => ['serious', 'critical'].includes(v.impact))
            .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`)))
          .catch((e) => done(['axe failed: ' + e]));
        if (window.axe) run();
        else { const s = document.createElement('script'); s.src = '/ui/vendor/axe/axe.min.js';
               s.onload = run; s.onerror = () => done(['axe-core did not load']); document.head.append(s); }"""
    )
    return result


def screenshot(driver: Any, name: str) -> None:
    """The current screen at 1440 and 390 px (the viewport, not the whole page: small PNGs)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in (WIDE, PHONE):
        driver.set_window_size(width, 900)
        driver.save_screenshot(str(SCREENSHOTS / f"{name}-{width}.png"))
    driver.set_window_size(WIDE, 1000)


def world_file_corners() -> dict[str, tuple[float, float]]:
    """The Olinda PNG's corner (lat, lon)s from its world file and .prj, independently of Carta."""
    a, d, b, e, c, f = (float(v) for v in corpus_path(*RASTER[:1], RASTER[1] + ".pgw").read_text().split())
    prj = corpus_path(*RASTER[:1], RASTER[1] + ".prj").read_text()
    to_wgs84 = Transformer.from_crs(prj, "EPSG:4326", always_xy=True)
    width, height = 349, 352
    corners = {}
    for name, (col, row) in {"ul": (0, 0), "ur": (width, 0), "ll": (0, height), "lr": (width, height)}.items():
        # a world file's C/F are the centre of the upper-left pixel: corners are half a pixel out
        x = c + a * (col - 0.5) + b * (row - 0.5)
        y = f + d * (col - 0.5) + e * (row - 0.5)
        lon, lat = to_wgs84.transform(x, y)
        corners[name] = (lat, lon)
    return corners


def test_olinda_map_image_on_its_footprint_offline(chrome: Any, server: LiveServer) -> None:
    """The PNG dropped with its .pgw and .prj is one upload; the map draws it on its footprint,
    each corner within 1 px of where the world file puts it; nothing is fetched from outside."""
    requested_urls(chrome)
    open_ui(chrome, server.url)
    assert css(chrome, "#map").get_attribute("data-basemap") == "ready"
    png = corpus_path(*RASTER[:1], RASTER[1] + ".png")
    css(chrome, "#file-input").send_keys("\n".join(str(png.with_suffix(s)) for s in (".png", ".pgw", ".prj")))
    row = f'#uploads li[data-name="{png.name}"]'
    settled = lambda d: css(d, row).get_attribute("data-state") in {"ready", "failed"}  # noqa: E731
    wait(chrome, settled, 180, "the map image's upload")
    assert css(chrome, row).get_attribute("data-state") == "ready", css(chrome, row).text
    assert len(chrome.find_elements(By.CSS_SELECTOR, "#uploads li")) == 1  # one upload, not three
    wait(chrome, lambda d: css(d, "#map").get_attribute("data-rasters") == "1", 30, "the raster overlay")
    (doc,) = httpx.get(f"{server.url}/v1/documents").json()
    click_show_on_map(chrome, doc["id"])
    placed = "return document.querySelector('#map img.raster-overlay')?.dataset.placed === 'true'"
    wait(chrome, lambda d: d.execute_script(placed), 30, "the overlay to be placed")
    expected = world_file_corners()
    drawn = chrome.execute_script(
        """const map = window.cartaMap, img = document.querySelector('#map img.raster-overlay');
        const m = new DOMMatrixReadOnly(getComputedStyle(img).transform);
        const pane = L.DomUtil.getPosition(map.getPane('mapPane'));
        const w = img.naturalWidth, h = img.naturalHeight;
        const at = (x, y) => { const p = m.transformPoint(new DOMPoint(x, y)); return [p.x + pane.x, p.y + pane.y]; };
        const want = (ll) => { const p = map.latLngToContainerPoint(ll); return [p.x, p.y]; };
        const box = img.getBoundingClientRect(), frame = map.getContainer().getBoundingClientRect();
        return {zoom: map.getZoom(), size: [w, h],
                drawn: {ul: at(0, 0), ur: at(w, 0), ll: at(0, h), lr: at(w, h)},
                want: Object.fromEntries(Object.entries(arguments[0]).map(([k, v]) => [k, want(v)])),
                box: [box.left - frame.left, box.top - frame.top, box.right - frame.left, box.bottom - frame.top]};""",
        expected,
    )
    assert drawn["size"] == [349, 352] and drawn["zoom"] >= 12, drawn
    for corner in ("ul", "ur", "ll", "lr"):
        (x, y), (wx, wy) = drawn["drawn"][corner], drawn["want"][corner]
        assert abs(x - wx) <= 1 and abs(y - wy) <= 1, (corner, drawn)
    # the browser's own layout of the transformed image: its bounding box is the corners' box
    xs = [p[0] for p in drawn["want"].values()]
    ys = [p[1] for p in drawn["want"].values()]
    assert all(abs(a - b) <= 1 for a, b in zip(drawn["box"], [min(xs), min(ys), max(xs), max(ys)], strict=True))
    # the opacity control
    chrome.execute_script(
        "const r = document.querySelector('#raster-opacity'); r.value = '0.3'; r.dispatchEvent(new Event('input'))"
    )
    assert css(chrome, "#map img.raster-overlay").value_of_css_property("opacity") == "0.3"
    assert axe_violations(chrome) == []
    screenshot(chrome, "map-raster-overlay")
    assert off_machine(requested_urls(chrome)) == []


def click_show_on_map(driver: Any, doc_id: str) -> None:
    button = f'#doc-table tr[data-doc-id="{doc_id}"] button.link-button'
    wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, button).is_displayed(), 20, "Show on map")
    driver.execute_script("document.querySelector(arguments[0]).click()", button)


def css(driver: Any, selector: str) -> Any:
    return driver.find_element(By.CSS_SELECTOR, selector)


def test_api_docs_are_offline(chrome: Any, server: LiveServer) -> None:
    """/docs (Swagger UI) and /redoc render the schema from vendored files only."""
    requested_urls(chrome)
    chrome.get(f"{server.url}/docs")
    wait(chrome, lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .opblock"), 60, "Swagger UI")
    urls = requested_urls(chrome)
    assert any(u.endswith("/ui/vendor/swagger-ui/swagger-ui-bundle.js") for u in urls)
    assert off_machine(urls) == []
    chrome.get(f"{server.url}/redoc")
    wait(chrome, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-section-id]"), 60, "ReDoc")
    urls = requested_urls(chrome)
    assert any(u.endswith("/ui/vendor/redoc/redoc.standalone.js") for u in urls)
    assert off_machine(urls) == []
    html = httpx.get(f"{server.url}/docs").text + httpx.get(f"{server.url}/redoc").text
    assert "cdn.jsdelivr" not in html and "fonts.googleapis" not in html and "tiangolo" not in html
