"""The SQLite document registry: the source of truth for documents and their states."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from index.registry import Document, PageRecord, Registry


def _doc(doc_id: str = "abc123", tenant: str = "default", **fields) -> Document:
    values = dict(
        tenant=tenant,
        id=doc_id,
        title="Relatório Ambiental",
        filename="relatorio.pdf",
        mime="application/pdf",
        kind="pdf",
        size_bytes=1234,
        profile="lite",
    )
    values.update(fields)
    return Document(**values)


def _pages(doc_id: str = "abc123", n: int = 3, tenant: str = "default") -> list[PageRecord]:
    return [PageRecord(tenant, doc_id, i, 910, 1287, "text", 100 * i, i) for i in range(1, n + 1)]


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    reg = Registry(tmp_path / "nested" / "registry.sqlite3")  # parent folders are created
    yield reg
    reg.close()


def test_put_then_get_returns_the_same_document(registry: Registry) -> None:
    doc = _doc(pages=5, status="processing", metadata={"ano": 2024})
    registry.put(doc)
    assert registry.get("default", "abc123") == doc
    assert registry.get("default", "missing") is None
    assert registry.get("other-tenant", "abc123") is None


def test_new_document_defaults(registry: Registry) -> None:
    registry.put(_doc())
    doc = registry.get("default", "abc123")
    assert doc is not None
    assert (doc.status, doc.pages, doc.error, doc.metadata) == ("queued", 0, None, {})
    assert doc.created_at and doc.updated_at


def test_metadata_roundtrips_with_accents_and_nesting(registry: Registry) -> None:
    metadata = {
        "município": "São José do Egito",
        "órgão": "Secretaria de Meio Ambiente — Recife",
        "tags": ["água", "enchente", "Jaboatão"],
        "coordenadas": {"lat": -8.0476, "lon": -34.877},
        "páginas": 12,
        "revisado": True,
        "nota": None,
    }
    registry.put(_doc(metadata=metadata, title="Balanço hídrico — Capibaribe"))
    doc = registry.get("default", "abc123")
    assert doc is not None
    assert doc.metadata == metadata
    assert doc.title == "Balanço hídrico — Capibaribe"


def test_put_replaces_an_existing_row(registry: Registry) -> None:
    registry.put(_doc(title="v1", status="failed", error="boom"))
    registry.put(_doc(title="v2", status="processing"))
    docs = registry.list("default")
    assert len(docs) == 1
    assert (docs[0].title, docs[0].status, docs[0].error) == ("v2", "processing", None)


def test_list_is_per_tenant_and_filters_by_status(registry: Registry) -> None:
    registry.put(_doc("d1", status="ready"))
    registry.put(_doc("d2", status="failed"))
    registry.put(_doc("d3", status="ready"))
    registry.put(_doc("d1", tenant="outro", status="ready"))
    assert sorted(d.id for d in registry.list("default")) == ["d1", "d2", "d3"]
    assert sorted(d.id for d in registry.list("default", status="ready")) == ["d1", "d3"]
    assert [d.id for d in registry.list("default", status="failed")] == ["d2"]
    assert registry.list("default", status="processing") == []
    assert [(d.tenant, d.id) for d in registry.list("outro")] == [("outro", "d1")]
    assert registry.list("ninguem") == []


def test_list_is_ordered_by_creation_time(registry: Registry) -> None:
    registry.put(_doc("zzz", created_at="2024-01-01T00:00:00+00:00"))
    registry.put(_doc("aaa", created_at="2024-03-01T00:00:00+00:00"))
    registry.put(_doc("mmm", created_at="2024-02-01T00:00:00+00:00"))
    assert [d.id for d in registry.list("default")] == ["zzz", "mmm", "aaa"]


def test_set_status_updates_status_error_and_pages(registry: Registry) -> None:
    registry.put(_doc(pages=7, status="processing", updated_at="2000-01-01T00:00:00+00:00"))
    registry.set_status("default", "abc123", "failed", error="RuntimeError: disco cheio")
    doc = registry.get("default", "abc123")
    assert doc is not None
    assert (doc.status, doc.error, doc.pages) == ("failed", "RuntimeError: disco cheio", 7)  # pages kept
    assert doc.updated_at > "2000-01-01"

    registry.set_status("default", "abc123", "ready", pages=9)
    doc = registry.get("default", "abc123")
    assert doc is not None
    assert (doc.status, doc.error, doc.pages) == ("ready", None, 9)  # error cleared


def test_set_status_touches_only_the_given_tenant(registry: Registry) -> None:
    registry.put(_doc(status="processing"))
    registry.put(_doc(tenant="outro", status="processing"))
    registry.set_status("outro", "abc123", "ready")
    assert registry.get("default", "abc123").status == "processing"
    assert registry.get("outro", "abc123").status == "ready"


def test_ids_with_status_spans_tenants(registry: Registry) -> None:
    registry.put(_doc("d1", status="processing"))
    registry.put(_doc("d2", status="ready"))
    registry.put(_doc("d1", tenant="outro", status="processing"))
    assert sorted(registry.ids_with_status("processing")) == [("default", "d1"), ("outro", "d1")]
    assert registry.ids_with_status("queued") == []


def test_pages_roundtrip_in_page_order(registry: Registry) -> None:
    registry.put(_doc())
    pages = _pages(n=3)
    registry.put_pages(list(reversed(pages)))
    assert registry.pages("default", "abc123") == pages
    assert registry.pages("default", "other") == []
    assert registry.pages("outro", "abc123") == []


def test_put_pages_replaces_a_page(registry: Registry) -> None:
    registry.put_pages(_pages(n=2))
    registry.put_pages([PageRecord("default", "abc123", 2, 100, 200, "ocr", 42, 1)])
    assert registry.pages("default", "abc123") == [
        _pages(n=1)[0],
        PageRecord("default", "abc123", 2, 100, 200, "ocr", 42, 1),
    ]


def test_delete_removes_document_and_its_pages_only(registry: Registry) -> None:
    registry.put(_doc("d1"))
    registry.put_pages(_pages("d1"))
    registry.put(_doc("d2"))
    registry.put_pages(_pages("d2"))
    registry.put(_doc("d1", tenant="outro"))
    registry.put_pages(_pages("d1", tenant="outro"))

    registry.delete("default", "d1")
    assert registry.get("default", "d1") is None
    assert registry.pages("default", "d1") == []
    assert registry.get("default", "d2") is not None
    assert len(registry.pages("default", "d2")) == 3
    assert registry.get("outro", "d1") is not None
    assert len(registry.pages("outro", "d1")) == 3
    registry.delete("default", "nao-existe")  # deleting nothing is fine


def test_reopening_the_file_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "registry.sqlite3"
    first = Registry(path)
    doc = _doc(status="ready", pages=3, metadata={"região": "Nordeste"})
    first.put(doc)
    first.put_pages(_pages())
    first.set_status("default", "abc123", "failed", error="interrompido")
    stored = first.get("default", "abc123")
    first.close()

    second = Registry(path)  # the schema is created only if missing
    try:
        assert second.get("default", "abc123") == stored
        assert stored is not None and stored.status == "failed"
        assert second.get("default", "abc123").metadata == {"região": "Nordeste"}
        assert second.pages("default", "abc123") == _pages()
    finally:
        second.close()


def test_concurrent_writers_do_not_lose_rows(registry: Registry) -> None:
    def write(worker: int) -> None:
        for i in range(20):
            registry.put(_doc(f"w{worker}-{i}"))
            registry.put_pages(_pages(f"w{worker}-{i}", n=2))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(registry.list("default")) == 80
    assert all(len(registry.pages("default", f"w{w}-{i}")) == 2 for w in range(4) for i in range(20))


def test_a_failed_page_write_does_not_break_later_writes(tmp_path: Path) -> None:
    path = tmp_path / "registry.sqlite3"
    registry = Registry(path)
    try:
        # A page write that fails halfway (here a NOT NULL violation; disk full, a locked file, ...).
        broken = PageRecord("default", "abc123", 1, None, 1, "text", 1, 1)  # type: ignore[arg-type]
        with pytest.raises(sqlite3.IntegrityError):
            registry.put_pages([broken])
        registry.put(_doc())
        registry.put_pages(_pages())
        # Committed: another connection (another process) sees it.
        other = sqlite3.connect(path)
        try:
            assert other.execute("SELECT count(*) FROM pages").fetchone() == (3,)
            assert other.execute("SELECT count(*) FROM documents").fetchone() == (1,)
        finally:
            other.close()
    finally:
        registry.close()
