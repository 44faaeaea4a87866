"""`carta reindex`: bring documents indexed under another profile up to the configured one.

The text channels (chunks, text-token pages) depend only on the text model, and the
rendered page images are kept, so a switch between `lite` and `visual` needs no upload:
the visual vectors are computed from the stored page images. A document whose text
collection differs (another text model) has to be uploaded again; it is reported.

A visual point takes the payload of the page's text-token point, built at ingestion by
index/payloads.py. A page without one (an image or scan without text) gets a payload from
the same builder: tenant, ACL, kind and the geo fields of the document's metadata
position. (Its raster georeference or EXIF position is not kept for a page without text
in the lite profile, so those cannot come back without an upload.)

Pages stored before the pooled first stage (CARTA_PAGE_POOLING) get their pooled vectors
from their stored token vectors (`add_pooled_vectors`). The engine cannot add a vector to
an existing collection, so the page points are copied into a new collection with it, and
back under the old name; the copy is the source of truth while the old one is rebuilt, so
an interrupted run resumes on the next `carta reindex` without losing a page.

Documents read by an older table reading (the registry's `table_version`, or a table
chunk's payload "version", below ingest.tables.TABLE_VERSION) are read again from their
file: the data dir keeps page images, not the uploaded files, so `sources` (files or
folders; `carta reindex --source`) are matched to documents by content id, and such a
document is ingested again with its title, metadata and ACL. Uploading the same file again
reads it again too (ingest/pipeline.py). One whose file is not given is reported
(`tables_outdated`): its old cells still answer, with their old boxes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from PIL import Image

from index.collections import PAGE_VECTOR, POOLED_VECTOR, lite_collections
from index.payloads import Payload, page_payload
from index.registry import Document
from index.types import Filter, StorePoint
from index.vector_store import VectorStore
from ingest.formats import point_kind
from ingest.geotagging import geo_payload
from ingest.loaders import FileType
from ingest.pipeline import PAGE_BATCH, content_id, point_id
from ingest.tables import TABLE_VERSION
from ingest.upload import IngestRequest, metadata_tags
from service.carta import Carta, page_pooler

log = logging.getLogger(__name__)
ReindexProgress = Callable[[str, int, int], None]  # (doc_id, pages done, pages in all)


@dataclass
class ReindexReport:
    """Which documents were brought up to the profile and which need an upload."""

    reindexed: list[str] = field(default_factory=list)  # "tenant/doc_id"
    needs_upload: list[str] = field(default_factory=list)
    pooled_pages: int = 0  # pages given their pooled first-stage vectors
    tables_rebuilt: list[str] = field(default_factory=list)  # table chunks cut again from the file
    tables_outdated: list[str] = field(default_factory=list)  # older table chunks, file not given


COPY_BATCH = 64  # page points per scroll/upsert while copying (~25 MB of token vectors)
MIGRATION_SUFFIX = "__pooling"  # the copy of the page collection while it is rebuilt


def reindex(
    carta: Carta, progress: ReindexProgress | None = None, sources: Iterable[Path] = ()
) -> ReindexReport:
    """Add the pages' pooled vectors if they lack them, cut again the table chunks of an
    older table chunking from the files in `sources`, then re-index every ready document
    whose recorded profile differs from the current one."""
    signature = carta.ingestor.index_signature
    chunks_name = carta.collections.chunks.name
    report = ReindexReport(pooled_pages=add_pooled_vectors(carta, progress))
    rebuild_tables(carta, report, sources)
    for tenant, doc_id in carta.registry.indexed_otherwise(signature):
        doc = carta.registry.get(tenant, doc_id)
        if doc is None:
            continue
        if chunks_name not in doc.profile.split(":"):
            report.needs_upload.append(f"{tenant}/{doc_id}")
            continue
        if carta.visual is not None and carta.collections.visual is not None:
            _visual_pages(carta, doc, progress)
        doc.profile = signature
        carta.registry.put(doc)
        report.reindexed.append(f"{tenant}/{doc_id}")
    return report


def outdated_tables(carta: Carta) -> list[tuple[str, str]]:
    """Ready documents read by an older table reading than TABLE_VERSION: recorded so in the
    registry, or holding a table chunk an older chunking cut."""
    out = []
    for (tenant, doc_id), version in carta.registry.table_versions().items():
        if version < TABLE_VERSION:
            out.append((tenant, doc_id))
            continue
        chunks = carta.store.scroll(
            carta.collections.chunks.name, Filter({"tenant": tenant, "doc_id": doc_id})
        )
        tables = [h.payload["table"] for h in chunks if isinstance(h.payload.get("table"), dict)]
        if any(int(t.get("version") or 1) < TABLE_VERSION for t in tables):
            out.append((tenant, doc_id))
    return sorted(out)


def rebuild_tables(carta: Carta, report: ReindexReport, sources: Iterable[Path]) -> None:
    """Ingest again, from its file among `sources`, each document whose table chunks an
    older table chunking cut; the others are listed in `report.tables_outdated`."""
    outdated = outdated_tables(carta)
    if not outdated:
        return
    wanted = {doc_id for _, doc_id in outdated}
    files: dict[str, Path] = {}
    for path in _files(sources):
        doc_id = content_id(path.read_bytes())
        if doc_id in wanted:
            files.setdefault(doc_id, path)
    for tenant, doc_id in outdated:
        doc = carta.registry.get(tenant, doc_id)
        path = files.get(doc_id)
        if doc is None or path is None:
            report.tables_outdated.append(f"{tenant}/{doc_id}")
            continue
        carta.ingestor.purge(tenant, doc_id)
        request = IngestRequest(
            path.read_bytes(),
            doc.filename,
            tenant,
            title=doc.title,
            metadata=doc.metadata,
            source_path=path,
            acl=doc.acl,
        )
        carta.ingest(request)
        report.tables_rebuilt.append(f"{tenant}/{doc_id}")
        log.info("cut the tables of %s/%s again from %s", tenant, doc_id, path)


def _files(sources: Iterable[Path]) -> Iterable[Path]:
    for source in sources:
        if source.is_dir():
            yield from sorted(p for p in source.rglob("*") if p.is_file())
        elif source.is_file():
            yield source


def _visual_pages(carta: Carta, doc: Document, progress: ReindexProgress | None) -> None:
    """Visual points of one document from its stored page images."""
    assert carta.visual is not None and carta.collections.visual is not None  # checked by the caller
    flt = Filter({"tenant": doc.tenant, "doc_id": doc.id})
    visual_name = carta.collections.visual.name
    carta.store.delete(visual_name, flt)
    text_pages = {
        int(h.payload["page_no"]): h.payload for h in carta.store.scroll(carta.collections.pages.name, flt)
    }
    records = carta.registry.pages(doc.tenant, doc.id)
    without_text = _payload_without_text(carta, doc, text_pages)
    for start in range(0, len(records), PAGE_BATCH):
        batch = []
        for rec in records[start : start + PAGE_BATCH]:
            with Image.open(carta.images.path(doc.tenant, doc.id, rec.page_no)) as im:
                image = im.convert("RGB")
            stored = text_pages.get(rec.page_no)
            payload = (
                {**stored, "state": "ready"}
                if stored
                else without_text(rec.page_no, [rec.width, rec.height], rec.text_source)
            )
            batch.append((point_id(doc.tenant, doc.id, f"p{rec.page_no}"), image, payload))
        carta.store.upsert(visual_name, carta.visual.points(batch))
        if progress:
            progress(doc.id, min(start + PAGE_BATCH, len(records)), len(records))


def _payload_without_text(
    carta: Carta, doc: Document, text_pages: dict[int, Payload]
) -> Callable[[int, list[float], str], Payload]:
    """The payload builder for pages of `doc` that have no text point: the point kind the
    document's other points carry (else its format's), the metadata position's geo fields."""
    stored = next(iter(text_pages.values()), None) or next(
        (
            h.payload
            for h in carta.store.scroll(
                carta.collections.chunks.name, Filter({"tenant": doc.tenant, "doc_id": doc.id}), limit=1
            )
        ),
        None,
    )
    tags = metadata_tags(doc.metadata)  # validated at ingestion
    kind = stored["kind"] if stored else point_kind(FileType(doc.mime, doc.kind), tags)
    geo = geo_payload(tags)

    def build(page_no: int, page_size: list[float], text_source: str) -> Payload:
        return page_payload(
            doc,
            kind=kind,
            page_no=page_no,
            text="",
            page_size=page_size,
            text_source=text_source,
            geo=geo,
            state="ready",
        )

    return build


def add_pooled_vectors(carta: Carta, progress: ReindexProgress | None = None) -> int:
    """Give every page point its pooled vector (CARTA_PAGE_POOLING on, pages stored without
    it); returns the pages copied (0 when there is nothing to do). Also finishes a run that
    was interrupted after the old collection was dropped. The running Carta keeps searching
    exactly until it is opened again."""
    if carta.settings.page_pooling == "off":
        return 0
    store, old = carta.store, carta.collections.pages
    copy_name = old.name + MIGRATION_SUFFIX
    spec = lite_collections(carta.text.slug, carta.text.dim, carta.sparse.names, page_pooled=True).pages
    copy = replace(spec, name=copy_name)
    pooler = page_pooler(carta.settings)
    if POOLED_VECTOR in (store.stored_vectors(old.name) or ()):
        if store.stored_vectors(copy_name) is None:
            return 0  # nothing to do
        store.ensure_collection(copy)  # an interrupted run: the copy holds every page
        moved = _copy_pages(store, copy_name, spec.name, None, progress)
        store.drop_collection(copy_name)
        return moved
    store.drop_collection(copy_name)  # a copy from an interrupted run (the old one is whole)
    store.ensure_collection(copy)
    total = _copy_pages(store, old.name, copy_name, pooler, progress)
    store.drop_collection(old.name)
    store.ensure_collection(spec)
    _copy_pages(store, copy_name, spec.name, None, progress)
    store.drop_collection(copy_name)
    log.info("added pooled vectors to %d pages of %s", total, spec.name)
    return total


def _copy_pages(
    store: VectorStore,
    source: str,
    target: str,
    pooler: Callable[[np.ndarray], np.ndarray] | None,
    progress: ReindexProgress | None,
) -> int:
    """Copy every point of `source` into `target`, adding the pooled vector when `pooler`."""
    total = store.count(source)
    done, offset = 0, None
    while True:
        points, offset = store.scroll_points(source, COPY_BATCH, offset)
        if pooler is not None:
            points = [
                StorePoint(
                    p.id,
                    {
                        **p.vectors,
                        POOLED_VECTOR: pooler(np.asarray(p.vectors[PAGE_VECTOR], np.float32)).tolist(),
                    },
                    p.payload,
                )
                for p in points
            ]
        store.upsert(target, points)
        done += len(points)
        if progress:
            progress(f"pages -> {target}", done, total)
        if offset is None or not points:
            return done
