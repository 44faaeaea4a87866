"""Chart and map pages captioned by the vision LLM at ingestion, through the OpenAI-protocol
test server: which pages, the budget, the cache by page hash, failures, and that the caption
is a searchable chunk citing its page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ingest.captions import CAPTION_PREFIX
from ingest.upload import IngestRequest
from service.carta import Carta, captioner
from service.query.types import SearchQuery
from service.settings import DEFAULT_CAPTION_PAGES
from tests.conftest import settings_for
from tests.openai_protocol import OpenAIProtocolServer, Step, image_parts
from tests.utils.documents import image_bytes, make_pdf

CHART_CAPTION = "Bar chart 'Monthly rainfall in Olinda 2024' in mm: March 320, April 410, May 290."
BODY = " ".join(["The drainage plan of the municipality describes canals, pumps and maintenance crews."] * 4)


def llm_carta(make_carta: Callable[..., Carta], server: OpenAIProtocolServer, **overrides: object) -> Carta:
    """A Carta whose LLM only captions: the document graph's LLM extraction and community
    reports (which would also call the server at ingestion) are off, so the server's
    requests are the captions."""
    return make_carta(
        geotag=False,
        llm_base_url=server.url,
        llm_model="test-model",
        docgraph_llm_chunks=0,
        docgraph_llm_summaries=0,
        **overrides,
    )


def chunks(carta: Carta, tenant: str, doc_id: str, page_no: int) -> list[dict]:
    return carta.page_chunks(tenant, doc_id, page_no)


def test_a_chart_image_is_captioned_and_found_by_its_caption(
    make_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    carta = llm_carta(make_carta, llm_server)
    llm_server.script(Step(text=CHART_CAPTION))
    doc = carta.ingest(IngestRequest(image_bytes(320, 200), "chart.png", "default")).document
    assert len(llm_server.requests) == 1 and len(image_parts(llm_server.requests[0])) == 1
    captions = [c for c in chunks(carta, "default", doc.id, 1) if c["text"].startswith(CAPTION_PREFIX)]
    assert len(captions) == 1 and CHART_CAPTION in captions[0]["text"]
    assert captions[0]["bbox"] == [0.0, 0.0, 320.0, 200.0]  # the whole page
    hits = carta.search(SearchQuery("monthly rainfall in Olinda in April", "default"))
    assert (hits.pages[0].doc_id, hits.pages[0].page_no) == (doc.id, 1)


def test_only_low_text_pages_within_the_budget_and_the_cache_saves_calls(
    make_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    carta = llm_carta(make_carta, llm_server, caption_pages=2)
    # page 1 is prose (no caption); pages 2-4 are figures with a short label: the budget takes 2
    pdf = make_pdf([BODY, "Figure 1", "Figure 2", "Figure 3"], textbox=(50, 50, 550, 800))
    llm_server.script(Step(text="A map of canals."), Step(text="A chart of pumps."))
    doc = carta.ingest(IngestRequest(pdf, "plan.pdf", "default")).document
    assert len(llm_server.requests) == 2
    captioned = {
        p
        for p in range(1, 5)
        if any(c["text"].startswith(CAPTION_PREFIX) for c in chunks(carta, "default", doc.id, p))
    }
    assert captioned == {2, 3}
    # the same pages under another tenant: captions from the cache, no new call
    again = carta.ingest(IngestRequest(pdf, "plan.pdf", "acme")).document
    assert len(llm_server.requests) == 2
    texts = [c["text"] for c in chunks(carta, "acme", again.id, 3)]
    assert f"{CAPTION_PREFIX} A chart of pumps." in texts


def test_captions_are_on_by_default_with_a_vision_llm_only(tmp_path: Path) -> None:
    llm = {"llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "test-model"}
    assert captioner(settings_for(tmp_path)) is None
    assert captioner(settings_for(tmp_path, caption_pages=3)) is None  # no LLM: nothing to caption with
    assert captioner(settings_for(tmp_path, caption_pages=0, **llm)) is None
    assert captioner(settings_for(tmp_path, llm_vision=False, **llm)) is None
    on = captioner(settings_for(tmp_path, **llm))
    assert on is not None and on.max_pages == DEFAULT_CAPTION_PAGES
    on.cache.close()


def test_a_failed_caption_call_keeps_the_page_and_warns(
    make_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer
) -> None:
    carta = llm_carta(make_carta, llm_server, llm_max_retries=0)
    llm_server.script(Step(status=500))
    result = carta.ingest(IngestRequest(image_bytes(64, 48), "chart.png", "default"))
    assert result.document.status == "ready"
    assert any("not captioned" in w for w in result.warnings)
    assert not any(
        c["text"].startswith(CAPTION_PREFIX) for c in chunks(carta, "default", result.document.id, 1)
    )
