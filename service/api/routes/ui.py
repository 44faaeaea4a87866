"""The web UI: static files (plain ES modules, no build step, in service/api/web/static)
served at / and /ui/, plus the two small read-only endpoints only the browser needs: its
config and H3 cell outlines. Both live under /ui, not /v1: they hold no tenant data, so
they need no API key (the page must draw its map before the user has typed one), while
every /v1 route does."""

from __future__ import annotations

from typing import Annotated, Any

import h3
from fastapi import APIRouter, FastAPI, Query
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from geo.h3tags import MAX_QUERY_CELLS, is_h3_cell
from geo.shapes import cell_to_geojson_polygon
from service.api.deps import StateDep
from service.api.web import STATIC
from service.errors import BadH3Cells

MAX_CELLS = MAX_QUERY_CELLS  # one cap for drawing and for filtering
VENDOR = STATIC / "vendor"  # filled from npm by scripts/vendor_ui.sh (make install)
NO_VENDOR = (
    "<!doctype html><html lang=en><title>Carta: assets missing</title><body><h1>Assets missing</h1>"
    "<p>This page needs the web UI's vendored assets. Run <code>bash scripts/vendor_ui.sh</code> "
    "(or <code>make install</code>); the schema itself is at <a href=/openapi.json>/openapi.json</a>.</p>"
)

router = APIRouter()


@router.get("/", include_in_schema=False)
def index() -> FileResponse:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


@router.get("/docs", include_in_schema=False)
def swagger_docs() -> HTMLResponse:
    """Swagger UI from the vendored swagger-ui-dist: FastAPI's default loads it from a CDN,
    which leaves the page blank on an offline laptop."""
    if not (VENDOR / "swagger-ui" / "swagger-ui-bundle.js").is_file():
        return HTMLResponse(NO_VENDOR, status_code=503)
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="Carta API",
        swagger_js_url="/ui/vendor/swagger-ui/swagger-ui-bundle.js",
        swagger_css_url="/ui/vendor/swagger-ui/swagger-ui.css",
        swagger_favicon_url="data:,",
        swagger_ui_parameters={"validatorUrl": None},  # the default badge calls validator.swagger.io
    )


@router.get("/redoc", include_in_schema=False)
def redoc_docs() -> HTMLResponse:
    """ReDoc from the vendored redoc bundle, without Google Fonts (offline)."""
    if not (VENDOR / "redoc" / "redoc.standalone.js").is_file():
        return HTMLResponse(NO_VENDOR, status_code=503)
    return get_redoc_html(
        openapi_url="/openapi.json",
        title="Carta API",
        redoc_js_url="/ui/vendor/redoc/redoc.standalone.js",
        redoc_favicon_url="data:,",
        with_google_fonts=False,
    )


@router.get("/ui/config", tags=["ui"])
def ui_config(state: StateDep) -> dict[str, Any]:
    """What the browser UI needs to know about this server: raster tiles (only when
    configured; otherwise the map is drawn offline) and the upload limit."""
    settings = state.settings
    return {
        "tile_url": settings.ui_tile_url,
        "tile_attribution": settings.ui_tile_attribution,
        "max_upload_bytes": settings.max_upload_bytes,
        "profile": settings.profile,
    }


@router.get("/ui/h3", tags=["ui"])
def h3_cells(
    cells: Annotated[str, Query(description="Comma-separated H3 cell ids (any resolution).")],
) -> JSONResponse:
    """H3 cells as GeoJSON polygons (lon, lat), for drawing them on the map."""
    ids = [c.strip() for c in cells.split(",") if c.strip()]
    if not ids or len(ids) > MAX_CELLS:
        raise BadH3Cells(f"give between 1 and {MAX_CELLS} H3 cell ids, comma-separated")
    bad = [c for c in ids if not is_h3_cell(c)]
    if bad:
        raise BadH3Cells(f"not H3 cell ids: {', '.join(repr(c)[:40] for c in bad[:5])}")
    return JSONResponse({"type": "FeatureCollection", "features": [_cell_feature(c) for c in ids]})


def mount_ui(app: FastAPI) -> None:
    """The UI routes, then the assets under /ui (not a catch-all mount at /, so routes
    other modules add are never shadowed). Call last: the mount answers every /ui/* path."""
    app.include_router(router)
    app.mount("/ui", StaticFiles(directory=STATIC), name="ui")


def _cell_feature(cell: str) -> dict[str, Any]:
    return {
        "type": "Feature",
        "properties": {"h3": cell, "resolution": h3.get_resolution(cell)},
        "geometry": cell_to_geojson_polygon(cell, digits=7),
    }
