"""The web UI: static files (plain ES modules, no build step) served at / and /ui/, plus
the two small read-only endpoints only the browser needs: its config and H3 cell outlines.
Both live under /ui, not /v1: they hold no tenant data, so they need no API key (the page
must draw its map before the user has typed one), while every /v1 route does."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import h3
from fastapi import FastAPI, Query
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from geo.shapes import cell_to_geojson_polygon
from service.settings import Settings

STATIC = Path(__file__).parent / "static"
MAX_CELLS = 500


def mount(app: FastAPI, settings: Settings) -> None:
    """Serve the UI at / (index.html) and /ui/* (assets). Assets live under /ui rather than
    a catch-all mount at / so routes other modules add later are never shadowed."""

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/ui/config", tags=["ui"])
    def ui_config() -> dict[str, Any]:
        """What the browser UI needs to know about this server: raster tiles (only when
        configured; otherwise the map is drawn offline) and the upload limit."""
        return {
            "tile_url": settings.ui_tile_url,
            "tile_attribution": settings.ui_tile_attribution,
            "max_upload_bytes": settings.max_upload_bytes,
            "profile": settings.profile,
        }

    @app.get("/ui/h3", tags=["ui"])
    def h3_cells(
        cells: Annotated[str, Query(description="Comma-separated H3 cell ids (any resolution).")],
    ) -> JSONResponse:
        """H3 cells as GeoJSON polygons (lon, lat), for drawing them on the map."""
        ids = [c.strip() for c in cells.split(",") if c.strip()]
        if not ids or len(ids) > MAX_CELLS:
            return _bad(f"give between 1 and {MAX_CELLS} H3 cell ids, comma-separated")
        bad = [c for c in ids if not h3.is_valid_cell(c)]
        if bad:
            return _bad(f"not H3 cell ids: {', '.join(bad[:5])}")
        return JSONResponse({"type": "FeatureCollection", "features": [_cell_feature(c) for c in ids]})

    app.mount("/ui", StaticFiles(directory=STATIC), name="ui")


def _cell_feature(cell: str) -> dict[str, Any]:
    return {
        "type": "Feature",
        "properties": {"h3": cell, "resolution": h3.get_resolution(cell)},
        "geometry": cell_to_geojson_polygon(cell, digits=7),
    }


def _bad(message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": "bad_h3_cells", "message": message}}, status_code=400)
