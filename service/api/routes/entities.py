"""/v1/entities: the document graph's entities (issue 19), over the caller's documents.

The graph store keeps a tenant-wide view; every count, mention, relation and summary shown
here is restricted to ready documents the caller's groups may see."""

from __future__ import annotations

import logging
import re
import sqlite3
from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.concurrency import run_in_threadpool

from docgraph.store import DocFilter, DocGraphStore
from service.api import schemas
from service.api.deps import Caller, CartaDep
from service.api.errors import ERROR_RESPONSES as _ERRORS
from service.auth import Principal
from service.carta import Carta
from service.errors import DocGraphDisabled, EntityNotFound

router = APIRouter(tags=["entities"])
log = logging.getLogger(__name__)

ANSWER_ENTITIES = 12  # chips under an answer, at most
# a citation marker ([doc_id p.N], or one a document wrote, neutralised as ⟦doc_id p.N⟧): not a name
_MARKER = re.compile(r"[\[⟦][A-Za-z0-9_:-]+ p\.\d+[\]⟧]")


def docgraph(carta: Carta) -> DocGraphStore:
    """The document graph, or DocGraphDisabled (409) when CARTA_DOCGRAPH is off."""
    if carta.docgraph is None:
        raise DocGraphDisabled("the document graph is turned off (CARTA_DOCGRAPH=false)")
    return carta.docgraph


def visible_documents(carta: Carta, who: Principal) -> DocFilter:
    """Whether a document id is a ready document of the caller's tenant it may see."""
    seen: dict[str, bool] = {}

    def visible(doc_id: str) -> bool:
        if doc_id not in seen:
            doc = carta.registry.get(who.tenant, doc_id)
            seen[doc_id] = doc is not None and doc.status == "ready" and who.can_see(doc.acl)
        return seen[doc_id]

    return visible


def entity_list(carta: Carta, who: Principal, q: str, limit: int) -> list[schemas.EntityOut]:
    rows = docgraph(carta).search(who.tenant, q, limit, visible_documents(carta, who))
    return [schemas.EntityOut(**vars(r)) for r in rows]


def answer_entities(
    carta: Carta, who: Principal, answer: str, question: str
) -> list[schemas.AnswerEntityOut]:
    """The entities the answer names, then those only the question names, each once and
    only when the caller's documents mention it: the chips under an answer, each opening
    its mentions. Empty when the document graph is off; a graph that cannot be read costs
    the chips (logged), never the answer."""
    if carta.docgraph is None:
        return []
    store = carta.docgraph
    try:
        named = [
            *store.recognise(who.tenant, _MARKER.sub(" ", answer)),
            *store.recognise(who.tenant, question),
        ]
        visible = visible_documents(carta, who)
        chips: list[schemas.AnswerEntityOut] = []
        for entity_id in dict.fromkeys(named):
            found = store.entity(who.tenant, entity_id, visible)
            if found is None:  # mentioned only in documents the caller may not see
                continue
            mentions = found["mentions"]
            chips.append(
                schemas.AnswerEntityOut(
                    id=found["id"],
                    kind=found["kind"],
                    name=found["name"],
                    mentions=len(mentions),
                    documents=len({m["doc_id"] for m in mentions}),
                )
            )
            if len(chips) == ANSWER_ENTITIES:
                break
        return chips
    except sqlite3.Error as exc:
        log.warning("answer entities left out: the document graph could not be read (%s)", exc)
        return []


def entity_detail(carta: Carta, who: Principal, entity_id: int) -> schemas.EntityDetailOut:
    found = docgraph(carta).entity(who.tenant, entity_id, visible_documents(carta, who))
    if found is None:
        raise EntityNotFound(f"no entity {entity_id}")
    return schemas.EntityDetailOut(**found)


@router.get("/v1/entities", response_model=list[schemas.EntityOut], responses={409: _ERRORS})
async def list_entities(
    carta: CartaDep,
    who: Caller,
    q: Annotated[str, Query(max_length=200, description="part of a name, acronym or alias")] = "",
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[schemas.EntityOut]:
    """Entities whose name, acronym or alias contains `q` (folded), most mentioned first."""
    return await run_in_threadpool(entity_list, carta, who, q, limit)


@router.get(
    "/v1/entities/{entity_id}", response_model=schemas.EntityDetailOut, responses={404: _ERRORS, 409: _ERRORS}
)
async def get_entity(
    carta: CartaDep, who: Caller, entity_id: Annotated[int, Path(ge=1, le=2**62)]
) -> schemas.EntityDetailOut:
    """One entity: its mentions (document, page, chunk), merges, relations and community."""
    return await run_in_threadpool(entity_detail, carta, who, entity_id)
