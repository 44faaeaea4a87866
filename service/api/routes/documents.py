"""/v1/documents: upload (as an ingestion job), list, get, delete, page text and images."""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from ingest.errors import JsonTooDeep
from ingest.readers.jsontext import load_json
from service.api import schemas
from service.api.deps import (
    VISIBLE,
    Audit,
    Caller,
    CartaDep,
    DeletableDocument,
    ServicesDep,
    VisibleDocument,
    Writer,
    visible_document,
)
from service.api.errors import ERROR_RESPONSES as _ERRORS
from service.auth import Principal, check_group
from service.carta import Carta
from service.errors import (
    BadSidecar,
    BeingIndexed,
    ForbiddenGroup,
    HiddenDuplicate,
    InvalidGroups,
    InvalidMetadata,
    PageNotFound,
)
from service.jobs import SIDECAR_SUFFIXES

router = APIRouter(tags=["documents"])


@router.post(
    "/v1/documents",
    status_code=202,
    response_model=schemas.UploadResponse,
    responses={code: _ERRORS for code in (400, 401, 403, 409, 413, 415, 422)},
)
async def upload(
    services: ServicesDep,
    who: Writer,
    audit: Audit,
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
        File(description="Georeference files of a map image: world file (.pgw/.jgw/.wld), .prj, .aux.xml"),
    ] = None,
) -> Any:
    """Accept a file as an ingestion job (202); follow it at /v1/jobs/{id}. Content the
    tenant holds already answers with that document (or its job) and `created: false`, or
    409 `duplicate_content`, naming nothing, when the caller may not see it."""
    meta = parse_metadata(metadata)
    acl = parse_groups(groups, who)
    extra: dict[str, bytes] = {}
    for s in sidecars or []:
        suffix = sidecar_suffix(s.filename or "")
        if suffix not in SIDECAR_SUFFIXES:
            raise BadSidecar(f"sidecar {s.filename!r} is not a world file, .prj or .aux.xml")
        extra[suffix] = await s.read(1_000_000)
    data = await file.read(services.carta.settings.max_upload_bytes + 1)
    try:
        done = await run_in_threadpool(
            services.jobs.submit, who, data, file.filename or "upload", title, meta, acl, extra
        )
    except HiddenDuplicate:
        audit.record("upload", [], "hidden_duplicate")  # no id: the audit names what the key may see
        raise
    doc_id = done.job.document_id
    audit.record("upload", [doc_id] if doc_id else [], "created" if done.created else "duplicate")
    body = schemas.UploadResponse(
        job=schemas.JobOut(**done.job.out()),
        document=schemas.document_out(done.document) if done.document else None,
        created=done.created,
    )
    return JSONResponse(body.model_dump(), status_code=202)


@router.get("/v1/documents", response_model=list[schemas.DocumentOut])
def list_documents(carta: CartaDep, who: Caller) -> Any:
    docs = carta.registry.list(who.tenant)
    return [schemas.document_out(d) for d in docs if d.status in VISIBLE and who.can_see(d.acl)]


@router.get("/v1/documents/{doc_id}", response_model=schemas.DocumentDetail, responses={404: _ERRORS})
def get_document(carta: CartaDep, who: Caller, doc: VisibleDocument) -> Any:
    return schemas.document_detail(doc, carta.registry.pages(who.tenant, doc.id))


@router.delete("/v1/documents/{doc_id}", responses={403: _ERRORS, 404: _ERRORS, 409: _ERRORS})
def delete_document(
    services: ServicesDep, who: Caller, audit: Audit, doc: DeletableDocument
) -> dict[str, str]:
    """Erase the document (its uploader, keys in all its groups and admins may): every point,
    page image, thumbnail, registry row and job, and whatever the erasure hooks hold."""
    if services.job_store.in_flight(who.tenant, doc.id):
        raise BeingIndexed(f"document {doc.id!r} is being indexed; delete it when its job ends")
    services.carta.delete(who.tenant, doc.id)
    audit.record("delete", [doc.id])
    return {"deleted": doc.id}


@router.get(
    "/v1/documents/{doc_id}/pages/{page_no}", response_model=schemas.PageText, responses={404: _ERRORS}
)
def get_page(carta: CartaDep, who: Caller, doc_id: str, page_no: int) -> Any:
    visible_document(carta, who, doc_id)
    record = next((p for p in carta.registry.pages(who.tenant, doc_id) if p.page_no == page_no), None)
    if record is None:
        raise PageNotFound(f"document {doc_id!r} has no page {page_no}")
    chunks = carta.page_chunks(who.tenant, doc_id, page_no)
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


_IMAGE_RESPONSES: dict[int | str, dict[str, Any]] = {404: _ERRORS, 200: {"content": {"image/webp": {}}}}


@router.get(
    "/v1/documents/{doc_id}/pages/{page_no}/image", response_class=Response, responses=_IMAGE_RESPONSES
)
def get_page_image(carta: CartaDep, who: Caller, doc_id: str, page_no: int) -> Response:
    return page_image(carta, who, doc_id, page_no, thumb=False)


@router.get(
    "/v1/documents/{doc_id}/pages/{page_no}/thumbnail", response_class=Response, responses=_IMAGE_RESPONSES
)
def get_page_thumbnail(carta: CartaDep, who: Caller, doc_id: str, page_no: int) -> Response:
    return page_image(carta, who, doc_id, page_no, thumb=True)


def page_image(carta: Carta, who: Principal, doc_id: str, page_no: int, *, thumb: bool) -> Response:
    """A stored page image (WebP) of a document the caller may see."""
    visible_document(carta, who, doc_id)
    try:
        data = carta.images.load_bytes(who.tenant, doc_id, page_no, thumb=thumb)
    except ValueError:
        data = None
    if data is None:
        raise PageNotFound(f"document {doc_id!r} has no page {page_no}")
    return Response(data, media_type="image/webp", headers={"Cache-Control": "private, max-age=3600"})


def parse_groups(raw: str | None, who: Principal) -> list[str]:
    """The upload's ACL groups; a key may only share with groups it belongs to."""
    groups = sorted({g.strip() for g in (raw or "").split(",") if g.strip()})
    try:
        for g in groups:
            check_group(g)
    except ValueError as exc:
        raise InvalidGroups(str(exc)) from exc
    foreign = [g for g in groups if g not in who.groups]
    if foreign and not who.admin:
        raise ForbiddenGroup(f"this key is not in group(s) {', '.join(foreign)}")
    return groups


def sidecar_suffix(name: str) -> str:
    """ ".pgw", ".prj", ... or ".aux.xml" (a double suffix)."""
    name = name.lower()
    return ".aux.xml" if name.endswith(".aux.xml") else PurePath(name).suffix


def parse_metadata(raw: str | None) -> dict[str, Any]:
    """The upload's metadata form field: a JSON object, or InvalidMetadata."""
    if not raw:
        return {}
    try:
        value = load_json(raw, what="metadata")
    except JsonTooDeep as exc:
        raise InvalidMetadata(str(exc)) from exc
    except json.JSONDecodeError as exc:
        raise InvalidMetadata(f"metadata must be a JSON object ({exc.msg})") from exc
    if not isinstance(value, dict):
        raise InvalidMetadata("metadata must be a JSON object")
    return value
