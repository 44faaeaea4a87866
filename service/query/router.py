"""The query router: which retrieval routes a question needs (visual pages, text, geodata,
document graph, global) and the channels that serve them, by rules offline and by the LLM
when one is configured (its reply checked against a strict schema; any failure falls back
to the rules). Used by the planner (service/query/planner.py)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from models.errors import LLMError
from models.llm_client import LLMClient, json_schema_format
from service.query.decompose import MAX_PARTS, decompose

log = logging.getLogger(__name__)

RouteName = Literal["text", "visual", "geodata", "graph", "global"]
ROUTE_NAMES: tuple[RouteName, ...] = ("text", "visual", "geodata", "graph", "global")

# The channel selectors (service.query.channels.CHANNELS) each route runs. Geodata has none of
# its own: the geo prior and maps channels run whenever the question names a place.
ROUTE_CHANNELS: dict[str, frozenset[str]] = {
    "text": frozenset({"dense", "bm25", "pages"}),
    "visual": frozenset({"visual", "clip", "pages"}),
    "geodata": frozenset(),
    "graph": frozenset({"entities"}),
    "global": frozenset({"global", "entities", "dense"}),
}

_VISUAL = re.compile(
    r"\b(?:charts?|graphs?|figures?|maps?|plots?|images?|diagrams?|bars?|pie|picture|photo|"
    r"gráficos?|graficos?|figuras?|mapas?|imagens?|diagramas?|barras?|pizza|foto)\b",
    re.IGNORECASE,
)
_GEODATA = re.compile(
    r"\b(?:near|nearby|around|within|closest|nearest|distance|radius|coordinates|"
    r"perto|próximos?|próximas?|proximos?|ao redor|raio|distância|distancia|coordenadas|"
    r"mais próximo|km de|metros de)\b",
    re.IGNORECASE,
)
_GLOBAL = re.compile(
    r"\b(?:what do (?:the|these|all|my|our) (?:documents|reports|files) say|across (?:the |all |these )?"
    r"(?:documents|reports|files)|in all (?:the )?documents|all documents|main (?:themes|topics)|overview|"
    r"summari[sz]e|which (?:organi[sz]ations|agencies|institutions|programmes|programs|laws|companies|"
    r"entities|people) (?:appear|are (?:mentioned|named|cited))|"
    r"o que (?:os|estes|esses|todos os|meus|nossos) (?:documentos|relatórios|relatorios|arquivos) dizem|"
    r"em todos os documentos|principais (?:temas|assuntos)|visão geral|visao geral|"
    r"resum[ao]|resumir|quais (?:são )?(?:as |os )?(?:organizações|organizacoes|instituições|instituicoes|"
    r"órgãos|orgaos|programas|leis|empresas|entidades|pessoas) (?:aparecem|são citad[oa]s|"
    r"são mencionad[oa]s|sao citad[oa]s|sao mencionad[oa]s))\b",
    re.IGNORECASE,
)

# A code (letters and digits: CT-SMA-0427/2024, SKU NW-4471) or an acronym (IBAMA, CONAMA).
_CODE_OR_ACRONYM = re.compile(r"\b(?:[A-Z]{2,}[\w/-]*\d[\w/-]*|\w+-\d[\w/-]*|[A-Z]{3,})\b")


def asks_global(question: str) -> bool:
    """Whether a question asks across the documents ("what are the main themes", "which
    organisations appear across the documents", "o que os documentos dizem sobre X"): the
    global route, answered from the document graph's communities."""
    return _GLOBAL.search(question) is not None


@dataclass(frozen=True)
class Route:
    """What the router chose for a question, and why."""

    routes: tuple[str, ...]
    channels: frozenset[str]
    sub_questions: tuple[str, ...]  # one item: not a multi-hop question
    why: dict[str, str] = field(default_factory=dict)
    router: Literal["rules", "llm", "none"] = "rules"  # none: CARTA_PLANNER=translate routes nothing
    tokens: int = 0  # LLM tokens the routing cost

    @property
    def multi_hop(self) -> bool:
        return len(self.sub_questions) > 1


def channels_for(routes: tuple[str, ...], available: frozenset[str]) -> frozenset[str]:
    """The built channels that serve `routes` (text always)."""
    wanted = set(ROUTE_CHANNELS["text"])
    for name in routes:
        wanted |= ROUTE_CHANNELS.get(name, frozenset())
    return frozenset(wanted & available)


def rules_route(
    question: str, available: frozenset[str], recognise: Callable[[str], list[int]] | None = None
) -> Route:
    """The routes a question needs, by its words: text always; visual for charts and maps;
    geodata for distances and places around; graph when it names a known entity, a code or an
    acronym; global for questions across all documents."""
    routes: list[str] = ["text"]
    why = {"text": "always"}
    if m := _VISUAL.search(question):
        routes.append("visual")
        why["visual"] = m[0]
    if m := _GEODATA.search(question):
        routes.append("geodata")
        why["geodata"] = m[0]
    named = recognise(question) if recognise else []
    if named:
        routes.append("graph")
        why["graph"] = f"{len(named)} known entities"
    elif m := _CODE_OR_ACRONYM.search(question):
        routes.append("graph")
        why["graph"] = m[0]
    if m := _GLOBAL.search(question):
        routes.append("global")
        why["global"] = m[0]
    parts = tuple(decompose(question))
    return Route(tuple(routes), channels_for(tuple(routes), available), parts, why)


class PlanReply(BaseModel):
    """The LLM's routing reply (strict: unknown fields or routes are rejected)."""

    model_config = ConfigDict(extra="forbid")
    routes: list[RouteName] = Field(..., min_length=1)
    sub_questions: list[str] = Field(default_factory=list, max_length=MAX_PARTS)


_SYSTEM = (
    "You plan retrieval for a document search system. Given a question (Portuguese or English), "
    'reply with JSON only: {"routes": [...], "sub_questions": [...]}. routes: any of '
    '"text" (page text), "visual" (charts, maps, figures), "geodata" (places, distances), '
    '"graph" (named organisations, programmes, laws, codes), "global" (themes across all documents). '
    "sub_questions: when the question needs two facts or two documents, one self-contained "
    "question per fact, in the question's language (at most 4); else an empty list."
)


def plan_schema() -> dict:
    """The response_format asking for a PlanReply (structured output where supported)."""
    return json_schema_format("plan", PlanReply.model_json_schema())


def llm_route(
    client: LLMClient,
    question: str,
    available: frozenset[str],
    recognise: Callable[[str], list[int]] | None = None,
    max_tokens: int = 300,
) -> Route:
    """The LLM's routes and sub-questions; the rules' route (router "rules", the reason in
    `why`) when the call fails or the reply does not fit PlanReply."""
    messages = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": question}]
    try:
        reply = client.chat(messages, max_tokens=max_tokens, response_format=plan_schema())
        text = reply.text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
        plan = PlanReply.model_validate(json.loads(text))
    except (LLMError, ValueError, ValidationError) as exc:
        log.info("LLM routing failed, using the rules: %s", exc)
        route = rules_route(question, available, recognise)
        return Route(route.routes, route.channels, route.sub_questions, {**route.why, "llm": str(exc)[:200]})
    routes = tuple(dict.fromkeys(["text", *plan.routes]))
    subs = tuple(s.strip() for s in plan.sub_questions if s.strip())
    tokens = (reply.usage.prompt_tokens or 0) + (reply.usage.completion_tokens or 0)
    return Route(
        routes,
        channels_for(routes, available),
        subs if len(subs) > 1 else (question,),
        {name: "llm" for name in routes},
        "llm",
        tokens,
    )
