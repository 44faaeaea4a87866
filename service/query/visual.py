"""The visual profile: page-image vectors next to the lite channels.

- Ingestion: every page image gets a ColPali-family multivector (stored in full, fp16,
  no HNSW), a pooled multivector (the first stage) and a CLIP vector, in batches.
- Search: channel "visual" = pooled prefetch (CARTA_VISUAL_PREFETCH wide) then exact
  MaxSim on the full multivectors, inside the engine; channel "clip" = the question's
  CLIP text vector against the page/image CLIP vectors. Both join the page-level RRF.
- Query by image: the image's CLIP vector against the same CLIP vectors.
- Profile changes: each document records the profile and collections it was indexed
  under; documents indexed otherwise are reported, and `reindex` brings them up to
  date from the stored page images (the text channels do not change between profiles).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from index.collections import CLIP_VECTOR, POOLED_VECTOR, VISUAL_VECTOR, Collections, visual_collection
from index.pooling import Pooling, pool
from index.types import Branch, CollectionSpec, Filter, Hit, StorePoint
from index.vector_store import VectorStore
from models.clip_encoder import ClipEncoder
from models.errors import ModelUnavailable
from models.page_encoder import ColPageEncoder, PageVectors

log = logging.getLogger(__name__)


@dataclass
class VisualProfile:
    """The loaded visual encoders and how pages are stored and searched with them."""

    page: ColPageEncoder
    clip: ClipEncoder
    collection: CollectionSpec
    pooling: Pooling = "blocks"
    pool_factor: int = 16
    prefetch: int = 200

    @classmethod
    def load(cls, settings) -> VisualProfile:  # noqa: ANN001 - service.settings.Settings
        """Load both encoders; ModelUnavailable names the setting that is missing."""
        if not settings.visual_model:
            raise ModelUnavailable(
                "the visual profile needs a ColPali-family model: set CARTA_VISUAL_MODEL to a model id in "
                "the Hugging Face cache or a local directory (or CARTA_PROFILE=lite)"
            )
        page = ColPageEncoder(
            settings.visual_model,
            family=settings.visual_family,
            device=settings.visual_device,
            batch_size=settings.visual_batch_size,
            max_visual_tokens=settings.visual_max_tokens,
            image_size=settings.visual_image_size,
        )
        clip = ClipEncoder(settings.clip_model, settings.clip_pretrained, settings.visual_device)
        return cls(
            page,
            clip,
            visual_collection(page.slug, page.dim, clip.slug, clip.dim),
            settings.visual_pooling,
            settings.visual_pool_factor,
            settings.visual_prefetch,
        )

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
    def channel_calls(
        self, store: VectorStore, text: str, flt: Filter, limit: int, channels: frozenset[str]
    ) -> dict[str, Callable[[], list[Hit]]]:
        """The visual channels asked for, as calls the retriever runs concurrently."""
        calls: dict[str, Callable[[], list[Hit]]] = {}
        name = self.collection.name
        if "visual" in channels:
            q = self.page.embed_queries([text])[0].tolist()
            calls["visual"] = lambda: store.two_stage_search(
                name,
                Branch(POOLED_VECTOR, q),
                Branch(VISUAL_VECTOR, q),
                flt,
                limit,
                max(self.prefetch, limit),
            )
        if "clip" in channels:
            v = self.clip.embed_texts([text])[0].tolist()
            calls["clip"] = lambda: store.search(name, CLIP_VECTOR, v, flt, limit)
        return calls

    def image_hits(self, store: VectorStore, image: Image.Image, flt: Filter, limit: int) -> list[Hit]:
        """Pages and images that look like `image` (CLIP). The ColPali encoders are trained
        for text queries against page images, so they are not used for image queries."""
        v = self.clip.embed_images([image])[0].tolist()
        return store.search(self.collection.name, CLIP_VECTOR, v, flt, limit)


def with_visual(collections: Collections, visual: VisualProfile | None) -> Collections:
    if visual is None:
        return collections
    return Collections(collections.pages, collections.chunks, visual.collection)


def reindex_message(n: int, signature: str) -> str:
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


def load_visual(settings) -> tuple[VisualProfile | None, str | None]:  # noqa: ANN001 - Settings
    """The visual encoders when the profile is `visual`; with CARTA_VISUAL_FALLBACK_LITE a
    model that cannot load leaves (None, why) and the lite channels serve alone."""
    if settings.profile != "visual":
        return None, None
    try:
        return VisualProfile.load(settings), None
    except ModelUnavailable as exc:
        if not settings.visual_fallback_lite:
            raise
        log.warning("visual profile unavailable, serving the lite channels only: %s", exc)
        return None, str(exc)


def search_by_image(  # noqa: ANN201
    carta,  # noqa: ANN001
    image: Image.Image,
    tenant: str,
    top_k: int = 5,
    acl: list[str] | None = None,
):
    """Query by image: CLIP neighbours of `image` among pages and images, as a SearchResult."""
    import time

    from service.query.retrieval import SearchQuery, SearchResult, engine_filter, fuse_pages

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


def page_heatmap(carta, tenant: str, doc_id: str, page_no: int, query: str) -> bytes:  # noqa: ANN001
    """The heat-map PNG of `query` over one stored page image (visual profile)."""
    from service.query.heatmap import render_heatmap

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
