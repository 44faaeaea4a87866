"""The OpenAPI document says what the server does: an example on every route, a
description on every field of the ask/search bodies, no untyped object in them, and the
API's error body on every 4xx (422 included)."""

from __future__ import annotations

from typing import Any

import pytest

from service.api.app import create_app
from tests.conftest import settings_for

QUERY_SCHEMAS = ("AskRequest", "AskResponse", "SearchRequest", "SearchResponse")
ERROR_REF = "#/components/schemas/ErrorResponse"


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return create_app(settings_for(tmp_path_factory.mktemp("openapi"))).openapi()


def schema_of(spec: dict[str, Any], ref: str) -> dict[str, Any]:
    return spec["components"]["schemas"][ref.rsplit("/", 1)[-1]]


def has_example(spec: dict[str, Any], media: dict[str, Any]) -> bool:
    """An example on the media type, or on the schema it names (or its array's items)."""
    if "example" in media or "examples" in media:
        return True
    schema = media.get("schema", {})
    if schema.get("format") == "binary":  # images: the bytes are the example
        return True
    schema = schema.get("items", schema)
    if "$ref" in schema:
        schema = schema_of(spec, schema["$ref"])
    return "example" in schema or "examples" in schema


def reachable(spec: dict[str, Any], names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The component schemas `names` refer to, transitively."""
    seen: dict[str, dict[str, Any]] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen[name] = spec["components"]["schemas"][name]
        stack: list[Any] = [seen[name]]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if "$ref" in node:
                    todo.append(node["$ref"].rsplit("/", 1)[-1])
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return seen


def untyped_objects(node: Any, where: str) -> list[str]:
    """Places in a schema that are an object with no properties and untyped values."""
    found = []
    if isinstance(node, dict):
        extra = node.get("additionalProperties", True)
        if node.get("type") == "object" and not node.get("properties") and extra in (True, {}):
            found.append(where)
        for key, value in node.items():
            found += untyped_objects(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += untyped_objects(value, f"{where}[{i}]")
    return found


def test_every_route_has_request_and_response_examples(spec: dict[str, Any]) -> None:
    missing = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            for media_type, media in op.get("requestBody", {}).get("content", {}).items():
                if not has_example(spec, media):
                    missing.append(f"{method.upper()} {path} request {media_type}")
            successes = {s: r for s, r in op["responses"].items() if s.startswith("2")}
            assert successes, f"{method.upper()} {path} documents no success response"
            for status, response in successes.items():
                content = response.get("content", {})
                if not content:
                    missing.append(f"{method.upper()} {path} {status}: no content")
                for media_type, media in content.items():
                    if not has_example(spec, media):
                        missing.append(f"{method.upper()} {path} {status} {media_type}")
    assert missing == []


def test_every_ask_and_search_field_is_described(spec: dict[str, Any]) -> None:
    schemas = reachable(spec, QUERY_SCHEMAS)
    assert {"GraphEvidenceOut", "ResolvedGeoOut", "GeoFilterIn", "UnderstoodOut", "PageHit"} <= set(schemas)
    bare = [
        f"{name}.{field}"
        for name, schema in schemas.items()
        for field, prop in schema.get("properties", {}).items()
        if not prop.get("description")
        and name
        not in {"GeoPlan", "Target", "AttributeFilter", "PlanArea", "Reference"}  # graph/plan.py's own
    ]
    assert bare == []


def test_no_untyped_object_in_ask_and_search(spec: dict[str, Any]) -> None:
    found = [
        hit
        for name, schema in reachable(spec, QUERY_SCHEMAS).items()
        for hit in untyped_objects(schema, name)
    ]
    assert found == []


def test_every_4xx_is_the_error_body(spec: dict[str, Any]) -> None:
    wrong, statuses = [], set()
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            for status, response in op["responses"].items():
                if not status.startswith("4"):
                    continue
                statuses.add(status)
                schema = response.get("content", {}).get("application/json", {}).get("schema", {})
                if schema.get("$ref") != ERROR_REF:
                    wrong.append(f"{method.upper()} {path} {status}: {schema}")
    assert wrong == []
    assert {"401", "404", "422"} <= statuses
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    error = spec["components"]["schemas"]["ErrorResponse"]
    assert error["properties"]["error"]["$ref"].endswith("/ErrorBody")
