"""The document graph on the answer screen, in a real headless Chromium against a real Carta:
a question across the documents shows one theme per community (its organisations, its
sentences each with its citation, why it ranked), the entities the answer names are chips,
and a chip opens the entity's mentions, each linking to its page with the passage
highlighted. axe-core on each state; screenshots at 1440 and 390 px go to
$CARTA_UI_SCREENSHOTS."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from service.carta import Carta
from tests.conftest import settings_for
from tests.docgraph.test_global_search import AMAZONAS, SALVADOR
from tests.e2e.test_web_map import axe_violations
from tests.e2e.test_web_ui import ask, click_when_ready, css, open_ui, shoot, wait
from tests.utils.api import ingest_via_api
from tests.utils.documents import make_pdf
from tests.utils.servers import LiveServer

ORGANISATIONS = "Which organisations appear across the documents?"
ABOUT_IBAMA = "O que os documentos dizem sobre o IBAMA?"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, text_encoder: Any) -> Any:
    """A lite Carta (document graph on, offline extraction) holding two short reports: one
    naming IBAMA and FUNAI in Amazonas, one naming ANA and CONAMA in Salvador."""
    carta = Carta(settings_for(tmp_path_factory.mktemp("web-entities")), text_encoder=text_encoder)
    with LiveServer(carta) as live, httpx.Client(base_url=live.url, timeout=120) as client:
        ids = {
            name: ingest_via_api(client, name, make_pdf([text]))["id"]
            for name, text in (("amazonas.pdf", AMAZONAS), ("salvador.pdf", SALVADOR))
        }
        yield {"url": live.url, "ids": ids}
    carta.close()


def themes_shown(driver: Any) -> list[dict[str, Any]]:
    """Each theme of the answer: its community id, names, cited hrefs and text, in one read."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#themes > li')].map((li) => ({"
        " id: +li.dataset.community, names: li.querySelector('.theme-names').innerText.trim(),"
        " cites: [...li.querySelectorAll('.theme-quotes a.inline-cite')].map((a) => a.getAttribute('href')),"
        " sources: [...li.querySelectorAll('.theme-why a.citation')].map((a) => a.getAttribute('href')),"
        " text: li.innerText}))"
    )


def chips_shown(driver: Any) -> list[tuple[int, str]]:
    return [
        (int(i), text)
        for i, text in driver.execute_script(
            "return [...document.querySelectorAll('#entities button.entity')]"
            ".map((b) => [b.dataset.entityId, b.innerText.trim()])"
        )
    ]


def test_global_answer_themes_and_entity_chips(browser: Any, served: dict[str, Any]) -> None:
    url, ids = served["url"], served["ids"]
    expected = httpx.post(f"{url}/v1/ask", json={"question": ORGANISATIONS}, timeout=120).json()
    communities = [c["id"] for c in expected["communities"]["communities"]]
    assert len(communities) == 2, expected["communities"]

    open_ui(browser, url, "#/ask")
    ask(browser, ORGANISATIONS)
    assert css(browser, "#answer-text").text.startswith("Across the documents")
    themes = themes_shown(browser)
    assert [t["id"] for t in themes] == communities
    # each theme names the organisations of one report and cites that report's page
    names_of = {ids["amazonas.pdf"]: {"IBAMA", "FUNAI"}, ids["salvador.pdf"]: {"ANA", "CONAMA"}}
    for theme in themes:
        (doc,) = {href.split("/")[2] for href in theme["cites"]}
        assert names_of[doc] <= set(theme["names"].split(", ")), theme
        assert theme["sources"] and all(h.startswith(f"#/doc/{doc}/1") for h in theme["sources"])
        assert f"[{doc} p." not in theme["text"]  # markers became links with the title
        assert f"{doc[:8]}" not in theme["names"]
    assert not css(browser, "#themes details.theme-why").get_attribute("open")  # reasons behind a toggle

    # the entities the answer names are chips, as the API sent them
    chips = chips_shown(browser)
    assert [i for i, _ in chips] == [e["id"] for e in expected["entities"]]
    assert {"IBAMA", "FUNAI", "ANA", "CONAMA"} <= {e["name"] for e in expected["entities"]}
    assert axe_violations(browser) == []
    shoot(browser, "15-answer-themes")

    # a chip opens the entity's mentions: each one's page, its sentence with the mention marked
    ibama = next(e for e in expected["entities"] if e["name"] == "IBAMA")
    detail = httpx.get(f"{url}/v1/entities/{ibama['id']}", timeout=60).json()
    click_when_ready(browser, f'#entities button[data-entity-id="{ibama["id"]}"]', what="the IBAMA chip")
    dialog = "return document.querySelector('#entity-dialog').dataset.state"
    wait(browser, lambda d: d.execute_script(dialog) == "ready", 20, "the mentions")
    assert css(browser, "#entity-title").text == "IBAMA"
    rows = browser.execute_script(
        "return [...document.querySelectorAll('#entity-mentions li[data-doc-id]')].map((li) => ["
        " li.dataset.docId, +li.dataset.pageNo, +li.dataset.chunkNo,"
        " li.querySelector('mark') && li.querySelector('mark').innerText, li.querySelector('a').innerText])"
    )
    want = [(m["doc_id"], m["page_no"], m["chunk_no"], m["text"]) for m in detail["mentions"]]
    assert [tuple(r[:3]) for r in rows] == [w[:3] for w in want]
    assert [r[3].lower() for r in rows] == [w[3].lower() for w in want]  # the mention, marked
    assert all(r[4] == "amazonas · p.1" for r in rows), rows  # the document's title, not its id
    assert "instituto brasileiro" in css(browser, "#entity-about").text.lower()  # its expansion
    assert axe_violations(browser) == []
    shoot(browser, "16-entity-mentions", full_page=False)

    # a mention opens its page, the passage that mentions it highlighted
    click_when_ready(browser, "#entity-mentions li[data-doc-id] a", what="the first mention")
    wait(browser, lambda d: d.execute_script("return document.body.dataset.view === 'page'"), 20, "the page")
    wait(browser, lambda d: d.find_elements("css selector", "#page-frame .highlight"), 20, "the highlight")
    assert not css(browser, "#entity-dialog").get_attribute("open")
    wait(browser, lambda d: "IBAMA" in css(d, "#page-text mark").text, 20, "the passage marked")


def test_a_portuguese_question_across_the_documents(browser: Any, served: dict[str, Any]) -> None:
    """In Portuguese: the themes head is Portuguese and IBAMA's theme comes first."""
    open_ui(browser, served["url"], "#/ask")
    ask(browser, ABOUT_IBAMA)
    assert css(browser, "#answer-text").text.startswith("Nos documentos")
    themes = themes_shown(browser)
    assert themes and "IBAMA" in themes[0]["names"].split(", ")
    assert any(text.startswith("IBAMA") for _, text in chips_shown(browser))
