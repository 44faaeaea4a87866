"""Ingest one file: validate (ingest/upload.py), render and read pages (its format,
ingest/formats/), chunk, encode, index, then flip the document to ready. Idempotent per
tenant by content hash; a failure leaves no points or files behind."""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePath

import numpy as np
from PIL import Image

from index.collections import CHUNK_VECTOR, GEO_VECTOR, PAGE_VECTOR, POOLED_VECTOR, Collections
from index.page_images import PageImages
from index.payloads import Payload, chunk_payload, page_payload
from index.registry import Document, PageRecord, Registry
from index.types import Filter, SparseVec, StorePoint, VectorValue
from index.vector_store import VectorStore
from ingest.captions import CaptionBudget, Captioner
from ingest.chunking import Chunk, SectionContext, chunk_page
from ingest.formats.vector import GEODATA_SOURCE
from ingest.geotagging import (
    GeoTag,
    GeoTagger,
    choose_anchor,
    coherent,
    footprint_geojson,
    geo_payload,
    hashed_location,
)
from ingest.loaders import LoadedPage, LoadOptions, PointKind
from ingest.map_card import map_card
from ingest.ocr import INSTALL_HINT, tesseract_available
from ingest.read_ahead import ReadAhead
from ingest.tables import TABLE_VERSION
from ingest.timing import StageTimes
from ingest.upload import IngestRequest, open_upload, sniff_upload, validate_upload
from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder

log = logging.getLogger(__name__)
_NS = uuid.UUID("6f1c1e4e-8a0c-4b5e-9d3c-2f6a7e0c9b11")
PAGE_BATCH = 8
DOCUMENT_ANCHOR_CONFIDENCE = 0.5


@dataclass(frozen=True)
class Progress:
    filename: str
    # "pages" while pages are indexed, "entities" while the LLM reads chunks (done/total: chunks), "done"
    stage: str
    done: int
    total: int


ProgressFn = Callable[[Progress], None]
# (point id, page image, payload) triples -> points of the visual collection
VisualPointsFn = Callable[[list[tuple[str, Image.Image, dict]]], list[StorePoint]]
# called with every document that has just become ready (e.g. the graph's page nodes), and the
# ingestion's progress function for the hooks that take long (the LLM's entity extraction)
IndexedHook = Callable[[Document, ProgressFn | None], None]


@dataclass
class IngestResult:
    document: Document
    created: bool  # False when the same content was already indexed for this tenant
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # per stage (ingest/timing.py), + "total"


def content_id(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def point_id(tenant: str, doc_id: str, suffix: str) -> str:
    return str(uuid.uuid5(_NS, f"{tenant}/{doc_id}/{suffix}"))


class Ingestor:
    """Indexes files into the store, registry and page images of one profile."""

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
        geotagger: GeoTagger | None = None,
        visual_points: VisualPointsFn | None = None,
        page_pool: Callable[[np.ndarray], np.ndarray] | None = None,
        captioner: Captioner | None = None,
        read_ahead: int = PAGE_BATCH,
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
        self.geotagger = geotagger
        # Recorded per document: a document indexed under other collections (another
        # encoder) is indexed again when uploaded again, not skipped as a duplicate.
        self.index_signature = ":".join(
            [profile, collections.chunks.name] + ([collections.visual.name] if collections.visual else [])
        )
        self.visual_points = visual_points  # visual profile: page-image vectors
        self.page_pool = page_pool  # CARTA_PAGE_POOLING: the page multivector's pooled first stage
        self.captioner = captioner  # CARTA_CAPTION_PAGES: chart/map pages described by the vision LLM
        self.read_ahead = read_ahead  # CARTA_READ_AHEAD_PAGES: pages read ahead on their own thread
        # Called after a new document turns ready, where the service is built (the graph),
        # each timed as its own stage under its name (ingest/timing.py)
        self.indexed_hooks: dict[str, IndexedHook] = {}

    def validate(self, request: IngestRequest) -> None:
        """Refuse a file `ingest` would refuse (size, type, content, coordinates) without
        storing anything: the upload-time check of a job."""
        validate_upload(request, self.options, self.max_upload_bytes)

    def indexed(self, tenant: str, doc_id: str) -> Document | None:
        """The document when it is ready under this profile's collections, else None."""
        existing = self.registry.get(tenant, doc_id)
        return existing if existing and self._is_current(existing) else None

    def _is_current(self, doc: Document) -> bool:
        """Ready under these collections and read by the current table reading: a document
        an older one read is read again (its new tables, charts and cell boxes)."""
        signed = doc.profile == self.index_signature
        return doc.status == "ready" and signed and doc.table_version >= TABLE_VERSION

    def ingest(self, request: IngestRequest, progress: ProgressFn | None = None) -> IngestResult:
        """Index one file (an IngestError, with nothing stored, when it is refused); the
        same content again for the tenant answers the existing document."""
        times = StageTimes()
        ftype = sniff_upload(request, self.max_upload_bytes)
        tenant, filename, data = request.tenant, request.safe_filename, request.data
        doc_id = content_id(data)
        existing = self.registry.get(tenant, doc_id)
        if existing and self._is_current(existing):
            return IngestResult(existing, created=False)
        with times.stage("read"):
            upload = open_upload(request, ftype, self.options)  # raises on bad input: nothing stored yet
            opened = upload.document
            # a map's card (ingest/map_card.py) is its first page's text; it adds region tags
            card = map_card(request, upload, self.geotagger.gazetteer if self.geotagger else None)
        tags = upload.document_tags + (card.region_tags if card else [])
        geo = _GeoContext(tags, upload.loader.point_kind(upload.document_tags))
        if existing:  # an earlier attempt failed or was interrupted: start clean
            self.purge(tenant, doc_id)
        doc = Document(
            tenant=tenant,
            id=doc_id,
            title=request.title or opened.title or PurePath(filename).stem,
            filename=filename,
            mime=ftype.mime,
            kind=ftype.kind,
            size_bytes=len(data),
            profile=self.index_signature,
            pages=opened.page_count,
            status="processing",
            metadata=request.metadata,
            acl=sorted(set(request.acl)),
            table_version=TABLE_VERSION,
        )
        self.registry.put(doc)
        warnings: list[str] = list(opened.warnings)
        page_notes: dict[str, list[int]] = {}  # a page's warning -> the pages it applies to
        sections = SectionContext(doc.title)  # the chunks' context header, across batches
        captions = self.captioner.budget() if self.captioner else None
        pages = self._page_reader(opened.pages(), doc, times)
        try:
            batch: list[LoadedPage] = []
            while True:
                with times.stage("wait" if isinstance(pages, ReadAhead) else "read"):
                    page = next(pages, None)
                    if page is None:
                        break
                    page = card.on(page) if card else page
                for note in page.warnings:
                    page_notes.setdefault(note, []).append(page.page_no)
                batch.append(page)
                if len(batch) == PAGE_BATCH:
                    self._index_pages(doc, batch, warnings, geo, sections, times, captions)
                    self._report(progress, filename, page.page_no, opened.page_count)
                    batch = []
            if batch:
                self._index_pages(doc, batch, warnings, geo, sections, times, captions)
                self._report(progress, filename, batch[-1].page_no, opened.page_count)
            ready = Filter({"tenant": tenant, "doc_id": doc_id})
            with times.stage("store"):
                for spec in self.collections.all():
                    self.store.set_payload(spec.name, ready, {"state": "ready"})
        except BaseException as exc:
            _stop_reading(pages)  # else it could save a page image after the purge
            self.purge(tenant, doc_id, keep_row=True)
            self.registry.set_status(tenant, doc_id, "failed", error=f"{exc.__class__.__name__}: {exc}")
            raise
        finally:
            _stop_reading(pages)  # the reading thread is done with the document before it closes
            opened.close()
        self.registry.set_status(
            tenant, doc_id, "ready", pages=opened.page_count, footprint=footprint_geojson(geo.all_tags)
        )
        doc = self.registry.get(tenant, doc_id) or doc
        for name, hook in self.indexed_hooks.items():
            with times.stage(name):
                hook(doc, progress)
        if progress:
            progress(Progress(filename, "done", opened.page_count, opened.page_count))
        warnings.extend(f"{_page_label(pages)}: {note}" for note, pages in page_notes.items())
        log.info("indexed %s: %d pages in %s", filename, opened.page_count, times.summary())
        return IngestResult(doc, created=True, warnings=sorted(set(warnings)), seconds=times.rounded())

    def _page_reader(
        self, loaded: Iterator[LoadedPage], doc: Document, times: StageTimes
    ) -> Iterator[LoadedPage]:
        """The document's pages, read (and their images saved) on the read-ahead thread
        when CARTA_READ_AHEAD_PAGES > 0, else on this one as the loop asks for them."""
        if self.read_ahead <= 0:
            return loaded

        def timed() -> Iterator[LoadedPage]:
            while True:
                with times.stage("read"):  # the loaders render, read, OCR and find tables here
                    page = next(loaded, None)
                if page is None:
                    return
                yield page

        def save_image(page: LoadedPage) -> None:
            with times.stage("images"):
                self.images.save(doc.tenant, doc.id, page.page_no, page.image)

        return ReadAhead(timed(), self.read_ahead, prepare=save_image)

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

    def _index_pages(
        self,
        doc: Document,
        pages: list[LoadedPage],
        warnings: list[str],
        geo: _GeoContext,
        sections: SectionContext,
        times: StageTimes,
        captions: CaptionBudget | None = None,
    ) -> None:
        chunks: list[Chunk] = []
        if self.read_ahead <= 0:  # else saved as they were read (_page_reader)
            with times.stage("images"):
                for page in pages:
                    self.images.save(doc.tenant, doc.id, page.page_no, page.image)
        with times.stage("chunk"):
            for page in pages:
                if page.text_source == "none":
                    warnings.append(f"some pages have no extractable text{self._ocr_hint()}")
                chunks.extend(chunk_page(page.page_no, page.blocks, self.chunk_chars, page.tables, sections))
        if self.captioner and captions:
            with times.stage("caption"):
                chunks.extend(self.captioner.chunks(pages, geo.point_kind, chunks, captions, warnings))
        texts = [c.text for c in chunks]
        indexed = [c.indexed_text() for c in chunks]  # with the context header
        with times.stage("embed"):
            embeddings = self.text.embed_with_tokens(indexed, bulk=True)  # a batch of pages: torch
        with times.stage("sparse"):
            sparse = self.sparse.embed_documents(indexed)
        with times.stage("geotag"):
            chunk_tags = self._chunk_tags(texts, geo)
        page_tags = {
            p.page_no: geo.document_tags
            + [t for c, ts in zip(chunks, chunk_tags, strict=True) if c.page_no == p.page_no for t in ts]
            for p in pages
        }
        for tags in page_tags.values():
            if geo.anchor and not any(t.is_local for t in tags):
                # a page naming no place is about where its document is (a table page of a
                # Recife report is still about Recife), with a weak, labelled tag
                tags.append(GeoTag(*geo.anchor, "document", "document anchor", DOCUMENT_ANCHOR_CONFIDENCE))
        sizes = {p.page_no: [p.width, p.height] for p in pages}
        chunk_points = []
        for c, emb, sp, tags in zip(chunks, embeddings, sparse, chunk_tags, strict=True):
            # a chunk naming no place of its own is about where its page is
            located = geo_payload(self._chunk_geo(c.text, tags, page_tags[c.page_no], geo))
            vectors: dict[str, VectorValue] = {
                CHUNK_VECTOR: emb.dense.tolist(),
                **{k: SparseVec(*v) for k, v in sp.items()},
            }
            if (hashed := hashed_location(located)) is not None:
                vectors[GEO_VECTOR] = SparseVec(*hashed)
            payload = chunk_payload(
                doc,
                kind=geo.point_kind,
                page_no=c.page_no,
                chunk_no=c.index,
                text=c.text,
                bbox=c.bbox,
                page_size=sizes[c.page_no],
                geo=located,
                table=c.table,
            )
            payload["context"] = c.context  # embedded with the text, not part of what is quoted
            chunk_id = point_id(doc.tenant, doc.id, f"c{c.page_no}.{c.index}")
            chunk_points.append(StorePoint(chunk_id, vectors, payload))
        page_points: list[StorePoint] = []
        records: list[PageRecord] = []
        visual_inputs: list[tuple[str, Image.Image, Payload]] = []
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
            geo.all_tags.extend(page_tags[page.page_no])
            payload = page_payload(
                doc,
                kind=geo.point_kind,
                page_no=page.page_no,
                text=text,
                page_size=[page.width, page.height],
                text_source=page.text_source,
                geo=geo_payload(page_tags[page.page_no]),
            )
            page_id = point_id(doc.tenant, doc.id, f"p{page.page_no}")
            visual_inputs.append((page_id, page.image, payload))
            if not page_chunks:
                continue  # nothing for the text-token multivector to say about this page
            tokens = np.concatenate([e.tokens for _, e in page_chunks])[: self.page_max_tokens]
            page_vectors: dict[str, VectorValue] = {PAGE_VECTOR: tokens.tolist()}
            if self.page_pool:
                page_vectors[POOLED_VECTOR] = self.page_pool(tokens).tolist()
            page_points.append(StorePoint(page_id, page_vectors, payload))
        with times.stage("store"):
            self.store.upsert(self.collections.chunks.name, chunk_points)
            self.store.upsert(self.collections.pages.name, page_points)
        if self.visual_points and self.collections.visual:
            with times.stage("embed"):  # the visual profile's page-image encoder
                visual = self.visual_points(visual_inputs)
            with times.stage("store"):
                self.store.upsert(self.collections.visual.name, visual)
        with times.stage("store"):
            self.registry.put_pages(records)

    @staticmethod
    def _chunk_geo(text: str, own: list[GeoTag], page: list[GeoTag], geo: _GeoContext) -> list[GeoTag]:
        """A chunk's tags: its own plus the file-wide ones; a chunk naming no place is about
        where its page is. The features of a GeoJSON/KML file each tag only the chunk that
        lists them (one block per feature), not every chunk of the file."""
        document = [t for t in geo.document_tags if t.source != GEODATA_SOURCE or t.label in text]
        if own:
            return document + own
        if any(t.source == GEODATA_SOURCE for t in geo.document_tags):
            return document
        return page

    def _chunk_tags(self, texts: list[str], geo: _GeoContext) -> list[list[GeoTag]]:
        """Geo tags found in each chunk's text; the document's country (from its first
        batch) steers place-name disambiguation."""
        if self.geotagger is None or any(t.source in ("raster", GEODATA_SOURCE) for t in geo.document_tags):
            # a map's georeference (or a vector file's geometries) outranks words read off it
            return [[] for _ in texts]
        if geo.country_hint is None:
            geo.country_hint = self.geotagger.country_hint("\n".join(texts)[:20_000]) or ""
        found = [self.geotagger.tags(t, geo.country_hint or None) for t in texts]
        if geo.anchor is None:  # from the first batch of pages, like the country
            geo.anchor = choose_anchor([geo.document_tags, *found])
        return [coherent(tags, geo.anchor) for tags in found]


def _stop_reading(pages: Iterator[LoadedPage]) -> None:
    """Stop and join the read-ahead thread, if the pages come from one (again: a no-op)."""
    if isinstance(pages, ReadAhead):
        pages.close()


def _page_label(pages: list[int]) -> str:
    """A label for ascending page numbers: "page 3", or "pages 1-4, 7"."""
    if len(pages) == 1:
        return f"page {pages[0]}"
    runs: list[list[int]] = []
    for page in pages:
        if runs and page == runs[-1][-1] + 1:
            runs[-1].append(page)
        else:
            runs.append([page])
    return "pages " + ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


@dataclass
class _GeoContext:
    """Geo state of one ingestion: tags of the whole file (raster footprint, EXIF,
    metadata), the kind of point its pages become (a georeferenced image is a map), the
    document's country, every tag seen (for the footprint)."""

    document_tags: list[GeoTag]
    point_kind: PointKind
    country_hint: str | None = None
    anchor: tuple[float, float] | None = None
    all_tags: list[GeoTag] = field(default_factory=list)
