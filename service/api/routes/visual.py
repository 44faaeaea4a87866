"""Routes of the visual profile: query by image and the late-interaction heat-map."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Query, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from ingest.errors import TooLarge
from models.errors import ModelUnavailable
from service.api import schemas
from service.api.deps import Caller, CartaDep, visible_document
from service.api.errors import ERROR_RESPONSES as _ERRORS
from service.carta import Carta
from service.errors import BadImage, PageNotFound, VisualProfileOff
from service.query.visual import decode_image, page_heatmap, search_by_image

router = APIRouter()


def require_visual(carta: Carta, what: str) -> None:
    """A lite server answers 409 (it works, it is configured without the visual profile);
    a visual server whose models did not load (lite fallback) answers 503 with why."""
    if carta.visual is not None:
        return
    if carta.settings.profile == "visual":
        raise ModelUnavailable(f"{what} is unavailable: {carta.visual_error}")
    raise VisualProfileOff(
        f"{what} needs the visual profile: set CARTA_PROFILE=visual with CARTA_VISUAL_MODEL and "
        "CARTA_CLIP_MODEL"
    )


@router.post(
    "/v1/search/image",
    response_model=schemas.SearchResponse,
    tags=["query"],
    responses={400: _ERRORS, 409: _ERRORS, 413: _ERRORS, 503: _ERRORS},
)
async def search_image(
    carta: CartaDep,
    who: Caller,
    file: Annotated[
        UploadFile, File(description="PNG, JPEG, WebP, TIFF: pages and images that look like it")
    ],
    top_k: Annotated[int, Form(ge=1, le=100)] = 5,
) -> Any:
    require_visual(carta, "query by image")
    limit = carta.settings.max_upload_bytes
    data = await file.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"the image is over {limit:,} bytes")
    try:
        image = decode_image(data, carta.settings.max_image_pixels)
    except ValueError as exc:
        raise BadImage(str(exc)) from exc
    result = await run_in_threadpool(search_by_image, carta, image, who.tenant, top_k, who.acl())
    return schemas.search_response(result)


@router.get(
    "/v1/documents/{doc_id}/pages/{page_no}/heatmap",
    tags=["documents"],
    response_class=Response,
    responses={404: _ERRORS, 409: _ERRORS, 503: _ERRORS, 200: {"content": {"image/png": {}}}},
)
def heatmap(
    carta: CartaDep,
    who: Caller,
    doc_id: str,
    page_no: int,
    query: Annotated[str, Query(min_length=1, max_length=2000)],
) -> Response:
    visible_document(carta, who, doc_id)
    require_visual(carta, "a heat-map")
    try:
        png = page_heatmap(carta, who.tenant, doc_id, page_no, query)
    except (FileNotFoundError, ValueError) as exc:
        raise PageNotFound(str(exc)) from exc
    return Response(png, media_type="image/png")
