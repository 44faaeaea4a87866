"""Channel "maps": questions with map intent ("which maps cover Olinda?", "mapas de
Recife", "imagem de satélite de Porto Alegre") rank the map documents by how much of the
place their footprint covers.

The place is the question's geo filter, or else the place it names (the geo prior). Its
area is the gazetteer polygon, else the circle of its reach (a city's radius, a country's
area around its capital: the gazetteer has no country outlines). A map's footprint is
its document footprint (the registry). The score is

    coverage x sqrt(min(1, place area / footprint area)) x (TEXT_FLOOR + (1 - TEXT_FLOOR) / text rank)

coverage = area(footprint ∩ place) / area(place) is what the question asks; the square
root discounts a map much larger than the place (a world map covers all of Olinda, but it
is not a map of Olinda); the text rank (dense + BM25 over the maps' cards, the first card
scoring 1) orders maps of equal footprint ("elevation map" picks the DEM among three
Olinda rasters). Areas are geodesic (geo/reverse.py).

A channel and not only a re-ranking, because its candidates (the maps within the place)
need not be in any text list; but RRF alone would let a report naming the place outrank
the map asked for, so `maps_first` then puts the ranked maps ahead of the fused pages.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

from shapely.geometry import Polygon, box, shape
from shapely.geometry.base import BaseGeometry

from geo.folding import fold
from geo.gazetteer import Gazetteer, Place
from geo.reverse import circle, country_area_km2, geodesic_area_km2
from index.registry import Registry
from index.types import Branch, Filter, GeoBox, GeoPolygon, GeoRadius, Hit
from index.vector_store import VectorStore
from service.query.channels.base import BaseChannel, ChannelContext, EncodedQuery
from service.query.channels.bm25 import bm25_branch
from service.query.channels.dense import dense_branch
from service.query.geo_filter import ResolvedGeo
from service.query.types import PageEvidence

MAP_CHANNEL = "maps"
MAP_KIND = "map"
TEXT_FLOOR = 0.75  # the share of a map's score its footprint alone earns
CANDIDATES = 100  # map chunks read per question (several chunks may share a map)
PROMOTE_MIN_SCORE = 0.05  # a map scoring less (a world map for a country) is fused, not put first
# What names a map, in English and Portuguese (matched on folded, lower-case text).
_NOUN = (
    r"(?:maps|mapas|satellite images?|satellite imagery|imagery|image(?:m|ns) de satelite|"
    r"aerial (?:photos?|images?|imagery)|fotos? aereas?|ortho(?:photo|image)s?|ortofotos?|rasters?|"
    r"geotiffs?|dems?|elevation models?|modelos? digita(?:l|is) de (?:elevacao|terreno)|"
    r"cartas? topograficas?|topographic maps?)"
)
_SINGULAR = r"(?:map|mapa)"
_ASKS = (
    r"(?:which|what|any|list|find|show me|are there|is there|quais|qual|que|algum|alguma|existe|existem|"
    r"tem|ha|liste|mostre)"
)
_OF = r"(?:of|for|covering|that cover|showing|de|do|da|dos|das|em|cobrindo|que cobrem)"
# A question asks for maps when it asks which/what/any (map nouns), names them "of"/"de" a
# place, or starts with them; a question about one map's content ("Segundo o mapa Carte 1
# ..., quantos MW") does not.
MAP_INTENT = re.compile(
    rf"\b{_ASKS}\b[^?.!]{{0,30}}?\b(?:{_NOUN}|{_SINGULAR})\b"
    rf"|\b{_NOUN}\b(?:\s+[\w-]+){{0,3}}?\s+{_OF}\b"
    rf"|^\W*(?:{_NOUN}|{_SINGULAR})\b"
)


def has_map_intent(question: str) -> bool:
    """Whether the question asks for maps (imagery, rasters, DEMs) rather than facts."""
    return MAP_INTENT.search(fold(question).lower()) is not None


class MapsChannel(BaseChannel):
    """Map documents ranked by the share of the asked place their footprint covers."""

    selector = None  # runs whenever the question has map intent and a place
    name = MAP_CHANNEL

    def __init__(
        self,
        store: VectorStore,
        chunks: str,
        sparse_names: Sequence[str],
        prefetch: int,
        registry: Registry,
        gazetteer: Gazetteer | None,
    ) -> None:
        self.store = store
        self.chunks = chunks
        self.sparse_names = tuple(sparse_names)
        self.prefetch = prefetch
        self.registry = registry
        self.gazetteer = gazetteer
        self._countries: dict[str, Place] | None = None

    @classmethod
    def build(cls, ctx: ChannelContext) -> list[BaseChannel]:
        if ctx.registry is None:
            return []
        return [
            cls(
                ctx.store,
                ctx.collections.chunks.name,
                ctx.sparse_names,
                ctx.prefetch_limit,
                ctx.registry,
                ctx.gazetteer,
            )
        ]

    def branches(self, q: EncodedQuery) -> list[Branch]:
        """The selected chunk branches (dense + BM25) the cards are text-ranked by."""
        found = [dense_branch(q), *(bm25_branch(q, name) for name in self.sparse_names)]
        return [b for b in found if b is not None]

    def applies(self, q: EncodedQuery) -> bool:
        """Map intent, a place, and a chunk branch selected (as for the geo prior, so an
        evaluation's single-channel baselines stay single-channel)."""
        place = q.query.geo or q.query.prior
        return place is not None and has_map_intent(q.query.text) and bool(self.branches(q))

    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        place = q.query.geo or q.query.prior
        assert place is not None
        area = self.place_area(place)
        if area is None or area.is_empty:
            return []
        maps = Filter({**flt.match, "kind": [MAP_KIND]}, exclude=flt.exclude, any_of=list(place.conditions))
        hits = self.store.fused_search(self.chunks, self.branches(q), maps, CANDIDATES, self.prefetch)
        best: dict[str, Hit] = {}
        for hit in hits:  # each map's best card chunk, in text order
            best.setdefault(hit.payload["doc_id"], hit)
        place_km2 = geodesic_area_km2(area)
        scored: list[Hit] = []
        for text_rank, hit in enumerate(best.values(), start=1):
            footprint = self._footprint(q.query.tenant, hit.payload["doc_id"])
            if footprint is None:
                continue
            score = map_score(footprint, area, place_km2) * (TEXT_FLOOR + (1 - TEXT_FLOOR) / text_rank)
            if score > 0:
                scored.append(Hit(hit.id, score, hit.payload))
        return sorted(scored, key=lambda h: -h.score)

    def place_area(self, place: ResolvedGeo) -> BaseGeometry | None:
        """The place's area: its polygon, box or circle, or a country's reach."""
        for cond in place.conditions:
            if isinstance(cond, GeoPolygon):
                return _valid(Polygon(cond.ring))
            if isinstance(cond, GeoBox):
                return box(cond.min_lon, cond.min_lat, cond.max_lon, cond.max_lat)
            if isinstance(cond, GeoRadius):
                return circle(cond.lat, cond.lon, cond.radius_m)
        iso = place.description.get("country")
        if not iso:
            return None
        capital, km2 = self._country(iso), country_area_km2(iso)
        if capital is None or km2 is None:
            return None
        return circle(capital.lat, capital.lon, math.sqrt(km2 / math.pi) * 1000)

    def _country(self, iso: str) -> Place | None:
        if self.gazetteer is None:
            return None
        if self._countries is None:
            self._countries = {
                p.country: p for p in self.gazetteer.places() if p.kind == "country" and p.country
            }
        return self._countries.get(iso)

    def _footprint(self, tenant: str, doc_id: str) -> BaseGeometry | None:
        doc = self.registry.get(tenant, doc_id)
        if doc is None or not doc.footprint:
            return None
        try:
            return _valid(shape(json.loads(doc.footprint)))
        except (ValueError, TypeError, KeyError):
            return None


def map_score(footprint: BaseGeometry, place: BaseGeometry, place_km2: float | None = None) -> float:
    """coverage x sqrt(min(1, place area / footprint area)); 0 when they do not meet."""
    place_km2 = geodesic_area_km2(place) if place_km2 is None else place_km2
    footprint_km2 = geodesic_area_km2(footprint)
    if place_km2 <= 0 or footprint_km2 <= 0 or not footprint.intersects(place):
        return 0.0
    coverage = min(1.0, geodesic_area_km2(footprint.intersection(place)) / place_km2)
    return coverage * math.sqrt(min(1.0, place_km2 / footprint_km2))


def maps_first(pages: list[PageEvidence], maps: list[Hit] | None) -> list[PageEvidence]:
    """The fused pages with the maps channel's pages first, in its order, those scoring at
    least PROMOTE_MIN_SCORE (a no-op without them)."""
    promoted = [h for h in maps or [] if h.score >= PROMOTE_MIN_SCORE]
    if not promoted:
        return pages
    order = {(h.payload["doc_id"], int(h.payload["page_no"])): i for i, h in enumerate(promoted)}
    ranked = sorted(
        (p for p in pages if (p.doc_id, p.page_no) in order), key=lambda p: order[(p.doc_id, p.page_no)]
    )
    return ranked + [p for p in pages if (p.doc_id, p.page_no) not in order]


def _valid(geometry: BaseGeometry) -> BaseGeometry:
    return geometry if geometry.is_valid else geometry.buffer(0)
