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
    sparse: tuple[str, ...] = ()
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


@dataclass
class Filter:
    """Conjunction of exact matches on keyword or integer fields. A list value matches
    any of its items; `exclude` holds values that must not match. No booleans:
    qdrant-edge-py 0.9 passes True as 1 and then matches nothing, so flags are keywords."""

    match: dict[str, Any] = field(default_factory=dict)
    exclude: dict[str, Any] = field(default_factory=dict)
    geo_radius: GeoRadius | None = None

    def and_(self, **match: Any) -> Filter:
        return Filter({**self.match, **match}, dict(self.exclude), self.geo_radius)


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
