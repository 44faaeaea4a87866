"""Whether an extractive answer states the asked thing ("answer") or only offers the
evidence's best passages ("passages"), so the UI does not call quoted passages an answer.

The rule: a chosen sentence is an answer when it holds every key term of the question
(service/answer/gate.py: names, codes, numbers, dates, compared as values) and, when the
question asks for a quantity ("how many", "quanto", "what percentage") or a date ("when",
"quando", "em que ano"), states one that the question does not already give. Otherwise the
sentences are passages: the key terms are split over sentences, or no value of the asked
type is there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from geo.folding import fold
from ingest.values import find_dates, find_numbers, number_token
from service.answer.gate import Candidate, Haystack, question_key_terms
from service.answer.types import AnswerStatus

AskedValue = Literal["number", "date"]

# On folded questions (lower case, no accents), pt / en / fr / es.
_ASKS_DATE = re.compile(
    r"\b(when|quando|cuando|quand|what date|which date|which year|what year|in what year|in which year|"
    r"em que (?:data|ano|dia|mes)|qual (?:a data|o ano|o dia)|en que (?:fecha|ano)|en quelle annee)\b"
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
_QUANTITY_FR = "puissance|capacite|production|part|taux|nombre|montant|valeur|superficie|surface|croissance"
_ASKS_NUMBER = re.compile(
    r"\b(how many|how much|how long|how far|how tall|how big|how large|what percentage|what share|"
    r"what proportion|"
    rf"what (?:was|is|were|are) (?:the|its|their|[\w-]+['’]s) (?:[\w-]+ ){{0,3}}(?:{_QUANTITY_EN})|"
    rf"quant[oa]s?|qual (?:(?:foi|era|e) )?(?:o|a) (?:[\w/-]+ ){{0,3}}(?:{_QUANTITY_PT})|"
    r"que percentual|cuant[oa]s?|combien|"
    rf"quel(?:le)?s? (?:(?:est|etait|a ete) )?(?:la |le )?(?:{_QUANTITY_FR}))\b"
)


def asked_value(question: str) -> AskedValue | None:
    """The kind of value the question asks for, if it asks for one."""
    folded = fold(question)
    if _ASKS_DATE.search(folded):
        return "date"
    if _ASKS_NUMBER.search(folded):
        return "number"
    return None


def _states_value(sentence: str, asked: AskedValue, given: set[str]) -> bool:
    """Whether the sentence states a value of the asked kind that the question does not give."""
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


class AnswerTest:
    """Whether one sentence states the asked thing: every key term of the question, and a
    value of the asked kind the question does not give (when it asks for one)."""

    def __init__(self, question: str) -> None:
        self.terms = question_key_terms(question)
        self.asked = asked_value(question)
        self.given = {value for term in self.terms for value in term.values}
        self.given |= {f"num:{number_token(v)}" for _, _, v in find_numbers(question)}

    def states_value(self, sentence: str) -> bool:
        """A value of the asked kind that the question does not give (True when none is asked)."""
        return self.asked is None or _states_value(sentence, self.asked, self.given)

    def answers(self, sentence: str) -> bool:
        hay = Haystack(sentence)
        return all(hay.contains(t) for t in self.terms) and self.states_value(sentence)


def answer_status(question: str, chosen: Sequence[Candidate]) -> AnswerStatus:
    """ "answer" when one chosen sentence states the asked thing, else "passages"."""
    test = AnswerTest(question)
    return "answer" if any(test.answers(c.sentence) for c in chosen) else "passages"
