"""Backend-neutral value types for the vector store.

The rest of Carta speaks these types; only the two store backends translate them to
qdrant-edge or qdrant-client objects, so both backends can pass one contract suite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

IndexKind = Literal["keyword", "integer", "bool", "geo"]


@dataclass(frozen=True)
class SparseVec:
    """A sparse vector (e.g. BM25 term weights); indices are unique."""

    indices: list[int]
    values: list[float]


DenseVec = list[float]
MultiVec = list[list[float]]
VectorValue = DenseVec | MultiVec | SparseVec


@dataclass(frozen=True)
class DenseSpec:
    """A named dense vector. `multivector` turns on MaxSim late interaction; `hnsw=False`
    keeps the vector out of the HNSW graph (exact scan), as Qdrant advises for
    full-resolution multivectors used for reranking."""

    name: str
    size: int
    multivector: bool = False
    hnsw: bool = True
    float16: bool = False


@dataclass(frozen=True)
class CollectionSpec:
    """Everything a backend needs to create a collection."""

    name: str
    dense: tuple[DenseSpec, ...]
    sparse: tuple[str, ...] = ()  # sparse vectors scored with IDF (BM25 terms)
    plain_sparse: tuple[str, ...] = ()  # sparse vectors scored by plain dot product (hashed H3 tokens)
    indexes: tuple[tuple[str, IndexKind], ...] = ()
    tenant_field: str = "tenant"


@dataclass
class StorePoint:
    id: str
    vectors: dict[str, VectorValue]
    payload: dict[str, Any]


@dataclass(frozen=True)
class GeoRadius:
    """Points whose `key` geo payload lies within `radius_m` metres of (lat, lon)."""

    key: str
    lat: float
    lon: float
    radius_m: float


@dataclass(frozen=True)
class GeoBox:
    """Points of `key` inside a lon/lat box."""

    key: str
    min_lon: float
    min_lat: float
    max_lon: float
    max_lat: float


@dataclass(frozen=True)
class GeoPolygon:
    """Points of `key` inside a polygon ring of (lon, lat) pairs (GeoJSON order)."""

    key: str
    ring: tuple[tuple[float, float], ...]


GeoCondition = GeoRadius | GeoBox | GeoPolygon


@dataclass
class Filter:
    """Conjunction of exact matches on keyword or integer fields. A list value matches
    any of its items; `exclude` holds values that must not match. No booleans:
    qdrant-edge-py 0.9 passes True as 1 and then matches nothing, so flags are keywords."""

    match: dict[str, Any] = field(default_factory=dict)
    exclude: dict[str, Any] = field(default_factory=dict)
    geo_radius: GeoRadius | None = None
    # at least one of these must hold (e.g. a point within a radius OR an area whose
    # H3 covering meets the circle's); each entry is a geo condition or a Filter
    any_of: list[GeoCondition | Filter] = field(default_factory=list)


@dataclass(frozen=True)
class Hit:
    id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True)
class Branch:
    """One prefetch branch of a fused query: which vector, what to look for."""

    using: str
    vector: VectorValue


@dataclass(frozen=True)
class GeoDecay:
    """A distance-decay boost for a fused query: each candidate's fused score is
    multiplied by 1 + exp-decay(distance from (lat, lon) to its `key` point), the decay
    being 0.5 at `scale_m` metres (1 at the point, towards 0 far away; 0 without a point)."""

    key: str
    lat: float
    lon: float
    scale_m: float
