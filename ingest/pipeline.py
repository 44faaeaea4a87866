"""Ingest one file: validate, render and read pages, chunk, encode, index, then flip
the document to ready. Idempotent per tenant by content hash; a failure leaves no
points or files behind."""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np

from index.collections import CHUNK_VECTOR, PAGE_VECTOR, Collections
from index.page_images import PageImages
from index.registry import Document, PageRecord, Registry
from index.types import Filter, SparseVec, StorePoint
from index.vector_store import VectorStore
from ingest.chunking import Chunk, chunk_page
from ingest.errors import TooLarge
from ingest.loaders import LoadedPage, LoadOptions, open_document
from ingest.ocr import INSTALL_HINT, tesseract_available
from ingest.sniff import sniff
from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder

log = logging.getLogger(__name__)
_NS = uuid.UUID("6f1c1e4e-8a0c-4b5e-9d3c-2f6a7e0c9b11")
PAGE_BATCH = 8
EXCERPT_CHARS = 1200


@dataclass(frozen=True)
class Progress:
    filename: str
    stage: str  # "pages" while pages are indexed, then "done"
    done: int
    total: int


ProgressFn = Callable[[Progress], None]


@dataclass
class IngestResult:
    document: Document
    created: bool  # False when the same content was already indexed for this tenant
    warnings: list[str] = field(default_factory=list)


def content_id(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def point_id(tenant: str, doc_id: str, suffix: str) -> str:
    return str(uuid.uuid5(_NS, f"{tenant}/{doc_id}/{suffix}"))


class Ingestor:
    def __init__(
        self,
        store: VectorStore,
        registry: Registry,
        images: PageImages,
        text_encoder: TextEncoder,
        sparse_encoder: SparseEncoder,
        collections: Collections,
        options: LoadOptions,
        chunk_chars: int = 900,
        page_max_tokens: int = 512,
        max_upload_bytes: int = 100 * 1024 * 1024,
        profile: str = "lite",
    ) -> None:
        self.store = store
        self.registry = registry
        self.images = images
        self.text = text_encoder
        self.sparse = sparse_encoder
        self.collections = collections
        self.options = options
        self.chunk_chars = chunk_chars
        self.page_max_tokens = page_max_tokens
        self.max_upload_bytes = max_upload_bytes
        # Recorded per document: a document indexed under other collections (another
        # encoder) is indexed again when uploaded again, not skipped as a duplicate.
        self.index_signature = f"{profile}:{collections.chunks.name}"

    def ingest(
        self,
        data: bytes,
        filename: str,
        tenant: str,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        progress: ProgressFn | None = None,
    ) -> IngestResult:
        if len(data) > self.max_upload_bytes:
            raise TooLarge(
                f"the file is {len(data):,} bytes; the limit is {self.max_upload_bytes:,} "
                "(CARTA_MAX_UPLOAD_BYTES)"
            )
        ftype = sniff(data)
        filename = PurePath(filename.replace("\\", "/")).name or "upload"
        doc_id = content_id(data)
        existing = self.registry.get(tenant, doc_id)
        if existing and existing.status == "ready" and existing.profile == self.index_signature:
            return IngestResult(existing, created=False)
        opened = open_document(data, ftype, self.options)  # raises on bad input: nothing stored yet
        if existing:  # an earlier attempt failed or was interrupted: start clean
            self.purge(tenant, doc_id)
        doc = Document(
            tenant=tenant,
            id=doc_id,
            title=title or opened.title or PurePath(filename).stem,
            filename=filename,
            mime=ftype.mime,
            kind=ftype.kind,
            size_bytes=len(data),
            profile=self.index_signature,
            pages=opened.page_count,
            status="processing",
            metadata=metadata or {},
        )
        self.registry.put(doc)
        warnings: list[str] = []
        try:
            batch: list[LoadedPage] = []
            for page in opened.pages():
                batch.append(page)
                if len(batch) == PAGE_BATCH:
                    self._index_pages(doc, batch, warnings)
                    self._report(progress, filename, page.page_no, opened.page_count)
                    batch = []
            if batch:
                self._index_pages(doc, batch, warnings)
                self._report(progress, filename, batch[-1].page_no, opened.page_count)
            ready = Filter({"tenant": tenant, "doc_id": doc_id})
            for spec in self.collections.all():
                self.store.set_payload(spec.name, ready, {"state": "ready"})
        except BaseException as exc:
            self.purge(tenant, doc_id, keep_row=True)
            self.registry.set_status(tenant, doc_id, "failed", error=f"{exc.__class__.__name__}: {exc}")
            raise
        finally:
            opened.close()
        self.registry.set_status(tenant, doc_id, "ready", pages=opened.page_count)
        if progress:
            progress(Progress(filename, "done", opened.page_count, opened.page_count))
        doc = self.registry.get(tenant, doc_id) or doc
        return IngestResult(doc, created=True, warnings=sorted(set(warnings)))

    def purge(self, tenant: str, doc_id: str, keep_row: bool = False) -> None:
        """Remove every point, image and page row of a document, and its registry row
        unless keep_row (a failed document stays listed with its error)."""
        flt = Filter({"tenant": tenant, "doc_id": doc_id})
        for spec in self.collections.all():
            self.store.delete(spec.name, flt)
        self.images.delete_document(tenant, doc_id)
        self.registry.delete(tenant, doc_id, keep_document=keep_row)

    def _ocr_hint(self) -> str:
        if not self.options.ocr_enabled:
            return " (OCR is off: CARTA_OCR_ENABLED=false)"
        if not tesseract_available():
            return f" (OCR unavailable: tesseract is not installed; run: {INSTALL_HINT})"
        return ""

    @staticmethod
    def _report(progress: ProgressFn | None, filename: str, done: int, total: int) -> None:
        if progress:
            progress(Progress(filename, "pages", done, total))

    def _index_pages(self, doc: Document, pages: list[LoadedPage], warnings: list[str]) -> None:
        chunks: list[Chunk] = []
        for page in pages:
            self.images.save(doc.tenant, doc.id, page.page_no, page.image)
            if page.text_source == "none":
                warnings.append(f"some pages have no extractable text{self._ocr_hint()}")
            chunks.extend(chunk_page(page.page_no, page.blocks, self.chunk_chars))
        embeddings = self.text.embed_with_tokens([c.text for c in chunks])
        sparse = self.sparse.embed_documents([c.text for c in chunks])
        base = {
            "tenant": doc.tenant,
            "doc_id": doc.id,
            "kind": _point_kind(doc),
            "title": doc.title,
            "filename": doc.filename,
            "state": "indexing",
        }
        sizes = {p.page_no: [p.width, p.height] for p in pages}
        chunk_points = [
            StorePoint(
                id=point_id(doc.tenant, doc.id, f"c{c.page_no}.{c.index}"),
                vectors={CHUNK_VECTOR: emb.dense.tolist(), **{k: SparseVec(*v) for k, v in sp.items()}},
                payload={
                    **base,
                    "page_no": c.page_no,
                    "chunk_no": c.index,
                    "text": c.text,
                    "bbox": [round(x, 2) for x in c.bbox],
                    "page_size": sizes[c.page_no],
                },
            )
            for c, emb, sp in zip(chunks, embeddings, sparse, strict=True)
        ]
        page_points, records = [], []
        for page in pages:
            page_chunks = [
                (c, e) for c, e in zip(chunks, embeddings, strict=True) if c.page_no == page.page_no
            ]
            text = "\n".join(c.text for c, _ in page_chunks)
            records.append(
                PageRecord(
                    doc.tenant,
                    doc.id,
                    page.page_no,
                    page.image.width,
                    page.image.height,
                    page.text_source,
                    len(text),
                    len(page_chunks),
                )
            )
            if not page_chunks:
                continue  # nothing for the text-token multivector to say about this page
            tokens = np.concatenate([e.tokens for _, e in page_chunks])[: self.page_max_tokens]
            page_points.append(
                StorePoint(
                    id=point_id(doc.tenant, doc.id, f"p{page.page_no}"),
                    vectors={PAGE_VECTOR: tokens.tolist()},
                    payload={
                        **base,
                        "page_no": page.page_no,
                        "text": text[:EXCERPT_CHARS],
                        "page_size": [page.width, page.height],
                        "text_source": page.text_source,
                    },
                )
            )
        self.store.upsert(self.collections.chunks.name, chunk_points)
        self.store.upsert(self.collections.pages.name, page_points)
        self.registry.put_pages(records)


def _point_kind(doc: Document) -> str:
    return "pdf_page" if doc.kind == "pdf" else "image"
