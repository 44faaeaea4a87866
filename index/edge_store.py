"""Embedded backend: Qdrant's Rust engine in-process (qdrant-edge-py), one shard per
collection under `<data_dir>/qdrant/<collection>`.

The engine allows one process per shard folder; a second process gets a clear
StoreError instead of the engine's WAL message.

Erasure (`erase_deleted`). Deleting a point only drops pointers: the payload stays in
the segment's LZ4-compressed payload pages and in the payload index, and the WAL keeps
the upsert (uncompressed) until its 32 MiB segment file is recycled. So after a delete:
(1) vacuum: `optimize()` with the persisted optimizer thresholds set so that any deleted
point qualifies (`_ERASE_OPTIMIZERS`) rewrites the segment without the deleted points,
and the flush removes the old segment folder; (2) roll the WAL: no-op writes (a
`set_payload` whose filter matches nothing, 4 MiB each) until every WAL segment file
that held a record up to the flushed (acknowledged) index has been closed and deleted.
Never delete the WAL folder instead: operation numbers would restart at 0 while points
keep their higher versions, and later deletes would be silently ignored.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as E

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

log = logging.getLogger(__name__)

_SPEC_FILE = "carta-collection.json"
# any segment with a deleted point is vacuumed; the engine never optimizes unless asked
# (Carta asks only in `erase_deleted`), so these thresholds cost nothing between erasures
_ERASE_OPTIMIZERS = {"deleted_threshold": 1e-9, "vacuum_min_vector_number": 1}
# WAL padding: matches no point (a keyword every collection indexes, a value no document has)
_PAD_FILTER = E.Filter(must=[E.FieldCondition(key="doc_id", match=E.MatchValue(value="__carta_wal_pad__"))])
_PAD_PAYLOAD = {"_pad": "0" * (4 << 20)}  # 4 MiB a record: ~16 records fill the 32 MiB segment
_PAD_MAX_RECORDS = 64  # two segments and then some: the engine keeps one closed segment
# the default location of points without one in decay formulas: the engine needs a value,
# and a pole is thousands of kilometres from any place a question names (the decay is ~0)
_FAR_AWAY = {"lat": 90.0, "lon": 0.0}
_INDEX_TYPES = {
    "keyword": E.PayloadSchemaType.Keyword,
    "integer": E.PayloadSchemaType.Integer,
    "bool": E.PayloadSchemaType.Bool,
    "geo": E.PayloadSchemaType.Geo,
}


def _spec_json(spec: CollectionSpec) -> dict[str, Any]:
    return {
        "dense": [[d.name, d.size, d.multivector, d.hnsw, d.float16] for d in spec.dense],
        "sparse": list(spec.sparse),
        **({"plain_sparse": list(spec.plain_sparse)} if spec.plain_sparse else {}),
    }


def _edge_config(spec: CollectionSpec, *, optimizers: E.EdgeOptimizersConfig | None = None) -> E.EdgeConfig:
    vectors = {}
    for d in spec.dense:
        vectors[d.name] = E.EdgeVectorParams(
            size=d.size,
            distance=E.Distance.Cosine,
            multivector_config=E.MultiVectorConfig(E.MultiVectorComparator.MaxSim) if d.multivector else None,
            # m=0: no HNSW graph (exact scan), see DenseSpec.
            hnsw_config=None
            if d.hnsw
            else E.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000),
            datatype=E.VectorStorageDatatype.Float16 if d.float16 else None,
        )
    sparse = {name: E.EdgeSparseVectorParams(modifier=E.Modifier.Idf) for name in spec.sparse}
    sparse |= {name: E.EdgeSparseVectorParams() for name in spec.plain_sparse}
    return E.EdgeConfig(vectors=vectors, sparse_vectors=sparse or None, optimizers=optimizers)


def _erase_optimizers() -> E.EdgeOptimizersConfig:
    return E.EdgeOptimizersConfig(**_ERASE_OPTIMIZERS)


def _has_erase_optimizers(path: Path) -> bool:
    """Whether the shard's persisted config (edge_config.json) vacuums on any deleted point."""
    try:
        stored = json.loads((path / "edge_config.json").read_text()).get("optimizers") or {}
    except (OSError, ValueError):
        return False
    return all(stored.get(k) == v for k, v in _ERASE_OPTIMIZERS.items())


def _wal_state(wal: Path) -> tuple[int, list[int]]:
    """(acknowledged index, first index of each closed WAL segment file)."""
    ack = int(json.loads((wal / "first-index").read_text())["ack_index"])
    return ack, [int(n.split("-", 1)[1]) for n in os.listdir(wal) if n.startswith("closed-")]


def is_held(shard_dir: Path) -> bool:
    """Whether a process (this one included) has the shard open: the engine holds an
    exclusive flock on its WAL folder."""
    try:
        fd = os.open(shard_dir / "wal", os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing the descriptor releases a lock it took
    return False


# Flush a shard after about this many vector values written since its last flush. Until a
# flush, the WAL keeps every upsert uncompressed (~5 bytes a value): a lite page is ~110k
# values, so 100k pages ingested without a restart left 54 GB of WAL beside 21 GB of
# segments (bench_scale, 2026-12-02). A flush persists the segments and lets the WAL drop
# its acknowledged 32 MiB files; every ~50M values (~250 MB of WAL) costs little.
FLUSH_EVERY_VALUES = 50_000_000


def _value_count(value: Any) -> int:
    """How many numbers a vector holds: a list or array, a multivector (rows times their
    size), a sparse vector (Carta's, or the engine's own as `carta reindex` reads it back)."""
    indices = getattr(value, "indices", None)
    if indices is not None:
        return 2 * len(indices)
    size = getattr(value, "size", None)  # a NumPy array
    if isinstance(size, int):
        return size
    if len(value) and not isinstance(value[0], (int, float)):
        return len(value) * len(value[0])
    return len(value)


def _vector(value: VectorValue) -> Any:
    if isinstance(value, SparseVec):
        return E.SparseVector(indices=list(value.indices), values=list(value.values))
    return value


def _match(key: str, value: Any) -> E.FieldCondition:
    if isinstance(value, bool):
        raise TypeError("boolean payload matches are not supported by the Edge engine; use a keyword")
    if isinstance(value, list | tuple | set):
        return E.FieldCondition(key=key, match=E.MatchAny(any=list(value)))
    return E.FieldCondition(key=key, match=E.MatchValue(value=value))


def _geo(cond: GeoCondition) -> E.FieldCondition:
    if isinstance(cond, GeoRadius):
        return E.FieldCondition(
            key=cond.key, geo_radius=E.GeoRadius(E.GeoPoint(lon=cond.lon, lat=cond.lat), cond.radius_m)
        )
    if isinstance(cond, GeoBox):
        box = E.GeoBoundingBox(
            top_left=E.GeoPoint(lon=cond.min_lon, lat=cond.max_lat),
            bottom_right=E.GeoPoint(lon=cond.max_lon, lat=cond.min_lat),
        )
        return E.FieldCondition(key=cond.key, geo_bounding_box=box)
    ring = [E.GeoPoint(lon=lon, lat=lat) for lon, lat in cond.ring]
    return E.FieldCondition(key=cond.key, geo_polygon=E.GeoPolygon(exterior=ring))


def edge_filter(flt: Filter | None) -> E.Filter | None:
    return engine_filter(flt, _match, _geo, E.Filter)


_HIT_PAYLOAD = E.PayloadSelector.Exclude(list(FILTER_ONLY_FIELDS))  # what a search hit carries


class EdgeStore(VectorStore):
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._shards: dict[str, E.EdgeShard] = {}
        self._write_lock = threading.Lock()
        self._unflushed: dict[str, int] = {}  # vector values upserted since the last flush

    def _shard(self, collection: str) -> E.EdgeShard:
        try:
            return self._shards[collection]
        except KeyError:
            raise StoreError(f"collection {collection!r} is not open; call ensure_collection first") from None

    def ensure_collection(self, spec: CollectionSpec) -> None:
        if spec.name in self._shards:
            return
        path = self.root / spec.name
        spec_file = path / _SPEC_FILE
        try:
            if spec_file.exists():
                stored = json.loads(spec_file.read_text())
                if stored != _spec_json(spec):
                    raise StoreError(
                        f"collection {spec.name!r} in {path} was built with other vectors ({stored}); "
                        "another model or CARTA_PAGE_POOLING changes them: set the old values back, or "
                        "point CARTA_DATA_DIR at a new folder and ingest the documents again"
                    )
                # shards from before erasure get the vacuum thresholds once (persisted)
                upgrade = not _has_erase_optimizers(path)
                config = _edge_config(spec, optimizers=_erase_optimizers()) if upgrade else None
                shard = E.EdgeShard.load(str(path), config)
            else:
                shard = E.EdgeShard.create(str(path), _edge_config(spec, optimizers=_erase_optimizers()))
                spec_file.write_text(json.dumps(_spec_json(spec)))
        except StoreError:
            raise
        except Exception as exc:  # the engine raises plain exceptions with Rust messages
            if "WouldBlock" in str(exc) or "lock" in str(exc).lower():
                raise StoreError(
                    f"the data dir {self.root.parent} is held by another Carta process (a running "
                    "`carta serve`?); stop it, or send the command to the server with --server URL"
                ) from exc
            raise StoreError(f"cannot open collection {spec.name!r} at {path}: {exc}") from exc
        for field_name, kind in spec.indexes:
            schema: Any = _INDEX_TYPES[kind]
            if field_name == spec.tenant_field:
                schema = E.KeywordIndexParams(is_tenant=True)
            shard.update(E.UpdateOperation.create_field_index(field_name, schema))
        self._shards[spec.name] = shard

    def upsert(self, collection: str, points: Sequence[StorePoint]) -> None:
        if not points:
            return
        edge_points = [
            E.Point(p.id, {k: _vector(v) for k, v in p.vectors.items()}, p.payload) for p in points
        ]
        try:
            values = sum(_value_count(v) for p in points for v in p.vectors.values())
        except (TypeError, IndexError):  # a vector of a shape the count does not know: the
            values = FLUSH_EVERY_VALUES  # write goes on, and the shard is flushed after it
        with self._write_lock:
            shard = self._shard(collection)
            shard.update(E.UpdateOperation.upsert_points(edge_points))
            self._unflushed[collection] = self._unflushed.get(collection, 0) + values
            if self._unflushed[collection] >= FLUSH_EVERY_VALUES:
                shard.flush()  # the WAL may now drop what the segments hold
                self._unflushed[collection] = 0

    def delete(self, collection: str, flt: Filter) -> None:
        with self._write_lock:
            self._shard(collection).update(E.UpdateOperation.delete_points_by_filter(edge_filter(flt)))

    def erase_deleted(self, collection: str) -> dict[str, float]:
        """Take deleted points off the disk: vacuum the segments, then roll the WAL past
        every record up to now (see the module docstring). Idempotent; blocks writers of
        this collection while it runs. Returns timings (s) and the padding records written."""
        path = self.root / collection
        wal = path / "wal"
        with self._write_lock:
            shard = self._shard(collection)
            t0 = time.perf_counter()
            shard.optimize()
            shard.flush()
            t1 = time.perf_counter()
            target, _ = _wal_state(wal)  # every record up to the flushed index must leave the disk
            records = 0
            while True:
                _, closed = _wal_state(wal)
                if closed and min(closed) > target:
                    break
                if records == _PAD_MAX_RECORDS:
                    raise StoreError(f"the WAL of {collection!r} did not roll after {records} padding writes")
                shard.update(E.UpdateOperation.set_payload_by_filter(_PAD_FILTER, _PAD_PAYLOAD))
                shard.flush()
                records += 1
            t2 = time.perf_counter()
        log.info(
            "erased %s: vacuum %.2fs, WAL %d padding writes %.2fs", collection, t1 - t0, records, t2 - t1
        )
        return {"vacuum_s": t1 - t0, "wal_s": t2 - t1, "pad_records": float(records)}

    def set_payload(self, collection: str, flt: Filter, payload: dict) -> None:
        with self._write_lock:
            self._shard(collection).update(E.UpdateOperation.set_payload_by_filter(edge_filter(flt), payload))

    def count(self, collection: str, flt: Filter | None = None) -> int:
        return int(self._shard(collection).count(E.CountRequest(exact=True, filter=edge_filter(flt))))

    def scroll(self, collection: str, flt: Filter, limit: int = 10_000) -> list[Hit]:
        records, _ = self._shard(collection).scroll(
            E.ScrollRequest(limit=limit, filter=edge_filter(flt), with_payload=True, with_vector=False)
        )
        return [hit(r) for r in records]

    def stored_vectors(self, collection: str) -> tuple[str, ...] | None:
        spec_file = self.root / collection / _SPEC_FILE
        if not spec_file.exists():
            return None
        return tuple(d[0] for d in json.loads(spec_file.read_text())["dense"])

    def scroll_points(
        self, collection: str, limit: int, offset: str | None = None
    ) -> tuple[list[StorePoint], str | None]:
        records, next_offset = self._shard(collection).scroll(
            E.ScrollRequest(limit=limit, offset=offset, with_payload=True, with_vector=True)
        )
        return [stored_point(r) for r in records], None if next_offset is None else str(next_offset)

    def drop_collection(self, collection: str) -> None:
        with self._write_lock:
            shard = self._shards.pop(collection, None)
            if shard is not None:
                shard.close()
            shutil.rmtree(self.root / collection, ignore_errors=True)

    def search(
        self, collection: str, using: str, vector: VectorValue, flt: Filter | None, limit: int
    ) -> list[Hit]:
        request = E.QueryRequest(
            limit=limit,
            query=E.Query.Nearest(_vector(vector), using=using),
            filter=edge_filter(flt),
            with_payload=_HIT_PAYLOAD,
        )
        return [hit(p) for p in self._shard(collection).query(request)]

    def _branch_prefetches(
        self, branches: Sequence[Branch], engine_filter: E.Filter | None, prefetch_limit: int
    ) -> list[E.Prefetch]:
        return [
            E.Prefetch(
                limit=prefetch_limit,
                query=E.Query.Nearest(_vector(b.vector), using=b.using),
                filter=engine_filter,
            )
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
        engine_filter = edge_filter(flt)
        request = E.QueryRequest(
            limit=limit,
            query=E.Fusion.Rrf(k=rrf_k),
            prefetches=self._branch_prefetches(branches, engine_filter, prefetch_limit),
            filter=engine_filter,
            with_payload=_HIT_PAYLOAD,
        )
        return [hit(p) for p in self._shard(collection).query(request)]

    def two_stage_search(
        self, collection: str, first: Branch, second: Branch, flt: Filter | None, limit: int, width: int
    ) -> list[Hit]:
        engine_filter = edge_filter(flt)
        request = E.QueryRequest(
            limit=limit,
            query=E.Query.Nearest(_vector(second.vector), using=second.using),
            prefetches=self._branch_prefetches([first], engine_filter, width),
            filter=engine_filter,
            with_payload=_HIT_PAYLOAD,
        )
        return [hit(p) for p in self._shard(collection).query(request)]

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
        engine_filter = edge_filter(flt)
        fused = E.Prefetch(
            limit=prefetch_limit,
            query=E.Fusion.Rrf(k=rrf_k),
            prefetches=self._branch_prefetches(branches, engine_filter, prefetch_limit),
            filter=engine_filter,
        )
        X = E.Expression
        distance = X.GeoDistance(E.GeoPoint(lon=decay.lon, lat=decay.lat), decay.key)
        boost = X.Decay(E.DecayKind.Exp, distance, None, None, float(decay.scale_m))
        formula = E.Formula(
            X.Mult([X.Variable("$score"), X.Sum([X.Constant(1.0), boost])]),
            defaults={decay.key: _FAR_AWAY},
        )
        request = E.QueryRequest(limit=limit, query=formula, prefetches=[fused], with_payload=_HIT_PAYLOAD)
        return [hit(p) for p in self._shard(collection).query(request)]

    def close(self) -> None:
        with self._write_lock:
            for shard in self._shards.values():
                shard.flush()
                shard.close()
            self._shards.clear()
