"""The relevance gate: is the retrieved evidence strong enough to answer from?

It grades the evidence before anything is composed, by the extractive answerer or by an
LLM, and refuses honestly when a key term of the question (a name, a number, a code)
occurs nowhere in the evidence pages, or when no sentence is close enough to the question
(embedding cosine, helped by the share of the question's BM25 stems it contains). The
sentences it scored are the extractive answerer's candidates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from geo.folding import fold
from models.sparse_encoder import SparseEncoder
from models.text_encoder import TextEncoder
from service.answer.types import Answer
from service.query.types import ChunkEvidence, PageEvidence, SearchResult

EMBED_CHARS = 300
NOT_FOUND = {
    "en": "Not found in the indexed documents.",
    "pt": "Não encontrado nos documentos indexados.",
}
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[\w][\w./-]*[\w]|\w", re.UNICODE)
_PT_WORDS = frozenset(
    [
        "que",
        "qual",
        "quais",
        "quanto",
        "quantos",
        "quanta",
        "quantas",
        "onde",
        "como",
        "quando",
        "porque",
        "por",
        "são",
        "não",
        "em",
        "no",
        "na",
        "nos",
        "nas",
        "do",
        "da",
        "dos",
        "das",
        "de",
        "para",
        "um",
        "uma",
        "os",
        "as",
        "teve",
        "foi",
        "é",
        "mais",
        "segundo",
        "sobre",
        "qual",
        "houve",
    ]
)
_EN_WORDS = frozenset(
    [
        "the",
        "what",
        "which",
        "how",
        "when",
        "where",
        "who",
        "whom",
        "is",
        "was",
        "were",
        "are",
        "of",
        "in",
        "on",
        "did",
        "does",
        "do",
        "and",
        "to",
        "for",
        "many",
        "much",
        "according",
        "by",
        "with",
    ]
)


def key_terms(question: str) -> list[str]:
    """Words the evidence must contain: names (capitalised, not sentence-initial),
    numbers and codes (anything with a digit)."""
    words = _WORD.findall(question)
    keys = []
    for i, word in enumerate(words):
        if any(ch.isdigit() for ch in word) or (i > 0 and word[0].isupper() and len(word) > 2):
            keys.append(fold(word))
    return keys


def missing_key_terms(question: str, evidence_texts: list[str]) -> list[str]:
    haystack = fold(" ".join(evidence_texts))
    return [k for k in key_terms(question) if k not in haystack]


def question_language(question: str) -> str:
    """'pt' or 'en', from function words and accents (enough to pick the refusal text)."""
    words = [w.lower() for w in _WORD.findall(question)]
    pt = sum(w in _PT_WORDS for w in words) + sum(ch in "ãõçâêô" for ch in question.lower())
    en = sum(w in _EN_WORDS for w in words)
    return "pt" if pt > en else "en"


@dataclass
class Grade:
    """The gate's verdict, with the sentences it scored."""

    language: str
    relevance: float  # the best sentence's score
    passed: bool
    candidates: list[Candidate]


@dataclass
class Candidate:
    """One evidence sentence and how close it is to the question."""

    sentence: str
    chunk: ChunkEvidence
    page: PageEvidence
    cosine: float = 0.0
    overlap: float = 0.0
    keys: float = 0.0  # share of the question's key terms (names, numbers, codes) in the sentence

    @property
    def score(self) -> float:
        return self.cosine + 0.25 * self.overlap + 0.3 * self.keys


class RelevanceGate:
    """Grades a search result against the question (service/answer/extractive.py and
    service/answer/llm.py both answer only when it passes)."""

    def __init__(
        self,
        text: TextEncoder,
        sparse: SparseEncoder,
        min_relevance: float = 0.3,
        evidence_pages: int = 3,
        max_embedded: int = 32,
    ) -> None:
        self.text = text
        self.sparse = sparse
        self.min_relevance = min_relevance
        self.evidence_pages = evidence_pages
        self.max_embedded = max_embedded

    def grade(self, question: str, result: SearchResult) -> Grade:
        """The relevance gate: is the evidence strong enough to answer from (here or by an LLM)?"""
        candidates = self._score(question, self._candidates(result.pages[: self.evidence_pages]), result)
        best = max(candidates, key=lambda c: c.score, default=None)
        page_texts = [c.text for p in result.pages[: self.evidence_pages] for c in p.chunks]
        passed = best is not None and self._relevant(best) and not missing_key_terms(question, page_texts)
        return Grade(question_language(question), round(best.score, 4) if best else 0.0, passed, candidates)

    def refusal(self, question: str, result: SearchResult, grade: Grade) -> Answer:
        """The honest "not found" answer, in the question's language."""
        return Answer(
            question,
            NOT_FOUND[grade.language],
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
        keys = key_terms(question)
        for cand, terms in zip(candidates, doc_terms, strict=True):
            cand.overlap = _overlap(query_terms, terms)
            if keys:
                folded = fold(cand.sentence)
                cand.keys = sum(k in folded for k in keys) / len(keys)
        # stable sort: ties keep retrieval order (best page, best chunk first)
        kept = sorted(candidates, key=lambda c: -(c.overlap + c.keys))[: self.max_embedded]
        # the head of a sentence carries its meaning; long table rows would cost ~0.03 s each
        vectors = self.text.embed([c.sentence[:EMBED_CHARS] for c in kept])
        for cand, cos in zip(kept, vectors @ np.asarray(result.query_vector, dtype=np.float32), strict=True):
            cand.cosine = float(cos)
        return kept

    def _relevant(self, best: Candidate) -> bool:
        return best.cosine >= self.min_relevance or (
            best.overlap >= 0.5 and best.cosine >= self.min_relevance / 2
        )

    @staticmethod
    def _candidates(pages: list[PageEvidence]) -> list[Candidate]:
        out = []
        for page in pages:
            for chunk in page.chunks[:4]:
                for sentence in _SENTENCE.split(chunk.text):
                    sentence = " ".join(sentence.split())
                    if len(sentence) >= 12:
                        out.append(Candidate(sentence[:600], chunk, page))
        return out


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
