"""A GeoPlan executed exactly: the features it targets read from the store, the area
applied with shapely (polygons) or haversine (circles), the filters and the operation
computed here, never by an LLM. The result carries the rows it used (name, value, id,
lat, lon), a GeoJSON FeatureCollection for the map, and what the data holds when the
question named an attribute or category it lacks.
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import h3

from geo.distance import haversine_m
from geo.folding import fold
from graph.attributes import as_number
from graph.categories import KIND_KEYS as OSM_KIND_KEYS
from graph.categories import SYNONYMS
from graph.plan import AGGREGATES, AttributeFilter, GeoPlan, Reference
from graph.store import Feature, GraphStore

MAX_LISTED_ATTRIBUTES = 15  # the most common numeric properties named when one is unknown
MAX_ROWS = 500  # rows returned with an answer (the count/aggregate is over all of them)
MAX_MAP_POLYGONS = 100  # polygons drawn as such on the map; beyond, their points
METRES_PER_DEGREE = 111_320.0
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "=": operator.eq,
    "!=": operator.ne,
}
ZoneNamer = Callable[[float, float], str | None]


@dataclass
class AnalyticResult:
    plan: GeoPlan
    value: float | None = None  # the count / aggregate / distance
    rows: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0  # rows before the MAX_ROWS cap
    unknown: dict[str, Any] | None = None  # {"kind": "attribute"|"category", "name", "available"}
    target_label: str = ""
    dataset_ids: list[str] = field(default_factory=list)
    dataset_names: list[str] = field(default_factory=list)  # the files the result was computed from
    area_geometry: dict[str, Any] | None = None
    group_label: str | None = None  # what a group-by grouped by: a property, a layer's name, "h3"
    notes: list[str] = field(default_factory=list)
    features: list[Feature] = field(default_factory=list, repr=False)  # the rows' features, for the map

    def block(self) -> dict[str, Any]:
        """`Answer.graph` for an analytical answer: {"plan", "rows", "geojson", ...}."""
        return {
            "plan": self.plan.model_dump(),
            "value": self.value,
            "rows": self.rows,
            "total": self.total,
            "truncated": self.total > len(self.rows),
            "unknown": self.unknown,
            "datasets": [
                {"id": i, "name": n} for i, n in zip(self.dataset_ids, self.dataset_names, strict=False)
            ],
            "notes": self.plan.notes + self.notes,
            "geojson": self.geojson(),
        }

    def geojson(self) -> dict[str, Any]:
        features: list[dict[str, Any]] = []
        if self.area_geometry is not None:
            features.append(
                {
                    "type": "Feature",
                    "geometry": self.area_geometry,
                    "properties": {"kind": "area", "name": self.plan.area.name},
                }
            )
        by_id = {f.id: f for f in self.features}
        polygons = 0
        for row in self.rows:
            feat = by_id.get(row.get("id", ""))
            geometry: dict[str, Any] = {"type": "Point", "coordinates": [row["lon"], row["lat"]]}
            if feat is not None and feat.geometry is not None and polygons < MAX_MAP_POLYGONS:
                geometry, polygons = feat.geometry, polygons + 1
            features.append({"type": "Feature", "geometry": geometry, "properties": {"kind": "row", **row}})
        return {"type": "FeatureCollection", "features": features}


def _row(f: Feature, value: Any = None, **extra: Any) -> dict[str, Any]:
    return {
        "name": f.name or f.id,
        "value": value,
        "id": f.id,
        "lat": f.lat,
        "lon": f.lon,
        "category": f.category,
        **extra,
    }


def _name_words(category: str) -> list[str]:
    words = [category.replace("_", " "), *SYNONYMS.get(category, ())]
    return sorted({fold(w) for w in words}, key=len, reverse=True)


class PlanExecutor:
    """Runs plans over one store. `namer(lat, lon)`: the place a point falls in (a polygon
    of the tenant's layers or a gazetteer place), to name H3 zones; `locate(name)`: a
    gazetteer place's (lat, lon) for a reference no dataset holds."""

    def __init__(
        self,
        store: GraphStore,
        namer: ZoneNamer | None = None,
        locate: Callable[[str], tuple[float, float] | None] | None = None,
    ) -> None:
        self.store = store
        self.namer = namer
        self.locate = locate

    def run(self, tenant: str, plan: GeoPlan) -> AnalyticResult:
        result = AnalyticResult(plan)
        if plan.operation == "distance":  # between two places: no target features
            self._op_distance(tenant, plan, [], result)
            return result
        feats = self._targets(tenant, plan, result)
        if result.unknown is not None:
            return result
        feats = self._in_area(tenant, plan, feats, result)
        held = self.store.categories(tenant)
        if not feats and plan.target.category and plan.target.category not in held:
            here: dict[str, int] = {}  # the categories found in the asked area
            for f in self._in_area(tenant, plan, self.store.features(tenant), AnalyticResult(plan)):
                here[f.category] = here.get(f.category, 0) + 1
            result.unknown = {
                "kind": "category",
                "name": plan.target.category,
                "available": _top(here or held),
            }
            return result
        feats, missing = _filtered(feats, plan.filters)
        if missing:
            result.notes.append(f"{missing} features lack a filtered attribute and were left out")
        lacking = plan.attribute is not None and feats and not any(plan.attribute in f.attrs for f in feats)
        if (plan.operation in AGGREGATES and plan.attribute is None) or lacking:
            result.unknown = {
                "kind": "attribute",
                "name": plan.attribute,
                "available": self._numeric(tenant, result),
                "by_dataset": self._numeric_by_dataset(tenant, result),
            }
            return result
        getattr(self, f"_op_{plan.operation}", self._op_list)(tenant, plan, feats, result)
        result.dataset_names = [
            info.name if (info := self.store.dataset(tenant, d)) else d for d in result.dataset_ids
        ]
        return result

    # ----------------------------------------------------------------- selection

    def _targets(self, tenant: str, plan: GeoPlan, result: AnalyticResult) -> list[Feature]:
        target = plan.target
        held = self.store.categories(tenant)
        if target.dataset:
            info = self.store.dataset(tenant, target.dataset)
            result.target_label = info.name if info else target.dataset
            result.dataset_ids = [target.dataset]
            if target.category:  # "restaurantes em Helsinque": that category of that file
                result.target_label = target.category
                feats = self.store.features(tenant, datasets=[target.dataset], categories=[target.category])
                return self._of_kind(feats, target.tag, result)
            return self.store.features(tenant, datasets=[target.dataset])
        if target.category and target.category in held and not target.name_contains:
            result.target_label = target.category
            feats = self.store.features(tenant, categories=[target.category])
            result.dataset_ids = sorted({f.source[3:] for f in feats if f.source.startswith("ds:")})
            return self._of_kind(feats, target.tag, result)
        if target.category or target.name_contains:
            words = _name_words(target.name_contains or target.category or "")
            feats = [
                f
                for f in self.store.features(tenant)
                if any(f" {w} " in f" {fold(f.name).replace('_', ' ')} " for w in words)
            ]
            result.target_label = target.category or target.name_contains or ""
            if feats:
                result.notes.append(
                    f"no category {result.target_label!r} in the data: features whose name says it"
                )
                result.dataset_ids = sorted({f.source[3:] for f in feats if f.source.startswith("ds:")})
                return feats
            result.unknown = {
                "kind": "category",
                "name": result.target_label,
                "available": _top(held),
            }
            return []
        result.unknown = {"kind": "category", "name": None, "available": sorted(held)[:20]}
        return []

    def _of_kind(self, feats: list[Feature], tag: str | None, result: AnalyticResult) -> list[Feature]:
        """The OSM features tagged with the asked kind when their category groups several
        (amenity=restaurant, not the fast_food grouped with it); the others are noted."""
        if not tag:
            return feats
        kept = [
            f
            for f in feats
            if not f.id.startswith("osm:") or tag in {str(f.attrs.get(k)) for k in OSM_KIND_KEYS}
        ]
        if left := len(feats) - len(kept):
            others = sorted({str(f.attrs.get("amenity")) for f in feats if f not in kept} - {"None"})
            result.notes.append(
                f"{left} features of other kinds ({', '.join(others)}) left out: only {tag} counted"
            )
        return kept

    def _numeric(self, tenant: str, result: AnalyticResult) -> list[str]:
        names: list[tuple[int, str]] = []
        for ds in result.dataset_ids:
            schema = self.store.dataset_schema(tenant, ds) or {}
            names += [
                (p["count"], p["name"])
                for p in schema.get("properties", [])
                if p["type"] in ("number", "mixed")
            ]
        best = sorted(names, key=lambda cn: (-cn[0], cn[1]))[:MAX_LISTED_ATTRIBUTES]
        return sorted(dict.fromkeys(n for _, n in best))

    def _numeric_by_dataset(self, tenant: str, result: AnalyticResult) -> dict[str, list[str]]:
        """Each target dataset's file name -> its most common numeric properties; files with
        a schema of their own (GeoJSON, CSV) before OSM files, whose tag keys are many."""
        out: dict[str, list[str]] = {}
        infos = [info for ds in result.dataset_ids if (info := self.store.dataset(tenant, ds)) is not None]
        for info in sorted(infos, key=lambda i: (i.kind in ("pbf", "osm-xml", "overpass"), i.name)):
            props = (self.store.dataset_schema(tenant, info.id) or {}).get("properties", [])
            numeric = sorted(
                (p for p in props if p["type"] in ("number", "mixed")), key=lambda p: (-p["count"], p["name"])
            )
            if numeric:
                out[info.name] = sorted(p["name"] for p in numeric[:MAX_LISTED_ATTRIBUTES])
        return out

    def _polygon(self, tenant: str, dataset: str | None, name: str | None, feature: str | None) -> Any:
        """The union of a layer's polygons with this name (or this feature id)."""
        from shapely import unary_union
        from shapely.geometry import shape

        layers = [dataset] if dataset else None
        polys = [
            shape(f.geometry)
            for f in self.store.features(tenant, datasets=layers, polygons_only=True)
            if (feature and f.id == feature) or (name and fold(f.name) == fold(name))
        ]
        return unary_union(polys) if polys else None

    def _in_area(
        self, tenant: str, plan: GeoPlan, feats: list[Feature], result: AnalyticResult
    ) -> list[Feature]:
        area = plan.area
        if area.kind == "all" or not feats:
            return feats
        if area.kind == "polygon":
            from shapely import points
            from shapely.geometry import mapping

            if (
                area.dataset
                and area.name
                and not area.radius_m
                and all(f.source == f"ds:{area.dataset}" for f in feats)
            ):
                # "a população do bairro Peixinhos" of the tracts themselves: those named so
                named = [f for f in feats if fold(f.name) == fold(area.name)]
                if named:
                    return named
            poly = self._polygon(tenant, area.dataset, area.name, None)
            if poly is None:
                result.notes.append(f"no polygon {area.name!r}: the whole dataset counted")
                return feats
            if area.radius_m:
                poly = poly.buffer(area.radius_m / METRES_PER_DEGREE)
            result.area_geometry = mapping(poly)
            inside = poly.covers(points([(f.lon, f.lat) for f in feats]))
            return [f for f, ok in zip(feats, inside, strict=True) if ok]
        if area.kind == "bbox" and area.bbox and len(area.bbox) == 4:
            w, s, e, n = area.bbox
            return [f for f in feats if w <= f.lon <= e and s <= f.lat <= n]
        lat, lon, own = area.lat, area.lon, None
        if (lat is None or lon is None) and area.name:  # a circle around a named POI
            if (hit := self._point_of(tenant, Reference(name=area.name))) is None:
                result.notes.append(f"no place {area.name!r} found: the whole dataset counted")
                return feats
            lat, lon, own = hit
        if lat is None or lon is None:
            return feats
        radius = area.radius_m or 10_000.0
        return [f for f in feats if f.id != own and haversine_m(lat, lon, f.lat, f.lon) <= radius]

    # ----------------------------------------------------------------- operations

    def _op_count(self, tenant: str, plan: GeoPlan, feats: list[Feature], result: AnalyticResult) -> None:
        result.value = float(len(feats))
        self._rows(result, sorted(feats, key=lambda f: (f.name, f.id)), plan.attribute)

    def _op_list(self, tenant: str, plan: GeoPlan, feats: list[Feature], result: AnalyticResult) -> None:
        self._op_count(tenant, plan, feats, result)

    _op_filter = _op_list

    def _values(self, plan: GeoPlan, feats: list[Feature]) -> list[tuple[Feature, float]]:
        attr = plan.attribute or ""
        return [(f, v) for f in feats if (v := as_number(f.attrs.get(attr))) is not None]

    def _op_argmax(self, tenant: str, plan: GeoPlan, feats: list[Feature], result: AnalyticResult) -> None:
        pairs = self._values(plan, feats)
        if not pairs:
            result.value = None
            return
        best = (max if plan.operation in ("argmax", "max") else min)(v for _, v in pairs)
        winners = sorted((f for f, v in pairs if v == best), key=lambda f: (f.name, f.id))
        result.value = best
        self._rows(result, winners, plan.attribute)
        shown = {f.name for f in winners[:MAX_ROWS]}
        names = Counter(f.name for f in feats if f.name in shown)  # a name shared: tell them apart
        for row, f in zip(result.rows, winners, strict=False):
            if names[f.name] > 1 and (code := _code_of(f)):
                row["name"] = (
                    f"{f.name} ({code[0]} {code[1]})"  # a tract of a bairro: its code tells it apart
                )
        if len(pairs) < len(feats):
            result.notes.append(
                f"{len(feats) - len(pairs)} of {len(feats)} features have no {plan.attribute}"
            )

    _op_argmin = _op_argmax
    _op_max = _op_argmax
    _op_min = _op_argmax

    def _op_sum(self, tenant: str, plan: GeoPlan, feats: list[Feature], result: AnalyticResult) -> None:
        pairs = self._values(plan, feats)
        values = [v for _, v in pairs]
        if plan.operation == "sum":
            result.value = math.fsum(values)
        else:
            result.value = math.fsum(values) / len(values) if values else None
        self._rows(result, [f for f, _ in pairs], plan.attribute)
        if len(pairs) < len(feats):
            result.notes.append(
                f"{len(feats) - len(pairs)} of {len(feats)} features have no {plan.attribute}"
            )

    _op_avg = _op_sum

    def _op_group_by(self, tenant: str, plan: GeoPlan, feats: list[Feature], result: AnalyticResult) -> None:
        groups: dict[str, list[Feature]] = {}
        details: dict[str, dict[str, Any]] = {}
        key = plan.group_by or "h3"
        if key == "h3":
            for f in feats:
                groups.setdefault(f.h3, []).append(f)
            for cell in groups:
                lat, lon = h3.cell_to_latlng(cell)
                name = self.namer(lat, lon) if self.namer else None
                details[cell] = {"name": name or cell, "h3": cell, "lat": lat, "lon": lon}
        elif key.startswith("layer:"):
            self._group_by_layer(tenant, key[6:], feats, groups, details, result)
        else:
            for f in feats:
                v = f.attrs.get(key)
                if v is not None:
                    groups.setdefault(str(v), []).append(f)
            for g, members in groups.items():
                shown = (
                    f"{key} {_plain(members[0].attrs.get(key))}"
                    if as_number(members[0].attrs.get(key)) is not None
                    else g
                )
                details[g] = {"name": shown, "lat": members[0].lat, "lon": members[0].lon}
            if missing := sum(1 for f in feats if f.attrs.get(key) is None):
                result.notes.append(f"{missing} features have no {key}")
        rows = []
        for g, members in groups.items():
            if plan.attribute:
                values = [v for f in members if (v := as_number(f.attrs.get(plan.attribute))) is not None]
                agg = "avg" if "aggregate: avg" in plan.notes else "sum"
                value = (
                    (math.fsum(values) / len(values) if values else None)
                    if agg == "avg"
                    else math.fsum(values)
                )
            else:
                value = len(members)
            rows.append({**details[g], "value": value, "id": details[g].get("id", g), "count": len(members)})
        sign = 1 if plan.order == "asc" else -1
        rows.sort(
            key=lambda r: (r["value"] is None, sign * (r["value"] or 0), str(r["name"]))
        )  # no value: last
        result.value = float(len(rows))
        result.total = len(rows)
        result.rows = rows[:MAX_ROWS]

    def _group_by_layer(
        self,
        tenant: str,
        layer: str,
        feats: list[Feature],
        groups: dict[str, list[Feature]],
        details: dict[str, dict[str, Any]],
        result: AnalyticResult,
    ) -> None:
        from shapely import STRtree, points
        from shapely.geometry import shape

        polys = self.store.features(tenant, datasets=[layer], polygons_only=True)
        shapes = [shape(p.geometry) for p in polys]
        tree = STRtree(shapes)
        pts = points([(f.lon, f.lat) for f in feats]) if feats else []
        outside = 0
        for f, pt in zip(feats, pts, strict=True):
            hits = [int(i) for i in tree.query(pt, predicate="covered_by")]
            if not hits:
                outside += 1
                continue
            poly = polys[min(hits)]
            name = poly.name or poly.id
            groups.setdefault(name, []).append(f)
            details.setdefault(name, {"name": name, "id": poly.id, "lat": poly.lat, "lon": poly.lon})
        for poly in polys:  # polygons holding none: "the bairro with the fewest schools" may have 0
            name = poly.name or poly.id
            if name not in groups:
                groups[name] = []
                details[name] = {"name": name, "id": poly.id, "lat": poly.lat, "lon": poly.lon}
        if outside:
            result.notes.append(f"{outside} features fall in no polygon of the layer")
        info = self.store.dataset(tenant, layer)
        if info is not None:
            result.group_label = info.name
            if layer not in result.dataset_ids:
                result.dataset_ids.append(layer)

    def _point_of(self, tenant: str, ref: Reference) -> tuple[float, float, str | None] | None:
        """(lat, lon, poi id) of a reference: its coordinates, a POI or polygon of that
        name, or a gazetteer place."""
        if ref.lat is not None and ref.lon is not None and not ref.name:
            return ref.lat, ref.lon, None
        if ref.name:
            key = fold(ref.name)
            for f in self.store.features(tenant):
                if fold(f.name) == key:
                    return f.lat, f.lon, f.id
            if ref.lat is not None and ref.lon is not None:
                return ref.lat, ref.lon, None
            if self.locate and (hit := self.locate(ref.name)):
                return hit[0], hit[1], None
        return None

    def _op_nearest(self, tenant: str, plan: GeoPlan, feats: list[Feature], result: AnalyticResult) -> None:
        if not plan.references or (origin := self._point_of(tenant, plan.references[0])) is None:
            result.notes.append("no reference point found in the question")
            result.value = None
            return
        lat, lon, own = origin
        scored = sorted(
            ((round(haversine_m(lat, lon, f.lat, f.lon), 1), f) for f in feats if f.id != own),
            key=lambda df: (df[0], df[1].id),
        )[: plan.k]
        result.value = scored[0][0] if scored else None
        result.rows = [_row(f, d, dist_m=d) for d, f in scored]
        result.total = len(result.rows)
        result.features = [f for _, f in scored]

    def _op_distance(self, tenant: str, plan: GeoPlan, feats: list[Feature], result: AnalyticResult) -> None:
        points_ = [self._point_of(tenant, r) for r in plan.references[:2]]
        if len(points_) < 2 or any(p is None for p in points_):
            result.notes.append("two places are needed for a distance")
            result.value = None
            return
        (a_lat, a_lon, _), (b_lat, b_lon, _) = points_  # type: ignore[misc]
        d = round(haversine_m(a_lat, a_lon, b_lat, b_lon), 1)
        result.value = d
        result.rows = [
            {
                "name": r.name or f"{p[0]:.5f},{p[1]:.5f}",
                "value": d,
                "id": p[2] or "",
                "lat": p[0],
                "lon": p[1],
            }
            for r, p in zip(plan.references[:2], points_, strict=True)
            if p is not None
        ]
        result.total = 2

    def _op_pairs(self, tenant: str, plan: GeoPlan, feats: list[Feature], result: AnalyticResult) -> None:
        result.notes.append("pairs are answered by the relational retriever")

    def _rows(self, result: AnalyticResult, feats: Sequence[Feature], attribute: str | None) -> None:
        result.total = len(feats)
        kept = list(feats[:MAX_ROWS])
        result.features = kept
        result.rows = [_row(f, f.attrs.get(attribute) if attribute else None) for f in kept]


def _code_of(f: Feature) -> tuple[str, str] | None:
    """The feature's own code property (CD_GEOCODI, id, codigo) and value, if it has one."""
    for prefixes in (("cd_geocod", "geocod", "codigo", "cod"), ("id", "fid", "code")):
        for key, value in f.attrs.items():
            if value is not None and fold(key).startswith(prefixes):
                return key, _plain(value)
    return None


def _plain(value: Any) -> str:
    """A property value as written: 6 for 6.0, digits of a code without separators."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _top(categories: dict[str, int], n: int = 20) -> list[str]:
    """The `n` most common categories."""
    return [c for c, _ in sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))][:n]


def _filtered(feats: list[Feature], filters: list[AttributeFilter]) -> tuple[list[Feature], int]:
    """Features passing every filter; and how many lacked a filtered attribute."""
    if not filters:
        return feats, 0
    out, missing = [], 0
    for f in feats:
        ok = True
        for flt in filters:
            value = f.attrs.get(flt.attribute)
            if value is None:
                ok, missing = False, missing + 1
                break
            want: Any = flt.value
            if isinstance(want, int | float) and not isinstance(want, bool):
                value = as_number(value)
                if value is None:
                    ok = False
                    break
            elif isinstance(want, str):
                value, want = fold(str(value)), fold(want)
            if not _OPS[flt.op](value, want):
                ok = False
                break
        if ok:
            out.append(f)
    return out, missing
