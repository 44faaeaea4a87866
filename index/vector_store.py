"""The vector-store contract.

Two backends implement it: `EdgeStore` (Qdrant's engine embedded in-process, the
default, one process per data dir) and `ServerStore` (qdrant-client against a Qdrant
server URL, or its local mode); `index/backends.py` picks one. Retrieval code only sees
this interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from index.errors import StoreError as StoreError  # re-exported: the backends and many callers import it here
from index.types import Branch, CollectionSpec, Filter, GeoDecay, Hit, StorePoint, VectorValue

RRF_K = 60


class VectorStore(ABC):
    @abstractmethod
    def ensure_collection(self, spec: CollectionSpec) -> None:
        """Create the collection with its payload indexes, or check the existing one
        has the same vectors (a mismatch means re-indexing; raise StoreError)."""

    @abstractmethod
    def upsert(self, collection: str, points: Sequence[StorePoint]) -> None: ...

    @abstractmethod
    def delete(self, collection: str, flt: Filter) -> None: ...

    def erase_deleted(self, collection: str) -> dict[str, float]:
        """Take the deleted points' payloads and vectors off the disk now (vacuum, WAL),
        so that a delete erases. Returns timings. The default does nothing: a backend
        whose engine erases on its own schedule documents what that schedule is."""
        return {}

    @abstractmethod
    def count(self, collection: str, flt: Filter | None = None) -> int: ...

    @abstractmethod
    def set_payload(self, collection: str, flt: Filter, payload: dict) -> None:
        """Merge `payload` into every point matching `flt` (e.g. set `state` to "ready")."""

    @abstractmethod
    def scroll(self, collection: str, flt: Filter, limit: int = 10_000) -> list[Hit]:
        """Points matching `flt` (payload only, score 0), up to `limit`."""

    @abstractmethod
    def stored_vectors(self, collection: str) -> tuple[str, ...] | None:
        """The dense vector names the stored collection holds; None when it does not exist.
        Lets the service open a collection built with other optional vectors as it is
        (e.g. pages from before the pooled first stage) instead of refusing it."""

    @abstractmethod
    def scroll_points(
        self, collection: str, limit: int, offset: str | None = None
    ) -> tuple[list[StorePoint], str | None]:
        """A page of points with their dense vectors and payloads (for copying a collection),
        and the offset of the next page (None after the last)."""

    @abstractmethod
    def drop_collection(self, collection: str) -> None:
        """Remove the collection and its data (nothing when it does not exist)."""

    @abstractmethod
    def search(
        self, collection: str, using: str, vector: VectorValue, flt: Filter | None, limit: int
    ) -> list[Hit]:
        """Nearest points by one named vector (dense, sparse or multivector MaxSim),
        the filter applied inside the engine before top-k."""

    @abstractmethod
    def fused_search(
        self,
        collection: str,
        branches: Sequence[Branch],
        flt: Filter | None,
        limit: int,
        prefetch_limit: int,
        rrf_k: int = RRF_K,
    ) -> list[Hit]:
        """Each branch prefetches `prefetch_limit` candidates (filtered), then the
        engine fuses them by reciprocal rank (k=`rrf_k`)."""

    @abstractmethod
    def two_stage_search(
        self, collection: str, first: Branch, second: Branch, flt: Filter | None, limit: int, width: int
    ) -> list[Hit]:
        """Late interaction in two stages inside the engine: `width` candidates by the
        `first` (pooled) multivector, then exact MaxSim on the `second` (full) one."""

    @abstractmethod
    def decayed_search(
        self,
        collection: str,
        branches: Sequence[Branch],
        flt: Filter | None,
        limit: int,
        prefetch_limit: int,
        decay: GeoDecay,
        rrf_k: int = RRF_K,
    ) -> list[Hit]:
        """`fused_search` re-scored inside the engine by a distance-decay formula: the
        fused score times 1 + decay (see GeoDecay), so text-relevant points near a place
        rise and points elsewhere keep their text score."""

    @abstractmethod
    def close(self) -> None: ...
