"""Ingestion end to end on a real Carta (embedded store, real MiniLM): what gets stored,
idempotence, tenants, progress, refusals that store nothing, failures that leave
nothing half-indexed, and recovery of documents interrupted by a crash."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from index.types import Filter
from ingest.errors import (
    CorruptDocument,
    EmptyFile,
    EncryptedDocument,
    IngestError,
    TooLarge,
    UnsupportedType,
)
from ingest.pipeline import PAGE_BATCH, Progress, content_id
from ingest.upload import IngestRequest
from service.api.errors import error_spec
from service.carta import Carta
from tests.utils.documents import image_bytes, make_pdf

QUARTERLY = "quarterly_report_q3_2024.pdf"  # 4 pages with a text layer


def _pdf(pages: int, marker: str = "Recife") -> bytes:
    return make_pdf(
        [
            [
                f"Página {i} do relatório de enchentes de {marker}.",
                f"Foram registrados {i * 7} pontos de alagamento no bairro {i}.",
            ]
            for i in range(1, pages + 1)
        ]
    )


def _png(width: int, height: int) -> bytes:
    return image_bytes(width, height, color=(240, 240, 240))


def _counts(carta: Carta, tenant: str, doc_id: str, **match: str) -> tuple[int, int]:
    flt = Filter({"tenant": tenant, "doc_id": doc_id, **match})
    return (
        carta.store.count(carta.collections.chunks.name, flt),
        carta.store.count(carta.collections.pages.name, flt),
    )


def _snapshot(carta: Carta, data_dir: Path) -> tuple:
    """Everything a refused upload must not touch."""
    docs = [(d.tenant, d.id, d.status) for d in carta.registry.list("default")]
    files = sorted(str(p.relative_to(data_dir)) for p in (data_dir / "pages").rglob("*"))
    return (
        docs,
        files,
        carta.store.count(carta.collections.chunks.name),
        carta.store.count(carta.collections.pages.name),
    )


def test_ingesting_a_pdf_stores_registry_rows_images_and_ready_points(
    make_carta: Callable[..., Carta], samples_dir: Path
) -> None:
    carta = make_carta()
    data = (samples_dir / QUARTERLY).read_bytes()
    result = carta.ingest(
        IngestRequest(data, f"uploads/{QUARTERLY}", "default", metadata={"cidade": "São Paulo"})
    )

    assert result.created is True
    doc = result.document
    assert doc.id == content_id(data)
    assert doc.status == "ready"
    assert doc.error is None
    assert doc.filename == QUARTERLY  # folders are stripped from the upload name
    assert doc.title == "Northwind Analytics — Q3 2024 Quarterly Report"  # from the PDF metadata
    assert (doc.mime, doc.kind, doc.pages, doc.size_bytes) == ("application/pdf", "pdf", 4, len(data))
    assert doc.metadata == {"cidade": "São Paulo"}
    assert carta.registry.get("default", doc.id) == doc

    pages = carta.registry.pages("default", doc.id)
    assert [p.page_no for p in pages] == [1, 2, 3, 4]
    assert all(p.text_source == "text" and p.chars > 0 and p.chunks > 0 for p in pages)

    names = [p.name for p in carta.images.files_of("default", doc.id)]
    assert names == [f"p000{n}{suffix}.webp" for n in range(1, 5) for suffix in (".thumb", "")]
    for page in pages:
        image = Image.open(io.BytesIO(carta.images.load_bytes("default", doc.id, page.page_no)))
        assert image.format == "WEBP"
        assert image.size == (page.width, page.height)
        thumb = Image.open(io.BytesIO(carta.images.load_bytes("default", doc.id, page.page_no, thumb=True)))
        assert thumb.width == carta.images.thumb_width

    chunks, page_points = _counts(carta, "default", doc.id)
    assert chunks == sum(p.chunks for p in pages)
    assert page_points == 4
    # Every point is flipped to ready once the whole document is indexed.
    assert _counts(carta, "default", doc.id, state="ready") == (chunks, page_points)
    assert _counts(carta, "default", doc.id, state="indexing") == (0, 0)

    hits = carta.store.scroll(carta.collections.chunks.name, Filter({"doc_id": doc.id}))
    by_page: dict[int, list[str]] = {}
    for hit in hits:
        payload = hit.payload
        assert payload["tenant"] == "default"
        assert payload["kind"] == "pdf_page"
        assert payload["filename"] == QUARTERLY
        x0, y0, x1, y1 = payload["bbox"]
        width, height = payload["page_size"]
        assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height
        by_page.setdefault(payload["page_no"], []).append(payload["text"])
    assert {n: len(t) for n, t in by_page.items()} == {p.page_no: p.chunks for p in pages}
    # The page's text layer is what the chunks hold.
    pdf = pymupdf.open(stream=data, filetype="pdf")
    first_words = pdf[0].get_text().split()[:5]
    pdf.close()
    assert " ".join(first_words) in " ".join(" ".join(by_page[1]).split())


def test_same_bytes_again_is_not_indexed_twice(make_carta: Callable[..., Carta], samples_dir: Path) -> None:
    carta = make_carta()
    data_dir = carta.settings.data_dir
    data = (samples_dir / QUARTERLY).read_bytes()
    first = carta.ingest(IngestRequest(data, QUARTERLY, "default"))
    before = _snapshot(carta, data_dir)

    again = carta.ingest(IngestRequest(data, "renamed-copy.pdf", "default", title="Outro título"))
    assert again.created is False and again.seconds == {}  # nothing was done: no stage timed
    assert again.document.id == first.document.id
    assert again.document.filename == QUARTERLY  # the stored document, untouched
    assert again.document.title == first.document.title
    assert _snapshot(carta, data_dir) == before


def test_other_tenant_gets_its_own_copy(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    data = _pdf(2)
    a = carta.ingest(IngestRequest(data, "a.pdf", "prefeitura"))
    b = carta.ingest(IngestRequest(data, "b.pdf", "defesa_civil"))
    assert a.created and b.created
    assert a.document.id == b.document.id  # same content, same id...
    counts_a = _counts(carta, "prefeitura", a.document.id)
    assert counts_a[0] > 0 and counts_a[1] == 2
    assert _counts(carta, "defesa_civil", b.document.id) == counts_a  # ...but separate points
    assert [d.filename for d in carta.registry.list("prefeitura")] == ["a.pdf"]
    assert [d.filename for d in carta.registry.list("defesa_civil")] == ["b.pdf"]
    assert len(carta.images.files_of("defesa_civil", b.document.id)) == 4

    # Deleting one tenant's copy leaves the other's whole.
    carta.delete("prefeitura", a.document.id)
    assert _counts(carta, "prefeitura", a.document.id) == (0, 0)
    assert carta.images.files_of("prefeitura", a.document.id) == []
    assert _counts(carta, "defesa_civil", b.document.id) == counts_a
    assert carta.registry.get("defesa_civil", b.document.id).status == "ready"


def test_progress_counts_pages_up_to_done(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    pages = PAGE_BATCH + 3  # two batches
    events: list[Progress] = []
    result = carta.ingest(IngestRequest(_pdf(pages), "longo.pdf", "default"), events.append)

    assert result.document.pages == pages
    assert len(events) >= 3
    assert all(e.filename == "longo.pdf" and e.total == pages for e in events)
    assert [e.stage for e in events[:-1]] == ["pages"] * (len(events) - 1)
    dones = [e.done for e in events[:-1]]
    assert dones == sorted(set(dones))  # strictly increasing while pages are indexed
    assert 0 < dones[0] < pages
    assert dones[-1] == pages
    assert events[-1] == Progress("longo.pdf", "done", pages, pages)
    # where the time went, per stage (the `carta ingest --json` report): every stage a PDF
    # goes through ran, none is negative; reading and saving images ran on the read-ahead
    # thread, the rest on the caller's, whose stages fit in the document's wall time
    spent = result.seconds
    assert {"read", "images", "wait", "chunk", "embed", "sparse", "store"} <= set(spent)
    assert set(carta.ingestor.indexed_hooks) <= set(spent)  # each hook timed under its own name
    assert all(v >= 0 for v in spent.values()) and spent["embed"] > 0 and spent["read"] > 0
    caller = sum(v for k, v in spent.items() if k not in ("read", "images", "total"))
    assert caller <= spent["total"] + 0.01
    assert spent["read"] <= spent["total"] + 0.01


def test_image_named_like_a_pdf_is_stored_as_an_image(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta(ocr_enabled=False)
    result = carta.ingest(IngestRequest(_png(320, 200), "scan.pdf", "default"))
    doc = result.document
    assert (doc.mime, doc.kind, doc.pages) == ("image/png", "image", 1)
    (page,) = carta.registry.pages("default", doc.id)
    assert (page.width, page.height, page.text_source, page.chunks) == (320, 200, "none", 0)
    # No text: no points, but the page image is kept and the user is told why.
    assert _counts(carta, "default", doc.id) == (0, 0)
    assert len(carta.images.files_of("default", doc.id)) == 2
    assert any("CARTA_OCR_ENABLED" in w for w in result.warnings)


def test_pages_over_the_pixel_cap_are_named_in_the_warnings(make_carta: Callable[..., Carta]) -> None:
    # A4 at 110 dpi is 1.2 million pixels, over a 100,000 cap; a 200 pt square fits
    sizes = [(595, 842), (595, 842), (200, 200), (595, 842)]
    pdf = pymupdf.open()
    for i, (width, height) in enumerate(sizes, 1):
        pdf.new_page(width=width, height=height).insert_text((20, 50), f"Página {i} do relatório do Recife.")
    data = pdf.tobytes()
    pdf.close()
    carta = make_carta(max_render_pixels=100_000, ocr_enabled=False)  # short lines: OCR would be tried
    result = carta.ingest(IngestRequest(data, "mista.pdf", "default"))
    assert result.created and result.document.pages == 4
    assert result.warnings == [
        "pages 1-2, 4: rendered at 32 dpi, not 110 dpi "
        "(a 595 x 842 pt page; CARTA_MAX_RENDER_PIXELS is 100,000 pixels)"
    ]


def test_owner_password_only_pdf_is_indexed_with_a_warning(make_carta: Callable[..., Carta]) -> None:
    # Opens without a password (any reader shows it), but its owner forbids copy and print:
    # indexed, and the uploader is told the restriction was not applied.
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 100), "Relatório restrito de enchentes do Recife.")
    data = pdf.tobytes(
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        owner_pw="dono",
        user_pw="",
        permissions=pymupdf.PDF_PERM_ACCESSIBILITY,
    )
    pdf.close()
    carta = make_carta()
    result = carta.ingest(IngestRequest(data, "restrito.pdf", "default"))
    assert result.created and result.document.status == "ready"
    assert _counts(carta, "default", result.document.id) == (1, 1)
    assert any("owner password" in w and "copying text and printing" in w for w in result.warnings)


def test_user_password_pdf_is_refused_as_encrypted_document(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    with pytest.raises(EncryptedDocument) as info:
        carta.ingest(IngestRequest(_encrypted_pdf(), "sigiloso.pdf", "default"))
    assert (error_spec(info.value).status, error_spec(info.value).code) == (422, "encrypted_document")
    assert carta.registry.list("default") == []


def _encrypted_pdf() -> bytes:
    return make_pdf(["documento sigiloso da defesa civil"], password="senha")


def test_refused_uploads_store_nothing(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta(max_image_pixels=10_000)
    data_dir = carta.settings.data_dir
    kept = carta.ingest(IngestRequest(_pdf(1), "bom.pdf", "default")).document
    before = _snapshot(carta, data_dir)
    assert before[0] == [("default", kept.id, "ready")]

    cases: list[tuple[bytes, type[IngestError], int]] = [
        (b"%PDF-1.7\n isto nao e um pdf de verdade", CorruptDocument, 422),
        (_encrypted_pdf(), EncryptedDocument, 422),
        (b"", EmptyFile, 400),
        ("só texto, nada de PDF".encode(), UnsupportedType, 415),
        (_png(200, 200), TooLarge, 413),  # 40,000 px > 10,000
    ]
    for data, error, status in cases:
        with pytest.raises(error) as info:
            carta.ingest(IngestRequest(data, "ruim.pdf", "default"))
        assert type(info.value) is error and error_spec(info.value).status == status  # the API's answer
        assert _snapshot(carta, data_dir) == before, error.__name__
        if data:
            assert carta.registry.get("default", content_id(data)) is None

    # The stored document is still whole and ready.
    assert _counts(carta, "default", kept.id, state="ready")[1] == 1


def test_upload_over_max_bytes_is_refused_before_reading(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta(max_upload_bytes=1024)
    with pytest.raises(TooLarge) as info:
        carta.ingest(IngestRequest(b"%PDF-1.7\n" + b"0" * 2000, "grande.pdf", "default"))
    assert error_spec(info.value).status == 413
    assert "CARTA_MAX_UPLOAD_BYTES" in str(info.value)
    assert carta.registry.list("default") == []


def test_failure_midway_leaves_nothing_and_a_retry_succeeds(
    make_carta: Callable[..., Carta], monkeypatch: pytest.MonkeyPatch
) -> None:
    carta = make_carta()
    other = carta.ingest(IngestRequest(_pdf(1, marker="Olinda"), "outro.pdf", "default")).document
    other_counts = _counts(carta, "default", other.id)
    data = _pdf(PAGE_BATCH + 2)
    doc_id = content_id(data)

    real_upsert = carta.store.upsert
    calls: list[str] = []

    def flaky_upsert(collection, points):
        calls.append(collection)
        if len(calls) == 3:  # the second batch: the first one is already fully indexed
            raise RuntimeError("disco cheio")
        return real_upsert(collection, points)

    monkeypatch.setattr(carta.ingestor.store, "upsert", flaky_upsert)
    with pytest.raises(RuntimeError, match="disco cheio"):
        carta.ingest(IngestRequest(data, "enchentes.pdf", "default"))
    assert len(calls) == 3

    failed = carta.registry.get("default", doc_id)
    assert failed is not None
    assert failed.status == "failed"
    assert "disco cheio" in (failed.error or "")
    assert _counts(carta, "default", doc_id) == (0, 0)
    assert carta.images.files_of("default", doc_id) == []
    assert not (carta.settings.pages_dir / "default" / doc_id).exists()
    # The other document is untouched.
    assert _counts(carta, "default", other.id) == other_counts
    assert carta.registry.get("default", other.id).status == "ready"

    monkeypatch.setattr(carta.ingestor.store, "upsert", real_upsert)
    retry = carta.ingest(IngestRequest(data, "enchentes.pdf", "default"))
    assert retry.created is True
    assert retry.document.status == "ready"
    assert retry.document.error is None
    assert [p.page_no for p in carta.registry.pages("default", doc_id)] == list(range(1, PAGE_BATCH + 3))
    chunks, pages = _counts(carta, "default", doc_id, state="ready")
    assert pages == PAGE_BATCH + 2 and chunks >= pages
    assert _counts(carta, "default", doc_id) == (chunks, pages)
    assert len(carta.images.files_of("default", doc_id)) == 2 * (PAGE_BATCH + 2)


def test_failed_document_lists_no_pages(
    make_carta: Callable[..., Carta], monkeypatch: pytest.MonkeyPatch
) -> None:
    carta = make_carta()
    data = _pdf(PAGE_BATCH + 1)
    real_upsert = carta.store.upsert
    calls: list[str] = []

    def flaky_upsert(collection, points):
        calls.append(collection)
        if len(calls) == 3:
            raise RuntimeError("falha")
        return real_upsert(collection, points)

    monkeypatch.setattr(carta.ingestor.store, "upsert", flaky_upsert)
    with pytest.raises(RuntimeError):
        carta.ingest(IngestRequest(data, "x.pdf", "default"))
    assert carta.registry.get("default", content_id(data)).status == "failed"
    assert carta.registry.pages("default", content_id(data)) == []


def test_restart_marks_interrupted_document_failed_and_purges_it(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    data_dir = tmp_path / "restart"
    first = make_carta(data_dir)
    kept = first.ingest(IngestRequest(_pdf(1, marker="Olinda"), "fica.pdf", "default")).document
    crashed_bytes = _pdf(2, marker="Jaboatão")
    crashed = first.ingest(IngestRequest(crashed_bytes, "cai.pdf", "default")).document
    kept_counts = _counts(first, "default", kept.id)
    assert _counts(first, "default", crashed.id)[1] == 2
    # As if the process died while indexing it.
    first.registry.set_status("default", crashed.id, "processing")
    first.close()

    second = make_carta(data_dir)
    doc = second.registry.get("default", crashed.id)
    assert doc is not None
    assert doc.status == "failed"
    assert "interrupted" in (doc.error or "")
    assert _counts(second, "default", crashed.id) == (0, 0)
    assert second.images.files_of("default", crashed.id) == []
    # Documents that were ready survive the restart untouched.
    assert second.registry.get("default", kept.id).status == "ready"
    assert _counts(second, "default", kept.id, state="ready") == kept_counts
    assert len(second.images.files_of("default", kept.id)) == 2

    # Uploading the interrupted file again indexes it afresh.
    again = second.ingest(IngestRequest(crashed_bytes, "cai.pdf", "default"))
    assert again.created is True
    assert again.document.id == crashed.id
    assert again.document.status == "ready"
    assert _counts(second, "default", crashed.id, state="ready")[1] == 2
