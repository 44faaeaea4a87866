"""The HTTP API (FastAPI), versioned under /v1, OpenAPI at /docs.

Every /v1 route takes the caller from its API key (service/auth.py): the tenant and ACL
groups come from the key, never from the request. Uploads become durable jobs
(service/jobs.py). Errors are JSON: {"error": {"code": ..., "message": ...}}.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import PurePath
from typing import Annotated, Any

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from index.registry import Document
from index.vector_store import StoreError
from ingest.errors import IngestError
from models.errors import ModelUnavailable
from models.llm_client import LLMError
from service.api import schemas, web
from service.api.errors import ERROR_RESPONSES as _ERRORS
from service.api.errors import ApiError, error_response
from service.api.routes.datasets import add_dataset_routes
from service.api.routes.ops import BodyLimit, add_ops_routes, request_middleware
from service.api.routes.visual import add_visual_routes
from service.api.streaming import sse_stream
from service.audit import AuditLog
from service.auth import AuthError, Caller, KeyStore, Principal, RateLimiter, check_name
from service.carta import Carta, DocumentNotFound
from service.jobs import SIDECAR_SUFFIXES, JobRunner
from service.observability import Metrics, TraceStore, ask_trace
from service.query.geo_filter import GeoFilterError
from service.settings import Settings

log = logging.getLogger(__name__)
VISIBLE = ("ready", "failed")  # a document being indexed is not visible yet


def create_app(settings: Settings | None = None, carta: Carta | None = None) -> FastAPI:
    """The app; pass `carta` to share an already-built instance (tests, `carta serve`)."""
    settings = settings or (carta.settings if carta else Settings())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = carta is None
        c = app.state.carta = carta or await run_in_threadpool(Carta, settings)
        app.state.keys = KeyStore(c.settings.auth_path)
        app.state.audit = AuditLog(c.settings.audit_path)
        app.state.job_store = c.job_store  # built (and closed) with Carta, erasure hook included
        workers, attempts = c.settings.ingest_workers, c.settings.job_max_attempts
        app.state.jobs = JobRunner(c.ingestor, c.job_store, c.settings.uploads_dir, workers, attempts)
        app.state.jobs.start()
        yield
        app.state.jobs.stop()
        for part in (app.state.audit, app.state.keys):
            part.close()
        if owned:
            c.close()

    app = FastAPI(
        title="Carta",
        version="0.1.0",
        lifespan=lifespan,
        description="Multimodal, geospatial document RAG: upload PDFs and images, search and ask.",
    )

    app.state.metrics = Metrics()
    app.state.traces = TraceStore(settings.trace_keep)
    app.state.limiter = RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst)
    app.add_middleware(BodyLimit, max_bytes=settings.max_upload_bytes)
    app.middleware("http")(request_middleware)
    app.state.default_tenant = settings.default_tenant

    def get(request: Request) -> Carta:
        return request.app.state.carta

    def visible(c: Carta, who: Principal, doc_id: str) -> Document:
        """The caller's document, or DocumentNotFound: another tenant's, a document its
        groups may not see and one still being indexed all look the same (absent)."""
        doc = c.registry.get(who.tenant, doc_id)
        if doc is None or doc.status not in VISIBLE or not who.can_see(doc.acl):
            raise DocumentNotFound(f"no document {doc_id!r}")
        return doc

    def audit(request: Request, who: Principal, action: str, doc_ids: list[str], outcome: str = "ok") -> None:
        request.app.state.audit.record(
            who.key_id, who.tenant, action, doc_ids, getattr(request.state, "request_id", None), outcome
        )

    @app.exception_handler(AuthError)
    async def auth_error(_: Request, exc: AuthError) -> JSONResponse:
        response = error_response(exc.status, exc.code, str(exc))
        if exc.status == 401:
            response.headers["WWW-Authenticate"] = "Bearer"
        elif exc.status == 429:
            response.headers["Retry-After"] = "1"
        return response

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message)

    @app.exception_handler(IngestError)
    async def ingest_error(_: Request, exc: IngestError) -> JSONResponse:
        return error_response(exc.status, exc.code, str(exc))

    @app.exception_handler(GeoFilterError)
    async def geo_error(_: Request, exc: GeoFilterError) -> JSONResponse:
        return error_response(400, "bad_geo_filter", str(exc))

    @app.exception_handler(DocumentNotFound)
    async def not_found(_: Request, exc: DocumentNotFound) -> JSONResponse:
        return error_response(404, "not_found", str(exc.args[0]))

    @app.exception_handler(StoreError)
    async def store_error(_: Request, exc: StoreError) -> JSONResponse:
        return error_response(503, "store_unavailable", str(exc))

    @app.exception_handler(ModelUnavailable)
    async def model_error(_: Request, exc: ModelUnavailable) -> JSONResponse:
        return error_response(503, "model_unavailable", str(exc))

    @app.exception_handler(LLMError)
    async def llm_error(_: Request, exc: LLMError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = "too_large" if exc.status_code == 413 else "http_error"
        return error_response(exc.status_code, code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return error_response(422, "invalid_request", problems)

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
        status_code=202,
        response_model=schemas.UploadResponse,
        tags=["documents"],
        responses={400: _ERRORS, 401: _ERRORS, 403: _ERRORS, 413: _ERRORS, 415: _ERRORS, 422: _ERRORS},
    )
    async def upload(
        request: Request,
        who: Caller,
        file: Annotated[UploadFile, File(description="PDF, PNG, JPEG, TIFF, WebP, GeoJSON or KML")],
        title: Annotated[str | None, Form(max_length=500)] = None,
        metadata: Annotated[
            str | None, Form(description='JSON object stored with the document; "lat"/"lon" geotag it')
        ] = None,
        groups: Annotated[
            str | None,
            Form(description="Comma-separated ACL groups that may see it (default: the whole tenant)."),
        ] = None,
        sidecars: Annotated[
            list[UploadFile] | None,
            File(
                description="Georeference files of a map image: world file (.pgw/.jgw/.wld), .prj, .aux.xml"
            ),
        ] = None,
    ) -> Any:
        """Accept a file as an ingestion job (202); follow it at /v1/jobs/{id}. The same
        content again answers with the existing document and `created: false`."""
        c = get(request)
        meta = _parse_metadata(metadata)
        acl = _parse_groups(groups, who)
        extra: dict[str, bytes] = {}
        for s in sidecars or []:
            suffix = _sidecar_suffix(s.filename or "")
            if suffix not in SIDECAR_SUFFIXES:
                message = f"sidecar {s.filename!r} is not a world file, .prj or .aux.xml"
                raise ApiError(400, "bad_sidecar", message)
            extra[suffix] = await s.read(1_000_000)
        data = await file.read(c.settings.max_upload_bytes + 1)
        done = await run_in_threadpool(
            request.app.state.jobs.submit, who, data, file.filename or "upload", title, meta, acl, extra
        )
        doc_id = done.job.document_id
        audit(request, who, "upload", [doc_id] if doc_id else [], "created" if done.created else "duplicate")
        body = schemas.UploadResponse(
            job=schemas.JobOut(**done.job.out()),
            document=schemas.document_out(done.document) if done.document else None,
            created=done.created,
        )
        return JSONResponse(body.model_dump(), status_code=202)

    @app.get("/v1/documents", response_model=list[schemas.DocumentOut], tags=["documents"])
    def list_documents(request: Request, who: Caller) -> Any:
        docs = get(request).registry.list(who.tenant)
        return [schemas.document_out(d) for d in docs if d.status in VISIBLE and who.can_see(d.acl)]

    @app.get(
        "/v1/documents/{doc_id}",
        response_model=schemas.DocumentDetail,
        tags=["documents"],
        responses={404: _ERRORS},
    )
    def get_document(request: Request, who: Caller, doc_id: str) -> Any:
        c = get(request)
        doc = visible(c, who, doc_id)
        return schemas.document_detail(doc, c.registry.pages(who.tenant, doc_id))

    @app.delete("/v1/documents/{doc_id}", tags=["documents"], responses={404: _ERRORS, 409: _ERRORS})
    def delete_document(request: Request, who: Caller, doc_id: str) -> dict[str, str]:
        """Erase the document: every point, page image, thumbnail, registry row and job,
        and whatever the erasure hooks hold (graph nodes, summaries)."""
        c = get(request)
        visible(c, who, doc_id)
        if request.app.state.job_store.in_flight(who.tenant, doc_id):
            message = f"document {doc_id!r} is being indexed; delete it when its job ends"
            raise ApiError(409, "being_indexed", message)
        c.delete(who.tenant, doc_id)
        audit(request, who, "delete", [doc_id])
        return {"deleted": doc_id}

    @app.get(
        "/v1/documents/{doc_id}/pages/{page_no}",
        response_model=schemas.PageText,
        tags=["documents"],
        responses={404: _ERRORS},
    )
    def get_page(request: Request, who: Caller, doc_id: str, page_no: int) -> Any:
        c = get(request)
        visible(c, who, doc_id)
        record = next((p for p in c.registry.pages(who.tenant, doc_id) if p.page_no == page_no), None)
        if record is None:
            raise ApiError(404, "not_found", f"document {doc_id!r} has no page {page_no}")
        chunks = c.page_chunks(who.tenant, doc_id, page_no)
        return schemas.PageText(
            doc_id=doc_id,
            page_no=page_no,
            text_source=record.text_source,
            text="\n".join(ch["text"] for ch in chunks),
            chunks=[
                schemas.PageChunk(chunk_no=ch["chunk_no"], text=ch["text"], bbox=ch["bbox"]) for ch in chunks
            ],
            image_url=schemas.image_url(doc_id, page_no),
            **schemas.page_geo(chunks),
        )

    def page_image(request: Request, who: Principal, doc_id: str, page_no: int, thumb: bool) -> Response:
        c = get(request)
        visible(c, who, doc_id)
        try:
            data = c.images.load_bytes(who.tenant, doc_id, page_no, thumb=thumb)
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
    def get_page_image(request: Request, who: Caller, doc_id: str, page_no: int) -> Response:
        return page_image(request, who, doc_id, page_no, thumb=False)

    @app.get(
        "/v1/documents/{doc_id}/pages/{page_no}/thumbnail",
        tags=["documents"],
        response_class=Response,
        responses={404: _ERRORS, 200: {"content": {"image/webp": {}}}},
    )
    def get_page_thumbnail(request: Request, who: Caller, doc_id: str, page_no: int) -> Response:
        return page_image(request, who, doc_id, page_no, thumb=True)

    @app.post("/v1/search", response_model=schemas.SearchResponse, tags=["query"])
    def search(request: Request, who: Caller, body: schemas.SearchRequest) -> Any:
        c = get(request)
        q = c.query(
            body.query,
            who.tenant,
            top_k=body.top_k,
            doc_ids=body.doc_ids,
            kinds=body.kinds,
            channels=frozenset(body.channels) if body.channels else None,
            geo=body.geo.spec() if body.geo else None,
            geo_prior=body.geo_prior,
            geo_prior_mode=body.geo_prior_mode,
            acl=who.acl(),
        )
        result = c.search(q)
        audit(request, who, "search", [p.doc_id for p in result.pages])
        return schemas.search_response(result)

    @app.post(
        "/v1/ask",
        response_model=schemas.AskResponse,
        tags=["query"],
        responses={502: _ERRORS, 504: _ERRORS, 200: {"content": {"text/event-stream": {}}}},
    )
    def ask(request: Request, who: Caller, body: schemas.AskRequest) -> Any:
        started = time.perf_counter()
        c = get(request)
        q = c.query(
            body.question,
            who.tenant,
            top_k=body.top_k,
            doc_ids=body.doc_ids,
            kinds=body.kinds,
            geo=body.geo.spec() if body.geo else None,
            geo_prior=body.geo_prior,
            geo_prior_mode=body.geo_prior_mode,
            acl=who.acl(),
        )
        request_id = request.state.request_id
        if body.stream:
            audit(request, who, "ask", [])  # streamed: the evidence goes to the client as it is found
            return StreamingResponse(
                sse_stream(c.ask_events(q)),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            )
        answer = c.ask(q)
        audit(request, who, "ask", [p.doc_id for p in answer.evidence])
        request.app.state.traces.put(request_id, who.tenant, ask_trace(request_id, answer, started))
        return schemas.ask_response(answer)

    add_visual_routes(app, get, visible)  # query by image, heat-maps (visual profile)
    add_dataset_routes(app, get)
    add_ops_routes(app)
    web.mount(app, settings)  # the browser UI at / (service/web)
    return app


def _parse_groups(raw: str | None, who: Principal) -> list[str]:
    """The upload's ACL groups; a key may only share with groups it belongs to."""
    groups = sorted({g.strip() for g in (raw or "").split(",") if g.strip()})
    try:
        for g in groups:
            check_name(g, "group")
    except ValueError as exc:
        raise ApiError(400, "invalid_groups", str(exc)) from exc
    foreign = [g for g in groups if g not in who.groups]
    if foreign and not who.admin:
        raise ApiError(403, "forbidden_group", f"this key is not in group(s) {', '.join(foreign)}")
    return groups


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
