"""HTTP routes for POI datasets (the graph's input): upload, list, get, delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from graph.channel import DatasetNotFound, EmptyDataset, GraphChannel, PoiFormatError
from ingest.errors import TooLarge
from service.api import schemas
from service.api.errors import ERROR_RESPONSES as _ERRORS
from service.api.errors import ApiError, error_response
from service.auth import Caller
from service.carta import Carta


def add_dataset_routes(app: FastAPI, get: Callable[[Request], Carta]) -> None:
    """POI datasets of the caller's tenant (the key's tenant, or the single user's)."""
    @app.exception_handler(PoiFormatError)
    async def poi_format(_: Request, exc: PoiFormatError) -> JSONResponse:
        return error_response(415, "unsupported_poi_file", str(exc))

    @app.exception_handler(EmptyDataset)
    async def empty(_: Request, exc: EmptyDataset) -> JSONResponse:
        return error_response(422, "empty_dataset", str(exc))

    @app.exception_handler(DatasetNotFound)
    async def missing(_: Request, exc: DatasetNotFound) -> JSONResponse:
        return error_response(404, "not_found", str(exc.args[0]))

    def graph(request: Request) -> GraphChannel:
        channel = get(request).graph
        if channel is None:
            raise ApiError(
                409,
                "graph_disabled",
                "the graph is turned off (CARTA_GRAPH_ENABLED=false); turn it on to load POIs"
            )
        return channel

    @app.post(
        "/v1/datasets",
        status_code=201,
        response_model=schemas.DatasetUploadResponse,
        tags=["datasets"],
        responses={404: _ERRORS, 413: _ERRORS, 415: _ERRORS, 422: _ERRORS},
    )
    async def upload_dataset(
        request: Request,
        who: Caller,
        file: Annotated[
            UploadFile, File(description="OSM PBF/XML, Overpass JSON, GeoJSON or CSV with lat/lon")
        ],
        category: Annotated[
            str | None, Form(max_length=64, description="Category of features that carry none (e.g. school)")
        ] = None,
    ) -> Any:
        channel = graph(request)
        limit = get(request).settings.max_upload_bytes
        data = await file.read(limit + 1)
        if len(data) > limit:
            raise TooLarge(f"the upload exceeds {limit:,} bytes (CARTA_MAX_UPLOAD_BYTES)")
        info, created = await run_in_threadpool(
            channel.add_dataset, data, file.filename or "dataset", who.tenant, category
        )
        body = schemas.DatasetUploadResponse(dataset=schemas.DatasetOut(**info.to_dict()), created=created)
        return JSONResponse(body.model_dump(), status_code=201 if created else 200)

    @app.get("/v1/datasets", response_model=list[schemas.DatasetOut], tags=["datasets"])
    def list_datasets(request: Request, who: Caller) -> Any:
        return [schemas.DatasetOut(**d.to_dict()) for d in graph(request).datasets(who.tenant)]

    @app.get(
        "/v1/datasets/{dataset_id}",
        response_model=schemas.DatasetOut,
        tags=["datasets"],
        responses={404: _ERRORS},
    )
    def get_dataset(request: Request, who: Caller, dataset_id: str) -> Any:
        return schemas.DatasetOut(**graph(request).dataset(who.tenant, dataset_id).to_dict())

    @app.delete("/v1/datasets/{dataset_id}", tags=["datasets"], responses={404: _ERRORS})
    def delete_dataset(request: Request, who: Caller, dataset_id: str) -> dict[str, str]:
        graph(request).delete_dataset(who.tenant, dataset_id)
        return {"deleted": dataset_id}
