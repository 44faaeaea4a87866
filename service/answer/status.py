"""Whether an extractive answer states the asked thing ("answer") or only offers the
evidence's best passages ("passages"), so the UI does not call quoted passages an answer.

The rule: a chosen sentence is an answer when it holds every key term of the question
(service/answer/gate.py: names, codes, numbers, dates, compared as values) and, when the
question asks for a quantity ("how many", "quanto", "what percentage") or a date ("when",
"quando", "em que ano"), states one that the question does not already give. Otherwise the
sentences are passages: the key terms are split over sentences, or no value of the asked
type is there. A question for the largest or smallest of something is answered only by a
sentence that ranks ("the most common", "le plus grand parc"), not by a line naming one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from geo.folding import fold
from ingest.values import find_numbers, number_token
from service.answer.asked import asked_value, asks_percent, states_percent, states_share, states_value
from service.answer.gate import Candidate, Haystack, document_names, page_headings, question_key_terms
from service.answer.tables import asks_extreme, names_table
from service.answer.types import AnswerStatus

# Words that rank what a sentence names ("the most common", "reste la région dotée du plus
# grand parc", "peaked in July", "seguido pela Imbiribeira"): a sentence answering a question
# for the largest or smallest of something says so with one of them
_RANKING = frozenset(
    """
    largest highest most biggest greatest maximum lowest smallest least fewest minimum
    tallest longest shortest
    maior maiores maximo maxima mais menor menores minimo minima menos pico lidera lider
    plus moins premier premiere record
    peak peaked peaks top first leading leads followed seguido seguida seguidos seguidas suivie suivi
    """.split()
)
_WORDS = re.compile(r"[^\W\d_]+", re.UNICODE)


# an identifier: a word with an underscore, or of four or more characters mixing letters and digits
_IDENTIFIER = re.compile(r"^(?:\w*_\w*|(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{4,})$")
_TOKENS = re.compile(r"[\w-]+")  # words with their hyphens and underscores
_JOINERS = re.compile(r"[-_]")


class AnswerTest:
    """Whether one sentence states the asked thing: every key term of the question, and a
    value of the asked kind the question does not give (when it asks for one)."""

    def __init__(self, question: str) -> None:
        self.terms = question_key_terms(question)
        self.asked = asked_value(question)
        self.percent = asks_percent(question)  # a rate or a share: a percentage answers it
        self.given = {value for term in self.terms for value in term.values}
        self.given |= {f"num:{number_token(v)}" for _, _, v in find_numbers(question)}
        # the key terms written as identifiers ("CLIENT_IPADDR", "CN-CAV-03")
        written = {
            " ".join(_JOINERS.sub(" ", w).split())
            for w in _TOKENS.findall(fold(question))
            if _IDENTIFIER.match(w)
        }
        self.identifiers = [t for t in self.terms if t.text in written]
        self.names_table = names_table(question)  # "in the note's table"

    def states_percent(self, sentence: str) -> bool:
        """A percentage, when the question asks for a rate or a share (False otherwise)."""
        return self.percent and states_percent(sentence)

    def states_value(self, sentence: str) -> bool:
        """A value of the asked kind that the question does not give (True when none is asked)."""
        if self.percent:  # a rate or a share: a year is none
            return states_share(sentence, self.given)
        return self.asked is None or states_value(sentence, self.asked, self.given)

    def answers(
        self, sentence: str, described: Collection[str] = (), headings: str = "", title: str = ""
    ) -> bool:
        """Every key term in the sentence, in its document's title (`title`: it dates and
        places a bare statement, "Northwind Q3 2024 report"), a name in its page's headings
        (`headings`, gate.page_headings: "Prefeitura do Recife"), or among the names that
        describe its document (`described`, gate.document_described: "o Redpaper da IBM
        sobre RCAC"); and a value of the asked kind in the sentence itself. A number on the
        first line of some chunk ("Each group enrolled 15 patients") is no heading's."""
        own, named, titled = Haystack(sentence), Haystack(headings), Haystack(title)
        held = all(
            t.text in described or own.contains(t) or titled.contains(t) or (t.name and named.contains(t))
            for t in self.terms
        )
        return held and self.states_value(sentence)


def answer_status(
    question: str, chosen: Sequence[Candidate], described: dict[tuple[str, int], set[str]] | None = None
) -> AnswerStatus:
    """ "answer" when one chosen sentence states the asked thing, else "passages";
    `described`: per evidence page, the question's names that describe its document."""
    test = AnswerTest(question)
    described = described or {}
    if asks_extreme(question) and not any(ranks(c.sentence) for c in chosen):
        return "passages"  # "Var 12 520 367" names a department, not the one with the most
    held = any(
        test.answers(
            c.sentence,
            described.get((c.page.doc_id, c.page.page_no), ()),
            page_headings(c.page),
            document_names(c.page),
        )
        if c.page
        else test.answers(c.sentence)
        for c in chosen
    )
    return "answer" if held else "passages"


def ranks(sentence: str) -> bool:
    """Whether the sentence ranks what it names (a superlative, "peaked", "followed by")."""
    return any(w in _RANKING for w in _WORDS.findall(fold(sentence)))
