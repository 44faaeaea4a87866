"""`GraphChannel`: what Carta needs from the graph, behind one object: POI datasets
(add, list, delete), document pages as MENTIONS, and relational answers for questions
that ask for pairs of places. Built once by `service.carta.Carta` from Settings."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from geo.distance import haversine_m
from geo.gazetteer import Gazetteer
from graph.analytics import AnalyticResult, PlanExecutor
from graph.area_view import AreaView, Within
from graph.communities import GlobalResult, GlobalSearch, global_query
from graph.coverage import Coverage, Extent
from graph.errors import BadAliases, DatasetNotFound, EmptyDataset, PoiFormatError, TooManyPois
from graph.llm_parser import LLMConstraintParser, LLMPlanParser
from graph.parser import ConstraintParser, Constraints, RuleParser, names_relation
from graph.plan import GeoPlan
from graph.plan_parser import Catalog, DatasetEntry, PlanRuleParser, may_be_analytical
from graph.retrieval import DEFAULT_AREA_RADIUS_M, Embedder, RelationalResult, RelationalRetriever
from graph.sources import Parsed, dataset_name, parse
from graph.store import DatasetInfo, DocFilter, GraphStore, poi_node, zone_node
from graph.zone_names import ZoneNamer
from models.llm_client import LLMClient

_T = TypeVar("_T")

MAX_CITED_PAGES = 5
FAR_PLACE_M = 300_000.0  # a named place this far from every row of a whole-dataset answer is not its
CITY_POPULATION = 100_000  # a polygon named like a city this large is read as the city


@dataclass
class MentioningPage:
    doc_id: str
    page_no: int
    title: str
    excerpt: str
    mentions: int


class GraphChannel:
    def __init__(
        self,
        path: Path,
        gazetteer: Gazetteer | None = None,
        resolution: int = 7,
        near_radius_m: float = 500.0,
        near_max: int = 10,
        area_radius_m: float = DEFAULT_AREA_RADIUS_M,
        max_pairs: int = 5000,
        embed: Embedder | None = None,
        parser: ConstraintParser | None = None,
        llm: LLMClient | None = None,
        community_resolution: int = 5,
        llm_summaries: bool = False,
        max_dataset_pois: int = 200_000,
    ) -> None:
        self.store = GraphStore(path, resolution, near_radius_m, near_max, community_resolution)
        self.max_dataset_pois = max_dataset_pois
        self.gazetteer = gazetteer
        self.rule_parser = RuleParser(gazetteer)
        # with an LLM: constraints by strict JSON schema, the rules as fallback
        self.parser: ConstraintParser = parser or (
            LLMConstraintParser(llm, self.rule_parser) if llm is not None else self.rule_parser
        )
        self._polygon_names: dict[str, tuple[tuple[str, ...], list[tuple[str, str, str]]]] = {}
        self.plan_rules = PlanRuleParser(self.rule_parser.place_hint, self._is_city)
        self.plan_parser: PlanRuleParser | LLMPlanParser = (
            LLMPlanParser(llm, self.plan_rules) if llm is not None else self.plan_rules
        )
        self.retriever = RelationalRetriever(self.store, area_radius_m, max_pairs, embed)
        self.global_search = GlobalSearch(self.store, llm, llm_summaries, gazetteer)

    def close(self) -> None:
        self.store.close()

    # ----------------------------------------------------------------- datasets

    def add_dataset(
        self,
        data: bytes,
        filename: str,
        tenant: str,
        category: str | None = None,
        aliases: dict[str, list[str]] | None = None,
    ) -> tuple[DatasetInfo, bool]:
        """Parse and store one POI file (PoiFormatError / EmptyDataset when unusable,
        TooManyPois over the per-dataset cap, checked before anything is stored or joined).
        `aliases`: question words naming a property ({"V014": ["residentes", "population"]})."""
        parsed: Parsed = parse(data, dataset_name(filename), category)
        kind = parsed.kind
        if len(parsed.pois) > self.max_dataset_pois:
            raise TooManyPois(
                f"{filename}: {len(parsed.pois):,} points of interest; a dataset may hold at most "
                f"{self.max_dataset_pois:,} (CARTA_GRAPH_MAX_DATASET_POIS): split the file"
            )
        if not parsed.pois and not parsed.roads:
            raise EmptyDataset(
                f"{filename}: no point of interest found (no feature with a usable location); "
                f"{parsed.skipped} features skipped (null or invalid geometries, coordinates outside "
                "lon/lat ranges)"
            )
        if aliases:
            known = {p for poi in parsed.pois for p in poi.attrs}
            if unknown := sorted(set(aliases) - known):
                raise BadAliases(
                    f"aliases name properties the file lacks: {', '.join(unknown)}; "
                    f"its properties: {', '.join(sorted(known)[:40]) or 'none'}"
                )
        salt = (category or "") + (json.dumps(aliases, sort_keys=True) if aliases else "")
        # a CSV's or GeoJSON's ids are the file's own (row numbers, its id column): another
        # file under the same name keeps its rows under ids of its own (GraphStore.add_dataset)
        own_ids = dataset_name(filename) if kind in ("csv", "geojson") else None
        return self.store.add_dataset(
            tenant, parsed, filename, kind, data + salt.encode(), aliases, file_prefix=own_ids
        )

    def datasets(self, tenant: str) -> list[DatasetInfo]:
        return self.store.datasets(tenant)

    def dataset(self, tenant: str, dataset_id: str) -> DatasetInfo:
        info = self.store.dataset(tenant, dataset_id)
        if info is None:
            raise DatasetNotFound(f"no dataset {dataset_id!r}")
        return info

    def delete_dataset(self, tenant: str, dataset_id: str) -> None:
        if not self.store.delete_dataset(tenant, dataset_id):
            raise DatasetNotFound(f"no dataset {dataset_id!r}")

    # ----------------------------------------------------------------- documents

    def index_document(self, tenant: str, doc_id: str, title: str, pages: Sequence[dict[str, Any]]) -> int:
        return self.store.index_document(tenant, doc_id, title, pages)

    def delete_document(self, tenant: str, doc_id: str) -> None:
        self.store.delete_document(tenant, doc_id)

    # ----------------------------------------------------------------- questions

    def constraints(self, question: str, tenant: str | None = None) -> Constraints:
        known = self.store.categories(tenant) if tenant else {}
        return self.parser.parse(question, known)

    def answer(
        self, question: str, tenant: str, visible: DocFilter | None = None, within: Within | None = None
    ) -> RelationalResult | None:
        """Relational evidence when the question asks for pairs of categories the tenant
        has POIs of; None otherwise (the question is not relational here). `visible`: the
        documents the caller may see (None: all), the only ones the evidence names;
        `within`: the request's geo filter, the only POIs paired (graph/area_view.py)."""
        held = self.store.categories(tenant)
        if not held:
            return None  # no POI dataset: nothing to relate (and no LLM call to parse)
        constraints = self.parser.parse(question, held)
        if not constraints.relational:
            return None
        if not any(c in held for pair in constraints.pairs for c in pair):
            return None
        match = None
        if constraints.place:  # resolved in the question; else the parser's (an LLM's) place name alone
            match = self.rule_parser.place_hint(question) or self.rule_parser.place_hint(constraints.place)
        place = match.place if match and match.place.kind not in ("country", "continent", "state") else None
        return self._scoped(self.retriever, within).retrieve(tenant, constraints, place, question, visible)

    def catalog(self, tenant: str) -> Catalog:
        """What the tenant's datasets hold, for the plan parser."""
        entries = []
        infos = self.store.datasets(tenant)
        key = tuple(i.id for i in infos)
        cached = self._polygon_names.get(tenant)
        if cached is None or cached[0] != key:  # the polygons change only with the datasets
            cached = self._polygon_names[tenant] = (key, self.store.polygon_names(tenant))
        for info in infos:
            schema = self.store.dataset_schema(tenant, info.id) or {}
            entries.append(
                DatasetEntry(info.id, dataset_name(info.name), schema, schema.get("aliases", {}), info.kind)
            )
        return Catalog(
            entries,
            self.store.categories(tenant),
            cached[1],
            lambda: self.store.poi_names(tenant),
        )

    def plan(self, question: str, tenant: str, catalog: Catalog | None = None) -> GeoPlan | None:
        """The analytical plan of a question over the tenant's data, or None when it asks
        for none (the LLM's when one is configured, the rules' otherwise)."""
        if not may_be_analytical(question) or not self.store.categories(tenant):
            return None
        return self.plan_parser.parse(question, catalog or self.catalog(tenant))

    def analyze(self, question: str, tenant: str, within: Within | None = None) -> AnalyticResult | None:
        """The executed plan of an analytical question; None when the question is not one
        here, asks for pairs (`answer` answers those), or asks about a place the loaded
        data does not cover (graph/coverage.py: the documents may answer it). `within`:
        the request's geo filter; only the features inside it are counted, ranked, measured."""
        if not may_be_analytical(question) or not self.store.categories(tenant):
            return None
        catalog = self.catalog(tenant)
        plan = self.plan(question, tenant, catalog)
        if plan is None or plan.operation == "pairs":
            return None
        if self.coverage(tenant, catalog).uncovered(question, plan) is not None:
            return None
        store = AreaView(self.store, within) if within is not None else self.store
        result = PlanExecutor(store, self._zone_namer(tenant), self._locate).run(tenant, plan)
        if plan.area.kind == "all" and not plan.area.name and self._far_from_place(question, result):
            return None  # "Nagaland's population in the 2011 census": not the Olinda tracts' question
        return result

    def coverage(self, tenant: str, catalog: Catalog | None = None) -> Coverage:
        """What the tenant's loaded data covers, to judge a plan's place by."""
        extents = [Extent(*e) for e in self.store.extents(tenant)]
        return Coverage(extents, catalog or self.catalog(tenant), self.gazetteer, self.rule_parser.place_hint)

    def _far_from_place(self, question: str, result: AnalyticResult) -> bool:
        """Whether the question names a city or state that none of the result's rows is
        within FAR_PLACE_M of: the data is not about that place."""
        match = self.rule_parser.place_hint(question)
        if match is None or match.place.kind in ("country", "continent"):
            return False
        points = [
            (r["lat"], r["lon"]) for r in result.rows if r.get("lat") is not None and r.get("lon") is not None
        ]
        if not points:
            return False
        place = match.place
        return min(haversine_m(place.lat, place.lon, lat, lon) for lat, lon in points) > FAR_PLACE_M

    def _is_city(self, name: str) -> bool:
        if self.gazetteer is None:
            return False
        best = self.gazetteer.lookup(name)
        return (
            bool(best)
            and best[0].place.source in ("geonames", "builtin")
            and best[0].place.population >= CITY_POPULATION
            and (best[0].place.kind not in ("country", "continent", "state"))
        )

    def _locate(self, name: str) -> tuple[float, float] | None:
        if self.gazetteer is None:
            return None
        best = self.gazetteer.lookup(name)
        return (best[0].place.lat, best[0].place.lon) if best else None

    def _scoped(self, reader: _T, within: Within | None) -> _T:
        """`reader` (the retriever, the global search) reading the store through `within`."""
        if within is None:
            return reader
        scoped = copy.copy(reader)
        scoped.store = AreaView(self.store, within)  # type: ignore[attr-defined]
        return scoped

    def _zone_namer(self, tenant: str) -> ZoneNamer:
        return ZoneNamer(self.store, self.gazetteer, tenant)

    def answer_global(
        self,
        question: str,
        tenant: str,
        language: str = "en",
        visible: DocFilter | None = None,
        within: Within | None = None,
    ) -> GlobalResult | None:
        """Zones ranked for a corpus-wide question ("which areas have the most schools?");
        None when the question is not one (or names a relation: that is `answer`'s).
        `visible`, `within`: as for `answer`."""
        held = self.store.categories(tenant)
        query = global_query(question, held)
        if query is None or names_relation(question):
            return None
        if not any(c in held for c in query.categories):
            return None
        return self._scoped(self.global_search, within).answer(tenant, question, query, language, visible)

    def pages_mentioning_zones(
        self, tenant: str, cells: Sequence[str], visible: DocFilter | None = None
    ) -> list[MentioningPage]:
        rows = self.store.pages_mentioning(tenant, {zone_node(c) for c in cells}, visible)
        return [MentioningPage(*r) for r in rows[:MAX_CITED_PAGES]]

    def pages_mentioning_rows(
        self, tenant: str, result: AnalyticResult, visible: DocFilter | None = None
    ) -> list[MentioningPage]:
        """Pages (of documents `visible` admits) that mention the features or zones of an
        analytical answer's rows."""
        ids = [r["id"] for r in result.rows if r.get("id")]
        targets = {poi_node(i) for i in ids} | {zone_node(r["h3"]) for r in result.rows if r.get("h3")}
        targets |= {zone_node(f.h3) for f in result.features}
        rows = self.store.pages_mentioning(tenant, targets, visible)
        return [MentioningPage(*r) for r in rows[:MAX_CITED_PAGES]]

    def mentioning_pages(
        self, tenant: str, result: RelationalResult, visible: DocFilter | None = None
    ) -> list[MentioningPage]:
        """Pages (of documents `visible` admits) that mention the places of the returned
        pairs (their POIs or zones)."""
        targets = {poi_node(r.id) for r in result.pois} | {zone_node(r.h3) for r in result.pois}
        if result.area.place_id:
            targets.add(f"place:{result.area.place_id}")
        rows = self.store.pages_mentioning(tenant, targets, visible)
        return [MentioningPage(*r) for r in rows[:MAX_CITED_PAGES]]


__all__ = ["DatasetNotFound", "EmptyDataset", "GraphChannel", "MentioningPage", "PoiFormatError"]
