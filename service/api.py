"""The HTTP API (FastAPI), versioned under /v1, OpenAPI at /docs.

Single-user mode for now: every request acts on the configured default tenant (API
keys mapping to tenants come with the production issue). Errors are JSON:
{"error": {"code": ..., "message": ...}}.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import PurePath
from typing import Annotated, Any

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from index.vector_store import StoreError
from ingest.errors import IngestError, TooLarge
from models.errors import ModelUnavailable
from service import schemas
from service.api_datasets import add_dataset_routes
from service.carta import Carta, DocumentNotFound
from service.geo_query import GeoFilterError
from service.settings import Settings
from service.visual_api import add_visual_routes

log = logging.getLogger(__name__)
_ERRORS = {"model": schemas.ErrorResponse}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def create_app(settings: Settings | None = None, carta: Carta | None = None) -> FastAPI:
    """The app; pass `carta` to share an already-built instance (tests, `carta serve`)."""
    settings = settings or (carta.settings if carta else Settings())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = carta is None
        app.state.carta = carta or await run_in_threadpool(Carta, settings)
        yield
        if owned:
            app.state.carta.close()

    app = FastAPI(
        title="Carta",
        version="0.1.0",
        lifespan=lifespan,
        description="Multimodal, geospatial document RAG: upload PDFs and images, search and ask.",
    )

    def get(request: Request) -> Carta:
        return request.app.state.carta

    def tenant() -> str:
        return settings.default_tenant

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message)

    @app.exception_handler(IngestError)
    async def ingest_error(_: Request, exc: IngestError) -> JSONResponse:
        return _error(exc.status, exc.code, str(exc))

    @app.exception_handler(GeoFilterError)
    async def geo_error(_: Request, exc: GeoFilterError) -> JSONResponse:
        return _error(400, "bad_geo_filter", str(exc))

    @app.exception_handler(DocumentNotFound)
    async def not_found(_: Request, exc: DocumentNotFound) -> JSONResponse:
        return _error(404, "not_found", str(exc.args[0]))

    @app.exception_handler(StoreError)
    async def store_error(_: Request, exc: StoreError) -> JSONResponse:
        return _error(503, "store_unavailable", str(exc))

    @app.exception_handler(ModelUnavailable)
    async def model_error(_: Request, exc: ModelUnavailable) -> JSONResponse:
        return _error(503, "model_unavailable", str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, "http_error", str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return _error(422, "invalid_request", problems)

    @app.get("/healthz", tags=["ops"])
    def healthz(request: Request) -> dict[str, Any]:
        c = get(request)
        return {
            "status": "ok",
            "profile": c.profile,
            "visual_unavailable": c.visual_error,
            "reindex_needed": c.reindex_needed(),
            "text_model": c.text.slug,
            "collections": [s.name for s in c.collections.all()],
        }

    @app.post(
        "/v1/documents",
        status_code=201,
        response_model=schemas.UploadResponse,
        tags=["documents"],
        responses={400: _ERRORS, 413: _ERRORS, 415: _ERRORS, 422: _ERRORS},
    )
    async def upload(
        request: Request,
        file: Annotated[UploadFile, File(description="PDF, PNG, JPEG, TIFF, WebP, GeoJSON or KML")],
        title: Annotated[str | None, Form(max_length=500)] = None,
        metadata: Annotated[
            str | None, Form(description='JSON object stored with the document; "lat"/"lon" geotag it')
        ] = None,
        sidecars: Annotated[
            list[UploadFile] | None,
            File(
                description="Georeference files of a map image: world file (.pgw/.jgw/.wld), .prj, .aux.xml"
            ),
        ] = None,
    ) -> Any:
        c = get(request)
        meta = _parse_metadata(metadata)
        extra = {_sidecar_suffix(s.filename or ""): await s.read(1_000_000) for s in sidecars or []}
        data = await file.read(c.settings.max_upload_bytes + 1)
        if len(data) > c.settings.max_upload_bytes:
            raise TooLarge(
                f"the upload exceeds {c.settings.max_upload_bytes:,} bytes (CARTA_MAX_UPLOAD_BYTES)"
            )
        result = await run_in_threadpool(
            c.ingest, data, file.filename or "upload", tenant(), title, meta, None, extra or None
        )
        body = schemas.UploadResponse(
            document=schemas.document_out(result.document), created=result.created, warnings=result.warnings
        )
        return JSONResponse(body.model_dump(), status_code=201 if result.created else 200)

    @app.get("/v1/documents", response_model=list[schemas.DocumentOut], tags=["documents"])
    def list_documents(request: Request) -> Any:
        return [schemas.document_out(d) for d in get(request).registry.list(tenant())]

    @app.get(
        "/v1/documents/{doc_id}",
        response_model=schemas.DocumentDetail,
        tags=["documents"],
        responses={404: _ERRORS},
    )
    def get_document(request: Request, doc_id: str) -> Any:
        c = get(request)
        doc = c.document(tenant(), doc_id)
        return schemas.document_detail(doc, c.registry.pages(tenant(), doc_id))

    @app.delete("/v1/documents/{doc_id}", tags=["documents"], responses={404: _ERRORS})
    def delete_document(request: Request, doc_id: str) -> dict[str, str]:
        get(request).delete(tenant(), doc_id)
        return {"deleted": doc_id}

    @app.get(
        "/v1/documents/{doc_id}/pages/{page_no}",
        response_model=schemas.PageText,
        tags=["documents"],
        responses={404: _ERRORS},
    )
    def get_page(request: Request, doc_id: str, page_no: int) -> Any:
        c = get(request)
        record = next((p for p in c.registry.pages(tenant(), doc_id) if p.page_no == page_no), None)
        if record is None:
            c.document(tenant(), doc_id)
            raise ApiError(404, "not_found", f"document {doc_id!r} has no page {page_no}")
        chunks = c.page_chunks(tenant(), doc_id, page_no)
        return schemas.PageText(
            doc_id=doc_id,
            page_no=page_no,
            text_source=record.text_source,
            text="\n".join(ch["text"] for ch in chunks),
            chunks=[
                schemas.PageChunk(chunk_no=ch["chunk_no"], text=ch["text"], bbox=ch["bbox"]) for ch in chunks
            ],
            image_url=schemas.image_url(doc_id, page_no),
        )

    def page_image(request: Request, doc_id: str, page_no: int, thumb: bool) -> Response:
        c = get(request)
        c.document(tenant(), doc_id)
        try:
            data = c.images.load_bytes(tenant(), doc_id, page_no, thumb=thumb)
        except ValueError:
            data = None
        if data is None:
            raise ApiError(404, "not_found", f"document {doc_id!r} has no page {page_no}")
        return Response(data, media_type="image/webp", headers={"Cache-Control": "private, max-age=3600"})

    @app.get(
        "/v1/documents/{doc_id}/pages/{page_no}/image",
        tags=["documents"],
        response_class=Response,
        responses={404: _ERRORS, 200: {"content": {"image/webp": {}}}},
    )
    def get_page_image(request: Request, doc_id: str, page_no: int) -> Response:
        return page_image(request, doc_id, page_no, thumb=False)

    @app.get(
        "/v1/documents/{doc_id}/pages/{page_no}/thumbnail",
        tags=["documents"],
        response_class=Response,
        responses={404: _ERRORS, 200: {"content": {"image/webp": {}}}},
    )
    def get_page_thumbnail(request: Request, doc_id: str, page_no: int) -> Response:
        return page_image(request, doc_id, page_no, thumb=True)

    @app.post("/v1/search", response_model=schemas.SearchResponse, tags=["query"])
    def search(request: Request, body: schemas.SearchRequest) -> Any:
        c = get(request)
        q = c.query(
            body.query,
            tenant(),
            top_k=body.top_k,
            doc_ids=body.doc_ids,
            kinds=body.kinds,
            channels=frozenset(body.channels) if body.channels else None,
            geo=body.geo.spec() if body.geo else None,
            geo_prior=body.geo_prior,
            geo_prior_mode=body.geo_prior_mode,
        )
        return schemas.search_response(c.search(q))

    @app.post("/v1/ask", response_model=schemas.AskResponse, tags=["query"])
    def ask(request: Request, body: schemas.AskRequest) -> Any:
        c = get(request)
        q = c.query(
            body.question,
            tenant(),
            top_k=body.top_k,
            doc_ids=body.doc_ids,
            kinds=body.kinds,
            geo=body.geo.spec() if body.geo else None,
            geo_prior=body.geo_prior,
            geo_prior_mode=body.geo_prior_mode,
        )
        return schemas.ask_response(c.ask(q))

    add_visual_routes(app, get, tenant, ApiError)  # query by image, heat-maps (visual profile)
    add_dataset_routes(app, get, tenant)
    return app


def _sidecar_suffix(name: str) -> str:
    """ ".pgw", ".prj", ... or ".aux.xml" (a double suffix)."""
    name = name.lower()
    return ".aux.xml" if name.endswith(".aux.xml") else PurePath(name).suffix


def _parse_metadata(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ApiError(400, "invalid_metadata", f"metadata must be a JSON object ({exc.msg})") from exc
    if not isinstance(value, dict):
        raise ApiError(400, "invalid_metadata", "metadata must be a JSON object")
    return value
