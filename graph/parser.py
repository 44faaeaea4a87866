"""Question -> relational constraints, offline and rule-based (Portuguese and English).

"Which recycling points are within 300 m of a park in Helsinki?" becomes
{categories: [recycling, park], pairs: [(recycling, park)], radius_m: 300, place: Helsinki}.
Category words come from `categories.SYNONYMS` (accent/case folded, longest phrase first),
a radius from a number with a unit (m, metros, km, quilômetros, ...), the place from the
gazetteer, the number of zones from "3 zones" / "5 zonas". Values are clamped to sane
limits; a question with fewer than two categories and no pair gets the default pair.
An LLM parser (strict JSON schema, `constraints_schema()`) can replace this one when an
LLM client is configured; its output goes through the same `Constraints.clamped()`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from geo.folding import fold
from geo.gazetteer import Gazetteer, PlaceMatch
from graph.categories import SYNONYMS

MIN_RADIUS_M = 10.0
MAX_RADIUS_M = 5000.0
DEFAULT_RADIUS_M = 500.0
MAX_ZONES = 50
DEFAULT_PAIR = ("recycling", "park")  # seed 000: keeps a question relational

_UNITS = {
    "m": 1.0,
    "meter": 1.0,
    "meters": 1.0,
    "metre": 1.0,
    "metres": 1.0,
    "metro": 1.0,
    "metros": 1.0,
    "km": 1000.0,
    "kms": 1000.0,
    "kilometer": 1000.0,
    "kilometers": 1000.0,
    "kilometre": 1000.0,
    "kilometres": 1000.0,
    "quilometro": 1000.0,
    "quilometros": 1000.0,
}
_RADIUS_RE = re.compile(
    r"(\d+(?:[.,]\d+)?)\s*(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")\b", re.IGNORECASE
)
_ZONES_RE = re.compile(r"\b(\d{1,3})\s+(?:zones?|zonas?|areas?|regioes|regions?|cells?|celulas?)\b")
_RELATION_RE = re.compile(
    r"\b(near|nearby|close to|closest|within|around|next to|distance|apart|from each other|"
    r"perto|proximo|proximos|proxima|proximas|a menos de|ate|em ate|ao redor|distancia|"
    r"vizinh\w*|junto|entre si|uns dos outros|umas das outras)\b"
)
_SELF_RE = re.compile(r"\b(each other|one another|from each other|entre si|uns dos outros|umas das outras)\b")


@dataclass(frozen=True)
class Constraints:
    """What a relational question asks for."""

    categories: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()
    radius_m: float = DEFAULT_RADIUS_M
    place: str | None = None
    zones: int | None = None
    relational: bool = False
    defaulted: list[str] = field(default_factory=list, compare=False)

    def clamped(self) -> Constraints:
        """Limits and defaults applied: radius in [10 m, 5 km], zones in [1, 50], and the
        default pair when fewer than two categories and no pair are known."""
        notes = list(self.defaulted)
        radius = min(MAX_RADIUS_M, max(MIN_RADIUS_M, float(self.radius_m)))
        if radius != self.radius_m:
            notes.append(f"radius clamped to {radius:.0f} m")
        zones = None if self.zones is None else min(MAX_ZONES, max(1, int(self.zones)))
        cats = tuple(dict.fromkeys(self.categories))
        pairs = tuple(self.pairs)
        if not pairs:
            if len(cats) >= 2:
                pairs = ((cats[0], cats[1]),)
            elif len(cats) == 1:
                pairs = ((cats[0], cats[0]),)
                notes.append(f"one category: pairs of {cats[0]} near each other")
            else:
                pairs = (DEFAULT_PAIR,)
                cats = DEFAULT_PAIR
                notes.append(f"no category named: default pair {DEFAULT_PAIR[0]}/{DEFAULT_PAIR[1]}")
        return replace(self, categories=cats, pairs=pairs, radius_m=radius, zones=zones, defaulted=notes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "categories": list(self.categories),
            "pairs": [list(p) for p in self.pairs],
            "radius_m": self.radius_m,
            "place": self.place,
            "zones": self.zones,
            "notes": self.defaulted,
        }


class ConstraintParser(Protocol):
    def parse(self, question: str, known: Iterable[str] = ()) -> Constraints: ...


def constraints_schema(extra: Iterable[str] = ()) -> dict[str, Any]:
    """The strict JSON schema an LLM parser must answer with (seed 000). `extra`: category
    keys the tenant's datasets brought beyond the synonym table."""
    names = sorted(set(SYNONYMS) | set(extra))
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["categories", "pairs", "radius_m", "place", "zones"],
        "properties": {
            "categories": {"type": "array", "items": {"type": "string", "enum": names}},
            "pairs": {
                "type": "array",
                "items": {
                    "type": "array",
                    "items": {"type": "string", "enum": names},
                    "minItems": 2,
                    "maxItems": 2,
                },
            },
            "radius_m": {"type": "number", "minimum": MIN_RADIUS_M, "maximum": MAX_RADIUS_M},
            "place": {"type": ["string", "null"]},
            "zones": {"type": ["integer", "null"], "minimum": 1, "maximum": MAX_ZONES},
        },
    }


def _phrases() -> list[tuple[str, str]]:
    out = [(word, cat) for cat, words in SYNONYMS.items() for word in words]
    out += [(cat.replace("_", " "), cat) for cat in SYNONYMS]
    return sorted(set(out), key=lambda wc: (-len(wc[0]), wc[0]))


_PHRASES = _phrases()


def _extra_phrases(categories: Iterable[str]) -> list[tuple[str, str]]:
    """Category keys a dataset brought that no synonym lists ("post_box" -> "post box(es)")."""
    out = []
    for cat in categories:
        if cat not in SYNONYMS:
            words = cat.replace("_", " ")
            out += [(words, cat), (words + "s", cat), (words + "es", cat)]
    return out


def find_categories(text: str, extra: Iterable[str] = ()) -> list[tuple[int, str]]:
    """(position, category) of every category phrase, longest match first, no overlaps.
    `extra`: more category keys to recognise by name (those the tenant's datasets hold)."""
    folded = f" {re.sub(r'[^a-z0-9]+', ' ', fold(text))} "
    taken = [False] * len(folded)
    found: list[tuple[int, str]] = []
    phrases = sorted(set(_PHRASES) | set(_extra_phrases(extra)), key=lambda wc: (-len(wc[0]), wc[0]))
    for phrase, cat in phrases:
        needle = f" {phrase} "
        start = folded.find(needle)
        while start >= 0:
            span = range(start + 1, start + len(needle) - 1)
            if not any(taken[i] for i in span):
                for i in span:
                    taken[i] = True
                found.append((start, cat))
            start = folded.find(needle, start + 1)
    return sorted(found)


def names_relation(question: str) -> bool:
    """Whether the question has a relation word ("near", "within", "perto", "a menos de", ...)."""
    return bool(_RELATION_RE.search(fold(question)))


class RuleParser:
    """The offline parser. `gazetteer` (optional) resolves the place hint."""

    def __init__(self, gazetteer: Gazetteer | None = None, min_place_confidence: float = 0.5) -> None:
        self.gazetteer = gazetteer
        self.min_place_confidence = min_place_confidence

    def parse(self, question: str, known: Iterable[str] = ()) -> Constraints:
        """`known`: the categories the tenant's datasets hold (recognised by name too)."""
        folded = fold(question)
        found = find_categories(question, known)
        cats = list(dict.fromkeys(cat for _, cat in found))
        radius, notes = DEFAULT_RADIUS_M, []
        if m := _RADIUS_RE.search(folded):
            radius = float(m.group(1).replace(",", ".")) * _UNITS[m.group(2).lower()]
        else:
            notes.append(f"no radius given: {DEFAULT_RADIUS_M:.0f} m")
        zones = int(m.group(1)) if (m := _ZONES_RE.search(folded)) else None
        relation = bool(_RELATION_RE.search(folded))
        pairs: tuple[tuple[str, str], ...] = ()
        if len(cats) == 1 and _SELF_RE.search(folded):
            pairs = ((cats[0], cats[0]),)
        elif len(cats) >= 2:
            pairs = ((cats[0], cats[1]),)
        place = self.place_hint(question)
        relational = bool(cats) and (relation or len(cats) >= 2)
        return Constraints(
            tuple(cats), pairs, radius, place.place.name if place else None, zones, relational, notes
        ).clamped()

    def place_hint(self, question: str) -> PlaceMatch | None:
        """The most confident place the question names (category words excluded)."""
        if self.gazetteer is None:
            return None
        cat_words = {w for phrase, _ in _PHRASES for w in phrase.split()}
        matches = [
            m
            for m in self.gazetteer.find_places(question)
            if m.confidence >= self.min_place_confidence and fold(m.text) not in cat_words
        ]
        return max(matches, key=lambda m: m.confidence) if matches else None
