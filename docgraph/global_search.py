"""Global search over the document graph's communities (GraphRAG's global search, offline
half): rank the community summaries against the question and keep the top ones, each with
the chunks its sentences come from, so an answer can cite them.

Ranking, by what the question asks:
- the entities it names (DocGraphStore.recognise) weigh most: a community holding one ranks
  first ("o que os documentos dizem sobre o IBAMA");
- its topic words (the question without its "what do the documents say" phrasing and stop
  words, folded, pt and en) found in a community's names and sentences, weighted by how few
  communities hold them (idf);
- a kind it asks for ("which organisations appear across the documents", "quais leis"):
  communities holding entities of that kind, by how many;
- a question with none of these ("what are the main themes"): the largest communities.
Each ranked community carries its LLM report (docgraph/llm_summaries.py) when one is cached
for exactly the content the caller sees. The map-reduce (an LLM's partial answers per
community, reduced under a token limit) and the extractive composition are in
service/answer/global_answer.py.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from docgraph.llm_summaries import CommunitySummariser, WrittenSummary
from docgraph.store import CommunityEvidence, DocFilter, DocGraphStore
from geo.folding import fold

TOP_COMMUNITIES = 5
ENTITY_WEIGHT = 3.0  # a named entity in the community, against a topic word's idf share (<= 1)

# the words a global question is phrased with, not its topic (folded)
_PHRASING = frozenset(
    """
    what which who whom whose where when how do does did say says said tell tells about across all
    every these those the documents document files reports report corpus main themes theme topics
    topic overview summary summarise summarize appear appears mentioned mention mentions named are
    is be there in of on to a an and or for with from by as at it they them their any most
    o os a as que quais qual quem onde quando como dizem diz falam fala sobre todos todas estes
    estas esses essas documentos documento arquivos relatorios relatorio principais principal temas
    tema topicos assuntos assunto visao geral resumo resuma resumir aparecem aparece mencionados
    mencionadas citados citadas sao e de do da dos das em no na nos nas um uma uns umas para por com
    se ha existem nesses nestes neles
    """.split()
)
# a kind the question asks for, by its word (folded, singular and plural)
_KIND_WORDS = {
    "org": r"organi[sz]ations?|organizac(?:ao|oes)|orgaos?|institui(?:cao|coes)|institutions?"
    r"|agenc(?:y|ies|ias?)|entities|entidades|companies|empresas",
    "programme": r"programmes?|programs?|programas?|projects?|projetos?|planos?",
    "law": r"laws?|leis?|regulations?|normas?|decretos?|resolu(?:cao|coes)",
    "person": r"people|persons?|pessoas?",
    "place": r"places?|lugares|locais|cidades|cities",
}
_KIND_RE = {kind: re.compile(rf"\b(?:{words})\b") for kind, words in _KIND_WORDS.items()}


def topic_terms(question: str) -> list[str]:
    """The question's topic words: folded, without its phrasing, stop words or kind words."""
    words = re.findall(r"[\w-]+", fold(question))
    kinds = [w for w in words if any(r.fullmatch(w) for r in _KIND_RE.values())]
    return list(dict.fromkeys(w for w in words if w not in _PHRASING and w not in kinds and len(w) > 1))


def asked_kinds(question: str) -> list[str]:
    """The entity kinds the question asks for by name ("which organisations" -> org)."""
    folded = fold(question)
    return [kind for kind, pattern in _KIND_RE.items() if pattern.search(folded)]


@dataclass
class RankedCommunity:
    community: CommunityEvidence
    score: float
    why: list[str] = field(default_factory=list)  # what made it rank (named entities, words, kind)
    written: WrittenSummary | None = None  # the LLM's cached report of it, when there is one


@dataclass
class GlobalResult:
    """The communities ranked for a question, the best first, and how it was read."""

    question: str
    terms: list[str]
    kinds: list[str]
    named: list[int]
    communities: list[RankedCommunity]

    def trace(self) -> dict:
        """Ids, scores and the chunks behind each summary: no document text (the search trace)."""
        return {
            "terms": self.terms,
            "kinds": self.kinds,
            "named_entities": self.named,
            "communities": [
                {
                    "id": r.community.id,
                    "score": round(r.score, 4),
                    "why": r.why,
                    "entities": len(r.community.entity_ids),
                    "summary": "llm" if r.written is not None else "extractive",
                    "chunks": [
                        {"doc_id": s.doc_id, "page_no": s.page_no, "chunk_no": s.chunk_no}
                        for s in r.community.said[:3]
                    ],
                }
                for r in self.communities
            ],
        }


def _community_text(c: CommunityEvidence) -> set[str]:
    text = " ".join([*c.names, *(s.sentence for s in c.said), *(s.entity for s in c.said)])
    return set(re.findall(r"[\w-]+", fold(text)))


def rank_communities(
    question: str,
    communities: Iterable[CommunityEvidence],
    named: Iterable[int] = (),
    top: int = TOP_COMMUNITIES,
) -> GlobalResult:
    """The `top` communities for the question, scored as the module docstring says; those
    scoring 0 are left out (a topic no community speaks of gives none)."""
    communities = list(communities)
    named = list(named)
    terms = topic_terms(question)
    kinds = asked_kinds(question)
    words = {c.id: _community_text(c) for c in communities}
    held = {t: sum(t in words[c.id] for c in communities) for t in terms}
    idf = {t: math.log(1 + len(communities) / n) for t, n in held.items() if n}
    total_idf = sum(math.log(1 + len(communities)) for _ in terms) or 1.0
    ranked = []
    for c in communities:
        score, why = 0.0, []
        if hits := [e for e in named if e in c.entity_ids]:
            score += ENTITY_WEIGHT * len(hits)
            why.append(f"{len(hits)} named entities")
        if found := [t for t in terms if t in words[c.id]]:
            score += sum(idf[t] for t in found) / total_idf
            why.append("words: " + ", ".join(found))
        if kinds and (n := sum(c.kinds.get(k, 0) for k in kinds)) and (score or not terms):
            score += 0.5 * (1 - 1 / (1 + n))  # at most 0.5: a kind only orders what the words chose
            why.append(f"{n} {'/'.join(kinds)}")
        if not terms and not named and not kinds:  # "the main themes": the largest communities
            score = math.log(1 + c.mentions)
            why.append(f"{c.mentions} mentions")
        if score > 0:
            ranked.append(RankedCommunity(c, score, why))
    ranked.sort(key=lambda r: (-r.score, -r.community.mentions, r.community.id))
    return GlobalResult(question, terms, kinds, named, ranked[:top])


class GlobalSearch:
    """The ranked communities of a tenant, over the documents the caller may see, with their
    LLM reports where `summaries` holds one."""

    def __init__(
        self, store: DocGraphStore, top: int = TOP_COMMUNITIES, summaries: CommunitySummariser | None = None
    ) -> None:
        self.store = store
        self.top = top
        self.summaries = summaries

    def search(self, tenant: str, question: str, visible: DocFilter | None = None) -> GlobalResult:
        communities = self.store.community_evidence(tenant, visible)
        named = self.store.recognise(tenant, question)
        result = rank_communities(question, communities, named, self.top)
        if self.summaries is not None:
            for ranked in result.communities:
                ranked.written = self.summaries.lookup(tenant, ranked.community)
        return result
