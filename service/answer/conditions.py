"""The condition a counting question puts on a value: "how many states reported zero permit
checks", "quantos estados têm gasto diferente de zero", "combien de régions à plus de 50 %",
"how many weeks above 90%". The table answerer (service/answer/tables.py) counts the rows
of the named column whose cell meets it. English, Portuguese and French wordings; the
question is read folded (geo.folding.fold: lower case, no accents).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from geo.folding import fold
from ingest.values import parse_number

Comparison = Literal["eq", "ne", "gt", "ge", "lt", "le"]

_NUMBER = r"([-−]?\d[\d.,  ]*\d|\d)\s*(%|por cento|per ?cent|pour ?cent)?"
_PHRASES: list[tuple[Comparison, str]] = [
    (
        "gt",
        r"more than|greater than|higher than|larger than|above|over|exceeding|in excess of"
        r"|(?:pass|exceed|surpass|cross)(?:ed|es)?|(?:went|rose|climbed|go|rise|climb) (?:above|past|over)"
        r"|mais de|mais do que|acima de|superior(?:es)? a|maior(?:es)? (?:do )?que"
        r"|(?:passou|passaram|ultrapassou|ultrapassaram|superou|superaram)(?: de| o| os| a)?"
        r"|plus de|plus que|au-dessus de|superieure?s? a|(?:a |ont )?depasse(?:nt)?",
    ),
    ("ge", r"at least|no less than|pelo menos|ao menos|no minimo|au moins"),
    (
        "lt",
        r"less than|fewer than|lower than|smaller than|below|under"
        r"|menos de|menos do que|abaixo de|inferior(?:es)? a|menor(?:es)? (?:do )?que"
        r"|moins de|moins que|en dessous de|au-dessous de|inferieure?s? a",
    ),
    ("le", r"at most|no more than|no maximo|au plus|au maximum"),
    ("eq", r"exactly|equal to|iguais? a|exatamente|egale?s? a|exactement|reached|atingiu|atingiram"),
]
_COMPARED = [(op, re.compile(rf"\b(?:{words})\s+{_NUMBER}")) for op, words in _PHRASES]
# "diferente de zero", "non-zero", "não nulo": every value but nought
_NOT_ZERO = re.compile(
    r"\b(?:non[- ]?zero|not zero|other than zero|different from zero|diferentes? de zero"
    r"|nao nul[oa]s?|nao zero|non nul(?:le)?s?|differente?s? de zero|autres? que zero)\b"
)
_ZERO = re.compile(r"\b(?:zero|nul|nulle|nuls|nulles)\b")
# "at 100%", "a 100%", "em 100%", "had finished harvesting (100%)": a share the rows are at
_AT_SHARE = re.compile(r"(?:\b(?:at|a|em|de)\s+|\(\s*)(\d+(?:[.,]\d+)?)\s*%")


# "when did X pass 50% for the first time": the first row (in the table's order) that meets it
_FIRST = re.compile(
    r"\b(?:for the first time|the first time|first (?:pass|exceed|surpass|cross|went|rose|go|rise|reach)\w*"
    r"|pela primeira vez|primeira vez|pour la premiere fois|por primera vez)\b"
)


@dataclass(frozen=True)
class Condition:
    """A comparison of a cell's value with a threshold, and where the question says it."""

    comparison: Comparison
    threshold: float
    percent: bool  # the threshold was written as a share ("50%")
    span: tuple[int, int]  # in the folded question

    def holds(self, value: float) -> bool:
        t = self.threshold
        return {
            "eq": value == t,
            "ne": value != t,
            "gt": value > t,
            "ge": value >= t,
            "lt": value < t,
            "le": value <= t,
        }[self.comparison]


def count_condition(question: str) -> Condition | None:
    """The condition a counting question puts on the values it counts, or None."""
    folded = fold(question)
    if m := _NOT_ZERO.search(folded):
        return Condition("ne", 0.0, False, m.span())
    for comparison, pattern in _COMPARED:
        if (m := pattern.search(folded)) and (value := parse_number(m[1].replace("−", "-"))) is not None:
            return Condition(comparison, value, bool(m[2]), m.span())
    if (m := _AT_SHARE.search(folded)) and (value := parse_number(m[1])) is not None:
        return Condition("eq", value, True, m.span())
    if m := _ZERO.search(folded):
        return Condition("eq", 0.0, False, m.span())
    return None


def first_asked(question: str) -> tuple[int, int] | None:
    """Where the question asks for the first row to meet its condition ("pela primeira
    vez", "for the first time"), in the folded question; None when it does not."""
    m = _FIRST.search(fold(question))
    return m.span() if m else None


def threshold_spans(question: str) -> list[tuple[int, int]]:
    """Where the question writes the bound of a comparison ("above 40,000,000", "mais de 20
    mil", "moins de 10 %"): a number the rows are compared with, which no page need hold."""
    folded = fold(question)
    return [
        m.span(1) for comparison, pattern in _COMPARED if comparison != "eq" for m in pattern.finditer(folded)
    ]


def without_condition(question: str, condition: Condition) -> str:
    """The question with the words of its condition blanked (folded): what names the column."""
    folded = fold(question)
    start, end = condition.span
    return folded[:start] + " " * (end - start) + folded[end:]
