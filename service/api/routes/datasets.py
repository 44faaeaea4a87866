"""/v1/datasets: POI datasets (the graph's input) of the caller's tenant: upload, list,
get, delete. The graph's errors (bad file, empty, unknown id) answer through the table."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from graph.errors import BadAliases
from ingest.errors import TooLarge
from ingest.readers.jsontext import load_json
from service.api import schemas
from service.api.deps import Caller, CartaDep, GraphDep, Writer, graph_channel
from service.api.errors import ERROR_RESPONSES as _ERRORS

router = APIRouter(tags=["datasets"])
MAX_MAP_ROADS = 5000  # lines a browser draws without stalling


@router.post(
    "/v1/datasets",
    status_code=201,
    response_model=schemas.DatasetUploadResponse,
    responses={403: _ERRORS, 404: _ERRORS, 413: _ERRORS, 415: _ERRORS, 422: _ERRORS},
)
async def upload_dataset(
    carta: CartaDep,
    who: Writer,
    file: Annotated[UploadFile, File(description="OSM PBF/XML, Overpass JSON, GeoJSON or CSV with lat/lon")],
    category: Annotated[
        str | None, Form(max_length=64, description="Category of features that carry none (e.g. school)")
    ] = None,
    aliases: Annotated[
        str | None,
        Form(
            max_length=8192,
            description='Question words naming properties, JSON: {"V014": ["residentes", "population"]}',
        ),
    ] = None,
) -> Any:
    channel = graph_channel(carta)  # in the body, not a dependency: a malformed form answers 422 first
    limit = carta.settings.max_upload_bytes
    data = await file.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"the upload exceeds {limit:,} bytes (CARTA_MAX_UPLOAD_BYTES)")
    info, created = await run_in_threadpool(
        channel.add_dataset, data, file.filename or "dataset", who.tenant, category, parse_aliases(aliases)
    )
    body = schemas.DatasetUploadResponse(dataset=schemas.DatasetOut(**info.to_dict()), created=created)
    return JSONResponse(body.model_dump(), status_code=201 if created else 200)


@router.get("/v1/datasets", response_model=list[schemas.DatasetOut])
def list_datasets(who: Caller, graph: GraphDep) -> Any:
    return [schemas.DatasetOut(**d.to_dict()) for d in graph.datasets(who.tenant)]


@router.get("/v1/datasets/{dataset_id}", response_model=schemas.DatasetDetail, responses={404: _ERRORS})
def get_dataset(who: Caller, graph: GraphDep, dataset_id: str) -> Any:
    """The dataset with its schema: typed properties (count, min/max, samples) and categories."""
    info = graph.dataset(who.tenant, dataset_id)
    schema = graph.store.dataset_schema(who.tenant, dataset_id) or {}
    return schemas.DatasetDetail(**info.to_dict(), **schema)


@router.get("/v1/datasets/{dataset_id}/roads", response_model=schemas.RoadsOut, responses={404: _ERRORS})
def get_dataset_roads(who: Caller, graph: GraphDep, dataset_id: str) -> Any:
    """The dataset's road lines as GeoJSON (for the map's roads layer), at most MAX_MAP_ROADS."""
    graph.dataset(who.tenant, dataset_id)  # 404 when unknown
    features, total = graph.store.roads(who.tenant, dataset_id, MAX_MAP_ROADS)
    return schemas.RoadsOut(features=features, total=total, truncated=total > len(features))


@router.delete("/v1/datasets/{dataset_id}", responses={403: _ERRORS, 404: _ERRORS})
def delete_dataset(who: Writer, graph: GraphDep, dataset_id: str) -> dict[str, str]:
    graph.delete_dataset(who.tenant, dataset_id)
    return {"deleted": dataset_id}


def parse_aliases(raw: str | None) -> dict[str, list[str]] | None:
    """The aliases form field: a JSON object of property -> word or list of words (a
    comma-separated string is split)."""
    if raw is None or not raw.strip():
        return None
    try:
        doc = load_json(raw, what="the aliases")
    except ValueError as exc:
        raise BadAliases(f"aliases must be a JSON object ({exc})") from exc
    if not isinstance(doc, dict):
        raise BadAliases('aliases must be a JSON object such as {"V014": ["residentes"]}')
    out: dict[str, list[str]] = {}
    for prop, words in doc.items():
        items = words.split(",") if isinstance(words, str) else words
        if not isinstance(items, list) or not all(isinstance(w, str) for w in items):
            raise BadAliases(f"aliases of {prop!r} must be a word or a list of words")
        out[str(prop)] = [w.strip() for w in items if w.strip()]
    return out
