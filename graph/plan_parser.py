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
from typing import Any

from geo.folding import fold
from graph.categories import SYNONYMS
from graph.parser import _RADIUS_RE, _RELATION_RE, _SELF_RE, _UNITS, find_categories
from graph.plan import AGGREGATES, AttributeFilter, GeoPlan, PlanArea, Reference, Target

# concept words -> property names that mean it (a property named so is matched by them)
CONCEPTS: dict[str, tuple[str, ...]] = {
    "population": ("population", "populacao", "pop", "habitantes", "residents", "residentes", "moradores"),
    "schools": ("schools", "escolas"),
    "jobs": ("jobs", "empregos", "postos de trabalho"),
    "healthcare": ("healthcare", "saude", "health facilities", "unidades de saude"),
    "area": ("area",),
}
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
    how: str = "name"  # "name" | "alias" | "concept" | "stem": how the question named it


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


def may_be_analytical(question: str) -> bool:
    """The cheap test before the catalog is read: an operation or group-by word is there."""
    folded = _norm(question)
    return any(rx.search(folded) for _, rx in _OPS) or bool(_GROUP_RE.search(folded))


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
        if not ops:
            return None
        op = ops[0]
        if (
            op not in ("nearest", "distance")
            and relation
            and (len(cats_found) >= 2 or (cats_found and _SELF_RE.search(folded)))
        ):
            return GeoPlan(operation="pairs", pair_categories=list(dict.fromkeys(cats_found))[:2])
        mentions = self._mentions(folded, catalog)
        datasets = self._datasets_named(folded, catalog)
        tabular = {d.id for d in catalog.datasets if d.kind not in OSM_KINDS}
        # the target
        target = Target()
        if held_cats:
            target.category = held_cats[0]
        elif other_cats:
            target.category = other_cats[0]
            target.name_contains = other_cats[0]
        elif defining := [m for m in mentions if m.how in ("name", "alias") and m.dataset in tabular]:
            # a dataset the question names and whose property it names first; a property
            # alone counts only by its own name or an upload alias, and not for OSM files
            # (their tag keys, "name", "level", "capacity", are everyday words)
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
        if group_by is None and op in ("argmax", "argmin") and free_numeric and which is not None:
            # "qual bairro tem a maior população": the groups of a text property ranked
            word_is_target = bool(find_categories(which.group(1)))
            texts = [
                m
                for m in local
                if m.type == "string" and m.start == which.start(1) - 1 and not word_is_target
            ]
            if texts:
                group_by, group_attr = texts[0].prop, texts[0].prop
        if group_by is not None and op in ("argmax", "argmin", "count", "list", "sum", "avg"):
            attribute = free_numeric[0].prop if free_numeric and not counting else None
            if group_attr and attribute == group_attr:
                attribute = None
            return GeoPlan(
                order="asc" if op == "argmin" else "desc",
                operation="group_by",
                target=target,
                attribute=attribute,
                filters=filters,
                area=self._area(question, folded, catalog, target, notes),
                group_by=group_by,
                notes=notes + ([f"aggregate: {'avg' if op == 'avg' else 'sum'}"] if attribute else []),
            )
        if op in ("argmax", "argmin") and not _WHICH_RE.search(folded) and free_numeric:
            op = "max" if op == "argmax" else "min"
        if (
            op in ("argmax", "argmin")
            and not free_numeric
            and re.search(r"\b(mais|most|menos|fewest|least)\b", folded)
            and (_IN_LAYER_WORDS.search(folded) or any(w in folded.split() for w in _AREA_WORDS))
        ):
            layer = self._layer_named(folded, catalog)
            return GeoPlan(
                operation="group_by",
                target=target,
                filters=filters,
                area=self._area(question, folded, catalog, target, notes),
                group_by=f"layer:{layer}" if layer else "h3",
                order="asc" if op == "argmin" else "desc",
                notes=notes,
            )
        if op == "sum" and not free_numeric and target.category:
            op = "count"  # "the total number of schools"
        if op in ("list",) and filters:
            op = "filter"
        attribute = free_numeric[0].prop if free_numeric and op in AGGREGATES else None
        if op in AGGREGATES and attribute is None:
            notes.append("no attribute of the data named")
        references: list[Reference] = []
        k = 1
        if op in ("nearest", "distance"):
            references = self._references(question, folded, catalog, target)
            if m := re.search(r"\b(\d{1,2})\s+(?:nearest|closest|mais proxim)", folded) or re.search(
                r"\b(?:os|as|the)\s+(\d{1,2})\b", folded
            ):
                k = max(1, min(50, int(m.group(1))))
        area = (
            PlanArea()
            if op in ("nearest", "distance")
            else self._area(question, folded, catalog, target, notes)
        )
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
        return sorted(out, key=lambda m: (m.start, m.prop))

    def _name_tokens(self, name: str) -> list[str]:
        """The words of a file name that say what it holds: not a city ("recife_escolas"
        names schools; "Recife" in a question does not name the file)."""
        words = [t for t in re.split(r"[^a-z]+", fold(name)) if len(t) >= 4 and t not in _GENERIC_TOKENS]
        return [t for t in words if not self.is_city(t)]

    def _datasets_named(self, folded: str, catalog: Catalog) -> list[str]:
        hits: list[tuple[int, str]] = []
        for ds in catalog.datasets:
            tokens = [t for t in self._name_tokens(ds.name)]
            n = sum(
                1
                for t in tokens
                if re.search(rf" {re.escape(t)}s? ", folded)
                or re.search(rf" {re.escape(t.rstrip('s'))} ", folded)
            )
            if n:
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
        return out, used

    def _group(
        self, folded: str, mentions: list[_Mention], catalog: Catalog, target: Target
    ) -> tuple[str | None, str | None]:
        for m in _GROUP_RE.finditer(folded):
            word = m.group(1)
            for mention in mentions:
                if mention.start == m.start(1) - 1:
                    return mention.prop, mention.prop
            if word in _ZONE_WORDS:
                return "h3", None
            layer = self._layer_named(f" {word} ", catalog, exclude=target.dataset)
            if layer:
                return f"layer:{layer}", None
        return None, None

    def _layer_named(self, folded: str, catalog: Catalog, exclude: str | None = None) -> str | None:
        """A polygon layer the words name ("bairros" -> recife_bairros)."""
        for ds in catalog.datasets:
            if ds.id == exclude or not ds.schema.get("polygons"):
                continue
            tokens = [t for t in self._name_tokens(ds.name)]
            for t in tokens:
                if re.search(rf" {re.escape(t.rstrip('s'))}s? ", folded) or re.search(
                    rf" {re.escape(t)} ", folded
                ):
                    return ds.id
        return None

    def _polygon_in(self, folded: str, catalog: Catalog, cat_words: set[str]) -> tuple[str, str, str] | None:
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
            if best is None or len(key) > best[0]:
                best = (len(key), (ds, fid, name))
        return best[1] if best else None

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
        poly = self._polygon_in(folded, catalog, cat_words)
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
