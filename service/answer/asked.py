"""What kind of value a question asks for: a quantity ("how many", "quanto", "what
percentage") or a date ("when", "quando", "em que ano"), in pt / en / fr / es. The gate
(service/answer/gate.py) and the answer status (service/answer/status.py) both ask."""

from __future__ import annotations

import re
from typing import Literal

from geo.folding import fold
from ingest.values import find_dates, find_numbers, number_token

AskedValue = Literal["number", "date"]

# On folded questions (lower case, no accents), pt / en / fr / es.
# "when" asks at the question's start or after a comma ("According to X, when ..."); inside a
# clause it is a conjunction ("what does a manager see when looking at the TAX_ID")
_ASKS_DATE = re.compile(
    r"(?:^|[,;:]\s*)\W*(?:(?:and|e|et|y|since|desde|depuis)\s+)?(?:when|quando|cuando|quand)\b|"
    r"\b(?:what dates?|which dates?|which years?|what years?|in what years?|in which years?|"
    r"by what years?|by which years?|until what years?|(?:by|until) what date|"
    r"(?:em|ate|para|desde) que (?:datas?|anos?|dias?|mes|meses)|"
    r"(?:qual|quais) (?:a data|o ano|o dia|as datas|os anos)|"
    r"en que (?:fechas?|anos?)|en quelles? annees?|(?:quelle|quelles) (?:annees?|dates?))\b"
)
_QUANTITY_EN = (
    "number|total|amount|value|rate|area|percentage|share|capacity|population|revenue|count|cost|price|"
    "fine|average|mean|size|length|height|depth|weight|dose|concentration|temperature|output|production|"
    "growth|deviation|time|score|budget|outlay|spending|expenditure"
)
_QUANTITY_PT = (
    "numero|total|valor|taxa|area|percentual|porcentagem|quantidade|potencia|populacao|receita|media|"
    "custo|preco|multa|capacidade|producao|concentracao|temperatura|crescimento|desvio|tempo|gasto|"
    "orcamento|dose|producao|extensao|altura|profundidade|peso"
)
# a measure asked without its article ("qual taxa", "qual área"); "qual valor" may ask for a
# name ("qual valor contém o registrador CURRENT USER?")
_MEASURE_PT = (
    "taxa|percentual|porcentagem|proporcao|area|quantidade|populacao|potencia|capacidade|temperatura|"
    "altura|profundidade|extensao|peso|dose|media|custo|preco|multa"
)
_QUANTITY_FR = (
    "puissance|capacite|production|part|taux|nombre|montant|valeur|superficie|surface|croissance|"
    "resistance|vitesse|debit|prix|cout|population|altitude|hauteur|densite|temperature|rendement|dose"
)
_ASKS_NUMBER = re.compile(
    r"\b(how many|how much|how long|how far|how tall|how big|how large|what percentage|what share|"
    r"what proportion|"
    rf"what (?:was|is|were|are) (?:the|its|their|[\w-]+['’]s) (?:[\w-]+ ){{0,3}}(?:{_QUANTITY_EN})|"
    rf"what (?:[\w-]+ ){{0,2}}(?:{_QUANTITY_EN})s? (?:did|does|do|was|were|is|are|has|had|will)|"
    rf"quant[oa]s?|qual (?:(?:foi|era|e) )?(?:o|a) (?:[\w/-]+ ){{0,3}}(?:{_QUANTITY_PT})|"
    rf"qual (?:(?:foi|era|e) )?(?:{_MEASURE_PT})|"  # "qual taxa de resposta", "qual percentual"
    r"que percentual|cuant[oa]s?|combien|"
    rf"quel(?:le)?s? (?:(?:est|etait|a ete|sera|seront|sont|etaient|ont ete) )?(?:la |le |les )?"
    rf"(?:[\w-]+ ){{0,2}}(?:{_QUANTITY_FR}))\b"
)


# A rate or a share is asked ("qual taxa de resposta", "what percentage", "quel taux"): the
# answer is a percentage, not the weeks or doses of the sentence beside it
_ASKS_PERCENT = re.compile(
    r"\b(?:rate|percentage|percent|proportion|share|taxa|percentual|porcentagem|proporcao|taux|"
    r"pourcentage|tasa|porcentaje)\b"
)
_PERCENT = re.compile(r"\d\s?%|\b(?:per ?cent|por cento|pour cent|por ciento)\b")


def asks_percent(question: str) -> bool:
    """Whether the question asks for a rate or a share (a number question naming one)."""
    return asked_value(question) == "number" and bool(_ASKS_PERCENT.search(fold(question)))


def states_percent(sentence: str) -> bool:
    """Whether the sentence states a percentage ("52%", "12 per cent", "30 por cento")."""
    return bool(_PERCENT.search(fold(sentence)))


def numbers_asked(question: str) -> int:
    """How many times the question asks for a number ("quantos no dia e quantos no acumulado": 2)."""
    return len(_ASKS_NUMBER.findall(fold(question)))


def number_asked_at(question: str) -> int | None:
    """Where (in the folded question) the last frame asking a number starts: "How long ago
    did Jim begin his career, and in which lab?" asks its number first; None if none does."""
    found = list(_ASKS_NUMBER.finditer(fold(question)))
    return found[-1].start() if found else None


def asked_value(question: str) -> AskedValue | None:
    """The kind of value the question asks for, if it asks for one."""
    folded = fold(question)
    if _ASKS_DATE.search(folded):
        return "date"
    if _ASKS_NUMBER.search(folded):
        return "number"
    return None


# "Qual o número da Resolução", "What is the form number", "What is the ISBN": an identifier
# asked by its kind, not a count ("número de funcionários", "number of employees")
_ASKS_IDENTIFIER = re.compile(
    r"\b(?:numero d[ao]s?|codigo|code|isbn|issn|cnpj|cpf|referencia|reference|identifier|"
    r"(?:form|serial|model|part|document|report|phone) number)\b"
)


def asks_identifier(question: str) -> bool:
    """Whether the question asks for an identifier (a number that names, not counts)."""
    return bool(_ASKS_IDENTIFIER.search(fold(question)))


def identifier_frames(question: str) -> list[str]:
    """The words naming the kind of identifier asked, folded ("form number", "codigo")."""
    return [m[0] for m in _ASKS_IDENTIFIER.finditer(fold(question))]


def given_values(question: str) -> set[str]:
    """The value tokens a question states itself ("num:2024", "date:2017-08-18")."""
    given = {f"num:{number_token(v)}" for _, _, v in find_numbers(question)}
    return given | {f"date:{d.token()}" for _, _, d in find_dates(question)}


# A number that labels a part of the document ("Carte 1", "Tableau 3", "Figure 2.1", "p. 45"):
# it names where something is, not a value the document states
_LABEL_NUMBER = re.compile(
    r"\b(?:table|tableau|tabela|tabla|quadro|figure|figura|fig|carte|map|mapa|chart|gr[aá]fico|graphique|"
    r"annex|annexe|anexo|appendix|ap[eê]ndice|page|p[aá]gina|p[aá]g|p|section|se[cç][aã]o|chapter|"
    r"cap[ií]tulo|chapitre|box|encadr[eé])\.?\s*(?:n[o\u00ba\u00b0]\.?\s*)?\d+(?:\.\d+)*\b",
    re.IGNORECASE,
)


def opens_with_label(text: str) -> bool:
    """Whether a text opens with a part label and a separator ("Tabela 1 — Qualidade da água",
    "Chapter 2: Causes of Climate Change"): a caption or a heading, which names what follows."""
    m = _LABEL_NUMBER.match(text.lstrip())
    return m is not None and re.match(r"\s*(?:[-—–:.]|$)", text.lstrip()[m.end() :]) is not None


def states_value(sentence: str, asked: AskedValue, given: set[str]) -> bool:
    """Whether the sentence states a value of the asked kind that the question does not give
    (the number of a table, figure or map that it names does not count)."""
    sentence = _LABEL_NUMBER.sub(" ", sentence)
    if asked == "date":
        dates = {d.token() for _, _, d in find_dates(sentence)}
        years = {
            f"num:{number_token(v)}"
            for _, _, v in find_numbers(sentence)
            if v.is_integer() and 1000 <= v <= 2999
        }
        return bool({f"date:{t}" for t in dates} - given) or bool(years - given)
    numbers = {f"num:{number_token(v)}" for _, _, v in find_numbers(sentence)}
    return bool(numbers - given)


def states_share(sentence: str, given: set[str]) -> bool:
    """Whether the sentence states a number that may be a rate or a share: any but the years
    ("the 2018 WHO Guidelines" gives no percentage of anything)."""
    numbers = [v for _, _, v in find_numbers(_LABEL_NUMBER.sub(" ", sentence))]
    return bool(
        {f"num:{number_token(v)}" for v in numbers if not (v.is_integer() and 1900 <= v <= 2100)} - given
    )
