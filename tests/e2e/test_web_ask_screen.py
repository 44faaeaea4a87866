"""The answer screen in a real headless Chromium against a real Carta: example questions
made from the tenant's own documents and datasets, "how the question was understood"
(place, did-you-mean, filters, the geodata reading), the document picker sending doc_ids,
and no image-search control on a lite server. axe-core on the screen; screenshots at 1440
and 390 px go to $CARTA_UI_SCREENSHOTS."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from service.carta import Carta
from tests.conftest import corpus_path, settings_for
from tests.e2e.test_web_map import axe_violations
from tests.e2e.test_web_ui import (
    By,
    answered,
    ask,
    click_when_ready,
    css,
    evidence,
    forget_ask_status,
    go,
    open_ui,
    shoot,
    table_rows,
    wait,
)
from tests.service.api.test_graph_api import wait_for_document
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer

PAIRS_EXAMPLE = "Which cafes are within 200 m of pharmacies?"


def helsinki_pois() -> bytes:
    """Cafés and pharmacies in central Helsinki: two pairs a few metres apart."""
    points = [
        ("Café Aalto", "cafe", 60.16880, 24.94200),
        ("Apteekki Esplanadi", "pharmacy", 60.16885, 24.94210),
        ("Café Ekberg", "cafe", 60.16300, 24.93900),
        ("Apteekki Bulevardi", "pharmacy", 60.16305, 24.93910),
        ("Café Regatta", "cafe", 60.18000, 24.91000),
    ]
    features = [
        {
            "type": "Feature",
            "properties": {"name": name, "amenity": cat},
            "geometry": {"type": "Point", "coordinates": [lon, lat]},
        }
        for name, cat, lat, lon in points
    ]
    return json.dumps({"type": "FeatureCollection", "features": features}).encode()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, text_encoder: Any) -> Any:
    """A lite Carta holding a POI dataset and two small reports (one about Recife, one
    about Olinda), uploaded through the API."""
    carta = Carta(settings_for(tmp_path_factory.mktemp("ask-screen")), text_encoder=text_encoder)
    with LiveServer(carta) as live, httpx.Client(base_url=live.url, timeout=120) as client:
        up = client.post("/v1/datasets", files={"file": ("helsinki_pois.geojson", helsinki_pois())})
        assert up.status_code == 201, up.text
        reports = {
            "recife.pdf": ["Relatório de enchentes em Recife, 2024.", "As chuvas de maio alagaram o bairro."],
            "olinda.pdf": ["Relatório de enchentes em Olinda, 2024.", "As chuvas de maio alagaram o bairro."],
        }
        ids = {
            name: wait_for_document(
                client, client.post("/v1/documents", files={"file": (name, make_pdf([lines]))}).json()
            )
            for name, lines in reports.items()
        }
        yield {"live": live, "ids": ids, "dataset": up.json()["dataset"]["id"]}
    carta.close()


def examples_shown(driver: Any) -> list[dict[str, str]]:
    return driver.execute_script(
        "return [...document.querySelectorAll('#examples button.example')]"
        ".map((b) => ({text: b.innerText.trim(), source: b.dataset.source, id: b.dataset.sourceId}))"
    )


def understood_rows(driver: Any) -> dict[str, str]:
    """The "how the question was understood" list as {term: description}, read in one script."""
    return driver.execute_script(
        "const dl = document.querySelector('#understood'); const out = {};"
        "for (const dt of dl.querySelectorAll('dt'))"
        " out[dt.innerText.trim()] = dt.nextElementSibling.innerText.trim();"
        "return out;"
    )


def test_examples_understood_and_the_document_picker(browser: Any, served: dict[str, Any]) -> None:
    url, ids = served["live"].url, served["ids"]
    open_ui(browser, url, "#/ask")

    # example questions, made from this tenant's dataset and documents (not a fixed list)
    wait(browser, lambda d: any(e["text"] == PAIRS_EXAMPLE for e in examples_shown(d)), 30, "the examples")
    shown = examples_shown(browser)
    assert {e["id"] for e in shown if e["source"] == "document"} == set(ids.values())
    assert {e["id"] for e in shown if e["source"] == "dataset"} == {served["dataset"]}
    assert any("Recife" in e["text"] for e in shown) and any("Olinda" in e["text"] for e in shown)

    # a lite server: no search-by-image control, a sentence saying how to turn it on
    assert not css(browser, "#image-form").is_displayed()
    assert "CARTA_PROFILE=visual" in css(browser, "#image-off").text

    # clicking an example asks it: the graph answers, and the screen says how it read it
    forget_ask_status(browser)
    click_when_ready(browser, '#examples button.example[data-source="dataset"]', what="a dataset example")
    answered(browser)
    assert css(browser, "#question").get_attribute("value") == PAIRS_EXAMPLE
    rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#graph-table tbody tr")]
    assert len(rows) == 2 and any("Café Aalto" in r and "Apteekki Esplanadi" in r for r in rows), rows
    wait(browser, lambda d: css(d, "#understood-box").is_displayed(), 10, "the understood panel")
    read = understood_rows(browser)
    assert read["Geodata"].startswith("relational: pairs cafe, pharmacy") and "200 m" in read["Geodata"]

    # a question naming a place: the place, its country and how it was used
    ask(browser, "Which cafes are within 100 m of a pharmacy in Helsinki?")
    read = understood_rows(browser)
    assert read["Place"].startswith("Helsinki, FI"), read
    assert "100 m" in read["Geodata"]
    assert axe_violations(browser) == []
    shoot(browser, "11-ask-understood")

    # the document picker: only the ticked report is searched, and the panel says so
    click_when_ready(browser, "#doc-picker summary", what="the document picker")
    click_when_ready(
        browser, f'#doc-picker-list input[data-doc-id="{ids["olinda.pdf"]}"]', what="Olinda's box"
    )
    wait(
        browser, lambda d: css(d, "#doc-picker").get_attribute("data-picked") == "1", 5, "one document picked"
    )
    assert "olinda" in css(browser, "#doc-picker-summary").text.lower()
    ask(browser, "Quando as chuvas alagaram o bairro?")
    cards = evidence(browser)
    assert cards and {doc for doc, _ in cards} == {ids["olinda.pdf"]}
    assert "Documents" in understood_rows(browser)
    assert axe_violations(browser) == []
    shoot(browser, "12-ask-document-picker")
    click_when_ready(browser, "#doc-picker-clear", what="All documents")
    wait(
        browser, lambda d: css(d, "#doc-picker").get_attribute("data-picked") == "0", 5, "no document picked"
    )


def test_an_ambiguous_place_offers_did_you_mean(browser: Any, served: dict[str, Any]) -> None:
    open_ui(browser, served["live"].url, "#/ask")
    ask(browser, "Onde fica Santa Cruz?")
    wait(browser, lambda d: css(d, "#understood-box").is_displayed(), 10, "the understood panel")
    read = understood_rows(browser)
    assert read["Place"] == "none recognised"
    options = read["Possible places"].split(" · ")
    assert len(options) >= 2 and all(o.startswith("Santa Cruz") for o in options)
    assert len({o.rsplit(", ", 1)[-1] for o in options}) >= 2  # in different countries


def test_examples_over_http_follow_the_data(served: dict[str, Any]) -> None:
    """The endpoint the screen reads: the same questions, in Portuguese when asked."""
    url = served["live"].url
    pt = httpx.get(f"{url}/v1/examples", params={"language": "pt"}, timeout=60).json()["questions"]
    assert any(q["text"] == "Quais cafés ficam a menos de 200 m de farmácias?" for q in pt)
    assert {q["language"] for q in pt} == {"pt"}


def test_roads_layer_from_a_loaded_osm_dataset(browser: Any, make_carta: Callable[..., Carta]) -> None:
    """A POI dataset's highways are drawn as the map's roads layer (with the road's name on
    hover), fitted when nothing else is on the map, and hidden by its layer box."""
    osm = corpus_path("poi", "osmnx_planet_10.068,48.135_10.071,48.137.osm").read_bytes()
    with LiveServer(make_carta()) as live:
        up = httpx.post(f"{live.url}/v1/datasets", files={"file": ("planet.osm", osm)}, timeout=120)
        assert up.status_code == 201, up.text
        roads = up.json()["dataset"]["roads"]
        assert roads > 0
        open_ui(browser, live.url, "#/documents")
        drawn = "return document.querySelectorAll('#map path.layer-roads').length"
        wait(browser, lambda d: d.execute_script(drawn) == roads, 30, "the roads layer")
        assert css(browser, "#map").get_attribute("data-roads") == str(roads)
        (cells,) = table_rows(browser, "#dataset-table tbody tr")
        assert cells[0] == "planet.osm" and cells[4] == str(roads)
        # the view fits the roads (nothing else is loaded): the map's centre is inside the file's bbox
        lat, lon = browser.execute_script("const c = window.cartaMap.getCenter(); return [c.lat, c.lng];")
        assert 48.1 < lat < 48.2 and 10.0 < lon < 10.2
        assert axe_violations(browser) == []
        go(browser, "#/map")  # on a phone the map is a tab of its own: the screenshot shows it
        shoot(browser, "13-map-roads")
        click_when_ready(browser, 'input[data-layer="roads"]', what="the roads layer box")
        wait(browser, lambda d: d.execute_script(drawn) == 0, 10, "the roads to be hidden")
