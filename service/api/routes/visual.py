"""HTTP routes of the visual profile: query by image and the late-interaction heat-map."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import FastAPI, File, Form, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from service.api import schemas
from service.api.errors import ApiError
from service.auth import Caller, Principal
from service.query.visual import decode_image, page_heatmap, search_by_image


def add_visual_routes(
    app: FastAPI,
    get: Callable[[Request], Any],
    visible: Callable[[Any, Principal, str], Any],
) -> None:
    """`visible(carta, caller, doc_id)` raises when the caller may not see the document."""
    errors = {"model": schemas.ErrorResponse}

    def require_visual(c: Any, what: str) -> None:
        """A lite server answers 409 (it works, it is configured without the visual profile);
        a visual server whose models did not load (lite fallback) answers 503 with why."""
        if c.visual is not None:
            return
        if c.settings.profile == "visual":
            raise ApiError(503, "model_unavailable", f"{what} is unavailable: {c.visual_error}")
        raise ApiError(
            409,
            "visual_profile_off",
            f"{what} needs the visual profile: set CARTA_PROFILE=visual with CARTA_VISUAL_MODEL and "
            "CARTA_CLIP_MODEL",
        )

    @app.post(
        "/v1/search/image",
        response_model=schemas.SearchResponse,
        tags=["query"],
        responses={400: errors, 409: errors, 413: errors, 503: errors},
    )
    async def search_image(
        request: Request,
        who: Caller,
        file: Annotated[
            UploadFile, File(description="PNG, JPEG, WebP, TIFF: pages and images that look like it")
        ],
        top_k: Annotated[int, Form(ge=1, le=100)] = 5,
    ) -> Any:
        c = get(request)
        require_visual(c, "query by image")
        data = await file.read(c.settings.max_upload_bytes + 1)
        if len(data) > c.settings.max_upload_bytes:
            raise ApiError(413, "too_large", f"the image is over {c.settings.max_upload_bytes:,} bytes")
        try:
            image = decode_image(data, c.settings.max_image_pixels)
        except ValueError as exc:
            raise ApiError(400, "bad_image", str(exc)) from exc
        result = await run_in_threadpool(search_by_image, c, image, who.tenant, top_k, who.acl())
        return schemas.search_response(result)

    @app.get(
        "/v1/documents/{doc_id}/pages/{page_no}/heatmap",
        tags=["documents"],
        response_class=Response,
        responses={404: errors, 409: errors, 503: errors, 200: {"content": {"image/png": {}}}},
    )
    def heatmap(
        request: Request,
        who: Caller,
        doc_id: str,
        page_no: int,
        query: Annotated[str, Query(min_length=1, max_length=2000)],
    ) -> Response:
        c = get(request)
        visible(c, who, doc_id)
        require_visual(c, "a heat-map")
        try:
            png = page_heatmap(c, who.tenant, doc_id, page_no, query)
        except (FileNotFoundError, ValueError) as exc:
            raise ApiError(404, "not_found", str(exc)) from exc
        return Response(png, media_type="image/png")
