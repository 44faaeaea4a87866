"""`Carta`: the store, registry, encoders, ingestor, retriever and answerer, built once
from Settings and shared by the HTTP API and the CLI."""

from __future__ import annotations

import logging
from typing import Any

from index.collections import lite_collections
from index.page_images import PageImages
from index.registry import Document, Registry
from index.types import Filter
from index.vector_store import open_store
from ingest.loaders import LoadOptions
from ingest.pipeline import Ingestor, IngestResult, ProgressFn
from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder
from service.answer import Answer, ExtractiveAnswerer
from service.retrieval import Retriever, SearchQuery, SearchResult
from service.settings import Settings

log = logging.getLogger(__name__)


class DocumentNotFound(LookupError):
    pass


class Carta:
    def __init__(self, settings: Settings, text_encoder: TextEncoder | None = None) -> None:
        self.settings = settings
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.text = text_encoder or TextEncoder(
            settings.text_model, settings.device, settings.embed_batch_size
        )
        self.sparse = SparseEncoder()
        self.collections = lite_collections(self.text.slug, self.text.dim, self.sparse.names)
        self.store = open_store(settings.data_dir, settings.qdrant_url, settings.qdrant_api_key)
        for spec in self.collections.all():
            self.store.ensure_collection(spec)
        self.registry = Registry(settings.registry_path)
        self.images = PageImages(settings.pages_dir)
        self.ingestor = Ingestor(
            self.store,
            self.registry,
            self.images,
            self.text,
            self.sparse,
            self.collections,
            LoadOptions(
                render_dpi=settings.render_dpi,
                max_render_pixels=settings.max_render_pixels,
                ocr_enabled=settings.ocr_enabled,
                ocr_languages=settings.ocr_languages,
                ocr_dpi=settings.ocr_dpi,
                ocr_min_chars=settings.ocr_min_chars,
                max_pages=settings.max_pages,
                max_image_pixels=settings.max_image_pixels,
            ),
            chunk_chars=settings.chunk_chars,
            page_max_tokens=settings.page_max_tokens,
            max_upload_bytes=settings.max_upload_bytes,
            profile=settings.profile,
        )
        self.retriever = Retriever(
            self.store, self.collections, self.text, self.sparse, settings.prefetch_limit
        )
        self.answerer = ExtractiveAnswerer(self.text, self.sparse, settings.min_relevance)
        self._recover_interrupted()

    def _recover_interrupted(self) -> None:
        """Documents left 'processing' by a crash are purged and marked failed, so no
        partial document is ever visible."""
        for tenant, doc_id in self.registry.ids_with_status("processing"):
            self.ingestor.purge(tenant, doc_id, keep_row=True)
            self.registry.set_status(tenant, doc_id, "failed", error="interrupted; upload the file again")
            log.warning("document %s/%s was interrupted during ingestion; marked failed", tenant, doc_id)

    def ingest(
        self,
        data: bytes,
        filename: str,
        tenant: str,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        progress: ProgressFn | None = None,
    ) -> IngestResult:
        return self.ingestor.ingest(data, filename, tenant, title, metadata, progress)

    def document(self, tenant: str, doc_id: str) -> Document:
        doc = self.registry.get(tenant, doc_id)
        if doc is None:
            raise DocumentNotFound(f"no document {doc_id!r}")
        return doc

    def delete(self, tenant: str, doc_id: str) -> None:
        self.document(tenant, doc_id)
        self.ingestor.purge(tenant, doc_id)

    def page_chunks(self, tenant: str, doc_id: str, page_no: int) -> list[dict[str, Any]]:
        """The chunks of one page in reading order (payload: chunk_no, text, bbox)."""
        flt = Filter({"tenant": tenant, "doc_id": doc_id, "page_no": page_no})
        hits = self.store.scroll(self.collections.chunks.name, flt)
        return sorted((h.payload for h in hits), key=lambda p: p["chunk_no"])

    def search(self, query: SearchQuery) -> SearchResult:
        return self.retriever.search(query)

    def ask(self, query: SearchQuery) -> Answer:
        result = self.retriever.search(query)
        answer = self.answerer.answer(query.text, result)
        answer.timings_ms = result.timings_ms
        return answer

    def close(self) -> None:
        self.store.close()
        self.registry.close()
