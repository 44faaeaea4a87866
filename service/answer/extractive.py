"""Extractive answers with citations: a table cell when the question points at one
(service/answer/tables.py), else the best 1-3 sentences of the evidence the relevance gate
(service/answer/gate.py) scored, each cited as [doc_id p.N], with status "passages" when
none of them states the asked thing (service/answer/status.py). The LLM path
(service/answer/llm.py) uses the same gate and returns the same shape.

The table answer is tried before the gate's verdict counts. The gate scores sentences by
embedding cosine, and a table row ("Nagaland · 14.07 · 39.88 · ... · -0.47") embeds far from
any question, so it refuses questions whose answer is one cell of the top page. The table
answerer has its own, stricter tests in place of the gate's two: one clear best row and
column (or line) instead of sentence relevance, and every name, number and code of the
question addressed by the cell's labels, the table's title or its page (values compared
through ingest/values.py, so "18 de agosto de 2017" meets "18-ago-17") instead of the
key-term check. When it has no answer the gate decides as before. When it has one but the
question's content words are not all on the evidence pages, or the pages speak of the
subject in another year only, the answer is a refusal: the table the question names, asked
for a quantity it does not hold ("soja" of the maize table).

The quoted sentences are document text: citation look-alikes in them are neutralised
(service/answer/markers.py), so the only markers of the answer are the ones written here,
and each is checked against the evidence pages all the same.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from geo.folding import fold
from ingest.values import find_numbers
from service.answer.asked import asked_value, asks_identifier, number_asked_at, opens_with_label
from service.answer.conditions import count_condition
from service.answer.content_words import (
    asked_words,
    counted_noun,
    holds_any,
    last_frame_at,
    question_content_words,
    singular,
    translations,
)
from service.answer.gate import (
    Candidate,
    Grade,
    Haystack,
    RelevanceGate,
    dating_context,
    document_described,
    document_names,
    document_phrase,
    key_share,
    key_terms,
    page_headings,
    question_key_terms,
    question_language,
    table_title,
    years_of,
)
from service.answer.map_cards import MapCardAnswer, MapCardAnswerer
from service.answer.markers import cite_label, neutralise, parse
from service.answer.status import AnswerTest, answer_status
from service.answer.tables import (
    COUNT_ASKED,
    PageChunks,
    TableAnswer,
    TableAnswerer,
    evidence_tables,
    names_table,
)
from service.answer.types import Answer, AnswerStatus, Citation, InvalidCitation
from service.query.decompose import decompose
from service.query.types import PageEvidence, SearchResult


class ExtractiveAnswerer:
    """Answers from a table cell or the gate's best sentences, or refuses when the gate does."""

    def __init__(self, gate: RelevanceGate, max_sentences: int = 3) -> None:
        self.gate = gate
        self.max_sentences = max_sentences
        self.tables = TableAnswerer()
        self.cards = MapCardAnswerer()

    def answer(self, question: str, result: SearchResult, page_chunks: PageChunks | None = None) -> Answer:
        """The answer composed from the evidence, or the gate's refusal. `page_chunks` reads
        an evidence page's stored chunks: the rows of its table the search left out. A
        question in parts (service/query/decompose.py) answered as a whole gets the answer of
        each part its answer lacks (with_parts)."""
        whole = self._answer(question, result, page_chunks)
        parts = [p for p in decompose(question) if stands_alone(p)]
        if whole.refused or not 2 <= len(parts) <= MAX_PARTS:
            return whole
        return with_parts(whole, [self._answer(part, result, page_chunks) for part in parts])

    def _answer(self, question: str, result: SearchResult, page_chunks: PageChunks | None = None) -> Answer:
        """The answer to one question from the evidence, or the gate's refusal."""
        grade = self.gate.grade(question, result)
        pages = grade.pages
        place = result.named_place or result.geo_filter or result.geo_prior
        card = self.cards.answer(question, grade.language, pages, place)
        if card is not None:  # a map's CRS, extent or size: the card line that holds it
            return self._from_card(question, result, grade, card)
        # a question naming a table reads the tables of every page returned: the dosing table
        # on the fourth page, below three pages of prose on the same drugs
        read = (
            pages + [p for p in result.pages if all(p is not q for q in pages)]
            if names_table(question)
            else pages
        )
        table = self.tables.answer(question, grade.language, read, page_chunks)
        # a word that only qualifies the table's labels, in either number ("vários tipos", "do tipo")
        qualifiers = {singular(w) for w in table.qualifiers} if table is not None else set()
        absent = [w for w in grade.absent_words if singular(w) not in qualifiers]
        if (
            table is not None
            and (absent or grade.other_year or [w for w in table.unaddressed if w not in table.qualifiers])
            and not self._row_by_code(question, grade, table)
            and not self._across_languages(grade, table, result)
        ):
            # the table the question names, asked for something it does not hold: the maize
            # table's area cell does not answer a question about soy ("soja" on no evidence
            # page, or on an English page only while the table's page speaks Portuguese)
            if absent or grade.other_year or not grade.passed:
                return self.gate.refusal(question, result, grade)
            # only the table's page lacks a word the other evidence holds ("material" on the
            # next page): the table is not what was asked, the gate's sentences may be
            table = None
        if table is not None and table.operation == "no_value":
            return self._no_value(question, result, grade, table)  # the cell reads "-": a refusal
        if table is not None:
            return self._from_table(question, result, grade, table)
        if not grade.passed:
            return self.gate.refusal(question, result, grade)
        if (role := asked_role(question)) and all(w in grade.absent_words for w in role):
            # "Quem é o coordenador da COMON que assina o boletim?": no evidence page names the
            # role asked, so no sentence there says who holds it
            return self.gate.refusal(question, result, grade)
        # passed on stating sentences (a row, a "label: value" line), those are what to quote
        candidates = grade.stated or grade.candidates
        rank = quote_rank(question, self.gate.params.keys_weight, pages)
        ranked = sorted(candidates, key=lambda c: -rank(c))
        contact = asked_contact(question)
        holding = [c for c in grade.candidates if contact.search(c.sentence)] if contact is not None else []
        if holding:  # "which e-mail address does the bulletin give?": the lines that hold one
            holding.sort(key=lambda c: -rank(c))
            return self._quoted(question, result, grade, _dedupe(holding)[: self.max_sentences], "answer")
        # a title or heading holds the question's names but states nothing: quote statements
        pool = [c for c in ranked if not title_like(c.sentence)] or ranked
        chosen = _dedupe(of_asked_years(question, choose(question, pool, rank)))[: self.max_sentences]
        if of_other_seasons(question, chosen):
            # "a área ... na safra 15/16" over the rows of the "Área 16/17 (ha)" line
            return self.gate.refusal(question, result, grade)
        test = AnswerTest(question)
        of_quantity = self._of_asked_quantity(question, test, grade, pool, rank, chosen)
        if of_quantity is None:
            return self.gate.refusal(question, result, grade)
        chosen = of_quantity
        described = document_described(
            question_key_terms(question), grade.candidates, phrase=document_phrase(question)
        )
        status = answer_status(question, chosen, described)
        if status == "answer" and counts_rows(question) and all(c.chunk.table is not None for c in chosen):
            # "how many states have a total above 40,000,000": the table answerer counted none,
            # and a row stating some value is no count of the rows meeting the condition
            status = "passages"
        if status == "passages" and rows_lack_asked_value(question, chosen, pages, page_chunks):
            # the nearest rows of a table that has no row for the asked case ("12 g" of a
            # table stopping at 10 g): listing them would answer another question
            return self.gate.refusal(question, result, grade)
        if status == "passages" and not any(
            test.states_value(c.sentence) and names_held(test, c, described) for c in chosen
        ):
            # asked for a number or a date, the passages hold none: the lower-ranked sentences
            # that state one, in a passage holding every key term, are quoted instead ("São 3
            # dragas no total" under the canal's line); without any ("What TEDs score did
            # OTSL reach?" over "keeping high TEDs ...") there is nothing to read it from. A
            # value in a passage that names none of the question's places or subjects is
            # another case's ("No máximo, 200" of the E. coli thresholds, asked for Porto da
            # Barra's count): it counts as no value
            top, counted = rank(pool[0]), counted_noun(question)
            valued = [
                c
                for c in pool
                if test.states_value(c.sentence)
                and rank(c) >= VALUE_REACH * top
                and (c.words >= VALUED_WORDS or (counted and counted in fold(c.sentence)))
                and names_held(test, c, described, every_term=True)
            ]
            if not valued:
                return self.gate.refusal(question, result, grade)
            chosen = _dedupe(of_asked_years(question, valued))[: self.max_sentences]
        return self._quoted(question, result, grade, chosen, status)

    @staticmethod
    def _quoted(
        question: str, result: SearchResult, grade: Grade, chosen: list[Candidate], status: AnswerStatus
    ) -> Answer:
        """The chosen sentences quoted, each cited as [doc_id p.N]."""
        parts, citations = [], []
        for cand in chosen:
            quote = neutralise(cand.sentence, fragment=True)
            parts.append(f"{quote} {cite_label(cand.page.doc_id, cand.page.page_no)}")
            page = cand.page
            citations.append(Citation(page.doc_id, page.page_no, page.title, cand.chunk.bbox, quote))
        text = " ".join(parts)
        invalid = outside_evidence(text, result)
        best = max(grade.stated or grade.candidates, key=lambda c: c.score)
        return Answer(
            question,
            text,
            grade.language,
            grounded=not invalid,
            refused=False,
            citations=citations,
            evidence=result.pages,
            relevance=round(best.score, 4),
            invalid_citations=invalid,
            status=status,
        )

    def _of_asked_quantity(
        self,
        question: str,
        test: AnswerTest,
        grade: Grade,
        pool: list[Candidate],
        rank: Rank,
        chosen: list[Candidate],
    ) -> list[Candidate] | None:
        """The sentences to quote for a number question, read for the quantity it asks
        (asked_quantity): the chosen ones when a passage of theirs names it, else the
        lower-ranked ones whose passage names it and that state a value. None (a refusal)
        when the quantity is on no evidence page or no such sentence is left: the pages give
        another quantity of the subject ("puissance crête" of a plant the study gives no
        figure for; the maize table's area row, asked for its yield; the polarisation data,
        asked at what temperature the tests ran)."""
        asked = asked_quantity(question)
        if any(w in grade.absent_words for w in asked):
            return None
        if not asked or any(speaks_of(asked, c) for c in chosen):
            return chosen
        top = rank(pool[0])
        named = [
            c
            for c in pool
            if speaks_of(asked, c)
            and rank(c) >= VALUE_REACH * top
            and c.words >= VALUED_WORDS
            and test.states_value(c.sentence)
        ]
        return _dedupe(named)[: self.max_sentences] or None

    def _row_by_code(self, question: str, grade: Grade, table: TableAnswer) -> bool:
        """Whether the table answer reads the row an identifier of the question names, with
        most of the question's content words on the pages: "o valor da multa do auto de
        infração 679199" is the row of A.I. 679199, though the table writes "Nº A.I." and
        never "auto". An identifier is a bare number of 5+ digits or a word mixing letters
        and digits ("EST-08"); a year asked elsewhere still refuses."""
        if grade.other_year or grade.word_coverage < self.gate.params.min_word_coverage:
            return False
        codes = [w for w in _TOKEN.findall(question) if _is_code(w)]
        read = " ".join([table.text, *(c.quote for c in table.citations)]).casefold()
        return any(code.casefold() in read for code in codes)

    def _across_languages(self, grade: Grade, table: TableAnswer, result: SearchResult) -> bool:
        """Whether the content words missing from the pages are the question's own language's
        words for a table in another ("desvio" over the IMD table's "% DEP."): the table's page
        is written in another language than the question, and every absent word translates
        (glossary) to a word of the cells read or their labels, or one they abbreviate ("dep");
        "soybean" over the maize table is still refused. A year asked elsewhere refuses."""
        if grade.other_year or not grade.absent_words or not table.citations:
            return False
        cited = table.citations[0]
        page = next((p for p in result.pages if (p.doc_id, p.page_no) == (cited.doc_id, cited.page_no)), None)
        if page is None:
            return False
        text = " ".join(c.text for c in page.chunks)
        if question_language(text) == grade.language:
            return False
        read = {w for c in table.citations for w in re.findall(r"\w{3,}", fold(c.quote))}
        return all(
            any(t == r or t.startswith(r) for t in translations(w) - {w} for r in read)
            for w in grade.absent_words
        )

    def _no_value(self, question: str, result: SearchResult, grade: Grade, table: TableAnswer) -> Answer:
        """A refusal that says why: the asked cell of the table reads "-" (no value given)."""
        refusal = self.gate.refusal(question, result, grade)
        refusal.answer = f"{refusal.answer} {table.text}"
        refusal.citations = table.citations
        return refusal

    @staticmethod
    def _from_card(question: str, result: SearchResult, grade: Grade, card: MapCardAnswer) -> Answer:
        return _read_answer(question, result, grade, card.text, card.citations)

    @staticmethod
    def _from_table(question: str, result: SearchResult, grade: Grade, table: TableAnswer) -> Answer:
        return _read_answer(question, result, grade, table.text, table.citations)


MAX_PARTS = 3  # a question in more parts is a list, answered as a whole


def stands_alone(part: str) -> bool:
    """Whether a part of a question says what it asks about: a key term or two content
    words of its own. "e em que forma?", "e o que ela informa?" lean on the part before
    them, which the whole question's answer already reads; so does a part whose asking
    refers back by a pronoun ("... que percentual do total ela representa")."""
    asking = part.rsplit(": ", 1)[-1]  # the planner puts the shared context before ": "
    if _REFERS_BACK.search(fold(asking)) and not key_terms(asking):
        return False
    terms = key_terms(part)
    return bool(terms) or len(question_content_words(part, terms)) >= 2


# pronouns a part of a question refers back to the part before it with
_REFERS_BACK = re.compile(
    r"\b(?:ela|ele|elas|eles|dela|dele|delas|deles|it|its|they|their|them|elle|elles|ils|leur)\b"
)


def with_parts(whole: Answer, parts: list[Answer]) -> Answer:
    """The whole question's answer followed by the answers of its parts that say what it
    does not: "Quantos pontos de alagamento o Recife registrou em 2024 e qual bairro teve
    mais?" answered by the count's sentence gets the table's argmax after it. Only parts
    answered as answers (no passages, no refusal) from a page the whole answer does not
    cite: a part read off the same page is mostly the whole's answer again, or a row of its
    table beside it ("Regiões do IMEA: 30-jun-17 · ..."). The status is "answer" when every
    part was one."""
    cited = {(c.doc_id, c.page_no) for c in whole.citations}
    added: list[Answer] = []
    for part in parts:
        pages = {(c.doc_id, c.page_no) for c in part.citations}
        if part.status == "answer" and pages and not pages & cited:
            added.append(part)
            cited |= pages
    if not added:
        return whole
    return dataclasses.replace(
        whole,
        answer=" ".join([whole.answer, *(p.answer for p in added)]),
        citations=[*whole.citations, *(c for p in added for c in p.citations)],
        grounded=whole.grounded and all(p.grounded for p in added),
        invalid_citations=[*whole.invalid_citations, *(i for p in added for i in p.invalid_citations)],
        status="answer" if all(p.status == "answer" for p in parts) else whole.status,
    )


def _read_answer(
    question: str, result: SearchResult, grade: Grade, text: str, citations: list[Citation]
) -> Answer:
    """An answer read from structured evidence (a table's cells, a map card's line)."""
    invalid = outside_evidence(text, result)
    return Answer(
        question,
        text,
        grade.language,
        grounded=not invalid,
        refused=False,
        citations=citations,
        evidence=result.pages,
        relevance=grade.relevance,
        invalid_citations=invalid,
        status="answer",
    )


_TOKEN = re.compile(r"[\w][\w-]*[\w]|\w", re.UNICODE)


def asked_quantity(question: str) -> list[str]:
    """The words naming the quantity a question asks for ("temperature", "produtividade",
    "plots" of "how many plots"), when it asks for a number other than an identifier. A
    "which" or "what" question naming a kind ("which month", "what strength of
    recommendation") is answered by an instance of it, which need not repeat the kind."""
    if asked_value(question) != "number" or asks_identifier(question):
        return []
    if last_frame_at(question) not in (None, number_asked_at(question)):
        # the number is asked first, a name last ("How long ago ..., and in which lab?", "how
        # many of the listed antivirals ..., and which ones?"): the rows or sentences that
        # answer name instances, not the kind; no one word must be in the passage
        return []
    return asked_words(question, key_terms(question))


# A contact asked by its kind, and how one is written: the answer is a line holding one
_CONTACTS = (
    (
        re.compile(r"\b(?:e-?mail|endereco eletronico|courriel|adresse electronique|correo electronico)\b"),
        re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    ),
    (
        re.compile(
            r"\b(?:website|web site|web page|url|site web|site internet|pagina na internet"
            r"|endereco na internet)\b"
        ),
        re.compile(r"\bhttps?://\S+|\bwww\.[\w-]+(?:\.[\w-]+)+"),
    ),
    (
        re.compile(r"\b(?:phone|telephone|telefone|fone|telefono)\b"),
        re.compile(r"(?:\+?\d[\d ().-]{6,}\d)"),
    ),
)


def asked_contact(question: str) -> re.Pattern[str] | None:
    """How the contact the question asks for is written (an e-mail address, a web address, a
    phone number), when it asks for one by its kind; None otherwise."""
    folded = fold(question)
    return next((written for asks, written in _CONTACTS if asks.search(folded)), None)


_ASKS_PERSON = re.compile(r"^\W*(?:who|quem|qui|quien)\b")


def asked_role(question: str) -> list[str]:
    """The words naming the role a "who" question asks the holder of ("coordenador" of "Quem
    é o coordenador da COMON?"); [] for any other question."""
    if not _ASKS_PERSON.match(fold(question)):
        return []
    return asked_words(question, key_terms(question), first=True)


def speaks_of(asked: list[str], cand: Candidate) -> bool:
    """Whether the candidate's passage (its chunk, with its table's title) holds one of the
    words naming what the question asks for (content_words.asked_words)."""
    return holds_any(asked, f"{table_title(cand.chunk)}\n{cand.chunk.text}")


def counts_rows(question: str) -> bool:
    """Whether the question counts the rows meeting a condition ("how many states ... above
    40,000,000", "quantos estados ... diferente de zero")."""
    return bool(COUNT_ASKED.search(fold(question))) and count_condition(question) is not None


def names_held(
    test: AnswerTest, cand: Candidate, described: dict[tuple[str, int], set[str]], every_term: bool = False
) -> bool:
    """Whether the candidate's passage, its page's headings or its document's names hold every
    name of the question (`every_term`: every key term, numbers and dates too); the sentence
    itself may lean on its paragraph for the subject, and on its document for the source
    ("one of the RCAC Redpaper authors": the Redpaper is the document)."""
    page, own = cand.page, Haystack(cand.chunk.text)
    named = Haystack(page_headings(page) if page else "")
    given = described.get((page.doc_id, page.page_no), set()) if page else set()
    return all(
        t.text in given or own.contains(t) or named.contains(t) for t in test.terms if t.name or every_term
    )


def _is_code(word: str) -> bool:
    """A bare number of 5+ digits (an A.I., a protocol) or a word of letters and digits."""
    digits = sum(ch.isdigit() for ch in word)
    return (digits == len(word) and digits >= 5) or (
        0 < digits < len(word) and any(ch.isalpha() for ch in word)
    )


QUOTE_REACH = 0.85  # passages: the sentences scoring this share of the best one
ANSWER_REACH = 0.7  # a sentence that states the asked thing is quoted down to this share
VALUE_REACH = 0.5  # passages for a value question: those stating one, down to this share of the best
VALUED_WORDS = 0.5  # ...holding this share of its content words, or the noun it counts


# the weight of the share of the question's content words in a sentence, when quotes are ranked
SUBJECT_WEIGHT = 0.3
SPECIFIC_WEIGHT = 0.3  # ...and of the key terms no heading of the document holds

Rank = Callable[[Candidate], float]


def quote_rank(question: str, keys_weight: float, pages: list[PageEvidence]) -> Rank:
    """How the sentences to quote are ranked: cosine, the key terms counted with the page's
    title and headings, the share of the subject's content words, and the share of the key
    terms that no heading of the document's evidence pages holds that the sentence holds
    itself. The gate's score counts key terms in the sentence alone, so a running header or
    a summary line repeating the document's names ("Northwind Analytics — Q3 2024 ... Page 1
    of 4", "This IBM Redpaper publication provides information about RCAC") outranks the line
    that states the asked thing without them ("• Operating margin: 18.4%"): names in the
    headings date and place every sentence of their document alike, while a name only some
    lines hold ("Açude de Apipucos") and what the sentence speaks of tell them apart."""
    terms = question_key_terms(question)
    headings: dict[str, list[str]] = {}
    for page in pages:
        headings.setdefault(page.doc_id, []).append(page_headings(page))
    naming = document_phrase(question)  # "the IBM Redpaper on RCAC": names of the document too
    own = {  # per document: the key terms no heading of its evidence pages holds
        doc_id: [t for t in terms if not Haystack("\n".join([*texts, naming])).contains(t)]
        for doc_id, texts in headings.items()
    }

    def rank(cand: Candidate) -> float:
        specific = own.get(cand.page.doc_id, terms) if cand.page is not None else terms
        return (
            cand.cosine
            + keys_weight * max(cand.keys, cand.context_keys)
            + SUBJECT_WEIGHT * cand.words
            + SPECIFIC_WEIGHT * key_share(specific, cand.sentence)
        )

    return rank


def choose(question: str, ranked: list[Candidate], rank: Rank | None = None) -> list[Candidate]:
    """The sentences to quote, best first, from candidates ranked by `rank` (quote_rank; the
    gate's score by default). The best-ranked sentence often only restates the question ("The
    average cost incurred for each lost record ..." without the figure), while one a little
    lower states it: the sentences that
    hold every key term and a value of the asked kind (service/answer/status.py) are quoted
    alone when one scores near the best, so the answer carries the fact and cites only pages
    that state it; only for questions that ask for a value (a "which" question's answer
    need not hold its key terms). Otherwise, among the sentences near the best, those that state a value of
    the asked kind go first."""
    if not ranked:
        return []
    rank = rank or (lambda c: c.score)
    best = rank(ranked[0])
    test = AnswerTest(question)
    near = [c for c in ranked if rank(c) >= best * QUOTE_REACH]
    if test.asked is None:  # key terms alone do not make a sentence the answer ("qual bairro")
        return beside_lead(test, near)
    # the answering sentences reach down from the gate's best score: a line holding the key
    # terms only through its page's headings is not an answer for being near in rank
    top_score = max(c.score for c in ranked)
    reach = [c for c in ranked if c.score >= top_score * ANSWER_REACH]
    answering = [c for c in reach if _answers(test, c)]
    # asked for a rate or a share, the sentences stating a percentage answer it ("an SVR rate
    # of around 52%"), not the one beside them giving the treatment's weeks
    rated = [c for c in answering if test.states_percent(c.sentence)]
    answering = rated or answering
    top = ranked[0]
    if answering and test.states_value(top.sentence) and (not rated or test.states_percent(top.sentence)):
        # a sentence holding every key term but less of the subject than the best-ranked one,
        # which states a value, repeats the document's names ("This IBM Redpaper publication
        # ... IBM i 7.2" beside "the average cost ... increased to $145 per record")
        answering = [c for c in answering if c.words >= top.words] or [top]
    if answering:
        # of those, the ones that speak most of the question's subject ("Active customers reached
        # 3,412" before a product row holding the report's name, its quarter and "active
        # accounts"), closest first: their key terms all hold, so the keys bonus no longer ranks
        most = max(c.words for c in answering)
        return beside_lead(test, sorted((c for c in answering if c.words >= most), key=lambda c: -c.cosine))
    valued = [c for c in near if test.states_value(c.sentence)]
    return beside_lead(test, valued + [c for c in near if all(c is not v for v in valued)])


def of_asked_years(question: str, chosen: list[Candidate]) -> list[Candidate]:
    """The chosen sentences less those dated to other years than the question asks, when
    one is left: "la puissance raccordée dans l'Union européenne ... en 2018" is not quoted
    beside "le volume raccordé au dernier trimestre de l'année 2020 représente 183 MW" for
    what was connected in the last months of 2020."""
    asked = years_of(question)
    if not asked:
        return chosen
    dated = [c for c in chosen if not _dated_elsewhere(c, asked)]
    return dated or chosen


# a season written as two years ("safra 15/16", "2015/16", "2015/2016")
_SEASON = re.compile(r"(?<![\d/])(\d{2}|\d{4})/(\d{2}|\d{4})(?![\d/])")


def seasons_of(text: str) -> set[str]:
    """The seasons a text names, as "15/16": two consecutive years ("10/07", a day and a
    month, and "20/25", a ratio, are none)."""
    out = set()
    for first, second in _SEASON.findall(text):
        a, b = int(first[-2:]), int(second[-2:])
        if b == (a + 1) % 100:
            out.add(f"{a:02d}/{b:02d}")
    return out


def of_other_seasons(question: str, chosen: list[Candidate]) -> bool:
    """Whether the question asks a season and every chosen sentence names other seasons
    only, itself or by its table's title or heading: the 16/17 area row quoted for the 15/16
    season is another season's figure."""
    asked = seasons_of(question)
    if not asked or not chosen:
        return False
    # a row naming no season is of its table's ("MILHO SAFRA 16/17: ACOMPANHAMENTO ...")
    named = [
        seasons_of(c.sentence) or seasons_of(f"{dating_context(c)}\n{table_title(c.chunk)}") for c in chosen
    ]
    return all(n and not n & asked for n in named)


def _dated_elsewhere(cand: Candidate, asked: set[int]) -> bool:
    """Whether a sentence states years, none of them asked, and neither its page title nor its
    chunk's heading line dates it to an asked one ("214 pontos ... uma redução de 12,7% em
    relação a 2023" in the report of 2024 is of 2024)."""
    years = years_of(cand.sentence)
    if not years or years & asked:
        return False
    return not years_of(dating_context(cand)) & asked


def beside_lead(test: AnswerTest, chosen: list[Candidate]) -> list[Candidate]:
    """The sentences to quote after the first: when it holds every key term in its own
    words ("Em 2024, o Recife registrou 2.345 mm"), it is a whole statement, and a sentence
    of another page that holds them only through that page's headings states another case
    of them ("entre abril e julho ... 1.405 mm" on the next page) and cites a page without
    the fact; the first's own page may add to it."""
    chosen = _on_the_identified_row(test, chosen)
    if not chosen or not test.terms or not test.answers(chosen[0].sentence):
        return chosen
    lead = chosen[0]
    return [lead, *(c for c in chosen[1:] if c.page is lead.page or test.answers(c.sentence))]


def _on_the_identified_row(test: AnswerTest, chosen: list[Candidate]) -> list[Candidate]:
    """When a table row among the sentences holds every identifier of the question
    ("CLIENT_IPADDR", "CN-CAV-03"), the sentences without them are left out: "IBM DB2 for i
    supports nine built-in global variables" says nothing of the one asked, and cites a page
    without it. A question asking for a table's value ("in the note's table") is answered by
    the rows holding its key terms, when there are some, not by the prose beside them."""
    if test.identifiers:
        holding = [c for c in chosen if all(Haystack(c.sentence).contains(t) for t in test.identifiers)]
        if any(c.chunk.table is not None for c in holding):
            chosen = holding
    if test.names_table and test.terms:
        rows = [
            c
            for c in chosen
            if c.chunk.table is not None
            and all(Haystack(c.sentence).contains(t) for t in test.terms if t.name)
        ]
        chosen = rows or chosen
    return chosen


def rows_lack_asked_value(
    question: str, chosen: list[Candidate], pages: list[PageEvidence], page_chunks: PageChunks | None
) -> bool:
    """Whether the sentences to quote are all rows of tables, and a number, date or period
    of the question is in none of those tables (cells, labels, title) nor their document's
    title: the table has no row for the asked case ("8 encoder layers" of a table of 6, 4
    and 2), so its nearest rows state other cases. The page's prose does not count ("heads=8"
    under the table): it is not what the rows are quoted from."""
    if not chosen or any(c.chunk.table is None or c.page is None for c in chosen):
        return False
    values = [t for t in question_key_terms(question) if t.values]
    if not values:
        return False
    quoted = {(c.page.doc_id, c.page.page_no) for c in chosen}
    texts = [c.sentence for c in chosen]
    for table in evidence_tables([p for p in pages if (p.doc_id, p.page_no) in quoted], page_chunks):
        texts += [table.title, document_names(table.page), *table.columns]
        texts += [cell.text for row in table.rows for cell in row]
    hay = Haystack("\n".join(texts))
    return any(not hay.contains(t) for t in values)


def _answers(test: AnswerTest, cand: Candidate) -> bool:
    """Whether the sentence states the asked thing: the key terms in it or in its page's
    title and headings, which date and place a bare statement ("Relatório Ambiental Municipal
    2024", "Prefeitura do Recife"), and a value of the asked kind in the sentence itself."""
    # the choice counts every key term of the headings (numbers too), the status names only
    return test.answers(cand.sentence, title=page_headings(cand.page) if cand.page else "")


def outside_evidence(text: str, result: SearchResult) -> list[InvalidCitation]:
    """The markers of `text` that point at no evidence page (none, unless a quote slipped
    one past `neutralise`): a citation outside the evidence is invalid whoever wrote it."""
    pages = {(p.doc_id, p.page_no) for p in result.pages}
    docs = {doc_id for doc_id, _ in pages}
    invalid: list[InvalidCitation] = []
    for _, doc_id, page_no in parse(text):
        known = any((c.doc_id, c.page_no) == (doc_id, page_no) for c in invalid)
        if (doc_id, page_no) not in pages and not known:
            reason = "page not in the evidence" if doc_id in docs else "document not in the evidence"
            invalid.append(InvalidCitation(doc_id, page_no, reason))
    return invalid


_TITLE_WORDS = 12  # a line this short without a sentence's end reads as a title or heading


def title_like(sentence: str) -> bool:
    """A report title, running header, section heading or chart caption rather than a
    statement: short, and not ended like a sentence ("Northwind Analytics — Q3 2024
    Quarterly Report", "Precipitação mensal em Recife 2024 (mm)")."""
    text = sentence.strip()
    if any(_states_value(v) for _, _, v in find_numbers(text)):  # "Parque da Jaqueira (-8,0375; ...)"
        return False
    if opens_with_label(text) and len(text.split()) <= _CAPTION_WORDS:
        return True  # "Tabela 1 — Qualidade da água por estação", "Chapter 2: Causes of Climate Change"
    if ": " in text or " = " in text:  # "Praia de Boa Viagem: 8°07'11"S 34°53'49"W" states a value
        return False
    return len(text.split()) <= _TITLE_WORDS and not text.endswith((".", "!", "?", ";", ":", "%"))


_CAPTION_WORDS = 30  # longer, it goes on to say something


def _states_value(value: float) -> bool:
    """A number a title would not carry: a fraction, or a large one that is not a year
    (titles hold years, quarters, issue and section numbers)."""
    if value != int(value):
        return True
    return abs(value) >= 100 and not 1900 <= value <= 2100


def _dedupe(cands: list[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for c in cands:
        key = c.sentence.lower()
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
