"""Citation checking by code: every [doc_id p.N] in an answer must point at a page that was
sent to the model. Valid ones become structured citations (quote and bbox from the chunk
of that page closest to the claim); the others are flagged, and the answer is then not
`grounded`. A citation to a page outside the evidence is invalid whatever wrote it; markers
a document wrote never get here as citations, they were neutralised (service/answer/markers.py)
before the text went into the prompt."""

from __future__ import annotations

import re

from geo.folding import fold
from service.answer.markers import BRACKET, neutralise, parse
from service.answer.prompting import SentPage
from service.answer.types import Citation, CitationCheck, InvalidCitation

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"\w{3,}")
GRAPH = "graph"


def check(answer: str, sent: list[SentPage]) -> CitationCheck:
    """The citations of `answer`, valid or not, against the pages that were sent."""
    pages = {(p.doc_id, p.page_no): p for p in sent}
    result = CitationCheck()
    seen: set[tuple[str, int]] = set()
    for sentence in _SENTENCE.split(answer):
        marks = parse(sentence)
        claim = BRACKET.sub(" ", sentence).strip()
        if not marks and len(_WORD.findall(claim)) >= 3 and GRAPH not in sentence:
            result.uncited_sentences += 1
        for _, doc_id, page_no in marks:
            key = (doc_id, page_no)
            if key in seen:
                continue
            seen.add(key)
            page = pages.get(key)
            if page is None:
                known = any(d == doc_id for d, _ in pages)
                reason = "page not in the evidence sent" if known else "document not in the evidence sent"
                result.invalid.append(InvalidCitation(doc_id, page_no, reason))
                continue
            quote, bbox = _best_quote(claim, page)
            result.citations.append(Citation(doc_id, page_no, page.title, bbox, quote))
    return result


def _best_quote(claim: str, page: SentPage) -> tuple[str, list[float]]:
    """The sentence of the page (from its retrieved chunks, else its sent text) that shares
    most words with the claim, and its chunk's bbox."""
    claim_words = set(_WORD.findall(fold(claim)))
    sources = [(c.text, c.bbox) for c in page.chunks] or [(page.text, [])]
    best = ("", [], -1.0)
    for text, bbox in sources:
        for sentence in _SENTENCE.split(text):
            sentence = " ".join(sentence.split())
            if len(sentence) < 12:
                continue
            words = set(_WORD.findall(fold(sentence)))
            score = len(words & claim_words) / (len(words) ** 0.5 or 1.0)
            if score > best[2]:
                best = (neutralise(sentence[:600], fragment=True), list(bbox), score)
    return best[0], best[1]
