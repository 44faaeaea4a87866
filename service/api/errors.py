"""How the API answers an error: ONE table from domain error class to (status, code), the
error JSON {"error": {"code", "message"}}, and the exception handlers that use both.

The HTTP handlers and the SSE stream (service/api/streaming.py) both look errors up with
`error_spec`, so a failure gets the same status and code whether it happens before the
response starts or in the middle of a stream. The most specific class wins: the lookup
walks the exception's MRO, so a new subclass answers like its parent until it gets a row.

To add an error: define the class in its package's errors.py (under that package's base)
and give it a row here; tests/service/api/test_errors.py fails until it has one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from graph.errors import (
    BadAliases,
    DatasetNotFound,
    EmptyDataset,
    GraphError,
    OverpassError,
    PoiFormatError,
    TooManyPois,
)
from index.errors import StoreError
from ingest.errors import (
    BadCoordinates,
    CorruptDocument,
    EmptyFile,
    EncryptedDocument,
    IngestError,
    JsonTooDeep,
    TooLarge,
    UnsupportedType,
)
from models.errors import (
    LLMBadResponse,
    LLMError,
    LLMStatusError,
    LLMTimeout,
    LLMUnreachable,
    ModelError,
    ModelUnavailable,
)
from service.api import schemas
from service.errors import (
    AuthError,
    AuthThrottled,
    BadH3Cells,
    BadImage,
    BadSidecar,
    BeingIndexed,
    Conflict,
    DocGraphDisabled,
    DocumentNotFound,
    EntityNotFound,
    Forbidden,
    ForbiddenGroup,
    GeoFilterError,
    GraphDisabled,
    HiddenDuplicate,
    InvalidGroups,
    InvalidKey,
    InvalidMetadata,
    InvalidRequest,
    JobNotFound,
    KeyNotFound,
    MissingKey,
    NotFound,
    PageNotFound,
    RateLimited,
    ReadOnlyKey,
    ServiceError,
    TraceNotFound,
    VisualProfileOff,
)

log = logging.getLogger(__name__)

ERROR_RESPONSES = {"model": schemas.ErrorResponse}  # for the OpenAPI `responses` of each route


@dataclass(frozen=True)
class ErrorSpec:
    """How the API answers one error class: HTTP status, error code, extra headers."""

    status: int
    code: str
    headers: Mapping[str, str] = field(default_factory=dict)


BEARER = {"WWW-Authenticate": "Bearer"}
INTERNAL = ErrorSpec(500, "internal_error")

# A package's base class answers 500: it is never raised itself, and a new class under it
# that has no row of its own is a bug the table test reports (tests/service/api/test_errors.py).
ERROR_TABLE: dict[type[Exception], ErrorSpec] = {
    # models/
    ModelError: INTERNAL,
    ModelUnavailable: ErrorSpec(503, "model_unavailable"),
    LLMError: ErrorSpec(502, "llm_error"),
    LLMTimeout: ErrorSpec(504, "llm_timeout"),
    LLMUnreachable: ErrorSpec(502, "llm_unreachable"),
    LLMStatusError: ErrorSpec(502, "llm_error"),
    LLMBadResponse: ErrorSpec(502, "llm_bad_response"),
    # index/
    StoreError: ErrorSpec(503, "store_unavailable"),
    # ingest/
    IngestError: ErrorSpec(400, "bad_document"),
    EmptyFile: ErrorSpec(400, "empty_file"),
    UnsupportedType: ErrorSpec(415, "unsupported_type"),
    CorruptDocument: ErrorSpec(422, "corrupt_document"),
    JsonTooDeep: ErrorSpec(422, "json_too_deep"),
    EncryptedDocument: ErrorSpec(422, "encrypted_document"),
    BadCoordinates: ErrorSpec(400, "bad_coordinates"),
    TooLarge: ErrorSpec(413, "too_large"),
    # graph/
    GraphError: INTERNAL,
    DatasetNotFound: ErrorSpec(404, "not_found"),
    PoiFormatError: ErrorSpec(415, "unsupported_poi_file"),
    EmptyDataset: ErrorSpec(422, "empty_dataset"),
    BadAliases: ErrorSpec(422, "bad_aliases"),
    TooManyPois: ErrorSpec(413, "too_many_pois"),
    OverpassError: ErrorSpec(502, "overpass_unavailable"),
    # service/
    ServiceError: INTERNAL,
    NotFound: ErrorSpec(404, "not_found"),
    DocumentNotFound: ErrorSpec(404, "not_found"),
    PageNotFound: ErrorSpec(404, "not_found"),
    JobNotFound: ErrorSpec(404, "not_found"),
    KeyNotFound: ErrorSpec(404, "not_found"),
    TraceNotFound: ErrorSpec(404, "not_found"),
    AuthError: ErrorSpec(403, "forbidden"),
    MissingKey: ErrorSpec(401, "unauthorized", BEARER),
    InvalidKey: ErrorSpec(401, "invalid_key", BEARER),
    Forbidden: ErrorSpec(403, "forbidden"),
    ReadOnlyKey: ErrorSpec(403, "read_only_key"),
    ForbiddenGroup: ErrorSpec(403, "forbidden_group"),
    RateLimited: ErrorSpec(429, "rate_limited", {"Retry-After": "1"}),
    AuthThrottled: ErrorSpec(429, "auth_throttled", {"Retry-After": "1"}),
    InvalidRequest: ErrorSpec(400, "invalid_request"),
    GeoFilterError: ErrorSpec(400, "bad_geo_filter"),
    InvalidMetadata: ErrorSpec(400, "invalid_metadata"),
    InvalidGroups: ErrorSpec(400, "invalid_groups"),
    BadSidecar: ErrorSpec(400, "bad_sidecar"),
    BadImage: ErrorSpec(400, "bad_image"),
    BadH3Cells: ErrorSpec(400, "bad_h3_cells"),
    Conflict: ErrorSpec(409, "conflict"),
    BeingIndexed: ErrorSpec(409, "being_indexed"),
    HiddenDuplicate: ErrorSpec(409, "duplicate_content"),
    VisualProfileOff: ErrorSpec(409, "visual_profile_off"),
    GraphDisabled: ErrorSpec(409, "graph_disabled"),
    EntityNotFound: ErrorSpec(404, "not_found"),
    DocGraphDisabled: ErrorSpec(409, "docgraph_disabled"),
}


def error_spec(exc: BaseException) -> ErrorSpec | None:
    """The table's row for the most specific class of `exc` that has one, else None."""
    for cls in type(exc).__mro__:
        spec = ERROR_TABLE.get(cls)
        if spec is not None:
            return spec
    return None


def error_code(exc: BaseException) -> str:
    """The API's error code for `exc` (the CLI prints the same codes as the server)."""
    return (error_spec(exc) or INTERNAL).code


def error_json(code: str, message: str) -> dict[str, Any]:
    """The error JSON of every API answer and SSE `error` event."""
    return {"error": {"code": code, "message": message}}


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """An error answer in the API's shape."""
    return JSONResponse(error_json(code, message), status_code=status, headers=dict(headers or {}))


async def domain_error(_: Request, exc: Exception) -> JSONResponse:
    """The handler for every class in ERROR_TABLE."""
    spec = error_spec(exc) or INTERNAL
    headers = dict(spec.headers)
    if "Retry-After" in headers and isinstance(exc, RateLimited):  # the error knows how long
        headers["Retry-After"] = str(exc.retry_after_s)
    return error_response(spec.status, spec.code, str(exc), headers)


async def http_error(_: Request, exc: Exception) -> JSONResponse:
    """Starlette's own errors (404 route, 405, the body limit's 413) in the API's shape."""
    assert isinstance(exc, StarletteHTTPException)
    code = "too_large" if exc.status_code == 413 else "http_error"
    return error_response(exc.status_code, code, str(exc.detail))


MAX_PROBLEMS = 10  # a body with thousands of bad items gets a message, not a copy of itself


async def validation_error(_: Request, exc: Exception) -> JSONResponse:
    """A request that does not match its schema: 422 with its first MAX_PROBLEMS problems
    in one line, and how many more there are."""
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors[:MAX_PROBLEMS])
    if len(errors) > MAX_PROBLEMS:
        problems += f" (and {len(errors) - MAX_PROBLEMS:,} more)"
    return error_response(422, "invalid_request", problems)


def add_error_handlers(app: FastAPI) -> None:
    """Answer every domain error through the table, and the framework's errors in the same shape."""
    for cls in ERROR_TABLE:
        app.add_exception_handler(cls, domain_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
