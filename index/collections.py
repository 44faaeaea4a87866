"""The two collections of the lite profile and their payload indexes.

One collection per encoder: the encoder's slug is part of the name, so a different
model never mixes vectors with an old one (switching means re-indexing).
"""

from __future__ import annotations

from dataclasses import dataclass

from index.types import CollectionSpec, DenseSpec, IndexKind

PAGE_VECTOR = "late"
CHUNK_VECTOR = "dense"
VISUAL_VECTOR = "late"  # full ColPali-family multivector (visual collection), exact MaxSim, no HNSW
POOLED_VECTOR = "late_pooled"  # its pooled multivector, the first stage
CLIP_VECTOR = "clip"
GEO_VECTOR = "h3hash"  # the seed's hashed multi-resolution H3 vector, sparse form (located chunks only)

_COMMON_INDEXES: tuple[tuple[str, IndexKind], ...] = (
    ("tenant", "keyword"),
    ("doc_id", "keyword"),
    ("kind", "keyword"),
    ("state", "keyword"),
    ("acl", "keyword"),
    ("page_no", "integer"),
    ("h3_r7", "keyword"),
    ("h3_r9", "keyword"),
    ("h3_r11", "keyword"),
    ("location", "geo"),
    ("geo_point", "geo"),
    ("countries", "keyword"),
    ("h3_area", "keyword"),
    ("h3_area_up", "keyword"),
)


@dataclass(frozen=True)
class Collections:
    pages: CollectionSpec
    chunks: CollectionSpec
    visual: CollectionSpec | None = None  # visual profile: page-image vectors

    def all(self) -> tuple[CollectionSpec, ...]:
        return (self.pages, self.chunks) + ((self.visual,) if self.visual else ())


def visual_collection(encoder_slug: str, dim: int, clip_slug: str, clip_dim: int) -> CollectionSpec:
    """Page-image vectors of the visual profile: the full multivector (fp16, no HNSW,
    reranking only), the pooled one for the first stage (small, exact scan too), the
    CLIP vector (HNSW). Named after both encoders."""
    return CollectionSpec(
        name=f"visual__{encoder_slug}__{clip_slug}",
        dense=(
            DenseSpec(VISUAL_VECTOR, dim, multivector=True, hnsw=False, float16=True),
            DenseSpec(POOLED_VECTOR, dim, multivector=True, hnsw=False, float16=True),
            DenseSpec(CLIP_VECTOR, clip_dim),
        ),
        indexes=_COMMON_INDEXES,
    )


def pages_collection_name(encoder_slug: str) -> str:
    return f"pages__{encoder_slug}"


def lite_collections(
    encoder_slug: str, dim: int, sparse_names: tuple[str, ...], page_pooled: bool = False
) -> Collections:
    """`page_pooled`: the pages also hold a pooled multivector (the first stage of the page
    channel, CARTA_PAGE_POOLING); same collection name: the service opens a data dir built
    without it as it is (exact MaxSim) until `carta reindex` adds it (service/reindex.py)."""
    page_vectors = [DenseSpec(PAGE_VECTOR, dim, multivector=True, hnsw=False, float16=True)]
    if page_pooled:
        page_vectors.append(DenseSpec(POOLED_VECTOR, dim, multivector=True, hnsw=False, float16=True))
    pages = CollectionSpec(
        name=pages_collection_name(encoder_slug),
        dense=tuple(page_vectors),
        indexes=_COMMON_INDEXES,
    )
    chunks = CollectionSpec(
        name=f"chunks__{encoder_slug}",
        dense=(DenseSpec(CHUNK_VECTOR, dim),),
        sparse=sparse_names,
        plain_sparse=(GEO_VECTOR,),
        indexes=_COMMON_INDEXES,
    )
    return Collections(pages=pages, chunks=chunks)
