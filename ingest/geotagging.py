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

    @property
    def is_local(self) -> bool:
        """States, countries and continents are mentions, not locations: a page naming
        "Brasil" is not located at Brasília."""
        return self.kind not in REGION_KINDS

    def to_payload(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("ring")
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
                if (
                    m.confidence < self.min_confidence
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
                        m.confidence,
                        place_id=m.place.id,
                        ring=outer_ring(m.place.geometry),
                        kind=m.place.kind,
                        population=m.place.population,
                        country=m.place.country,
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
    """Where a document mostly is: the local place with the most mention weight (sum of
    confidences; explicit coordinates count double); failing that, the most-mentioned
    state (a crop report about Mato Grosso); else None."""
    for eligible in (lambda t: t.is_local, lambda t: t.kind == "state"):
        weight: Counter[tuple[float, float]] = Counter()
        for tags in tag_lists:
            for t in tags:
                if eligible(t):
                    weight[(round(t.lat, 2), round(t.lon, 2))] += t.confidence * (
                        2 if t.source != "gazetteer" else 1
                    )
        if weight:
            return weight.most_common(1)[0][0]
    return None


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
    if not chosen:
        return None
    from shapely.geometry import MultiPoint, mapping

    weight: Counter[tuple[float, float]] = Counter()
    for t in chosen:
        weight[(round(t.lat, 2), round(t.lon, 2))] += t.confidence * (2 if t.source != "gazetteer" else 1)
    (alat, alon), _ = weight.most_common(1)[0]

    def kept(t: GeoTag) -> bool:
        near = haversine_m(t.lat, t.lon, alat, alon) <= ANCHOR_RADIUS_KM * 1000
        return near or weight[(round(t.lat, 2), round(t.lon, 2))] >= FOOTPRINT_FAR_WEIGHT

    chosen = [t for t in chosen if kept(t)]
    points = [(t.lon, t.lat) for t in chosen] + [p for t in chosen if t.ring for p in t.ring]
    return json.dumps(mapping(MultiPoint(points).convex_hull))
