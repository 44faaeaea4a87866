"""`carta reindex`: bring documents indexed under another profile up to the configured one.

The text channels (chunks, text-token pages) depend only on the text model, and the
rendered page images are kept, so a switch between `lite` and `visual` needs no upload:
the visual vectors are computed from the stored page images. A document whose text
collection differs (another text model) has to be uploaded again; it is reported.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from PIL import Image

from index.types import Filter
from ingest.pipeline import PAGE_BATCH, point_id

log = logging.getLogger(__name__)


@dataclass
class ReindexReport:
    reindexed: list[str] = field(default_factory=list)  # "tenant/doc_id"
    needs_upload: list[str] = field(default_factory=list)


def reindex(carta, progress: Callable[[str, int, int], None] | None = None) -> ReindexReport:  # noqa: ANN001
    """Re-index every ready document whose recorded profile differs from the current one."""
    signature = carta.ingestor.index_signature
    chunks_name = carta.collections.chunks.name
    report = ReindexReport()
    for tenant, doc_id in carta.registry.indexed_otherwise(signature):
        doc = carta.registry.get(tenant, doc_id)
        if doc is None:
            continue
        if chunks_name not in doc.profile.split(":"):
            report.needs_upload.append(f"{tenant}/{doc_id}")
            continue
        if carta.visual is not None and carta.collections.visual is not None:
            _visual_pages(carta, tenant, doc_id, progress)
        doc.profile = signature
        carta.registry.put(doc)
        report.reindexed.append(f"{tenant}/{doc_id}")
    return report


def _visual_pages(carta, tenant: str, doc_id: str, progress: Callable[[str, int, int], None] | None) -> None:  # noqa: ANN001
    """Visual points of one document from its stored page images, payloads from its text points."""
    flt = Filter({"tenant": tenant, "doc_id": doc_id})
    visual_name = carta.collections.visual.name
    carta.store.delete(visual_name, flt)
    text_pages = {
        int(h.payload["page_no"]): h.payload for h in carta.store.scroll(carta.collections.pages.name, flt)
    }
    any_payload = next(iter(text_pages.values()), None) or next(
        (h.payload for h in carta.store.scroll(carta.collections.chunks.name, flt, limit=1)), {}
    )
    doc = carta.registry.get(tenant, doc_id)
    base = {
        "tenant": tenant,
        "doc_id": doc_id,
        "kind": any_payload.get("kind", "pdf_page" if doc.kind == "pdf" else "image"),
        "title": doc.title,
        "filename": doc.filename,
        "state": "ready",
    }
    records = carta.registry.pages(tenant, doc_id)
    for start in range(0, len(records), PAGE_BATCH):
        batch = []
        for rec in records[start : start + PAGE_BATCH]:
            path = carta.images.path(tenant, doc_id, rec.page_no)
            with Image.open(path) as im:
                image = im.convert("RGB")
            payload = text_pages.get(rec.page_no) or {
                **base,
                "page_no": rec.page_no,
                "text": "",
                "page_size": [rec.width, rec.height],
                "text_source": rec.text_source,
            }
            batch.append((point_id(tenant, doc_id, f"p{rec.page_no}"), image, {**payload, "state": "ready"}))
        carta.store.upsert(visual_name, carta.visual.points(batch))
        if progress:
            progress(doc_id, min(start + PAGE_BATCH, len(records)), len(records))
