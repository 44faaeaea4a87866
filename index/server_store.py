"""Server backend: qdrant-client against a Qdrant server or cluster URL.

`local:<path>` (or `:memory:`) uses qdrant-client's local mode, which speaks the same
client API; the contract tests run it as the stand-in for a server.

Erasure happens on the server's schedule, not Carta's (`erase_deleted` is the base
class's no-op): a delete marks the points deleted; the server's vacuum optimizer rewrites
a segment once its deleted share passes the collection's `optimizers_config.
deleted_threshold` (default 0.2) and it holds `vacuum_min_vector_number` vectors (default
1000, at least 100), in the background; the server's WAL keeps the old records until its
`wal_capacity_mb` segments (default 32 MiB) are recycled, and snapshots keep them for as
long as they are kept. To bound how long a deleted document stays on the server's disk,
set a low `deleted_threshold` and `vacuum_min_vector_number=100` on Carta's collections
(PATCH /collections/<name>), a small `wal_capacity_mb`, and expire snapshots. `carta
erase --verify` scans only the local data dir, so it cannot vouch for a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qdrant_client import QdrantClient
from qdrant_client import models as m

from index.payloads import FILTER_ONLY_FIELDS
from index.translate import engine_filter, hit, stored_point
from index.types import (
    Branch,
    CollectionSpec,
    Filter,
    GeoBox,
    GeoCondition,
    GeoDecay,
    GeoRadius,
    Hit,
    SparseVec,
    StorePoint,
    VectorValue,
)
from index.vector_store import RRF_K, StoreError, VectorStore

_INDEX_TYPES = {
    "keyword": m.PayloadSchemaType.KEYWORD,
    "integer": m.PayloadSchemaType.INTEGER,
    "bool": m.PayloadSchemaType.BOOL,
    "geo": m.PayloadSchemaType.GEO,
}


def _vector(value: VectorValue) -> Any:
    if isinstance(value, SparseVec):
        return m.SparseVector(indices=list(value.indices), values=list(value.values))
    return value


def _match(key: str, value: Any) -> m.FieldCondition:
    if isinstance(value, list | tuple | set):
        return m.FieldCondition(key=key, match=m.MatchAny(any=list(value)))
    return m.FieldCondition(key=key, match=m.MatchValue(value=value))


def _geo(cond: GeoCondition) -> m.FieldCondition:
    if isinstance(cond, GeoRadius):
        return m.FieldCondition(
            key=cond.key,
            geo_radius=m.GeoRadius(center=m.GeoPoint(lon=cond.lon, lat=cond.lat), radius=cond.radius_m),
        )
    if isinstance(cond, GeoBox):
        box = m.GeoBoundingBox(
            top_left=m.GeoPoint(lon=cond.min_lon, lat=cond.max_lat),
            bottom_right=m.GeoPoint(lon=cond.max_lon, lat=cond.min_lat),
        )
        return m.FieldCondition(key=cond.key, geo_bounding_box=box)
    ring = m.GeoLineString(points=[m.GeoPoint(lon=lon, lat=lat) for lon, lat in cond.ring])
    return m.FieldCondition(key=cond.key, geo_polygon=m.GeoPolygon(exterior=ring))


def client_filter(flt: Filter | None) -> m.Filter | None:
    return engine_filter(flt, _match, _geo, m.Filter)


_HIT_PAYLOAD = m.PayloadSelectorExclude(exclude=list(FILTER_ONLY_FIELDS))  # what a search hit carries


class ServerStore(VectorStore):
    def __init__(
        self, url: str, api_key: str | None = None, shards: int | None = None, replication: int | None = None
    ) -> None:
        # a Qdrant cluster: new collections get this many shards and copies of each
        self.shards, self.replication = shards, replication
        if url == ":memory:":
            self.client = QdrantClient(location=":memory:")
        elif url.startswith("local:"):
            self.client = QdrantClient(path=url.removeprefix("local:"))
        else:
            self.client = QdrantClient(url=url, api_key=api_key, timeout=30)

    def ensure_collection(self, spec: CollectionSpec) -> None:
        dense = {
            d.name: m.VectorParams(
                size=d.size,
                distance=m.Distance.COSINE,
                multivector_config=m.MultiVectorConfig(comparator=m.MultiVectorComparator.MAX_SIM)
                if d.multivector
                else None,
                hnsw_config=None if d.hnsw else m.HnswConfigDiff(m=0),
                datatype=m.Datatype.FLOAT16 if d.float16 else None,
            )
            for d in spec.dense
        }
        if self.client.collection_exists(spec.name):
            existing = self.client.get_collection(spec.name).config.params.vectors
            sizes = {k: v.size for k, v in (existing or {}).items()} if isinstance(existing, dict) else {}
            if sizes != {k: v.size for k, v in dense.items()}:
                raise StoreError(
                    f"collection {spec.name!r} on the server has other vectors ({sizes}); "
                    "another model or CARTA_PAGE_POOLING changes them: set the old values back, or "
                    "ingest the documents again into a new Qdrant instance or remove the collection"
                )
            return
        self.client.create_collection(
            spec.name,
            vectors_config=dense,
            sparse_vectors_config={s: m.SparseVectorParams(modifier=m.Modifier.IDF) for s in spec.sparse}
            | {s: m.SparseVectorParams() for s in spec.plain_sparse}
            or None,
            shard_number=self.shards,
            replication_factor=self.replication,
        )
        for field_name, kind in spec.indexes:
            schema: Any = _INDEX_TYPES[kind]
            if field_name == spec.tenant_field:
                schema = m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD, is_tenant=True)
            self.client.create_payload_index(spec.name, field_name, field_schema=schema)

    def upsert(self, collection: str, points: Sequence[StorePoint]) -> None:
        if not points:
            return
        self.client.upsert(
            collection,
            points=[
                m.PointStruct(
                    id=p.id, vector={k: _vector(v) for k, v in p.vectors.items()}, payload=p.payload
                )
                for p in points
            ],
            wait=True,
        )

    def delete(self, collection: str, flt: Filter) -> None:
        self.client.delete(collection, points_selector=m.FilterSelector(filter=client_filter(flt)), wait=True)

    def set_payload(self, collection: str, flt: Filter, payload: dict) -> None:
        self.client.set_payload(collection, payload=payload, points=client_filter(flt), wait=True)

    def count(self, collection: str, flt: Filter | None = None) -> int:
        return self.client.count(collection, count_filter=client_filter(flt), exact=True).count

    def scroll(self, collection: str, flt: Filter, limit: int = 10_000) -> list[Hit]:
        records, _ = self.client.scroll(
            collection, scroll_filter=client_filter(flt), limit=limit, with_payload=True, with_vectors=False
        )
        return [hit(r) for r in records]

    def stored_vectors(self, collection: str) -> tuple[str, ...] | None:
        if not self.client.collection_exists(collection):
            return None
        existing = self.client.get_collection(collection).config.params.vectors
        return tuple(existing) if isinstance(existing, dict) else ()

    def scroll_points(
        self, collection: str, limit: int, offset: str | None = None
    ) -> tuple[list[StorePoint], str | None]:
        records, next_offset = self.client.scroll(
            collection, limit=limit, offset=offset, with_payload=True, with_vectors=True
        )
        return [stored_point(r) for r in records], None if next_offset is None else str(next_offset)

    def drop_collection(self, collection: str) -> None:
        if self.client.collection_exists(collection):
            self.client.delete_collection(collection)

    def search(
        self, collection: str, using: str, vector: VectorValue, flt: Filter | None, limit: int
    ) -> list[Hit]:
        try:
            response = self.client.query_points(
                collection,
                query=_vector(vector),
                using=using,
                query_filter=client_filter(flt),
                limit=limit,
                with_payload=_HIT_PAYLOAD,
            )
        except ValueError as exc:
            raise StoreError(str(exc)) from exc
        return [hit(p) for p in response.points]

    def _branch_prefetches(
        self, branches: Sequence[Branch], engine_filter: m.Filter | None, prefetch_limit: int
    ) -> list[m.Prefetch]:
        return [
            m.Prefetch(query=_vector(b.vector), using=b.using, limit=prefetch_limit, filter=engine_filter)
            for b in branches
        ]

    def fused_search(
        self,
        collection: str,
        branches: Sequence[Branch],
        flt: Filter | None,
        limit: int,
        prefetch_limit: int,
        rrf_k: int = RRF_K,
    ) -> list[Hit]:
        engine_filter = client_filter(flt)
        response = self.client.query_points(
            collection,
            prefetch=self._branch_prefetches(branches, engine_filter, prefetch_limit),
            query=m.RrfQuery(rrf=m.Rrf(k=rrf_k)),
            query_filter=engine_filter,
            limit=limit,
            with_payload=_HIT_PAYLOAD,
        )
        return [hit(p) for p in response.points]

    def two_stage_search(
        self, collection: str, first: Branch, second: Branch, flt: Filter | None, limit: int, width: int
    ) -> list[Hit]:
        engine_filter = client_filter(flt)
        response = self.client.query_points(
            collection,
            prefetch=self._branch_prefetches([first], engine_filter, width),
            query=_vector(second.vector),
            using=second.using,
            query_filter=engine_filter,
            limit=limit,
            with_payload=_HIT_PAYLOAD,
        )
        return [hit(p) for p in response.points]

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
        engine_filter = client_filter(flt)
        fused = m.Prefetch(
            prefetch=self._branch_prefetches(branches, engine_filter, prefetch_limit),
            query=m.RrfQuery(rrf=m.Rrf(k=rrf_k)),
            filter=engine_filter,
            limit=prefetch_limit,
        )
        distance = m.GeoDistance(
            geo_distance=m.GeoDistanceParams(origin=m.GeoPoint(lat=decay.lat, lon=decay.lon), to=decay.key)
        )
        boost = m.ExpDecayExpression(exp_decay=m.DecayParamsExpression(x=distance, scale=decay.scale_m))
        formula = m.FormulaQuery(
            formula=m.MultExpression(mult=["$score", m.SumExpression(sum=[1.0, boost])]),
            defaults={decay.key: {"lat": 90.0, "lon": 0.0}},  # no location: far from any place
        )
        response = self.client.query_points(
            collection, prefetch=[fused], query=formula, limit=limit, with_payload=_HIT_PAYLOAD
        )
        return [hit(p) for p in response.points]

    def close(self) -> None:
        self.client.close()
