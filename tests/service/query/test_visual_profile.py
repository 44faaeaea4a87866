"""The visual profile end to end with tiny random models of the real classes: ingest ->
two-stage page search (pooled prefetch, exact MaxSim rerank in the engine) -> fused
results -> answer; CLIP channel and query by image over HTTP; heat-maps; fallback to the
lite channels; profile switch and `reindex`."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image, ImageDraw

from index.collections import POOLED_VECTOR, VISUAL_VECTOR
from index.types import Branch, Filter
from ingest.upload import IngestRequest
from models.errors import ModelUnavailable
from service.carta import Carta
from service.query.filters import engine_filter
from service.reindex import reindex
from tests.tiny_visual import TinyVisualModels, sample_pdf, visual_settings
from tests.utils.servers import LiveServer


def _png(color: str, shape: str = "disc") -> bytes:
    im = Image.new("RGB", (160, 120), "white")
    draw = ImageDraw.Draw(im)
    (draw.ellipse if shape == "disc" else draw.rectangle)([20, 10, 140, 110], fill=color)
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


@pytest.mark.parametrize("family", ["colidefics3", "colqwen2_5", "colpali"])
def test_visual_pipeline_ingest_two_stage_search_fusion_answer(
    make_carta: Callable[..., Carta], tiny_visual_models: TinyVisualModels, family: str
) -> None:
    carta = make_carta(**visual_settings(tiny_visual_models, family))
    assert carta.profile == "visual" and carta.visual is not None
    assert carta.visual.page.family == family
    steps: list[tuple[str, int, int]] = []
    doc = carta.ingest(
        IngestRequest(sample_pdf(), "report.pdf", "default"),
        lambda p: steps.append((p.stage, p.done, p.total)),
    )
    carta.ingest(IngestRequest(_png("red"), "red.png", "default"))
    assert steps[-1] == ("done", 3, 3)
    visual = carta.collections.visual
    assert visual is not None and carta.store.count(visual.name) == 4  # 3 pages + 1 image
    assert carta.store.count(visual.name, Filter({"state": "ready", "doc_id": doc.document.id})) == 3

    # two stages with a first stage as wide as the collection == exact MaxSim on the full vectors
    query = "population of Recife"
    q = carta.visual.page.embed_queries([query])[0].tolist()
    flt = engine_filter(carta.query(query, "default"))
    exact = carta.store.search(visual.name, VISUAL_VECTOR, q, flt, 4)
    two = carta.store.two_stage_search(
        visual.name, Branch(POOLED_VECTOR, q), Branch(VISUAL_VECTOR, q), flt, 4, 4
    )
    assert [h.id for h in two] == [h.id for h in exact]
    assert [h.score for h in two] == pytest.approx([h.score for h in exact], abs=1e-4)
    # a first stage of 1 reranks only the best pooled candidate
    narrow = carta.store.two_stage_search(
        visual.name, Branch(POOLED_VECTOR, q), Branch(VISUAL_VECTOR, q), flt, 4, 1
    )
    assert len(narrow) == 1

    result = carta.search(carta.query(query, "default", top_k=4))
    channels = {name for page in result.pages for name in page.channels}
    assert {"visual", "clip", "dense", "pages"} <= channels
    visual_ranked = sorted(
        (p for p in result.pages if "visual" in p.channels), key=lambda p: p.channels["visual"].rank
    )
    scores = [p.channels["visual"].score for p in visual_ranked]
    assert scores == sorted(scores, reverse=True)
    assert result.pages[0].doc_id == doc.document.id and result.pages[0].page_no == 1  # text channels agree

    answer = carta.ask(carta.query("What is the population of Recife?", "default"))
    assert not answer.refused and "1.6" in answer.answer
    assert any("visual" in e.channels for e in answer.evidence)


def test_pooled_multivector_is_smaller_than_the_page(
    make_carta: Callable[..., Carta], tiny_visual_models: TinyVisualModels
) -> None:
    carta = make_carta(**visual_settings(tiny_visual_models, "colpali"))
    assert carta.visual is not None and carta.visual.pooling == "blocks"
    page = Image.open(io.BytesIO(_png("blue", "square")))
    pv = carta.visual.page.embed_images([page])[0]
    rows, cols = pv.grids[0]
    others = len(pv.vectors) - len(pv.image_rows)
    blocks = -(-rows // 4) * -(-cols // 4)  # 4 x 4 patches each (edge blocks smaller)
    assert len(carta.visual.pooled(pv)) == blocks + others < len(pv.vectors)
    carta.visual.pooling = "rowcol"
    assert len(carta.visual.pooled(pv)) == rows + cols + others < len(pv.vectors)


@pytest.fixture
def visual_server(serve: Callable[..., LiveServer], tiny_visual_models: TinyVisualModels) -> LiveServer:
    return serve(**visual_settings(tiny_visual_models, "colqwen2_5"))


def test_query_by_image_and_heatmap_over_http(visual_server: LiveServer) -> None:
    carta = visual_server.carta
    red = carta.ingest(IngestRequest(_png("red"), "red.png", "default")).document
    carta.ingest(IngestRequest(_png("green", "square"), "green.png", "default"))
    doc = carta.ingest(IngestRequest(sample_pdf(), "report.pdf", "default")).document
    with httpx.Client(base_url=visual_server.url, timeout=120) as client:
        r = client.post("/v1/search/image", files={"file": ("q.png", _png("red"))}, data={"top_k": "3"})
        assert r.status_code == 200, r.text
        hits = r.json()["results"]
        assert hits[0]["doc_id"] == red.id and set(hits[0]["channels"]) == {"clip"}
        assert hits[0]["channels"]["clip"]["score"] == pytest.approx(1.0, abs=1e-3)  # the same image
        bad = client.post("/v1/search/image", files={"file": ("q.png", b"not an image")})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_image"

        r = client.post("/v1/search", json={"query": "Recife population", "top_k": 5})
        urls = [h["heatmap_url"] for h in r.json()["results"] if "visual" in h["channels"]]
        assert urls and all(u and "query=Recife+population" in u for u in urls)
        assert all(h["heatmap_url"] is None for h in r.json()["results"] if "visual" not in h["channels"])
        r = client.get(f"/v1/documents/{doc.id}/pages/1/heatmap", params={"query": "Recife population"})
        assert r.status_code == 200 and r.headers["content-type"] == "image/png"
        heat = np.asarray(Image.open(io.BytesIO(r.content)).convert("RGB"), dtype=np.int16)
        page = np.asarray(Image.open(carta.images.path("default", doc.id, 1)).convert("RGB"), dtype=np.int16)
        assert heat.shape == page.shape and np.abs(heat - page).mean() > 1  # the overlay is drawn
        missing = client.get(f"/v1/documents/{doc.id}/pages/9/heatmap", params={"query": "x"})
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        assert client.get(f"/v1/documents/{doc.id}/pages/1/heatmap").status_code == 422
        health = client.get("/healthz").json()
        assert health["profile"] == "visual" and health["reindex_needed"] is None


def test_missing_visual_model_fails_at_start_or_falls_back_to_lite(
    make_carta: Callable[..., Carta], tiny_visual_models: TinyVisualModels, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-model"
    settings = {**visual_settings(tiny_visual_models, "colpali"), "visual_model": str(missing)}
    with pytest.raises(ModelUnavailable, match="CARTA_VISUAL_MODEL") as err:
        make_carta(tmp_path / "a", **settings)
    assert str(missing) in str(err.value)

    carta = make_carta(tmp_path / "b", **settings, visual_fallback_lite=True)
    assert (
        carta.profile == "lite"
        and carta.visual is None
        and "CARTA_VISUAL_MODEL" in (carta.visual_error or "")
    )
    assert carta.collections.visual is None
    carta.ingest(IngestRequest(sample_pdf(), "report.pdf", "default"))
    result = carta.search(carta.query("population of Recife", "default"))
    assert result.pages and {"dense", "pages"} <= set(result.pages[0].channels)
    assert not any("visual" in p.channels for p in result.pages)
    with LiveServer(carta) as live, httpx.Client(base_url=live.url, timeout=60) as client:
        assert client.get("/healthz").json()["visual_unavailable"] == carta.visual_error
        r = client.post("/v1/search/image", files={"file": ("q.png", _png("red"))})
        assert r.status_code == 503 and r.json()["error"]["code"] == "model_unavailable"


def test_profile_switch_is_reported_and_reindex_adds_visual_vectors(
    make_carta: Callable[..., Carta], tiny_visual_models: TinyVisualModels, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    lite = make_carta(data_dir, geotag=False, ocr_enabled=False)
    doc = lite.ingest(IngestRequest(sample_pdf(), "report.pdf", "default")).document
    assert lite.reindex_needed() is None
    lite.close()

    carta = make_carta(data_dir, **visual_settings(tiny_visual_models, "colidefics3"))
    message = carta.reindex_needed()
    assert message and "carta reindex" in message and message.startswith("1 document")
    visual = carta.collections.visual
    assert visual is not None and carta.store.count(visual.name) == 0
    report = reindex(carta)
    assert report.reindexed == [f"default/{doc.id}"] and report.needs_upload == []
    assert carta.store.count(visual.name, Filter({"doc_id": doc.id, "state": "ready"})) == 3
    assert carta.reindex_needed() is None
    result = carta.search(carta.query("population of Recife", "default"))
    assert any("visual" in p.channels for p in result.pages)
    # the same upload again is now a duplicate, not a second indexing
    assert carta.ingest(IngestRequest(sample_pdf(), "report.pdf", "default")).created is False
