"""Question -> GeoPlan by rules, in Portuguese and English, against the tenant's catalog.

The words of the question are matched, accent- and case-folded, to what the tenant's
datasets really hold: categories ("farmácias" -> pharmacy), property names ("IDEB" ->
IDEB; "bairro" -> NM_BAIR, a property name that starts a question word once its nm_/cd_
prefix is dropped), the aliases given at upload ("residentes" -> V014), a few concept
words for properties named after them ("população" -> population), dataset file names
("setores censitários" -> olinda1_setores_censitarios) and the names of polygon features
("em Boa Viagem" -> the BOA VIAGEM bairro). The operation comes from its words
("quantos", "maior", "total", "média", "mais próximo", "how many", "highest", ...).
A question with none of them is not analytical (None): it goes to the pairs, the zone
rankings or the documents as before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geo.folding import fold
from graph.categories import KIND_GROUPS, SYNONYMS
from graph.parser import _RADIUS_RE, _RELATION_RE, _SELF_RE, _UNITS, find_categories
from graph.plan import AGGREGATES, AttributeFilter, GeoPlan, PlanArea, Reference, Target

# concept words -> property names that mean it (a property named so is matched by them)
CONCEPTS: dict[str, tuple[str, ...]] = {
    "population": (
        "population",
        "populacao",
        "pop",
        "habitantes",
        "inhabitants",
        "residents",
        "residentes",
        "moradores",
        "populous",
        "populoso",
        "populosa",
        "populosos",
        "populosas",
    ),
    "schools": ("schools", "escolas"),
    "jobs": ("jobs", "empregos", "postos de trabalho"),
    "healthcare": ("healthcare", "saude", "health facilities", "unidades de saude"),
    "area": ("area",),
}
# concepts a property with an opaque code name (V014, P001) may measure when it is its
# dataset's only such measure: "população" -> V014, said in the plan's notes
MEASURE_CONCEPTS = ("population",)
_OPAQUE_RE = re.compile(r"^[a-z]{1,4}_?\d{2,}$")
_CODE_RE = re.compile(
    r"^(id|fid|gid|objectid|cod|codigo|code|cd|geocod|gml_id)([_ ].*|\d*)$|(^|_)(id|cod|code)$"
)
# file-name words and the question words, in Portuguese and English, that name them
_TOKEN_WORDS: dict[str, tuple[str, ...]] = {
    "hexgrid": ("hexagon", "hexagons", "hexagono", "hexagonos", "grid", "grade"),
    "hexagons": ("hexagon", "hexagono", "hexagonos", "grid", "grade"),
    "setores": ("setor", "tract", "tracts", "sector", "sectors"),
    "censitarios": ("censitario", "censitaria", "census"),
    "escolas": ("escola", "school", "schools"),
    "bairros": ("bairro", "neighbourhood", "neighbourhoods", "neighborhood", "neighborhoods"),
    "interest": ("interesse",),
    "points": ("point", "ponto", "pontos"),
}
CONCEPTS_LABEL = "population"
_ASK_SKIP = {
    "the",
    "que",
    "qual",
    "quais",
    "which",
    "what",
    "value",
    "valor",
    "one",
    "uma",
    "per",
    "por",
    "and",
}
# words after "which" that ask nothing of a kind ("which is", "qual o")
_KIND_SKIP = frozenset("is are was were has have had do does did o a os as e foi era sao la le les".split())
_ASKED_AFTER_RE = re.compile(
    r" (?:most|highest|largest|lowest|smallest|least|average|mean|total|sum of|maior|menor|media|medio|"
    r"soma|maximo|minimo|maxima|minima)(?: (?:the|a|o|as|os|de|do|da|dos|das|of|number|numero|quantidade))* "
    r"([a-z]+) "
)
_ASKED_BEFORE_RE = re.compile(r" ([a-z]+) (?:media|medio|maxima|maximo|minima|minimo|total) ")
PREFIX_MATCH = 6  # a file-name word and a question word sharing this many first letters match
_GENERIC_TOKENS = {
    "osm",
    "pbf",
    "csv",
    "geojson",
    "json",
    "data",
    "dados",
    "dataset",
    "file",
    "points",
    "of",
    "the",
}

_OPS: list[tuple[str, re.Pattern[str]]] = [
    ("distance", re.compile(r"\b(distance|distancia|how far|quao longe|a que distancia)\b")),
    ("nearest", re.compile(r"\b(nearest|closest|mais proxim[oa]s?|mais perto)\b")),
    ("avg", re.compile(r"\b(average|mean|media|medio)\b")),
    ("sum", re.compile(r"\b(total|sum|soma|somatorio|combined|ao todo|no total)\b")),
    ("max", re.compile(r"\b(maximum|maximo|maxima|max)\b")),
    ("min", re.compile(r"\b(minimum|minimo|minima|min)\b")),
    (
        "argmax",
        re.compile(
            r"\b(highest|largest|biggest|greatest|most|top|best|maior|maiores|mais alt[oa]|melhor|mais)\b"
        ),
    ),
    (
        "argmin",
        re.compile(r"\b(lowest|smallest|least|fewest|worst|menor|menores|mais baix[oa]|pior|menos)\b"),
    ),
    ("count", re.compile(r"\b(how many|number of|count|quantos|quantas|numero de|quantidade de|contagem)\b")),
    ("list", re.compile(r"\b(list|liste|listar|show|mostre|which|what are|quais|quais sao|name the|cite)\b")),
]
_GROUP_RE = re.compile(r"\b(?:per|by|each|por|cada|em cada|de cada|in each|for each)\s+([a-z0-9_]+)")
_ZONE_WORDS = {
    "zone",
    "zones",
    "zona",
    "zonas",
    "h3",
    "hexagon",
    "hexagons",
    "hexagono",
    "hexagonos",
    "cell",
    "cells",
    "celula",
    "celulas",
}
_FILTER_WORDS_RE = re.compile(
    r"\b(maior que|menor que|greater than|more than|less than|higher than|lower than|acima de|abaixo de|"
    r"at least|at most|pelo menos|ao menos|mais de|menos de|no minimo|no maximo|superior a|inferior a)"
    r" (-?\d+(?:\.\d+)?)\b"
)
_AREA_WORDS = _ZONE_WORDS | {"area", "areas", "region", "regions", "regiao", "regioes", "part", "parts"}
_COMPARATORS: list[tuple[str, str]] = [
    (r">=|at least|pelo menos|no minimo|ao menos|or more|ou mais", ">="),
    (r"<=|at most|no maximo|or less|ou menos", "<="),
    (r">|above|over|greater than|more than|higher than|acima de|maior que|mais de|superior a", ">"),
    (r"<|below|under|less than|lower than|abaixo de|menor que|menos de|inferior a", "<"),
    (r"!=|not equal to|diferente de", "!="),
    (r"=|equal to|equals|igual a|de|da|do|na|no|em", "="),
]
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_COORDS_RE = re.compile(r"(-?\d{1,2}\.\d+)\s*,\s*(-?\d{1,3}\.\d+)")
_WHICH_RE = re.compile(r"\b(which|what|qual|quais|que)\b")
_NEAR_PLACE_RE = re.compile(
    r"\b(near|close to|around|perto de|perto do|perto da|proximo a|proximo de|ao redor de)\b"
)
_IN_LAYER_WORDS = re.compile(
    r"\b(bairro|bairros|neighbou?rhood|neighbou?rhoods|district|setor|setores|tract|tracts)\b"
)
DEFAULT_NEAR_M = 1000.0
OSM_KINDS = ("pbf", "osm-xml", "overpass")
# a question about a chart, map, table or page is the documents' ("the bar chart", "o mapa")
_DOCUMENT_RE = re.compile(
    r"\b(chart|charts|graph|grafico|graficos|figure|figura|map|mapa|maps|mapas|table|tabela|legend|legenda|"
    r"report|relatorio|document|documento|pdf|page|pagina|study|estudo|boletim|bulletin|redpaper|paper)\b"
)
MIN_POLYGON_NAME = 4
_NEAREST_K_RE = re.compile(
    r"\b(\d{1,2})\s+(?:[a-z]+\s+){0,4}?(?:are\s+|is\s+|sao\s+|estao\s+|ficam\s+)?"
    r"(?:nearest|closest|mais proxim|mais perto)"
)
MIN_REFERENCE_NAME = 4  # POI names a nearest/distance question may measure from ("pucrs")


def city_radius_m(population: int) -> float:
    """How far a city given as a point reaches: 20 m per square root of its population,
    5 to 30 km (Helsinki 15 km, Recife 25 km)."""
    return min(30_000.0, max(5_000.0, 20.0 * math.sqrt(max(0, population))))


@dataclass
class DatasetEntry:
    id: str
    name: str  # the file's stem
    schema: dict[str, Any]
    aliases: dict[str, list[str]] = field(default_factory=dict)
    kind: str = "geojson"  # what the file was (graph/sources.py `sniff`)

    def prop_types(self) -> dict[str, str]:
        return {p["name"]: p["type"] for p in self.schema.get("properties", [])}


@dataclass
class Catalog:
    """What the tenant's datasets hold, as the parser matches words to it."""

    datasets: list[DatasetEntry]
    categories: dict[str, int]
    polygons: list[tuple[str, str, str]]  # (dataset id, feature id, name)
    poi_names: Callable[[], list[tuple[str, str]]] = lambda: []  # (poi id, name), read only when needed


@dataclass
class _Mention:
    start: int
    end: int
    dataset: str
    prop: str
    type: str
    how: str = "name"  # "name" | "alias" | "concept" | "stem" | "measure": how the question named it


def _norm(text: str) -> str:
    """Folded words between single spaces; decimal numbers ("5,4" -> "5.4") and the
    comparison signs (>, >=, ...) kept as words."""
    text = re.sub(r"(\d)[.,](\d)", r"\1.\2", fold(text))
    text = re.sub(r"(>=|<=|!=|>|<|=)", r" \1 ", text)
    text = re.sub(r"[^a-z0-9.<>=!]+", " ", text)
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", text)
    return f" {' '.join(text.split())} "


def _find_word(folded: str, phrase: str) -> int:
    phrase = phrase.strip()
    return folded.find(f" {phrase} ") if phrase else -1


def property_words(prop: str, aliases: Sequence[str] = ()) -> list[str]:
    """The folded words that name a property: its name (dots/underscores as spaces), its
    aliases, and the concept words of a property named after a concept."""
    base = re.sub(r"[^a-z0-9]+", " ", fold(prop)).strip()
    words = [base, *(re.sub(r"[^a-z0-9]+", " ", fold(a)).strip() for a in aliases)]
    for concept, terms in CONCEPTS.items():
        if base == concept or base in terms:
            words += list(terms)
    return [w for w in dict.fromkeys(words) if w]


def _stem_match(folded: str, prop: str) -> int:
    """Where a question word starts with a property's distinctive stem (NM_BAIR -> bairro)."""
    stem = re.sub(r"^(nm|nome|cd|cod|ds|no)[_ ]", "", fold(prop)).strip("_ ")
    if len(stem) < 4 or not stem.isalpha():
        return -1
    m = re.search(rf" ({re.escape(stem)}[a-z]*) ", folded)
    return m.start() if m else -1


def _polygon_layers(catalog: Catalog, category: str) -> tuple[list[str], list[str]]:
    """(ids of the polygon datasets holding `category`, the words naming it): the layers a
    "which bairro" / "por bairro" question groups by."""
    layers = [
        d.id
        for d in catalog.datasets
        if d.schema.get("polygons") and category in d.schema.get("categories", {})
    ]
    return layers, [*SYNONYMS.get(category, ()), category]


def may_be_analytical(question: str) -> bool:
    """The cheap test before the catalog is read: an operation or group-by word is there."""
    folded = _norm(question)
    if any(rx.search(folded) for _, rx in _OPS) or _GROUP_RE.search(folded):
        return True
    return bool(_WHICH_RE.search(folded)) and any(
        _find_word(folded, w) >= 0 for c in MEASURE_CONCEPTS for w in CONCEPTS[c]
    )


def _token_named(token: str, folded: str, prefix: bool = False) -> bool:
    """Whether the question names a file-name word: itself, its singular or plural, its
    Portuguese or English words ("interesse" for "interest"), or, with `prefix` (a city's
    name: "Helsinque" for "helsinki"), a word sharing its first PREFIX_MATCH letters."""
    if re.search(rf" {re.escape(token)}s? ", folded) or re.search(
        rf" {re.escape(token.rstrip('s'))} ", folded
    ):
        return True
    if any(_find_word(folded, w) >= 0 for w in _TOKEN_WORDS.get(token, ())):
        return True
    if not prefix or len(token) < PREFIX_MATCH:
        return False
    return any(len(w) >= PREFIX_MATCH and w[:PREFIX_MATCH] == token[:PREFIX_MATCH] for w in folded.split())


# the connectors of a compound file name ("points_of_interest", "pontos_de_coleta")
_CONNECTORS = ("of", "de", "do", "da", "dos", "das", "du", "des")


def _compound_named(name: str, folded: str) -> bool:
    """Whether a file name of the form X_of_Y is named as its whole compound: "points of
    interest" (or its singular, or "pontos de interesse") names r5r_poa_points_of_interest.csv,
    while "a conflict of interest" does not. A name without a connector is named by any of
    its words (_datasets_named)."""
    words = [w for w in re.split(r"[^a-z]+", fold(Path(name).stem)) if w]
    at = next((i for i, w in enumerate(words) if w in _CONNECTORS and 0 < i < len(words) - 1), None)
    if at is None:
        return True
    head, tail = words[at - 1], words[at + 1]
    heads = {head, head.rstrip("s"), *_TOKEN_WORDS.get(head, ())}
    tails = {tail, tail.rstrip("s"), *_TOKEN_WORDS.get(tail, ())}
    return any(
        re.search(rf"\b{re.escape(h)}s?\s+(?:{'|'.join(_CONNECTORS)})\s+{re.escape(t)}s?\b", folded)
        for h in heads
        for t in tails
    )


class PlanRuleParser:
    """`parse(question, catalog)` -> GeoPlan, or None when the question is not analytical."""

    def __init__(
        self, place_finder: Callable[[str], Any] | None = None, is_city: Callable[[str], bool] | None = None
    ):
        """`place_finder(text)`: the gazetteer's best place in a text (a PlaceMatch or None);
        `is_city(name)`: whether a polygon's name is a known city (the bairro RECIFE is not
        the city of Recife)."""
        self.place_finder = place_finder
        self.is_city = is_city or (lambda _: False)

    def parse(self, question: str, catalog: Catalog) -> GeoPlan | None:
        plan = self._parse(question, catalog)
        if plan is not None and self._counts_its_own_layer(plan, catalog):
            return None
        return plan

    def _counts_its_own_layer(self, plan: GeoPlan, catalog: Catalog) -> bool:
        """A plan that counts a polygon layer's features per polygon of that same layer
        ("Qual bairro do Recife teve mais pontos de alagamento?" with only the bairros
        loaded: 1 bairro in each bairro): the question asks about something the data does
        not hold, and is the documents'."""
        if plan.operation != "group_by" or not (plan.group_by or "").startswith("layer:") or plan.attribute:
            return False
        layer = (plan.group_by or "")[len("layer:") :]
        target = plan.target
        return target.dataset == layer or (
            target.category is not None and target.category in self._categories_of(catalog, layer)
        )

    def _parse(self, question: str, catalog: Catalog) -> GeoPlan | None:
        folded = _norm(question)
        if _DOCUMENT_RE.search(folded):
            return None
        notes: list[str] = []
        held = catalog.categories
        cats_found = [c for _, c in find_categories(question, held)]
        held_cats = [c for c in dict.fromkeys(cats_found) if c in held]
        other_cats = [c for c in dict.fromkeys(cats_found) if c not in held]
        relation = bool(_RELATION_RE.search(folded))
        # comparison words of a filter ("IDEB maior que 5") name no operation
        unfiltered = _FILTER_WORDS_RE.sub(" ", folded)
        ops = [op for op, rx in _OPS if rx.search(unfiltered)]
        counting = bool(_OPS[-2][1].search(unfiltered))
        if not ops and _GROUP_RE.search(folded):
            ops = ["count"]  # "população por bairro": a group-by names no operation word
        implicit = not ops
        if not ops and may_be_analytical(question):
            ops = ["sum"]  # "qual a população do bairro Peixinhos": a measure of a place (checked below)
        if not ops:
            return None
        op = ops[0]
        rank = next((o for o in ops if o in ("argmax", "argmin")), None)  # "o maior IDEB médio"
        around = (
            self._around_poi(question, folded, catalog)
            if relation and op not in ("nearest", "distance")
            else None
        )
        if around is not None:
            # "escolas a até 1 km da Escola Municipal Asa Branca": a circle around a named POI
            name, radius = around
            rest = folded.replace(f" {_norm(name).strip()} ", " ")
            cats = [c for _, c in find_categories(rest, held) if c in held]
            if cats:
                return GeoPlan(
                    operation="count" if counting else "list",
                    target=Target(category=cats[0], tag=self._tag(rest, cats[0])),
                    area=PlanArea(kind="circle", name=name, radius_m=radius),
                    notes=[f"within {radius:.0f} m of {name}"],
                )
        if (
            op not in ("nearest", "distance")
            and relation
            and (len(cats_found) >= 2 or (cats_found and _SELF_RE.search(folded)))
        ):
            return GeoPlan(operation="pairs", pair_categories=list(dict.fromkeys(cats_found))[:2])
        mentions = [
            m
            for m in self._mentions(folded, catalog)
            if m.how != "measure" or self._about(folded, catalog, m.dataset)
        ]
        datasets = self._datasets_named(folded, catalog)
        tabular = {d.id for d in catalog.datasets if d.kind not in OSM_KINDS}
        which_cat = self._which_layer_category(folded, catalog, held_cats)
        if which_cat is not None and op in ("argmax", "argmin"):
            # "which bairro has the most schools": the other category counted per polygon of the layer
            layer, counted = which_cat
            counted_target = Target(category=counted, tag=self._tag(folded, counted))
            area = self._area(question, folded, catalog, counted_target, notes)
            if area.kind == "polygon" and area.dataset == layer:
                area = PlanArea()  # "qual bairro do Recife": the city, not its bairro RECIFE
            return GeoPlan(
                operation="group_by",
                target=counted_target,
                filters=self._filters(folded, [m for m in mentions if m.dataset != layer])[0],
                area=area,
                group_by=f"layer:{layer}",
                order="asc" if op == "argmin" else "desc",
                notes=notes,
            )
        per_layer = self._measure_per_layer(folded, catalog, held_cats, mentions, op, rank)
        if per_layer is not None:
            # "a média de IDEB por bairro": the schools' IDEB averaged in each bairro polygon
            layer, counted, attr = per_layer
            layer_target = (
                Target(category=counted[1], dataset=None) if counted[1] else Target(dataset=counted[0])
            )
            area = self._area(question, folded, catalog, layer_target, notes)
            if area.kind == "polygon" and area.dataset == layer:
                area = PlanArea()
            return GeoPlan(
                operation="group_by",
                target=layer_target,
                attribute=attr,
                area=area,
                group_by=f"layer:{layer}",
                order="asc" if rank == "argmin" else "desc",
                notes=[*notes, f"aggregate: {'avg' if op == 'avg' or 'avg' in ops else 'sum'}"],
            )
        # the target
        target = Target()
        elsewhere = self._dataset_over_category(catalog, held_cats, mentions, datasets)
        if elsewhere is not None:
            target.dataset = elsewhere
            notes.append(
                f"{held_cats[0]!r}: read as a property of the dataset {self._name_of(catalog, elsewhere)}"
            )
        elif held_cats:
            target.category = held_cats[0]
            target.tag = self._tag(folded, held_cats[0])
        elif other_cats:
            target.category = other_cats[0]
            target.name_contains = other_cats[0]
        elif own_place := self._polygon_owner(folded, catalog, mentions):
            target.dataset = (
                own_place  # "a população de Ouro Preto": the layer holding Ouro Preto and a measure
            )
        elif named_measured := [
            d for d in datasets if any(m.dataset == d and m.type in ("number", "mixed") for m in mentions)
        ]:
            target.dataset = named_measured[0]  # "a população da grade de hexágonos": the file it names
        elif defining := [m for m in mentions if m.how in ("name", "alias") and m.dataset in tabular]:
            # a dataset the question names and whose property it names first; a property
            # alone counts only by its own name or an upload alias, and not for OSM files
            # (their tag keys, "name", "level", "capacity", are everyday words)
            if not datasets and self._asks_another_kind(folded, catalog):
                return None  # "which state had the highest population growth": not the hexagons'
            owners = list(dict.fromkeys(m.dataset for m in defining))
            target.dataset = next((d for d in datasets if d in owners), owners[0])
        elif datasets:
            target.dataset = datasets[0]
        elif op != "distance":
            return None
        scope = self._scope(target, catalog, mentions, datasets)
        local = [m for m in mentions if m.dataset in scope]
        numeric = [m for m in local if m.type in ("number", "mixed")]
        filters, used = self._filters(folded, local)
        free_numeric = [m for m in numeric if m.prop not in used]
        # group by
        group_by, group_attr = self._group(folded, local, catalog, target)
        which = re.search(r" (?:which|what|qual|que) ([a-z]+) ", folded)
        if group_by is None and (op in ("argmax", "argmin") or (op in ("avg", "sum") and rank)) and which:
            # "qual bairro tem a maior população", "which RPA has the most schools": the groups
            # of a property ranked by a measure, or by how many features they hold
            word_cats = [c for _, c in find_categories(which.group(1), held)]
            word_is_target = bool(word_cats) and (
                target.dataset is None
                or any(c in self._categories_of(catalog, target.dataset) for c in word_cats)
            )
            at_which = [m for m in local if m.start == which.start(1) - 1 and not word_is_target]
            texts = at_which  # a text property, or a coded one (RPA) whose values are groups
            if texts and (free_numeric or target.category):
                group_by, group_attr = texts[0].prop, texts[0].prop
                free_numeric = [n for n in free_numeric if n.prop != group_by]
        if group_by is None and op in ("argmax", "argmin") and free_numeric and target.dataset:
            # "os 5 bairros mais populosos": a text property the words name by its stem (NM_BAIR)
            stems = [m for m in local if m.how == "stem" and m.type == "string"]
            if stems:
                group_by, group_attr = stems[0].prop, stems[0].prop
        if group_by is not None and op in ("argmax", "argmin", "count", "list", "sum", "avg"):
            attribute = free_numeric[0].prop if free_numeric and not counting else None
            if group_attr and attribute == group_attr:
                attribute = None
            area, target = self._dataset_area(
                folded, self._area(question, folded, catalog, target, notes), target, catalog, datasets, notes
            )
            return GeoPlan(
                order="asc" if (rank or op) == "argmin" else "desc",
                operation="group_by",
                target=target,
                attribute=attribute,
                filters=filters,
                area=area,
                group_by=group_by,
                notes=notes + ([f"aggregate: {'avg' if op == 'avg' else 'sum'}"] if attribute else []),
            )
        if implicit and not self._measured_place(folded, catalog, target, datasets, free_numeric):
            return None  # "qual a população de Recife?" without a polygon or dataset of it: the documents'
        if op in ("argmax", "argmin") and not _WHICH_RE.search(folded) and free_numeric:
            op = "max" if op == "argmax" else "min"
        if (
            op in ("argmax", "argmin")
            and not free_numeric
            and re.search(r"\b(mais|most|menos|fewest|least)\b", folded)
            and (_IN_LAYER_WORDS.search(folded) or any(w in folded.split() for w in _AREA_WORDS))
        ):
            layer = self._layer_named(folded, catalog)
            area, target = self._dataset_area(
                folded, self._area(question, folded, catalog, target, notes), target, catalog, datasets, notes
            )
            return GeoPlan(
                operation="group_by",
                target=target,
                filters=filters,
                area=area,
                group_by=f"layer:{layer}" if layer else "h3",
                order="asc" if op == "argmin" else "desc",
                notes=notes,
            )
        if op == "sum" and not free_numeric and target.category:
            op = "count"  # "the total number of schools"
        count_of = re.search(r" (?:how many|quantos|quantas) ([a-z]+) ", folded)
        if op == "count" and count_of and any(m.start == count_of.start(1) - 1 for m in free_numeric):
            op = "sum"  # "quantos empregos há na grade": the jobs column summed, not the rows counted
            free_numeric = [m for m in free_numeric if m.start == count_of.start(1) - 1]
        if op in ("list",) and filters:
            op = "filter"
        attribute = free_numeric[0].prop if free_numeric and op in AGGREGATES else None
        if op in ("list", "filter") and (shown := free_numeric or [m for m in numeric if m.prop in used]):
            attribute = shown[0].prop  # "as escolas com IDEB > 5": listed with their IDEB
        notes += [
            f"{m.prop}: read as the {CONCEPTS_LABEL} the question asks (the dataset's only coded count)"
            for m in free_numeric[:1] + [mm for mm in local if any(f.attribute == mm.prop for f in filters)]
            if m.how == "measure"
        ][:1]
        if op in AGGREGATES and attribute is None:
            asked = self._asked_word(folded, catalog)
            notes.append(f"no attribute {asked!r} in the data" if asked else "no attribute of the data named")
            attribute = asked  # named back to the user with the attributes that exist
        references: list[Reference] = []
        k = 1
        if op in ("nearest", "distance"):
            references = self._references(question, folded, catalog, target)
            if m := _NEAREST_K_RE.search(folded) or re.search(r"\b(?:os|as|the)\s+(\d{1,2})\b", folded):
                k = max(1, min(50, int(m.group(1))))
        area = (
            PlanArea()
            if op in ("nearest", "distance")
            else self._area(question, folded, catalog, target, notes)
        )
        area, target = self._dataset_area(folded, area, target, catalog, datasets, notes)
        if (
            op == "list"
            and not filters
            and area.kind == "all"
            and target.dataset
            and target.dataset not in datasets
        ):
            return None  # "which state had a negative population growth": a property word alone lists no file
        if relation and held_cats and op in ("list", "count") and area.kind not in ("polygon", "circle"):
            # "escolas a menos de 300 m uma da outra": a relation with no place after it
            return GeoPlan(operation="pairs", pair_categories=held_cats[:1] * 2)
        return GeoPlan(
            operation=op,  # type: ignore[arg-type]
            target=target,
            attribute=attribute,
            filters=filters,
            area=area,
            k=k,
            references=references,
            notes=notes,
        )

    # ----------------------------------------------------------------- pieces

    def _tag(self, folded: str, category: str) -> str | None:
        """The kind asked of a category that groups several ("pubs" -> pub in bar); the
        category's own kind when the words name no other one."""
        kinds = KIND_GROUPS.get(category)
        if not kinds:
            return None
        for kind in kinds[1:]:
            words = kind.replace("_", " ")
            if _find_word(folded, words) >= 0 or _find_word(folded, words + "s") >= 0:
                return kind
        return kinds[0]

    def _categories_of(self, catalog: Catalog, dataset: str) -> set[str]:
        return {c for d in catalog.datasets if d.id == dataset for c in d.schema.get("categories", {})}

    def _name_of(self, catalog: Catalog, dataset: str) -> str:
        return next((d.name for d in catalog.datasets if d.id == dataset), dataset)

    def _measure_per_layer(
        self,
        folded: str,
        catalog: Catalog,
        held_cats: list[str],
        mentions: list[_Mention],
        op: str,
        rank: str | None,
    ) -> tuple[str, tuple[str, str | None], str] | None:
        """(layer, (dataset, category) measured, attribute) of "a média de IDEB por bairro" /
        "qual bairro tem o maior IDEB médio": a polygon layer's category after which/per and
        a property of another dataset aggregated in each of its polygons."""
        if not held_cats or not (op in ("avg", "sum") or rank):
            return None
        layers, words = _polygon_layers(catalog, held_cats[0])
        grouped = any(
            re.search(
                rf" (?:which|what|qual|que|quais|per|by|each|por|cada)(?: [a-z]+)? {re.escape(fold(w))}s? ",
                folded,
            )
            for w in words
        )
        measured = [
            m
            for m in mentions
            if m.type in ("number", "mixed") and m.how in ("name", "alias") and m.dataset not in layers
        ]
        if not layers or not grouped or not measured:
            return None
        ds = next(d for d in catalog.datasets if d.id == measured[0].dataset)
        cats = ds.schema.get("categories", {})
        category = max(cats, key=lambda c: cats[c]) if len(cats) == 1 else None
        return layers[0], (ds.id, category), measured[0].prop

    def _which_layer_category(
        self, folded: str, catalog: Catalog, held_cats: list[str]
    ) -> tuple[str, str] | None:
        """(layer, counted category) of "which bairro has the most schools": the first
        category, right after which/qual, is a polygon layer's; the other one is counted."""
        if len(held_cats) < 2:
            return None
        counted = held_cats[1]
        layers, words = _polygon_layers(catalog, held_cats[0])
        near_which = any(
            re.search(rf" (?:which|what|qual|que|quais)(?: [a-z]+)? {re.escape(fold(w))}s? ", folded)
            for w in words
        )
        return (layers[0], counted) if layers and near_which else None

    def _dataset_over_category(
        self, catalog: Catalog, held_cats: list[str], mentions: list[_Mention], datasets: list[str]
    ) -> str | None:
        """A dataset that measures what the question asks when the category word belongs to
        another one: "escolas ... na grade de hexágonos" is the grid's `schools` property,
        "os bairros mais populosos de Olinda" the census tracts' NM_BAIR and V014."""
        if not held_cats:
            return None
        owners = {d.id for d in catalog.datasets if held_cats[0] in d.schema.get("categories", {})}
        if any(m.dataset in owners and m.type in ("number", "mixed") and m.how != "stem" for m in mentions):
            return None
        best: tuple[int, str] | None = None
        for ds in catalog.datasets:
            if ds.id in owners:
                continue
            mine = [m for m in mentions if m.dataset == ds.id]
            numeric = any(m.type in ("number", "mixed") for m in mine)
            text = any(m.type == "string" and m.how in ("stem", "name") for m in mine)
            named = ds.id in datasets
            if not numeric or not (named or text):
                continue
            score = 2 * named + text + numeric
            if best is None or score > best[0]:
                best = (score, ds.id)
        return best[1] if best else None

    def _around_poi(self, question: str, folded: str, catalog: Catalog) -> tuple[str, float] | None:
        """(POI name, radius in metres) of "within 500 m of Kluuvin Apteekki": a distance and
        the longest POI name the question holds; None without both."""
        m = _RADIUS_RE.search(fold(question))
        if m is None or _SELF_RE.search(folded):
            return None  # "a menos de 300 m uma da outra": pairs
        radius = float(m.group(1).replace(",", ".")) * _UNITS[m.group(2).lower()]
        cat_words = {w for words in SYNONYMS.values() for w in words}
        polygons = {fold(name) for _ds, _fid, name in catalog.polygons}  # places, not points
        best: str | None = None
        for _, name in catalog.poi_names():
            key = re.sub(r"[^a-z0-9]+", " ", fold(name)).strip()
            if len(key) < MIN_REFERENCE_NAME or key in cat_words or _find_word(folded, key) < 0:
                continue
            if fold(name) in polygons or self.is_city(name):
                continue
            if best is None or len(key) > len(fold(best)):
                best = name
        return (best, radius) if best else None

    def _asked_word(self, folded: str, catalog: Catalog) -> str | None:
        """The word an aggregate asks of when no property is named so: "o maior número de
        alunos" -> alunos, "the average income" -> income, "a renda média" -> renda."""
        cat_words = {w for words in SYNONYMS.values() for w in words} | set(SYNONYMS)
        file_words = {
            w for ds in catalog.datasets for t in self._name_tokens(ds.name) for w in (t, t.rstrip("s"))
        }
        file_words |= {w for words in _TOKEN_WORDS.values() for w in words}

        def ok(word: str) -> bool:
            return (
                len(word) >= 3 and word not in cat_words and word not in file_words and word not in _ASK_SKIP
            )

        for m in _ASKED_AFTER_RE.finditer(folded):
            if ok(m.group(1)):
                return m.group(1)
        for m in _ASKED_BEFORE_RE.finditer(folded):
            if ok(m.group(1)):
                return m.group(1)
        return None

    def _about(self, folded: str, catalog: Catalog, dataset: str) -> bool:
        """Whether the question is plainly about this dataset, as a coded measure (V014) needs:
        it names two words of its file, the city in its file name, or one of its polygons."""
        ds = next((d for d in catalog.datasets if d.id == dataset), None)
        if ds is None:
            return False
        tokens = [t for t in re.split(r"[^a-z]+", fold(ds.name)) if len(t) >= 4 and t not in _GENERIC_TOKENS]
        named = [t for t in tokens if _token_named(t, folded)]
        if len(named) >= 2 or any(self.is_city(t) for t in named):
            return True
        return any(
            d == dataset
            and len(key := fold(name).strip()) >= MIN_POLYGON_NAME
            and _find_word(folded, key) >= 0
            for d, _fid, name in catalog.polygons
        )

    def _polygon_owner(self, folded: str, catalog: Catalog, mentions: list[_Mention]) -> str | None:
        """The polygon layer one of whose features the question names and whose numeric
        property it names: "the resident population of Ouro Preto" -> the census tracts."""
        measured = {m.dataset for m in mentions if m.type in ("number", "mixed")}
        for ds, _fid, name in catalog.polygons:
            key = re.sub(r"[^a-z0-9]+", " ", fold(name)).strip()
            if (
                ds in measured
                and len(key) >= MIN_POLYGON_NAME
                and _find_word(folded, key) >= 0
                and not self.is_city(name)
            ):
                return ds
        return None

    def _measured_place(
        self,
        folded: str,
        catalog: Catalog,
        target: Target,
        datasets: list[str],
        free_numeric: list[_Mention],
    ) -> bool:
        """Whether a question with no operation word asks a measure of a dataset it names or
        of one of that dataset's own polygons ("a população do bairro Peixinhos")."""
        if not free_numeric or not target.dataset:
            return False
        if target.dataset in datasets:
            return True
        return any(
            ds == target.dataset
            and len(key := fold(name).strip()) >= MIN_POLYGON_NAME
            and _find_word(folded, key) >= 0
            for ds, _fid, name in catalog.polygons
        )

    def _dataset_area(
        self,
        folded: str,
        area: PlanArea,
        target: Target,
        catalog: Catalog,
        datasets: list[str],
        notes: list[str],
    ) -> tuple[PlanArea, Target]:
        """A place that is the dataset's own: "a grade de hexágonos de Porto Alegre" is the
        whole grid; "restaurantes em Helsinque" are the Helsinki file's when several files
        hold restaurants and only one is named after the place."""
        if area.kind == "place":
            stale = f"{area.name}: within "
            kept = [n for n in notes if not n.startswith(stale)]
        if target.dataset and target.dataset in datasets and area.kind == "place":
            notes[:] = kept
            notes.append(f"{area.name}: the whole dataset {self._name_of(catalog, target.dataset)}")
            return PlanArea(kind="all", name=area.name), target
        if target.category and not target.dataset and area.kind in ("place", "all"):
            owners = [d for d in catalog.datasets if target.category in d.schema.get("categories", {})]
            folded_place = _norm(area.name or "")
            words = set(folded_place.split())
            named = [
                d
                for d in owners
                if any(
                    _token_named(t, folded, prefix=True) or t in words
                    for t in re.split(r"[^a-z]+", fold(d.name))
                    if len(t) >= PREFIX_MATCH and self.is_city(t)
                )
            ]
            if len(owners) > 1 and len(named) == 1:
                if area.kind == "place":
                    notes[:] = kept
                notes.append(
                    f"{target.category}: those of the dataset {named[0].name}, named after the place"
                )
                target = target.model_copy(update={"dataset": named[0].id})
                return PlanArea(kind="all", name=area.name or None), target
        return area, target

    def _mentions(self, folded: str, catalog: Catalog) -> list[_Mention]:
        out: list[_Mention] = []
        for ds in catalog.datasets:
            types = ds.prop_types()
            for prop, kind in types.items():
                best, how = -1, "name"
                own = re.sub(r"[^a-z0-9]+", " ", fold(prop)).strip()
                aliases = {re.sub(r"[^a-z0-9]+", " ", fold(a)).strip() for a in ds.aliases.get(prop, [])}
                words = property_words(prop, ds.aliases.get(prop, []))
                for word in sorted(words, key=len, reverse=True):
                    if (pos := _find_word(folded, word)) >= 0:
                        best = pos
                        how = "name" if word == own else "alias" if word in aliases else "concept"
                        break
                if best < 0:
                    best, how = _stem_match(folded, prop), "stem"
                if best >= 0:
                    out.append(_Mention(best, best + len(prop), ds.id, prop, kind, how))
            out += self._measure(folded, ds, [m for m in out if m.dataset == ds.id])
        return sorted(out, key=lambda m: (m.start, m.prop))

    def _measure(self, folded: str, ds: DatasetEntry, mine: list[_Mention]) -> list[_Mention]:
        """The dataset's only opaque-coded count (V014) for a measure concept the question
        names ("população", "residents") and no property of it is named after."""
        out = []
        for concept in MEASURE_CONCEPTS:
            pos = min((p for w in CONCEPTS[concept] if (p := _find_word(folded, w)) >= 0), default=-1)
            if pos < 0 or any(m.how == "concept" or fold(m.prop) == concept for m in mine):
                continue
            coded = [
                p["name"]
                for p in ds.schema.get("properties", [])
                if p["type"] == "number"
                and _OPAQUE_RE.match(fold(p["name"]))
                and not _CODE_RE.match(fold(p["name"]))
            ]
            if len(coded) == 1:
                out.append(_Mention(pos, pos + len(coded[0]), ds.id, coded[0], "number", "measure"))
        return out

    def _name_tokens(self, name: str) -> list[str]:
        """The words of a file name that say what it holds: not a city ("recife_escolas"
        names schools; "Recife" in a question does not name the file)."""
        words = [t for t in re.split(r"[^a-z]+", fold(name)) if len(t) >= 4 and t not in _GENERIC_TOKENS]
        return [t for t in words if not self.is_city(t)]

    def _datasets_named(self, folded: str, catalog: Catalog) -> list[str]:
        hits: list[tuple[int, str]] = []
        for ds in catalog.datasets:
            n = sum(1 for t in self._name_tokens(ds.name) if _token_named(t, folded))
            if n and _compound_named(ds.name, folded):
                hits.append((n, ds.id))
        return [d for _, d in sorted(hits, key=lambda h: -h[0])]

    def _scope(
        self, target: Target, catalog: Catalog, mentions: list[_Mention], datasets: list[str]
    ) -> set[str]:
        """The datasets whose properties count for the target."""
        if target.dataset:
            return {target.dataset}
        if target.category:
            have = {d.id for d in catalog.datasets if target.category in d.schema.get("categories", {})}
            if have:
                return have
        return {m.dataset for m in mentions} | set(datasets)

    def _filters(self, folded: str, mentions: list[_Mention]) -> tuple[list[AttributeFilter], set[str]]:
        """Conditions written after a numeric property: "IDEB > 5", "IDEB acima de 5",
        "V014 pelo menos 1000", "RPA 6"."""
        out: list[AttributeFilter] = []
        used: set[str] = set()
        for m in mentions:
            if m.type not in ("number", "mixed"):
                continue
            tail = folded[m.start :]
            for comp, sym in _COMPARATORS:
                rx = re.compile(rf"^ [a-z0-9]+(?: [a-z]+){{0,2}}? (?:{comp}) {_NUMBER} ")
                if hit := rx.match(tail):
                    out.append(AttributeFilter(attribute=m.prop, op=sym, value=float(hit.group(1))))  # type: ignore[arg-type]
                    used.add(m.prop)
                    break
            else:
                if hit := re.match(rf"^ [a-z0-9]+ {_NUMBER} ", tail):
                    out.append(AttributeFilter(attribute=m.prop, op="=", value=float(hit.group(1))))
                    used.add(m.prop)
                    continue
                head = folded[: m.start + 1]
                for comp, sym in _COMPARATORS[:4]:  # "at least 1000 residents", "mais de 500 moradores"
                    if hit := re.search(rf" (?:{comp}) {_NUMBER} (?:[a-z]+ )?$", head):
                        out.append(AttributeFilter(attribute=m.prop, op=sym, value=float(hit.group(1))))  # type: ignore[arg-type]
                        used.add(m.prop)
                        break
        return out, used

    def _group(
        self, folded: str, mentions: list[_Mention], catalog: Catalog, target: Target
    ) -> tuple[str | None, str | None]:
        own = self._own_words(catalog, target)
        for m in _GROUP_RE.finditer(folded):
            word = m.group(1)
            if word in own:
                continue  # "média por hexágono" over the hexagons themselves: no group
            for mention in mentions:
                if mention.start == m.start(1) - 1:
                    return mention.prop, mention.prop
            if word in _ZONE_WORDS:
                return "h3", None
            layer = self._layer_named(f" {word} ", catalog, exclude=target.dataset)
            if layer:
                return f"layer:{layer}", None
        return None, None

    def _own_words(self, catalog: Catalog, target: Target) -> set[str]:
        """Words naming one feature of the target: its category, its file's words."""
        words: set[str] = set()
        if target.category:
            for w in (target.category, *SYNONYMS.get(target.category, ())):
                words |= {fold(w), fold(w) + "s"}
        for ds in catalog.datasets:
            if ds.id == target.dataset or (
                target.category and target.category in ds.schema.get("categories", {})
            ):
                for t in self._name_tokens(ds.name):
                    words |= {t, t.rstrip("s"), *_TOKEN_WORDS.get(t, ())}
        return words

    def _layer_named(self, folded: str, catalog: Catalog, exclude: str | None = None) -> str | None:
        """A polygon layer the words name ("bairros" -> recife_bairros)."""
        for ds in catalog.datasets:
            if ds.id == exclude or not ds.schema.get("polygons"):
                continue
            if any(_token_named(t, folded) for t in self._name_tokens(ds.name)):
                return ds.id
        return None

    def _polygon_in(
        self, folded: str, catalog: Catalog, cat_words: set[str], own: str | None = None
    ) -> tuple[str, str, str] | None:
        """The longest polygon name in the question; the target's own layer first."""
        best: tuple[int, tuple[str, str, str]] | None = None
        for ds, fid, name in catalog.polygons:
            key = re.sub(r"[^a-z0-9]+", " ", fold(name)).strip()
            if len(key) < MIN_POLYGON_NAME or key in cat_words:
                continue
            if _find_word(folded, key) < 0:
                continue
            layer_word = re.search(
                rf"\b(bairro|neighbou?rhood|district|setor)\s+(?:de |do |da )?{re.escape(key)}\b", folded
            )
            if self.is_city(name) and not layer_word:
                continue  # "no Recife" is the city, not the bairro RECIFE
            score = len(key) + (1000 if own and ds == own else 0)
            if best is None or score > best[0]:
                best = (score, (ds, fid, name))
        return best[1] if best else None

    @staticmethod
    def _asks_another_kind(folded: str, catalog: Catalog) -> bool:
        """Whether a "which X" question asks for a kind of thing the loaded data does not
        hold ("which state or union territory"): no category, synonym, zone word, dataset
        name or property is X, so a property the data shares by name ("population") is not
        what is asked about."""
        m = re.search(r"\b(?:which|qual|quais|quel|quelle|how many|quant[oa]s|combien de)\s+([a-z]+)", folded)
        if not m or m[1] in _ASK_SKIP or m[1] in _KIND_SKIP:
            return False
        word = m[1]
        known = {w for words in SYNONYMS.values() for w in words} | set(SYNONYMS) | _AREA_WORDS
        known |= {fold(c) for c in catalog.categories}
        # a dataset's name, or a property asked by its values ("which RPA has the highest IDEB")
        for d in catalog.datasets:
            for label in (d.name, *d.prop_types()):
                known.update(t for t in re.split(r"[^a-z0-9]+", fold(label)) if t)
        return not ({word, word.rstrip("s"), f"{word}s"} & known)

    def _area(
        self, question: str, folded: str, catalog: Catalog, target: Target, notes: list[str]
    ) -> PlanArea:
        cat_words = {w for words in SYNONYMS.values() for w in words}
        radius = None
        if (
            (m := _RADIUS_RE.search(fold(question)))
            and _NEAR_PLACE_RE.search(folded)
            or (m and re.search(r"\b(within|a ate|ate|em ate|a menos de)\b", folded))
        ):
            radius = float(m.group(1).replace(",", ".")) * _UNITS[m.group(2).lower()]
        if (c := _COORDS_RE.search(question)) and radius is not None:
            return PlanArea(kind="circle", lat=float(c.group(1)), lon=float(c.group(2)), radius_m=radius)
        poly = self._polygon_in(folded, catalog, cat_words, target.dataset)
        if poly is not None:
            ds, fid, name = poly
            near = _NEAR_PLACE_RE.search(folded)
            if near or radius is not None:
                notes.append(f"near {name}: inside it or within {radius or DEFAULT_NEAR_M:.0f} m of it")
            return PlanArea(
                kind="polygon",
                name=name,
                dataset=ds,
                feature=fid,
                radius_m=(radius or DEFAULT_NEAR_M) if near or radius else None,
            )
        if self.place_finder is not None:
            match = self.place_finder(question)
            if match is not None and match.place.kind not in ("country", "continent", "state"):
                place = match.place
                key = re.sub(r"[^a-z]+", " ", fold(place.name)).strip()
                owners = self._owners(target, catalog)
                named = [" ".join(re.split(r"[^a-z]+", fold(d.name))) for d in owners]
                if radius is None and owners and all(f" {key} " in f" {n} " for n in named):
                    notes.append(f"{place.name}: the whole dataset (its file is about {place.name})")
                    return PlanArea(kind="all", name=place.name)
                if radius is None:
                    radius = city_radius_m(place.population)
                    notes.append(f"{place.name}: within {radius / 1000:.1f} km of its centre")
                return PlanArea(kind="place", name=place.name, lat=place.lat, lon=place.lon, radius_m=radius)
        return PlanArea()

    def _owners(self, target: Target, catalog: Catalog) -> list[DatasetEntry]:
        if target.dataset:
            return [d for d in catalog.datasets if d.id == target.dataset]
        if target.category:
            return [d for d in catalog.datasets if target.category in d.schema.get("categories", {})]
        return []

    def _references(self, question: str, folded: str, catalog: Catalog, target: Target) -> list[Reference]:
        refs: list[Reference] = []
        for c in _COORDS_RE.finditer(question):
            refs.append(Reference(lat=float(c.group(1)), lon=float(c.group(2))))
        cat_words = {w for words in SYNONYMS.values() for w in words}
        named: list[tuple[int, Reference]] = []
        for _, name in catalog.poi_names():
            key = re.sub(r"[^a-z0-9]+", " ", fold(name)).strip()
            if (
                len(key) >= MIN_REFERENCE_NAME
                and key not in cat_words
                and (pos := _find_word(folded, key)) >= 0
            ):
                named.append((pos, Reference(name=name)))
        for _ds, _fid, name in catalog.polygons:
            key = re.sub(r"[^a-z0-9]+", " ", fold(name)).strip()
            if (
                len(key) >= MIN_POLYGON_NAME
                and (pos := _find_word(folded, key)) >= 0
                and not self.is_city(name)
            ):
                named.append((pos, Reference(name=name)))
        named.sort(key=lambda pr: pr[0])
        spans = [(pos, pos + len(fold(r.name or "")) + 1) for pos, r in named]
        named = [
            (pos, r)
            for (pos, r), (a, b) in zip(named, spans, strict=True)
            if not any(a2 <= a and b <= b2 and (b2 - a2) > (b - a) for a2, b2 in spans)
        ]
        seen: set[str] = set()
        for _, ref in named:
            if ref.name and fold(ref.name) not in seen:
                seen.add(fold(ref.name))
                refs.append(ref)
        if len(refs) < 2 and self.place_finder is not None:
            match = self.place_finder(question)
            if match is not None and fold(match.place.name) not in seen:
                refs.append(Reference(name=match.place.name, lat=match.place.lat, lon=match.place.lon))
        return refs[:2]
