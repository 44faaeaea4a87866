"""The graph store: one SQLite file (data/graph.sqlite3) of nodes and edges per tenant.

Nodes: `poi:<source id>`, `zone:<h3>`, `svc:<category>`, `road:<source id>`,
`place:<gazetteer id>`, `page:<doc_id>:<page_no>`. Edges: IN_ZONE (poi/road -> zone),
IS_A (poi -> svc), NEAR (poi -> poi, the nearest <= `near_max` within `near_radius_m`,
`dist_m` stored), CONNECTS (roads sharing a quantised vertex), MENTIONS (page -> place,
zone, poi). Every row carries the dataset (or `doc:<id>`) that brought it, so adding or
deleting one dataset or document touches only its rows, the NEAR lists of POIs near it,
and the zones/services it contributed to.

Zone and community profiles name the documents that mention them, whoever may see those
documents. The store keeps the tenant-wide profile; a read for a caller passes a
`DocFilter` (whether the caller may see a document id, built by the service from
index/acl.py's rule) and gets profiles that name and count only the caller's documents
(`visible_zone`, `community_profile`, `pages_mentioning(..., visible=...)`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import h3
import numpy as np

from geo.folding import fold
from graph.attributes import infer_schema
from graph.sources import Parsed, Poi, Road
from graph.spatial import cells_of, join_resolution, nearest_within, ring_k
from graph.summaries import extractive_summary
from index.sqlite import add_column, connect, migrate, transaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS datasets (
    tenant TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, filename TEXT NOT NULL,
    kind TEXT NOT NULL, pois INTEGER NOT NULL, roads INTEGER NOT NULL, duplicates INTEGER NOT NULL,
    skipped INTEGER NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (tenant, id)
);
CREATE TABLE IF NOT EXISTS nodes (
    tenant TEXT NOT NULL, id TEXT NOT NULL, type TEXT NOT NULL, source TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '', category TEXT, lat REAL, lon REAL, h3 TEXT,
    data TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS nodes_cat ON nodes (tenant, type, category);
CREATE INDEX IF NOT EXISTS nodes_h3 ON nodes (tenant, h3);
CREATE INDEX IF NOT EXISTS nodes_source ON nodes (tenant, source);
CREATE TABLE IF NOT EXISTS edges (
    tenant TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL, type TEXT NOT NULL,
    dist_m REAL, source TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_src ON edges (tenant, src, type);
CREATE INDEX IF NOT EXISTS edges_dst ON edges (tenant, dst, type);
CREATE INDEX IF NOT EXISTS edges_source ON edges (tenant, source);
CREATE TABLE IF NOT EXISTS road_vertices (
    tenant TEXT NOT NULL, vkey TEXT NOT NULL, road TEXT NOT NULL, source TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rv_key ON road_vertices (tenant, vkey);
CREATE INDEX IF NOT EXISTS rv_source ON road_vertices (tenant, source);
"""


def _typed_attributes(conn: sqlite3.Connection) -> None:
    """Datasets keep their schema (graph/attributes.py) and the aliases of their
    properties; POI nodes keep their typed attributes and polygon in `data`."""
    add_column(conn, "datasets", "schema", "TEXT NOT NULL DEFAULT '{}'")
    add_column(conn, "datasets", "aliases", "TEXT NOT NULL DEFAULT '{}'")


_MIGRATIONS = [_SCHEMA, _typed_attributes]

# whether the caller may see a document id; None where every document counts (an admin)
DocFilter = Callable[[str], bool]

MAX_CACHED_SUMMARIES = 8  # LLM summaries kept per community (one per distinct summary text)
VERTEX_DECIMALS = 6  # ~0.1 m: vertices closer than that are one junction
FEATURE_CACHE_MAX = 500_000  # decoded features kept in memory, all datasets together (~1 KB each)
POI_NAME_MIN_CHARS = 6  # shorter names ("Lidl", "Bar") are too ambiguous to count as mentions


@dataclass
class DatasetInfo:
    id: str
    name: str
    filename: str
    kind: str
    pois: int
    roads: int
    duplicates: int
    skipped: int
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PoiRow:
    id: str
    name: str
    category: str
    lat: float
    lon: float
    h3: str
    source: str


@dataclass(frozen=True)
class Feature(PoiRow):
    """A POI with its typed attributes and, for a polygon layer's feature, its polygon."""

    attrs: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    geometry: dict[str, Any] | None = field(default=None, compare=False, hash=False)


def poi_node(poi_id: str) -> str:
    return f"poi:{poi_id}"


def visible_zone(profile: dict[str, Any], visible: DocFilter | None) -> dict[str, Any] | None:
    """A zone profile as a caller sees it: only the documents `visible` admits; None when
    nothing the caller may see is left in it (no POI, no road, no visible document), so
    a zone only hidden documents mention does not exist for the caller."""
    if visible is None:
        return profile
    docs = [d for d in profile.get("documents", []) if visible(d)]
    if not (profile.get("total") or profile.get("roads") or docs):
        return None
    return {**profile, "documents": docs}


def community_profile(parent: str, zones: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """A community (H3 parent) summed from its zones' profiles, with its extractive summary;
    given zones seen by a caller (`visible_zone`), it names and counts only their documents."""
    zones = list(zones)
    cats: dict[str, int] = {}
    for zone in zones:
        for cat, n in zone.get("categories", {}).items():
            cats[cat] = cats.get(cat, 0) + n
    profile: dict[str, Any] = {
        "zones": len(zones),
        "total": sum(cats.values()),
        "categories": dict(sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))),
        "documents": sorted({d for z in zones for d in z.get("documents", [])}),
    }
    profile["summary"] = extractive_summary(parent, profile)
    return profile


def zone_node(cell: str) -> str:
    return f"zone:{cell}"


def _prefixed(parsed: Parsed, old: str, new: str) -> Parsed:
    """`parsed` with the POI ids `<old>:x` renamed `<new>:x` (others as they are)."""
    start = f"{old}:"
    pois = [
        replace(p, id=f"{new}:{p.id[len(start) :]}") if p.id.startswith(start) else p for p in parsed.pois
    ]
    return replace(parsed, pois=pois)


def _poi_data(poi: Poi) -> str:
    """A POI node's `data`: its attributes and polygon (empty for a bare point)."""
    data: dict[str, Any] = {}
    if poi.attrs:
        data["attrs"] = poi.attrs
    if poi.geometry is not None:
        data["geometry"] = poi.geometry
    return json.dumps(data, ensure_ascii=False) if data else "{}"


class GraphStore:
    def __init__(
        self,
        path: Path,
        resolution: int = 7,
        near_radius_m: float = 500.0,
        near_max: int = 10,
        community_resolution: int = 5,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.resolution = resolution
        # communities are H3 parents of the zones, so always coarser than them
        self.community_resolution = max(0, min(community_resolution, resolution - 1))
        self.near_radius_m = near_radius_m
        self.near_max = near_max
        self._lock = threading.RLock()
        self._feature_cache: OrderedDict[tuple[str, str, str, int], list[Feature]] = OrderedDict()
        self._cached_features = 0
        self._category_cache: dict[tuple[str, str, str, int], dict[str, int]] = {}
        self._extent_cache: dict[tuple[str, str, str, int], tuple[float, float, float, float] | None] = {}
        # plain tuples: `edges()` and `nodes()` hand rows out as they come
        self._db = connect(self.path, synchronous="NORMAL", named_rows=False)
        migrate(self._db, _MIGRATIONS)
        self._rebuild_stale_communities()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ----------------------------------------------------------------- datasets

    def add_dataset(
        self,
        tenant: str,
        parsed: Parsed,
        filename: str,
        kind: str,
        content: bytes,
        aliases: dict[str, list[str]] | None = None,
        file_prefix: str | None = None,
    ) -> tuple[DatasetInfo, bool]:
        """Store one parsed upload; (info, created). The same content again is a no-op.
        `aliases`: words that name a property in questions ({"V014": ["residentes"]}).
        POIs whose source id another dataset of the tenant already holds are skipped
        (counted as duplicates), so deleting either dataset never removes the other's.

        `file_prefix`: the prefix (`<file name>`) of ids that only mean something inside this
        file (a CSV's or GeoJSON's row number or own id column), unlike OSM ids. When another
        dataset already holds ids under it (a different file uploaded under the same name),
        this file's ids become `<file name>~<dataset id>:...`, so both datasets keep all their
        rows, as two PDFs of one name are two documents; else row 3 of the second file was
        skipped as a "duplicate" of row 3 of the first."""
        dataset_id = hashlib.sha256(content).hexdigest()[:16]
        with self._lock:
            existing = self.dataset(tenant, dataset_id)
            if existing is not None:
                return existing, False
            if file_prefix and self._holds_prefix(tenant, file_prefix):
                parsed = _prefixed(parsed, file_prefix, f"{file_prefix}~{dataset_id[:8]}")
            held = self._existing_ids(tenant, [poi_node(p.id) for p in parsed.pois])
            pois = [p for p in parsed.pois if poi_node(p.id) not in held]
            roads = [
                r for r in parsed.roads if f"road:{r.id}" not in self._existing_ids(tenant, [f"road:{r.id}"])
            ]
            source = f"ds:{dataset_id}"
            info = DatasetInfo(
                dataset_id,
                Path(filename).name,
                filename,
                kind,
                len(pois),
                len(roads),
                parsed.duplicates + len(parsed.pois) - len(pois),
                parsed.skipped,
                datetime.now(UTC).isoformat(timespec="seconds"),
            )
            try:
                with transaction(self._db):
                    poi_cells = self._store_dataset(tenant, info, pois, roads, source, aliases)
            finally:
                self.forget_cached(tenant, info.id)  # whatever a read cached while the rows were written
            self._cache_features(
                (tenant, info.id, info.created_at, info.pois),
                [
                    Feature(p.id, p.name, p.category, p.lat, p.lon, c, source, p.attrs or {}, p.geometry)
                    for p, c in zip(pois, poi_cells, strict=True)
                ],
            )
            return info, True

    def _store_dataset(
        self,
        tenant: str,
        info: DatasetInfo,
        pois: list[Poi],
        roads: list[Road],
        source: str,
        aliases: dict[str, list[str]] | None,
    ) -> list[str]:
        """Write one dataset's rows (inside the caller's transaction); each POI's zone cell."""
        cats: dict[str, int] = {}
        for p in pois:
            cats[p.category] = cats.get(p.category, 0) + 1
        schema = infer_schema((p.attrs for p in pois), cats)
        schema["polygons"] = sum(1 for p in pois if p.geometry is not None)
        self._db.execute(
            "INSERT INTO datasets (tenant,id,name,filename,kind,pois,roads,duplicates,skipped,"
            "created_at,schema,aliases) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                tenant,
                info.id,
                info.name,
                info.filename,
                info.kind,
                info.pois,
                info.roads,
                info.duplicates,
                info.skipped,
                info.created_at,
                json.dumps(schema, ensure_ascii=False),
                json.dumps(aliases or {}, ensure_ascii=False),
            ),
        )
        poi_cells = self._insert_pois(tenant, pois, source)
        cells = set(poi_cells)
        cells |= self._insert_roads(tenant, roads, source)
        self._update_near(tenant, added=[poi_node(p.id) for p in pois])
        self._refresh_zones(tenant, cells)
        self._refresh_services(tenant, {p.category for p in pois})
        return poi_cells

    def delete_dataset(self, tenant: str, dataset_id: str) -> bool:
        """Remove a dataset's POIs, roads, their edges and zone contributions; the NEAR
        lists of remaining POIs that pointed at removed ones are recomputed."""
        with self._lock:
            if self.dataset(tenant, dataset_id) is None:
                return False
            source = f"ds:{dataset_id}"
            with transaction(self._db):
                self._db.execute("DELETE FROM datasets WHERE tenant=? AND id=?", (tenant, dataset_id))
                self._remove_source(tenant, source)
            self.forget_cached(tenant, dataset_id)
            return True

    def forget_cached(self, tenant: str, dataset_id: str) -> None:
        """Drop a dataset's cached features, categories and extent."""
        with self._lock:
            for key in [k for k in self._feature_cache if k[:2] == (tenant, dataset_id)]:
                self._cached_features -= len(self._feature_cache.pop(key))
            for cache in (self._extent_cache, self._category_cache):
                for key in [k for k in cache if k[:2] == (tenant, dataset_id)]:
                    del cache[key]

    def dataset(self, tenant: str, dataset_id: str) -> DatasetInfo | None:
        row = self._db.execute(
            "SELECT id,name,filename,kind,pois,roads,duplicates,skipped,created_at FROM datasets "
            "WHERE tenant=? AND id=?",
            (tenant, dataset_id),
        ).fetchone()
        return DatasetInfo(*row) if row else None

    def dataset_schema(self, tenant: str, dataset_id: str) -> dict[str, Any] | None:
        """The dataset's schema ({"features", "properties", "categories", "polygons"}) and its
        "aliases"; computed from its POIs for a dataset stored before schemas were kept."""
        row = self._db.execute(
            "SELECT schema, aliases FROM datasets WHERE tenant=? AND id=?", (tenant, dataset_id)
        ).fetchone()
        if row is None:
            return None
        schema = json.loads(row[0])
        if not schema:
            feats = self.features(tenant, datasets=[dataset_id])
            cats: dict[str, int] = {}
            for f in feats:
                cats[f.category] = cats.get(f.category, 0) + 1
            schema = infer_schema((f.attrs for f in feats), cats)
            schema["polygons"] = sum(1 for f in feats if f.geometry is not None)
        return {**schema, "aliases": json.loads(row[1])}

    def features(
        self,
        tenant: str,
        datasets: Iterable[str] | None = None,
        categories: Iterable[str] | None = None,
        polygons_only: bool = False,
    ) -> list[Feature]:
        """POIs with their typed attributes (and polygon), of some datasets or categories,
        in the order they were stored. Read from the per-dataset cache (`_dataset_features`)."""
        wanted = None if datasets is None else set(datasets)
        cats = None if categories is None else set(categories)
        out: list[Feature] = []
        for info in self.datasets(tenant):
            if wanted is not None and info.id not in wanted:
                continue
            feats = self._dataset_features(tenant, info)
            held = self._dataset_categories(tenant, info)
            if cats is not None and not cats & held.keys():
                continue
            # None: every feature of the dataset is of an asked category, none to filter out
            cats_here = None if cats is not None and held.keys() <= cats else cats
            if cats_here is not None or polygons_only:
                feats = [
                    f
                    for f in feats
                    if (cats_here is None or f.category in cats_here)
                    and (not polygons_only or f.geometry is not None)
                ]
            out += feats
        return out

    def _dataset_features(self, tenant: str, info: DatasetInfo) -> list[Feature]:
        """A dataset's features decoded once and kept (least recently used first out, at
        most FEATURE_CACHE_MAX features in all): a question over 100k features must not
        decode 100k JSON rows. The key holds the dataset's creation time and size, so a
        dataset deleted and added again (here or by another process) is read afresh."""
        key = (tenant, info.id, info.created_at, info.pois)
        with self._lock:
            feats = self._feature_cache.get(key)
            if feats is not None:
                self._feature_cache.move_to_end(key)
                return feats
            feats = []
            rows = self._db.execute(
                "SELECT id,name,category,lat,lon,h3,source,data FROM nodes "
                "WHERE tenant=? AND type='poi' AND source=? ORDER BY rowid",
                (tenant, f"ds:{info.id}"),
            )
            for r in rows:
                data = json.loads(r[7]) if r[7] else {}
                feats.append(
                    Feature(
                        r[0][4:],
                        r[1],
                        r[2],
                        r[3],
                        r[4],
                        r[5],
                        r[6],
                        data.get("attrs", {}),
                        data.get("geometry"),
                    )
                )
            self._cache_features(key, feats)
            return feats

    def _cache_features(self, key: tuple[str, str, str, int], feats: list[Feature]) -> None:
        with self._lock:
            if key in self._feature_cache:
                return
            self._feature_cache[key] = feats
            self._cached_features += len(feats)
            while self._cached_features > FEATURE_CACHE_MAX and len(self._feature_cache) > 1:
                _, dropped = self._feature_cache.popitem(last=False)
                self._cached_features -= len(dropped)

    def polygon_names(self, tenant: str) -> list[tuple[str, str, str]]:
        """(dataset id, feature id, name) of every named polygon feature (zones by name)."""
        rows = self._db.execute(
            "SELECT source, id, name FROM nodes WHERE tenant=? AND type='poi' AND name<>'' "
            "AND data LIKE '%\"geometry\"%'",
            (tenant,),
        ).fetchall()
        return [(s[3:], i[4:], n) for s, i, n in rows if s.startswith("ds:")]

    def extents(self, tenant: str) -> list[tuple[str, float, float, float, float]]:
        """(dataset id, south, west, north, east) of each dataset's feature points."""
        out = []
        for info in self.datasets(tenant):
            key = (tenant, info.id, info.created_at, info.pois)
            if key not in self._extent_cache:
                feats = self._dataset_features(tenant, info)
                lats, lons = [f.lat for f in feats], [f.lon for f in feats]
                self._extent_cache[key] = (min(lats), min(lons), max(lats), max(lons)) if feats else None
            if (box := self._extent_cache[key]) is not None:
                out.append((info.id, *box))
        return out

    def poi_names(self, tenant: str) -> list[tuple[str, str]]:
        """(poi id, name) of every named POI."""
        rows = self._db.execute(
            "SELECT id, name FROM nodes WHERE tenant=? AND type='poi' AND name<>''", (tenant,)
        ).fetchall()
        return [(i[4:], n) for i, n in rows]

    def datasets(self, tenant: str) -> list[DatasetInfo]:
        rows = self._db.execute(
            "SELECT id,name,filename,kind,pois,roads,duplicates,skipped,created_at FROM datasets "
            "WHERE tenant=? ORDER BY created_at, id",
            (tenant,),
        ).fetchall()
        return [DatasetInfo(*r) for r in rows]

    def roads(self, tenant: str, dataset_id: str, limit: int) -> tuple[list[dict[str, Any]], int]:
        """The dataset's road lines as GeoJSON LineString features ([lon, lat]), at most
        `limit` of them, and how many it holds (for the map's roads layer)."""
        source = f"ds:{dataset_id}"
        total = self._db.execute(
            "SELECT COUNT(*) FROM nodes WHERE tenant=? AND type='road' AND source=?", (tenant, source)
        ).fetchone()[0]
        rows = self._db.execute(
            "SELECT id,name,category,data FROM nodes WHERE tenant=? AND type='road' AND source=? "
            "ORDER BY id LIMIT ?",
            (tenant, source, limit),
        ).fetchall()
        features = []
        for node_id, name, kind, data in rows:
            coords = json.loads(data).get("coords") or []
            if len(coords) < 2:
                continue
            features.append(
                {
                    "type": "Feature",
                    "properties": {"id": node_id, "name": name, "kind": kind},
                    "geometry": {"type": "LineString", "coordinates": [[lon, lat] for lat, lon in coords]},
                }
            )
        return features, int(total)

    # ----------------------------------------------------------------- documents

    def index_document(self, tenant: str, doc_id: str, title: str, pages: Sequence[dict[str, Any]]) -> int:
        """Page nodes and MENTIONS edges of one document from the geo payloads ingestion
        stored (`geo_tags`, `h3_area`, `text`); replaces what the document had. Returns the
        number of MENTIONS edges."""
        source = f"doc:{doc_id}"
        with self._lock, transaction(self._db):
            self._remove_source(tenant, source)
            return self._insert_pages(tenant, doc_id, title, pages, source)

    def delete_document(self, tenant: str, doc_id: str) -> None:
        with self._lock, transaction(self._db):
            self._remove_source(tenant, f"doc:{doc_id}")

    # ----------------------------------------------------------------- reads

    def pois(
        self, tenant: str, categories: Iterable[str] | None = None, cells: Iterable[str] | None = None
    ) -> list[PoiRow]:
        sql = "SELECT id,name,category,lat,lon,h3,source FROM nodes WHERE tenant=? AND type='poi'"
        args: list[Any] = [tenant]
        if categories is not None:
            cats = sorted(set(categories))
            sql += f" AND category IN ({','.join('?' * len(cats))})"
            args += cats
        rows = self._db.execute(sql, args).fetchall()
        if cells is not None:
            keep = set(cells)
            rows = [r for r in rows if r[5] in keep]
        return [PoiRow(r[0][4:], r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows]

    def categories(self, tenant: str) -> dict[str, int]:
        """POI count per category over the tenant's datasets."""
        total: dict[str, int] = {}
        for info in self.datasets(tenant):
            for category, n in self._dataset_categories(tenant, info).items():
                total[category] = total.get(category, 0) + n
        return total

    def _dataset_categories(self, tenant: str, info: DatasetInfo) -> dict[str, int]:
        """A dataset's POI count per category, kept beside its cached features."""
        key = (tenant, info.id, info.created_at, info.pois)
        counts = self._category_cache.get(key)
        if counts is None:
            counts = {}
            for f in self._dataset_features(tenant, info):
                counts[f.category] = counts.get(f.category, 0) + 1
            self._category_cache[key] = counts
        return counts

    def zones(self, tenant: str, cells: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """Zone profiles: {cell: {"total", "categories", "documents"}}."""
        rows = self._db.execute(
            "SELECT h3, data FROM nodes WHERE tenant=? AND type='zone'", (tenant,)
        ).fetchall()
        keep = set(cells) if cells is not None else None
        return {c: json.loads(d) for c, d in rows if keep is None or c in keep}

    def communities(self, tenant: str) -> dict[str, dict[str, Any]]:
        """Community profiles: {parent cell: {"zones", "total", "categories", "documents", "summary"}}."""
        rows = self._db.execute(
            "SELECT h3, data FROM nodes WHERE tenant=? AND type='community'", (tenant,)
        ).fetchall()
        return {c: json.loads(d) for c, d in rows}

    def edges(
        self, tenant: str, type: str | None = None, node: str | None = None
    ) -> list[tuple[str, str, str, float | None]]:
        sql, args = "SELECT src,dst,type,dist_m FROM edges WHERE tenant=?", [tenant]
        if type:
            sql += " AND type=?"
            args.append(type)
        if node:
            sql += " AND (src=? OR dst=?)"
            args += [node, node]
        return self._db.execute(sql, args).fetchall()

    def nodes(self, tenant: str, type: str | None = None) -> list[tuple[str, str]]:
        sql, args = "SELECT id, type FROM nodes WHERE tenant=?", [tenant]
        if type:
            sql += " AND type=?"
            args.append(type)
        return self._db.execute(sql, args).fetchall()

    def pages_mentioning(
        self, tenant: str, targets: Iterable[str], visible: DocFilter | None = None
    ) -> list[tuple[str, int, str, str, int]]:
        """(doc_id, page_no, title, excerpt, hits) of pages with MENTIONS edges to any of
        `targets` (node ids), most hits first; only pages of documents `visible` admits."""
        targets = sorted(set(targets))
        if not targets:
            return []
        hits: dict[str, int] = {}
        for start in range(0, len(targets), 500):
            part = targets[start : start + 500]
            for (src,) in self._db.execute(
                "SELECT src FROM edges WHERE tenant=? AND type='MENTIONS' "
                f"AND dst IN ({','.join('?' * len(part))})",
                [tenant, *part],
            ):
                hits[src] = hits.get(src, 0) + 1
        out = []
        for page, n in hits.items():
            if visible is not None and not visible(page.split(":")[1]):
                continue
            row = self._db.execute(
                "SELECT data FROM nodes WHERE tenant=? AND id=?", (tenant, page)
            ).fetchone()
            if row:
                data = json.loads(row[0])
                out.append((data["doc_id"], data["page_no"], data.get("title", ""), data.get("text", ""), n))
        out.sort(key=lambda r: (-r[4], r[0], r[1]))
        return out

    # ----------------------------------------------------------------- writes (inside a transaction)

    def _holds_prefix(self, tenant: str, prefix: str) -> bool:
        """Whether a POI id starts with `<prefix>:` (a range scan of the primary key)."""
        low = poi_node(f"{prefix}:")
        high = low[:-1] + chr(ord(":") + 1)
        row = self._db.execute(
            "SELECT 1 FROM nodes WHERE tenant=? AND id>=? AND id<? LIMIT 1", (tenant, low, high)
        ).fetchone()
        return row is not None

    def _existing_ids(self, tenant: str, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            found.update(
                r[0]
                for r in self._db.execute(
                    f"SELECT id FROM nodes WHERE tenant=? AND id IN ({','.join('?' * len(part))})",
                    [tenant, *part],
                )
            )
        return found

    def _insert_pois(self, tenant: str, pois: Sequence[Poi], source: str) -> list[str]:
        """Insert the POI nodes and their IN_ZONE / IS_A edges; each POI's zone cell."""
        cells = [h3.latlng_to_cell(p.lat, p.lon, self.resolution) for p in pois]
        self._db.executemany(
            "INSERT INTO nodes (tenant,id,type,source,name,category,lat,lon,h3,data) "
            "VALUES (?,?,'poi',?,?,?,?,?,?,?)",
            [
                (tenant, poi_node(p.id), source, p.name, p.category, p.lat, p.lon, c, _poi_data(p))
                for p, c in zip(pois, cells, strict=True)
            ],
        )
        self._db.executemany(
            "INSERT INTO edges VALUES (?,?,?,?,NULL,?)",
            [
                (tenant, poi_node(p.id), zone_node(c), "IN_ZONE", source)
                for p, c in zip(pois, cells, strict=True)
            ]
            + [(tenant, poi_node(p.id), f"svc:{p.category}", "IS_A", source) for p in pois],
        )
        return cells

    def _insert_roads(self, tenant: str, roads: Sequence[Road], source: str) -> set[str]:
        touched: set[str] = set()
        for road in roads:
            node = f"road:{road.id}"
            cells = sorted({h3.latlng_to_cell(la, lo, self.resolution) for la, lo in road.coords})
            touched.update(cells)
            mid = road.coords[len(road.coords) // 2]
            self._db.execute(
                "INSERT INTO nodes (tenant,id,type,source,name,category,lat,lon,h3,data) "
                "VALUES (?,?,'road',?,?,?,?,?,?,?)",
                (
                    tenant,
                    node,
                    source,
                    road.name,
                    road.kind,
                    mid[0],
                    mid[1],
                    cells[0],
                    json.dumps({"coords": [[round(a, 7), round(b, 7)] for a, b in road.coords]}),
                ),
            )
            self._db.executemany(
                "INSERT INTO edges VALUES (?,?,?,'IN_ZONE',NULL,?)",
                [(tenant, node, zone_node(c), source) for c in cells],
            )
            keys = sorted({f"{la:.{VERTEX_DECIMALS}f},{lo:.{VERTEX_DECIMALS}f}" for la, lo in road.coords})
            self._db.executemany(
                "INSERT INTO road_vertices VALUES (?,?,?,?)", [(tenant, k, node, source) for k in keys]
            )
        if roads:
            self._connect_roads(tenant, roads, source)
        return touched

    def _connect_roads(self, tenant: str, roads: Sequence[Road], source: str) -> None:
        """CONNECTS between each new road and every road (old or new) sharing a quantised
        vertex with it, one edge per unordered pair."""
        by_key: dict[str, set[str]] = {}
        for road in roads:
            for la, lo in road.coords:
                by_key.setdefault(f"{la:.{VERTEX_DECIMALS}f},{lo:.{VERTEX_DECIMALS}f}", set()).add(
                    f"road:{road.id}"
                )
        keys = sorted(by_key)
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            for key, road in self._db.execute(
                f"SELECT vkey, road FROM road_vertices WHERE tenant=? AND source<>? "
                f"AND vkey IN ({','.join('?' * len(part))})",
                [tenant, source, *part],
            ):
                by_key[key].add(road)
        pairs = {(a, b) for group in by_key.values() for a in group for b in group if a < b}
        self._db.executemany(
            "INSERT INTO edges VALUES (?,?,?,'CONNECTS',NULL,?)",
            [(tenant, a, b, source) for a, b in sorted(pairs)],
        )

    def _insert_pages(
        self, tenant: str, doc_id: str, title: str, pages: Sequence[dict[str, Any]], source: str
    ) -> int:
        edges: list[tuple[str, str, str, str, None, str]] = []
        touched: set[str] = set()
        for payload in pages:
            page = f"page:{doc_id}:{payload['page_no']}"
            targets: dict[str, tuple[str, float, float]] = {}
            cells: set[str] = set()
            for tag in payload.get("geo_tags") or ():
                if tag.get("kind") in ("state", "country", "continent"):
                    continue
                cells.add(h3.latlng_to_cell(tag["lat"], tag["lon"], self.resolution))
                if tag.get("place_id"):
                    targets[f"place:{tag['place_id']}"] = (tag.get("label", ""), tag["lat"], tag["lon"])
            for cell in payload.get("h3_area") or ():
                res = h3.get_resolution(cell)
                if res >= self.resolution:
                    cells.add(h3.cell_to_parent(cell, self.resolution))
                elif self.resolution - res <= 2:
                    cells.update(h3.cell_to_children(cell, self.resolution))
            text = payload.get("text", "")
            for poi in self._named_pois_near(tenant, cells):
                if fold(poi[1]) in fold(text):
                    targets[poi[0]] = (poi[1], 0.0, 0.0)
            if not targets and not cells:
                continue
            data = {"doc_id": doc_id, "page_no": payload["page_no"], "title": title, "text": text[:600]}
            self._db.execute(
                "INSERT INTO nodes (tenant,id,type,source,name,data) VALUES (?,?,'page',?,?,?)",
                (tenant, page, source, f"{title} p.{payload['page_no']}", json.dumps(data)),
            )
            for node, (name, lat, lon) in targets.items():
                if node.startswith("place:"):
                    self._db.execute(
                        "INSERT OR IGNORE INTO nodes (tenant,id,type,source,name,lat,lon,h3) "
                        "VALUES (?,?,'place','gazetteer',?,?,?,?)",
                        (tenant, node, name, lat, lon, h3.latlng_to_cell(lat, lon, self.resolution)),
                    )
                edges.append((tenant, page, node, "MENTIONS", None, source))
            edges += [(tenant, page, zone_node(c), "MENTIONS", None, source) for c in sorted(cells)]
            touched |= cells
        self._db.executemany("INSERT INTO edges VALUES (?,?,?,?,?,?)", edges)
        self._refresh_zones(tenant, touched)
        return len(edges)

    def _named_pois_near(self, tenant: str, cells: set[str]) -> list[tuple[str, str]]:
        if not cells:
            return []
        near = sorted({c for cell in cells for c in h3.grid_disk(cell, 1)})
        out = []
        for start in range(0, len(near), 500):
            part = near[start : start + 500]
            out += self._db.execute(
                f"SELECT id, name FROM nodes WHERE tenant=? AND type='poi' AND length(name)>=? "
                f"AND h3 IN ({','.join('?' * len(part))})",
                [tenant, POI_NAME_MIN_CHARS, *part],
            ).fetchall()
        return out

    def _remove_source(self, tenant: str, source: str) -> None:
        removed = [
            r[0]
            for r in self._db.execute(
                "SELECT id FROM nodes WHERE tenant=? AND source=? AND type='poi'", (tenant, source)
            )
        ]
        cells = {
            r[0]
            for r in self._db.execute(
                "SELECT DISTINCT dst FROM edges WHERE tenant=? AND source=? "
                "AND type IN ('IN_ZONE','MENTIONS') AND dst LIKE 'zone:%'",
                (tenant, source),
            )
        }
        categories = {
            r[0]
            for r in self._db.execute(
                "SELECT DISTINCT category FROM nodes WHERE tenant=? AND source=? AND type='poi'",
                (tenant, source),
            )
        }
        affected: set[str] = set()
        for start in range(0, len(removed), 500):
            part = removed[start : start + 500]
            marks = ",".join("?" * len(part))
            affected.update(
                r[0]
                for r in self._db.execute(
                    f"SELECT src FROM edges WHERE tenant=? AND type='NEAR' AND dst IN ({marks})",
                    [tenant, *part],
                )
            )
            self._db.execute(
                f"DELETE FROM edges WHERE tenant=? AND (src IN ({marks}) OR dst IN ({marks}))",
                [tenant, *part, *part],
            )
        roads = [
            r[0]
            for r in self._db.execute(
                "SELECT id FROM nodes WHERE tenant=? AND source=? AND type='road'", (tenant, source)
            )
        ]
        for start in range(0, len(roads), 500):
            part = roads[start : start + 500]
            marks = ",".join("?" * len(part))
            self._db.execute(
                f"DELETE FROM edges WHERE tenant=? AND (src IN ({marks}) OR dst IN ({marks}))",
                [tenant, *part, *part],
            )
        self._db.execute("DELETE FROM edges WHERE tenant=? AND source=?", (tenant, source))
        self._db.execute("DELETE FROM road_vertices WHERE tenant=? AND source=?", (tenant, source))
        self._db.execute("DELETE FROM nodes WHERE tenant=? AND source=?", (tenant, source))
        # gazetteer places no page mentions any more
        self._db.execute(
            "DELETE FROM nodes WHERE tenant=? AND type='place' AND id NOT IN "
            "(SELECT dst FROM edges WHERE tenant=? AND type='MENTIONS')",
            (tenant, tenant),
        )
        self._update_near(tenant, recompute=sorted(affected - set(removed)))
        self._refresh_zones(tenant, {c[5:] for c in cells})
        self._refresh_services(tenant, categories)

    def _update_near(self, tenant: str, added: Sequence[str] = (), recompute: Sequence[str] = ()) -> None:
        if added:
            self._add_near(tenant, added)
        if recompute:
            self._recompute_near(tenant, recompute)

    def _load_around(self, tenant: str, seeds: Sequence[str], rings: int) -> tuple:
        """POIs in the cells within `rings` of the seeds' cells: ids, index, lats, lons, cells, sources."""
        seed_rows = self._poi_rows(tenant, "id", seeds)
        area = sorted({c for cell in {r[4] for r in seed_rows} for c in h3.grid_disk(cell, rings)})
        rows = self._poi_rows(tenant, "h3", area)
        ids = [r[0] for r in rows]
        return (
            ids,
            {node: i for i, node in enumerate(ids)},
            np.array([r[2] for r in rows]),
            np.array([r[3] for r in rows]),
            [r[4] for r in rows],
            {r[0]: r[1] for r in rows},
        )

    def _add_near(self, tenant: str, added: Sequence[str]) -> None:
        """NEAR lists of new POIs from scratch; an existing POI's list is merged with the new
        POIs within the radius of it, and rewritten only when it changes."""
        k = ring_k(self.resolution, self.near_radius_m)
        ids, index, lats, lons, _, sources = self._load_around(tenant, added, k)
        jres = join_resolution(self.near_radius_m)  # finer cells than zones for the distance join
        new = np.array(sorted({index[a] for a in added if a in index}), dtype=np.int64)
        if not len(new):
            return
        jcells = cells_of(lats, lons, jres)
        lists: dict[str, list[tuple[str, float]]] = {
            ids[i]: [(ids[j], d) for j, d in lst]
            for i, lst in nearest_within(
                lats, lons, jcells, self.near_radius_m, self.near_max, jres, new
            ).items()
        }
        old = np.setdiff1d(np.arange(len(ids)), new)
        gained: dict[str, list[tuple[str, float]]] = {}
        if len(old):  # only an old POI's nearest new ones can enter its list: a top-k, not all pairs
            nearest_new = nearest_within(
                lats, lons, jcells, self.near_radius_m, self.near_max, jres, old, candidates=new
            )
            gained = {ids[j]: [(ids[i], d) for i, d in lst] for j, lst in nearest_new.items() if lst}
        current = self._near_lists(tenant, sorted(gained))
        for node, extra in gained.items():
            cur = current.get(node, [])
            if len(cur) >= self.near_max and min(d for _, d in extra) >= cur[-1][1]:
                continue  # no new POI is nearer than its current farthest neighbour
            merged = sorted(cur + extra, key=lambda nd: (nd[1], nd[0]))[: self.near_max]
            if merged != cur:
                lists[node] = merged
        self._write_near(tenant, lists, sources, fresh={ids[i] for i in new.tolist()})

    def _recompute_near(self, tenant: str, nodes: Sequence[str]) -> None:
        """NEAR lists of `nodes` recomputed from every POI around them."""
        k = ring_k(self.resolution, self.near_radius_m)
        ids, index, lats, lons, _, sources = self._load_around(tenant, nodes, k)
        jres = join_resolution(self.near_radius_m)
        query = np.array(sorted(index[n] for n in nodes if n in index), dtype=np.int64)
        if not len(query):
            return
        jcells = cells_of(lats, lons, jres)
        result = nearest_within(lats, lons, jcells, self.near_radius_m, self.near_max, jres, query)
        self._write_near(
            tenant, {ids[i]: [(ids[j], d) for j, d in lst] for i, lst in result.items()}, sources
        )

    def _near_lists(self, tenant: str, nodes: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        out: dict[str, list[tuple[str, float]]] = {}
        for start in range(0, len(nodes), 500):
            part = nodes[start : start + 500]
            for src, dst, dist in self._db.execute(
                "SELECT src, dst, dist_m FROM edges WHERE tenant=? AND type='NEAR' "
                f"AND src IN ({','.join('?' * len(part))})",
                [tenant, *part],
            ):
                out.setdefault(src, []).append((dst, dist))
        for lst in out.values():
            lst.sort(key=lambda nd: (nd[1], nd[0]))
        return out

    def _write_near(
        self,
        tenant: str,
        lists: dict[str, list[tuple[str, float]]],
        sources: dict[str, str],
        fresh: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        """Replace the NEAR lists of the given sources; `fresh`: POIs just inserted, which
        have no list to delete."""
        nodes = sorted(n for n in lists if n not in fresh)
        for start in range(0, len(nodes), 500):
            part = nodes[start : start + 500]
            self._db.execute(
                f"DELETE FROM edges WHERE tenant=? AND type='NEAR' AND src IN ({','.join('?' * len(part))})",
                [tenant, *part],
            )
        self._db.executemany(
            "INSERT INTO edges VALUES (?,?,?,'NEAR',?,?)",
            [(tenant, src, dst, float(d), sources[src]) for src, lst in lists.items() for dst, d in lst],
        )

    def _poi_rows(
        self, tenant: str, column: Literal["id", "h3"], values: Sequence[str]
    ) -> list[tuple[str, str, float, float, str]]:
        """(id, source, lat, lon, h3) of the tenant's POIs whose `column` is one of `values`
        (asked 500 at a time: SQLite caps the parameters of one statement)."""
        out = []
        for start in range(0, len(values), 500):
            part = values[start : start + 500]
            out += self._db.execute(
                "SELECT id, source, lat, lon, h3 FROM nodes WHERE tenant=? AND type='poi' "
                f"AND {column} IN ({','.join('?' * len(part))})",
                [tenant, *part],
            ).fetchall()
        return out

    def _refresh_zones(self, tenant: str, cells: Iterable[str]) -> None:
        """Zone nodes of `cells` rebuilt from what points at them (deleted when nothing does),
        then the communities (H3 parents) that hold them."""
        cells = sorted(set(cells))
        self._refresh_zone_nodes(tenant, cells)
        self._refresh_communities(tenant, {h3.cell_to_parent(c, self.community_resolution) for c in cells})

    def _refresh_zone_nodes(self, tenant: str, cells: Sequence[str]) -> None:
        for cell in cells:
            node = zone_node(cell)
            cats = dict(
                self._db.execute(
                    "SELECT n.category, COUNT(*) FROM edges e "
                    "JOIN nodes n ON n.tenant=e.tenant AND n.id=e.src "
                    "WHERE e.tenant=? AND e.dst=? AND e.type='IN_ZONE' AND n.type='poi' GROUP BY n.category",
                    (tenant, node),
                ).fetchall()
            )
            roads = self._db.execute(
                "SELECT COUNT(*) FROM edges WHERE tenant=? AND dst=? AND type='IN_ZONE' "
                "AND src LIKE 'road:%'",
                (tenant, node),
            ).fetchone()[0]
            docs = sorted(
                {
                    r[0].split(":")[1]
                    for r in self._db.execute(
                        "SELECT src FROM edges WHERE tenant=? AND dst=? AND type='MENTIONS'", (tenant, node)
                    )
                }
            )
            self._db.execute("DELETE FROM nodes WHERE tenant=? AND id=?", (tenant, node))
            if cats or roads or docs:
                lat, lon = h3.cell_to_latlng(cell)
                profile = {
                    "total": sum(cats.values()),
                    "categories": dict(sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))),
                    "roads": roads,
                    "documents": docs,
                }
                self._db.execute(
                    "INSERT INTO nodes (tenant,id,type,source,name,lat,lon,h3,data) "
                    "VALUES (?,?,'zone','graph',?,?,?,?,?)",
                    (tenant, node, cell, lat, lon, cell, json.dumps(profile)),
                )

    def _refresh_communities(self, tenant: str, parents: Iterable[str]) -> None:
        """Community nodes (`community:<h3 parent>`) summed from their zones' profiles, with an
        extractive summary; deleted when no zone is left. Rewriting one drops any LLM summary
        cached in it, so a cached summary never outlives the counts it was written from."""
        parents = sorted(set(parents))
        if not parents:
            return
        # the zones of these parents, found from the tenant's zone cells (a parent can have
        # 7^k children, far more than the zones that exist)
        wanted = set(parents)
        by_parent: dict[str, list[str]] = {}
        for (cell,) in self._db.execute("SELECT h3 FROM nodes WHERE tenant=? AND type='zone'", (tenant,)):
            parent = h3.cell_to_parent(cell, self.community_resolution)
            if parent in wanted:
                by_parent.setdefault(parent, []).append(cell)
        for parent in parents:
            node = f"community:{parent}"
            children = by_parent.get(parent, [])
            zones: dict[str, dict[str, Any]] = {}
            for start in range(0, len(children), 500):
                part = children[start : start + 500]
                for cell, data in self._db.execute(
                    f"SELECT h3, data FROM nodes WHERE tenant=? AND type='zone' "
                    f"AND h3 IN ({','.join('?' * len(part))})",
                    [tenant, *part],
                ):
                    zones[cell] = json.loads(data)
            self._db.execute("DELETE FROM nodes WHERE tenant=? AND id=?", (tenant, node))
            if not zones:
                continue
            profile = community_profile(parent, zones.values())
            lat, lon = h3.cell_to_latlng(parent)
            self._db.execute(
                "INSERT INTO nodes (tenant,id,type,source,name,lat,lon,h3,data) "
                "VALUES (?,?,'community','graph',?,?,?,?,?)",
                (tenant, node, parent, lat, lon, parent, json.dumps(profile)),
            )

    def _rebuild_stale_communities(self) -> None:
        """Communities for zones stored before they existed, or at another resolution."""
        with self._lock:
            stale = self._db.execute(
                "SELECT DISTINCT z.tenant FROM nodes z WHERE z.type='zone' AND NOT EXISTS ("
                "SELECT 1 FROM nodes c WHERE c.tenant=z.tenant AND c.type='community')"
            ).fetchall()
            wrong = {
                t
                for t, cell in self._db.execute("SELECT tenant, h3 FROM nodes WHERE type='community'")
                if h3.get_resolution(cell) != self.community_resolution
            }
            for tenant in sorted({t for (t,) in stale} | wrong):
                with transaction(self._db):
                    self._db.execute("DELETE FROM nodes WHERE tenant=? AND type='community'", (tenant,))
                    cells = [
                        r[0]
                        for r in self._db.execute(
                            "SELECT h3 FROM nodes WHERE tenant=? AND type='zone'", (tenant,)
                        )
                    ]
                    self._refresh_communities(
                        tenant, {h3.cell_to_parent(c, self.community_resolution) for c in cells}
                    )

    def community_summary(self, tenant: str, cell: str, digest: str) -> str | None:
        """The LLM summary cached for the community's summary text with this digest, if any."""
        row = self._db.execute(
            "SELECT data FROM nodes WHERE tenant=? AND id=?", (tenant, f"community:{cell}")
        ).fetchone()
        return json.loads(row[0]).get("llm_summaries", {}).get(digest) if row else None

    def set_community_summary(self, tenant: str, cell: str, digest: str, text: str) -> None:
        """Cache an LLM summary in the community node (kept while its counts are unchanged),
        keyed by the digest of the summary text it was written from: callers who see other
        documents have other texts, so one never reads a summary of what it may not see.
        The newest MAX_CACHED_SUMMARIES texts are kept."""
        with self._lock:
            row = self._db.execute(
                "SELECT data FROM nodes WHERE tenant=? AND id=?", (tenant, f"community:{cell}")
            ).fetchone()
            if row is None:
                return
            data = json.loads(row[0])
            data.pop("llm_summary", None)  # the one-entry cache of earlier versions
            cached = {k: v for k, v in data.get("llm_summaries", {}).items() if k != digest}
            cached[digest] = text
            data["llm_summaries"] = dict(list(cached.items())[-MAX_CACHED_SUMMARIES:])
            self._db.execute(
                "UPDATE nodes SET data=? WHERE tenant=? AND id=?",
                (json.dumps(data), tenant, f"community:{cell}"),
            )

    def _refresh_services(self, tenant: str, categories: Iterable[str]) -> None:
        for category in sorted(set(categories)):
            node = f"svc:{category}"
            n = self._db.execute(
                "SELECT COUNT(*) FROM edges WHERE tenant=? AND dst=? AND type='IS_A'", (tenant, node)
            ).fetchone()[0]
            self._db.execute("DELETE FROM nodes WHERE tenant=? AND id=?", (tenant, node))
            if n:
                self._db.execute(
                    "INSERT INTO nodes (tenant,id,type,source,name,category,data) "
                    "VALUES (?,?,'svc','graph',?,?,?)",
                    (tenant, node, category, category, json.dumps({"total": n})),
                )
