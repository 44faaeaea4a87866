"""Find geographic coordinates in free text (PDF text layers, OCR output), Portuguese and English.

Recognised forms, each with a confidence that says how sure the written form makes us:

- ``dms``: degrees/minutes[/seconds] with hemisphere letters or signs, ``8°07'11"S 34°53'49"W``;
- ``labelled``: values behind lat/lon labels, ``lat -8.0631, lon -34.8711``, ``Lat/Lon: 23.5, -77.1``;
- ``decimal``: decimal degrees with hemispheres (``8,0631° S, 34,8711° O``), degree signs, or, as weak
  evidence, bracketed or signed pairs with many decimals (``(-8.0375; -34.9030)``);
- ``utm``: easting/northing with a stated zone (``UTM 25S 288776 9120760``), converted with pyproj.

Plain number pairs without any geographic cue are deliberately ignored: reports are full of tables,
money, dates and percentages that look like coordinates to a naive parser.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pyproj import Transformer

__all__ = ["CoordinateFormat", "CoordinateMatch", "find_coordinates", "valid_latlon"]


CoordinateFormat = Literal["decimal", "dms", "labelled", "utm"]


@dataclass(frozen=True)
class CoordinateMatch:
    """One coordinate found in a text: WGS84 (EPSG:4326) latitude and longitude in decimal degrees,
    the ``text[start:end]`` span it was read from, how it was written, and how sure the form makes us.

    Example: ``CoordinateMatch(lat=-8.0631, lon=-34.8711, start=12, end=37,
    text="lat -8.0631, lon -34.8711", format="labelled", confidence=0.9)``.
    """

    lat: float
    lon: float
    start: int
    end: int
    text: str
    format: CoordinateFormat
    confidence: float  # 0..1: labels, hemispheres and DMS score high; cue-less number pairs low


def valid_latlon(lat: float, lon: float) -> bool:
    """True for a finite latitude in [-90, 90] and longitude in [-180, 180]."""
    return math.isfinite(lat) and math.isfinite(lon) and abs(lat) <= 90 and abs(lon) <= 180


# Confidence per written form: explicit hemispheres, DMS and labels are hard to produce by accident.
CONF_DMS = 0.95
CONF_LABELLED = 0.9
CONF_SIGNED_DMS = 0.85
CONF_UTM = 0.9
CONF_HEMI_DEGREE = 0.9
CONF_HEMI = 0.8
CONF_UTM_CONTEXT_ZONE = 0.8
CONF_DEGREE_SIGNS = 0.75
CONF_UTM_DEFAULT_ZONE = 0.7
CONF_BRACKETED = 0.6
CONF_SIGNED_PAIR = 0.4

# --- regex building blocks -------------------------------------------------------------------

_H = r"[^\S\n]*"  # horizontal whitespace
_WS = rf"{_H}(?:\n{_H})?"  # at most one line break: OCR wraps lines, paragraphs are separate
_SIGN = r"[-+−–]"  # ASCII, Unicode minus, and the en dash OCR often gives for a minus
_DEG = r"[°º˚]"  # degree sign, the ordinal indicator Portuguese keyboards produce, ring above
_MIN = r"['’′´‘`]"
_SEC = r"(?:''|’’|′′|‘‘|\"|”|″|“)"
_NUM = r"\d{1,3}(?:[.,]\d+)?"
_END = r"(?!\d|[.,]\d)"  # a number ends here: no more digits, no further decimal/thousand part
_LEFT = r"(?<![\w.,\-−–+/°º˚'’′´‘`\"”″“])"  # a number starts here: not inside a date, range, DMS
_NOT_LETTER = r"(?![^\W\d_])"
_HEMI_WORDS = r"(?i:norte|north|sul|south|leste|east|oeste|west)"
_SEP = rf"{_WS}(?:[,;/|]{_WS})?(?:(?:e|and|&){_WS})?"  # between the two halves of a pair

_HEMISPHERES = {
    "N": "N",
    "NORTE": "N",
    "NORTH": "N",
    "S": "S",
    "SUL": "S",
    "SOUTH": "S",
    "E": "E",
    "L": "E",  # leste
    "LESTE": "E",
    "EAST": "E",
    "W": "W",
    "O": "W",  # oeste
    "OESTE": "W",
    "WEST": "W",
}


def _angle(i: int) -> str:
    """An angle: signed decimal degrees, or degrees with minutes and optional seconds."""
    seconds = (
        rf"(?:{_H}(?P<sec{i}>\d{{1,2}}(?:[.,]\d+)?){_END}(?!{_H}{_DEG}){_H}{_SEC}?)?"  # "11\"" or OCR's "11"
    )
    minutes = rf"(?:{_H}(?P<min{i}>\d{{1,2}}(?:[.,]\d+)?){_END}{_H}{_MIN}{seconds})?"
    degree = rf"(?:{_H}(?P<dsym{i}>{_DEG})(?!{_H}[CFK]{_NOT_LETTER}){minutes})?"  # not °C, °F
    return rf"(?P<sign{i}>{_SIGN})?(?P<deg{i}>{_NUM}){_END}{degree}"


def _hemi(name: str) -> str:
    return rf"(?P<{name}>[NSEWOL]|{_HEMI_WORDS}){_NOT_LETTER}"


def _labelled_value(i: int) -> str:
    """A labelled value may still carry a hemisphere before or after it."""
    return rf"(?:{_hemi(f'hp{i}')}{_H})?{_angle(i)}(?:{_H}{_hemi(f'hs{i}')})?"


_LAT = r"(?i:\blat(?:itude)?\b\.?)"
_LON = r"(?i:\b(?:long?(?:itude)?|lng)\b\.?)"
_LABEL_TAIL = rf"{_H}(?:\([^()\n]{{0,20}}\){_H})?[:=|]?{_H}"  # "Latitude (WGS84): "
_AND = rf"{_H}(?:[/,&]|\be\b|\band\b){_H}"
_LATLON = (
    rf"(?i:\b(?:lat(?:itude)?{_AND}long?(?:itude)?|lat{_H}[/,]?{_H}lng|latlong?"
    rf"|coordenadas(?:{_H}geogr[aá]ficas)?|coordinates|coords?)\b\.?)"
)
_LONLAT = rf"(?i:\b(?:long?(?:itude)?{_AND}lat(?:itude)?|lng{_H}[/,]?{_H}lat|lonlat)\b\.?)"

_HEMI_SUFFIX_PAIR = re.compile(rf"{_LEFT}{_angle(1)}{_H}{_hemi('h1')}{_SEP}{_angle(2)}{_H}{_hemi('h2')}")
_HEMI_PREFIX_PAIR = re.compile(rf"(?<!\w){_hemi('h1')}{_H}{_angle(1)}{_SEP}{_hemi('h2')}{_H}{_angle(2)}")
_LAT_LON_LABELS = re.compile(
    rf"{_LAT}{_LABEL_TAIL}{_labelled_value(1)}{_SEP}{_LON}{_LABEL_TAIL}{_labelled_value(2)}"
)
_LON_LAT_LABELS = re.compile(
    rf"{_LON}{_LABEL_TAIL}{_labelled_value(1)}{_SEP}{_LAT}{_LABEL_TAIL}{_labelled_value(2)}"
)
_PAIR_LABEL = re.compile(
    rf"(?:(?P<latlon>{_LATLON})|(?P<lonlat>{_LONLAT})){_LABEL_TAIL}[(\[]?{_H}"
    rf"{_labelled_value(1)}{_SEP}{_labelled_value(2)}"
)
_DEGREE_PAIR = re.compile(rf"{_LEFT}{_angle(1)}{_SEP}{_angle(2)}")
_BRACKETED_PAIR = re.compile(
    rf"[(\[]{_H}(?P<a>{_SIGN}?{_NUM}){_END}{_H}(?P<sep>[;,]){_H}(?P<b>{_SIGN}?{_NUM}){_END}{_H}[)\]]"
)
_SIGNED_PAIR = re.compile(
    rf"{_LEFT}(?P<a>{_SIGN}?{_NUM}){_END}{_H}(?P<sep>[;,]){_H}(?P<b>{_SIGN}?{_NUM}){_END}"
    rf"(?!{_H}(?:{_DEG}|%))"
)
_LIST_BEFORE = re.compile(rf"\d{_H}[,;]{_H}$")
_LIST_AFTER = re.compile(rf"{_H}[,;]{_H}{_SIGN}?\d")
LIST_LOOKBEHIND = 20  # characters searched for a preceding list item

# --- UTM ---------------------------------------------------------------------------------------

_ZONE = (
    rf"(?<!\d)(?P<zone>\d{{1,2}})(?!\d)"
    rf"(?:{_H}(?P<band>[C-HJ-NP-X]){_NOT_LETTER}"
    rf"|{_H}[(\-–,]?{_H}(?P<hemw>(?i:(?:hemisf[ée]rio{_H})?(?:sul|south|norte|north))){_NOT_LETTER})?"
)
_ZONE_INTRO = (
    rf"(?:(?i:\bUTM\b)[^\d\n]{{0,20}}?"
    rf"|(?i:\b(?:zone|zona|fuso)\b){_H}(?:(?i:UTM){_H})?(?:(?i:n)[º°o.]{_H})?[:=]?{_H})"
)
_METRES = (
    r"(?<![\d.,])(?:\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{5,8}(?:[.,]\d+)?)"
    r"(?!\d|[.,]\d)"
)
_E_PRE = rf"(?:(?i:easting|leste|este)|mE|E|X){_NOT_LETTER}{_H}[:=]?{_H}"
_N_PRE = rf"(?:(?i:northing|norte)|mN|N|Y){_NOT_LETTER}{_H}[:=]?{_H}"
_E_SUF = rf"{_H}(?:m{_H})?(?:E|(?i:easting|leste)){_NOT_LETTER}"
_N_SUF = rf"{_H}(?:m{_H})?(?:N|(?i:northing|norte)){_NOT_LETTER}"
_EN_LABELLED = (
    rf"{_E_PRE}(?P<e1>{_METRES}){_SEP}{_N_PRE}(?P<n1>{_METRES})"
    rf"|{_N_PRE}(?P<n2>{_METRES}){_SEP}{_E_PRE}(?P<e2>{_METRES})"
    rf"|(?P<e3>{_METRES}){_E_SUF}{_SEP}(?P<n3>{_METRES}){_N_SUF}"
    rf"|(?P<n4>{_METRES}){_N_SUF}{_SEP}(?P<e4>{_METRES}){_E_SUF}"
)
_EN_BARE = rf"(?P<a5>{_METRES}){_SEP}(?P<b5>{_METRES})"  # only right after a stated zone
_ZONE_MENTION = re.compile(rf"{_ZONE_INTRO}{_ZONE}")
_UTM_ZONED = re.compile(rf"{_ZONE_INTRO}{_ZONE}[^\d\n]{{0,12}}?(?:{_EN_LABELLED}|{_EN_BARE})")
_UTM_LABELLED = re.compile(rf"(?<!\w)(?:{_EN_LABELLED})")
_ZONE_TEXT = re.compile(
    r"\s*(?P<zone>\d{1,2})\s*(?:(?P<band>[C-HJ-NP-Xc-hj-np-x])|(?P<hemw>(?i:sul|south|norte|north)))?\s*"
)

EASTING_RANGE = (100_000.0, 900_000.0)
NORTHING_RANGE = (0.0, 10_000_000.0)
NORTH_MAX_NORTHING = 9_330_000.0  # 84°N: a larger northing can only be a southern one
SOUTH_MIN_NORTHING = 1_100_000.0  # 80°S: a smaller northing can only be a northern one
ZONE_AFTER_WINDOW = 40  # "288776 mE 9120760 mN (UTM 25S)": the zone may follow the pair


@dataclass(frozen=True)
class _Angle:
    """One parsed angle: magnitude in degrees plus what the text said about its sign."""

    degrees: float
    negative: bool
    hemisphere: str | None  # "N", "S", "E", "W"
    degree_sign: bool
    dms: bool
    decimals: int

    @property
    def axis(self) -> str | None:
        if self.hemisphere is None:
            return None
        return "lat" if self.hemisphere in "NS" else "lon"

    @property
    def value(self) -> float:
        """Signed degrees; a hemisphere letter outranks a sign ("-8.06 S" is still south)."""
        if self.hemisphere is not None:
            return -self.degrees if self.hemisphere in "SW" else self.degrees
        return -self.degrees if self.negative else self.degrees


@dataclass(frozen=True)
class _Zone:
    """A UTM zone as written: its number, and its hemisphere if the text said which."""

    number: int
    south: bool | None  # None: the text did not say


def _number(text: str) -> float:
    """A float from a decimal point or comma, with ASCII, Unicode or en-dash minus."""
    return float(text.replace(",", ".").replace("−", "-").replace("–", "-"))


def _decimals(text: str) -> int:
    parts = re.split(r"[.,]", text, maxsplit=1)
    return len(parts[1]) if len(parts) == 2 else 0


def _hemisphere(word: str | None) -> str | None:
    return _HEMISPHERES[word.upper()] if word else None


def _parse_angle(m: re.Match[str], i: int, hemi: str | None = None) -> _Angle | None:
    """The angle of group set ``i``; None when minutes or seconds are out of range."""
    deg_text = m.group(f"deg{i}")
    degrees = _number(deg_text)
    minutes_text, seconds_text = m.group(f"min{i}"), m.group(f"sec{i}")
    if minutes_text is not None:
        minutes = _number(minutes_text)
        seconds = _number(seconds_text) if seconds_text is not None else 0.0
        if _decimals(deg_text) or minutes >= 60 or seconds >= 60:
            return None
        if seconds_text is not None and _decimals(minutes_text):
            return None
        degrees += minutes / 60 + seconds / 3600
    return _Angle(
        degrees=degrees,
        negative=m.group(f"sign{i}") not in (None, "+"),
        hemisphere=_hemisphere(hemi),
        degree_sign=m.group(f"dsym{i}") is not None,
        dms=minutes_text is not None,
        decimals=_decimals(deg_text),
    )


def _by_hemisphere(a: _Angle, b: _Angle) -> tuple[float, float] | None:
    """(lat, lon) when the two hemispheres name one latitude and one longitude, in either order."""
    if {a.axis, b.axis} != {"lat", "lon"}:
        return None
    lat, lon = (a, b) if a.axis == "lat" else (b, a)
    return lat.value, lon.value


def _by_position(a: float, b: float) -> tuple[float, float] | None:
    """Written order is (lat, lon), unless only the swapped order is possible."""
    if valid_latlon(a, b):
        return a, b
    if valid_latlon(b, a):
        return b, a
    return None


def _match(
    m: re.Match[str], latlon: tuple[float, float] | None, fmt: CoordinateFormat, confidence: float
) -> CoordinateMatch | None:
    if latlon is None or not valid_latlon(*latlon):
        return None
    lat, lon = latlon
    return CoordinateMatch(lat, lon, m.start(), m.end(), m.group(0), fmt, confidence)


def _scan(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """Every match, retrying one character later after each, so a rejected candidate cannot hide
    a valid one that starts inside it."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        yield m
        pos = m.start() + 1


# --- extractors: each turns one pattern's matches into candidates ------------------------------


def _hemisphere_pairs(text: str) -> Iterator[CoordinateMatch]:
    for pattern in (_HEMI_SUFFIX_PAIR, _HEMI_PREFIX_PAIR):
        for m in _scan(pattern, text):
            a, b = _parse_angle(m, 1, m.group("h1")), _parse_angle(m, 2, m.group("h2"))
            if a is None or b is None:
                continue
            if not (a.dms or b.dms or a.degree_sign or b.degree_sign or (a.decimals and b.decimals)):
                continue  # "10 N, 20 W" reads as newtons and watts as easily as degrees
            if a.dms or b.dms:
                fmt, confidence = "dms", CONF_DMS
            elif a.degree_sign or b.degree_sign:
                fmt, confidence = "decimal", CONF_HEMI_DEGREE
            else:
                fmt, confidence = "decimal", CONF_HEMI
            if (found := _match(m, _by_hemisphere(a, b), fmt, confidence)) is not None:
                yield found


def _labelled_angle(m: re.Match[str], i: int) -> _Angle | None:
    prefix, suffix = m.group(f"hp{i}"), m.group(f"hs{i}")
    if prefix and suffix:
        return None
    return _parse_angle(m, i, prefix or suffix)


def _separate_labels(text: str) -> Iterator[CoordinateMatch]:
    """Separate labels (lat -8.06, lon -34.87) decide the axes; hemispheres must agree with them."""
    for pattern, axes in ((_LAT_LON_LABELS, ("lat", "lon")), (_LON_LAT_LABELS, ("lon", "lat"))):
        for m in _scan(pattern, text):
            a, b = _labelled_angle(m, 1), _labelled_angle(m, 2)
            if a is None or b is None or a.axis not in (None, axes[0]) or b.axis not in (None, axes[1]):
                continue
            values = {axes[0]: a.value, axes[1]: b.value}
            if (found := _match(m, (values["lat"], values["lon"]), "labelled", CONF_LABELLED)) is not None:
                yield found


def _pair_labels(text: str) -> Iterator[CoordinateMatch]:
    """One label for both (Lat/Lon: 23.5, -77.1): hemispheres decide if given, else the label's order."""
    for m in _scan(_PAIR_LABEL, text):
        a, b = _labelled_angle(m, 1), _labelled_angle(m, 2)
        if a is None or b is None:
            continue
        if a.axis or b.axis:
            latlon = _by_hemisphere(a, b)
        elif m.group("lonlat"):
            latlon = (b.value, a.value)
        else:
            latlon = (a.value, b.value)
        if (found := _match(m, latlon, "labelled", CONF_LABELLED)) is not None:
            yield found


def _degree_pairs(text: str) -> Iterator[CoordinateMatch]:
    """Signed pairs where both values carry a degree sign and read as more than a plain angle."""
    for m in _scan(_DEGREE_PAIR, text):
        a, b = _parse_angle(m, 1), _parse_angle(m, 2)
        if a is None or b is None or not (a.degree_sign and b.degree_sign):
            continue
        if a.dms and b.dms:
            fmt, confidence = "dms", CONF_SIGNED_DMS
        elif a.decimals >= 2 and b.decimals >= 2:  # "15°, 30°" are slopes or bearings
            fmt, confidence = "decimal", CONF_DEGREE_SIGNS
        else:
            continue
        if (found := _match(m, _by_position(a.value, b.value), fmt, confidence)) is not None:
            yield found


def _plain_pair(m: re.Match[str], min_decimals: int) -> tuple[float, float] | None:
    """A cue-less pair of numbers, if it is precise enough and its separator is unambiguous."""
    a_text, b_text = m.group("a"), m.group("b")
    if min(_decimals(a_text), _decimals(b_text)) < min_decimals:
        return None
    if ("," in a_text or "," in b_text) and m.group("sep") != ";":
        return None  # with a decimal comma, only ';' separates the values
    latlon = _by_position(_number(a_text), _number(b_text))
    if latlon is None or (abs(latlon[0]) < 1 and abs(latlon[1]) < 1):
        return None  # "null island" pairs are statistics, not places
    return latlon


def _bracketed_pairs(text: str) -> Iterator[CoordinateMatch]:
    for m in _scan(_BRACKETED_PAIR, text):
        if (found := _match(m, _plain_pair(m, 3), "decimal", CONF_BRACKETED)) is not None:
            yield found


def _in_list(text: str, m: re.Match[str]) -> bool:
    """True when the pair is two items of a longer run of numbers, as in a table row."""
    before = _LIST_BEFORE.search(text, max(0, m.start() - LIST_LOOKBEHIND), m.start())
    return before is not None or _LIST_AFTER.match(text, m.end()) is not None


def _signed_pairs(text: str) -> Iterator[CoordinateMatch]:
    """Bare pairs (-8.0631, -34.8711) are weak evidence: demand a sign, 4+ decimals, no list around."""
    for m in _scan(_SIGNED_PAIR, text):
        if not any(m.group(g)[0] in "+-−–" for g in ("a", "b")) or _in_list(text, m):
            continue
        if (found := _match(m, _plain_pair(m, 4), "decimal", CONF_SIGNED_PAIR)) is not None:
            yield found


# --- UTM -------------------------------------------------------------------------------------------


def _zone(m: re.Match[str]) -> _Zone | None:
    number = int(m.group("zone"))
    if not 1 <= number <= 60:
        return None
    band, word = m.group("band"), m.group("hemw")
    if word:
        return _Zone(number, word.lower().split()[-1] in ("sul", "south"))
    if band:
        # "25S" is written for "zone 25 south" far more often than for latitude band S (32-40°N)
        band = band.upper()
        return _Zone(number, band == "S" or band < "N")
    return _Zone(number, None)


def _parse_utm_zone(text: str) -> _Zone:
    """A caller's zone: "25S", "25 L", "23 sul"; south is None when only a number is given."""
    m = _ZONE_TEXT.fullmatch(text)
    zone = _zone(m) if m else None
    if zone is None:
        raise ValueError(f"not a UTM zone (expected e.g. '25S' or '23K'): {text!r}")
    return zone


def _metres(text: str) -> float:
    """Eastings/northings with Brazilian (288.776,5) or English (288,776.5) grouping, or none."""
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?", text):
        return float(text.replace(".", "").replace(",", "."))
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", text):
        return float(text.replace(",", ""))
    return float(text.replace(",", "."))


def _easting_northing(m: re.Match[str]) -> tuple[float, float] | None:
    for i in range(1, 5):
        if m.group(f"e{i}") is not None:
            return _metres(m.group(f"e{i}")), _metres(m.group(f"n{i}"))
    if "a5" not in m.re.groupindex or m.group("a5") is None:
        return None
    a, b = _metres(m.group("a5")), _metres(m.group("b5"))
    if not _is_easting(a) and _is_easting(b):
        return b, a
    return a, b


def _is_easting(value: float) -> bool:
    return EASTING_RANGE[0] <= value <= EASTING_RANGE[1]


@lru_cache(maxsize=128)
def _to_wgs84(epsg: int) -> Transformer:
    return Transformer.from_crs(f"EPSG:{epsg}", "EPSG:4326", always_xy=True)


def _utm_to_latlon(zone: int, south: bool, easting: float, northing: float) -> tuple[float, float]:
    """WGS84 (lat, lon) of a UTM point; SIRGAS 2000 UTM agrees with WGS84 UTM within a metre."""
    lon, lat = _to_wgs84((32700 if south else 32600) + zone).transform(easting, northing)
    return lat, lon


def _is_south(zone: _Zone, northing: float, default: _Zone | None) -> bool | None:
    """The zone's hemisphere; if unstated, the caller's, else what the northing alone can prove."""
    if zone.south is not None:
        return zone.south
    if default is not None and default.south is not None:
        return default.south
    if northing > NORTH_MAX_NORTHING:
        return True
    if northing < SOUTH_MIN_NORTHING:
        return False
    return None


def _utm_latlon(
    zone: _Zone, en: tuple[float, float] | None, default: _Zone | None
) -> tuple[float, float] | None:
    if en is None:
        return None
    easting, northing = en
    if not (_is_easting(easting) and NORTHING_RANGE[0] <= northing <= NORTHING_RANGE[1]):
        return None
    south = _is_south(zone, northing, default)
    return None if south is None else _utm_to_latlon(zone.number, south, easting, northing)


def _utm_zoned(text: str, default: _Zone | None) -> Iterator[CoordinateMatch]:
    """A zone followed by its easting/northing: "UTM 25S 288776 9120760"."""
    for m in _scan(_UTM_ZONED, text):
        zone = _zone(m)
        if zone is not None and (
            found := _match(m, _utm_latlon(zone, _easting_northing(m), default), "utm", CONF_UTM)
        ):
            yield found


def _context_zone(mentions: list[tuple[int, int, _Zone]], start: int, end: int) -> tuple[_Zone, float] | None:
    """The zone stated just after the pair, else the last one stated before it in the text."""
    after = [zone for s, _, zone in mentions if end <= s <= end + ZONE_AFTER_WINDOW]
    before = [zone for _, e, zone in mentions if e <= start]
    if after:
        return after[0], CONF_UTM_CONTEXT_ZONE
    if before:
        return before[-1], CONF_UTM_CONTEXT_ZONE
    return None


def _utm_labelled(text: str, default: _Zone | None) -> Iterator[CoordinateMatch]:
    """Labelled easting/northing whose zone is stated elsewhere: nearby in the text, or by the caller."""
    mentions = [(m.start(), m.end(), z) for m in _ZONE_MENTION.finditer(text) if (z := _zone(m))]
    for m in _scan(_UTM_LABELLED, text):
        found_zone = _context_zone(mentions, m.start(), m.end())
        if found_zone is None and default is not None:
            found_zone = default, CONF_UTM_DEFAULT_ZONE
        if found_zone is None:
            continue
        zone, confidence = found_zone
        if found := _match(m, _utm_latlon(zone, _easting_northing(m), default), "utm", confidence):
            yield found


# --- public entry point --------------------------------------------------------------------------

_DEGREE_EXTRACTORS: tuple[Callable[[str], Iterator[CoordinateMatch]], ...] = (
    _hemisphere_pairs,
    _separate_labels,
    _pair_labels,
    _degree_pairs,
    _bracketed_pairs,
    _signed_pairs,
)


def _non_overlapping(candidates: list[CoordinateMatch]) -> list[CoordinateMatch]:
    """Keep the most confident (then longest) reading of each stretch of text, in text order."""
    chosen: list[CoordinateMatch] = []  # disjoint, kept in text order
    starts: list[int] = []
    for c in sorted(candidates, key=lambda c: (-c.confidence, c.start - c.end, c.start)):
        i = bisect_left(starts, c.start)
        if (i > 0 and chosen[i - 1].end > c.start) or (i < len(chosen) and chosen[i].start < c.end):
            continue
        chosen.insert(i, c)
        starts.insert(i, c.start)
    return chosen


def find_coordinates(text: str, default_utm_zone: str | None = None) -> list[CoordinateMatch]:
    """All coordinates in ``text`` as WGS84 (lat, lon), sorted by position, without overlaps.

    Args:
        text: free text, e.g. a PDF page's text layer or OCR output, Portuguese or English.
        default_utm_zone: the document's UTM zone ("25S", "23 K", "24 sul"), for labelled
            easting/northing pairs whose zone is stated somewhere the caller saw but ``text`` does not.
            Its hemisphere also completes a zone the text states without one ("Fuso 23"). A zone
            number alone ("25") lends only its number.

    Raises:
        ValueError: ``default_utm_zone`` is given but is not a UTM zone.
    """
    default = _parse_utm_zone(default_utm_zone) if default_utm_zone else None
    candidates = [c for extract in _DEGREE_EXTRACTORS for c in extract(text)]
    candidates += [*_utm_zoned(text, default), *_utm_labelled(text, default)]
    return _non_overlapping(candidates)
