"""/v1/examples: example questions made from the caller's own documents and datasets."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from service.api import schemas
from service.api.deps import Caller, CartaDep
from service.suggestions import Language, example_questions

router = APIRouter(tags=["query"])


@router.get("/v1/examples", response_model=schemas.ExamplesResponse)
def examples(
    carta: CartaDep,
    who: Caller,
    language: Annotated[Language, Query(description="The questions' language: en or pt.")] = "en",
) -> Any:
    """Questions the caller's documents and POI datasets can answer (for the answer screen)."""
    docs = [d for d in carta.registry.list(who.tenant) if d.status == "ready" and who.can_see(d.acl)]
    found = example_questions(docs, carta.page_chunks, carta.graph, who.tenant, language)
    return schemas.ExamplesResponse(questions=[schemas.ExampleOut(**e.to_dict()) for e in found])
