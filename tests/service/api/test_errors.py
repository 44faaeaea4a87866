"""The one error table (service/api/errors.py): every exception class of every package's
errors.py has a row (its own or a base class's), the tree drawn at the top of each
errors module names every class, and the HTTP handlers and the SSE stream answer alike."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from models.errors import LLMError, LLMTimeout
from service.api.errors import ERROR_TABLE, INTERNAL, add_error_handlers, error_spec
from service.api.streaming import error_body, parse_sse, sse_stream
from service.errors import DocumentNotFound, ServiceError

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("models", "geo", "index", "ingest", "graph", "service")
PACKAGE_ROOTS = {"ModelError", "GraphError", "ServiceError"}  # plain Exception: one per package
BUILTINS = (ValueError, LookupError, RuntimeError, PermissionError)


def errors_modules() -> Iterator[ModuleType]:
    """Every `errors.py` under the product packages, found on disk (not a hand list)."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("errors.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield importlib.import_module(".".join(parts))


def error_classes() -> list[type[BaseException]]:
    """Every exception class defined (not imported) in those modules."""
    return [
        cls
        for module in errors_modules()
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__ == module.__name__
    ]


CLASSES = error_classes()


def test_the_walk_finds_the_errors_of_every_package() -> None:
    names = {cls.__name__ for cls in CLASSES}
    # one class per package errors module, as a guard that the walk reaches them all
    assert {"ModelUnavailable", "LLMTimeout", "StoreError", "TooLarge", "DatasetNotFound"} <= names
    assert {"DocumentNotFound", "GeoFilterError", "MissingKey", "VisualProfileOff"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_error_class_has_a_row_in_the_table(cls: type[BaseException]) -> None:
    """Its own row or a base class's, but not only a package root's (those answer 500)."""
    rows = [base for base in cls.__mro__ if base in ERROR_TABLE]
    assert rows, f"{cls.__qualname__} has no row in ERROR_TABLE"
    if cls.__name__ not in PACKAGE_ROOTS:
        assert rows[0].__name__ not in PACKAGE_ROOTS, f"{cls.__qualname__} answers only as its package root"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_error_class_is_in_the_tree_and_has_a_docstring(cls: type[BaseException]) -> None:
    module = importlib.import_module(cls.__module__)
    assert cls.__doc__ and cls.__doc__.strip(), f"{cls.__name__} has no docstring"
    assert f" {cls.__name__}" in (module.__doc__ or ""), f"{cls.__name__} is missing from the drawn tree"
    if cls.__name__ in PACKAGE_ROOTS:
        assert cls.__bases__ == (Exception,)
    else:
        assert issubclass(cls, BUILTINS), f"{cls.__name__} inherits no matching built-in"


def test_the_most_specific_row_wins() -> None:
    class SlowerTimeout(LLMTimeout):
        """A subclass without a row of its own answers like its parent."""

    assert (error_spec(LLMTimeout("t")).status, error_spec(LLMTimeout("t")).code) == (504, "llm_timeout")
    assert error_spec(SlowerTimeout("t")) == ERROR_TABLE[LLMTimeout]
    assert error_spec(LLMError("e")).code == "llm_error"
    assert error_spec(DocumentNotFound("d")).code == "not_found"
    assert error_spec(ServiceError("a root is never raised")) == INTERNAL
    assert error_spec(KeyError("not ours")) is None


def raising_app(exc: Exception) -> FastAPI:
    app = FastAPI()
    add_error_handlers(app)

    @app.get("/fail")
    def fail() -> None:
        raise exc

    return app


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_handlers_and_the_sse_stream_answer_the_same(cls: type[Exception]) -> None:
    exc = cls(f"{cls.__name__} happened")
    spec = error_spec(exc)
    assert spec is not None

    with TestClient(raising_app(exc)) as client:
        response = client.get("/fail")
    assert response.status_code == spec.status
    assert response.json() == {"error": {"code": spec.code, "message": f"{cls.__name__} happened"}}
    for name, value in spec.headers.items():
        assert response.headers[name] == value

    status, body = error_body(exc)
    assert (status, body) == (response.status_code, response.json())

    def failing() -> Iterator:
        raise exc
        yield  # a generator that fails on its first step

    events = list(parse_sse(iter("".join(sse_stream(failing())).splitlines())))
    assert events == [("error", response.json())]


def test_an_unknown_failure_in_the_stream_is_an_internal_error() -> None:
    status, body = error_body(KeyError("boom"))
    assert status == INTERNAL.status == 500
    assert body["error"]["code"] == "internal_error" and "KeyError" in body["error"]["message"]
