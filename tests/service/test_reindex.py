"""`carta reindex` rebuilds visual points with the payload ingestion writes (index/payloads.py):
a page without text keeps its tenant, ACL and geo fields, so the engine's ACL filter still
lets a non-admin key of the right group find it."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageDraw

from index.acl import PUBLIC_ACL
from index.types import Filter
from ingest.tables import TABLE_VERSION
from ingest.upload import IngestRequest
from service.carta import Carta
from service.reindex import outdated_tables, reindex
from tests.conftest import corpus_path
from tests.tiny_visual import TinyVisualModels, visual_settings

LAT, LON = -8.0476, -34.877  # Recife


def _png_without_text() -> bytes:
    im = Image.new("RGB", (160, 120), "white")
    ImageDraw.Draw(im).ellipse([20, 10, 140, 110], fill="blue")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def test_reindexed_image_page_without_text_keeps_tenant_acl_and_geo(
    make_carta: Callable[..., Carta], tiny_visual_models: TinyVisualModels, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    lite = make_carta(data_dir, geotag=False, ocr_enabled=False)
    request = IngestRequest(
        _png_without_text(), "mapa.png", "default", metadata={"lat": LAT, "lon": LON}, acl=["equipe"]
    )
    doc = lite.ingest(request).document
    assert lite.store.count(lite.collections.pages.name, Filter({"doc_id": doc.id})) == 0  # no text point
    lite.close()

    carta = make_carta(data_dir, **visual_settings(tiny_visual_models, "colidefics3"))
    assert carta.collections.visual is not None
    assert reindex(carta).reindexed == [f"default/{doc.id}"]
    (point,) = carta.store.scroll(carta.collections.visual.name, Filter({"doc_id": doc.id}))
    payload = point.payload
    assert (payload["tenant"], payload["acl"], payload["state"], payload["kind"]) == (
        "default",
        ["equipe"],
        "ready",
        "image",
    )
    assert payload["location"] == [{"lat": LAT, "lon": LON}]
    assert payload["geo_point"] == {"lat": LAT, "lon": LON}
    assert any(key.startswith("h3_") and payload[key] for key in payload)

    # a non-admin key of the group (ACL tokens: public + its groups) finds it; another key does not
    member = carta.search(carta.query("mapa", "default", acl=[PUBLIC_ACL, "equipe"], geo_prior=False))
    assert doc.id in {p.doc_id for p in member.pages}
    outsider = carta.search(carta.query("mapa", "default", acl=[PUBLIC_ACL, "outra"], geo_prior=False))
    assert doc.id not in {p.doc_id for p in outsider.pages}


def test_reindex_cuts_again_the_tables_an_older_table_chunking_cut(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    """Table chunks without the current TABLE_VERSION (stored by an older chunking, with its
    taller cell boxes) are reported, and cut again from the file when it is given; the
    document keeps its title and ACL."""
    path = corpus_path("pdf", "br_imea_milho_safra_16-17.pdf")
    carta = make_carta(geotag=False, ocr_enabled=False)
    request = IngestRequest(path.read_bytes(), path.name, "default", title="Milho 16/17", acl=["agro"])
    doc = carta.ingest(request).document
    chunks = carta.collections.chunks.name
    points, _ = carta.store.scroll_points(chunks, 1000)
    old = [p for p in points if p.payload.get("doc_id") == doc.id and "table" in p.payload]
    assert old and all(p.payload["table"]["version"] == TABLE_VERSION for p in old)
    for p in old:  # as an older chunking stored them: no version
        p.payload["table"] = {k: v for k, v in p.payload["table"].items() if k != "version"}
    carta.store.upsert(chunks, old)

    key = f"default/{doc.id}"
    assert outdated_tables(carta) == [("default", doc.id)]
    report = reindex(carta, sources=[tmp_path])  # the file is not among the sources
    assert report.tables_outdated == [key] and not report.tables_rebuilt

    report = reindex(carta, sources=[path.parent])
    assert report.tables_rebuilt == [key] and not report.tables_outdated
    assert outdated_tables(carta) == []
    tables = [
        h.payload for h in carta.store.scroll(chunks, Filter({"doc_id": doc.id})) if "table" in h.payload
    ]
    assert tables and all(t["table"]["version"] == TABLE_VERSION and t["acl"] == ["agro"] for t in tables)
    rebuilt = carta.registry.get("default", doc.id)
    assert rebuilt is not None and (rebuilt.status, rebuilt.title, rebuilt.acl) == (
        "ready",
        "Milho 16/17",
        ["agro"],
    )


def test_a_document_an_older_table_reading_read_is_read_again_when_uploaded_again(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    """The registry records the table reading that read a document. One read by an older
    reading (or registered before the record) is listed by `outdated_tables`, and the same
    file uploaded again is read again instead of answered with the old document; uploaded
    once more, it is the existing document."""
    path = corpus_path("pdf", "br_imea_milho_safra_16-17.pdf")
    carta = make_carta(geotag=False, ocr_enabled=False)
    request = IngestRequest(path.read_bytes(), path.name, "default", acl=["agro"])
    first = carta.ingest(request)
    assert first.created and first.document.table_version == TABLE_VERSION
    assert outdated_tables(carta) == []

    older = carta.registry.get("default", first.document.id)
    assert older is not None
    older.table_version = TABLE_VERSION - 1
    carta.registry.put(older)
    assert outdated_tables(carta) == [("default", older.id)]
    assert not carta.ingestor.indexed("default", older.id)  # an upload job would not short-cut it

    again = carta.ingest(request)
    assert again.created and again.document.id == older.id
    stored = carta.registry.get("default", older.id)
    assert stored is not None and (stored.status, stored.table_version) == ("ready", TABLE_VERSION)
    assert outdated_tables(carta) == []
    chunks = carta.store.scroll(carta.collections.chunks.name, Filter({"doc_id": older.id}))
    assert any(h.payload.get("table", {}).get("version") == TABLE_VERSION for h in chunks)
    assert not carta.ingest(request).created
