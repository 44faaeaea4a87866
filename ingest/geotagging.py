"""Where a page or chunk is about: geo tags from coordinates in its text, place names
(gazetteers), a raster's georeference or a photo's EXIF, turned into the payload fields
the engine filters on (`location` points, H3 tokens, area coverings)."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from geo.coordinates import find_coordinates
from geo.distance import haversine_m
from geo.folding import fold
from geo.gazetteer import Gazetteer
from geo.h3tags import (
    GEO_POINT_FIELD,
    RESOLUTIONS,
    area_cells,
    area_tokens,
    field_name,
    hashed_h3_sparse,
    merge_tokens,
    point_tokens,
)
from geo.shapes import outer_ring

MAX_TAGS_PER_UNIT = 20
REGION_KINDS = frozenset({"state", "country", "continent"})
FOOTPRINT_MIN_CONFIDENCE = 0.7
FOOTPRINT_FAR_WEIGHT = 3.0  # summed confidence that keeps a place far from the cluster
ANCHOR_RADIUS_KM = 300.0
MAJOR_CITY = 1_000_000
ANCHOR_CANDIDATES = 50  # the heaviest points weighed for the anchor (support is quadratic)
GLOBAL_MIN_COUNTRIES = 5  # a document naming this many countries, none dominant, is about the world
SMALL_TOWN = 100_000  # below this, a name far from the text's metropolis is read as a local place


@dataclass
class GeoTag:
    lat: float
    lon: float
    source: str  # "text-coordinate", "gazetteer", "raster", "exif", "metadata"
    label: str  # the text that produced it, or the place name
    confidence: float
    place_id: str | None = None
    ring: list[tuple[float, float]] | None = field(default=None, repr=False)  # area outline (lon, lat)
    kind: str = "point"  # gazetteer kind (city, area, poi, state, country, continent) or "point"
    population: int = 0
    country: str | None = None  # ISO2 of a gazetteer place
    admin1: str | None = None  # GeoNames admin1 code (the state) of a gazetteer place

    @property
    def is_local(self) -> bool:
        """States, countries and continents are mentions, not locations: a page naming
        "Brasil" is not located at Brasília."""
        return self.kind not in REGION_KINDS

    def to_payload(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("ring")
        data.pop("admin1")
        data["area"] = self.ring is not None
        return data


class GeoTagger:
    """Finds geo tags in text. The gazetteer is optional (without it only coordinates count)."""

    def __init__(self, gazetteer: Gazetteer | None, min_confidence: float = 0.5) -> None:
        self.gazetteer = gazetteer
        self.min_confidence = min_confidence

    def country_hint(self, text: str) -> str | None:
        """The country most confidently named in a document's opening text."""
        if self.gazetteer is None:
            return None
        countries = Counter(
            m.place.country
            for m in self.gazetteer.find_places(text)
            if m.place.country and m.confidence >= 0.6
        )
        return countries.most_common(1)[0][0] if countries else None

    def tags(self, text: str, country_hint: str | None = None) -> list[GeoTag]:
        found: list[GeoTag] = [
            GeoTag(c.lat, c.lon, "text-coordinate", c.text, c.confidence)
            for c in find_coordinates(text)
            if c.confidence >= self.min_confidence
        ]
        if self.gazetteer is not None:
            near = [(t.lat, t.lon) for t in found]
            for m in self.gazetteer.find_places(text, country_hint=country_hint, near=near):
                confidence = m.confidence * (AFFILIATION_FACTOR if _in_address(text, m.start, m.end) else 1.0)
                if (
                    confidence < self.min_confidence
                    or _names_something_else(text, m.start)
                    or _names_water_after(text, m.end)
                ):
                    continue
                found.append(
                    GeoTag(
                        m.place.lat,
                        m.place.lon,
                        "gazetteer",
                        m.place.name,
                        confidence,
                        place_id=m.place.id,
                        ring=outer_ring(m.place.geometry),
                        kind=m.place.kind,
                        population=m.place.population,
                        country=m.place.country,
                        admin1=m.place.admin1,
                    )
                )
        return _dedupe(_within_text_cluster(found))[:MAX_TAGS_PER_UNIT]


# A town name right after these words names a river, a dam or a person, not the town:
# "rio Paraopeba", "barragem de Fundão", "vereador Carlos Chagas".
NOT_A_PLACE_BEFORE = frozenset(
    "rio rios riacho corrego lago lagoa acude barragem represa reservatorio baia ilha "
    "cheia cheias enchente vazante bacia margem margens leito foz nascente afluente "
    "river lake dam reservoir creek bay "
    "protocole protocolo protocol accord acordo agreement sommet cupula summit conferencia conference "
    "convention convencao tratado traite treaty "
    "vereador vereadora prefeito prefeita governador governadora deputado deputada senador senadora "
    "ministro ministra presidente dr dra sr sra dona mr mrs ms prof professor professora".split()
)
_CONNECTORS = frozenset({"de", "do", "da", "dos", "das", "of", "the"})
# ... and a name right before these names a water body or a treaty: "Guaíba lake", "Paris Agreement".
NOT_A_PLACE_AFTER = frozenset(
    "lake river dam reservoir creek bay basin lagoon estuary "
    "protocol agreement accord summit convention".split()
)


# A place in a postal address or an author's affiliation says where the author works, not
# what the document is about: "165 rue Ph. Maupas - 30900 NIMES", "(Kirby Institute,
# University of New South Wales), Sydney, Australia", "Lab Services in Rochester, Minnesota".
AFFILIATION_FACTOR = 0.5
AFFILIATION_WORDS = frozenset(
    "university universidade universidad universite universita universitat institute instituto "
    "institut school college faculty faculdade facultad faculte department departamento "
    "departement laboratory laboratorio laboratoire lab labs hospital clinic organization "
    "organisation foundation fundacao fundacion inc ltd ltda gmbh".split()
)
_POSTCODE_BEFORE = re.compile(r"\b\d{4,5}(?:-\d{3})?\s*$")
_AFFILIATION_WINDOW = 80


def _in_address(text: str, start: int, end: int) -> bool:
    """True when a place match sits in an address or an affiliation: right after a postcode
    on its line, or ending its clause (a comma, parenthesis or line end follows) within a
    few words of an institution word of the same sentence."""
    line = text[text.rfind("\n", 0, start) + 1 : start]
    if _POSTCODE_BEFORE.search(line):
        return True
    if not re.match(r"\s*(?:[,)]|\n|$)", text[end : end + 3]):
        return False
    before = text[max(0, start - _AFFILIATION_WINDOW) : start]
    before = re.split(r"[.;:]\s|\n\s*\n", before)[-1]
    return any(w in AFFILIATION_WORDS for w in re.findall(r"\w+", fold(before)))


def _names_water_after(text: str, end: int) -> bool:
    """True when the word after a place match says it names a lake, river or dam."""
    words = re.findall(r"[\w]+", fold(text[end : end + 20]))
    return bool(words) and words[0] in NOT_A_PLACE_AFTER


def _names_something_else(text: str, start: int) -> bool:
    """True when the word(s) before a place match say it names a river, dam or person."""
    words = re.findall(r"[\w]+", fold(text[max(0, start - 40) : start]))
    while words and words[-1] in _CONNECTORS:
        words.pop()
    return bool(words) and words[-1] in NOT_A_PLACE_BEFORE


def _within_text_cluster(tags: list[GeoTag]) -> list[GeoTag]:
    """Drop a small town named far from a metropolis the same text names: in "Em
    Salvador, as praias da Penha" or "Boa Viagem, no Recife" the small name is a beach
    or bairro of the metropolis missing from the gazetteers, not the namesake town 600 or
    1,800 km away. Two far places of comparable size both stay ("Campos ... Macaé")."""
    metros = [t for t in tags if t.source == "gazetteer" and t.kind == "city" and t.population >= MAJOR_CITY]
    if not metros:
        return tags
    return [
        t
        for t in tags
        if t.source != "gazetteer"
        or t.kind != "city"
        or t.population >= SMALL_TOWN
        or any(haversine_m(t.lat, t.lon, m.lat, m.lon) <= ANCHOR_RADIUS_KM * 1000 for m in metros)
    ]


def _dedupe(tags: list[GeoTag]) -> list[GeoTag]:
    best: dict[tuple[str, float, float], GeoTag] = {}
    for tag in tags:
        key = (tag.place_id or "", round(tag.lat, 4), round(tag.lon, 4))
        if key not in best or tag.confidence > best[key].confidence:
            best[key] = tag
    return sorted(best.values(), key=lambda t: -t.confidence)


def choose_anchor(tag_lists: list[list[GeoTag]]) -> tuple[float, float] | None:
    """Where a document mostly is: the local place with the most support (its own mention
    weight, the places around it, the state it lies in; explicit coordinates count double);
    failing that, the most-mentioned state (a crop report about Mato Grosso); None for a
    document about the world (see `names_the_world`)."""
    tags = [t for tags in tag_lists for t in tags]
    if names_the_world(tags):
        return None
    for eligible in (lambda t: t.is_local, lambda t: t.kind == "state"):
        if place := heaviest_place([t for t in tags if eligible(t)], tags):
            return place
    return None


def _weight(tag: GeoTag) -> float:
    return tag.confidence * (2 if tag.source != "gazetteer" else 1)


def heaviest_place(candidates: list[GeoTag], context: list[GeoTag]) -> tuple[float, float] | None:
    """The candidate point with the most support: its own mention weight, plus the weight of
    the other candidates within ANCHOR_RADIUS_KM, plus that of the states of `context` it
    lies in. A Salvador bulletin whose table names one beach that is also a town in Ceará
    stays in Salvador: Salvador has Bahia and its metropolitan towns around it."""
    weight: Counter[tuple[float, float]] = Counter()
    state_of: dict[tuple[float, float], tuple[str, str]] = {}
    for t in candidates:
        point = (round(t.lat, 2), round(t.lon, 2))
        weight[point] += _weight(t)
        if t.country and t.admin1 and t.kind != "state":
            state_of[point] = (t.country, t.admin1)
    if not weight:
        return None
    states: Counter[tuple[str, str]] = Counter()
    for t in context:
        if t.kind == "state" and t.country and t.admin1:
            states[(t.country, t.admin1)] += _weight(t)
    radius_m = ANCHOR_RADIUS_KM * 1000

    def support(point: tuple[float, float]) -> float:
        around = sum(
            w for other, w in weight.items() if other != point and haversine_m(*point, *other) <= radius_m
        )
        return weight[point] + around + (states[state_of[point]] if point in state_of else 0.0)

    return max((p for p, _ in weight.most_common(ANCHOR_CANDIDATES)), key=support)


def names_the_world(tags: list[GeoTag]) -> bool:
    """True for a document about no one place: it names places in GLOBAL_MIN_COUNTRIES or
    more countries and no country holds half of the mention weight (a WHO guideline with
    contributors and case studies on four continents). Such a document has no anchor and no
    footprint, rather than a hull from London to Yangon."""
    weight: Counter[str] = Counter()
    for t in tags:
        if t.source == "gazetteer" and t.country:
            weight[t.country] += t.confidence
    if len(weight) < GLOBAL_MIN_COUNTRIES:
        return False
    return weight.most_common(1)[0][1] < 0.5 * sum(weight.values())


def coherent(
    tags: list[GeoTag], anchor: tuple[float, float] | None, max_km: float = ANCHOR_RADIUS_KM
) -> list[GeoTag]:
    """Drop place-name tags far from the document's anchor unless they name a major city:
    a Salvador beach called "Penha" is not the town of Penha 1,600 km south, but a Recife
    report naming São Paulo does mean São Paulo. Name matches alone cannot tell a far
    small town from a local place missing from the gazetteers."""
    if anchor is None:
        return tags
    return [
        t
        for t in tags
        if t.source != "gazetteer"
        or t.population >= MAJOR_CITY
        or haversine_m(t.lat, t.lon, *anchor) <= max_km * 1000
    ]


def geo_payload(tags: list[GeoTag]) -> dict[str, Any]:
    """Payload fields for a unit tagged with `tags` ({} when there are none). Only local
    tags become `location` points and H3 tokens; every tag is listed in `geo_tags`."""
    if not tags:
        return {}
    local = [t for t in tags if t.is_local]
    payload: dict[str, Any] = {"geo_tags": [t.to_payload() for t in tags]}
    if countries := sorted({t.country for t in tags if t.country}):
        payload["countries"] = countries
    if local:
        payload["location"] = [{"lat": t.lat, "lon": t.lon} for t in local]
        # one point for distance-decay ranking (the engine's formulas need a single value)
        best = max(local, key=lambda t: t.confidence)
        payload[GEO_POINT_FIELD] = {"lat": best.lat, "lon": best.lon}
        payload.update(merge_tokens(point_tokens(t.lat, t.lon) for t in local))
    cells = [cell for t in local if t.ring for cell in area_cells(t.ring)]
    if cells:
        payload.update(area_tokens(cells))
    return payload


def hashed_location(payload: dict[str, Any]) -> tuple[list[int], list[float]] | None:
    """The seed's hashed H3 vector of a unit's point tokens (sparse form), or None when
    the unit has no location."""
    tokens = {field_name(r): payload[field_name(r)] for r in RESOLUTIONS if payload.get(field_name(r))}
    return hashed_h3_sparse(tokens) if tokens else None


def footprint_geojson(tags: list[GeoTag]) -> str | None:
    """A document footprint: the convex hull of its confident local tags (points and
    area outlines), kept to the document's cluster: the places within ANCHOR_RADIUS_KM of
    its heaviest place, plus far places only when the document names them strongly
    (summed confidence >= FOOTPRINT_FAR_WEIGHT, e.g. three sure mentions). An author's
    affiliation in Sydney does not stretch a Myanmar case study across the world."""
    chosen = [t for t in tags if t.is_local and t.confidence >= FOOTPRINT_MIN_CONFIDENCE]
    if not chosen or names_the_world(tags):
        return None
    from shapely.geometry import MultiPoint, mapping

    weight: Counter[tuple[float, float]] = Counter()
    for t in chosen:
        weight[(round(t.lat, 2), round(t.lon, 2))] += _weight(t)
    anchor = heaviest_place(chosen, tags)
    assert anchor is not None  # chosen is not empty
    alat, alon = anchor

    def kept(t: GeoTag) -> bool:
        near = haversine_m(t.lat, t.lon, alat, alon) <= ANCHOR_RADIUS_KM * 1000
        return near or weight[(round(t.lat, 2), round(t.lon, 2))] >= FOOTPRINT_FAR_WEIGHT

    chosen = [t for t in chosen if kept(t)]
    points = [(t.lon, t.lat) for t in chosen] + [p for t in chosen if t.ring for p in t.ring]
    return json.dumps(mapping(MultiPoint(points).convex_hull))
