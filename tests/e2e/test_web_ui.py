"""The web UI in a real headless Chromium (Debian chromium + chromedriver, driven by
selenium) against a real Carta over HTTP: upload, wait for ready, ask, open the cited page,
filter by an area drawn on the map, delete. Screenshots of each screen at 1440 and 390 px
go to $CARTA_UI_SCREENSHOTS (default tests/artifacts/ui/)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import h3
import httpx
import pytest
from PIL import Image
from shapely.geometry import Point, Polygon

from models.text_encoder import TextEncoder
from service.carta import Carta
from tests.conftest import REPO, corpus_path, settings_for
from tests.e2e.conftest import CHROMEDRIVER, CHROMIUM, WIDE
from tests.utils.api import ingest_via_api
from tests.utils.servers import LiveServer

if not (CHROMIUM and CHROMEDRIVER):
    pytest.skip(
        "Debian chromium and chromium-driver are not installed (scripts/install.sh installs them as root: "
        "apt-get install -y chromium chromium-driver)",
        allow_module_level=True,
    )
pytest.importorskip("selenium.webdriver", reason="selenium is missing: pip install -e '.[dev]'")
if not (REPO / "service" / "api" / "web" / "static" / "vendor" / "leaflet" / "leaflet.js").is_file():
    pytest.skip(
        "the web UI's vendored map library is missing: bash scripts/vendor_ui.sh (make install runs it)",
        allow_module_level=True,
    )

from selenium.common.exceptions import (  # noqa: E402
    ElementClickInterceptedException,
    ElementNotInteractableException,
    NoSuchElementException,
    StaleElementReferenceException,
    TimeoutException,
)
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from ingest.upload import IngestRequest  # noqa: E402

NARROW = 390
SHOTS = Path(os.environ.get("CARTA_UI_SCREENSHOTS") or REPO / "tests" / "artifacts" / "ui")
JAQUEIRA = "Quais são as coordenadas do Parque da Jaqueira?"
REVENUE = "What was the revenue of Latin America in Q3 2024?"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, text_encoder: TextEncoder) -> Iterator[LiveServer]:
    carta = Carta(settings_for(tmp_path_factory.mktemp("webui-data")), text_encoder=text_encoder)
    with LiveServer(carta) as live:
        yield live
    carta.close()


def needs(module: str, feature: str) -> pytest.MarkDecorator:
    """These tests exercise API parts built in parallel branches: they run as soon as the
    module is there (after the merge) and skip, saying which, until then."""
    return pytest.mark.skipif(
        importlib.util.find_spec(module.split(".")[0]) is None or importlib.util.find_spec(module) is None,
        reason=f"{feature} not merged yet: {module} is missing",
    )


# How these tests stay deterministic: the UI redraws its lists (documents, POI datasets,
# evidence, thumbnails) by replacing their elements, and redraws the document list once more
# after each upload, so an element found a moment ago may be gone by the next command
# ("stale element reference"). So: wait for the FINAL state (the row with the expected
# status, the answer marked done), read rows in one script (table_rows, evidence), and act on
# an element only through click_when_ready, which finds it again on every try.
REDRAWN = (NoSuchElementException, StaleElementReferenceException)  # a condition meeting these retries


def wait(driver: Any, condition: Callable[[Any], Any], timeout: float = 120, what: str = "") -> Any:
    """Poll `condition` until it returns something truthy; an element it meets mid-redraw
    (missing or stale) counts as "not yet"."""
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.2, ignored_exceptions=REDRAWN).until(condition)
    except TimeoutException:
        logs = [e["message"] for e in driver.get_log("browser")][-10:]
        pytest.fail(f"timed out waiting for {what or condition}; browser log: {logs}")


def css(driver: Any, selector: str) -> WebElement:
    return driver.find_element(By.CSS_SELECTOR, selector)


def click_when_ready(
    driver: Any,
    selector: str,
    *,
    until: Callable[[WebElement], bool] | None = None,
    timeout: float = 20,
    what: str = "",
) -> None:
    """Click the first element `selector` matches once it is shown, enabled and `until(element)`
    holds, finding it afresh on every try: if the UI redraws it between the find and the click,
    the click meets a stale element and is tried again on the new one."""

    def clicked(d: Any) -> bool:
        element = d.find_element(By.CSS_SELECTOR, selector)
        if not (element.is_displayed() and element.is_enabled()) or (until and not until(element)):
            return False
        try:
            element.click()
        except (ElementClickInterceptedException, ElementNotInteractableException):
            return False  # covered for a moment (a closing dialog) or not interactable yet
        return True

    wait(driver, clicked, timeout, what or f"{selector} to be clickable")


def table_rows(driver: Any, selector: str) -> list[list[str]]:
    """The cell texts of each row `selector` matches, read in one script so that a redraw
    cannot happen halfway through the read."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])]"
        ".map((tr) => [...tr.querySelectorAll('td')].map((td) => td.innerText.trim()))",
        selector,
    )


def shoot(driver: Any, name: str, full_page: bool = True) -> None:
    """Screenshots of the current screen at both widths (the whole page unless a dialog is
    open); at neither width may anything stick out sideways (no horizontal scrolling)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (WIDE, NARROW):
        driver.set_window_size(width, 900)
        driver.execute_script("window.scrollTo(0, 0)")
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        wide = driver.execute_script(
            "const w = document.documentElement.clientWidth; return [...document.querySelectorAll('body *')]"
            ".filter((e) => e.getBoundingClientRect().right > w + 0.5).slice(-3)"
            ".map((e) => e.tagName + '#' + e.id + '.' + e.className)"
        )
        assert overflow <= 0, f"{name} at {width}px scrolls sideways by {overflow}px: {wide}"
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, min(max(height, 700), 4000) if full_page else 900)
        path = SHOTS / f"{name}-{width}.png"
        driver.save_screenshot(str(path))
        with Image.open(path) as shot:  # 256 colours: a fraction of the size, still legible
            small = shot.convert("RGB").quantize(colors=256)
        small.save(path, optimize=True)
    driver.set_window_size(WIDE, 1000)


def open_ui(driver: Any, url: str, route: str = "#/documents") -> None:
    driver.get("about:blank")  # a fresh page load, not only a hash change
    driver.get(f"{url}/{route}")
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready === 'true'"), 30, "the UI")


def go(driver: Any, route: str) -> None:
    """Follow an in-app route (a hash change) and wait until the UI shows that screen: the
    switch happens in the page's hashchange handler, after driver.get has returned."""
    view = "page" if route.startswith("#/doc/") else route.removeprefix("#/")
    driver.get(driver.current_url.split("#")[0] + route)
    shown = f"return document.body.dataset.view === '{view}'"
    wait(driver, lambda d: d.execute_script(shown), 20, f"the {view} screen")


def forget_ask_status(driver: Any) -> None:
    """Blank the ask status before an action that asks again, so that `answered` waits for
    that answer and not for the previous one (whose status text the new one may repeat)."""
    driver.execute_script(
        "const s = document.querySelector('#ask-status'); s.textContent = ''; delete s.dataset.state;"
    )


def ask(driver: Any, question: str) -> None:
    go(driver, "#/ask")
    box = css(driver, "#question")
    box.clear()
    box.send_keys(question)
    forget_ask_status(driver)
    click_when_ready(driver, "#ask-button", what="the ask button")
    answered(driver)


def answered(driver: Any) -> str:
    """Wait until the ask status says the answer is complete (or failed) and return it; call
    forget_ask_status before the action that asks."""

    def done(d: Any) -> str | None:
        status = d.find_element(By.CSS_SELECTOR, "#ask-status")
        return status.text if status.get_attribute("data-state") in {"done", "error"} else None

    return wait(driver, done, 120, "the answer")


def delivery(url: str) -> str:
    """How this server answers `"stream": true`: "stream" (server-sent events) or "json"."""
    with httpx.stream("POST", f"{url}/v1/ask", json={"question": "x", "stream": True}, timeout=60) as r:
        return "stream" if r.headers.get("content-type", "").startswith("text/event-stream") else "json"


def evidence(driver: Any) -> list[tuple[str, int]]:
    """(doc_id, page_no) of each evidence card, read in one script."""
    cards = driver.execute_script(
        "return [...document.querySelectorAll('#evidence li.evidence-card')]"
        ".map((li) => [li.dataset.docId, li.dataset.pageNo])"
    )
    return [(doc_id, int(page_no)) for doc_id, page_no in cards]


def drop_file(driver: Any, path: Path) -> None:
    """A real drag-and-drop of a local file: a File from a temporary file input, dropped on
    the drop zone as a DataTransfer (what the browser does for a file dragged in)."""
    driver.execute_script(
        "const i = document.createElement('input'); i.type = 'file'; i.id = 'drop-source';"
        "i.style.display = 'none'; document.body.append(i);"
    )
    css(driver, "#drop-source").send_keys(str(path))
    driver.execute_script(
        "const f = document.querySelector('#drop-source').files[0]; const dt = new DataTransfer();"
        "dt.items.add(f); const z = document.querySelector('#dropzone');"
        "z.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));"
        "z.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));"
        "document.querySelector('#drop-source').remove();"
    )


def image_query(driver: Any, picture: Path) -> None:
    """Choose a picture in the Ask screen's image query and submit it."""
    go(driver, "#/ask")
    forget_ask_status(driver)
    css(driver, "#image-file").send_keys(str(picture))
    click_when_ready(driver, "#image-button", what="the image query button")


def attributes(driver: Any, selector: str, name: str) -> list[str | None]:
    """Attribute `name` of each element `selector` matches, read in one script (a redraw
    between finding the elements and reading them would leave stale references)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((e) => e.getAttribute(arguments[1]))",
        selector,
        name,
    )


def upload_rows_ready(driver: Any, names: set[str]) -> bool:
    rows = {li.get_attribute("data-name"): li for li in driver.find_elements(By.CSS_SELECTOR, "#uploads li")}
    states = {n: rows[n].get_attribute("data-state") if n in rows else None for n in names}
    failed = [rows[n].text for n, s in states.items() if s == "failed"]
    assert not failed, f"upload failed: {failed}"
    return all(s == "ready" for s in states.values())


def test_upload_ask_cite_and_filter_by_area(
    browser: Any, server: LiveServer, samples_dir: Path, tmp_path: Path
) -> None:
    url = server.url
    open_ui(browser, url)
    assert "No documents yet" in css(browser, "#doc-empty").text
    recife = samples_dir / "relatorio_ambiental_recife_2024.pdf"
    quarterly = samples_dir / "quarterly_report_q3_2024.pdf"
    chart = samples_dir / "grafico_chuvas_2024.png"

    # upload: two PDFs through the file picker at once, the chart by drag and drop
    css(browser, "#file-input").send_keys(f"{recife}\n{quarterly}")
    drop_file(browser, chart)
    names = {recife.name, quarterly.name, chart.name}
    wait(browser, lambda d: upload_rows_ready(d, names), 240, "three uploads to be ready")
    progress = [int(value) for value in attributes(browser, "#uploads progress", "value")]
    assert progress == [100, 100, 100]
    assert "ready · 5 pages" in css(browser, f'#uploads li[data-name="{recife.name}"]').text
    # progress came from the job's event stream when the server queues uploads (202 + job)
    queued = "/v1/jobs/{job_id}/events" in httpx.get(f"{url}/openapi.json").json()["paths"]
    via = set(attributes(browser, "#uploads li", "data-via"))
    assert via == ({"events"} if queued else {"request"})
    docs = {d["filename"]: d for d in httpx.get(f"{url}/v1/documents").json()}
    assert set(docs) == names and all(d["status"] == "ready" for d in docs.values())
    recife_id, quarterly_id = docs[recife.name]["id"], docs[quarterly.name]["id"]
    # the list is redrawn after each upload and once more after the last: wait for its final state
    statuses = lambda d: [cells[3] for cells in table_rows(d, "#doc-table tbody tr")]  # noqa: E731
    wait(browser, lambda d: statuses(d) == ["ready"] * 3, 20, "three ready rows in the list")
    (cells,) = table_rows(browser, f'#doc-table tr[data-doc-id="{recife_id}"]')
    assert cells[1:4] == ["pdf", "5", "ready"] and "Relatório Ambiental" in cells[0]
    assert "-8.0" in cells[4]  # footprint around Recife
    # footprints are drawn on the map
    assert browser.find_elements(By.CSS_SELECTOR, "#map path.layer-footprints")
    shoot(browser, "1-documents")

    # a file Carta cannot read: its row says why, nothing else changes
    bad = tmp_path / "notes.txt"
    bad.write_text("plain text is not a supported document type")
    css(browser, "#file-input").send_keys(str(bad))
    row = '#uploads li[data-name="notes.txt"]'
    wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, row).get_attribute("data-state") == "failed", 30)
    assert "failed:" in css(browser, row).text and "PDF" in css(browser, row).text
    assert len(httpx.get(f"{url}/v1/documents").json()) == 3

    # uploading the same file again reports it as already indexed
    css(browser, "#file-input").send_keys(str(recife))

    def reuploaded(d: Any) -> bool:
        return "already indexed" in d.find_element(By.CSS_SELECTOR, "#uploads li").text

    wait(browser, reuploaded, 60, "the re-upload")

    # ask: the answer (streamed when the server streams), a citation chip, evidence thumbnails
    # with per-channel scores
    ask(browser, JAQUEIRA)
    assert css(browser, "#answer-box").get_attribute("data-delivery") == delivery(url)
    assert "-8,0375" in css(browser, "#answer-text").text
    chips = browser.find_elements(By.CSS_SELECTOR, "#citations a.citation")
    assert chips and "p.4" in chips[0].text
    assert (recife_id, 4) in evidence(browser)
    channels = set(attributes(browser, "#evidence tr[data-channel]", "data-channel"))
    assert {"dense", "pages"} <= channels and any(c.startswith("bm25") for c in channels)
    thumbs_loaded = (
        "return [...document.querySelectorAll('#evidence img')].every(i => i.complete && i.naturalWidth > 0)"
    )
    wait(browser, lambda d: d.execute_script(thumbs_loaded), 20, "the evidence thumbnails to load")
    # the lite profile has no similarity maps: no "why this page" button
    assert not browser.find_elements(By.CSS_SELECTOR, "#evidence button.why")
    # the evidence pages' geo tags are points on the map, each a link to its page
    assert browser.find_elements(By.CSS_SELECTOR, "#map path.layer-tags.point")
    shoot(browser, "2-ask")

    # the citation opens the page with the cited region highlighted
    click_when_ready(browser, "#citations a.citation", what="the first citation")
    wait(browser, lambda d: "page 4 of 5" in d.find_element(By.CSS_SELECTOR, "#page-title").text, 20, "page")
    image_shown = "return document.querySelector('#page-image').naturalWidth > 0"
    wait(browser, lambda d: d.execute_script(image_shown), 20, "the page image")
    highlight = css(browser, "#page-frame .highlight")
    image = css(browser, "#page-image")
    hb, ib = highlight.rect, image.rect
    assert hb["width"] > 10 and hb["height"] > 10
    assert ib["x"] - 1 <= hb["x"] and hb["x"] + hb["width"] <= ib["x"] + ib["width"] + 1
    assert ib["y"] - 1 <= hb["y"] and hb["y"] + hb["height"] <= ib["y"] + ib["height"] + 1
    assert len(browser.find_elements(By.CSS_SELECTOR, "#thumbs img")) == 5
    assert css(browser, "#thumbs a[aria-current=page]").text.strip() == "4"
    assert "Parque da Jaqueira" in css(browser, "#page-text").text
    assert browser.find_elements(By.CSS_SELECTOR, "#page-text mark")  # the cited passage is marked
    assert "-8.0375" in css(browser, "#page-geo").text  # geo tags of the page
    shoot(browser, "3-page")
    # thumbnails navigate
    click_when_ready(browser, '#thumbs a[href$="/2"]', what="the thumbnail of page 2")
    wait(browser, lambda d: "page 2 of 5" in d.find_element(By.CSS_SELECTOR, "#page-title").text, 20, "p.2")

    # area filter drawn on the map: a box over Recife leaves out the São Paulo report
    ask(browser, REVENUE)
    assert quarterly_id in {doc for doc, _ in evidence(browser)}
    go(browser, "#/documents")
    show = f'#doc-table tr[data-doc-id="{recife_id}"] button.link-button'
    click_when_ready(browser, show, what="Show on map")
    css(browser, "label[for=tool-box]").click()
    svg = css(browser, "#map")
    w, h = svg.rect["width"], svg.rect["height"]
    forget_ask_status(browser)  # the drawn box asks the last question again
    drag = ActionChains(browser).move_to_element_with_offset(svg, int(-w * 0.45), int(-h * 0.45))
    drag.click_and_hold().move_by_offset(int(w * 0.45), int(h * 0.45))
    drag.move_by_offset(int(w * 0.45), int(h * 0.45)).release().perform()
    assert "Area filter: box" in css(browser, "#map-filter-text").text
    assert browser.find_elements(By.CSS_SELECTOR, "#map path.filter")
    go(browser, "#/ask")
    answered(browser)
    filtered = evidence(browser)
    assert filtered and quarterly_id not in {doc for doc, _ in filtered}
    assert "Area: box" in css(browser, "#geo-chip").text
    shoot(browser, "4-map-filter")

    # the same by keyboard: a radius typed in, far from every document -> no pages
    css(browser, ".filter-form summary").click()
    form = css(browser, "#radius-form")
    for name, value in (("lat", "0"), ("lon", "0"), ("radius_m", "1000")):
        form.find_element(By.NAME, name).send_keys(value)
    forget_ask_status(browser)
    form.find_element(By.NAME, "radius_m").send_keys(Keys.ENTER)
    answered(browser)
    assert evidence(browser) == [] and "No page matched" in css(browser, "#evidence").text
    assert "1.0 km around 0.0000, 0.0000" in css(browser, "#geo-chip").text
    # H3 cells typed in: the res-7 cell of Marco Zero holds only page 4 of the Recife report;
    # the cell's outline (from /ui/h3) is drawn as the filter
    cell = h3.latlng_to_cell(-8.0631, -34.8711, 7)
    forget_ask_status(browser)
    css(browser, "#h3-form input[name=cells]").send_keys(cell + Keys.ENTER)
    answered(browser)
    assert evidence(browser) == [(recife_id, 4)]
    assert "Area: 1 H3 cell" in css(browser, "#geo-chip").text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#map path.filter")) == 1
    # clearing the filter brings the São Paulo report back
    forget_ask_status(browser)
    css(browser, "#geo-chip-clear").click()
    answered(browser)
    assert quarterly_id in {doc for doc, _ in evidence(browser)}
    assert not css(browser, "#geo-chip").is_displayed()

    # delete with confirmation: cancel keeps it, confirm removes it everywhere
    go(browser, "#/documents")
    delete = f'#doc-table tr[data-doc-id="{quarterly_id}"] button.danger-outline'
    click_when_ready(browser, delete, what="the delete button")
    dialog = css(browser, "#confirm-dialog")
    wait(browser, lambda d: dialog.is_displayed(), 10, "the confirmation")
    assert "Northwind" in css(browser, "#confirm-text").text
    shoot(browser, "5-delete-confirm", full_page=False)
    click_when_ready(browser, "#confirm-dialog button[value=cancel]", what="Cancel")
    wait(browser, lambda d: not dialog.is_displayed(), 10, "the confirmation to close")
    assert quarterly_id in {d["id"] for d in httpx.get(f"{url}/v1/documents").json()}
    click_when_ready(browser, delete, what="the delete button")
    wait(browser, lambda d: dialog.is_displayed(), 10, "the confirmation")
    click_when_ready(browser, "#confirm-ok", what="Delete in the confirmation")
    wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, delete), 20, "the row to go")
    assert quarterly_id not in {d["id"] for d in httpx.get(f"{url}/v1/documents").json()}
    # textContent: the toast fades out after 5 s, and WebDriver's .text of a faded element is ""
    assert "Deleted" in css(browser, "#toast").get_attribute("textContent")

    severe = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    # the only expected console errors: the refused upload (415) and, from a server without
    # streaming, its 422 to `stream: true` (once; plain JSON after that)
    expected = [m for m in severe if ("/v1/documents" in m and "415" in m) or ("/v1/ask" in m and "422" in m)]
    assert expected == severe and len(expected) <= 2, severe


def test_keyboard_and_landmarks(browser: Any, server: LiveServer) -> None:
    """Every control has a name; the skip link, the nav and the map work from the keyboard."""
    open_ui(browser, server.url)
    unnamed = browser.execute_script(
        """return [...document.querySelectorAll('input:not([type=hidden]), textarea, button, select')]
             .filter(e => !e.closest('[hidden]') && e.id !== 'drop-source')
             .filter(e => !(e.labels && e.labels.length))
             .filter(e => !e.getAttribute('aria-label') && !e.textContent.trim())
             .map(e => e.outerHTML.slice(0, 80));"""
    )
    assert unnamed == []
    roles = browser.execute_script(
        "return ['main', 'header', 'aside', 'nav[aria-label=Main]', 'nav:not([aria-label])']"
        ".map(t => document.querySelectorAll(t).length)"
    )
    assert roles == [1, 1, 1, 1, 0]  # every landmark once; each nav is named
    ActionChains(browser).send_keys(Keys.TAB).perform()
    skip = browser.switch_to.active_element
    assert skip.get_attribute("class") == "skip-link", skip.get_attribute("outerHTML")[:120]
    skip.send_keys(Keys.ENTER)
    focused = lambda d: d.switch_to.active_element.get_attribute("id")  # noqa: E731
    wait(browser, lambda d: focused(d) == "main", 10, "the focus on main")
    # the map: focusable, arrows pan, + zooms
    svg = css(browser, "#map")
    zoom = int(svg.get_attribute("data-zoom"))
    browser.execute_script("arguments[0].focus()", svg)
    browser.switch_to.active_element.send_keys("+")
    wait(browser, lambda d: int(css(d, "#map").get_attribute("data-zoom")) == zoom + 1, 10, "the zoom in")
    # nav by keyboard: focus the Ask link and press Enter
    link = css(browser, 'a[data-nav="ask"]')
    browser.execute_script("arguments[0].focus()", link)
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#view-ask").is_displayed(), 10, "the ask view")
    current = lambda d: css(d, 'a[data-nav="ask"]').get_attribute("aria-current")  # noqa: E731
    wait(browser, lambda d: current(d) == "page" and focused(d) == "h-ask", 10, "the Ask link and heading")


def test_ui_config_and_h3_cells_over_http(server: LiveServer) -> None:
    page = httpx.get(f"{server.url}/")
    assert page.status_code == 200 and 'src="/ui/app.js"' in page.text
    for asset in ("app.js", "api.js", "map.js", "style.css"):
        assert httpx.get(f"{server.url}/ui/{asset}").status_code == 200
    config = httpx.get(f"{server.url}/ui/config").json()
    assert config["tile_url"] is None and config["max_upload_bytes"] > 0
    marco_zero = (-8.0631, -34.8711)
    ids = [h3.latlng_to_cell(*marco_zero, 7), h3.latlng_to_cell(*marco_zero, 9)]
    cells = httpx.get(f"{server.url}/ui/h3", params={"cells": ",".join(ids)}).json()
    assert [f["properties"]["h3"] for f in cells["features"]] == ids
    for feature in cells["features"]:
        ring = feature["geometry"]["coordinates"][0]
        assert len(ring) == 7 and ring[0] == ring[-1]
        assert Polygon(ring).contains(Point(marco_zero[1], marco_zero[0]))
    bad = httpx.get(f"{server.url}/ui/h3", params={"cells": "nope"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_h3_cells"
    assert httpx.get(f"{server.url}/ui/missing.js").status_code == 404


def test_tiles_only_when_configured(browser: Any, make_carta: Callable[..., Carta]) -> None:
    """With CARTA_UI_TILE_URL set the map draws raster tiles from it under the vector layers;
    without it (the other tests) there are none and the offline Natural Earth basemap is drawn."""
    carta = make_carta(ui_tile_url="/tiles/{z}/{x}/{y}.png", ui_tile_attribution="Tiles: test server")
    with LiveServer(carta) as live:
        open_ui(browser, live.url)
        # the tile layer may add (or replace) its images after the UI is ready: read them in one script
        tiles = "return [...document.querySelectorAll('#map .tiles img')].map((i) => i.src)"
        srcs = wait(browser, lambda d: d.execute_script(tiles), 20, "the map's tiles")
        paths = [s.removeprefix(live.url) for s in srcs]
        assert paths and all(p.startswith("/tiles/") and p.endswith(".png") for p in paths), srcs
        assert css(browser, "#map").get_attribute("data-basemap") == "tiles"  # no offline basemap under
        assert css(browser, "#map-attrib").text == "Tiles: test server"


@needs("service.auth", "API keys (issue 8)")
def test_api_key_typed_into_the_ui(browser: Any, make_carta: Callable[..., Carta], samples_dir: Path) -> None:
    """With API keys on, the UI asks for one (401 message), then lists, shows page images
    (fetched with the key) and answers for that key's tenant only."""
    from service.auth import KeyStore

    carta = make_carta(rate_limit_per_second=0)
    keys = KeyStore(carta.settings.auth_path)
    secret = keys.create("acme", [], False, label="ui")[1]
    other = keys.create("beta", [], False, label="other")[1]
    keys.close()
    with LiveServer(carta) as live:
        beta_key = {"Authorization": f"Bearer {other}"}
        with httpx.Client(base_url=live.url, headers=beta_key, timeout=120) as beta:
            ingest_via_api(beta, "q.pdf", (samples_dir / "quarterly_report_q3_2024.pdf").read_bytes())
        open_ui(browser, live.url)
        wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#api-key").is_displayed(), 20, "the key box")
        assert "key" in css(browser, "#key-message").text.lower()
        assert browser.switch_to.active_element.get_attribute("id") == "api-key"
        shoot(browser, "8-api-key", full_page=False)
        css(browser, "#api-key").send_keys(secret + Keys.ENTER)
        empty = "#doc-empty"
        wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, empty).is_displayed(), 20, "an empty list")
        recife = samples_dir / "relatorio_ambiental_recife_2024.pdf"
        css(browser, "#file-input").send_keys(str(recife))
        wait(browser, lambda d: upload_rows_ready(d, {recife.name}), 240, "the upload")
        # the upload row says ready before the list has been redrawn (twice) with the document:
        # wait for the ready row, then click its link, found afresh (this click once met a
        # stale element: the table was redrawn between the find and the click)
        rows = "#doc-table tbody tr"
        ready = lambda d: "ready" in [cells[3] for cells in table_rows(d, rows)]  # noqa: E731
        wait(browser, ready, 30, "acme's ready row")
        assert len(table_rows(browser, rows)) == 1  # beta's document is not acme's
        click_when_ready(browser, f"{rows} td a", what="the document's title link")
        shown = "return document.querySelector('#page-image').naturalWidth > 0"
        wait(browser, lambda d: d.execute_script(shown), 20, "the page image fetched with the key")
        assert css(browser, "#page-image").get_attribute("src").startswith("blob:")
        ask(browser, JAQUEIRA)
        assert "-8,0375" in css(browser, "#answer-text").text
        browser.execute_script("localStorage.clear()")


@needs("graph.evidence", "graph evidence (issue 6)")
def test_graph_evidence_table_and_map(browser: Any, make_carta: Callable[..., Carta], tmp_path: Path) -> None:
    """A relational question over a POI dataset: the pairs table with distances, POIs, pair
    lines and H3 zone cells on the map."""
    carta = make_carta()
    pois = [  # two pharmacies, each a few metres from a restaurant, in Recife
        ("Farmácia Boa Vista", "pharmacy", -8.0610, -34.8850),
        ("Restaurante Leite", "restaurant", -8.0611, -34.8851),
        ("Farmácia do Derby", "pharmacy", -8.0570, -34.8990),
        ("Restaurante Derby", "restaurant", -8.0571, -34.8992),
    ]
    features = [
        {
            "type": "Feature",
            "id": i,
            "properties": {"name": name, "amenity": cat},
            "geometry": {"type": "Point", "coordinates": [lon, lat]},
        }
        for i, (name, cat, lat, lon) in enumerate(pois)
    ]
    with LiveServer(carta) as live:
        data = json.dumps({"type": "FeatureCollection", "features": features}).encode()
        up = httpx.post(f"{live.url}/v1/datasets", files={"file": ("recife_pois.geojson", data)}, timeout=120)
        assert up.status_code == 201, up.text
        open_ui(browser, live.url, "#/ask")
        ask(browser, "Which pharmacies are within 100 m of a restaurant in Recife?")
        rows = [" ".join(cells) for cells in table_rows(browser, "#graph-table tbody tr")]
        assert len(rows) == 2, rows
        assert any("Farmácia Boa Vista" in r and "Restaurante Leite" in r for r in rows)
        assert all(r.split()[-1] == "m" for r in rows)
        answer = css(browser, "#answer-text").text
        assert "Farmácia Boa Vista" in answer and "recife_pois:" not in answer  # names, not dataset ids
        assert len(browser.find_elements(By.CSS_SELECTOR, "#map path.layer-graph.pair")) == 2
        assert len(browser.find_elements(By.CSS_SELECTOR, "#map path.layer-graph.graph.point")) == 4
        assert browser.find_elements(By.CSS_SELECTOR, "#map path.layer-h3")
        shoot(browser, "6-graph")
        # a corpus-wide question: ranked zones on the map, the answer text, no pairs table
        ask(browser, "Which areas have the most pharmacies?")
        overview = "Zones with the most pharmacies"
        wait(browser, lambda d: overview in css(d, "#answer-text").text, 20, "overview")
        assert not css(browser, "#graph-box").is_displayed()
        assert not browser.find_elements(By.CSS_SELECTOR, "#map path.layer-graph.pair")
        assert browser.find_elements(By.CSS_SELECTOR, "#map path.layer-h3")


@needs("service.query.visual", "the visual profile (issue 5)")
def test_why_this_page_heatmap_in_the_visual_profile(
    browser: Any,
    make_carta: Callable[..., Carta],
    request: pytest.FixtureRequest,
    samples_dir: Path,
    tmp_path: Path,
) -> None:
    """Visual profile (tiny random ColPali): each evidence page offers "Why this page?", whose
    dialog shows the server's similarity heat-map PNG for the question; an image query lists
    the indexed pages as evidence cards."""
    from tests.tiny_visual import visual_settings

    tiny_visual_models = request.getfixturevalue("tiny_visual_models")

    carta = make_carta(**visual_settings(tiny_visual_models, "colpali"))
    pdf = samples_dir / "quarterly_report_q3_2024.pdf"
    carta.ingest(IngestRequest(pdf.read_bytes(), pdf.name, "default"))
    with LiveServer(carta) as live:
        open_ui(browser, live.url, "#/ask")
        ask(browser, "revenue by region")
        buttons = browser.find_elements(By.CSS_SELECTOR, "#evidence button.why")
        assert buttons and len(buttons) == len(evidence(browser))
        click_when_ready(browser, "#evidence button.why", what="Why this page?")
        dialog = css(browser, "#heatmap-dialog")
        wait(browser, lambda d: dialog.is_displayed(), 20, "the heat-map dialog")
        shown = "return document.querySelector('#heatmap-image').naturalWidth > 0"
        wait(browser, lambda d: d.execute_script(shown), 60, "the heat-map image")
        assert css(browser, "#heatmap-error").text == ""
        shoot(browser, "7-why-this-page", full_page=False)
        click_when_ready(browser, "#heatmap-dialog button[value=close]", what="Close")
        wait(browser, lambda d: not dialog.is_displayed(), 10, "the heat-map dialog to close")
        # query by image: a rendered page of the document finds pages, shown as evidence cards
        picture = tmp_path / "chart.png"
        Image.new("RGB", (160, 120), "white").save(picture)
        image_query(browser, picture)
        wait(browser, lambda d: "Image query" in css(d, "#ask-status").text, 60, "the image query's results")
        assert css(browser, "#ask-status").get_attribute("data-state") == "done"
        assert not css(browser, "#image-notice").is_displayed()
        assert evidence(browser) and not browser.find_elements(By.CSS_SELECTOR, "#evidence button.why")


def test_poi_dataset_panel_upload_list_delete(browser: Any, server: LiveServer, tmp_path: Path) -> None:
    """The Documents screen's POI datasets panel: a GeoJSON of Recife's municipal schools loaded
    with category school is listed with its POI count (the server's), then deleted after the
    confirmation; a file the server cannot read shows the server's own message."""
    schools = corpus_path("poi", "recife_escolas_municipais.geojson")
    open_ui(browser, server.url)
    css(browser, "#dataset-file").send_keys(str(schools))
    category = css(browser, "#dataset-category")
    category.send_keys("school")
    category.send_keys(Keys.ENTER)  # the keyboard submits the form
    status = "#dataset-status"
    settled = {"done", "error"}
    wait(browser, lambda d: css(d, status).get_attribute("data-state") in settled, 120, "the dataset")
    assert css(browser, status).get_attribute("data-state") == "done", css(browser, status).text
    listed = httpx.get(f"{server.url}/v1/datasets", timeout=30).json()
    mine = [d for d in listed if d["filename"] == schools.name]
    assert len(mine) == 1 and mine[0]["pois"] > 100 and mine[0]["kind"]
    mine_row = f"tr[data-dataset-id='{mine[0]['id']}']"
    (cells,) = wait(browser, lambda d: table_rows(d, mine_row), 20, "the dataset's row")
    assert cells[2] == str(mine[0]["pois"]) and cells[3] == str(mine[0]["duplicates"]), cells
    assert f"{mine[0]['pois']} POIs" in css(browser, status).text
    shoot(browser, "9-poi-datasets")
    # a file the server cannot read: its 4xx message, no row added
    bad = tmp_path / "notes.txt"
    bad.write_text("no places here")
    css(browser, "#dataset-file").send_keys(str(bad))
    before = css(browser, status).text
    click_when_ready(browser, "#dataset-button", what="the dataset upload button")

    def answered_bad(d: Any) -> bool:
        return css(d, status).text != before and css(d, status).get_attribute("data-state") in settled

    wait(browser, answered_bad, 60, "the server's answer")
    assert css(browser, status).get_attribute("data-state") == "error"
    prefix = "Could not load notes.txt: "
    assert css(browser, status).text.startswith(prefix) and len(css(browser, status).text) > len(prefix) + 5
    assert len(browser.find_elements(By.CSS_SELECTOR, "#dataset-table tbody tr")) == len(listed)
    shutil.rmtree(bad.parent, ignore_errors=True)
    # delete: cancel keeps it, confirm removes it; the list is still being redrawn after the
    # refused file, so the button is found afresh for each click
    delete = f"{mine_row} button.danger-outline"
    click_when_ready(browser, delete, what="the dataset's delete button")
    dialog = css(browser, "#confirm-dialog")
    wait(browser, lambda d: dialog.is_displayed(), 10, "the confirmation")
    assert "dataset" in css(browser, "#confirm-title").text.lower()
    assert schools.name in css(browser, "#confirm-text").text
    click_when_ready(browser, "#confirm-dialog button[value=cancel]", what="Cancel")
    wait(browser, lambda d: not dialog.is_displayed(), 10, "the confirmation to close")
    ids = lambda: {d["id"] for d in httpx.get(f"{server.url}/v1/datasets", timeout=30).json()}  # noqa: E731
    assert mine[0]["id"] in ids()
    click_when_ready(browser, delete, what="the dataset's delete button")
    wait(browser, lambda d: dialog.is_displayed(), 10, "the confirmation")
    click_when_ready(browser, "#confirm-ok", what="Delete in the confirmation")
    wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, mine_row), 30, "the row to go")
    assert mine[0]["id"] not in ids()
    assert "Deleted dataset" in css(browser, status).text


def test_no_image_search_on_a_lite_server(browser: Any, server: LiveServer) -> None:
    """A lite server says it is lite (/ui/config): the Ask screen offers no search by image,
    only a sentence saying how to turn the visual profile on (the API still answers an image
    query there with 409 visual_profile_off)."""
    open_ui(browser, server.url, "#/ask")
    assert httpx.get(f"{server.url}/ui/config").json()["profile"] == "lite"
    assert not css(browser, "#image-form").is_displayed()
    text = css(browser, "#image-off").text
    assert "Search by image is off on this server" in text and "CARTA_PROFILE=visual" in text
    shoot(browser, "10-image-query-lite")
