"""The relevance gate: is the retrieved evidence strong enough to answer from?

It grades the evidence before anything is composed, by the extractive answerer or by an
LLM, and refuses honestly when a key term of the question (a name, a number, a date, a
code) occurs nowhere in the evidence pages, or when no sentence is close enough to the
question (embedding cosine, helped by the share of the question's BM25 stems and key terms
it contains). Key terms are compared as values (ingest/values.py): "31 December 2020"
matches "31 décembre 2020", "18 de agosto de 2017" matches "18-ago-17", "2753" matches
"2 753", and "Nouvelle-Aquitaine" matches "Nouvelle Aquitaine". The thresholds were
calibrated on labelled questions (scripts/calibrate_gate.py, docs/evaluation.md). The
sentences it scored are the extractive answerer's candidates.

Names and values are not the whole question: its subject is often a common noun. The gate
also refuses when the evidence pages lack most of the question's content words
(service/answer/content_words.py: "orçamento", "net income" on no page), when every
sentence about the subject dates itself to another year than the one asked ("Em 2024, o
Recife registrou precipitação..." for 2023), and, for a question asking for a value, it
scores only sentences that speak of the subject. A sentence holding every key term, part
of the subject and a value of the asked kind (a table row, a "label: value" line) passes
from a low cosine, since such lines embed far from any question.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

import numpy as np

from geo.country_names import demonym_country, demonyms, longest_country_words, same_country
from geo.folding import fold
from ingest.values import (
    MONTHS,
    find_bands,
    find_dates,
    find_numbers,
    find_periods,
    in_band,
    number_token,
    parse_number,
    quantity_of,
    value_tokens,
)
from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder
from service.answer.asked import asked_value, asks_identifier, given_values, identifier_frames, states_value
from service.answer.conditions import threshold_spans
from service.answer.content_words import (
    WordIndex,
    absent_content_words,
    question_content_words,
    translations,
    word_index,
)
from service.answer.sentences import EMBED_CHARS, in_encoder_language, sentences
from service.answer.types import Answer
from service.query.decompose import decompose
from service.query.translate import in_name, translate
from service.query.types import ChunkEvidence, PageEvidence, SearchResult

if TYPE_CHECKING:
    from service.answer.sentence_vectors import SentenceVectors

NOT_FOUND = {
    "en": "Not found in the indexed documents.",
    "pt": "Não encontrado nos documentos indexados.",
    "fr": "Introuvable dans les documents indexés.",
    "es": "No encontrado en los documentos indexados.",
}
_WORD = re.compile(r"[\w][\w./-]*[\w]|\w", re.UNICODE)
_HYPHENS = re.compile(r"[-‐‑‒–—_]+")
# Function words per language; a word shared by two languages counts for both.
_LANGUAGE_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the what which how when where who whom is was were are of in on did does do and to for many "
        "much according by with at".split()
    ),
    "pt": frozenset(
        "que qual quais quanto quantos quanta quantas onde como quando porque por são não em no na nos "
        "nas do da dos das de para um uma os as teve foi é mais segundo sobre houve era estava entre".split()
    ),
    "fr": frozenset(
        "quel quelle quels quelles combien où le la les des du est était au aux dans et pour une sur "
        "selon qui ont été en de".split()
    ),
    "es": frozenset(
        "cuál cuáles cuánto cuántos cuánta cuántas dónde cuándo el la los las del es fue en y con según "
        "hay qué de por para una sobre".split()
    ),
}
_LANGUAGE_ACCENTS = {"pt": "ãõâêô", "fr": "èàùûëîœ", "es": "ñ¿¡"}


# Organisations named by a different acronym per language: either spelling stands for the other.
_ALIASES: dict[str, tuple[str, ...]] = {
    "oms": ("who",),
    "who": ("oms",),
    "onu": ("un", "united nations"),
    "ue": ("eu", "european union"),
    "eu": ("ue", "uniao europeia"),
    "ocde": ("oecd",),
    "oecd": ("ocde",),
    "fmi": ("imf",),
    "imf": ("fmi",),
    "eua": ("usa", "us", "united states"),
    "iea": ("aie",),
    "aie": ("iea",),
    "otan": ("nato",),
    "nato": ("otan",),
    "omc": ("wto",),
    "wto": ("omc",),
    "oit": ("ilo",),
    "ilo": ("oit",),
    "pnud": ("undp",),
    "undp": ("pnud",),
    "pib": ("gdp",),
    "gdp": ("pib",),
}


@dataclass(frozen=True)
class KeyTerm:
    """A word the evidence must contain: a name, a code, or a value (number, date, period)."""

    text: str  # folded, hyphens as spaces: what a literal match looks for
    values: frozenset[str] = frozenset()  # value tokens (ingest/values.py) that also stand for it
    name: bool = True  # a name (not a number, date, period or code)


def name_forms(name: str) -> set[str]:
    """Other spellings of a name (folded) that stand for it: the organisation's acronym in
    another language (OMS = WHO), a country's name in another language (geo/country_names.py),
    a capitalised common word's translation ("Tabela 1" = "Table 1", "Produto D" = "Product D"),
    and a demonym's place ("Indian" = "India")."""
    forms = set(_ALIASES.get(name, ()))
    if country := demonym_country(name):  # "French" = "France" = "França"
        forms |= {country} | {form for form in same_country(country) if len(form) > 3}
    forms |= {form for form in same_country(name) if len(form) > 3}  # "Índia" = "Inde" = "India"
    # its people's adjective in any of the languages: "French" = "français", "France" = "francesa"
    forms |= {word for form in (name, *forms) for word in demonyms(form)} - {name}
    if " " not in name:
        forms |= translations(name) - {name}
        if len(name) > 5 and name.endswith("an"):
            forms.add(name[:-1])
    return forms


NAME_SKELETON_MIN = 5  # shorter names are compared as written only
# spellings that differ between the languages of one name: "Quioto" / "Kyoto", "Filadélfia" / "Philadelphia"
_NAME_SPELLINGS = (("qu", "k"), ("c", "k"), ("ph", "f"), ("th", "t"), ("y", "i"), ("w", "v"))


def name_skeleton(word: str) -> str:
    """A name's spelling with what tells its languages apart removed: letters that sound
    alike written one way, doubled letters single, a final vowel off ("Protocolo" and
    "Protocol" both read "protokol"). Names are compared whole: "Manipur" is not "manipulation"."""
    out = fold(word)
    for a, b in _NAME_SPELLINGS:
        out = out.replace(a, b)
    out = re.sub(r"(.)\1", r"\1", out)
    return out[:-1] if len(out) > 4 and out[-1] in "aeo" else out


def _spaced(text: str) -> str:
    """Folded, hyphens as spaces, one space between words: "Nouvelle-Aquitaine" = "nouvelle aquitaine"."""
    return " ".join(_HYPHENS.sub(" ", fold(text)).split())


def question_key_terms(question: str) -> list[KeyTerm]:
    """The question's key terms, in order: dates and periods (one term each), codes (a word
    with letters and digits), numbers, names (capitalised, not sentence-initial) and month names."""
    spans: list[tuple[int, int, KeyTerm]] = []

    def free(start: int, end: int) -> bool:
        return not any(start < e and s < end for s, e, _ in spans)

    for start, end, date in find_dates(question):
        spans.append(
            (start, end, KeyTerm(_spaced(question[start:end]), frozenset({f"date:{date.token()}"}), False))
        )
    for start, end, (first, last) in find_periods(question):
        if free(start, end):
            spans.append(
                (
                    start,
                    end,
                    KeyTerm(_spaced(question[start:end]), frozenset({f"period:{first}-{last}"}), False),
                )
            )
    words = list(_WORD.finditer(question))
    for m in words:
        word = m[0]
        digits = any(ch.isdigit() for ch in word)
        code = any(ch.isalpha() for ch in word) or (re.search(r"[/.-]", word) and parse_number(word) is None)
        if free(*m.span()) and digits and code:
            spans.append((*m.span(), KeyTerm(_spaced(word), frozenset(), False)))
    bounds = threshold_spans(question)  # "above 40,000,000": compared with, not looked up
    for start, end, value in find_numbers(question):
        if free(start, end) and not any(start < e and s < end for s, e in bounds):
            values = {f"num:{number_token(value)}"}
            if unit := quantity_of(question, start, end):  # "22 kg": also held by a band "20–<30 kg"
                values.add(f"qty:{number_token(value)}:{unit}")
            spans.append((start, end, KeyTerm(_spaced(question[start:end]), frozenset(values), False)))
    for start, end in _country_spans(question, words):  # "Estados Unidos": one name, not two
        if free(start, end):
            spans.append((start, end, KeyTerm(_spaced(question[start:end]), frozenset(), True)))
    names = [m[0] for m in words]
    for i, m in enumerate(words):
        word = m[0]
        if not free(*m.span()) or any(ch.isdigit() for ch in word):
            continue
        # a month's name, unless one word of a capitalised name ("Marco Zero": "marco" is "março")
        month = MONTHS.get(fold(word)) if len(word) > 4 and not in_name(names, i) else None
        if month:
            spans.append((*m.span(), KeyTerm(fold(word), frozenset({f"month:{month}"}), False)))
        elif i > 0 and word[0].isupper() and len(word) > 2 and not _sentence_start(question, m.start()):
            spans.append((*m.span(), KeyTerm(_spaced(word), frozenset(), True)))
    return [term for _, _, term in sorted(spans, key=lambda s: s[0])]


def _sentence_start(text: str, start: int) -> bool:
    """Whether the word at `start` opens a sentence of its own ("...in 2015? Give both
    totals."): capitalised for that, not a name."""
    before = text[:start].rstrip(" \t\"'“«(")
    if before.endswith(("?", "!")):
        return True
    # a full stop after a word in lower case or a number, not after "Dr.", "U.S.", "Av."
    return bool(re.search(r"(?:\b[a-zà-ÿ]{2,}|\d)\.$", before))


def _country_spans(question: str, words: list[re.Match[str]]) -> list[tuple[int, int]]:
    """The spans of the question's multi-word country names, capitalised ("Estados Unidos",
    "Reino Unido", "África do Sul"), longest first: a page in another language writes none of
    their words ("United States"), so each word alone would be a missing name."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        for n in range(min(longest_country_words(), len(words) - i), 1, -1):
            first, last = words[i], words[i + n - 1]
            if first[0][0].isupper() and same_country(question[first.start() : last.end()]):
                out.append((first.start(), last.end()))
                i += n
                break
        else:
            i += 1
    return out


def key_terms(question: str) -> list[str]:
    """The question's key terms as text (folded)."""
    return [term.text for term in question_key_terms(question)]


AXIS_MONTHS = 3  # a run of this many consecutive months in a text makes it a month axis
_MONTH_WORD = "|".join(sorted(map(re.escape, MONTHS), key=len, reverse=True))
_MONTH_RANGE = re.compile(rf"\b({_MONTH_WORD})\.?\s*(?:[-–—]|\s(?:a|to|au|ate)\s)\s*({_MONTH_WORD})\b")


def axis_months(text: str) -> set[str]:
    """The months ("month:6") a chart's axis or a table's header writes abbreviated ("Jan Fev
    Mar Abr Mai Jun", "jan/24", a range "Jan–Sep 2024"), when the text names a run of
    AXIS_MONTHS consecutive months,
    and each of them in the years the text states ("date:2024-06" on "Precipitação mensal
    2024"): alone, "mar", "may", "out" and "set" are words; in a run of months they are months."""
    folded = fold(text)
    months = {MONTHS[w] for w in re.findall(r"[a-z]+", folded) if w in MONTHS}
    for first, last in _MONTH_RANGE.findall(folded):  # "Jan–Sep 2024", "janeiro a junho"
        start, end = MONTHS[first], MONTHS[last]
        months.update((start + k - 1) % 12 + 1 for k in range((end - start) % 12 + 1))
    in_run = {
        m
        for m in months
        if any(all((s + k - 1) % 12 + 1 in months for k in range(AXIS_MONTHS)) for s in range(m - 2, m + 1))
    }
    years = (
        {int(v) for _, _, v in find_numbers(text) if v.is_integer() and 1900 <= v <= 2100}
        if in_run
        else set()
    )
    return {f"month:{m}" for m in in_run} | {f"date:{y:04d}-{m:02d}" for y in years for m in in_run}


@lru_cache(maxsize=4096)  # per chunk text, asked again for every question that finds the chunk
def month_axis(text: str) -> str:
    """The lines of a chunk that write a month axis (axis_months), "" when none."""
    return "\n".join(line for line in text.split("\n") if axis_months(line))


ACRONYM_LETTERS = (3, 5)  # an acronym's length, compared letter for letter in any order
_ACRONYM = re.compile(r"\b[A-Z]{3,5}\b")


class Haystack:
    """Evidence text, searched for key terms literally and by value."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spaced = _spaced(text)
        self._values: set[str] | None = None
        self._skeletons: set[str] | None = None
        self._acronyms: set[str] | None = None
        self._bands: list[tuple[float, float, bool, str]] | None = None

    def contains(self, term: KeyTerm) -> bool:
        if self._literal(term):
            return True
        if term.name and any(re.search(rf"\b{re.escape(a)}\b", self.spaced) for a in name_forms(term.text)):
            return True
        if term.name and " " not in term.text and len(term.text) >= NAME_SKELETON_MIN:
            if self._skeletons is None:
                self._skeletons = {name_skeleton(w) for w in _WORD.findall(self.spaced)}
            if name_skeleton(term.text) in self._skeletons:
                return True  # "Quioto" = "Kyoto", "Protocolo" = "Protocol": one name in two languages
        if term.name and ACRONYM_LETTERS[0] <= len(term.text) <= ACRONYM_LETTERS[1] and term.text.isalpha():
            if self._acronyms is None:
                self._acronyms = {"".join(sorted(w.lower())) for w in _ACRONYM.findall(self.text)}
            if "".join(sorted(term.text)) in self._acronyms:
                return True  # "VHC" = "HCV", "VIH" = "HIV": its letters in another language's order
        if not term.values:
            return False
        if self._values is None:
            self._values = value_tokens(self.text) | axis_months(self.text)
        return bool(term.values & self._values) or self._in_band(term)

    def _in_band(self, term: KeyTerm) -> bool:
        """Whether a quantity of the term ("22 kg") lies in a band the text writes ("20–<30 kg"):
        a dosing table's row for a weight, an age group's for an age."""
        quantities = [v.split(":") for v in term.values if v.startswith("qty:")]
        if not quantities:
            return False
        if self._bands is None:
            self._bands = find_bands(self.text)
        return any(in_band(float(x), unit, band) for _, x, unit in quantities for band in self._bands)

    def _literal(self, term: KeyTerm) -> bool:
        """The term as written; a term that starts or ends with a digit not inside a longer
        number: the question's "8" is not in "0.853" or "188" (its value is looked up apart)."""
        if term.text not in self.spaced:
            return False
        if not (term.text[:1].isdigit() or term.text[-1:].isdigit()):
            return True
        pattern = rf"(?<![\d.,]){re.escape(term.text)}(?![\d]|[.,]\d)"
        return re.search(pattern, self.spaced) is not None


def missing_key_terms(question: str, evidence_texts: list[str]) -> list[str]:
    """The question's key terms (as text) that no evidence text contains."""
    return [t.text for t in absent_key_terms(question, evidence_texts)]


@lru_cache(maxsize=4096)  # also asked of evidence pages, question after question
def question_language(question: str) -> str:
    """'en', 'pt', 'fr' or 'es', from function words and accents (enough to pick the
    refusal text); a tie goes to English, then Portuguese."""
    words = [w.lower() for w in _WORD.findall(question)]
    lowered = question.lower()
    scores = {
        lang: sum(w in vocab for w in words) + sum(ch in _LANGUAGE_ACCENTS.get(lang, "") for ch in lowered)
        for lang, vocab in _LANGUAGE_WORDS.items()
    }
    return max(scores, key=lambda lang: scores[lang])  # dict order: en, pt, fr, es


@dataclass
class Candidate:
    """One evidence sentence and how close it is to the question."""

    sentence: str
    chunk: ChunkEvidence
    page: PageEvidence
    cosine: float = 0.0
    overlap: float = 0.0
    keys: float = 0.0  # share of the question's key terms (names, numbers, dates, codes) in the sentence
    score: float = 0.0  # GateParams.score of the above
    words: float = 0.0  # share of the question's content words (content_words.py) in the sentence
    states: bool = True  # it states a value of the kind the question asks for (when it asks for one)
    # share of the key terms in the sentence and its page's title and headings ("Relatório
    # Ambiental Municipal 2024", "Prefeitura do Recife"): what dates and places a bare statement
    context_keys: float = 0.0


@dataclass(frozen=True)
class GateParams:
    """The gate's thresholds (calibrated: docs/evaluation.md, "The relevance gate")."""

    min_relevance: float = 0.65  # the best sentence's score must reach this
    overlap_weight: float = 0.0
    keys_weight: float = 0.3
    min_overlap: float = 0.0  # ...and the best sentence must hold this share of the question's stems
    min_coverage: float = 0.0  # ...and the evidence pages together this share (every content word)
    # ...and the evidence pages this share of the question's content words (content_words.py):
    # "orçamento" or "net income" on no page is a question about something the pages lack
    min_word_coverage: float = 0.6
    # a sentence holding every key term, this share of the content words and a value of the
    # asked kind ("Código: EST-08 · ... Oxigênio dissolvido (mg/L): 3,8") answers from this
    # cosine: a table row or a "label: value" line embeds far from any question
    min_answer_cosine: float = 0.2
    min_answer_words: float = 0.25
    # ...and one holding every content word from this cosine: a Portuguese question over an
    # English sentence ("caixa e equivalentes" / "Cash and equivalents totalled $71.3 million")
    # embeds far from it with the English text model
    min_full_answer_cosine: float = 0.1
    # "all": every key term occurs in the evidence pages; "names": names must, values may be
    # written in ways values.py does not read (a chart's axis, a scanned table)
    key_rule: Literal["all", "names"] = "all"

    def score(self, cand: Candidate) -> float:
        return cand.cosine + self.overlap_weight * cand.overlap + self.keys_weight * cand.keys


@dataclass
class Verdict:
    """The decision on scored candidates."""

    passed: bool  # strong enough to answer from (extractive path)
    related: bool  # anything lexically related at all, every name present (the LLM path's bar)
    best: Candidate | None
    missing: list[str] = field(default_factory=list)  # key terms absent from the evidence pages
    # the stating sentences it passed on when no sentence scored high enough (else empty)
    stated: list[Candidate] = field(default_factory=list)


def key_share(terms: list[KeyTerm], sentence: str, given: Collection[str] = ()) -> float:
    """The share of `terms` a sentence contains (those named in `given` count as held)."""
    if not terms:
        return 0.0
    hay = Haystack(sentence)
    return sum(t.text in given or hay.contains(t) for t in terms) / len(terms)


# Nouns that name a document, folded, singular and plural: "the RCAC Redpaper", "o relatório
# ambiental do Recife", "les lignes directrices de l'OMS", "the Séranon PV impact study"
_DOCUMENT_NOUN = re.compile(
    r"^(?:redpapers?|redbooks?|reports?|relatorios?|rapports?|papers?|articles?|artigos?|stud(?:y|ies)"
    r"|estudos?|etudes?|guidelines?|diretrizes|directives|bulletins?|boletins?|boletim|notes?|notas?"
    r"|surveys?|levantamentos?|publications?|publicac(?:ao|oes)|documents?|documentos?|guides?|guias?"
    r"|manuals?|manuais|manual|plans?|planos?|theses|thesis|teses?|books?|livros?|livres?)$"
)
# where a phrase naming a document ends: punctuation, a question word
_PHRASE_END = re.compile(
    r"[,;:?!()]|^(?:what|which|how|who|when|where|qual|quais|quanto|quantos|quanta"
    r"|quantas|quem|quando|onde|como|quel|quelle|quels|quelles|combien|comment|que)$"
)
# what opens a phrase before its noun: an article or a preposition ("in the RCAC Redpaper")
_PHRASE_START = re.compile(
    r"^(?:the|a|an|in|on|at|from|by|to|according|o|os|as|um|uma|no|na|nos|nas|pelo|pela|segundo"
    r"|conforme|de|do|da|dos|das|le|la|les|l|un|une|dans|selon|d|du|des|em|en)$"
)
# ...and of a table ("the FBI NICS table", "o quadro 1 do relatório"), for the table reader
TABLE_NOUN = re.compile(rf"{_DOCUMENT_NOUN.pattern}|^(?:tables?|tabelas?|tableaux?|quadros?)$")
_PHRASE_TOKEN = re.compile(r"[\w'’./-]+|[,;:?!()]", re.UNICODE)
_ELISION = re.compile(r"^(?:l|d|qu)['’]")  # "l'étude", "d'impact": the word after the apostrophe
_PHRASE_REACH = 6  # tokens after the noun ("da IBM sobre RCAC", "ambiental do Recife de 2024")


def document_phrase(question: str, nouns: re.Pattern[str] = _DOCUMENT_NOUN) -> str:
    """The words of the question that name a document ("Redpaper da IBM sobre RCAC", "the
    IBM DB2 for i RCAC Redpaper", "WHO 2022 HCV guidelines"), "" when it names none: a noun
    of a document (`nouns`; TABLE_NOUN: of a table too) with its modifiers before it (back
    to an article or a preposition) and after it (up to punctuation or a question word)."""
    tokens = _PHRASE_TOKEN.findall(question)
    # possessives off ("the Séranon study's text"); an acronym is no question word ("WHO")
    folded = [
        _ELISION.sub("", re.sub(r"['’]s$", "", fold(t))).strip("'’.") if not t.isupper() else ""
        for t in tokens
    ]
    spans: list[str] = []
    for i, word in enumerate(folded):
        if not nouns.match(word):
            continue
        start = i
        while (
            start > 0
            and not _PHRASE_END.search(folded[start - 1])
            and not _PHRASE_START.match(folded[start - 1])
        ):
            start -= 1
        end = i + 1
        while end < len(tokens) and end - i <= _PHRASE_REACH and not _PHRASE_END.search(folded[end]):
            end += 1
        spans.append(" ".join(tokens[start:end]))
    return " | ".join(spans)


def document_described(
    terms: list[KeyTerm],
    candidates: list[Candidate],
    pages: Collection[PageEvidence] = (),
    phrase: str = "",
) -> dict[tuple[str, int], set[str]]:
    """Per evidence page (doc_id, page_no), the question's names that other evidence pages of
    its document hold and it does not: names that describe the document ("o Redpaper da IBM
    sobre RCAC", "RCAC" on its page 18) and need not be repeated by the sentence on page 5
    that answers with the rest ("The Identity Theft Resource Center reports that almost 5000
    data breaches have occurred since 2005"). A name on the sentence's own page is that
    page's subject ("Var" in a table of departments), not a description: it must be in the
    sentence, unless every evidence page of the document holds it ("France" on each page of
    the French study). Names only: a number or a date must be the sentence's own or its
    headings'. `phrase`: the question's words naming its document (document_phrase); when it
    names one, only the names in it describe it from other pages: "Theresa", held by page 9,
    does not make the preface's "This IBM Redpaper publication provides ..." about her.
    `pages`: more evidence pages to read (those the candidates were filtered out of)."""
    names = [t for t in terms if t.name]
    if not names:
        return {}
    naming = Haystack(phrase)
    describing = {t.text for t in names if not phrase or naming.contains(t)}
    held: dict[str, dict[int, set[str]]] = {}
    for page in [*(c.page for c in candidates), *pages]:
        of_doc = held.setdefault(page.doc_id, {})
        if page.page_no not in of_doc:
            hay = Haystack("\n".join(c.text for c in page.chunks))
            of_doc[page.page_no] = {t.text for t in names if hay.contains(t)}
    out: dict[tuple[str, int], set[str]] = {}
    for doc_id, of_doc in held.items():
        every = set.intersection(*of_doc.values()) if len(of_doc) >= 2 else set()
        for page_no, own in of_doc.items():
            others = set().union(*(h for n, h in of_doc.items() if n != page_no))
            out[(doc_id, page_no)] = ((others - own) & describing) | every
    return out


def evidence_pages(question: str, ranked: list[PageEvidence], first: int) -> list[PageEvidence]:
    """The best `first` pages, and a lower-ranked one that holds the key terms and content
    words they all lack ("Marco Zero" on the report's page of reference points, ranked under
    three map cards for "the coordinates of Marco Zero in Recife"; "praia" under a geo
    filter that ranks the maps of the area first) with every other key term of the
    question (_joins): a page naming only the missing drug
    ("glecaprevir/pibrentasvir") beside one pricing another in Egypt does not make the pair
    an answer."""
    pages = ranked[:first]
    texts = [page_text(p) for p in pages]
    words = absent_content_words(question, texts, key_terms(question))
    if not absent_key_terms(question, texts) and not words:
        return pages
    terms = question_key_terms(question)
    return pages + [p for p in ranked[first:] if _joins(p, pages, texts, terms, words)]


def _joins(
    page: PageEvidence, top: list[PageEvidence], texts: list[str], terms: list[KeyTerm], words: list[str]
) -> bool:
    """Whether a lower page holds the content words and key terms the top pages lack with
    every other key term. A term that is no name may be its document's: held by its title
    or file name, or by each of two or more top pages of the same document ("DB2" in the
    running footer of IBM's paper, not on its page 12). A name must be on the page itself
    ("Recife" on three map cards does not place another page's "Marco Zero" in Recife)."""
    text = f"{page_text(page)}\n{document_names(page)}"
    if not holds_all(text, [t for t in terms if t.name], words):
        return False
    same = [set(_WORD.findall(fold(t))) for p, t in zip(top, texts, strict=True) if p.doc_id == page.doc_id]
    shared = " ".join(sorted(set.intersection(*same))) if len(same) >= 2 else ""
    return not absent_key_terms_of([t for t in terms if not t.name], f"{text}\n{shared}")


def holds_all(text: str, terms: list[KeyTerm], words: list[str]) -> bool:
    """Whether `text` holds every one of the key terms and the content words."""
    index = word_index(text)
    return not absent_key_terms_of(terms, text) and all(index.contains(w) for w in words)


def absent_key_terms(question: str, page_texts: list[str]) -> list[KeyTerm]:
    """The question's key terms that no evidence page contains."""
    return absent_key_terms_of(question_key_terms(question), "\n".join(page_texts))


def absent_key_terms_of(terms: list[KeyTerm], text: str) -> list[KeyTerm]:
    """Those of `terms` that `text` does not contain."""
    haystack = Haystack(text)
    return [t for t in terms if not haystack.contains(t)]


def page_text(page: PageEvidence) -> str:
    """A page's evidence text with what names its document (document_names)."""
    return "\n".join([*(c.text for c in page.chunks), document_names(page)])


def on_named_pages(question: str, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates from documents whose evidence pages hold every name of the question.
    A name found in another document does not make this one's sentence an answer: "Tamil
    Nadu's total public health outlay" is not answered by the outlay table of other states
    because the rainfall table of another document lists Tamil Nadu. Within one document
    the names may sit on different pages (the bulletin's place on its cover, the resolution
    it cites on page 3). A question in parts may take each part from its own document."""
    names = [t for t in question_key_terms(question) if t.name]
    if not names:
        return candidates
    texts: dict[str, dict[int, str]] = {}
    for cand in candidates:
        pages = texts.setdefault(cand.page.doc_id, {})
        if cand.page.page_no not in pages:
            pages[cand.page.page_no] = "\n".join(
                [document_names(cand.page), *(c.text for c in cand.page.chunks)]
            )
    hays = {doc: Haystack("\n".join(p.values())) for doc, p in texts.items()}
    kept = [c for c in candidates if all(hays[c.page.doc_id].contains(t) for t in names)]
    if kept:
        return kept
    # a question in parts ("in both the Salvador and the Recife reports") may be answered by
    # one document per part: the documents holding every name of some part, when each part
    # has one
    docs: set[str] = set()
    parts = decompose(question)
    for part in parts if len(parts) > 1 else []:
        part_names = [t for t in question_key_terms(part) if t.name]
        holding = {d for d, hay in hays.items() if part_names and all(hay.contains(t) for t in part_names)}
        if not holding:
            return []
        docs |= holding
    return [c for c in candidates if c.page.doc_id in docs]


def about_subject(question: str, candidates: list[Candidate]) -> list[Candidate]:
    """For a question that asks for a value ("how many employees", "quantos metros cúbicos
    de sedimentos"), the candidates that speak of its subject: a sentence holding none of
    its content words (service/answer/content_words.py) states some other quantity ("total
    revenue of $48.6 million", a dredging contract's cost), so its number is no answer.
    Other questions keep every candidate (a "which" question's answer need not repeat it,
    nor one asking for an identifier: "Qual o número da Resolução CONAMA citada?")."""
    if asked_value(question) is None or asks_identifier(question):
        return candidates
    words = question_content_words(question, key_terms(question))
    if not words:
        return candidates
    language = question_language(question)
    translatable = [w for w in words if translations(w, dictionary=False) != {w}]
    languages: dict[int, str] = {}
    kept = []
    for cand in candidates:
        if cand.page is not None and id(cand.page) not in languages:
            languages[id(cand.page)] = question_language("\n".join(c.text for c in cand.page.chunks))
        foreign = cand.page is not None and languages[id(cand.page)] != language
        # over a page in another language only the words the glossary translates can be checked
        if cand.words > 0 or (foreign and not translatable):
            kept.append(cand)
    return kept


def word_share(words: list[str], sentence: str) -> float:
    """The share of `words` (content words) a sentence holds; 1.0 when there are none."""
    if not words:
        return 1.0
    index = word_index(sentence)
    return sum(index.contains(w) for w in words) / len(words)


def decide(
    candidates: list[Candidate],
    missing: list[KeyTerm],
    coverage: float,
    params: GateParams,
    word_coverage: float = 1.0,
    other_year: bool = False,
    keyless: bool = False,
) -> Verdict:
    """The gate's decision on scored candidates (cosine, overlap and keys set), the key
    terms absent from the evidence pages, the share of the question's stems the pages hold
    (`coverage`), the share of its content words they hold (`word_coverage`) and whether
    the evidence speaks of the asked subject only in other years (`other_year`); pure, so
    scripts/calibrate_gate.py replays it on cached features. A question without key terms
    (`keyless`: "Quais são as coordenadas da praia nesta área?", a geo filter naming the
    place) has its stating sentences told by content words and value alone."""
    for cand in candidates:
        cand.score = params.score(cand)
    best = max(candidates, key=lambda c: c.score, default=None)
    names_present = not any(t.name for t in missing)
    keys_ok = not missing if params.key_rule == "all" else names_present
    relevant = best is not None and best.score >= params.min_relevance and best.overlap >= params.min_overlap
    stating = [
        c
        for c in candidates
        if (keyless or max(c.keys, c.context_keys) >= 1.0)
        and c.words >= params.min_answer_words
        and c.states
        and (
            c.cosine >= params.min_answer_cosine
            or (c.words >= 1.0 and c.cosine >= params.min_full_answer_cosine)
        )
    ]
    stated: list[Candidate] = []
    if not relevant and stating:
        relevant, best, stated = True, max(stating, key=lambda c: c.score), stating
    passed = (
        relevant
        and coverage >= params.min_coverage
        and word_coverage >= params.min_word_coverage
        and not other_year
        and keys_ok
    )
    related = names_present and any(c.overlap > 0 or c.keys > 0 for c in candidates)
    # the sentences to quote: those holding every key term; without key terms, content words
    # alone tell them too loosely, and the closest sentences are quoted as before
    return Verdict(passed, related, best, [t.text for t in missing], stated if passed and not keyless else [])


@dataclass
class Grade:
    """The gate's verdict, with the sentences it scored."""

    language: str
    relevance: float  # the best sentence's score
    passed: bool
    candidates: list[Candidate]
    related: bool = False  # the evidence is not clearly absent (what the LLM path asks)
    missing: list[str] = field(default_factory=list)
    absent_words: list[str] = field(default_factory=list)  # content words on no evidence page
    word_coverage: float = 1.0  # the share of the question's content words the pages hold
    other_year: bool = False  # the pages speak of the asked subject in other years only
    # it passed on these stating sentences (no sentence scored high enough): the ones to quote
    stated: list[Candidate] = field(default_factory=list)
    # the pages it read (evidence_pages): the answer is read from the same ones
    pages: list[PageEvidence] = field(default_factory=list)


class RelevanceGate:
    """Grades a search result against the question (service/answer/extractive.py and
    service/answer/llm.py both answer only when it passes)."""

    def __init__(
        self,
        text: TextEncoder,
        sparse: SparseEncoder,
        min_relevance: float | None = None,
        evidence_pages: int = 3,
        max_embedded: int = 32,
        params: GateParams | None = None,
        sentence_vectors: SentenceVectors | None = None,
        text_language: str | None = None,
    ) -> None:
        self.text = text
        # the one language the text encoder reads (None: any): a question in another is also
        # compared with the sentences in its word-for-word translation (translate.py)
        self.text_language = text_language
        # vectors stored at ingestion (service/answer/sentence_vectors.py); None embeds every sentence here
        self.sentence_vectors = sentence_vectors
        self.sparse = sparse
        params = params or GateParams()
        if min_relevance is not None:
            params = dataclasses.replace(params, min_relevance=min_relevance)
        self.params = params
        self.evidence_pages = evidence_pages
        self.max_embedded = max_embedded

    @property
    def min_relevance(self) -> float:
        return self.params.min_relevance

    def evidence(self, question: str, result: SearchResult) -> list[PageEvidence]:
        """The pages the answer is read from (evidence_pages)."""
        return evidence_pages(question, result.pages, self.evidence_pages)

    def grade(self, question: str, result: SearchResult) -> Grade:
        """The relevance gate: is the evidence strong enough to answer from (here or by an LLM)?"""
        pages = self.evidence(question, result)
        candidates = on_named_pages(question, self._score(question, self._candidates(pages), result))
        # the question's words count on the documents that hold its names: Northwind's
        # "operating margin" is not Acme's ("What operating margin did Acme report?")
        docs = {c.page.doc_id for c in candidates}
        named_pages = [p for p in pages if p.doc_id in docs] or pages
        candidates = about_subject(question, candidates)
        page_texts = [c.text for p in pages for c in p.chunks]
        coverage = stem_coverage(self.sparse, question, page_texts)
        # a key term may name the document ("the WHO 2022 HCV guidelines", "Acme FY2023")
        named = page_texts + [document_names(p) for p in pages]
        page_words = [
            "\n".join([p.title, *(f"{table_title(c)}\n{c.text}" for c in p.chunks)]) for p in named_pages
        ]
        absent_words, word_coverage = content_coverage(question, page_words)
        if absent_words and absent_words == asked_kind(question):
            # "Em que instituição X fez o mestrado?": the answer names one ("EAFIT"); pages
            # rarely write its kind beside it. The kind alone absent is no other subject
            absent_words, word_coverage = [], 1.0
        other_year = asked_in_other_year(question, candidates)
        verdict = decide(
            candidates,
            absent_key_terms(question, named),
            coverage,
            self.params,
            word_coverage=word_coverage,
            other_year=other_year,
            keyless=not question_key_terms(question),
        )
        relevance = round(verdict.best.score, 4) if verdict.best else 0.0
        return Grade(
            question_language(question),
            relevance,
            verdict.passed,
            candidates,
            related=verdict.related,
            missing=verdict.missing,
            absent_words=absent_words,
            word_coverage=word_coverage,
            other_year=other_year,
            stated=verdict.stated,
            pages=pages,
        )

    def refusal(self, question: str, result: SearchResult, grade: Grade) -> Answer:
        """The honest "not found" answer, in the question's language."""
        return Answer(
            question,
            NOT_FOUND.get(grade.language, NOT_FOUND["en"]),
            grade.language,
            grounded=True,
            refused=True,
            evidence=result.pages,
            relevance=grade.relevance,
        )

    def _score(self, question: str, candidates: list[Candidate], result: SearchResult) -> list[Candidate]:
        """Lexical scores for all candidates (cheap), then embeddings for the best
        `max_embedded` of them (tables split into many short lines)."""
        if not candidates:
            return []
        query_terms = self.sparse.embed_query(question)
        doc_terms = self.sparse.embed_documents([c.sentence for c in candidates])
        terms = question_key_terms(question)
        words = question_content_words(question, key_terms(question))
        asked, given = asked_value(question), given_values(question)
        frames = identifier_frames(question)
        axes = {id(c.chunk): month_axis(c.chunk.text) for c in candidates}
        headings = {id(c.page): page_headings(c.page) for c in candidates}
        described = document_described(terms, candidates, phrase=document_phrase(question))
        for cand, doc in zip(candidates, doc_terms, strict=True):
            cand.overlap = _overlap(query_terms, doc)
            cand.keys = key_share(terms, cand.sentence)
            # ...and the month axis of its chart ("Jan Fev Mar ... Dez" under the title with the values)
            context = f"{headings.get(id(cand.page), '')}\n{axes[id(cand.chunk)]}\n{cand.sentence}"
            around = described.get((cand.page.doc_id, cand.page.page_no), ())
            cand.context_keys = key_share(terms, context, given=around)
            # a table row speaks of what its table's title names ("MILHO SAFRA 16/17: ... COLHEITA")
            cand.words = word_share(words, f"{table_title(cand.chunk)}\n{cand.sentence}")
            if frames and all(re.search(rf"\b{re.escape(f)}\b", fold(cand.sentence)) for f in frames):
                cand.words = 1.0  # "ISBN 978-92-4-005274-1 (print version)": the asked identifier's own line
            cand.states = asked is None or states_value(cand.sentence, asked, given)
        # stable sort: ties keep retrieval order (best page, best chunk first); the content
        # words count too, since they meet across languages where BM25 stems do not
        kept = sorted(candidates, key=lambda c: -(c.overlap + c.keys + c.words))[: self.max_embedded]
        # the head of a sentence carries its meaning; long table rows would cost ~0.03 s each
        texts = [c.sentence[:EMBED_CHARS] for c in kept]
        embed = self.text.embed if self.sentence_vectors is None else self.sentence_vectors.embed
        vectors = embed(texts)
        wordings = [np.asarray(result.query_vector, dtype=np.float32)]
        cosines = vectors @ wordings[0]
        if translated := self._translated(question, word_index("\n".join(texts))):
            # "combien coûte au Pakistan ..." embeds far from "a lower cost of US$ 48 in Egypt"
            # with an English-only encoder; its translation much less so. The translation picks
            # the senses the sentences hold; the planner's vector serves when it searched the
            # same words
            given = result.translation_vector
            same = given is not None and given.size and translated == self._translated(question)
            wordings.append(np.asarray(given if same else self.text.embed([translated])[0], dtype=np.float32))
            cosines = np.maximum(cosines, vectors @ wordings[-1])
        if self.text_language is not None:
            # a sentence in another language than the encoder's ("Le parc métropolitain progresse
            # de 8,6 % avec 820 MW raccordés en 2020") is compared in its word-for-word translation too
            foreign = [
                (i, t)
                for i, c in enumerate(kept)
                if (t := in_encoder_language(texts[i], c.chunk.text, self.text_language))
            ]
            if foreign:
                translations = embed([t for _, t in foreign])
                rows = [i for i, _ in foreign]
                for wording in wordings:
                    cosines[rows] = np.maximum(cosines[rows], translations @ wording)
        for cand, cos in zip(kept, cosines, strict=True):
            cand.cosine = float(cos)
        return kept

    def _translated(self, question: str, evidence: WordIndex | None = None) -> str | None:
        """The question in the text encoder's language, when it is written in another (with
        `evidence`, each word's senses those sentences hold)."""
        language = question_language(question)
        if self.text_language is None or language == self.text_language:
            return None
        return translate(question, language, prefer=evidence.holds_form if evidence else None)

    @staticmethod
    def _candidates(pages: list[PageEvidence]) -> list[Candidate]:
        out = []
        for page in pages:
            for chunk in page.chunks[:4]:
                for sentence in sentences(chunk.text, table=chunk.table is not None):
                    if len(sentence) >= 12:
                        out.append(Candidate(sentence[:600], chunk, page))
        return out


# "em que instituição", "near which landmark", "in which months": a frame naming the kind of
# thing the answer is, at the question's start (folded)
_KIND_ASKED = re.compile(
    r"^\W*(?:(?:in|at|on|near|from|for|by|em|no|na|de|do|da|com|para|dans|sur|pres de|par|pour)\s+)?"
    r"(?:which|what|que|qual|quais|quel|quelle|quels|quelles)\s+([^\W\d_]+)"
)


def asked_kind(question: str) -> list[str]:
    """The word naming the kind of thing a "which X" question asks for ("instituicao" of "Em
    que instituição ..."), as a one-word list; [] when it asks otherwise."""
    m = _KIND_ASKED.match(fold(question))
    if not m or m[1] not in question_content_words(question, key_terms(question)):
        return []
    return [m[1]]


def content_coverage(question: str, texts: list[str]) -> tuple[list[str], float]:
    """The question's content words (service/answer/content_words.py; its key terms are
    checked as such) that no text holds, and the share of them the texts hold (1.0 when the
    question has none). Over a text in another language than the question's, a word the
    glossary cannot translate is not counted absent: "corn" may well be the page's "milho"."""
    skip = key_terms(question)
    words = question_content_words(question, skip)
    if not words:
        return [], 1.0
    absent = absent_content_words(question, texts, skip)
    language = question_language(question)
    if any(question_language(t) != language for t in texts if len(t) > 200):
        absent = [w for w in absent if translations(w, dictionary=False) != {w}]
    return absent, 1 - len(absent) / len(words)


def years_of(text: str) -> set[int]:
    """The years a text states (whole numbers 1900-2100)."""
    return {int(v) for _, _, v in find_numbers(text) if v.is_integer() and 1900 <= v <= 2100}


def asked_in_other_year(question: str, candidates: list[Candidate]) -> bool:
    """Whether the question asks about a year (2023) and every evidence sentence about its
    subject (holding one of its content words) dates itself to other years only: "Em 2024,
    o Recife registrou precipitação acumulada de 2.345 mm" does not answer "a precipitação
    acumulada no Recife em 2023". A sentence without a year is dated by its page title and
    chunk heading; one with no date at all leaves the question open."""
    asked = years_of(question)
    words = question_content_words(question, key_terms(question))
    if not asked or not words:
        return False
    about = [c for c in candidates if any(word_index(c.sentence).contains(w) for w in words)]
    if not about:
        return False
    for cand in about:
        years = years_of(cand.sentence) or years_of(dating_context(cand))
        if not years or years & asked:
            return False
    return True


def dating_context(cand: Candidate) -> str:
    """What dates a sentence besides itself: its page title and its chunk's heading line
    ("" without a page, as in scripts/calibrate_gate.py's cache)."""
    return f"{cand.page.title}\n{cand.chunk.text.split(chr(10), 1)[0]}" if cand.page else ""


def table_title(chunk: ChunkEvidence) -> str:
    """The title of the table a chunk was cut from ("" for text)."""
    return str(chunk.table.get("title") or "") if chunk.table else ""


def page_headings(page: PageEvidence) -> str:
    """A page's document title and file name and the first line of each of its chunks
    (running headers, section titles): "Relatório Ambiental Municipal 2024", "Prefeitura do
    Recife · Secretaria", "who_hcv_children_guidelines_2022.pdf"; a paragraph's first line
    too: it introduces the list or the sentences under it ("We highlight below country case
    studies ... Médecins du Monde ... Georgia")."""
    return "\n".join([document_names(page), *(c.text.split("\n", 1)[0] for c in page.chunks)])


def document_names(page: PageEvidence) -> str:
    """What names a page's document: its title and its file name."""
    return f"{page.title}\n{page.filename}"


def stem_coverage(sparse: SparseEncoder, question: str, page_texts: list[str]) -> float:
    """The share of the question's BM25 stems (stop words dropped) found anywhere in the
    evidence pages: "capital" in "What is the capital of Australia?" is on no page."""
    if not page_texts:
        return 0.0
    return _overlap(sparse.embed_query(question), sparse.embed_documents(["\n".join(page_texts)])[0])


def _overlap(
    query: dict[str, tuple[list[int], list[float]]], doc: dict[str, tuple[list[int], list[float]]]
) -> float:
    """Share of the question's stemmed terms found in the sentence (best language)."""
    best = 0.0
    for name, (q_indices, _) in query.items():
        if q_indices:
            found = set(q_indices) & set(doc.get(name, ([], []))[0])
            best = max(best, len(found) / len(q_indices))
    return best
