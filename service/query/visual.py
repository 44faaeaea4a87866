"""The visual profile: page-image vectors next to the lite channels.

- Ingestion: every page image gets a ColPali-family multivector (stored in full, fp16,
  no HNSW), a pooled multivector (the first stage) and a CLIP vector, in batches.
- Search: channels "visual" and "clip" (service/query/channels/visual.py, clip.py) join
  the page-level RRF. The profile is loaded from Settings by service.carta.load_visual.
- Query by image: the image's CLIP vector against the same CLIP vectors.
- Profile changes: each document records the profile and collections it was indexed
  under; documents indexed otherwise are reported, and `reindex` brings them up to
  date from the stored page images (the text channels do not change between profiles).
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from PIL import Image

from index.collections import CLIP_VECTOR, POOLED_VECTOR, VISUAL_VECTOR, Collections
from index.page_images import PageImages
from index.pooling import Pooling, pool
from index.types import CollectionSpec, Filter, Hit, StorePoint
from index.vector_store import VectorStore
from models.clip_encoder import ClipEncoder
from models.errors import ModelUnavailable
from models.page_encoder import ColPageEncoder, PageVectors
from service.query.filters import engine_filter
from service.query.fusion import fuse_pages
from service.query.heatmap import render_heatmap
from service.query.types import SearchQuery, SearchResult


@dataclass
class VisualProfile:
    """The loaded visual encoders and how pages are stored and searched with them."""

    page: ColPageEncoder
    clip: ClipEncoder
    collection: CollectionSpec
    pooling: Pooling = "blocks"
    pool_factor: int = 16
    prefetch: int = 200

    # ------------------------------------------------------------------ ingestion
    def points(
        self,
        pages: Sequence[tuple[str, Image.Image, dict]],
        progress: Callable[[int, int], None] | None = None,
    ) -> list[StorePoint]:
        """Visual points for (point id, page image, payload) triples."""
        images = [image for _, image, _ in pages]
        multi = self.page.embed_images(images, progress)
        clip = self.clip.embed_images(images)
        return [
            StorePoint(
                point_id,
                {
                    VISUAL_VECTOR: pv.vectors.tolist(),
                    POOLED_VECTOR: self.pooled(pv).tolist(),
                    CLIP_VECTOR: clip[i].tolist(),
                },
                payload,
            )
            for i, ((point_id, _, payload), pv) in enumerate(zip(pages, multi, strict=True))
        ]

    def pooled(self, pv: PageVectors) -> np.ndarray:
        return pool(pv.vectors, self.pooling, self.pool_factor, pv.image_rows, pv.grids)

    # ------------------------------------------------------------------ search
    def image_hits(self, store: VectorStore, image: Image.Image, flt: Filter, limit: int) -> list[Hit]:
        """Pages and images that look like `image` (CLIP). The ColPali encoders are trained
        for text queries against page images, so they are not used for image queries."""
        v = self.clip.embed_images([image])[0].tolist()
        return store.search(self.collection.name, CLIP_VECTOR, v, flt, limit)


def with_visual(collections: Collections, visual: VisualProfile | None) -> Collections:
    """The lite collections plus the visual profile's page-image collection, if loaded."""
    if visual is None:
        return collections
    return Collections(collections.pages, collections.chunks, visual.collection)


def reindex_message(n: int, signature: str) -> str:
    """What to tell the user when `n` documents were indexed under another profile."""
    return (
        f"{n} document(s) were indexed under another profile or model than the configured one ({signature}); "
        "run `carta reindex` (or upload them again) so that every channel covers them"
    )


def decode_image(data: bytes, max_pixels: int) -> Image.Image:
    """A query image, refused (ValueError) if not an image or too large."""
    try:
        image = Image.open(io.BytesIO(data))
        if image.width * image.height > max_pixels:
            raise ValueError(
                f"the image has {image.width * image.height:,} pixels; the limit is {max_pixels:,}"
            )
        image.load()
    except (OSError, Image.DecompressionBombError) as exc:
        raise ValueError(f"not a readable image: {exc}") from exc
    return image.convert("RGB")


class VisualService(Protocol):
    """What query by image and heat-maps need from the service (service.carta.Carta)."""

    visual: VisualProfile | None
    visual_error: str | None
    store: VectorStore
    images: PageImages


def search_by_image(
    carta: VisualService,
    image: Image.Image,
    tenant: str,
    top_k: int = 5,
    acl: list[str] | None = None,
) -> SearchResult:
    """Query by image: CLIP neighbours of `image` among pages and images, as a SearchResult."""
    if carta.visual is None:
        raise ModelUnavailable(
            "query by image needs the visual profile: set CARTA_PROFILE=visual with CARTA_VISUAL_MODEL and "
            f"CARTA_CLIP_MODEL{' (' + carta.visual_error + ')' if carta.visual_error else ''}"
        )
    t0 = time.perf_counter()
    flt = engine_filter(SearchQuery("", tenant, acl=acl))
    hits = carta.visual.image_hits(carta.store, image, flt, top_k * 2)
    pages = fuse_pages({"clip": hits}, top_k)
    timings = {"channels": round((time.perf_counter() - t0) * 1e3, 2)}
    return SearchResult("(image)", pages, np.zeros(0, dtype=np.float32), timings)


def page_heatmap(carta: VisualService, tenant: str, doc_id: str, page_no: int, query: str) -> bytes:
    """The heat-map PNG of `query` over one stored page image (visual profile)."""
    if carta.visual is None:
        raise ModelUnavailable(
            "heat-maps need the visual profile: set CARTA_PROFILE=visual with CARTA_VISUAL_MODEL"
        )
    path = carta.images.path(tenant, doc_id, page_no)
    if not path.exists():
        raise FileNotFoundError(f"document {doc_id!r} has no page {page_no}")
    with Image.open(path) as im:
        page = im.convert("RGB")
    heat, picked = carta.visual.page.similarity_map(page, query)
    return render_heatmap(page, heat, picked)
