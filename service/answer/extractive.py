"""Extractive answers with citations: the best 1-3 sentences of the evidence the relevance
gate (service/answer/gate.py) scored, each cited as [doc_id p.N]. The LLM path
(service/answer/llm.py) uses the same gate and returns the same shape.
"""

from __future__ import annotations

from service.answer.gate import Candidate, RelevanceGate
from service.answer.types import Answer, Citation
from service.query.types import SearchResult


class ExtractiveAnswerer:
    """Answers from the gate's best sentences, or refuses when the gate does."""

    def __init__(self, gate: RelevanceGate, max_sentences: int = 3) -> None:
        self.gate = gate
        self.max_sentences = max_sentences

    def answer(self, question: str, result: SearchResult) -> Answer:
        """The answer composed from the evidence, or the gate's refusal."""
        grade = self.gate.grade(question, result)
        if not grade.passed:
            return self.gate.refusal(question, result, grade)
        language, candidates = grade.language, grade.candidates
        best = max(candidates, key=lambda c: c.score)
        chosen = [c for c in sorted(candidates, key=lambda c: -c.score) if c.score >= best.score * 0.85]
        chosen = _dedupe(chosen)[: self.max_sentences]
        parts, citations = [], []
        for cand in chosen:
            parts.append(f"{cand.sentence} [{cand.page.doc_id} p.{cand.page.page_no}]")
            citations.append(
                Citation(cand.page.doc_id, cand.page.page_no, cand.page.title, cand.chunk.bbox, cand.sentence)
            )
        return Answer(
            question,
            " ".join(parts),
            language,
            grounded=True,
            refused=False,
            citations=citations,
            evidence=result.pages,
            relevance=round(best.score, 4),
        )


def _dedupe(cands: list[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for c in cands:
        key = c.sentence.lower()
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
