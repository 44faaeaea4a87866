"""Values as documents write them: numbers with any thousands/decimal separator, dates
and periods in Portuguese, English, French and Spanish.

One reading everywhere: table cells and dataset attributes are typed with it at
ingestion, and the answerers compare a question's terms with the evidence through it, so
"18 de agosto de 2017", "18-ago-17", "18/08/2017" and "August 18, 2017" are one date,
and "4.738.950", "4,738,950" and "4 738 950" one number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from geo.folding import fold

# Month names and abbreviations, folded (pt, en, fr, es). "mai" is pt/fr May, "dez" pt Dec.
_MONTH_NAMES: dict[int, tuple[str, ...]] = {
    1: ("janeiro", "january", "janvier", "enero", "jan", "janv", "ene"),
    2: ("fevereiro", "february", "fevrier", "febrero", "fev", "feb", "fevr", "fev"),
    3: ("marco", "march", "mars", "marzo", "mar"),
    4: ("abril", "april", "avril", "abr", "apr", "avr"),
    5: ("maio", "may", "mai", "mayo"),
    6: ("junho", "june", "juin", "junio", "jun"),
    7: ("julho", "july", "juillet", "julio", "jul", "juil"),
    8: ("agosto", "august", "aout", "ago", "aug"),
    9: ("setembro", "september", "septembre", "septiembre", "set", "sep", "sept"),
    10: ("outubro", "october", "octobre", "octubre", "out", "oct"),
    11: ("novembro", "november", "novembre", "noviembre", "nov"),
    12: ("dezembro", "december", "decembre", "diciembre", "dez", "dec", "dic"),
}
MONTHS: dict[str, int] = {name: month for month, names in _MONTH_NAMES.items() for name in names}


def month_names(month: int) -> tuple[str, ...]:
    """A month's names and abbreviations in the languages read (7: "julho", "july", "jul", ...)."""
    return _MONTH_NAMES.get(month, ())


# Full names only: safe to read as a month outside a date ("ago", "mar", "set" are words).
_FULL_MONTHS: dict[str, int] = {
    name: month
    for name, month in MONTHS.items()
    if len(name) > 4 or name in ("maio", "may", "june", "july", "juin", "mars", "aout")
}

_MONTH_RE = "|".join(sorted(map(re.escape, MONTHS), key=len, reverse=True))
_FULL_MONTH_RE = "|".join(sorted(map(re.escape, _FULL_MONTHS), key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th|er|o|º|°)?"

# On folded text (lower case, no accents).
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_NUMERIC = re.compile(r"\b(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})\b")
_DAY_MON_YEAR = re.compile(
    rf"\b(\d{{1,2}}){_ORD}(?:\s+de|\s*[-/.]|\s)\s*({_MONTH_RE})\.?(?:\s+de|\s*[-/.,]|\s)\s*(\d{{4}}|\d{{2}})\b"
)
_MON_DAY_YEAR = re.compile(rf"\b({_FULL_MONTH_RE})\.?\s+(\d{{1,2}}){_ORD},?\s+(\d{{4}})\b")
# "du 1er juin au 10 juillet 2016", "from 1 June to 10 July 2016": the first takes the second's year
_DAY_MON_RANGE = re.compile(
    rf"\b(\d{{1,2}}){_ORD}(?:\s+de)?\s+({_FULL_MONTH_RE})\.?\s+(?:au|to|a|ate|until|till|-|–)\s+"
    rf"(?:(?:le|o|the)\s+)?\d{{1,2}}{_ORD}(?:\s+de)?\s+(?:{_MONTH_RE})\.?(?:\s+de|\s*[-/.,]|\s)\s*(\d{{4}})\b"
)
_MON_YEAR = re.compile(rf"\b({_FULL_MONTH_RE})\.?(?:\s+de|\s*[-/]|\s)\s*(\d{{4}})\b")
_PERIOD = re.compile(r"\b((?:1[89]|20)\d{2})\s*(?:-|–|—|/|\s+a\s+|\s+to\s+|\s+ate\s+)\s*(\d{4}|\d{2})\b")
_NUMBER = re.compile(r"(?<![\w.,])[-−]?\d(?:[\d.,]*\d)?(?:(?:[ \u00a0\u202f])\d{3}(?![\d]))*(?![\w])")
_WORD = re.compile(r"[\w][\w'-]*[\w]|\w", re.UNICODE)
_CODE_WORD = re.compile(r"(?=.*[^\W\d_])(?=.*\d)")  # a word with a letter and a digit: "est-07", "q3"


@dataclass(frozen=True)
class DateValue:
    """A calendar date; `day` None for a month ("agosto de 2017")."""

    year: int
    month: int
    day: int | None = None

    def token(self) -> str:
        return f"{self.year:04d}-{self.month:02d}" + (f"-{self.day:02d}" if self.day else "")


def _year(text: str) -> int:
    year = int(text)
    return year + (2000 if year < 50 else 1900) if len(text) == 2 else year


def _valid(year: int, month: int, day: int | None) -> DateValue | None:
    if not 1 <= month <= 12 or not 1000 <= year <= 2999 or (day is not None and not 1 <= day <= 31):
        return None
    return DateValue(year, month, day)


def find_dates(text: str) -> list[tuple[int, int, DateValue]]:
    """Every date in `text`: (start, end, value), spans in `text` (folding keeps lengths
    for the scripts documents use). Numeric dates read day first (dd/mm/yyyy), unless
    only month-first is valid."""
    folded = fold(text)
    found: list[tuple[int, int, DateValue]] = []
    taken: list[tuple[int, int]] = []

    def add(match: re.Match[str], value: DateValue | None) -> None:
        span = match.span()
        if value and not any(span[0] < end and start < span[1] for start, end in taken):
            taken.append(span)
            found.append((span[0], span[1], value))

    for m in _ISO.finditer(folded):
        add(m, _valid(int(m[1]), int(m[2]), int(m[3])))
    for m in _DAY_MON_YEAR.finditer(folded):
        add(m, _valid(_year(m[3]), MONTHS[m[2]], int(m[1])))
    for m in _DAY_MON_RANGE.finditer(folded):
        span = (m.start(), m.end(2))
        first = _valid(int(m[3]), _FULL_MONTHS[m[2]], int(m[1]))
        if first and not any(span[0] < end and start < span[1] for start, end in taken):
            taken.append(span)
            found.append((span[0], span[1], first))
    for m in _MON_DAY_YEAR.finditer(folded):
        add(m, _valid(int(m[3]), _FULL_MONTHS[m[1]], int(m[2])))
    for m in _NUMERIC.finditer(folded):
        first, second, year = int(m[1]), int(m[2]), _year(m[3])
        add(m, _valid(year, second, first) or _valid(year, first, second))
    for m in _MON_YEAR.finditer(folded):
        add(m, _valid(int(m[2]), _FULL_MONTHS[m[1]], None))
    return sorted(found, key=lambda item: item[0])


def parse_date(text: str) -> DateValue | None:
    """The date `text` is (the whole of it, give or take spaces and a full stop), or None."""
    stripped = text.strip().rstrip(".")
    dates = find_dates(stripped)
    if len(dates) == 1 and dates[0][0] == 0 and dates[0][1] == len(stripped):
        return dates[0][2]
    return None


def parse_number(text: str) -> float | None:
    """The number `text` is ("4.738.950", "99,62", "2 753", "-0.47", "R$ 39.000,00",
    "64,53%"), or None. With both separators the last one is the decimal mark; one kind
    repeated is thousands; a single one followed by exactly three digits is thousands
    ("4.738", "1,500") unless the integer part is 0."""
    stripped = text.strip().replace("\u2212", "-")
    stripped = re.sub(r"^(?:r\$|us\$|\$|€|£|rs\.?)\s*", "", stripped, flags=re.IGNORECASE)
    stripped = re.sub(r"\s*(?:%|‰)$", "", stripped)
    compact = re.sub(r"(?<=\d)[ \u00a0\u202f](?=\d{3}\b)", "", stripped)
    if not re.fullmatch(r"[-+]?\d[\d.,]*", compact) or compact[-1] in ".,":
        return None
    sign = -1.0 if compact.startswith("-") else 1.0
    digits = compact.lstrip("+-")
    dots, commas = digits.count("."), digits.count(",")
    if dots and commas:
        decimal = "." if digits.rfind(".") > digits.rfind(",") else ","
    elif dots + commas == 0:
        decimal = None
    else:
        mark = "." if dots else ","
        head, _, tail = digits.rpartition(mark)
        groups = digits.split(mark)
        if len(groups) > 2:
            if not all(len(g) == 3 for g in groups[1:]):
                return None
            decimal = None
        else:
            decimal = None if len(tail) == 3 and head not in ("0", "") else mark
    thousands = {".": ",", ",": ".", None: ".,"}[decimal]
    body = digits
    for sep in thousands:
        if sep in body:
            if not all(len(g) == 3 for g in body.split(decimal or "\0")[0].split(sep)[1:]):
                return None
            body = body.replace(sep, "")
    if decimal:
        body = body.replace(decimal, ".")
    try:
        return sign * float(body)
    except ValueError:
        return None


def find_numbers(text: str) -> list[tuple[int, int, float]]:
    """Every number in `text`: (start, end, value)."""
    out = []
    for m in _NUMBER.finditer(text):
        value = parse_number(m[0])
        if value is None and any(space in m[0] for space in " \u00a0\u202f"):
            # groups that were not one number ("5 196 47"): read the pieces
            for piece in re.finditer(r"[-−]?\d(?:[\d.,]*\d)?", m[0]):
                part = parse_number(piece[0])
                if part is not None:
                    out.append((m.start() + piece.start(), m.start() + piece.end(), part))
            continue
        if value is not None:
            out.append((m.start(), m.end(), value))
    return out


# a decade: "the 1970s", "década de 2000", "anos 1990", "les années 1980" ("the 1900s" is
# a century: skipped)
_DECADE = re.compile(
    r"\b(1[5-9]\d0|20\d0)['’]?s\b|\b(?:decadas? de|decade de|decennie|anos|annees)\s+(1[5-9]\d0|20\d0)\b"
)


def find_periods(text: str) -> list[tuple[int, int, tuple[int, int]]]:
    """Year ranges: "2001-2011", "2001-11", "2001 a 2011", "1951–61" -> (2001, 2011); a
    decade: "1970s", "década de 2000" -> (1970, 1979), (2000, 2009)."""
    out = []
    folded = fold(text)
    for m in _PERIOD.finditer(folded):
        start = int(m[1])
        end = int(m[2]) if len(m[2]) == 4 else start // 100 * 100 + int(m[2])
        if len(m[2]) == 2 and end < start:
            end += 100
        if start < end <= start + 100:
            out.append((m.start(), m.end(), (start, end)))
    for m in _DECADE.finditer(folded):
        first = int(m[1] or m[2])
        century = first % 100 == 0 and first < 2000 and m[1] is not None
        if not century and not any(m.start() < e and s < m.end() for s, e, _ in out):
            out.append((m.start(), m.end(), (first, first + 9)))
    return sorted(out)


# A quantity's unit as bands write it, one spelling each (folded): "22 kg", "12 anos", "6 months"
_BAND_UNITS = {
    "kg": "kg", "g": "g", "mg": "mg", "cm": "cm", "m": "m", "km": "km", "%": "%",
    "year": "year", "years": "year", "ano": "year", "anos": "year", "an": "year", "ans": "year",
    "month": "month", "months": "month", "mes": "month", "meses": "month", "mois": "month",
    "week": "week", "weeks": "week", "semana": "week", "semanas": "week",
    "semaine": "week", "semaines": "week",
}  # fmt: skip
_UNIT = r"(kg|g|mg|cm|m|km|%|years?|anos?|ans?|months?|mes|meses|mois|weeks?|semanas?|semaines?)(?![\w])"
_AMOUNT = r"(\d+(?:[.,]\d+)?)"
# "20–<30 kg", "20-29 kg", "12 to 17 years", "3 a 11 anos"; "<20 kg"; ">=45 kg", "≥ 45 kg"
_BAND = re.compile(
    rf"(?<![\d.,]){_AMOUNT}\s*(?:[-–—]|to|a|à)\s*([<≤])?\s*{_AMOUNT}\s*{_UNIT}"
    rf"|(?<![\d.,\w])([<≤]|[>≥]=?|>=)\s*{_AMOUNT}\s*{_UNIT}"
)
_QUANTITY = re.compile(rf"(?<![\d.,]){_AMOUNT}\s*{_UNIT}")


def find_bands(text: str) -> list[tuple[float, float, bool, str]]:
    """The ranges of a quantity the text writes, as a dosing table's rows do: (low, high,
    high included, unit); "20–<30 kg" -> (20, 30, False, "kg"), "12 to 17 years" -> (12, 17,
    True, "year"), "<20 kg" -> (-inf, 20, False, "kg"), "≥45 kg" -> (45, inf, True, "kg")."""
    out = []
    for m in _BAND.finditer(fold(text)):
        if m[1] is not None:
            low, high = parse_number(m[1]), parse_number(m[3])
            if low is not None and high is not None and low < high:
                out.append((low, high, m[2] is None, _BAND_UNITS[m[4]]))
        else:
            bound = parse_number(m[6])
            if bound is None:
                continue
            if m[5] in ("<", "≤"):
                out.append((float("-inf"), bound, m[5] == "≤", _BAND_UNITS[m[7]]))
            else:
                out.append((bound, float("inf"), True, _BAND_UNITS[m[7]]))
    return out


def quantity_of(text: str, start: int, end: int) -> str | None:
    """The unit written right after the number at text[start:end] ("22 kg" -> "kg"), or None."""
    m = _QUANTITY.match(fold(text), start)
    return _BAND_UNITS[m[2]] if m and m.end(1) == end else None


def in_band(value: float, unit: str, band: tuple[float, float, bool, str]) -> bool:
    low, high, high_included, band_unit = band
    return unit == band_unit and low <= value and (value < high or (high_included and value == high))


def number_token(value: float) -> str:
    """One spelling per number: 4738950.0 -> "4738950", 99.620 -> "99.62"."""
    text = f"{round(value, 6):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def value_tokens(text: str) -> set[str]:
    """The text's words (folded) and its values spelled one way: "num:4738950",
    "date:2017-08-18" (a full date also gives its month "date:2017-08"), "month:8",
    "period:2001-2011". Two texts that state the same value share its token."""
    folded = fold(text)
    tokens = set(_WORD.findall(folded))
    for _, _, value in find_numbers(text):
        tokens.add(f"num:{number_token(value)}")
    for _, _, date in find_dates(text):
        tokens.update(
            {f"date:{date.token()}", f"date:{date.year:04d}-{date.month:02d}", f"month:{date.month}"}
        )
        tokens.add(f"num:{date.year}")
        if date.day:
            tokens.add(f"num:{date.day}")
    for _, _, (start, end) in find_periods(text):
        tokens.add(f"period:{start}-{end}")
    for word in _WORD.findall(folded):
        if word in _FULL_MONTHS:
            tokens.add(f"month:{_FULL_MONTHS[word]}")
    return tokens


def term_tokens(term: str) -> set[str]:
    """The tokens any one of which stands for `term` in evidence: a month name stands
    for its month in every language, a number or date for its value, a word for itself."""
    folded = fold(term).strip(" .,;:()")
    if folded in _FULL_MONTHS:
        return {f"month:{_FULL_MONTHS[folded]}", folded}
    tokens = {t for t in value_tokens(term) if ":" in t}
    return tokens or {folded}


# A capital letter standing alone as a name: after a word ("Product C", "bar D", "classe A")
# or as the whole text (a chart's category label "D"); a sentence's "A casa" is not one.
_LETTER_NAME = re.compile(r"(?<=[^\W\d_] )([A-Z])(?=[\s,.;:?!)]|$)|^\s*([A-Za-z])\s*$")  # or a label "f"
# ...or a small letter after a noun naming a part of a chart, ending the phrase ("le secteur
# f ?", "a fatia c e a f"), not a word ("barre a la plus grande", "as colunas a seguir") nor
# the start of a range ("as fatias a a f")
_PART_LETTER = re.compile(
    r"\b(?:slices?|secteurs?|fatias?|bars?|barras?|barres?|categor(?:y|ies|ia|ias|ie)|series|serie"
    r"|groups?|grupos?|groupes?|columns?|colunas?|colonnes?)\s+([a-z])"
    r"(?=\s*(?:[?,.;:!)]|$)|\s+(?:and|e|et|ou|or)\s+(?!(?:a|as|o|os|la|le|les|the)\b))"
)


def split_tokens(text: str) -> tuple[set[str], set[str]]:
    """(value tokens, words) of `text`, the words read outside its values' spans: a table
    label "18-ago-17" is one date (no stray words "ago", "17"), "1951-1961" one period
    (its years kept as "num:" tokens, so "1961" still meets it), "Área 16/17 (ha)" the
    numbers 16 and 17 and the words "area", "ha". Hyphenated words give their parts
    ("medio-norte" -> "medio", "norte"): both spellings of a name meet. A word with letters
    and digits is also a code ("EST-07" -> "code:est-07", "Q3" -> "code:q3")."""
    folded = fold(text)
    values: set[str] = set()
    taken: list[tuple[int, int]] = []
    for start, end, date in find_dates(text):
        taken.append((start, end))
        values.update(
            {f"date:{date.token()}", f"date:{date.year:04d}-{date.month:02d}", f"month:{date.month}"}
        )
        values.add(f"num:{date.year}")
        if date.day:
            values.add(f"num:{date.day}")
    for start, end, (first, last) in find_periods(text):
        if not any(start < e and s < end for s, e in taken):
            taken.append((start, end))
            values.update({f"period:{first}-{last}", f"num:{first}", f"num:{last}"})
    times = list(taken)  # dates and periods: their words are not codes
    for start, end, number in find_numbers(text):
        if not any(start < e and s < end for s, e in taken):
            taken.append((start, end))
            values.add(f"num:{number_token(number)}")
    words: set[str] = set()
    for match in _WORD.finditer(folded):
        word = match[0]
        if _CODE_WORD.search(word) and not any(match.start() < e and s < match.end() for s, e in times):
            values.add(f"code:{word}")
        for part in re.finditer(r"[^-']+", word):
            start, end = match.start() + part.start(), match.start() + part.end()
            if any(start < e and s < end for s, e in taken):
                continue
            if len(part[0]) > 1 and not part[0].isdigit():  # "nagaland's" -> "nagaland"
                words.add(part[0])
                if part[0] in _FULL_MONTHS:
                    values.add(f"month:{_FULL_MONTHS[part[0]]}")
    values |= {f"letter:{(m[1] or m[2]).lower()}" for m in _LETTER_NAME.finditer(text)}
    values |= {f"letter:{m[1]}" for m in _PART_LETTER.finditer(folded)}
    return values, words
