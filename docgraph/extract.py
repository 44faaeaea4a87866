"""Offline entity extraction from chunk text: what code finds reliably, each mention with
its span in the chunk (the caller adds doc_id, page_no, chunk_no).

Kinds (the extractors kept after scripts/eval_entities.py, see eval/docgraph/):
- org / programme: an acronym defined next to its expansion ("Instituto Brasileiro do Meio
  Ambiente (IBAMA)", "IBAMA (Instituto ...)", "MINISTÉRIO DO MEIO AMBIENTE - MMA"), checked
  by matching the acronym's letters in the expansion (Schwartz & Hearst), classed by the
  expansion's head word; standalone acronyms defined elsewhere in the tenant's corpus;
  company names ending in a legal suffix ("JUMA PARTICIPAÇÕES S.A.", "Acme Ltd.").
- law: "Lei nº 9.605/1998", "Resolução CONAMA nº 274/2000", "Decreto, 6514/2008".
- code: CNPJ, CPF, federal process numbers (NUP), ISBN.
- date, amount: ingest/values.py's dates, amounts with a currency.
- place: the gazetteer tags ingestion stored in the chunk's payload (not re-detected here).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from geo.folding import fold, fold_words
from ingest.values import find_dates, parse_number

# kinds that are named things (graph nodes with relations); dates and amounts are attributes
# (person, product, event: only the LLM extractor finds them, docgraph/llm_extract.py)
NAMED_KINDS = frozenset({"org", "programme", "law", "code", "place", "person", "product", "event"})


@dataclass(frozen=True)
class Mention:
    """One entity mention in a chunk's text."""

    kind: str  # org, programme, law, code, date, amount, place
    text: str  # as written
    key: str  # what resolution compares: a folded name, a normalised code or law
    start: int  # span in the chunk text ([-1, -1] when the text does not carry it)
    end: int
    acronym: str | None = None  # org/programme: its acronym, when known
    expansion: str | None = None  # org/programme: its expansion, when defined here
    rule: str = ""  # which extractor found it


_STOP = frozenset(
    "de do da dos das e em para por a o as os of the and for in on to at du des la le les et y del".split()
)
_ORG_HEADS = (
    "instituto ministerio secretaria conselho agencia diretoria coordenacao coordenadoria fundacao "
    "universidade superintendencia departamento empresa companhia associacao federacao confederacao "
    "sindicato tribunal camara assembleia prefeitura governo orgao comissao comite centro servico banco "
    "organizacao organisation organization institute ministry agency department council commission "
    "committee bureau office center centre association federation union university company corporation "
    "authority board administration foundation bank service society network alliance group fund fundo "
    "observatorio laboratorio nucleo gerencia divisao policia police court parliament"
).split()
_PROGRAMME_HEADS = (
    "programa programme program projeto project plano plan iniciativa initiative estrategia strategy "
    "campanha campaign sistema"
).split()
_WORD = r"[A-Za-zÀ-ÖØ-öø-ÿ][\w'’-]*"
_ACRONYM = r"[A-Z][A-Z0-9&]{1,9}s?"
_UPPER_ACRONYM_RE = re.compile(rf"^(?=.*[A-Z].*[A-Z]){_ACRONYM}$")
# "Long Form (ACR)"; "ACR (Long Form)"; "LONG FORM - ACR" at a line end (letterheads)
# the words of a long form may run over a line break and carry commas ("Gastroenterology, Hepatology")
_PAREN_AFTER = re.compile(
    rf"((?:{_WORD},?\s+){{1,11}}{_WORD})\s*\((\s*(?:{_ACRONYM}|[A-Z][a-z]{{3,8}})\s*)\)"
)
_PAREN_BEFORE = re.compile(rf"\b({_ACRONYM})\s*\(((?:{_WORD},?\s+){{1,11}}{_WORD})\)")
_DASH_AFTER = re.compile(
    rf"((?:{_WORD}[ \t]+){{1,11}}{_WORD})[ \t]+[-–—][ \t]+({_ACRONYM})(?:/{_ACRONYM})*[ \t]*$", re.MULTILINE
)
_COMPANY = re.compile(
    r"\b((?:[A-ZÀ-Ö][\w&.'’-]*[ \t]+){1,6}?)"
    r"(LTDA\.?|Ltda\.?|S\.A\.|S/A|EIRELI|Inc\.|Ltd\.|LLC|Corp\.|GmbH|PLC|plc)(?!\w)"
)
_LAW = re.compile(
    r"\b((?i:lei(?:\s+complementar|\s+estadual|\s+federal|\s+municipal)?|decreto(?:-lei)?|resolu[cç][aãâ]o|res\."
    r"|portaria|instru[cç][aã]o\s+normativa|medida\s+provis[oó]ria|delibera[cç][aã]o|law|decree|directive"
    r"|regulation))[ \t]*,?\s*(?:(?!N[ºo°r]\b)([A-Z][A-Za-z]{1,9})\s+)?"
    r"(?i:n[º°o]\.?|n\.[º°]|número|number)?\s*"
    r"(\d{1,3}(?:\.\d{3})+|\d+)(?:\s*/\s*(\d{4}|\d{2})(?![\d/])"
    r"|,?\s+(?i:de)\s+(?:\d{1,2}º?\s+(?i:de)\s+[A-Za-zç]+\s+(?i:de)\s+)?(\d{4})\b)",
)
_LAW_CANON = {
    "res.": "Resolução",
    "lei": "Lei",
    "decreto": "Decreto",
    "portaria": "Portaria",
    "resolucao": "Resolução",
    "instrucao normativa": "Instrução Normativa",
    "medida provisoria": "Medida Provisória",
    "deliberacao": "Deliberação",
}
_CODES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cnpj", re.compile(r"(?<![\d./-])\d{2}\.\d{3}\.\d{3}/\d{4}-\d{2}(?![\d-])")),
    ("cpf", re.compile(r"(?<![\d./-])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\d-])")),
    ("processo", re.compile(r"(?<![\d./-])\d{5}\.\d{6}/\d{4}-\d{2}(?![\d-])")),
    ("isbn", re.compile(r"(?<=ISBN)[ :]*((?:97[89][ -]?)?\d{1,5}[ -]\d{1,7}[ -]\d{1,7}[ -][\dX])\b")),
)
_AMOUNT = re.compile(
    r"(R\$|US\$|U\$|€|£|\$|\bEUR|\bUSD|\bBRL|\bRs\.?)[ \t]?"
    r"(\d{1,3}(?:[.,\s]\d{3})*(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?)"
    r"(?:[ \t]*(mil|milhões|milhão|bilhões|bilhão|million|billion|thousand|bn|mn)\b)?"
)
_SCALE = {"mil": 1e3, "thousand": 1e3, "milhão": 1e6, "milhões": 1e6, "million": 1e6, "mn": 1e6}
_SCALE |= {"bilhão": 1e9, "bilhões": 1e9, "billion": 1e9, "bn": 1e9}


def _words(text: str) -> list[str]:
    return re.findall(_WORD, text)


def _acronym_fits(acronym: str, long_form: str) -> str | None:
    """The part of `long_form` the acronym abbreviates (Schwartz & Hearst: its letters in
    order from the right, the first at a word start), or None when it does not fit."""
    short = [
        c
        for c in fold(acronym.rstrip("s") if acronym[-1] == "s" and len(acronym) > 2 else acronym)
        if c.isalnum()
    ]
    if len(short) < 2:
        return None
    words = _words(long_form)
    limit = min(len(short) + 5, len(short) * 2)
    words = words[-limit:] if len(words) > limit else words
    text = fold(" ".join(words))
    s, li = len(short) - 1, len(text) - 1
    while s >= 0:
        c = short[s]
        while li >= 0 and (text[li] != c or (s == 0 and li > 0 and text[li - 1].isalnum())):
            li -= 1
        if li < 0:
            return None
        s -= 1
        li -= 1
    start = li + 1
    found = " ".join(words)[start:]
    content = [w for w in _words(found) if fold(w) not in _STOP]
    # every content word of the long form gives a letter (or starts with the next one): no long tails
    if not content or len(content) > limit or fold(content[0])[0] != short[0]:
        return None
    return found.strip()


def _entity_kind(long_form: str) -> str | None:
    """org or programme by the long form's first content word, else None (a term)."""
    words = [fold(w) for w in _words(long_form) if fold(w) not in _STOP]
    if not words:
        return None
    if words[0] in _ORG_HEADS or words[-1] in _ORG_HEADS:  # the head: first in pt, last in en
        return "org"
    if any(w in _PROGRAMME_HEADS for w in words):
        return "programme"
    if any(w in _ORG_HEADS for w in words):
        return "org"
    return None


def acronym_key(acronym: str) -> str:
    """The key a defined acronym is found by: folded, without a plural s ("DAAs" -> "daa")."""
    a = acronym.strip()
    if len(a) > 2 and a.endswith("s") and a[:-1].isupper():
        a = a[:-1]
    return fold(a)


def _definition(
    kind: str, text: str, start: int, end: int, acronym: str, long_form: str, rule: str
) -> Mention:
    return Mention(kind, text, acronym_key(acronym), start, end, acronym.strip(), fold_words(long_form), rule)


def find_definitions(text: str) -> list[Mention]:
    """Organisations and programmes defined with their acronym in `text`."""
    found: list[Mention] = []
    for m in _PAREN_AFTER.finditer(text):
        acronym = m[2].strip()
        if (long_form := _acronym_fits(acronym, m[1])) and (kind := _entity_kind(long_form)):
            start = m.start(1) + m[1].rfind(long_form)
            found.append(
                _definition(kind, text[start : m.end()], start, m.end(), acronym, long_form, "acronym(long)")
            )
    for m in _PAREN_BEFORE.finditer(text):
        long_form = m[2]
        if _acronym_fits(m[1], long_form) == long_form.strip() and (kind := _entity_kind(long_form)):
            found.append(_definition(kind, m[0], m.start(), m.end(), m[1], long_form, "acronym(short)"))
    for m in _DASH_AFTER.finditer(text):
        acronym = m[2]
        if (long_form := _acronym_fits(acronym, m[1])) and (kind := _entity_kind(long_form)):
            start = m.start(1) + m[1].rfind(long_form)
            found.append(
                _definition(kind, text[start : m.end()], start, m.end(), acronym, long_form, "acronym(dash)")
            )
    return found


def find_known_expansions(
    text: str, expansions: Mapping[str, tuple[str, str]], taken: list[tuple[int, int]]
) -> list[Mention]:
    """Expansions of acronyms defined in the corpus written out alone ("World Health
    Organization" once "World Health Organization (WHO)" was seen); `expansions`: folded
    long form -> (acronym key, kind)."""
    found: list[Mention] = []
    folded = fold(text)
    for long_form, (key, kind) in expansions.items():
        pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in long_form.split()) + r"(?!\w)"
        for m in re.finditer(pattern, folded):
            if not any(s < m.end() and m.start() < e for s, e in taken):
                written = text[m.start() : m.end()]
                found.append(
                    Mention(
                        kind, written, key, m.start(), m.end(), acronym=key.upper(), rule="expansion(known)"
                    )
                )
    return found


def find_known_acronyms(text: str, known: Mapping[str, str], taken: list[tuple[int, int]]) -> list[Mention]:
    """Standalone uses of acronyms defined somewhere in the corpus (`known`: acronym key ->
    kind): "IBAMA", also "Ibama"; not inside a span already taken."""
    found: list[Mention] = []
    for m in re.finditer(r"\b[A-Z][A-Za-z0-9&]{1,9}\b", text):
        token = m[0]
        key = acronym_key(token)
        if key not in known or any(s < m.end() and m.start() < e for s, e in taken):
            continue
        # the acronym as written (upper case), or capitalised when 4 letters or more ("Ibama")
        if not (token.isupper() or (len(token) >= 4 and token[1:].islower()) or token.rstrip("s").isupper()):
            continue
        found.append(
            Mention(known[key], token, key, m.start(), m.end(), acronym=token.upper(), rule="acronym(known)")
        )
    return found


def find_companies(text: str) -> list[Mention]:
    """Company names by their legal suffix: capitalised words then LTDA, S.A., Inc. ..."""
    found = []
    for m in _COMPANY.finditer(text):
        words = m[1].split()
        while words and fold(words[0]) in _STOP:
            words = words[1:]
        if not words:
            continue
        start = m.start(1) + m[1].find(words[0])
        name = text[start : m.end()]
        found.append(Mention("org", name, fold_words(name.replace(".", " ")), start, m.end(), rule="company"))
    return found


def law_key(kind: str, issuer: str, number: str, year: str) -> tuple[str, str]:
    """(display name, key) of a law reference: "Lei 9605/1998", "Resolução CONAMA 274/2000"."""
    folded = fold_words(kind)
    canon = _LAW_CANON.get(folded, " ".join(w.capitalize() if w.isupper() else w for w in kind.split()))
    full_year = year if len(year) == 4 else ("19" if int(year) > 30 else "20") + year
    digits = number.replace(".", "")
    issuer = issuer.strip()
    name = " ".join(
        p for p in (canon, issuer.upper() if issuer.isupper() or len(issuer) <= 6 else issuer) if p
    )
    name = f"{name} {digits}/{full_year}"
    return name, fold_words(name)


def find_laws(text: str) -> list[Mention]:
    found = []
    for m in _LAW.finditer(text):
        name, key = law_key(m[1], m[2] or "", m[3], m[4] or m[5])
        found.append(Mention("law", m[0], key, m.start(), m.end(), expansion=name, rule="law"))
    return found


def find_codes(text: str) -> list[Mention]:
    found = []
    for label, pattern in _CODES:
        for m in pattern.finditer(text):
            group = 1 if pattern.groups else 0
            code = m[group]
            key = f"{label}:{re.sub(r'[^0-9X]', '', code)}"
            found.append(
                Mention("code", code, key, m.start(group), m.end(group), expansion=label, rule=label)
            )
    return found


def find_dates_and_amounts(text: str) -> list[Mention]:
    found = []
    for start, end, value in find_dates(text):
        iso = f"{value.year:04d}-{value.month:02d}" + (f"-{value.day:02d}" if value.day else "")
        found.append(Mention("date", text[start:end], iso, start, end, rule="date"))
    for m in _AMOUNT.finditer(text):
        number = parse_number(m[2])
        if number is None:
            continue
        value = number * _SCALE.get((m[3] or "").lower(), 1.0)
        currency = m[1].replace("U$", "US$").rstrip(".")
        found.append(Mention("amount", m[0], f"{currency} {value:.2f}", m.start(), m.end(), rule="amount"))
    return found


def place_mentions(text: str, geo_tags: Iterable[Mapping[str, Any]]) -> list[Mention]:
    """The gazetteer places ingestion tagged in the chunk (its payload's geo_tags); the span
    where the label is found in the text, else (-1, -1)."""
    found, seen = [], set()
    folded = fold(text)
    for tag in geo_tags:
        if tag.get("source") != "gazetteer" or not tag.get("label"):
            continue
        key = f"place:{tag.get('place_id') or fold_words(str(tag['label']))}"
        if key in seen:
            continue
        seen.add(key)
        label = str(tag["label"])
        at = folded.find(fold(label))
        span = (at, at + len(label)) if at >= 0 else (-1, -1)
        found.append(Mention("place", label, key, *span, expansion=str(tag["label"]), rule="gazetteer"))
    return found


def _overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(s < span[1] and span[0] < e for s, e in spans)


def extract(
    text: str,
    known_acronyms: Mapping[str, str] | None = None,
    geo_tags: Iterable[Mapping[str, Any]] = (),
    known_expansions: Mapping[str, tuple[str, str]] | None = None,
) -> list[Mention]:
    """Every mention in one chunk, in text order; a span found by two extractors is kept
    once (definitions first, then laws, codes, companies, known expansions and acronyms,
    dates, amounts). `known_acronyms`: acronym key -> kind, `known_expansions`: folded long
    form -> (acronym key, kind), both from the tenant's corpus."""
    kept: list[Mention] = []
    taken: list[tuple[int, int]] = []
    laws: list[tuple[int, int]] = []
    for group in (find_definitions(text), find_laws(text), find_codes(text), find_companies(text)):
        for m in group:
            if not _overlaps((m.start, m.end), taken):
                kept.append(m)
                taken.append((m.start, m.end))
                if m.kind == "law":
                    laws.append((m.start, m.end))
    taken_names = [span for span in taken if span not in laws]  # "Ibama" inside a law is still Ibama
    known = dict(known_acronyms or {})
    known.update({m.key: m.kind for m in kept if m.acronym})
    expansions = dict(known_expansions or {})
    expansions.update({m.expansion: (m.key, m.kind) for m in kept if m.acronym and m.expansion})
    for m in find_known_expansions(text, expansions, taken):
        kept.append(m)
        taken.append((m.start, m.end))
        taken_names.append((m.start, m.end))
    for m in find_known_acronyms(text, known, taken_names):
        kept.append(m)
        taken.append((m.start, m.end))
    for m in find_dates_and_amounts(text):
        if not _overlaps((m.start, m.end), taken):
            kept.append(m)
            taken.append((m.start, m.end))
    kept.extend(place_mentions(text, geo_tags))
    return sorted(kept, key=lambda m: (m.start, m.end))


# what a text says between two organisations when the first answers to the second:
# "IBAMA, autarquia federal vinculada ao MMA", "the ITSO, a unit of IBM"
_SUBORDINATE = re.compile(
    r"^\s*,?\s*(?:(?:o|a|um|uma)\s+)?(?:órgão|orgao|autarquia|entidade|fundação|fundacao|empresa pública"
    r"|agência|agencia|secretaria|departamento)?(?:\s+(?:federal|estadual|municipal))?\s*vinculad[oa]\s+"
    r"(?:ao|à|a)\s*(?:o\s+)?$"
    r"|^\s*,?\s*(?:an?\s+|the\s+)?(?:agency|body|office|department|unit|division|part|arm)\s+of\s+(?:the\s+)?$",
    re.IGNORECASE,
)
RELATION_INVERSE = {"subordinate-to": "superior-of"}  # a typed relation read from its target


def typed_relations(text: str, mentions: list[Mention]) -> list[tuple[int, int, str]]:
    """(i, j, type) for consecutive organisations of `mentions` (in text order) that the
    words between them relate: "subordinate-to" (j answers for i)."""
    orgs = [i for i, m in enumerate(mentions) if m.kind in ("org", "programme") and m.start >= 0]
    found = []
    for a, b in zip(orgs, orgs[1:], strict=False):
        between = text[mentions[a].end : mentions[b].start]
        if len(between) <= 60 and _SUBORDINATE.match(between):
            found.append((a, b, "subordinate-to"))
    return found


def is_acronym(token: str) -> bool:
    """Whether a token looks like an acronym (two capitals or more)."""
    return bool(_UPPER_ACRONYM_RE.match(token))
