"""Query planning: route the question (service/query/router.py), then, for a multi-hop
question, a bounded loop: retrieve the whole question and each sub-question, check which of
the question's key terms (names, codes, numbers, dates) no retrieved page contains yet, and
retrieve again for those, until every term is covered or a step or token limit is reached.

The whole question's ranking is kept, with the best pages of the other steps (the searches
for missing terms first, then the sub-questions', then their translations) woven in near
the top, taking at most half of the top k (merge_steps): the page a part needs is not
crowded out by the pages the whole question ranks first, and what the single-shot search
ranks high stays. Every step goes
into the plan trace (SearchResult.plan), which the search and ask responses carry.
CARTA_PLANNER=auto turns it on (service/carta.py).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from geo.folding import fold
from models.llm_client import LLMClient
from service.answer.gate import absent_key_terms, question_language
from service.query.router import Route, llm_route, rules_route
from service.query.translate import translate
from service.query.types import PageEvidence, SearchQuery, SearchResult

TRACE_PAGES = 5  # pages listed per step in the trace


@dataclass(frozen=True)
class PlannerLimits:
    """How far one planned search may go."""

    max_steps: int = 6  # searches, the whole question's included
    max_tokens: int = 12000  # evidence tokens read by the coverage checks, plus LLM routing tokens


def page_text(page: PageEvidence) -> str:
    """What a page's evidence says: its excerpt and its retrieved chunks."""
    return "\n".join([page.excerpt, *(c.text for c in page.chunks)])


def tokens_of(text: str) -> int:
    """A token estimate (4 characters a token), enough for a budget."""
    return (len(text) + 3) // 4


WORDING_RRF_K = 60  # reciprocal-rank constant for the rankings of one question's wordings


def fuse_wordings(rankings: list[list[PageEvidence]], top_k: int) -> list[PageEvidence]:
    """One ranking from the rankings of the same question in several wordings (the question
    and its translation): reciprocal rank fusion, so a page both wordings find rises above one
    that only one of them ranks as high, and a page only the translation finds (a Portuguese
    question over an English report) still comes in near the top. Ties keep the question's
    order; a page keeps the evidence of the first ranking that has it."""
    score: dict[tuple[str, int], float] = {}
    page: dict[tuple[str, int], PageEvidence] = {}
    order: dict[tuple[str, int], int] = {}
    for ranking in rankings:
        for rank, evidence in enumerate(ranking, start=1):
            key = _key(evidence)
            score[key] = score.get(key, 0.0) + 1.0 / (WORDING_RRF_K + rank)
            page.setdefault(key, evidence)
            order.setdefault(key, len(order))
    best = sorted(score, key=lambda key: (-score[key], order[key]))
    return [page[key] for key in best[:top_k]]


def merge_steps(
    question: list[PageEvidence], steps: list[list[PageEvidence]], top_k: int
) -> list[PageEvidence]:
    """The whole question's ranking, with the best pages of the other steps woven in: each
    step's top pages (rank by rank, round-robin with the question's) take at most half of
    the top k, so what the single-shot search ranks high stays, and a page a part needs
    comes in near the top. Each page once."""
    seen: set[tuple[str, int]] = set()
    merged: list[PageEvidence] = []

    def add(page: PageEvidence) -> None:
        if _key(page) not in seen and len(merged) < top_k:
            seen.add(_key(page))
            merged.append(page)

    per_step = max(1, (top_k // 2) // len(steps)) if steps else 0
    for rank in range(per_step):
        for pages in [question, *steps]:
            if rank < len(pages):
                add(pages[rank])
    for page in question:
        add(page)
    for rank in range(max((len(pages) for pages in steps), default=0)):
        for pages in steps:
            if rank < len(pages):
                add(pages[rank])
    return merged


TRANSLATION_CHANNELS = frozenset({"dense", "bm25"})  # CARTA_PLANNER=translate's second search


def _key(page: PageEvidence) -> tuple[str, int]:
    return page.doc_id, page.page_no


class QueryPlanner:
    """Routes a question and runs the bounded multi-step retrieval for multi-hop questions."""

    def __init__(
        self,
        search: Callable[[SearchQuery], SearchResult],
        available: frozenset[str],
        limits: PlannerLimits = PlannerLimits(),
        recognise: Callable[[str, str], list[int]] | None = None,
        llm: LLMClient | None = None,
        text_language: str | None = None,
        route_questions: bool = True,
    ) -> None:
        self._search = search  # one single-shot retrieval (Retriever.search)
        # False (CARTA_PLANNER=translate): no routing, no parts; a question in another language
        # than the text encoder's is searched translated too, and that is all
        self.route_questions = route_questions
        # the one language the text encoder reads (None: any): a question in another is
        # searched translated too (translate.py)
        self.text_language = text_language
        self.available = available  # the selectors of the built channels
        self.limits = limits
        self.recognise = recognise  # (tenant, question) -> docgraph entity ids
        self.llm = llm

    def _translated(self, question: str, route: Route) -> str | None:
        """The question in the text encoder's language, when it is in another one and the
        rules route it (an LLM router words its own sub-questions)."""
        language = question_language(question)
        if route.router == "llm" or self.text_language is None or language == self.text_language:
            return None
        return translate(question, language)

    def route(self, q: SearchQuery) -> Route:
        if not self.route_questions:  # the single-shot search's own channels, one part
            return Route((), frozenset(self.available), (q.text,), {"route": "not routed"}, router="none")
        recognise = (lambda text: self.recognise(q.tenant, text)) if self.recognise else None
        if self.llm is not None:
            return llm_route(self.llm, q.text, self.available, recognise)
        return rules_route(q.text, self.available, recognise)

    def search(self, q: SearchQuery) -> SearchResult:
        t0 = time.perf_counter()
        route = self.route(q)
        # the caller's channel choice (the API's `channels`, the evaluation's baselines) wins;
        # an unrouted question keeps the single-shot search's
        channels = q.channels if q.channels is not None or not self.route_questions else route.channels
        steps: list[dict] = []
        lists: dict[str, list[list[PageEvidence]]] = {
            "question": [],
            "missing terms": [],
            "sub-question": [],
            "translation": [],
        }
        tokens = route.tokens
        timings: dict[str, float] = {}

        def ordered() -> list[list[PageEvidence]]:
            return [pages for kind in lists for pages in lists[kind]]

        def merged() -> list[PageEvidence]:
            kinds = ("missing terms", "sub-question", "translation")
            steps_pages = [pages for kind in kinds for pages in lists[kind]]
            return merge_steps(lists["question"][0], steps_pages, q.top_k)

        def run(text: str, kind: str) -> SearchResult:
            chosen = channels
            if kind == "translation" and not self.route_questions:
                # the translation's text channels only: the page multivector is the costly one
                # (a second MaxSim over every page) and reads the same words the dense one does
                chosen = ((channels or self.available) & TRANSLATION_CHANNELS) or channels
            result = self._search(dataclasses.replace(q, text=text, channels=chosen))
            known = {_key(p) for pages in ordered() for p in pages}
            lists[kind].append(result.pages)
            for name, ms in result.timings_ms.items():
                timings[name] = round(timings.get(name, 0.0) + ms, 2)
            steps.append(
                {
                    "step": len(steps) + 1,
                    "kind": kind,
                    "query": text,
                    # ids as their own strings: erasure drops the traces naming a document
                    "pages": [{"doc_id": p.doc_id, "page_no": p.page_no} for p in result.pages[:TRACE_PAGES]],
                    "new_pages": sum(_key(p) not in known for p in result.pages),
                }
            )
            return result

        first = run(q.text, "question")
        translation_vector: np.ndarray | None = None
        stopped = "single question"
        missing: list[str] = []
        if route.multi_hop:
            for sub in route.sub_questions:
                if len(steps) >= self.limits.max_steps:
                    break
                run(sub, "sub-question")
            # the lite encoder is English-only: a pt part over an English report (or the
            # reverse) is searched in the other language too (offline glossary, translate.py)
            language = question_language(q.text)
            for sub in route.sub_questions if route.router == "rules" else ():
                if len(steps) < self.limits.max_steps and (other := translate(sub, language)):
                    run(other, "translation")
            stopped = "covered"
            while True:
                texts = [page_text(p) for p in merged()]
                tokens += sum(tokens_of(t) for t in texts)
                absent = absent_key_terms(q.text, texts)
                previous, missing = missing, [t.text for t in absent]
                steps[-1]["missing"] = missing
                if not missing:
                    break
                if missing == previous:
                    stopped = "no progress"
                    break
                if len(steps) >= self.limits.max_steps:
                    stopped = "step limit"
                    break
                if tokens >= self.limits.max_tokens:
                    stopped = "token limit"
                    break
                run(self._refine(route, missing), "missing terms")
        elif (translated := self._translated(q.text, route)) is not None:
            # one question in another language than the text encoder's ("Quem financiou as
            # diretrizes da OMS?" over an English report): its translation is searched too
            translation_vector = run(translated, "translation").query_vector
            stopped = "translated"
        if not self.route_questions and len(steps) == 1:
            return first  # nothing translated: the single-shot search, as CARTA_PLANNER=off gives it
        if not self.route_questions:  # the question and its translation: two wordings, one ranking
            pages = fuse_wordings([first.pages, *lists["translation"]], q.top_k)
        else:
            pages = merged() if len(steps) > 1 else first.pages
        timings["plan"] = round((time.perf_counter() - t0) * 1e3, 2)
        plan = {
            "router": route.router,
            "routes": list(route.routes),
            "why": route.why,
            "channels": sorted(channels) if channels is not None else None,
            "multi_hop": route.multi_hop,
            "sub_questions": list(route.sub_questions) if route.multi_hop else [],
            "steps": steps,
            "missing": missing,
            "stopped": stopped,
            "tokens": tokens,
            "limits": {"max_steps": self.limits.max_steps, "max_tokens": self.limits.max_tokens},
        }
        return dataclasses.replace(
            first,
            query=q.text,
            pages=pages,
            timings_ms=timings,
            plan=plan,
            translation_vector=translation_vector,
        )

    @staticmethod
    def _refine(route: Route, missing: list[str]) -> str:
        """The next query for the missing terms: the sub-question naming most of them, with
        them repeated at its end (so BM25 weighs them), else the terms alone."""

        def named(sub: str) -> int:
            folded = " ".join(re.sub(r"[-‐‑‒–—_]+", " ", fold(sub)).split())  # as key terms are
            return sum(term in folded for term in missing)

        best = max(route.sub_questions, key=named)
        return f"{best} {' '.join(missing)}" if named(best) else " ".join(missing)
