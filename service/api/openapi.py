"""The OpenAPI document as the server really answers: FastAPI's generated schema with an
example on every route (service/api/examples.py) and every 4xx documented as the API's
error body {"error": {"code", "message"}} (FastAPI documents 422 as its own
HTTPValidationError, which this server never sends: service/api/errors.py answers it)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from service.api.examples import ROUTE_EXAMPLES

ERROR_REF = {"$ref": "#/components/schemas/ErrorResponse"}
AUTH_ERRORS = {"401": "Missing or invalid API key.", "429": "Too many requests; retry after Retry-After."}
BINARY = ("image/",)


def install_openapi(app: FastAPI) -> None:
    """Serve the corrected document at /openapi.json (built once, on first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            app.openapi_schema = corrected(spec)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def corrected(spec: dict[str, Any]) -> dict[str, Any]:
    """`spec` with the error body on every 4xx and the examples on every route."""
    for path, ops in spec.get("paths", {}).items():
        for method, op in ops.items():
            responses = op.setdefault("responses", {})
            if path.startswith("/v1/"):
                for status, text in AUTH_ERRORS.items():
                    responses.setdefault(status, {"description": text})
            for status, response in responses.items():
                if status.startswith("4"):
                    response["content"] = {"application/json": {"schema": ERROR_REF}}
                    if response.get("description") in (None, "", "Validation Error"):
                        response["description"] = (
                            "The request does not match its schema (every problem in one line)."
                        )
            add_examples(op, ROUTE_EXAMPLES.get((method, path), {}))
    schemas = spec.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return spec


def add_examples(op: dict[str, Any], examples: dict[str, Any]) -> None:
    """Put the route's request and response examples on its media types."""
    if "request" in examples:
        for media in op.get("requestBody", {}).get("content", {}).values():
            media["example"] = examples["request"]
    if "response" not in examples:
        return
    for status, response in op["responses"].items():
        if not status.startswith("2"):
            continue
        content = response.setdefault("content", {})
        if not content:
            content["text/plain"] = {"schema": {"type": "string"}}
        for media_type, media in content.items():
            if media_type == "text/event-stream":
                media["example"] = examples.get("stream", examples["response"])
            elif media_type.startswith(BINARY):
                media.setdefault("schema", {"type": "string", "format": "binary"})
            else:
                media["example"] = examples["response"]
