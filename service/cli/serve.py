"""`carta serve`: the HTTP API on this machine, over the local data dir."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ingest.errors import IngestError
from service.cli.common import console, iter_files, open_carta
from service.settings import Settings


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8000,
    ingest_samples: Annotated[
        Path | None,
        typer.Option(help="Folder of sample documents to index on first start (when no document exists)."),
    ] = None,
) -> None:
    """Run the HTTP API (OpenAPI docs at /docs)."""
    # the web server and framework (half a second to import) load for this command only
    import uvicorn

    from ingest.upload import IngestRequest
    from service.api.app import create_app
    from service.observability import configure_logging

    log_json = Settings().log_json
    configure_logging(log_json if log_json is not None else not sys.stderr.isatty())
    carta = open_carta()
    try:
        tenant = carta.settings.default_tenant
        if ingest_samples and not carta.registry.list(tenant):
            for path in iter_files([ingest_samples]):
                console.print(f"indexing sample {path.name} ...")
                try:
                    carta.ingest(IngestRequest(path.read_bytes(), path.name, tenant))
                except IngestError as exc:
                    console.print(f"[yellow]skipped {path.name}: {exc}")
        console.print(f"Carta on http://{host}:{port} (docs: /docs, data: {carta.settings.data_dir})")
        uvicorn.run(create_app(carta=carta), host=host, port=port, log_level="info", log_config=None)
    finally:
        carta.close()
